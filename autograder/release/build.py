"""Build ``release/`` from ``source/`` with nbgrader and check it: solutions pass, stubs fail.

Every nbgrader call has an explicit course root and a throw-away gradebook, so building a release never
touches the instructor's ``gradebook.db``; nbgrader's generator runs in this process
(:func:`autograder.coursedir.nbgrader_api`), its validator starts a kernel per notebook.

A lesson whose build validated is recorded in ``.validated-release.json`` of the course root, by a hash
of everything the build and its validation read (:func:`build_key`); while that hash is unchanged the
lesson is not built and validated again (``force`` does it anyway).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder import lessontext
from autograder.release import leaks
from autograder.coursedir import (REPO, CourseError, check_config, check_lessons, copy_course, course_config,
                                  nbgrader_api, notebook)


class ReleaseError(CourseError):
    """A lesson could not be built or did not validate; the message says what to do."""


def generate(lesson: str, root: Path = REPO) -> Path:
    """``nbgrader generate_assignment`` for one lesson of course root ``root``, through nbgrader's API in this
    process, with a throw-away gradebook; returns its release folder."""
    check_config(root)
    config = course_config(root)
    with tempfile.TemporaryDirectory(prefix="nbgrader-db-") as scratch:
        config.CourseDirectory.db_url = f"sqlite:///{scratch}/gradebook.db"
        result = nbgrader_api(root, config, lambda api: api.generate_assignment(lesson, force=True, create=True))
    if not result.get("success"):
        raise ReleaseError(f"nbgrader could not build {lesson}:\n{result.get('log', '')[-3000:]}\n"
                           f"{result.get('error', '')[-3000:]}")
    return Path(root) / "release" / lesson


def generate_copy(lesson: str, destination: Path, root: Path = REPO) -> Path:
    """Build the release of ``lesson`` in a scratch course at ``destination`` (``source/`` is copied)."""
    return generate(lesson, copy_course(root, destination, [lesson], folders=("source",)))


@dataclass
class Validation:
    """What ``nbgrader validate`` said of one notebook."""

    notebook: Path
    passed: bool
    failed_cells: list[str] = field(default_factory=list)
    output: str = ""


def validate(notebook: Path, invert: bool = False) -> Validation:
    """Run nbgrader's validator on ``notebook`` (``invert``: every test cell must fail instead).

    Returns which cells broke the rule: with ``invert`` False, the test cells that failed (or changed);
    with ``invert`` True, the test cells that passed.
    """
    from nbgrader.validator import Validator
    from traitlets.config import Config

    notebook = Path(notebook).resolve()
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        # The kernel talks over local sockets in a folder of its own: no "TCP without encryption" warning,
        # and no socket files next to the notebook.
        # A busy machine delays a cell's last output past nbgrader's 4 s (which then fails the build): 60 s.
        quiet = Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "ipc")},
                        "Execute": {"iopub_timeout": 60}})
        report = Validator(invert=invert, config=quiet).validate(str(notebook))
    broken = [cell.get("source", "")[:80] for key in ("failed", "passed", "changed", "type_changed")
              for cell in report.get(key, [])]
    return Validation(notebook, passed=not broken, failed_cells=broken, output=json.dumps(report)[:2000])


def graded_cells(notebook: Path) -> list[dict]:
    """The graded cells of a notebook: ``grade_id``, ``points``, and whether it is a test cell."""
    nb = nbformat.read(notebook, as_version=4)
    cells = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") or meta.get("solution"):
            cells.append({"grade_id": meta.get("grade_id"), "points": float(meta.get("points", 0) or 0),
                          "test": bool(meta.get("grade")) and not meta.get("solution")})
    return cells


@dataclass
class LessonSummary:
    lesson: str
    points: float
    graded_cells: int
    solutions_pass: bool
    stubs_fail: bool
    problems: list[str]
    unchanged: bool = False  # not rebuilt: the same inputs as a build that validated (build_key)


#: The record of validated builds in a course root: ``{lesson: build_key}``.
VALIDATED = ".validated-release.json"


def build_key(lesson: str, root: Path = REPO) -> str:
    """A hash of what building and validating ``lesson`` reads: the files of ``source/<lesson>`` and
    ``release/<lesson>``, the course's ``nbgrader_config.py``, the ``course`` helpers the notebooks
    import, the code that makes stubs and checks leaks, and nbgrader's version."""
    import course
    import nbgrader

    root = Path(root)
    here = Path(__file__).resolve().parent
    files = [root / "nbgrader_config.py", here / "build.py", here / "stubs.py", here / "leaks.py",
             here.parent / "lessontext.py"]
    files += sorted(Path(course.__file__).resolve().parent.rglob("*.py"))
    for folder in ("source", "release"):
        files += sorted(p for p in (root / folder / lesson).rglob("*") if p.is_file()
                        and ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts)
    digest = hashlib.sha256(f"nbgrader {nbgrader.__version__}\n".encode())
    for path in files:
        name = path.relative_to(root) if path.is_relative_to(root) else path.relative_to(path.parents[1])
        digest.update(f"{name}\n".encode() + path.read_bytes() + b"\n")
    return digest.hexdigest()


def validated_builds(root: Path = REPO) -> dict[str, str]:
    """``{lesson: build_key}`` of the builds that validated (empty when there is no readable record)."""
    try:
        found = json.loads((Path(root) / VALIDATED).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def record_validated(lesson: str, root: Path = REPO) -> None:
    """Record that the build of ``lesson`` as it is now validated (written atomically)."""
    builds = validated_builds(root) | {lesson: build_key(lesson, root)}
    path = Path(root) / VALIDATED
    with tempfile.NamedTemporaryFile("w", dir=root, prefix=".validated-", suffix=".tmp", delete=False) as out:
        json.dump(dict(sorted(builds.items())), out, indent=1)
        out.write("\n")
    os.replace(out.name, path)


def build_and_check(lesson: str, root: Path = REPO, force: bool = False) -> LessonSummary:
    """Regenerate ``release/<lesson>`` in place, then validate: the solution passes, the stub fails. A
    lesson whose inputs are those of a build that validated (:func:`build_key`) is left as it is, unless
    ``force``."""
    check_lessons([lesson], root)
    if not force and validated_builds(root).get(lesson) == build_key(lesson, root):
        cells = graded_cells(notebook(root, "source", lesson))
        return LessonSummary(lesson, sum(c["points"] for c in cells if c["test"]),
                             sum(1 for c in cells if c["test"]), True, True, [], unchanged=True)
    generate(lesson, root)
    source_nb = notebook(root, "source", lesson)
    release_nb = notebook(root, "release", lesson)
    cells = graded_cells(source_nb)
    solution = validate(source_nb)
    stub = validate(release_nb, invert=True)
    problems = [f"solution fails: {c}" for c in solution.failed_cells]
    problems += [f"stub passes: {c}" for c in stub.failed_cells]
    problems += leaks.release_leaks(source_nb, release_nb, lessontext.delimiters(root))
    if solution.passed and stub.passed and not problems:
        record_validated(lesson, root)
    return LessonSummary(lesson, sum(c["points"] for c in cells if c["test"]),
                         sum(1 for c in cells if c["test"]), solution.passed, stub.passed, problems)


# --- Rules that every lesson must keep (checked by tests/release/test_chain.py and by `release`) -------------

def find_outputs(nb) -> list[str]:
    """Code cells of ``nb`` that carry outputs or an execution count (committed notebooks must not)."""
    return [f"cell {i} has outputs or an execution count" for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count"))]


def graded_cell_problems(nb) -> list[str]:
    """Graded cells without points, solution/test cells without a grade_id, and duplicate grade_ids."""
    problems, seen = [], set()
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader")
        if not meta:
            continue
        grade_id = meta.get("grade_id")
        if (meta.get("grade") or meta.get("solution") or meta.get("locked")) and not grade_id:
            problems.append(f"cell {i} has nbgrader metadata but no grade_id")
        if grade_id in seen:
            problems.append(f"grade_id {grade_id!r} is used twice")
        seen.add(grade_id)
        if meta.get("grade") and not float(meta.get("points", 0) or 0) > 0:
            problems.append(f"graded cell {grade_id!r} has no points")
    return problems


def bare_expression_cells(nb) -> list[str]:
    """Test cells whose last statement is an expression other than a ``print(...)`` call.

    nbgrader scores such a cell by the expression's value (partial credit), not by pass/fail.
    """
    import ast

    problems = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not (meta.get("grade") and cell.cell_type == "code"):
            continue
        try:
            body = ast.parse(cell.source).body
        except SyntaxError as exc:
            problems.append(f"test cell {meta.get('grade_id')!r} does not parse: {exc}")
            continue
        last = body[-1] if body else None
        is_print = (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
                    and isinstance(last.value.func, ast.Name) and last.value.func.id == "print")
        if isinstance(last, ast.Expr) and not is_print:
            problems.append(f"test cell {meta.get('grade_id')!r} ends in a bare expression")
    return problems


def release_differences(expected_nb, actual_nb) -> list[str]:
    """How ``actual_nb`` differs from ``expected_nb`` in cell types, sources and nbgrader metadata."""
    if len(expected_nb.cells) != len(actual_nb.cells):
        return [f"{len(actual_nb.cells)} cells instead of {len(expected_nb.cells)}"]
    problems = []
    for i, (want, got) in enumerate(zip(expected_nb.cells, actual_nb.cells)):
        if want.cell_type != got.cell_type:
            problems.append(f"cell {i}: type {got.cell_type} instead of {want.cell_type}")
        if want.source != got.source:
            problems.append(f"cell {i}: source differs")
        if want.metadata.get("nbgrader") != got.metadata.get("nbgrader"):
            problems.append(f"cell {i}: nbgrader metadata differs")
    return problems
