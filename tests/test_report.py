"""feedback, export and report on a small class graded by the fast stand-in grader."""

from __future__ import annotations

import base64
import csv
import re

import pytest

from autograder import collect, export, feedback, leaks, report, sample_class
from autograder import records as recs
from workflow_fakes import LESSON, fake_grade, make_course


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A scratch course whose sample class (16 students, one lesson) is collected and graded."""
    tmp = tmp_path_factory.mktemp("graded")
    root = make_course(tmp)
    archive, manifest = sample_class.generate(tmp / "lms", root, students=16, seed=11)
    due = collect.parse_due([f"{k}={v}" for k, v in sample_class.due_dates(tmp / "lms").items()], [LESSON])
    collect.collect(archive, root, [LESSON], due=due)
    collect.record_due_dates(root, due)
    records = fake_grade(None, None, root=root)
    return root, manifest, records


def test_export_writes_scores_per_student_and_per_cell(graded):
    root, manifest, records = graded
    grades = export.read_grades(root)
    per_student, per_cell = export.write_csv(grades, root / "reports")
    rows = list(csv.DictReader(per_student.open()))
    by_record = {r["student"]: r["score"] for r in records}
    assert {row["student"]: float(row[LESSON]) for row in rows} == by_record
    assert all(float(row["max_total"]) == 25 for row in rows)
    cells = list(csv.DictReader(per_cell.open()))
    assert len(cells) == len(records) * len(records[0]["tests"])
    complete = next(m.student for m in manifest if m.variant == "complete")
    assert all(float(c["score"]) == float(c["max_score"]) for c in cells if c["student"] == complete)
    first = [c["graded_cell"] for c in cells if c["student"] == complete][:3]
    assert first == ["worked_example_tests", "output_size_basic", "output_size_errors"], "notebook order"


def test_a_manual_grade_wins_in_the_export(graded, tmp_path):
    root, _, records = graded
    student = records[0]["student"]
    with __import__("autograder").coursedir.open_gradebook(root) as gb:
        grade = gb.find_grade("kc_q1", LESSON, LESSON, student)
        before, grade.manual_score = grade.manual_score, 0.5
        gb.db.commit()
    try:
        cell = next(c for c in export.read_grades(root).cells if c[0] == student and c[2] == "kc_q1")
        assert cell[3] == 0.5
    finally:
        with __import__("autograder").coursedir.open_gradebook(root) as gb:
            gb.find_grade("kc_q1", LESSON, LESSON, student).manual_score = before
            gb.db.commit()


def test_feedback_shows_verdicts_and_never_hidden_tests(graded):
    root, manifest, records = graded
    pages = feedback.write_feedback(root)
    assert len(pages) == len(records)
    hidden = feedback.hidden_test_lines(root, LESSON)
    assert hidden, "lesson 1 has hidden tests"
    wrong = next(m.student for m in manifest if m.variant.startswith(("wrong", "partial")))
    page = (root / "feedback" / wrong / LESSON / f"{LESSON}.html").read_text()
    assert "failed" in page and "passed" in page and "visible test" in page
    assert "[hidden test line]" in page, "a message quoting a hidden test line is redacted"
    for path in pages:
        text = path.read_text()
        assert not [line for line in hidden if line in text or __import__("html").escape(line) in text]
    assert (root / "feedback" / wrong / "index.html").is_file()


def test_redact_replaces_quoted_hidden_lines():
    hidden = {"check_value(example1_shape, (8, 8, 8), \"example1_shape\")"}
    text = 'Traceback\n    check_value(example1_shape, (8, 8, 8), "example1_shape")\nAssertionError: wrong'
    assert leaks.redact(text, hidden) == "Traceback\n    [hidden test line]\nAssertionError: wrong"


def test_report_is_self_contained_and_shows_every_figure(graded):
    root, manifest, records = graded
    path = report.write_report(root)
    text = path.read_text()
    for heading in ("Score distribution per lesson", "Pass rate per graded cell", "Slowest tests",
                    "Submissions that are not OK", "Late submissions", "Files collect could not place", "Grades"):
        assert heading in text, heading
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", text)
    assert len(images) == 3
    assert all(base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n" for data in images)
    assert not re.search(r"""(?:src|href)\s*=\s*['"](?!data:|#|[\w.-]+\.html)""", text), "no external resource"
    assert "http://" not in text and "https://" not in text
    assert "not a Jupyter notebook" in text, "collect's skipped files are listed"


def test_report_lists_records_that_are_not_ok(graded, tmp_path):
    root, _, records = graded
    bad = dict(records[0], status="timeout", reason="output_size_basic ran past its 10 s limit")
    rates = report.pass_rates(export.read_grades(root))
    assert all(0.0 <= r <= 1.0 for _, _, r, _ in rates) and len(rates) == len(records[0]["tests"])
    assert report.slowest([bad], 2)[0][3] == max(bad["tests"], key=lambda t: t["seconds"])["grade_id"]
    (root / "records" / LESSON / f"{bad['student']}.json").write_text(__import__("json").dumps(bad))
    try:
        text = report.build(root)
        assert "ran past its 10 s limit" in text and "timeout" in text
    finally:
        (root / "records" / LESSON / f"{bad['student']}.json").write_text(__import__("json").dumps(records[0]))


def test_records_accept_dataclasses_and_dicts():
    from dataclasses import dataclass, field

    @dataclass
    class Record:
        student: str
        lesson: str
        status: str
        score: float
        max_score: float
        tests: list = field(default_factory=list)
        reason: str = ""

    data = recs.as_dict(Record("a", LESSON, "ok", 1.0, 2.0, [{"grade_id": "x", "passed": True}]))
    assert data["student"] == "a" and data["tests"][0]["grade_id"] == "x"
    assert recs.as_dict({"student": "b", "lesson": LESSON})["status"] == "ok"
