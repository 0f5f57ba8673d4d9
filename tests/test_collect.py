"""collect: LMS exports, named however the LMS names them, into submitted/<student>/<lesson>/."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
import pytest

from autograder import collect
from autograder.coursedir import CourseError
from workflow_fakes import LESSON, REPO, make_course

LESSONS = ["lesson1_by_hand", "lesson2_loops", "lesson3_numpy", "lesson4_torch", "lesson5_gap"]


@pytest.mark.parametrize("path, student, lesson", [
    ("alice_12345_lesson2_loops.ipynb", "alice", "lesson2_loops"),
    ("alice_LATE_12345_67890_lesson2_loops-1.ipynb", "alice", "lesson2_loops"),
    ("Bob Smith - lesson1_by_hand (2).ipynb", "bob_smith", "lesson1_by_hand"),
    ("lesson3_numpy/carol/anything.ipynb", "carol", "lesson3_numpy"),
    ("carol/lesson3_numpy/lesson3_numpy.ipynb", "carol", "lesson3_numpy"),
    ("submissions/dave_lesson4_torch_LATE.ipynb", "dave", "lesson4_torch"),
    ("lesson1_by_hand_erin_attempt_2025-03-02-14-05-00.ipynb", "erin", "lesson1_by_hand"),
    ("frank_lesson5.ipynb", "frank", "lesson5_gap"),
    ("Gina O'Neil_998_assignsubmission_file_/lesson2_loops.ipynb", "gina_o_neil", "lesson2_loops"),
])
def test_lms_names_are_understood(path, student, lesson):
    assert collect._describe(PurePosixPath(path), LESSONS) == (student, lesson, "")


@pytest.mark.parametrize("path, problem", [
    ("random.ipynb", "no lesson name"),
    ("lesson1_lesson2.ipynb", "names several lessons"),
    ("submissions/lesson2_loops.ipynb", "no student name"),
])
def test_names_that_cannot_be_placed_say_why(path, problem):
    student, _, reason = collect._describe(PurePosixPath(path), LESSONS)
    assert student is None and problem in reason


def test_time_in_a_name():
    assert str(collect.parse_time("x_attempt_2025-03-02-14-05-00_y")) == "2025-03-02 14:05:00"
    assert collect.parse_time("alice_12345_lesson2_loops") is None


def _notebook(text: str = "x = 1") -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(text))
    return nbformat.writes(nb)


def _export(folder: Path) -> Path:
    """A messy LMS export: styles mixed, a re-upload, a PDF, a cut-short notebook, a nbgrader folder."""
    files = {
        "alice_12345_lesson1_by_hand.ipynb": _notebook("a = 1"),
        "Bob Smith - lesson1_by_hand.ipynb": _notebook("old"),
        "Bob Smith - lesson1_by_hand (2).ipynb": _notebook("new"),
        "lesson1_by_hand/carol/anything.ipynb": _notebook(),
        "dave/lesson1_by_hand/lesson1_by_hand.ipynb": _notebook(),
        "dave/lesson1_by_hand/timestamp.txt": "2025-03-05 10:00:00.000000 UTC",
        "submissions/erin_lesson1_by_hand_LATE.ipynb": _notebook(),
        "submissions/frank_lesson1_by_hand.pdf": "%PDF-1.4",
        "submissions/gina_lesson1_by_hand.ipynb": _notebook()[:40],
        "notes.ipynb": _notebook(),
        ".ipynb_checkpoints/alice_lesson1_by_hand-checkpoint.ipynb": _notebook(),
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_collect_places_what_it_can_and_reports_the_rest(tmp_path):
    root = make_course(tmp_path)
    export = _export(tmp_path / "export")
    due = {LESSON: collect.parse_time("2025-03-04 23:59")}
    report = collect.collect(export, root, [LESSON], due=due)
    placed = {(p.student, p.lesson): p for p in report.placed}
    assert set(placed) == {(s, LESSON) for s in ("alice", "bob_smith", "carol", "dave", "erin")}
    for student in ("alice", "bob_smith", "carol", "dave", "erin"):
        assert (root / "submitted" / student / LESSON / f"{LESSON}.ipynb").is_file()
    bob = nbformat.read(root / "submitted" / "bob_smith" / LESSON / f"{LESSON}.ipynb", as_version=4)
    assert bob.cells[0].source == "new", "the re-upload (2) must win over the first upload"
    assert placed[("dave", LESSON)].late and placed[("erin", LESSON)].late and not placed[("alice", LESSON)].late
    stamp = (root / "submitted" / "dave" / LESSON / "timestamp.txt").read_text()
    from nbgrader.utils import parse_utc
    assert str(parse_utc(stamp)).startswith("2025-03-05 10:00:00")
    reasons = {s.file: s.reason for s in report.skipped}
    assert "not a notebook file" in reasons["submissions/frank_lesson1_by_hand.pdf"]
    assert "not a Jupyter notebook" in reasons["submissions/gina_lesson1_by_hand.ipynb"]
    assert "File > Download" in reasons["submissions/gina_lesson1_by_hand.ipynb"]
    assert "no lesson name" in reasons["notes.ipynb"]
    assert "older copy" in reasons["Bob Smith - lesson1_by_hand.ipynb"]
    assert not any("checkpoint" in name for name in reasons), "checkpoints are not submissions"
    log = json.loads((root / "reports" / "collect.json").read_text())
    assert len(log["placed"]) == 5 and len(log["skipped"]) == 4


def test_collect_reads_a_zip_with_a_top_folder(tmp_path):
    root = make_course(tmp_path)
    export = _export(tmp_path / "export")
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in export.rglob("*"):
            if path.is_file():
                zf.write(path, f"CS101 export/{path.relative_to(export)}")
    report = collect.collect(archive, root, [LESSON])
    assert {p.student for p in report.placed} == {"alice", "bob_smith", "carol", "dave", "erin"}


def test_collect_errors_name_what_to_do(tmp_path):
    root = make_course(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CourseError, match="holds no files"):
        collect.collect(tmp_path / "empty", root, [LESSON])
    with pytest.raises(CourseError, match="does not exist"):
        collect.collect(tmp_path / "missing.zip", root, [LESSON])
    (tmp_path / "grades.txt").write_text("not a zip")
    with pytest.raises(CourseError, match="neither a folder nor a .zip"):
        collect.collect(tmp_path / "grades.txt", root, [LESSON])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "alice_lesson1_by_hand.ipynb").write_text("{ not json")
    with pytest.raises(CourseError, match="(?s)no student notebook could be placed.*not a Jupyter notebook"):
        collect.collect(tmp_path / "bad", root, [LESSON])
    with pytest.raises(CourseError, match="unknown lesson 'lesson9'"):
        collect.parse_due(["lesson9=2025-01-01"], [LESSON])
    with pytest.raises(CourseError, match="YYYY-MM-DD"):
        collect.parse_due(["tomorrow"], [LESSON])


def test_real_release_notebook_is_accepted(tmp_path):
    root = make_course(tmp_path)
    folder = tmp_path / "lms"
    folder.mkdir()
    (folder / f"zoe_{LESSON}.ipynb").write_bytes((REPO / "release" / LESSON / f"{LESSON}.ipynb").read_bytes())
    report = collect.collect(folder, root, [LESSON])
    assert [(p.student, p.lesson) for p in report.placed] == [("zoe", LESSON)] and not report.skipped
