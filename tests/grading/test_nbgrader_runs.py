"""One grading run per nbgrader call (issue 56): every notebook of one ``nbgrader autograde`` (or formgrader's
autograde action: one ``Autograde.start()``) is graded in one run, so one warm template serves the lesson's
submissions, and the run closes when the call ends, whether it ends well, by an exception or by a stop (the stop:
tests/grading/test_stopping.py). Run in this process through nbgrader's API, as formgrader calls it."""

from __future__ import annotations

import shutil

import nbformat
import psutil
import pytest
from nbgrader.converters import Autograde

from autograder import coursedir
from autograder.grading import load_lesson
from autograder.grading.intake import sanitized_notebook
from autograder.grading.nbgrader_plugin import TrustedExecute, one_run_per_call
from autograder.grading.sandbox import resources, warm, warm_here
from autograder.records import RECORDS, load_record, read_json
from workflow_fakes import make_course

LESSON = "lesson1_by_hand"
STUDENTS = ["ann", "bob", "cy"]

needs_warm = pytest.mark.skipif(not warm_here(), reason="children are started cold here: no warm template to share")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course with the reference solution of lesson 1 handed in by each of :data:`STUDENTS` (each a little
    different, so each is graded), the lesson in the gradebook."""
    root = make_course(tmp_path_factory.mktemp("runs"))
    lesson = load_lesson(LESSON, root)
    for student in STUDENTS:
        folder = root / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        sources = lesson.reference_sources()
        first = next(iter(sources))
        sources[first] += f"\n# {student}'s own copy\n"  # its own verdict (none is reused from another's)
        nbformat.write(sanitized_notebook(lesson, sources), str(folder / lesson.notebook_name))
    coursedir.ensure_assignment(root, LESSON)
    return root


@pytest.fixture
def templates(monkeypatch):
    """Every warm template started while the test runs."""
    started = []

    class Counted(warm.Template):
        def __init__(self, *args, **kwargs):
            started.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(warm, "Template", Counted)
    return started


def autograde(root) -> dict:
    """``nbgrader autograde LESSON --force`` on every student, in this process (nbgrader's API), each verdict
    computed afresh (no record, cached verdict or graded notebook of an earlier call; a fresh seed)."""
    for earlier in (RECORDS, "autograded"):
        shutil.rmtree(root / earlier, ignore_errors=True)
    return coursedir.nbgrader_api(root, coursedir.course_config(root),
                                  lambda api: api.autograde(LESSON, "*", force=True, create=True))


def now() -> tuple[set[int], set]:
    """The processes this process started that are alive, and the open runs' resources."""
    alive = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return alive, set(resources._OPEN)


def ended(templates: list, before: tuple[set[int], set]) -> None:
    """Every template (and whatever it forked) ended, every run of the call closed, no process of it left
    (``before``: :func:`now` before the call)."""
    assert templates and all(t.proc.poll() is not None for t in templates), "a template outlived the call"
    alive, open_runs = now()
    assert open_runs <= before[1], "a run of the call was left open"
    assert alive <= before[0], f"processes of the call outlived it: {alive - before[0]}"


@needs_warm
def test_one_nbgrader_autograde_starts_one_template_and_leaves_nothing_running(course, templates):
    before = now()
    result = autograde(course)
    assert result["success"], result.get("error", "")[-3000:]
    assert len(templates) == 1, f"{len(templates)} warm templates for one call of {len(STUDENTS)} submissions"
    ended(templates, before)
    graded = [load_record(course, LESSON, student) for student in STUDENTS]
    assert all(r.score == r.max_score for r in graded), [r.reason for r in graded]
    assert not any(r.phases.get("reused") for r in graded), "each submission was graded in this call"
    seeds = {r.seed for r in graded}
    assert len(seeds) == 1 and seeds == {read_json(course / RECORDS / "run.json")["seed"]}, "one run, one seed"


@needs_warm
def test_without_one_run_per_call_every_notebook_starts_its_own_template(course, templates, monkeypatch):
    """The other side: ``TrustedExecute`` outside any call's run (``Autograde.start`` unwrapped) grades each
    notebook in a run of its own, which the count above would see."""
    from autograder.grading import nbgrader_plugin

    monkeypatch.setattr(nbgrader_plugin, "_start_in_one_run", lambda start: start)  # the course's config loads
    monkeypatch.setattr(Autograde, "start", Autograde.start.__wrapped__)
    before = now()
    assert autograde(course)["success"]
    assert len(templates) == len(STUDENTS)
    ended(templates, before)


@needs_warm
@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_an_exception_in_the_middle_of_the_call_still_closes_its_run(course, templates, monkeypatch, error):
    """nbgrader goes on past the submission an exception stops (``RuntimeError``: the call then fails) or ends
    the call there (``KeyboardInterrupt``, as nbgrader re-raises it): either way the call's one run closes."""
    write = TrustedExecute._write

    def failing(self, nb, record, hidden=frozenset()):
        if record.student == STUDENTS[1]:
            raise error("broken in the middle")
        return write(self, nb, record, hidden)

    monkeypatch.setattr(TrustedExecute, "_write", failing)
    before = now()
    result = autograde(course)
    assert not result["success"] and "broken in the middle" in result.get("log", "") + result["error"]
    assert len(templates) == 1
    ended(templates, before)
    graded = (course / "autograded" / STUDENTS[2] / LESSON).is_dir()
    assert graded is (error is RuntimeError), "nbgrader goes on after an error, not after an interrupt"


def test_a_call_inside_a_call_shares_its_runs_which_close_once_at_the_outer_end():
    """Inside another call's block (nbgrader's API called while one is open), the outer one's runs serve, and
    only the outer block's end closes them."""
    from autograder.grading.nbgrader_plugin import _CALL

    closed = []
    run = type("Run", (), {"close": lambda self: closed.append(self)})()
    with one_run_per_call():
        outer = _CALL.get()
        outer["course", None] = run
        with one_run_per_call():
            assert _CALL.get() is outer
        assert _CALL.get() is outer and not closed
    assert _CALL.get() is None and closed == [run]


def test_the_course_config_wraps_autograde_start_once():
    """Loading ``nbgrader_config.py`` (every nbgrader command, formgrader, ``nbgrader_api``) wraps nbgrader's own
    ``start`` once, however often it is loaded."""
    from nbgrader.converters.base import BaseConverter
    from traitlets.config import Config

    from autograder.grading.nbgrader_plugin import configure
    from shared import REPO

    coursedir.course_config(REPO)
    configure(Config())
    assert Autograde.start.one_run_per_call and Autograde.start.__wrapped__ is BaseConverter.start
