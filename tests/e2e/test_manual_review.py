"""An answer in words that the grader cannot be sure of, end to end through the real trusted grader
(issue 42 item 5): ``avgpool-course grade`` gives it no point and flags it for manual grading, the report
lists it under "Needs a look" with the answer shown, the graded notebook says the instructor will read
it; the instructor's manual grade (written into the gradebook as formgrader's score box writes it) reaches
``grades.csv`` through ``export``, the report's grade table and the feedback page, and grading the class
again keeps it."""

from __future__ import annotations

import csv
import re

import nbformat
import pytest

from autograder import cli, coursedir
from autograder.records import load_record
from autograder.results import export, report
from shared import WHILE_FORWARD
from workflow_fakes import LESSON, REPO, make_course

#: What alice answers to q1 ("What does average pooling output per window?"): the key's words, taken back.
CONTRADICTING = "the arithmetic mean of the window's values, except that it is exactly what average pooling lacks"


def _submit(root, tmp_path, capsys) -> None:
    """alice hands in the reference answers with q1 replaced by :data:`CONTRADICTING` (through ``collect``)."""
    from autograder.sample_class import fill
    from autograder.solutions import solution_cells

    cells = solution_cells(REPO / "source" / LESSON / f"{LESSON}.ipynb")
    cells["knowledge_check"] = "\n".join(f"q1 = {CONTRADICTING!r}" if line.startswith("q1 = ") else line
                                         for line in cells["knowledge_check"].splitlines())
    assert CONTRADICTING in cells["knowledge_check"]
    release = nbformat.read(REPO / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    lms = tmp_path / "lms"
    lms.mkdir()
    nbformat.write(fill(release, cells), str(lms / f"alice_1234_{LESSON}.ipynb"))
    assert cli.main(["collect", str(lms), "--root", str(root)]) == 0, capsys.readouterr()


def _grades_csv(root, capsys) -> dict:
    assert cli.main(["export", "--root", str(root)]) == 0, capsys.readouterr()
    (row,) = [r for r in csv.DictReader((root / "reports" / "grades.csv").open()) if r["student"] == "alice"]
    return row


@pytest.mark.slow
def test_a_contradicting_answer_goes_to_review_and_the_instructors_grade_reaches_grades_csv(tmp_path, capsys):
    pytest.importorskip("autograder.grading")
    root = make_course(tmp_path)
    _submit(root, tmp_path, capsys)
    assert cli.main(["grade", "--root", str(root), "--quiet", "--seed", "3"]) == 0, capsys.readouterr()

    record = load_record(root, LESSON, "alice")
    tests = {t["grade_id"]: t for t in record.tests}
    assert record.status == "ok"
    assert tests["kc_q1"]["points"] == 0 and tests["kc_q1"]["review"] == CONTRADICTING
    assert [g for g, t in tests.items() if not t["passed"]] == ["kc_q1"], "every other answer is the reference's"
    assert record.score == record.max_score - 1
    graded = nbformat.read(root / "autograded" / "alice" / LESSON / f"{LESSON}.ipynb", as_version=4)
    (cell,) = [c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "kc_q1"]
    assert cell.outputs[0].ename == "NeedsReview" and "your instructor will read this answer" in cell.outputs[0].evalue
    with coursedir.open_gradebook(root) as gb:
        grade = gb.find_grade("kc_q1", LESSON, LESSON, "alice")
        assert (grade.auto_score, grade.manual_score, grade.needs_manual_grade) == (0, None, True)
        assert gb.find_submission(LESSON, "alice").needs_manual_grade  # formgrader lists it to grade
    automatic = float(_grades_csv(root, capsys)[LESSON])
    assert automatic == record.max_score - 1

    assert cli.main(["report", "--root", str(root)]) == 0, capsys.readouterr()
    html = (root / "reports" / "report.html").read_text()
    assert "Needs a look" in html and "kc_q1" in html and "exactly what average pooling lacks" in html

    with coursedir.open_gradebook(root) as gb:  # the instructor reads it and decides: no point, but half of one
        grade = gb.find_grade("kc_q1", LESSON, LESSON, "alice")
        grade.manual_score = 0.5  # what formgrader's score box writes
        gb.db.commit()
    assert float(_grades_csv(root, capsys)[LESSON]) == automatic + 0.5
    grades = export.read_grades(root)
    (row,) = [r for r in report.grade_rows(grades, []) if r["student"] == "alice"]
    assert row["cells"][0]["text"] == export.fmt(automatic + 0.5), "the report's grade table: the gradebook's score"
    assert cli.main(["feedback", "--root", str(root), "--student", "alice"]) == 0, capsys.readouterr()
    page = (root / "feedback" / "alice" / LESSON / f"{LESSON}.html").read_text()
    assert re.search(r'name="kc_q1".*?Score: 0\.5 / 1', page, flags=re.S), "feedback: the instructor's grade of kc_q1"

    assert cli.main(["grade", "--root", str(root), "--quiet", "--seed", "4"]) == 0, capsys.readouterr()
    with coursedir.open_gradebook(root) as gb:
        grade = gb.find_grade("kc_q1", LESSON, LESSON, "alice")
        assert (grade.auto_score, grade.manual_score) == (0, 0.5), "regrading keeps the instructor's grade"
    assert float(_grades_csv(root, capsys)[LESSON]) == automatic + 0.5


@pytest.mark.slow
def test_an_unproved_source_rule_goes_to_review_and_the_instructors_grade_reaches_grades_csv(tmp_path, capsys):
    """Issue 50 item 2, end to end: a rule that can neither prove the code allowed nor forbidden scores the cell
    0 with "needs manual grade" (the construct, its line in the cell and the code recorded and listed under
    "Needs a look"); the instructor's grade reaches ``grades.csv`` and the feedback page."""
    pytest.importorskip("autograder.grading")
    from autograder.sample_class import fill
    from autograder.solutions import solution_cells

    lesson = "lesson2_loops"
    root = make_course(tmp_path, (lesson,))
    cells = solution_cells(REPO / "source" / lesson / f"{lesson}.ipynb")
    cells["avg_pool2d_loops"] = WHILE_FORWARD
    release = nbformat.read(REPO / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    lms = tmp_path / "lms"
    lms.mkdir()
    nbformat.write(fill(release, cells), str(lms / f"alice_1234_{lesson}.ipynb"))
    assert cli.main(["collect", str(lms), "--root", str(root)]) == 0, capsys.readouterr()
    assert cli.main(["grade", "--root", str(root), "--quiet", "--seed", "3"]) == 0, capsys.readouterr()

    record = load_record(root, lesson, "alice")
    tests = {t["grade_id"]: t for t in record.tests}
    assert [g for g, t in tests.items() if not t["passed"]] == ["forward_avoids"], "the rest is proved"
    review = tests["forward_avoids"]["review"]
    assert tests["forward_avoids"]["points"] == 0 and "line 18 of its cell, `while i < out_h:`" in review, review
    with coursedir.open_gradebook(root) as gb:
        grade = gb.find_grade("forward_avoids", lesson, lesson, "alice")
        assert (grade.auto_score, grade.manual_score, grade.needs_manual_grade) == (0, None, True)
    automatic = float(_grades_csv(root, capsys)[lesson])
    assert automatic == record.max_score - 2

    assert cli.main(["report", "--root", str(root)]) == 0, capsys.readouterr()
    html = (root / "reports" / "report.html").read_text()
    assert "Needs a look" in html and "forward_avoids" in html and "while i &lt; out_h:" in html

    with coursedir.open_gradebook(root) as gb:  # the instructor reads the loops: they compute the windows
        grade = gb.find_grade("forward_avoids", lesson, lesson, "alice")
        grade.manual_score = 2.0
        gb.db.commit()
    assert float(_grades_csv(root, capsys)[lesson]) == automatic + 2
    assert cli.main(["feedback", "--root", str(root), "--student", "alice"]) == 0, capsys.readouterr()
    page = (root / "feedback" / "alice" / lesson / f"{lesson}.html").read_text()
    assert re.search(r'name="forward_avoids".*?Score: 2(\.0)? / 2', page, flags=re.S), "feedback: the instructor's grade"
