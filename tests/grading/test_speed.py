"""The trusted grader's speed against plain ``nbgrader autograde``, as a ratio measured side by side (never a
wall-clock bound), and the phases every record carries (issue 56).

The short form of ``make scale``: a few lesson 1 reference submissions graded by stock ``nbgrader autograde`` (the
whole notebook in a Jupyter kernel, one command for them all) and by the trusted grader (``grade_one`` in this
process, warm: one grading first starts the lesson's warm template and imports, as a grading worker does once),
on the same machine one after the other. Their ratio (nbgrader's seconds / the trusted grader's) must not fall
more than 20 % below the ratio stored in ``tests/data/speed_ratio.json`` (measured on a 2-core machine under the
load of other jobs; a faster or slower machine scales both sides).
"""

from __future__ import annotations

import json
import time

import pytest

from autograder.grading.sandbox import Limits
from autograder.grading.submission import GradingRun, Submission, grade_one
from autograder.records import PHASES, load_record
from benchmarks.course_runs import make_course, nbgrader_cmd, nbgrader_scores
from shared import REPO

LESSON = "lesson1_by_hand"
STUDENTS = [f"speed_{i}" for i in range(2)]
STORED = REPO / "tests" / "data" / "speed_ratio.json"
#: How far the measured ratio may fall below the stored one before the test fails.
REGRESSION = 0.20


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A scratch course whose ``nbgrader_config.py`` is stock nbgrader's (no trusted plug-in), with one
    reference submission of lesson 1 per student of :data:`STUDENTS`, every student on the lecture's numbers (the
    reference answers them)."""
    return make_course(tmp_path_factory.mktemp("speed"), [LESSON], ["warm_up"] + STUDENTS, plain=True)


def test_trusted_grading_keeps_its_ratio_to_plain_nbgrader_autograde(course):
    run = GradingRun.open(course, limits=Limits(), seed=11, use_cache=False)
    first = grade_one(Submission.read(course, "warm_up", LESSON), run)  # the warm template's start: not timed
    assert first.score == first.max_score, first.reason
    started = time.perf_counter()
    done = nbgrader_cmd("autograde", LESSON, "--force", "--student=speed_*", root=course)
    plain = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    started = time.perf_counter()
    records = [grade_one(Submission.read(course, student, LESSON), run) for student in STUDENTS]
    trusted = time.perf_counter() - started
    nbgrader = nbgrader_scores(course, [LESSON], STUDENTS)["by_submission"]
    assert {f"{r.student}/{r.lesson}": r.score for r in records} == nbgrader, "the same points both ways"
    ratio = plain / trusted
    stored = json.loads(STORED.read_text())["nbgrader_autograde_over_trusted_lesson1_warm"]
    print(f"nbgrader autograde {plain:.2f} s, trusted {trusted:.2f} s: ratio {ratio:.2f}")
    assert ratio >= (1 - REGRESSION) * stored, (
        f"trusted grading got slower against plain nbgrader autograde: {ratio:.1f}x its speed now, {stored}x stored "
        f"in {STORED.name} (nbgrader {plain:.1f} s, trusted {trusted:.2f} s for {len(STUDENTS)} submissions)")


def test_every_record_carries_its_phases_and_a_reused_one_is_marked(course):
    run = GradingRun.open(course, limits=Limits(), seed=12)
    submission = Submission.read(course, STUDENTS[0], LESSON)
    computed = grade_one(submission, run)
    phases = computed.phases
    assert set(PHASES) <= set(phases) and "reused" not in phases and phases["record_wall"] > 0
    assert all(phases[name] >= 0 for name in PHASES)
    assert phases["child_start_wall"] > 0 and phases["tests_wall"] > 0 and phases["total_wall"] > 0
    parts = sum(phases[name] for name in ("child_start_wall", "child_setup_wall", "child_cells_wall",
                                          "parent_setup_cpu", "tests_wall", "child_stop_wall"))
    assert parts <= phases["total_wall"] * 1.05 + 0.01, "phases that follow one another add up to at most the whole"
    assert phases["tests_parent_cpu"] >= phases["source_rules_cpu"]
    assert {"child_reported_start_cpu", "child_reported_cells_cpu"} <= set(phases), "the child's own word, beside"
    again = grade_one(submission, run)  # the same key: reused, with the phases of the grading that computed it
    assert again.phases == {**{k: v for k, v in phases.items() if k != "record_wall"}, "reused": True}
    assert load_record(course, LESSON, STUDENTS[0]).phases == again.phases


def test_the_grading_process_runs_pytorch_on_one_thread(course):
    """The parent's references run on one thread, as the child's code does: a grading process beside its child and
    the other workers only contends with more (OpenMP spin-waits quadrupled the parent's CPU under load)."""
    import torch

    torch.set_num_threads(2)
    assert torch.get_num_threads() == 2
    run = GradingRun.open(course, limits=Limits(), seed=12, use_cache=False)
    with run:
        record = grade_one(Submission.read(course, STUDENTS[0], LESSON), run)
    assert record.score == record.max_score, record.reason
    assert torch.get_num_threads() == 1
