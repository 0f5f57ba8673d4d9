"""Test fixtures for the instructor's workflow: a scratch course and a fast stand-in for the trusted grader.

``fake_grade`` has the trusted grader's interface (``grade(lessons, students, jobs, root, progress)``)
and writes what it writes (``gradebook.db`` through ``nbgrader.api.Gradebook``, one JSON record per
submission under ``records/``), but judges by text instead of running code: a test cell passes when
the solution cell above it equals the reference solution. Fast and deterministic, so the workflow's
own tests do not wait for real grading (one integration test uses the real grader).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import nbformat

from types import SimpleNamespace

from autograder import coursedir, solutions
from autograder import lessontext
from autograder.grading.nbgrader_plugin import TrustedExecute
from autograder.records import Record, save_record
from shared import REPO

LESSON = "lesson1_by_hand"
#: A line the fake puts into failure messages, as a traceback through a hidden test would.
QUOTE_HIDDEN = True


def make_course(tmp: Path, lessons: tuple[str, ...] = (LESSON,), variants: bool = False) -> Path:
    """A scratch course folder at ``tmp/instructor`` (not ``course``: that would shadow the package) with ``source/``, ``release/`` of ``lessons`` and the config.
    ``variants`` off (the default here), every student's hand-worked exercises have the lecture's numbers, so the
    reference solution is every student's full marks (per-student numbers: tests/grading/test_variants.py)."""
    root = coursedir.copy_course(REPO, Path(tmp) / "instructor", list(lessons))
    if not variants:
        config = root / "nbgrader_config.py"
        config.write_text(config.read_text() + "\nc.Variants.enabled = False  # tests: the lecture's numbers\n")
    return root


def _layout(source_nb) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """(points per test cell, the solution cell each test cell follows, hidden line per test cell)."""
    points, follows, hidden, last = {}, {}, {}, None
    for cell in source_nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            last = meta["grade_id"]
        elif meta.get("grade"):
            points[meta["grade_id"]] = float(meta.get("points", 0))
            follows[meta["grade_id"]] = last
            lines = cell.source.split("### BEGIN HIDDEN TESTS")
            hidden[meta["grade_id"]] = lines[1].strip().splitlines()[0] if len(lines) > 1 else ""
    return points, follows, hidden


def fake_grade(lessons=None, students=None, jobs=1, root=REPO, progress=True, seed=None) -> list[Record]:
    """Grade ``root/submitted`` by comparing solution text with the reference; same outputs as the real one."""

    root = Path(root)
    records = []
    with coursedir.open_gradebook(root) as gb:
        for notebook in sorted((root / "submitted").glob("*/*/*.ipynb")):
            student, lesson = notebook.parent.parent.name, notebook.parent.name
            if (lessons and lesson not in lessons) or (students and student not in students):
                continue
            source_nb = nbformat.read(next((root / "source" / lesson).glob("*.ipynb")), as_version=4)
            reference = solutions.solution_cells(next((root / "source" / lesson).glob("*.ipynb")))
            points, follows, hidden = _layout(source_nb)
            gb.update_or_create_assignment(lesson)
            gb.update_or_create_notebook(lesson, lesson)
            for grade_id, value in points.items():
                gb.update_or_create_grade_cell(grade_id, lesson, lesson, max_score=value, cell_type="code")
            for grade_id in {f for f in follows.values() if f}:  # feedback reads their comments
                gb.update_or_create_solution_cell(grade_id, lesson, lesson)
            status, reason, answers = "ok", "", {}
            try:
                nb = nbformat.read(notebook, as_version=4)
                answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
                           if c.metadata.get("nbgrader", {}).get("solution")}
            except Exception as exc:
                status, reason = "invalid submission", f"not a notebook: {type(exc).__name__}"
            tests = []
            for grade_id, value in points.items():
                ok = status == "ok" and answers.get(follows[grade_id], "").strip() == \
                    reference.get(follows[grade_id], "").strip()
                message = "" if ok else f"{grade_id} failed"
                if not ok and QUOTE_HIDDEN and hidden[grade_id]:
                    message += f"\n  File \"<test>\", line 4\n    {hidden[grade_id]}"
                tests.append({"grade_id": grade_id, "points": value if ok else 0.0, "max_points": value,
                              "passed": ok, "message": message, "seconds": 0.01 * len(grade_id)})
            gb.update_or_create_student(student)
            stamp = notebook.parent / "timestamp.txt"
            kwargs = {"timestamp": stamp.read_text().strip()} if stamp.exists() else {}
            from nbgrader.api import MissingEntry
            try:
                gb.find_submission(lesson, student)
            except MissingEntry:
                with warnings.catch_warnings():  # nbgrader's add_submission warns under SQLAlchemy 2.1
                    warnings.simplefilter("ignore")
                    gb.add_submission(lesson, student, **kwargs)
            for test in tests:
                grade = gb.find_grade(test["grade_id"], lesson, lesson, student)
                grade.auto_score = test["points"]
                grade.needs_manual_grade = False
            gb.db.commit()
            if status == "ok":  # what nbgrader autograde leaves for generate_feedback
                autograded = root / "autograded" / student / lesson / f"{lesson}.ipynb"
                autograded.parent.mkdir(parents=True, exist_ok=True)
                writer = TrustedExecute()
                writer.output_chars = 20000
                writer._write(nb, SimpleNamespace(tests=tests, cells=[], status=status),
                              lessontext.hidden_test_lines(root, lesson))
                nbformat.write(nb, str(autograded))
            record = Record(student, lesson, status, sum(t["points"] for t in tests), sum(points.values()),
                            tests, reason, containment="none: the fake grader runs no code", content_key="fake",
                            seed=seed)
            save_record(root, record)
            records.append(record)
    return records
