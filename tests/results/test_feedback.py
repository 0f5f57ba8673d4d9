"""Feedback is nbgrader's own page of the gradebook (manual grades and comments included), with the
trusted grader's messages, no hidden test, math as MathML and nothing loaded from the network."""

from __future__ import annotations

import html
import re

import markupsafe
import nbformat
import pytest

from autograder import collect, coursedir, sample_class
from autograder.results import feedback
from autograder import lessontext
from autograder.results.feedback_steps import TestRows, checks_of, exercise_of, to_mathml
from workflow_fakes import LESSON, fake_grade, make_course


# --- the list that heads the page (issue 53) ----------------------------------------------------------

def test_each_test_row_names_its_exercise_and_what_it_checks_lost_points_first():
    cell = nbformat.v4.new_code_cell
    graded = lambda grade_id, score, points, source: cell(source, metadata={"nbgrader": {  # noqa: E731
        "grade": True, "solution": False, "grade_id": grade_id, "score": score, "points": points}})
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("### Exercise 2.1 — the forward pass with loops (9 points)\nWrite it."),
        graded("forward_tests", 3.0, 3, "# The lecture's worked example: a 4×4 input\ncheck_array(...)"),
        graded("forward_errors", 0.0, 2, "check_raises(ValueError, ['x'], f, 1)"),
        nbformat.v4.new_markdown_cell("## 7. Knowledge check (10 points)"),
        graded("kc_q2", None, 1, 'feedback = check_answered(q2, "q2", "true/false", "section 4")'),
        graded("kc_q3", 0.0, 1, 'feedback = check_answered(q3, "q3", ["a", "b"], "section 2")')])
    _, resources = TestRows().preprocess(nb, {})
    rows = [(r["grade_id"], r["exercise"], r["checks"], r["score"]) for r in resources["test_rows"]]
    assert rows == [("forward_errors", "Exercise 2.1 — the forward pass with loops", "forward errors", 0.0),
                    ("kc_q2", "7. Knowledge check", "your answer q2", None),  # not read yet: not a full score
                    ("kc_q3", "7. Knowledge check", "your answer q3", 0.0),
                    ("forward_tests", "Exercise 2.1 — the forward pass with loops",
                     "The lecture's worked example: a 4×4 input", 3.0)]
    assert exercise_of("Some text, no heading") is None and exercise_of("### `output_size` (8 points)") == "output_size"
    assert checks_of("### BEGIN HIDDEN TESTS\nx", "kc_q1") == "kc q1", "a marker is not a description"
    assert checks_of("# count_include_pad=False, kernel 3:\n# input (0, 0) ...\nx = 1", "c") == \
        "count_include_pad=False, kernel 3 …", "a comment that goes on is cut where its first line ends"


# --- math that renders offline ------------------------------------------------------------------------

def test_tex_becomes_mathml_and_code_keeps_its_dollars():
    text = to_mathml("The rule $H_{out} = \\lfloor (H + 2p - k)/s \\rfloor + 1$, and\n\n$$\\frac{1}{k^2}$$\n\n"
                     "`cost = $5` in code, and prices $5 and $6 in prose.")
    assert text.count("<math") == 2 and 'display="block"' in text and 'display="inline"' in text
    assert "<msub><mi>H</mi>" in text and "<mfrac>" in text
    assert "`cost = $5`" in text and "prices $5 and $6" in text  # not math: code, and money
    assert "$H_" not in text and "$$" not in text


def test_tex_that_cannot_be_read_stays_as_tex():
    assert to_mathml("broken $\\frac{1}{$ here") == "broken $\\frac{1}{$ here"


# --- redaction, on every lesson's real hidden lines -------------------------------------------------

@pytest.mark.parametrize("lesson", coursedir.lessons(coursedir.REPO))
def test_a_message_quoting_a_hidden_line_is_redacted_and_visible_lines_are_kept(lesson):
    hidden = lessontext.hidden_test_lines(coursedir.REPO, lesson)
    assert hidden, f"{lesson} has hidden tests"
    release = coursedir.notebook(coursedir.REPO, "release", lesson)
    visible = sorted({line.strip() for cell in nbformat.read(release, as_version=4).cells
                      if cell.cell_type == "code" for line in cell.source.splitlines()
                      if len(line.strip()) >= lessontext.MIN_LENGTH} - hidden)
    assert visible
    for line in sorted(hidden):
        message = f'Traceback:\n  File "<test>", line 4\n    {line}\nAssertionError: shape (2, 3) != (2, 2)'
        redacted = lessontext.redact(message, hidden)
        assert line not in redacted, f"{lesson}: hidden line {line!r} reached the message"
        assert redacted.splitlines()[2] == "    [hidden test line]"
        assert redacted.splitlines()[-1] == "AssertionError: shape (2, 3) != (2, 2)", "the student's own message stays"
    for line in visible:
        assert lessontext.redact(f"    {line}", hidden) == f"    {line}", f"{lesson}: visible line {line!r} was redacted"


# --- the page ------------------------------------------------------------------------------------------

def test_a_page_that_quotes_a_hidden_test_or_loads_from_the_network_is_refused():
    clean = "<html><head><script src=\"https://cdnjs.example/mathjax/2.7.7/latest.js\"> </script>" \
            "<script type=\"text/x-mathjax-config\">init()</script></head><body><math></math></body></html>"
    assert "mathjax" not in feedback.checked_page(clean, {"check_hidden(x, 3)"}, "alice").lower()
    with pytest.raises(coursedir.CourseError, match="would quote hidden tests"):
        feedback.checked_page(clean.replace("<math>", "check_hidden(x, 3)<math>"), {"check_hidden(x, 3)"}, "alice")
    with pytest.raises(coursedir.CourseError, match="from the network"):
        feedback.checked_page(clean.replace("<body>", "<body><img src=\"https://tracker.example/p.png\">"), set(), "a")


def test_a_page_that_quotes_a_hidden_line_in_character_references_is_refused():
    """Pages are the template's text as rendered (no second parse): a quote in a verdict is ``&#39;`` there."""
    line = "assert pool(x, 'avg') == 3"
    for written in (html.escape(line), markupsafe.escape(line), line.replace("'", "&#x27;")):
        with pytest.raises(coursedir.CourseError, match="would quote hidden tests"):
            feedback.checked_page(f"<pre>{written}</pre>", {line}, "alice")
    assert feedback.checked_page("<pre>assert pool(x, &#39;max&#39;) == 3</pre>", {line}, "alice")


@pytest.mark.parametrize("tag", ['<img src="https://t.example/p.png">', "<IMG SRC='//t.example/p.png'>",
                                 "<img alt=x src=//t.example/p.png>", '<img src="&#104;ttps://t.example/p">',
                                 '<script src=" \\\\t.example/a.js"></script>', '<img src="ht\ttps://t.example/p">',
                                 '<link rel="stylesheet" href="http://t.example/a.css">',
                                 '<iframe title="a > b" src="//t.example/"></iframe>'])
def test_every_way_of_writing_a_remote_address_is_refused(tag):
    with pytest.raises(coursedir.CourseError, match="from the network"):
        feedback.checked_page(f"<body><p>text</p>{tag}</body>", set(), "alice")


def test_what_loads_nothing_is_kept():
    """Links, local images, and tags that are only text (escaped, in a comment, in a script's code) load nothing."""
    page = ('<body><a href="https://docs.example/pool">docs</a><img src="data:image/png;base64,AAAA">'
            '<p>&lt;img src="//t.example/p.png"&gt;</p><!-- <img src="//t.example/p.png"> -->'
            '<script>var s = \'<img src="//t.example/p.png">\';</script><img title=\'x src="//t" \' src="p.png"></body>')
    assert feedback.checked_page(page, set(), "alice") == page


def test_every_image_gets_the_alt_text_nbconverts_second_parse_gave_it():
    """:func:`with_alt_text` gives the ``<img>`` tags ``HTMLExporter``'s BeautifulSoup pass gives an alt text, and
    no other: the same tree as that pass (BeautifulSoup reads both the same)."""
    from bs4 import BeautifulSoup

    from autograder.results.feedback_steps import NO_ALT, with_alt_text

    page = ('<p><img src="a.png"><IMG SRC=b.png/><img alt="" src="c.png"><img ALT=d src=d.png>'
            '<img title="alt=no > yes" src="e.png"><img title="1 > 0" alt="z"><img src=\'f.png\' data-x="alt"></p><!-- <img src="g.png"> -->'
            '<style>img{}</style><script>x = "<img src=h.png>";</script><imgx src="i.png">')
    theirs = BeautifulSoup(page, features="html.parser")
    for element in theirs.select("img:not([alt])"):
        element.attrs["alt"] = NO_ALT
    ours, given = with_alt_text(page)
    assert given == 4 and ours.count(NO_ALT) == 4
    assert str(BeautifulSoup(ours, features="html.parser")) == str(theirs)
    assert with_alt_text(ours) == (ours, 0)


def test_the_feedback_page_is_nbconverts_page_without_the_second_parse(caplog):
    """:class:`FeedbackPage` writes what ``HTMLExporter`` (which parses each page again with BeautifulSoup) writes,
    but for how BeautifulSoup writes it back (its quoting, spacing and character references): both read the same."""
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter
    from nbgrader.converters import GenerateFeedback

    from autograder.results.feedback_steps import NO_ALT, FeedbackPage

    class Reparsed(FeedbackPage):
        from_notebook_node = HTMLExporter.from_notebook_node

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Exercise 1\n<img src='local.png'> and ![a plot](plot.png) & 'quotes'"),
        nbformat.v4.new_markdown_cell("![drawn](attachment:d.png)", attachments={"d.png": {"image/png": png}}),
        nbformat.v4.new_code_cell("print('x < y')", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="AssertionError: 'avg' & \"max\"\n"),
            nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})])])
    resources = {"nbgrader": {"notebook": "lesson", "score": 1.0, "max_score": 2.0, "late_penalty": 0.0},
                 "test_rows": []}
    config = GenerateFeedback().config  # where nbgrader's template finds its CSS
    exporter = FeedbackPage(config=config)
    ours, _ = exporter.from_notebook_node(nb, dict(resources))
    theirs, _ = Reparsed(config=config).from_notebook_node(nb, dict(resources))
    assert ours != theirs and ours.count(NO_ALT) == 2, "one output image and one written in markdown"
    assert str(BeautifulSoup(ours, features="html.parser")) == theirs
    assert "Alternative text is missing on 2 image(s)." in caplog.text
    assert f'src="data:image/png;base64,{png}"' in ours, "an attachment is the cell's own"
    highlighted, rendered = exporter._highlighted.cache_info().misses, exporter._markdown.cache_info().misses
    assert rendered == 1, "the markdown with an attachment is rendered for its cell alone"
    nb.cells.append(nbformat.v4.new_code_cell("y = 2"))
    again, _ = exporter.from_notebook_node(nb, dict(resources))  # the next student's page: one cell is new
    assert exporter._highlighted.cache_info().misses == highlighted + 1, "a source highlighted once per process"
    assert exporter._markdown.cache_info().misses == rendered, "and the lesson's text rendered once"
    assert str(BeautifulSoup(again, features="html.parser")) == Reparsed(config=config).from_notebook_node(
        nb, dict(resources))[0]


# --- the processes that write it -------------------------------------------------------------------------

#: What a process reports: whether jsonschema's optional rfc3987_syntax (a second of Lark grammars) was imported,
#: and that nbformat still tells a valid notebook from one that is not.
IMPORTS_AND_VALIDATES = """import sys
{first}import nbformat
good = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
nbformat.validate(good)
bad = nbformat.from_dict(dict(good, cells=[{{"cell_type": "code", "source": 1}}]))
try:
    nbformat.validate(bad)
except nbformat.ValidationError:
    print(sys.modules.get("rfc3987_syntax") is not None, "refused")
"""


@pytest.mark.parametrize("first, imported", [("", True), ("import autograder\n", False)])
def test_the_courses_processes_skip_jsonschemas_slow_optional_import_and_still_validate(first, imported):
    """Any process that imports ``autograder`` before nbformat (see ``autograder/__init__.py``) leaves it out."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", IMPORTS_AND_VALIDATES.format(first=first)], capture_output=True,
                          text=True, cwd=coursedir.REPO)
    assert done.stdout.split() == [str(imported), "refused"], done.stderr


def test_the_nbgrader_commands_the_course_starts_skip_it_too(tmp_path):
    """``coursedir.run_nbgrader`` (feedback's nbgrader processes): nbgrader has imported nbformat when it reads
    ``nbgrader_config.py``, which here says whether that brought rfc3987_syntax along."""
    (tmp_path / "nbgrader_config.py").write_text(
        'import sys\nopen("seen.txt", "w").write(str(sys.modules.get("rfc3987_syntax") is not None))\n')
    done = coursedir.run_nbgrader(tmp_path, "db", "student", "list")
    assert done.returncode == 0 and "There are 0 students" in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "seen.txt").read_text() == "False"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A scratch course whose sample class (12 students, lesson 1) is collected and graded (stand-in)."""
    tmp = tmp_path_factory.mktemp("feedback")
    root = make_course(tmp)
    archive, manifest = sample_class.generate(tmp / "lms", root, students=12, seed=5)
    collect.collect(archive, root, [LESSON])
    records = [r.as_dict() for r in fake_grade(None, None, root=root)]
    _answer_q2_wrongly(root, [r["student"] for r in records if r["status"] == "ok"][-1])
    return root, manifest, records


#: The trusted grader's verdict of a wrong answer to lesson 1's q2 (a true/false question; the key is True).
WRONG_Q2 = {"message": "WrongValue: q2: expected True (bool) but got False (bool)",
            "withheld": "WrongValue: q2: got False (bool), not the expected value"}


def _answer_q2_wrongly(root, student) -> None:
    """``student``'s record and graded notebook as the trusted grader leaves them for a wrong q2."""
    from types import SimpleNamespace

    from autograder.grading.nbgrader_plugin import TrustedExecute
    from autograder.records import load_record, save_record

    record = load_record(root, LESSON, student)
    for test in record.tests:
        if test["grade_id"] == "kc_q2":
            test.update(passed=False, points=0.0, **WRONG_Q2)
    save_record(root, record)
    autograded = root / "autograded" / student / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(autograded, as_version=4)
    writer = TrustedExecute()
    writer.output_chars = 20000
    writer._write(nb, SimpleNamespace(tests=record.tests, cells=[], status="ok"),
                  lessontext.hidden_test_lines(root, LESSON))
    nbformat.write(nb, str(autograded))


def test_feedback_shows_the_verdicts_never_a_hidden_test_and_math_offline_in_parallel_as_one_by_one(graded):
    root, manifest, records = graded
    pages = feedback.write_feedback(root, jobs=3)  # three nbgrader processes, each leaving out the others' students
    assert len(pages) == len([r for r in records if r["status"] == "ok"])
    some = sorted({path.parent.parent.name for path in pages})[:3]
    parallel = {path: path.read_bytes() for student in some for path in (root / "feedback" / student).rglob("*.html")}
    assert feedback.write_feedback(root, students=some, jobs=1) == [p for p in pages if p.parent.parent.name in some]
    assert {path: path.read_bytes() for path in parallel} == parallel, "one process writes the same bytes"
    with pytest.raises(coursedir.CourseError, match=r"jobs must be an int >= 1 .*got 0"):
        feedback.write_feedback(root, jobs=0)
    hidden = lessontext.hidden_test_lines(root, LESSON)
    assert hidden, "lesson 1 has hidden tests"
    wrong = next(m.student for m in manifest if m.variant.startswith(("wrong", "partial")))
    page = (root / "feedback" / wrong / LESSON / f"{LESSON}.html").read_text()
    assert "[hidden test line]" in page, "a message quoting a hidden test line is redacted"
    planted = [r["student"] for r in records if r["status"] == "ok"][-1]
    page = (root / "feedback" / planted / LESSON / f"{LESSON}.html").read_text()
    assert "q2: got False (bool), not the expected value" in page and "expected True" not in page, "key withheld"
    assert re.search(r"Score: [\d.]+ / 25", page), "the gradebook's score heads the page"
    for student in (planted, wrong):  # the list heads each page: every graded cell named and linked, lost first
        page = (root / "feedback" / student / LESSON / f"{LESSON}.html").read_text()
        rows = re.findall(r'<tr class="(lost|full)">\s*<td>(.*?)</td><td>(.*?)</td>\s*<td><a href="#(\w+)">', page)
        assert len(rows) == 19 and "Test cell" not in page
        assert [r[0] for r in rows] == sorted((r[0] for r in rows), key="lost full".split().index)
        assert all(f'name="{r[3]}"' in page for r in rows), "each row links to its cell"
        assert any(r[1:] == ("7. Knowledge check", "your answer q1", "kc_q1") for r in rows)
    assert rows[0][0] == "lost", f"{wrong} lost points"
    assert "<math" in page and "$$" not in page
    for path in pages:
        text = path.read_text()
        assert not [line for line in hidden if line in html.unescape(text)]
        assert feedback.remote_load(text) is None, "nothing is loaded from the network"
    index = (root / "feedback" / wrong / "index.html").read_text()
    links = re.findall(r'<a href="([^"]+)">', index)
    assert links == [f"{LESSON}/{LESSON}.html"] and (root / "feedback" / wrong / links[0]).is_file()
    assert f"<h1>Feedback for {markupsafe.escape(wrong)}</h1>" in index


def test_feedback_shows_manual_grades_and_comments_from_the_gradebook(graded):
    """Given through nbgrader's API (as formgrader does), kept by feedback: the page says what the
    gradebook says, not what the automatic grading said."""
    root, _, records = graded
    student = next(r["student"] for r in records if r["status"] == "ok")
    with coursedir.open_gradebook(root) as gb:
        grade = gb.find_grade("kc_q1", LESSON, LESSON, student)
        grade.manual_score = 0.25
        comment = gb.find_comment("knowledge_check", LESSON, LESSON, student)
        comment.manual_comment = "Good reasoning, but see section 3 on floor mode."
        gb.db.commit()
        total = gb.find_submission(LESSON, student).score
    feedback.write_feedback(root, students=[student])
    page = (root / "feedback" / student / LESSON / f"{LESSON}.html").read_text()
    assert "Good reasoning, but see section 3 on floor mode." in page
    assert f"Score: {round(total, 2)} / 25" in page
    assert re.search(r'name="kc_q1".*?Score: 0\.25 / ', page, flags=re.S), "the manual grade of kc_q1"


def test_feedback_shows_expected_answers_once_the_instructor_releases_them(graded):
    """A wrong knowledge-check answer, whose key the page withholds by default (see above): with
    ``c.ExpectedAnswers.reveal = True`` in nbgrader_config.py the same command, without regrading, shows the
    key from the record."""
    root, _, records = graded
    student = [r["student"] for r in records if r["status"] == "ok"][-1]
    autograded = root / "autograded" / student / LESSON / f"{LESSON}.ipynb"
    graded_notebook = autograded.read_bytes()
    config = root / "nbgrader_config.py"
    original = config.read_text()
    assert "\nc.ExpectedAnswers.reveal = False\n" in original, "the setting is in nbgrader_config.py, off"
    try:
        config.write_text(original + "\nc.ExpectedAnswers.reveal = True\n")
        feedback.write_feedback(root, students=[student])
    finally:
        config.write_text(original)
    page = (root / "feedback" / student / LESSON / f"{LESSON}.html").read_text()
    assert "q2: expected True (bool) but got False (bool)" in page and "not the expected value" not in page
    assert autograded.read_bytes() == graded_notebook, "released from the record: the graded notebook is unchanged"


def test_parallel_runs_split_the_students_and_each_leaves_out_the_others():
    runs = feedback._runs(["ann", "bob", "cy", "dee", "eve"], ["ann", "bob", "cy", "dee"], 2)
    assert runs == [["--CourseDirectory.student_id_exclude=bob,dee,eve"],
                    ["--CourseDirectory.student_id_exclude=ann,cy,eve"]]
    assert feedback._runs(["ann"], ["ann"], 4) == [["--CourseDirectory.student_id_exclude="]]
    # an id with a comma cannot be left out by nbgrader's comma-separated list: one run per student
    assert feedback._runs(["ann", "lee,kim"], ["ann", "lee,kim"], 2) == [["--student=ann"], ["--student=lee,kim"]]
    # a class of thousands: a list of the others would pass Linux's 128 KiB an argument; one run for all
    many = [f"student{i:05d}" for i in range(20000)]
    assert feedback._runs(many, many, 2) == [[]]
    assert feedback._runs(many, many[:2], 2) == [["--student=student00000"], ["--student=student00001"]]


def test_one_run_per_job_writes_every_lesson_unless_a_folder_on_disk_is_not_to_be_written(tmp_path):
    """nbgrader starts once per job for all lessons (assignment ``*``) where that writes exactly the pages asked
    for; where it would also write another folder of those students (a lesson or a submission left out), the
    runs are per lesson again, each leaving out the others."""
    for student, lesson in [("ann", "l1"), ("ann", "l2"), ("bob", "l1"), ("cy", "l2")]:
        (tmp_path / "autograded" / student / lesson).mkdir(parents=True)
    every = {("ann", "l1"), ("ann", "l2"), ("bob", "l1"), ("cy", "l2")}
    assert feedback._plan(tmp_path, every, 2) == [("*", ["--CourseDirectory.student_id_exclude=bob"]),
                                                  ("*", ["--CourseDirectory.student_id_exclude=ann,cy"])]
    assert feedback._plan(tmp_path, {("bob", "l1"), ("cy", "l2")}, 1) == [
        ("*", ["--CourseDirectory.student_id_exclude=ann"])], "students left out: still one run"
    assert feedback._plan(tmp_path, {("ann", "l1"), ("bob", "l1")}, 1) == [
        ("l1", ["--CourseDirectory.student_id_exclude="])], "ann's l2 is not asked for: per lesson"
    assert feedback._plan(tmp_path, every - {("ann", "l2")}, 1) == [
        ("l1", ["--CourseDirectory.student_id_exclude="]), ("l2", ["--CourseDirectory.student_id_exclude=ann"])]


def test_feedback_reads_output_chars_as_the_graders_policy_does(tmp_path):
    """Revealed expected values are cut where the grader cuts its outputs: ``autograder.outputs.output_chars``
    (what ``feedback`` reads, issue 44) agrees with the grader's policy, set or not, and refuses what it refuses."""
    from traitlets.config import Config

    from autograder.grading.policy import load_policy
    from autograder.outputs import output_chars

    for config in (Config(), Config({"SandboxPolicy": {"output_chars": 123}})):
        assert output_chars(config) == load_policy(tmp_path, config).limits().output_chars
    for wrong in (0, -5):
        with pytest.raises(ValueError, match="SandboxPolicy.output_chars must be positive"):
            output_chars(Config({"SandboxPolicy": {"output_chars": wrong}}))
        with pytest.raises(ValueError, match="SandboxPolicy.output_chars must be positive"):
            load_policy(tmp_path, Config({"SandboxPolicy": {"output_chars": wrong}})).limits()


def test_feedback_adds_both_course_rows_before_its_parallel_runs_start(graded, monkeypatch):
    """The race behind "UNIQUE constraint failed: course.id" (stops 48 and 49, test_feedback's jobs=3 run): nbgrader's
    GetGrades opens the gradebook as "default_course", whatever the course's id, and adds that row where it is
    missing, so runs starting together both added it. The trusted grader's gradebook holds the course's own row only
    (made so here); write_feedback adds both before the first nbgrader run starts."""
    import sqlite3

    root, _, _ = graded
    with sqlite3.connect(coursedir.gradebook_path(root)) as db:
        db.execute("DELETE FROM course WHERE id = 'default_course'")
        assert {row[0] for row in db.execute("SELECT id FROM course")} == {coursedir.course_id(root)}

    class FirstRun(Exception):
        pass

    seen = []

    def first_run(course_root, *args, **kwargs):
        with sqlite3.connect(coursedir.gradebook_path(course_root)) as db:
            seen.append({row[0] for row in db.execute("SELECT id FROM course")})
        raise FirstRun

    monkeypatch.setattr(coursedir, "run_nbgrader", first_run)
    with pytest.raises(FirstRun):
        feedback.write_feedback(root, jobs=3)
    assert seen and all(rows == {coursedir.course_id(root), "default_course"} for rows in seen), seen
