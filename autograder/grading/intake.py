"""Submission intake: read a submitted notebook defensively and keep only the student's solution cells.

Nothing of a submission is trusted except the text of its solution cells, found by ``grade_id`` in the
release's list of solution cells (first match wins; a missing one counts as empty), made safe to write
(:func:`~autograder.safe_text.clean_text`: no lone surrogate, no control character). Metadata, outputs,
kernelspec, test cells and extra files are ignored. The notebook nbgrader then sees is the *sanitized*
one: the release notebook with those sources swapped in, so malformed input never reaches nbgrader.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.grading.lesson import Lesson
from autograder.safe_text import clean_text
from autograder.variants import mismatch_note

MAX_NOTEBOOK_BYTES = 100 << 20
MAX_CELL_CHARS = 1 << 20

INVALID = "invalid submission"
NO_SOLUTIONS = "no solution cells"


@dataclass
class Intake:
    """What was taken from one submission."""

    status: str  # "ok", INVALID or NO_SOLUTIONS
    reason: str
    sources: dict[str, str] = field(default_factory=dict)  # solution sources by grade_id
    notes: list[str] = field(default_factory=list)


def _text(source) -> str | None:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    return None


def parse_submission(data: bytes, lesson: Lesson, student: str | None = None) -> Intake:
    """The solution sources of a submitted notebook given as raw bytes (never raises); with the graded
    identity ``student``, a note when the notebook's id cell names someone else (:mod:`autograder.variants`)."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        return Intake(INVALID, f"the notebook is {len(data) / 2**20:.0f} MiB, over the limit of "
                               f"{MAX_NOTEBOOK_BYTES / 2**20:.0f} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Intake(INVALID, f"the file is not UTF-8 text ({exc.reason} at byte {exc.start}); is it a notebook?")
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return Intake(INVALID, f"the file is not valid JSON ({str(exc)[:200]}); re-download or re-save the notebook "
                               "in JupyterLab")
    if not isinstance(nb, dict):
        return Intake(INVALID, "the file is JSON but not a notebook (no top-level object)")
    version = nb.get("nbformat")
    if version != 4 or isinstance(version, bool):
        hint = " (an old nbformat 3 notebook: open it in JupyterLab and save it again)" if version == 3 else ""
        return Intake(INVALID, f"the notebook format is {version!r}, not 4{hint}")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return Intake(INVALID, "the notebook has no list of cells")
    wanted = dict(lesson.solution_types)  # grade_id -> cell type
    sources: dict[str, str] = {}
    notes: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        metadata = cell.get("metadata")
        meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if not isinstance(grade_id, str) or grade_id not in wanted or grade_id in sources:
            if isinstance(grade_id, str) and grade_id in sources:
                notes.append(f"a second cell {grade_id!r} was ignored (the first one counts)")
            continue
        if cell.get("cell_type") != wanted[grade_id]:
            notes.append(f"cell {grade_id!r} is a {cell.get('cell_type')!r} cell, not {wanted[grade_id]!r}: ignored")
            continue
        source = _text(cell.get("source", ""))
        if source is None:
            notes.append(f"cell {grade_id!r} has no readable source: ignored")
            continue
        if len(source) > MAX_CELL_CHARS:
            notes.append(f"cell {grade_id!r} is over {MAX_CELL_CHARS} characters: ignored")
            continue
        sources[grade_id] = clean_text(source)  # what is graded is what gets staged and written
    if not any(i in sources for i in lesson.code_solution_ids):
        ids = ", ".join(lesson.solution_ids)
        return Intake(NO_SOLUTIONS, f"none of the solution cells of {lesson.name} ({ids}) is in this notebook; is it "
                                    "the notebook of another lesson, or were the cells deleted?", {}, notes)
    missing = [i for i in lesson.solution_ids if i not in sources]
    if missing:
        notes.append("missing solution cells (graded as empty): " + ", ".join(missing))
    mismatch = mismatch_note(cells, student, lesson.name) if student is not None else None
    if mismatch:
        notes.append(clean_text(mismatch))
    return Intake("ok", "", sources, notes)


def find_notebook(folder: Path, lesson: Lesson) -> tuple[Path | None, str]:
    """The submitted notebook of ``lesson`` in ``folder`` (named like the release's), or why there is none."""
    expected = Path(folder) / lesson.notebook_name
    if expected.is_file():
        return expected, ""
    found = sorted(p.name for p in Path(folder).glob("*")) if Path(folder).is_dir() else []
    listing = ", ".join(found[:10]) if found else "nothing"
    return None, f"no {lesson.notebook_name} in the submission (found: {listing})"


def read_submission(folder: Path, lesson: Lesson) -> Intake:
    """Intake of the submission folder ``submitted/<student>/<lesson>/``."""
    path, problem = find_notebook(folder, lesson)
    if path is None:
        return Intake(INVALID, problem)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Intake(INVALID, f"the notebook cannot be read ({exc})")
    intake = parse_submission(data, lesson, Path(folder).parent.name)
    extra = sorted(p.name for p in Path(folder).iterdir() if p.name not in (lesson.notebook_name, "timestamp.txt"))
    if extra:
        intake.notes.append("ignored extra files: " + ", ".join(extra[:10]))
    return intake


def sanitized_notebook(lesson: Lesson, sources: dict[str, str]) -> nbformat.NotebookNode:
    """The release notebook with the student's solution sources swapped in (missing ones empty)."""
    nb = copy.deepcopy(nbformat.read(str(lesson.release_path), as_version=4))
    seen: set[str] = set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id")
        if meta.get("solution") and grade_id in lesson.stubs and grade_id not in seen:
            seen.add(grade_id)
            cell.source = sources.get(grade_id, "")
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def notebook_sources(nb, lesson: Lesson) -> dict[str, str]:
    """Solution sources of an in-memory notebook (nbgrader's, after its own sanitizing), as the intake
    would take them."""
    try:
        data = json.dumps(nb if isinstance(nb, dict) else dict(nb)).encode()
    except (TypeError, ValueError):
        return {}
    return parse_submission(data, lesson).sources


def valid_timestamp(folder: Path) -> str | None:
    """The submission's ``timestamp.txt`` text if nbgrader can parse it, else ``None``."""
    path = Path(folder) / "timestamp.txt"
    try:
        text = path.read_text()[:200].strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text:
        return None
    try:
        from nbgrader.utils import parse_utc

        parse_utc(text)
    except Exception:
        return None
    return text


def valid_submission_secret(folder: Path) -> str | None:
    """The submission's ``submission_secret.txt`` as nbgrader's submit wrote it (hex, 128 characters there),
    byte for byte, or ``None`` when it is missing or anything else (student-controlled: never trusted)."""
    try:
        text = (Path(folder) / "submission_secret.txt").read_text(encoding="ascii")[:1025]
    except (OSError, UnicodeDecodeError):
        return None
    return text if 0 < len(text) <= 1024 and all(c in "0123456789abcdef" for c in text) else None
