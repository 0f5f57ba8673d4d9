"""Every instructor command: its normal path and each mistake it must catch with a clear error.

Commands run in-process (``cli.main``) on a scratch copy of the course, graded by the fast stand-in
grader (``workflow_fakes.fake_grade``); the real grader is exercised in test_cli_integration.py.
"""

from __future__ import annotations

import csv
import functools
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import cli, coursedir
from autograder.results import export
from autograder.records import load_records
from workflow_fakes import LESSON, REPO, fake_grade, make_course

COMMANDS = ("release", "collect", "grade", "feedback", "export", "report", "bundle", "sample-class", "course")


@pytest.fixture
def course(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "main", functools.partial(cli.main, grader=fake_grade))
    return make_course(tmp_path)


def run(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def lms_folder(tmp_path, broken: bool = False):
    """Two students' notebooks as an LMS names them (and a cut-short one when ``broken``)."""
    folder = tmp_path / "lms"
    folder.mkdir(exist_ok=True)
    text = (REPO / "source" / LESSON / f"{LESSON}.ipynb").read_text()
    release = (REPO / "release" / LESSON / f"{LESSON}.ipynb").read_text()
    nb = nbformat.reads(text, as_version=4)
    from autograder.sample_class import fill
    from autograder.solutions import solution_cells
    solved = fill(nbformat.reads(release, as_version=4), solution_cells(REPO / "source" / LESSON / f"{LESSON}.ipynb"))
    (folder / f"alice_1234_{LESSON}.ipynb").write_text(nbformat.writes(solved))
    (folder / f"Bob Smith - {LESSON}.ipynb").write_text(release)
    if broken:
        (folder / f"carol_{LESSON}.ipynb").write_text(text[:100])
    assert nb.cells
    return folder


_FOREIGN = {}


def foreign_gradebook(root):
    """A gradebook.db of another course (course id stats-101, assignment ps1) at ``root`` (made once)."""
    if "db" not in _FOREIGN:
        import tempfile

        from nbgrader.api import Gradebook

        folder = tempfile.mkdtemp(prefix="foreign-gradebook-")
        (root / "gradebook.db").unlink(missing_ok=True)
        coursedir.open_gradebook(root).close()  # puts alembic on PATH (nbgrader calls it by name)
        (root / "gradebook.db").unlink()
        with Gradebook(f"sqlite:///{folder}/gradebook.db", course_id="stats-101") as gb:
            gb.add_assignment("ps1")
        _FOREIGN["db"] = (Path(folder) / "gradebook.db").read_bytes()
    (root / "gradebook.db").write_bytes(_FOREIGN["db"])


# --- help -------------------------------------------------------------------------------------------

def test_help_explains_every_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for command in COMMANDS:
        assert command in text
    assert "A typical week" in text
    for command in COMMANDS:
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        text = capsys.readouterr().out
        assert "examples:" in text and "--root" in text, command


def test_console_script_and_module_run():
    script = os.path.join(os.path.dirname(sys.executable), "avgpool-course")
    for command in ([script, "--help"], [sys.executable, "-m", "autograder", "grade", "--help"]):
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and "usage:" in result.stdout, result.stderr


# --- release ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_release_builds_and_validates_one_lesson(course, capfd):
    """capfd: what the kernels nbgrader validate starts print (to the terminal) is seen too."""
    (course / "release" / LESSON / f"{LESSON}.ipynb").unlink()
    status, out, err = run(capfd, "release", LESSON, "--root", course)
    assert status == 0, out
    assert "WARNING" not in out + err and "Warning" not in out + err, "the main job's release step is quiet"
    assert (course / "release" / LESSON / f"{LESSON}.ipynb").is_file()
    assert f"{LESSON}" in out and "True" in out


# --- collect ----------------------------------------------------------------------------------------

def test_collect_normal_path(course, tmp_path, capsys):
    status, out, _ = run(capsys, "collect", lms_folder(tmp_path), "--root", course, "--due", "2025-03-03 23:59", "-v")
    assert status == 0, out
    assert "collected 2 notebooks from 2 students" in out
    assert (course / "submitted" / "alice" / LESSON / f"{LESSON}.ipynb").is_file()
    assert (course / "submitted" / "bob_smith" / LESSON / f"{LESSON}.ipynb").is_file()
    with coursedir.open_gradebook(course) as gb:
        assert str(gb.find_assignment(LESSON).duedate).startswith("2025-03-03 23:59")


def test_collect_reports_a_file_that_is_not_a_notebook(course, tmp_path, capsys):
    status, out, _ = run(capsys, "collect", lms_folder(tmp_path, broken=True), "--root", course)
    assert status == 1
    assert f"carol_{LESSON}.ipynb: not a Jupyter notebook" in out and "submit it again" in out
    assert (course / "submitted" / "alice").is_dir(), "the good files are placed anyway"


def test_collect_empty_folder(course, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    status, _, err = run(capsys, "collect", tmp_path / "empty", "--root", course)
    assert status == 2 and "holds no files" in err and "Download" in err


def test_collect_refuses_another_course_gradebook(course, tmp_path, capsys):
    foreign_gradebook(course)
    status, _, err = run(capsys, "collect", lms_folder(tmp_path), "--root", course)
    assert status == 2 and "belongs to another course" in err and "stats-101" in err and "mv " in err
    assert not (course / "submitted").exists()


# --- grade ------------------------------------------------------------------------------------------

def collected(course, tmp_path, capsys, broken=False):
    run(capsys, "collect", lms_folder(tmp_path, broken), "--root", course)
    return course


def test_grade_normal_path(course, tmp_path, capsys):
    collected(course, tmp_path, capsys)
    status, out, _ = run(capsys, "grade", "--root", course, "--jobs", "2", "--lesson", LESSON)
    assert status == 0 and "graded 2 submissions" in out and "ok 2" in out
    grades = export.read_grades(course)
    assert grades.score == {("alice", LESSON): 25.0, ("bob_smith", LESSON): 0.0}


def test_grade_seed_reproduces_a_run_and_the_summary_names_it(course, tmp_path, capsys):
    collected(course, tmp_path, capsys)
    status, out, _ = run(capsys, "grade", "--root", course, "--seed", "4242", "--lesson", LESSON)
    assert status == 0 and "run seed 4242 (--seed reproduces it)" in out
    assert {r.seed for r in load_records(course)} == {4242}
    status, out, _ = run(capsys, "grade", "--root", course, "--lesson", LESSON)
    assert status == 0 and "run seed" not in out, "without --seed the grader picks the seed (the fake: none)"


def test_grade_empty_submissions_folder(course, capsys):
    (course / "submitted").mkdir()
    status, _, err = run(capsys, "grade", "--root", course)
    assert status == 2 and "no submissions" in err and "avgpool-course collect" in err


def test_grade_unknown_student(course, tmp_path, capsys):
    collected(course, tmp_path, capsys)
    status, _, err = run(capsys, "grade", "--root", course, "--student", "zed")
    assert status == 2 and "no submissions from student 'zed'" in err and "alice" in err


def test_grade_a_submitted_file_that_is_not_a_notebook(course, tmp_path, capsys):
    collected(course, tmp_path, capsys)
    broken = course / "submitted" / "dave" / LESSON / f"{LESSON}.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text("<html>exported page</html>")
    status, out, _ = run(capsys, "grade", "--root", course)
    assert status == 0, "one bad notebook never stops the batch"
    assert "dave/lesson1_by_hand: invalid submission" in out and "graded 3 submissions" in out


def test_grade_refuses_another_course_gradebook(course, tmp_path, capsys):
    collected(course, tmp_path, capsys)
    foreign_gradebook(course)
    status, _, err = run(capsys, "grade", "--root", course)
    assert status == 2 and "belongs to another course" in err and "'ps1'" in err


# --- feedback, export, report -----------------------------------------------------------------------

@pytest.fixture
def graded(course, tmp_path, capsys):
    collected(course, tmp_path, capsys)
    assert run(capsys, "grade", "--root", course)[0] == 0
    return course


def test_feedback_export_report_normal_path(graded, capsys):
    status, out, _ = run(capsys, "feedback", "--root", graded)
    assert status == 0 and "wrote 2 feedback pages for 2 students" in out
    assert (graded / "feedback" / "alice" / LESSON / f"{LESSON}.html").is_file()
    status, out, _ = run(capsys, "export", "--root", graded)
    assert status == 0
    rows = list(csv.DictReader((graded / "reports" / "grades.csv").open()))
    assert [(r["student"], r[LESSON]) for r in rows] == [("alice", "25"), ("bob_smith", "0")]
    status, out, _ = run(capsys, "report", "--root", graded, "--out", graded / "week1.html")
    assert status == 0 and (graded / "week1.html").read_text().count("data:image/png;base64,") == 4
    assert "items.csv" in out and (graded / "items.csv").is_file(), "the item analysis beside the page"


@pytest.mark.parametrize("command", ["grade", "feedback", "course"])
def test_jobs_below_1_ends_in_one_sentence_before_any_work(course, command, capsys):
    status, out, err = run(capsys, command, "--root", course, "--jobs", "0")
    assert status == 2 and err == "error: --jobs must be >= 1, got 0\n" and not out


@pytest.mark.parametrize("command", ["feedback", "export", "report"])
def test_before_grading_says_grade_first(course, command, capsys):
    status, _, err = run(capsys, command, "--root", course)
    assert status == 2 and "grade" in err and "avgpool-course grade" in err


@pytest.mark.parametrize("command", ["feedback", "export", "report"])
def test_another_course_gradebook(course, command, capsys):
    foreign_gradebook(course)
    status, _, err = run(capsys, command, "--root", course)
    assert status == 2 and "belongs to another course" in err


# --- sample class and the main job ------------------------------------------------------------------

def test_sample_class_command(course, tmp_path, capsys):
    status, out, _ = run(capsys, "sample-class", tmp_path / "class", "--root", course, "--students", "5")
    assert status == 0 and (tmp_path / "class" / "lms_export.zip").is_file()
    assert (tmp_path / "class" / "manifest.json").is_file()


def test_main_job_table_agrees_with_csv_and_gradebook(course, tmp_path, capsys):
    status, out, _ = run(capsys, "course", "--root", course, "--skip-release", "--students", "20",
                         "--out", tmp_path / "demo", "--run-seed", "4242")
    assert status == 0, out
    demo = tmp_path / "demo"
    assert {r.seed for r in load_records(demo)} == {4242}, "--run-seed reaches the grader (the fake keeps it)"
    table_text = out.split("(- not handed in")[0].split("\n\n")[-1]
    printed = export.parse_table(table_text)
    rows = list(csv.DictReader((demo / "reports" / "grades.csv").open()))
    from_csv = {}
    for row in rows:
        if row[LESSON]:
            from_csv[(row["student"], "lesson1")] = float(row[LESSON])
        from_csv[(row["student"], "total")] = float(row["total"])
    assert printed == from_csv
    from nbgrader.api import MissingEntry
    with coursedir.open_gradebook(demo) as gb:
        from_db = {}
        for student in gb.students:
            try:
                score = gb.find_submission(LESSON, student.id).score
            except MissingEntry:
                continue
            from_db[(student.id, "lesson1")] = score
            from_db[(student.id, "total")] = score
    assert printed == from_db
    assert len(rows) >= 15 and "report:" in out and (demo / "reports" / "report.html").is_file()
    from autograder.results import items, report
    lines = items.summary_lines(report.items(demo))
    assert len(lines) == 1 and lines[0].startswith(f"{LESSON}: hardest ") and f"\n  {lines[0]}; top copy pair " in out
    assert f"copying:  {demo / 'reports' / 'copying.html'}" in out and (demo / "reports" / "copying.html").is_file()
    assert f"{demo / 'reports' / 'report.html'}#items" in out and str(demo / "reports" / "items.csv") in out
    assert not (course / "gradebook.db").exists(), "the instructor's own gradebook is never touched"


# --- every instructor mistake, every command: one sentence, exit 2 ------------------------------------

TAKES_A_LESSON = {"release": ["lesson9_magic"], "collect": ["LMS", "--lesson", "lesson9_magic"],
                  "grade": ["--lesson", "lesson9_magic"], "feedback": ["--lesson", "lesson9_magic"],
                  "export": ["--lesson", "lesson9_magic"], "report": ["--lesson", "lesson9_magic"]}
READS_THE_GRADEBOOK = {"collect": ["LMS"], "grade": [], "feedback": [], "export": [], "report": []}
NEEDS_A_COURSE = {"release": [], "collect": ["LMS"], "grade": [], "feedback": [], "export": [], "report": [],
                  "bundle": [], "sample-class": ["CLASS"], "course": ["--out", "DEMO"]}
MISTAKES = ([("unknown lesson", c, a) for c, a in TAKES_A_LESSON.items()]
            + [("not a course folder", c, a) for c, a in NEEDS_A_COURSE.items()]
            + [("gradebook not a database", c, a) for c, a in READS_THE_GRADEBOOK.items()]
            + [("missing LMS export", "collect", ["MISSING.zip"])]
            + [("broken nbgrader_config.py", c, a) for c, a in NEEDS_A_COURSE.items()])
SAYS = {"unknown lesson": ("unknown lesson", "lesson9_magic", LESSON),
        "not a course folder": ("is not a course directory", "pass --root"),
        "gradebook not a database": ("is not an nbgrader gradebook", "mv "),
        "missing LMS export": ("MISSING.zip does not exist", "pass the LMS export"),
        "broken nbgrader_config.py": ("nbgrader_config.py does not load", "NameError", "fix the file")}


def test_every_command_has_its_mistakes_tested():
    commands = {command for _, command, _ in MISTAKES}
    assert commands == set(COMMANDS)
    assert set(TAKES_A_LESSON) | set(READS_THE_GRADEBOOK) <= set(NEEDS_A_COURSE) == set(COMMANDS)


@pytest.mark.parametrize("mistake, command, args", MISTAKES, ids=lambda v: v if isinstance(v, str) else "")
def test_a_mistake_ends_in_one_sentence_and_exit_2(course, tmp_path, capsys, mistake, command, args):
    folders = {"LMS": lms_folder(tmp_path), "CLASS": tmp_path / "class", "DEMO": tmp_path / "demo",
               "MISSING.zip": tmp_path / "MISSING.zip"}
    root = course
    if mistake == "not a course folder":
        root = tmp_path / "empty"
        root.mkdir()
    if mistake == "gradebook not a database":
        (course / "gradebook.db").write_text("these are my notes, not a database\n" * 50)
    if mistake == "broken nbgrader_config.py":
        config = course / "nbgrader_config.py"
        config.write_text(config.read_text() + "\nc.Exchange.root = exchange_folder  # a name never defined\n")
    before = sorted(p.relative_to(course) for p in course.rglob("*"))
    status, out, err = run(capsys, command, *[folders.get(a, a) for a in args], "--root", root)
    assert status == 2, out
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for phrase in SAYS[mistake]:
        assert phrase in err, (phrase, err)
    assert sorted(p.relative_to(course) for p in course.rglob("*")) == before, "nothing is half-written"
