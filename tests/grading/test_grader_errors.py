"""Grader faults are the grader's: a submission the grader fails on gets status ``grader-error``, no
score in the gradebook and a non-zero exit; a batch whose lesson reference does not get full marks
(the canary) grades nothing."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import corpus
from autograder import cli
from autograder.grading import batch, load_records, submission
from autograder.grading.sandbox import GraderFault, Limits
from workflow_fakes import make_course

pytestmark = pytest.mark.slow
LESSON = "lesson1_by_hand"
FAST = Limits(test_seconds=20, cell_seconds=20, start_seconds=90)


@pytest.fixture
def course(tmp_path, monkeypatch):
    root = make_course(tmp_path, (LESSON,))
    cases = {c.name: c for c in corpus.cases(LESSON)}
    corpus.build(cases["reference"], root, "alice")
    corpus.build(cases["partial"], root, "bob")
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return root


def gradebook_scores(root: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student_id: s.score for s in gb.assignment_submissions(LESSON)}


def test_a_grader_fault_is_a_grader_error_with_no_score_and_a_nonzero_exit(course, monkeypatch, capsys):
    real = submission.run_tests  # every grading computes its verdicts there (GradingRun.verdicts)
    graded = []

    def failing_for_bob(lesson, sources, limits, **kwargs):  # alice and the canary hand in the reference
        graded.append(sources == lesson.reference_sources())
        if sources != lesson.reference_sources():
            raise GraderFault("the sandbox could not start (simulated)")
        return real(lesson, sources, limits, **kwargs)

    monkeypatch.setattr(submission, "run_tests", failing_for_bob)
    status = cli.main(["grade", "--root", str(course), "--jobs", "1", "--quiet"])
    out, err = capsys.readouterr()
    assert status == 1, out + err
    assert graded == [True, False], "the reference is graded once (the canary), alice's copy of it comes from the cache"
    assert "grader-error" in out and "simulated" in out and "not written" in err
    records = {r.student: r for r in load_records(course)}
    assert records["alice"].status == "ok" and records["alice"].score == records["alice"].max_score
    assert records["bob"].status == "grader-error" and "not the student" in records["bob"].reason
    scores = gradebook_scores(course)
    assert scores.get("alice") == records["alice"].max_score
    assert "bob" not in scores, "a grader error must not put a score in the gradebook"
    # the next run, with the grader working again, grades bob normally (the error was not cached)
    monkeypatch.setattr(submission, "run_tests", real)
    assert cli.main(["grade", "--root", str(course), "--jobs", "1", "--quiet"]) == 0
    bob = {r.student: r for r in load_records(course)}["bob"]
    assert bob.seed == records["alice"].seed, "a run with a grader error is resumed with its seed (alice's cache)"
    assert bob.status == "ok" and 0 < bob.score < bob.max_score
    assert gradebook_scores(course)["bob"] == bob.score


def test_a_reference_that_cannot_be_graded_stops_the_batch_before_any_submission(course, capsys):
    # a thousandth of a CPU second per cell (a warm child that forked from its template needs little memory
    # of its own: a tight memory cap alone may no longer stop it)
    too_tight = Limits(test_seconds=0.001, cell_seconds=0.001, start_seconds=90, memory_bytes=64 << 20)
    stopped = "reference solution (could not be graded|lost points)"
    with pytest.raises(batch.CanaryFailed, match=stopped):
        batch.grade([LESSON], root=course, progress=False, limits=too_tight, jobs=1)
    assert load_records(course) == [] and not (course / "gradebook.db").exists()
    # with --jobs 2 the pool's workers grade the reference first, and stop the batch just the same
    with pytest.raises(batch.CanaryFailed, match=stopped):
        batch.grade([LESSON], root=course, progress=False, limits=too_tight, jobs=2)
    assert load_records(course) == [] and not (course / "gradebook.db").exists()
    # the same batch with limits the reference meets grades both students fully
    records = batch.grade([LESSON], root=course, progress=False, limits=FAST, jobs=2)
    assert [(r.student, r.status) for r in records] == [("alice", "ok"), ("bob", "ok")]
    assert records[0].score == records[0].max_score


def test_without_psutil_the_grader_stops_with_a_clear_error_instead_of_a_weaker_sandbox(monkeypatch):
    """psutil measures the child's CPU seconds and memory where no cgroup does: without it the sandbox
    would enforce less than it says, so it does not start (a grader error, never a student's 0)."""
    from autograder.grading import sandbox

    sandbox.containment.cache_clear()
    try:
        assert sandbox.containment().rss_watch  # with psutil: the memory watch is on
        sandbox.containment.cache_clear()
        monkeypatch.setitem(sys.modules, "psutil", None)  # `import psutil` raises ImportError
        with pytest.raises(GraderFault, match=r"needs psutil.*avgpool-course\[grader\]"):
            sandbox.containment()
    finally:
        monkeypatch.delitem(sys.modules, "psutil")
        sandbox.containment.cache_clear()
