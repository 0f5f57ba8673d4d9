"""A submission cannot take more than its share (issue 45): a solution cell that starts as many busy
processes as it may (each in a session of its own) beside two honest submissions, graded with
``--jobs 2``. Each child has a CPU quota of one CPU at a low weight in its cgroup, a process limit, and
nice 19, so: the honest neighbours get their normal grades within twice their normal time, the hog is
stopped within its CPU budget plus the hang margin, and SIGTERM ends everything within 10 seconds.

The three figures are printed (``pytest -s``) for the issue's note."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from autograder.grading import batch, containment, load_records, sandbox
from autograder.grading.sandbox import Limits, hang_seconds
from test_stopping import left_running, start_grading, tiny_course, watch

SEED = 77
CELL_SECONDS = 5.0
LIMITS = Limits(test_seconds=CELL_SECONDS, cell_seconds=CELL_SECONDS, start_seconds=90)

#: Honest work of about half a CPU second, so that a slowdown is measurable.
HONEST = ("total = 0\nfor i in range(2_500_000):\n    total += i % 7\n"
          "def double(x):\n    return 2 * x\n")
#: Busy processes until the process limit refuses more, each in a session of its own, then busy itself.
HOG = ("import os\nstarted = 0\nfor _ in range(300):\n    try:\n        pid = os.fork()\n    except OSError:\n"
       "        break\n    if pid == 0:\n        os.setsid()\n        while True:\n            pass\n"
       "    started += 1\nwhile True:\n    pass\n")

needs_cpu_cgroup = pytest.mark.skipif(
    not containment().cgroup or "cpu controller" in dict(containment().lacks),
    reason=f"no cgroup with a cpu controller here ({containment().level}): a child's CPU share is not capped")


def _course(root: Path, students: dict[str, str]) -> Path:
    return tiny_course(root, students, f"\nc.SandboxPolicy.test_seconds = {CELL_SECONDS}\n"
                                       f"c.SandboxPolicy.cell_seconds = {CELL_SECONDS}\n")


def _graded(root: Path) -> dict:
    batch.grade(root=root, jobs=2, progress=False, seed=SEED, check_reference=False, gradebook=False, limits=LIMITS)
    return {r.student: r for r in load_records(root)}


@pytest.mark.slow
@needs_cpu_cgroup
def test_a_cpu_hog_neither_starves_its_neighbours_nor_outlives_its_budget(tmp_path):
    try:
        alone = _graded(_course(tmp_path / "alone", {"bob": HONEST, "cat": HONEST}))
        beside = _graded(_course(tmp_path / "beside", {"a_hog": HOG, "bob": HONEST, "cat": HONEST}))
    finally:
        sandbox.close_templates()
    hog = beside["a_hog"]
    stopped_after = next(c["seconds"] for c in hog.cells if c["id"] == "answer")
    for name in ("bob", "cat"):
        assert beside[name].status == alone[name].status == "ok" and beside[name].score == alone[name].score == 1
        assert [t["output"] for t in beside[name].tests] == [t["output"] for t in alone[name].tests]
    # the honest cell's own seconds (its half CPU second of work), not the record's, which also holds the child's
    # start: a cold start (about 2 s in a checkout under /tmp) in one run and not the other is not starvation
    work = {run: {name: next(c["seconds"] for c in records[name].cells if c["id"] == "answer") for name in ("bob", "cat")}
            for run, records in (("alone", alone), ("beside", beside))}
    slowest = max(work["beside"][name] / work["alone"][name] for name in ("bob", "cat"))
    print(f"\nhonest neighbours' cells: {work['alone']['bob']:.2f} s and {work['alone']['cat']:.2f} s alone, "
          f"{work['beside']['bob']:.2f} s and {work['beside']['cat']:.2f} s beside the hog (at most {slowest:.2f}x); "
          f"the hog's cell stopped after {stopped_after:.1f} s ({hog.status}: {hog.reason})")
    # stopped by its CPU budget (counted in its cgroup, every process it started included), within the wall-clock
    # cap for hangs (budget x HANG_FACTOR + HANG_SECONDS), which would say "ran past the time limit"
    assert hog.status == "timeout" and hog.score == 0 and f"more than {CELL_SECONDS:g} CPU seconds" in hog.reason
    assert stopped_after < hang_seconds(CELL_SECONDS), stopped_after
    assert slowest <= 2.0 or max(work["beside"][n] - work["alone"][n] for n in ("bob", "cat")) < 1.0, work


@pytest.mark.slow
@needs_cpu_cgroup
def test_sigterm_ends_a_batch_with_a_cpu_hog_within_ten_seconds(tmp_path):
    root = _course(tmp_path / "stopped", {"a_hog": HOG, "bob": HONEST})
    grader = start_grading(root, "--seed", str(SEED))
    try:
        seen, _ = watch(grader, lambda seen, beats: sum(uid not in (0, os.getuid()) for _, uid in seen.values()) > 20)
        assert sum(uid not in (0, os.getuid()) for _, uid in seen.values()) > 20, "the hog never got going"
        sent = time.monotonic()
        grader.send_signal(signal.SIGTERM)
        while left_running(seen) and time.monotonic() - sent < 10:
            time.sleep(0.05)
        gone = time.monotonic() - sent
        left = left_running(seen)
        print(f"\nSIGTERM: {len(seen)} processes of the batch, every one gone after {gone:.2f} s")
        assert not left, f"{len(left)} processes still running 10 s after SIGTERM"
        grader.wait(timeout=10)
        assert grader.returncode == 128 + signal.SIGTERM, grader.log.read_text()[-2000:]
    finally:
        if grader.poll() is None:
            os.killpg(grader.pid, signal.SIGKILL)
