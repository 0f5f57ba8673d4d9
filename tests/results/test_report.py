"""export and report on a small class graded by the fast stand-in grader (feedback: test_feedback.py)."""

from __future__ import annotations

import base64
import csv
import html
import json
import re
import shutil
from html.parser import HTMLParser

import pytest

from autograder import collect, sample_class
from autograder.results import export, items, report
from autograder.records import Record, load_records, record_dicts, save_record
from course.checks import check_avoids
from workflow_fakes import LESSON, fake_grade, make_course


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A scratch course whose sample class (16 students, one lesson) is collected and graded."""
    tmp = tmp_path_factory.mktemp("graded")
    root = make_course(tmp)
    archive, manifest = sample_class.generate(tmp / "lms", root, students=16, seed=11)
    due = collect.parse_due([f"{k}={v}" for k, v in sample_class.due_dates(tmp / "lms").items()], [LESSON])
    collect.record_in_gradebook(root, due, collect.collect(archive, root, [LESSON], due=due))
    records = [r.as_dict() for r in fake_grade(None, None, root=root)]
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
    assert first == ["worked_example_tests", "worked_example_max_tests", "output_size_basic"], "notebook order"


def test_a_grader_error_is_never_exported_as_the_students_score(graded, tmp_path):
    """nbgrader leaves a row of zeros (or an earlier run's scores) for a notebook the trusted grader failed
    on; export, the table and the report show no score for it, while the other students keep theirs."""
    root = _course_copy(graded, tmp_path)
    records = graded[2]
    failed, kept = records[0], records[1]
    _write_records(root, [dict(failed, status="grader-error", reason="the sandbox would not start")])
    grades = export.read_grades(root)
    key = (failed["student"], LESSON)
    assert key not in grades.score and grades.withheld[key] == "the sandbox would not start"
    assert grades.total(failed["student"]) is None and not [c for c in grades.cells if c[0] == failed["student"]]
    assert grades.score[(kept["student"], LESSON)] == kept["score"]  # the other side: an ok record keeps its score
    per_student, per_cell = export.write_csv(grades, tmp_path / "out")
    rows = {row["student"]: row for row in csv.DictReader(per_student.open())}
    assert rows[failed["student"]][LESSON] == rows[failed["student"]]["total"] == ""
    assert float(rows[kept["student"]][LESSON]) == kept["score"]
    assert failed["student"] not in per_cell.read_text()
    line = next(l for l in export.table(grades).splitlines() if l.startswith(failed["student"] + " "))
    assert line.split()[1:] == ["error", "?"]
    assert (failed["student"], "total") not in export.parse_table(export.table(grades))
    table = next(t for t in _tables(report.build(root)) if "sortable" in t["class"])
    row = next(r for r in table["rows"] if r[0]["text"] == failed["student"])
    assert [c["text"] for c in row[1:]] == ["grader error", "?"], "the mark links to the reason"


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


def test_report_is_self_contained_and_shows_every_figure(graded):
    root, manifest, records = graded
    path = report.write_report(root)
    text = path.read_text()
    for heading in ("Needs a look", "Score distribution per lesson", "Pass rate per graded cell", "Slowest tests",
                    "Files collect could not place", "Grades"):
        assert heading in text, heading
    assert text.index("Needs a look") < text.index("Score distribution per lesson"), "near the top"
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", text)
    assert len(images) == 4
    assert all(base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n" for data in images)
    assert not re.search(r"""(?:src|href)\s*=\s*['"](?!data:|#)""", text), "no external resource"
    assert "http://" not in text and "https://" not in text and "<pre>" not in text
    assert "not a Jupyter notebook" in text, "collect's skipped files are listed"


def _course_copy(graded, tmp_path):
    """A copy of the graded course, so a test can change its records."""
    root = tmp_path / "copy"
    shutil.copytree(graded[0], root)
    return root


def _section(text: str, heading: str) -> str:
    """The HTML from ``<h2>heading`` up to the next ``<h2>``."""
    start = text.index(f"<h2>{heading}")
    return text[start:text.find("<h2>", start + 4)]


class _Tables(HTMLParser):
    """Every ``<table>`` of a page: its class and rows of (cell text, data-sort, hrefs)."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append({"class": attrs.get("class", ""), "head": [], "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell = {"tag": tag, "text": "", "sort": attrs.get("data-sort"), "href": []}
        elif tag == "a" and self._cell is not None:
            self._cell["href"].append(attrs.get("href"))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data


def _tables(text: str) -> list[dict]:
    parser = _Tables()
    parser.feed(text)
    return parser.tables


def test_cells_are_in_notebook_order_in_the_table_and_the_plots(graded):
    root, _, records = graded
    order = export.cell_order(root, LESSON)
    notebook = sorted({t["grade_id"] for t in records[0]["tests"]}, key=order.get)
    assert notebook != sorted(notebook) and notebook.index("kc_q2") < notebook.index("kc_q10"), \
        "the lesson's notebook order is not alphabetical, so this test can tell them apart"
    orders = report.cell_orders(root, [LESSON])
    rates = report.pass_rates(export.read_grades(root), orders)
    assert [cell for _, cell, *_ in rates] == notebook
    table = next(t for t in _tables(report.build(root)) if t["rows"][0][0]["text"] == "lesson"
                 and t["rows"][0][1]["text"] == "graded cell")
    assert [row[1]["text"] for row in table["rows"][1:]] == notebook
    labels = [t.get_text() for t in report.pass_rate_figure(rates).axes[0].get_yticklabels()]
    assert labels == [f"lesson1: {cell}" for cell in notebook]
    figure = report.slowest_figure(records, orders, count=6)
    shown = [t.get_text().split(": ")[1] for t in figure.axes[0].get_yticklabels()]
    slowest_six = sorted(notebook, key=len, reverse=True)[:6]  # the fake grader's seconds grow with the id
    assert sorted(shown) == sorted(slowest_six) and shown == sorted(shown, key=order.get) != slowest_six


def test_slowest_tests_break_ties_in_notebook_order(graded):
    root, _, records = graded
    order = export.cell_order(root, LESSON)
    tied = [dict(records[0], tests=[dict(t, seconds=1.0) for t in records[0]["tests"]])]
    cells = [cell for _, _, _, cell, _ in report.slowest(tied, report.cell_orders(root, [LESSON]), count=100)]
    assert cells == sorted(cells, key=order.get) != sorted(cells)


def _titles_and_labels(figure):
    """The drawn bounding boxes of a figure's titles (suptitle included) and axis labels."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    texts = [figure._suptitle] if figure._suptitle is not None else []
    for ax in figure.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_visible() and t.get_text()]


def test_no_title_overlaps_another_in_any_plot(graded):
    import matplotlib.pyplot as plt

    root, _, records = graded
    grades = export.read_grades(root)
    orders = report.cell_orders(root, grades.lessons)
    two = export.Grades(lessons=[LESSON, "lesson2_loops"], max_score={LESSON: 25.0, "lesson2_loops": 10.0},
                        students=grades.students, score={**grades.score, ("x", "lesson2_loops"): 5.0})
    figures = [report.score_distribution_figure(grades), report.score_distribution_figure(two),
               report.pass_rate_figure(report.pass_rates(grades, orders)), report.slowest_figure(records, orders),
               items.figure(report.items(root))]
    for figure in figures:
        boxes = _titles_and_labels(figure)
        assert boxes, "the figure has labelled axes"
        for i, (name, box) in enumerate(boxes):
            for other, other_box in boxes[i + 1:]:
                assert not box.overlaps(other_box), f"{name!r} overlaps {other!r}"
        assert figure._suptitle is None, "the report's <h2> is the figure's title"
        plt.close(figure)


def _write_records(root, records):
    for record in records:
        save_record(root, Record.from_dict(record))


def test_needs_a_look_lists_refused_cheating_crashed_and_grader_errors_but_not_ok_ones(graded, tmp_path):
    root = _course_copy(graded, tmp_path)
    records = graded[2]
    with pytest.raises(AssertionError) as refusal:
        check_avoids(_uses_torch, ["torch"], "output_size")
    caught = str(refusal.value)  # the real message of the grader's integrity check (proved forbidden)
    failed = [dict(t, passed=False, points=0.0, message=f"{t['grade_id']}: expected 4 but got 3")
              for t in records[0]["tests"]]
    cases = {
        "refused": dict(records[0], status="invalid submission", reason="the file is not UTF-8 text"),
        "cheating": dict(records[1], status="ok", reason="1 of 20 tests failed: output_size_basic", tests=[
            dict(t, passed=False, message=caught) if t["grade_id"] == "output_size_basic" else t
            for t in records[1]["tests"]]),
        "crashed": dict(records[2], status="crash", reason="solution cell output_size: crash: the child died"),
        "timeout": dict(records[3], status="timeout", reason="output_size_basic ran past its 10 s limit <b>"),
        "grader": dict(records[4], status="grader-error", reason="the sandbox would not start"),
        "honest": dict(records[5], status="ok", reason="20 of 20 tests failed", tests=failed),
    }
    _write_records(root, cases.values())
    text = report.build(root)
    section = _section(text, "Needs a look")
    assert "Needs a look (5)" in section
    for name in ("refused", "cheating", "crashed", "timeout", "grader"):
        assert f"<td>{cases[name]['student']}</td>" in section, name
    assert f"<td>{cases['honest']['student']}</td>" not in section, "an honest failure is not a case to look at"
    for kind in ("refused", "suspicious", "crashed", "timed out", "grader error"):
        assert f"<td>{kind}</td>" in section, kind
    assert "ran past its 10 s limit &lt;b&gt;" in section and "<b>" not in section, "reasons are escaped"
    assert "the sandbox would not start" in section
    assert html.escape("this exercise must not use") in section
    assert f"--student {cases['grader']['student']} --lesson {LESSON}" in section, "what to do"
    rows = _tables(section)[0]["rows"][1:]
    assert len(rows) == 5 and all(len(row) == 5 and all(c["text"] for c in row) for row in rows)
    grades = next(t for t in _tables(text) if "sortable" in t["class"])
    links = {href for row in grades["rows"] for c in row for href in c["href"]}
    assert len(links) == 5 and all(f"id='{href[1:]}'" in section for href in links), "marks link to the rows"


def test_needs_a_look_lists_each_short_answer_to_score_by_hand_with_its_question_and_answer(graded, tmp_path):
    """A test whose verdict is ``review`` (``course.checks.NeedsReview``) is listed on its own row:
    student, lesson, the question's cell and the answer (escaped), and what to do in formgrader; a
    suspicious record of the same student keeps its own row, and the grade table's mark links to it."""
    root = _course_copy(graded, tmp_path)
    records = graded[2]
    answers = {"kc_q1": "not the <b>mean</b>", "kc_q7": "fewer parameters, it does not reduce overfitting"}
    reviewed = dict(records[0], tests=[dict(t, passed=False, points=0.0, message="NeedsReview: ...",
                                            review=answers[t["grade_id"]]) if t["grade_id"] in answers else t
                                       for t in records[0]["tests"]])
    both = dict(records[1], tests=[dict(t, passed=False, message="this exercise must not use torch")
                                   if t["grade_id"] == "output_size_basic" else
                                   dict(t, passed=False, points=0.0, review="the max, not the mean")
                                   if t["grade_id"] == "kc_q1" else t for t in records[1]["tests"]])
    _write_records(root, [reviewed, both])
    looks = report.needs_a_look([reviewed, both, records[2]])
    assert [(l["student"], l["kind"], l["reason"].split(":")[0]) for l in looks] == [
        (reviewed["student"], "answer to read", "kc_q1"), (reviewed["student"], "answer to read", "kc_q7"),
        (both["student"], "suspicious", "output_size_basic"), (both["student"], "answer to read", "kc_q1")]
    assert looks[1]["reason"] == "kc_q7: 'fewer parameters, it does not reduce overfitting'"
    assert "formgrader" in looks[1]["todo"] and "kc_q7" in looks[1]["todo"] and LESSON in looks[1]["todo"]
    text = report.build(root)
    section = _section(text, "Needs a look")
    assert "Needs a look (4)" in section and "not the &lt;b&gt;mean&lt;/b&gt;" in section and "<b>" not in section
    rows = _tables(section)[0]["rows"][1:]
    assert [row[2]["text"] for row in rows] == ["answer to read", "answer to read", "suspicious", "answer to read"]
    grades = next(t for t in _tables(text) if "sortable" in t["class"])
    marks = {c["text"]: c["href"] for row in grades["rows"] for c in row if c["href"]}
    assert any("suspicious" in text for text in marks) and any("answer to read" in text for text in marks)
    assert all(f"id='{href[0][1:]}'" in section for href in marks.values()), "each mark links to its first row"


def test_the_pass_rate_table_counts_answers_to_read_apart_from_lost_points(graded, tmp_path):
    """Issue 53 item 5: a cell short of full marks that the gradebook flags "needs manual grade" (a review
    verdict waiting for the instructor) is "to read", not "lost"; once scored by hand in formgrader (which
    clears the flag) it counts as its score says: full marks, or lost."""
    from autograder import coursedir

    root = _course_copy(graded, tmp_path)
    grades = export.read_grades(root)
    full = [s for s, lesson, cell, score, top in grades.cells if cell == "kc_q1" and score >= top]
    short = [s for s, lesson, cell, score, top in grades.cells if cell == "kc_q1" and score < top]
    assert len(full) >= 2 and len(short) >= 1, "the class has both sides"

    def row():
        rates = report.pass_rates(export.read_grades(root), report.cell_orders(root, [LESSON]))
        return next(r[2:] for r in rates if r[1] == "kc_q1")

    def gradebook(student, **values):
        with coursedir.open_gradebook(root) as gb:
            grade = gb.find_grade("kc_q1", LESSON, LESSON, student)
            for name, value in values.items():
                setattr(grade, name, value)
            gb.db.commit()

    rate, n, lost, to_read = row()
    assert (round(rate * n), lost, to_read) == (len(full), len(short), 0)
    # as nbgrader autograde leaves a review verdict: 0 and "needs manual grade"
    gradebook(full[0], auto_score=0.0, needs_manual_grade=True)
    gradebook(short[0], needs_manual_grade=True)
    assert row() == (rate - 1 / n, n, len(short) - 1, 2), "two answers to read, neither counted lost"
    gradebook(full[1], needs_manual_grade=True)  # flagged but at full marks (scored by hand already): passed
    assert row() == (rate - 1 / n, n, len(short) - 1, 2)
    # the instructor scores both in formgrader (which clears the flag): one right, one wrong
    gradebook(full[0], manual_score=1.0, needs_manual_grade=False)
    gradebook(short[0], manual_score=0.0, needs_manual_grade=False)
    assert row() == (rate, n, len(short), 0)
    gradebook(short[0], needs_manual_grade=True, manual_score=None)
    table = next(t for t in _tables(report.build(root)) if t["rows"][0][0]["text"] == "lesson"
                 and t["rows"][0][1]["text"] == "graded cell")
    assert [c["text"] for c in table["rows"][0]] == ["lesson", "graded cell", "pass rate", "submissions", "lost",
                                                     "to read"]
    shown = next(r for r in table["rows"][1:] if r[1]["text"] == "kc_q1")
    assert [c["text"] for c in shown[2:]] == [f"{100 * rate:.0f}%", str(n), str(len(short) - 1), "1"]


def test_needs_a_look_says_so_when_empty(graded):
    root, _, records = graded
    assert all(r["status"] == "ok" for r in record_dicts(root))
    section = _section(report.build(root), "Needs a look")
    assert "Needs a look (0)" in section and "Nothing" in section and "<table" not in section


def test_integrity_phrases_match_the_graders_real_messages():
    from autograder.grading.verdicts import StudentObject

    from course.checks import NeedsReview

    messages = []
    for function, forbidden in ((_uses_torch, ["torch"]),):
        with pytest.raises(AssertionError) as caught:
            check_avoids(function, forbidden, "forward")
        messages.append(str(caught.value))
    refused = StudentObject.__new__(StudentObject)
    object.__setattr__(refused, "_label", "result")
    with pytest.raises(AssertionError) as caught:
        bool(refused)
    messages.append(str(caught.value))
    for message in messages:
        record = {"student": "s", "lesson": LESSON, "status": "ok", "reason": "",
                  "tests": [{"grade_id": "forward_avoids", "passed": False, "message": message}]}
        assert [l["kind"] for l in report.needs_a_look([record])] == ["suspicious"], message
        passed = dict(record, tests=[dict(record["tests"][0], passed=True)])
        assert report.needs_a_look([passed]) == []
    with pytest.raises(NeedsReview) as caught:  # unproved (issue 50): a cell to read, not a suspicion
        check_avoids(_uses_eval, [], "forward")
    record = {"student": "s", "lesson": LESSON, "status": "ok", "reason": "",
              "tests": [{"grade_id": "forward_avoids", "passed": False, "message": str(caught.value),
                         "review": caught.value.answer}]}
    (look,) = report.needs_a_look([record])
    assert look["kind"] == "answer to read" and "could neither prove allowed nor forbidden" in look["todo"]
    assert "`eval` runs or changes code by name (line " in look["reason"] and 'return eval("x")' in look["reason"]


def test_needs_a_look_lists_a_notebook_id_that_is_not_the_graded_identity():
    """Per-student variants: a record's note that the id cell named someone else is listed, with what to do;
    a record without one is not."""
    from autograder.variants import mismatch_note

    note = mismatch_note([{"metadata": {"tags": ["student-id"]}, "source": 'my_id = student_id("alice")'}], "dave",
                         "lesson1_by_hand")
    record = {"student": "dave", "lesson": "lesson1_by_hand", "status": "ok", "reason": "", "tests": [],
              "notes": ["ignored extra files: x.png", note]}
    (look,) = report.needs_a_look([record])
    assert look["kind"] == "another student's id" and "'alice'" in look["reason"] and "'dave'" in look["reason"]
    assert "avgpool-course variants --student dave" in look["todo"]
    assert report.needs_a_look([dict(record, notes=["ignored extra files: x.png"])]) == []


def test_grade_table_is_an_html_table_with_one_row_per_student(graded):
    root, _, _ = graded
    grades = export.read_grades(root)
    text = report.build(root)
    table = next(t for t in _tables(text) if "sortable" in t["class"])
    head, rows = table["rows"][0], table["rows"][1:]
    assert [c["text"] for c in head] == ["student", "lesson1 / 25", "total / 25"]
    assert [row[0]["text"] for row in rows] == sorted(grades.students), "one row per student, by name"
    for row in rows:
        student = row[0]["text"]
        score = grades.score.get((student, LESSON))
        assert row[1]["text"].startswith(export.fmt(score) if score is not None else "-")
        assert float(row[1]["sort"]) == (score if score is not None else -1)
        assert float(row[2]["sort"]) == grades.total(student)
        assert ("late" in row[1]["text"]) == bool(grades.late.get((student, LESSON))), student
    assert any(grades.late.values()), "the sample class has late submissions to mark"
    assert "<script>" in text and "table.sortable th" in text and "data-sort" in text


def _uses_eval(x):
    return eval("x")


def _uses_torch(x):
    import torch

    return torch.nn.functional.avg_pool2d(x, 2)


def test_records_read_back_are_what_was_saved_and_nothing_else_under_records(graded, tmp_path):
    root = _course_copy(graded, tmp_path)
    saved = {(r.lesson, r.student): r.as_dict() for r in load_records(root)}
    assert len(saved) == len(graded[2]) > 0
    assert {tuple(sorted(d)) for d in saved.values()} == {tuple(sorted(Record.__dataclass_fields__))}
    (root / "records" / "cache").mkdir(exist_ok=True)
    (root / "records" / "cache" / "0123.json").write_text(json.dumps({"tests": []}))  # the verdict cache
    (root / "records" / LESSON / "broken.json").write_text("{not json")
    (root / "records" / LESSON / "other.json").write_text(json.dumps({"student": "other", "lesson": LESSON}))
    assert {(d["lesson"], d["student"]): d for d in record_dicts(root)} == saved


# --- item analysis (autograder/results/items.py) ---------------------------------------------------

def _item_class():
    """A made-up lesson of 8 students and 4 cells whose figures are known: ``strong`` is got by the 4
    students with the best rest-of-lesson totals, ``inverse`` only by the 4 weakest (negative
    discrimination), ``everyone`` by all (no discrimination: nobody differs), ``half`` gives partial points."""
    students = [f"s{i}" for i in range(8)]
    base = {s: float(i) for i, s in enumerate(students)}  # the rest of the lesson: s7 strongest
    cells = []
    for s in students:
        cells += [(s, LESSON, "base", base[s], 10.0), (s, LESSON, "strong", 2.0 * (base[s] >= 4), 2.0),
                  (s, LESSON, "inverse", 1.0 * (base[s] < 4), 1.0), (s, LESSON, "everyone", 1.0, 1.0),
                  (s, LESSON, "half", 1.0 if base[s] < 4 else 2.0, 2.0)]
    grades = export.Grades(lessons=[LESSON], max_score={LESSON: 16.0}, students=students, cells=cells,
                           score={(s, LESSON): 1.0 for s in students})
    order = {"base": 0, "strong": 1, "inverse": 2, "everyone": 3, "half": 4}
    return grades, {LESSON: order}


def test_item_analysis_figures_are_the_gradebooks_statistics():
    import numpy as np

    grades, orders = _item_class()
    found = {i.cell: i for i in items.analyse(grades, [], orders)}
    assert list(found) == ["base", "strong", "inverse", "everyone", "half"], "notebook order"
    for cell, item in found.items():
        scores = {s: v for s, _, c, v, _ in grades.cells if c == cell}
        totals = {s: sum(v for t, _, _, v, _ in grades.cells if t == s) for s in scores}
        x = np.array([scores[s] for s in sorted(scores)])
        rest = np.array([totals[s] - scores[s] for s in sorted(scores)])
        assert item.n == item.discrimination_n == 8 and item.difficulty == pytest.approx(x.mean() / item.points)
        if x.std() and rest.std():
            assert item.discrimination == pytest.approx(np.corrcoef(x, rest)[0, 1])
    assert found["strong"].discrimination > 0.8 and found["inverse"].discrimination < -0.8
    assert found["everyone"].discrimination is None and found["everyone"].difficulty == 1.0
    assert (found["half"].full, found["half"].partial, found["half"].zero) == (0.5, 0.5, 0.0)
    assert (found["strong"].full, found["strong"].zero) == (0.5, 0.5)
    assert "negative discrimination" in found["inverse"].flags and found["strong"].flags == []
    assert found["everyone"].flags == ["nearly everyone passes"] and found["half"].flags == []
    nobody = export.Grades(lessons=[LESSON], max_score={LESSON: 1.0}, students=["a", "b"], score={},
                           cells=[("a", LESSON, "c", 0.0, 1.0), ("b", LESSON, "c", 0.0, 1.0)])
    assert items.analyse(nobody, [], {})[0].flags == ["nearly everyone fails"]
    hardest, flat = items.per_lesson(list(found.values()))[LESSON]
    assert (hardest.cell, flat.cell) == ("base", "inverse"), "base: 3.5 of 10 on average"
    assert items.summary_lines(list(found.values())) == [
        f"{LESSON}: hardest base (difficulty 0.35), least discriminating inverse "
        f"(r = {found['inverse'].discrimination:+.2f}, n = 8)"]


def test_failures_are_grouped_when_only_numbers_names_and_lines_differ():
    grades, orders = _item_class()

    def record(student, message, **test):
        return {"student": student, "lesson": LESSON, "status": "ok", "reason": "",
                "tests": [dict({"grade_id": "strong", "passed": False, "message": message}, **test)]}

    records = [
        record("s0", 'File "<cell>", line 4\nexpected shape (2, 3) but got (3, 2)'),
        record("s1", 'File "<cell>", line 9\nexpected shape (4, 4) but got (5, 5)'),
        record("s2", "NameError: name 'out_h' is not defined"),
        record("s3", "NameError: name 'height' is not defined"),
        record("s5", "expected dtype float32 but got float64"),  # another mistake: its own group
        record("s6", "NeedsReview: ...", review="the mean"),  # an answer to read: not a lost point
        record("s7", "expected shape (1, 1) but got (2, 2)", passed=True),  # passed: not a failure
    ]
    item = next(i for i in items.analyse(grades, records, orders) if i.cell == "strong")
    assert [(f.count, f.student) for f in item.failures] == [(2, "s0"), (2, "s2"), (1, "s5")], "ties by text"
    assert item.failures[0].pattern == 'File "<cell>", line # expected shape (#, …) but got (#, …)'
    assert item.failures[1].pattern == "NameError: name '…' is not defined"
    assert "float32" in item.failures[2].pattern and "float64" in item.failures[2].pattern
    assert (item.lost, item.review, item.grader_errors) == (5, 1, 0)
    assert "top failure is a grader error" not in item.flags
    broken = [dict(record(s, f"the sandbox would not start (exit {n})"), status="grader-error")
              for n, s in enumerate(("s4", "s5", "s6"))]
    item = next(i for i in items.analyse(grades, records[:2] + broken, orders) if i.cell == "strong")
    assert item.failures[0].grader_error and item.failures[0].count == 3 and item.grader_errors == 3
    assert "top failure is a grader error" in item.flags and item.lost == 2


def test_report_shows_the_item_analysis_and_writes_items_csv(graded, tmp_path):
    root = _course_copy(graded, tmp_path)
    path = report.write_report(root)
    section = _section(path.read_text(), "Item analysis per graded cell")
    assert section.count("data:image/png;base64,") == 1 and "<details>" in section
    rows = list(csv.DictReader((path.parent / "items.csv").open(encoding="utf-8")))
    analysed = report.items(root)
    assert [(r["lesson"], r["graded_cell"]) for r in rows] == [(i.lesson, i.cell) for i in analysed]
    assert [r["graded_cell"] for r in rows] == sorted({r["graded_cell"] for r in rows},
                                                      key=export.cell_order(root, LESSON).get)
    grades = export.read_grades(root)
    for row in rows:
        scores = [c[3] for c in grades.cells if c[2] == row["graded_cell"]]
        assert int(row["n"]) == len(scores) and float(row["difficulty"]) == pytest.approx(
            sum(scores) / len(scores) / float(row["points"]), abs=1e-3)
    table = next(t for t in _tables(section) if "items" in t["class"])
    assert [r[1]["text"] for r in table["rows"][1:]] == [r["graded_cell"] for r in rows]
    figure = items.figure(analysed)
    labels = [t.get_text() for t in figure.axes[0].texts]
    named = [name for label in labels for name in label.split(" +")[0].split(", ")]
    more = sum(int(label.split(" +")[1]) for label in labels if " +" in label)
    assert len(named) + more == len(analysed) and set(named) <= {i.cell for i in analysed}, \
        "every cell labelled (cells with the same figures share a point: 'a, b +3')"
    alike = [i for i in analysed if (round(i.difficulty, 2), i.discrimination) == (
        round(analysed[0].difficulty, 2), analysed[0].discrimination)]
    assert len(alike) > 1 and len(labels) < len(analysed), "the fake grader gives several cells the same figures"


# --- grades back into the LMS (autograder/results/lms.py) ------------------------------------------

def _roster(root, path, lms, extra=(), twice=None):
    """A roster as the LMS exports it, of the gradebook's students (Unicode names kept) plus ``extra``
    (``(first, last, student, lms id)``, no submission); ``twice``: a student given a second row and LMS id."""
    from autograder.collect.roster import known_students

    people = [(p.first_name, p.last_name, p.student, p.lms_id or str(20000 + i))
              for i, p in enumerate(known_students(root))] + list(extra)
    if twice:
        people += [(f, l, s, "99" + i) for f, l, s, i in people if s == twice]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        if lms == "canvas":  # Canvas's Grades > Export, with the lesson's assignment (id 4711)
            writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"{LESSON} (4711)"])
            writer.writerow(["    Points Possible", "", "", "", "", "25"])
            writer.writerows([f"{last}, {first}" if last else first, lms_id, "", student, "A", ""]
                             for first, last, student, lms_id in people)
        else:  # Moodle's participants export
            writer.writerow(["First name", "Last name", "ID number", "Email address"])
            writer.writerows([first, last, student, f"{lms_id}@uni.example"] for first, last, student, lms_id in people)
    return path


def test_canvas_import_file_reads_back_with_the_gradebooks_final_scores(graded, tmp_path):
    """Canvas's gradebook CSV: its identity columns, the assignment's own column and points, one row per
    roster student (Unicode names as given), manual grades and late penalties in, empty where none handed in."""
    from autograder import coursedir
    from autograder.results import lms

    root = _course_copy(graded, tmp_path)
    records = graded[2]
    penalised, manual = records[0]["student"], records[1]["student"]
    with coursedir.open_gradebook(root) as gb:
        gb.find_submission_notebook(LESSON, LESSON, penalised).late_submission_penalty = 2.0
        gb.find_grade("kc_q1", LESSON, LESSON, manual).manual_score = 0.5
        gb.db.commit()
    grades = export.read_grades(root)
    assert grades.score[(penalised, LESSON)] == max(0.0, records[0]["score"] - 2.0)
    roster = _roster(root, tmp_path / "canvas.csv", "canvas", extra=[("Åse", "Ødegaard", "ase_odegaard", "30000")])
    written = lms.write(root, "canvas", roster)
    assert written.path == root / "reports" / "canvas_grades.csv" and written.empty >= 1
    rows = list(csv.reader(written.path.open(encoding="utf-8")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"{LESSON} (4711)"]
    assert rows[1][0].strip() == "Points Possible" and rows[1][5] == "25"
    by_login = {row[3]: row for row in rows[2:]}
    for student in grades.students:
        assert float(by_login[student][5]) == grades.score[(student, LESSON)], student
    assert float(by_login[penalised][5]) == grades.score[(penalised, LESSON)], "the late penalty is off"
    auto = next(t["points"] for t in records[1]["tests"] if t["grade_id"] == "kc_q1")
    assert float(by_login[manual][5]) == records[1]["score"] - auto + 0.5, "the manual grade wins"
    assert by_login["ase_odegaard"][:2] == ["Ødegaard, Åse", "30000"] and by_login["ase_odegaard"][5] == "", \
        "no submission: Canvas's empty cell, never 0"
    names = {row[0] for row in rows[2:]}
    assert {"Núñez, José", "李明", "Иванов, Дмитрий"} <= names


def test_moodle_import_file_is_keyed_by_the_rosters_identifier(graded, tmp_path):
    from autograder.results import lms

    root = graded[0]
    roster = _roster(root, tmp_path / "moodle.csv", "moodle", extra=[("Åse", "Ødegaard", "ase_odegaard", "30000")])
    written = lms.write(root, "moodle", roster, tmp_path / "out" / "moodle.csv")
    rows = list(csv.DictReader((tmp_path / "out" / "moodle.csv").open(encoding="utf-8")))
    assert list(rows[0]) == ["First name", "Last name", "ID number", "Email address", LESSON]
    grades = export.read_grades(root)
    by_id = {row["ID number"]: row for row in rows}
    assert {s: float(by_id[s][LESSON]) for s in grades.students} == {s: grades.score[(s, LESSON)]
                                                                     for s in grades.students}
    assert by_id["ase_odegaard"][LESSON] == "" and by_id["jose_nunez"]["Last name"] == "Núñez"
    assert written.graded == len(grades.students) and written.empty == 1


def test_lms_export_refuses_a_student_the_roster_lacks_or_gives_two_lms_ids(graded, tmp_path):
    from autograder import cli
    from autograder.coursedir import CourseError
    from autograder.results import lms

    root = graded[0]
    full = _roster(root, tmp_path / "full.csv", "canvas")
    lines = full.read_text(encoding="utf-8").splitlines()
    missing = tmp_path / "missing.csv"
    missing.write_text("\n".join(l for l in lines if ",jose_nunez," not in l) + "\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    with pytest.raises(CourseError, match="no row for the graded student 'jose_nunez' \\(LMS id 4242\\)"):
        lms.write(root, "canvas", missing, out)
    twice = _roster(root, tmp_path / "twice.csv", "canvas", twice="jose_nunez")
    with pytest.raises(CourseError, match="'jose_nunez' is 2 roster rows with 2 LMS ids \\(4242, 994242\\)"):
        lms.write(root, "canvas", twice, out)
    with pytest.raises(CourseError, match="a Canvas grade import needs the gradebook export's columns"):
        lms.write(root, "canvas", _roster(root, tmp_path / "moodle.csv", "moodle"), out)
    assert not out.exists(), "nothing written on a refusal"
    assert lms.write(root, "canvas", full, out).path == out, "the other side: a roster with everyone"
    assert cli.main(["export", "--root", str(root), "--lms", "moodle"]) == 2, "--lms needs --roster"
    assert cli.main(["export", "--root", str(root), "--lms", "canvas", "--roster", str(full), "--out",
                     str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "canvas_grades.csv").read_text(encoding="utf-8") == out.read_text(encoding="utf-8")


def test_report_copying_writes_the_copying_page_beside_the_report(graded, tmp_path, capsys):
    from autograder import cli

    root = _course_copy(graded, tmp_path)
    assert cli.main(["report", "--root", str(root), "--copying"]) == 0
    out = capsys.readouterr().out
    page = root / "reports" / "copying.html"
    assert f"wrote {page}" in out and f"  {LESSON}: " in out and "pairs flagged" in out
    assert "never a grade" in page.read_text(encoding="utf-8")
    (root / "reports" / "copying.html").unlink()
    assert cli.main(["report", "--root", str(root)]) == 0 and not page.exists(), "only when asked"


# --- where grading time goes (Record.phases, issue 56) ----------------------------------------------

def test_the_report_shows_median_seconds_by_phase_per_lesson_from_the_records(graded, tmp_path):
    from autograder.records import PHASES

    root = _course_copy(graded, tmp_path)
    records = load_records(root)
    assert len(records) >= 4
    for index, record in enumerate(records):  # phase p of record i: i + p / 100 seconds; the last record is reused
        record.phases = {name: index + k / 100 for k, name in enumerate(PHASES)} if index < 3 else {}
        if index == 2:
            record.phases["reused"] = True
        save_record(root, record)
    rows = report.phase_medians(record_dicts(root), [LESSON])
    assert len(rows) == 1 and rows[0]["submissions"] == 3 and rows[0]["reused"] == 1, "records without phases: left out"
    assert rows[0]["median"] == {name: 1 + k / 100 for k, name in enumerate(PHASES)}  # the middle of 0, 1, 2
    page = report.build(root)
    section = page[page.index("id='phases'"):]
    assert section.index("<img") < section.index("<table")
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", section[:section.index("</table>")])
    assert cells[:3] == [LESSON, "3 (1 reused)", "1.000"] and cells[2 + PHASES.index("total_wall")] == "1.110"
    for record in records:  # no record with phases: the section says so instead of drawing nothing
        record.phases = {}
        save_record(root, record)
    assert "No record carries phases yet" in report.build(root)
