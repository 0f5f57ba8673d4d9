"""The grading corpus: submissions with their expected per-test outcome, one small file per case.

``tests/data/corpus/<lesson>/<case>.py`` is never imported (test data: never installed, never shipped); it is text read by :func:`cases`::

    # corpus: one line saying what the case is
    # category: correct | bug | fault | input | cheat
    # status: ok                     (expected record status; alternatives with |)
    # fails: output_size_basic, ...  (test grade_ids that must fail; * = all; the others must pass)
    # passes: ...                    (instead of fails: these pass, all others fail)
    # reviews: kc_q7, ...            (failed tests whose verdict is an answer to read by hand)
    # base: reference | stub         (solution cells not given below; default reference)
    # notebook: delete-tests, ...    (how the submitted notebook is damaged, see TRANSFORMS)
    # requires: namespaces | nproc   (containment without which the case is unsafe to run here)
    # gap: <test ids> -- <why>       (a known weakness of those tests: the case may score there; reported)
    # %% <grade_id>
    ...the student's source of that solution cell...
    # %% <grade_id> +
    ...appended to the base source of that cell (to redefine one thing and keep the cell's helpers)...
    # %% file numpy.py
    ...an extra file put next to the notebook...
    # %% raw
    ...the whole submitted file, verbatim (malformed input)...

Cases are built into ``submitted/<student>/<lesson>/`` from the lesson's *release* notebook at test time,
so the corpus stays valid when a lesson's text changes; only solution sources are stored.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.grading.intake import sanitized_notebook
from autograder.grading.lesson import Lesson, load_lesson

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"
CATEGORIES = ("correct", "bug", "fault", "input", "cheat")
TRANSFORMS = ("delete-tests", "edit-tests", "duplicate-tests", "duplicate-solutions", "more-points",
              "schema-too-new", "nbformat3", "other-lesson", "rename", "markdown-solution", "strip-metadata")


@dataclass
class Case:
    lesson: str
    name: str
    description: str
    category: str
    status: tuple[str, ...]
    fails: tuple[str, ...] | None  # None: see passes
    passes: tuple[str, ...] | None
    reviews: tuple[str, ...] = ()  # tests that fail with a review verdict (course.checks.NeedsReview)
    base: str = "reference"
    notebook: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    gap: tuple[str, ...] = ()
    gap_reason: str = ""
    solutions: dict[str, str] = field(default_factory=dict)
    appended: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    raw: str | None = None

    @property
    def student(self) -> str:
        """The student id this case is submitted as (``<lesson-number>-<case>``)."""
        number = re.match(r"lesson(\d+)", self.lesson)
        return f"l{number.group(1) if number else 'x'}-{self.name}".replace("_", "-")

    @property
    def honest(self) -> bool:
        return self.category in ("correct", "bug")

    def expected(self, lesson: Lesson) -> dict[str, bool]:
        """``{test grade_id: passes}``."""
        ids = [t.id for t in lesson.tests]
        if self.passes is not None:
            return {i: i in self.passes for i in ids}
        fails = set(ids) if self.fails == ("*",) else set(self.fails or ())
        return {i: i not in fails for i in ids}

    def sources(self, lesson: Lesson) -> dict[str, str]:
        base = lesson.reference_sources() if self.base == "reference" else dict(lesson.stubs)
        base.update(self.solutions)
        for grade_id, text in self.appended.items():
            base[grade_id] = base.get(grade_id, "") + "\n\n\n" + text
        return base


def _split(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in re.split(r"[,|]", value) if v.strip())


def parse_case(path: Path, lesson: str) -> Case:
    header: dict[str, str] = {}
    blocks: list[tuple[str, list[str]]] = []
    for line in path.read_text().splitlines(keepends=True):
        match = re.match(r"# %% (.+?)\s*$", line)
        if match:
            blocks.append((match.group(1), []))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            found = re.match(r"# (\w[\w-]*): ?(.*?)\s*$", line)
            if found:
                header[found.group(1)] = found.group(2)
    solutions, appended, files, raw = {}, {}, {}, None
    for name, lines in blocks:
        text = "".join(lines).rstrip("\n")
        if name == "raw":
            raw = text
        elif name.startswith("file "):
            files[name[5:].strip()] = text + "\n"
        elif name.endswith(" +"):
            appended[name[:-2].strip()] = text
        else:
            solutions[name] = text
    category = header.get("category", "")
    if category not in CATEGORIES:
        raise ValueError(f"{path}: category must be one of {CATEGORIES}, got {category!r}")
    notebook = _split(header.get("notebook", ""))
    for item in notebook:
        if item.split(":")[0] not in TRANSFORMS:
            raise ValueError(f"{path}: unknown notebook transform {item!r}")
    return Case(
        lesson=lesson, name=path.stem, description=header.get("corpus", ""), category=category,
        status=_split(header.get("status", "ok")),
        fails=_split(header["fails"]) if "fails" in header else (None if "passes" in header else ()),
        passes=_split(header["passes"]) if "passes" in header else None, reviews=_split(header.get("reviews", "")),
        base=header.get("base", "reference"), notebook=notebook, requires=_split(header.get("requires", "")),
        gap=_split(header.get("gap", "").split("--")[0]), gap_reason=header.get("gap", "").partition("--")[2].strip(),
        solutions=solutions, appended=appended, files=files, raw=raw,
    )


def lessons() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and p.name.startswith("lesson"))


def cases(lesson: str | None = None) -> list[Case]:
    """Every case of ``lesson`` (default: of every lesson in the corpus), sorted by lesson and name."""
    chosen = [lesson] if lesson else lessons()
    return [parse_case(p, name) for name in chosen for p in sorted((CORPUS / name).glob("*.py"))]


def _other_lesson_notebook(lesson: Lesson, root: Path) -> nbformat.NotebookNode:
    """The release notebook of a lesson that shares no solution grade_id with ``lesson`` (or a made-up one)."""
    for folder in sorted((Path(root) / "release").iterdir()):
        found = sorted(folder.glob("*.ipynb"))
        if folder.name == lesson.name or not found:
            continue
        nb = nbformat.read(str(found[0]), as_version=4)
        ids = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
        if not ids & set(lesson.solution_ids):
            return nb
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("def something_else():\n    return 42",
                                          metadata={"nbgrader": {"grade_id": "another_exercise", "solution": True,
                                                                 "grade": False, "locked": False,
                                                                 "schema_version": 3}})]
    return nb


def _tests(nb) -> list:
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
            and not c.metadata.get("nbgrader", {}).get("solution")]


def build_notebook(case: Case, lesson: Lesson, root: Path) -> str:
    """The submitted file's text for ``case``."""
    if case.raw is not None:
        return case.raw
    nb = sanitized_notebook(lesson, case.sources(lesson))
    for item in case.notebook:
        kind, _, argument = item.partition(":")
        if kind == "delete-tests":
            nb.cells = [c for c in nb.cells if c not in _tests(nb)]
        elif kind == "edit-tests":
            for cell in _tests(nb):
                cell.source = 'print("all tests passed")'
        elif kind == "duplicate-tests":
            extra = []
            for cell in nb.cells:
                extra.append(cell)
                if cell in _tests(nb):
                    twin = _twin(cell)
                    twin.source = "pass"
                    extra.append(twin)
            nb.cells = extra
        elif kind == "duplicate-solutions":
            twins = []
            for cell in nb.cells:
                if cell.metadata.get("nbgrader", {}).get("solution"):
                    twin = _twin(cell)
                    twin.source = "raise RuntimeError('a second copy of this cell: the grader must ignore it')"
                    twins.append(twin)
            nb.cells = nb.cells + twins
        elif kind == "more-points":
            for cell in _tests(nb):
                cell.metadata["nbgrader"]["points"] = 100
        elif kind == "schema-too-new":
            for cell in nb.cells:
                if "nbgrader" in cell.metadata:
                    cell.metadata["nbgrader"]["schema_version"] = 99
            nb.metadata["kernelspec"] = {"name": "evil-kernel", "display_name": "evil", "language": "python"}
        elif kind == "strip-metadata":
            for cell in nb.cells:
                cell.metadata.pop("nbgrader", None)
        elif kind == "markdown-solution":
            for cell in nb.cells:
                if cell.metadata.get("nbgrader", {}).get("grade_id") == argument:
                    cell.cell_type = "markdown"
                    cell.pop("outputs", None)
                    cell.pop("execution_count", None)
        elif kind == "other-lesson":
            nb = _other_lesson_notebook(lesson, root)
        elif kind == "nbformat3":
            return json.dumps(nbformat.convert(nb, 3), indent=1)
    return nbformat.writes(nb)


def _twin(cell):
    """A copy of ``cell`` as a notebook editor makes one: same metadata (the grade_id too), a cell id of its own."""
    twin = copy.deepcopy(cell)
    if "id" in twin:
        twin.id = f"{cell.id}-copy"[-64:]
    return twin


def build(case: Case, root: Path, student: str | None = None) -> Path:
    """Write ``case`` as ``submitted/<student>/<lesson>/`` of course ``root``; returns the folder."""
    lesson = load_lesson(case.lesson, root)
    folder = Path(root) / "submitted" / (student or case.student) / case.lesson
    folder.mkdir(parents=True, exist_ok=True)
    name = "my_homework.ipynb" if "rename" in case.notebook else lesson.notebook_name
    (folder / name).write_text(build_notebook(case, lesson, root))
    for filename, text in case.files.items():
        (folder / filename).write_text(text)
    return folder
