"""A grader that can be stopped: SIGTERM (what a scheduler, a JupyterHub culling the server or Ctrl-C
sends) or SIGKILL to ``python -m autograder grade`` in the middle of a batch ends every process the batch
started (pool workers, warm templates, sandboxed children, and a daemon the student's code started by
double fork and ``setsid``), leaves only whole records, and a rerun grades what is missing and gives the
grades of an uninterrupted run.

The class is tiny: one lesson of one test cell (whose printed values come from the run's seed), ``ann``
(honest) and ``bob`` (honest too, but his solution cell starts a daemon that writes to a file and then
sleeps, so the batch is mid-flight while the daemon runs and ann is graded)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from daemon import START_DAEMON
from nbformat.v4 import new_code_cell, new_notebook

from autograder import coursedir
from autograder.grading import batch, containment, load_records, sandbox
from shared import REPO

LESSON = "tiny"
SEED = 4242
#: How long every process of a stopped batch may take to end (the issue: "within a few seconds").
GONE_SECONDS = 8.0  # measured: 1 to 2 s, 3 s on a 2-core machine at load 8

DAEMON = """import os, time
time.sleep(0.5)  # ann, graded next to bob, is done first
""" + START_DAEMON + """def double(x):
    return 2 * x
time.sleep(1)
"""
SUBMISSIONS = {"ann": "def double(x):\n    return 2 * x\n", "bob": DAEMON}


#: Without a PID namespace (``rlimits-only`` containment) a daemon that left the child's process group is
#: out of the grader's reach (the known limit in THREAT_MODEL.md), and out of these tests' sight.
needs_pid_namespace = pytest.mark.skipif(not containment().namespaces,
                                         reason=f"no PID namespace in {containment().mode} containment")


def _notebook(solution: str):
    def meta(**fields):
        return {"nbgrader": {"schema_version": 3, **fields}}

    test = ("x = random_input((3,), np.float64, seed=1)\ncheck_array(double(x), 2 * x, 'double')\n"
            "print(double(x).tolist())")
    cells = [new_code_cell("import numpy as np\nfrom course.checks import check_array, random_input"),
             new_code_cell(solution, metadata=meta(grade_id="answer", solution=True, grade=False, locked=False)),
             new_code_cell(test, metadata=meta(grade_id="double_tests", solution=False, grade=True, locked=True,
                                               points=1))]
    return new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                              "language": "python"}})


def tiny_course(root: Path, students: dict[str, str], config: str = "") -> Path:
    """A course folder at ``root``: the lesson :data:`LESSON` (one solution cell, ``double``, and one test
    cell), the repository's ``nbgrader_config.py`` followed by ``config``, a submission per ``students``
    entry (name: solution source), and the lesson in its gradebook."""
    root.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text((REPO / "nbgrader_config.py").read_text() + config)
    for folder, solution in (("source", "### BEGIN SOLUTION\ndef double(x):\n    return 2 * x\n### END SOLUTION"),
                             ("release", "# YOUR CODE HERE\nraise NotImplementedError()")):
        (root / folder / LESSON).mkdir(parents=True)
        nbformat.write(_notebook(solution), str(root / folder / LESSON / f"{LESSON}.ipynb"))
    for student, solution in students.items():
        (root / "submitted" / student / LESSON).mkdir(parents=True)
        nbformat.write(_notebook(solution), str(root / "submitted" / student / LESSON / f"{LESSON}.ipynb"))
    coursedir.ensure_assignment(root, LESSON)
    return root


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """``(pristine, expected)``: the tiny class with nothing graded (its gradebook knows the lesson, as
    ``nbgrader autograde`` needs), and the grades of one uninterrupted grading run of it with seed
    :data:`SEED` (phase 1, whose records the gradebook takes as they are)."""
    pristine = tiny_course(tmp_path_factory.mktemp("stopping") / "pristine", SUBMISSIONS)
    uninterrupted = shutil.copytree(pristine, pristine.parent / "uninterrupted")
    try:  # the run closes its own templates; any started outside a run are closed at the end of this module
        batch.grade(root=uninterrupted, jobs=1, progress=False, seed=SEED, check_reference=False, gradebook=False)
        yield pristine, grades(uninterrupted)
    finally:
        sandbox.close_templates()


def grades(root: Path) -> dict:
    """Every record's status, score, seed and per-test outcome (the printed values come from the seed)."""
    return {r.student: (r.status, r.score, r.seed, [(t["grade_id"], t["points"], t["output"]) for t in r.tests])
            for r in load_records(root)}


def _default_stop_signals() -> None:
    """In the grader's process before it runs: the stop signals as a terminal gives them (a test run started
    under ``nohup`` ignores SIGHUP, and an ignored signal is inherited)."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start_grading(root: Path, *args: str, command: tuple = ("-m", "autograder", "grade"), cwd: Path = REPO,
                  env: dict | None = None) -> subprocess.Popen:
    """``python -m autograder grade --jobs 2`` (or another ``command``, in ``cwd`` with ``env``) on ``root``;
    its output goes to ``.log`` (a file: never a pipe that a surviving process could hold open)."""
    log = root / f"grade-{time.monotonic_ns()}.log"
    if command[-1] == "grade":
        args = ("--root", str(root), "--jobs", "2", "-q", *args)
    with open(log, "w") as out:
        grader = subprocess.Popen([sys.executable, *command, *args], cwd=cwd, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_default_stop_signals)
    grader.log = log
    return grader


def _alive(pid: int, started: float) -> bool:
    try:
        process = psutil.Process(pid)
        return process.create_time() == started and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def watch(grader: subprocess.Popen, until) -> tuple[dict, int | None]:
    """Poll the grader's process tree every 10 ms until ``until(seen, beats)`` holds or the grader ends:
    ``({pid: (create_time, uid)} of every process of the batch seen, a descriptor of the file the student's
    daemon writes, None until it has started)``; the descriptor stays readable after the daemon's mount
    namespace is gone."""
    seen: dict = {}
    beats = None
    tree = psutil.Process(grader.pid)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and grader.poll() is None and not until(seen, beats):
        try:
            children = tree.children(recursive=True)
        except psutil.Error:  # the grader ended
            break
        for process in children:
            try:
                seen[process.pid] = (process.create_time(), process.uids().real)
                if beats is None and process.cmdline()[:2] == ["sh", "-c"]:  # the daemon (no other sh here)
                    beats = os.open(f"/proc/{process.pid}/cwd/daemon-beat.txt", os.O_RDONLY)
            except (psutil.Error, OSError):  # not started yet, or not written yet
                continue
        time.sleep(0.01)
    return seen, beats


def wait_until_underway(grader: subprocess.Popen, first: Path | None) -> tuple[dict, int]:
    """:func:`watch` the grader until the student's daemon writes its file and the record ``first`` (of a
    submission graded next to bob) is written."""
    seen, beats = watch(grader, lambda seen, beats: beats is not None and (first is None or first.exists()))
    if beats is None or (first is not None and not first.exists()):
        if beats is not None:
            os.close(beats)
        pytest.fail(f"the batch never got under way (grader exit status {grader.poll()})")
    return seen, beats


def left_running(seen: dict) -> list[int]:
    """Processes of the batch still running: those seen before the signal, and any of a sandbox uid."""
    uids = {uid for _, uid in seen.values()} - {0, os.getuid()}
    left = [pid for pid, (started, _) in seen.items() if _alive(pid, started)]
    return left + [pid for uid in uids for pid in sandbox.uid_processes(uid) if pid not in left]


def end_and_check(grader: subprocess.Popen, signum: int, seen: dict, beats: int | None, what: str = "") -> float:
    """Send ``signum`` to the grader (if it still runs); check that every process of the batch ``seen``
    ends within :data:`GONE_SECONDS` and the daemon's file (``beats``, when it started) stops growing.
    Closes ``beats``; returns the seconds until nothing was left. ``what``: said on failure."""
    try:
        sent = time.monotonic()
        grader.send_signal(signum)  # nothing, when the grader has ended and been waited for
        while left_running(seen) and time.monotonic() - sent < GONE_SECONDS:
            time.sleep(0.01)
        gone = time.monotonic() - sent
        left = left_running(seen)
        size = os.fstat(beats).st_size if beats is not None else 0
        time.sleep(0.1)
        assert not left, f"{what}: still running {GONE_SECONDS} s after {signal.Signals(signum).name}: " + "; ".join(
            " ".join(psutil.Process(p).cmdline())[:100] for p in left if psutil.pid_exists(p))
        assert beats is None or os.fstat(beats).st_size == size, f"{what}: the daemon's file still grows"
    finally:
        if beats is not None:
            os.close(beats)
        for pid in left_running(seen):  # clean up after a failure on today's code
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    grader.wait(timeout=30)
    return gone


def stop(grader: subprocess.Popen, signum: int, root: Path, first: str | None = "ann") -> dict:
    """Send ``signum`` to the grader mid-batch (once student ``first`` has a record); check that every
    process of the batch ends within :data:`GONE_SECONDS` and the daemon's file stops growing. Returns
    what it measured."""
    seen, beats = wait_until_underway(grader, first and root / "records" / LESSON / f"{first}.json")
    graded_before = {p.stem for p in (root / "records" / LESSON).glob("*.json")}
    written = os.fstat(beats).st_size
    gone = end_and_check(grader, signum, seen, beats)
    assert written > 0, "the daemon wrote its file"
    return {"seconds": gone, "processes": len(seen), "graded_before": graded_before}


def temporaries(root: Path) -> set[Path]:
    """The temporary files under ``records/`` (what a record is written to before ``os.replace``)."""
    return {path for path in (root / "records").rglob("*.tmp")}


def records_whole(root: Path, temporary_left: bool = False, before: set[Path] = frozenset()) -> None:
    """Every file under ``records/`` is a whole JSON document; no temporary file is left but those of
    ``before`` (a SIGKILL that lands while one is written leaves it: never read, a record is only what
    ``os.replace`` put in place)."""
    import json

    for path in (root / "records").rglob("*"):
        assert temporary_left or not path.name.endswith(".tmp") or path in before, \
            f"a half-written file was left: {path}"
        if path.is_file() and path.suffix == ".json":
            json.loads(path.read_text())


@needs_pid_namespace
def test_a_stopped_or_killed_batch_leaves_nothing_running_and_a_rerun_gives_the_uninterrupted_grades(course, tmp_path):
    pristine, expected = course
    root = shutil.copytree(pristine, tmp_path / "course")

    killed = start_grading(root, "--seed", str(SEED))  # SIGKILL: no handler runs, parent-death signals do it all
    stop(killed, signal.SIGKILL, root)
    assert killed.returncode == -signal.SIGKILL
    records_whole(root, temporary_left=True)

    stopped = start_grading(root)  # resumes the run (its seed, what it finished), then SIGTERM mid-flight
    measured = stop(stopped, signal.SIGTERM, root)
    lines = stopped.log.read_text().strip().splitlines()
    assert stopped.returncode == 128 + signal.SIGTERM, lines
    assert len(lines) == 1 and lines[0].startswith("error: stopped by SIGTERM"), lines
    records_whole(root)
    assert measured["graded_before"] == {"ann"}, "ann was graded, bob was mid-flight"
    cached = {p: p.stat().st_mtime_ns for p in (root / "records" / "cache").glob("*.json")}
    assert len(cached) == 2, "ann's verdicts, and the reference's (the canary's full marks, cached)"

    # the rerun (what `grade` runs, here in this process: no second interpreter and pool to start)
    batch.grade(root=root, jobs=1, progress=False, gradebook=False, check_reference=False)
    assert grades(root) == expected, "the same grades as an uninterrupted run (same seed, same hidden inputs)"
    assert all(path.stat().st_mtime_ns == stamp for path, stamp in cached.items()), \
        "what the stopped runs finished is not graded again"
    print(f"\n{containment().mode}: {measured['processes']} processes of the batch ended "
          f"{measured['seconds']:.2f} s after SIGTERM")


#: Where the seed of the random kill moments comes from when set (the test prints the one it drew).
KILL_SEED = "AVGPOOL_KILL_SEED"
#: The window the kill moments are drawn from, in seconds after the batch starts its first process (the
#: interpreter's start-up before it starts nothing): the pool, the reference check, ann, bob and his
#: daemon, the gradebook.
KILL_WINDOW = 8.0


@needs_pid_namespace
def test_a_batch_killed_at_random_moments_leaves_nothing_running_and_a_rerun_gives_the_uninterrupted_grades(
        course, tmp_path):
    """SIGKILL, then SIGTERM, each at a moment drawn from a seed the test prints (set AVGPOOL_KILL_SEED to
    replay one) within :data:`KILL_WINDOW` of the batch's first process: each time every process of the
    batch ends (the daemon too), only whole records are left, and a rerun gives the grades of an
    uninterrupted run (the fixed moments are the test above's)."""
    pristine, expected = course
    root = shutil.copytree(pristine, tmp_path / "course")
    kill_seed = int(os.environ.get(KILL_SEED) or random.SystemRandom().randrange(1 << 31))
    draw = random.Random(kill_seed)
    print(f"\nkill moments from {KILL_SEED}={kill_seed}")
    for signum in (signal.SIGKILL, signal.SIGTERM):
        moment = draw.uniform(0.0, KILL_WINDOW)
        what = f"{signal.Signals(signum).name} {moment:.2f} s into the batch ({KILL_SEED}={kill_seed})"
        left_before = temporaries(root)  # a SIGKILL that landed mid-write leaves one, never read
        grader = start_grading(root, "--seed", str(SEED))
        began = []  # when the first process of the batch was seen

        def at_the_moment(seen, beats):
            began[:] = began or ([time.monotonic()] if seen else [])
            return bool(began) and time.monotonic() - began[0] >= moment

        seen, beats = watch(grader, at_the_moment)
        landed = grader.poll() is None
        gone = end_and_check(grader, signum, seen, beats, what)
        log = grader.log.read_text().strip().splitlines()
        assert grader.returncode in ((-signum, 128 + signum, 0) if landed else (0,)), (what, log)
        if grader.returncode == 128 + signum:
            assert len(log) == 1 and log[0].startswith("error: stopped by SIGTERM"), (what, log)
        records_whole(root, temporary_left=signum == signal.SIGKILL, before=left_before)
        print(f"{what}: {'mid-batch' if landed else 'after the batch'}, exit status {grader.returncode}, "
              f"{len(seen)} processes ended in {gone:.2f} s, records: "
              f"{sorted(p.stem for p in (root / 'records' / LESSON).glob('*.json'))}, gradebook: "
              f"{'begun' if (root / 'gradebook.db').exists() else 'not begun'}")
    batch.grade(root=root, jobs=1, progress=False, gradebook=False, check_reference=False, seed=SEED)
    assert grades(root) == expected, f"the grades of an uninterrupted run ({KILL_SEED}={kill_seed})"


@needs_pid_namespace
def test_nbgrader_autograde_with_the_trusted_grader_stops_as_grade_does(course, tmp_path, signum=signal.SIGHUP):
    """Inside the ``nbgrader autograde`` command (which has no handler of its own), the trusted grader ends
    every process it started, says so in a last line and exits with 128 + the signal, leaving cal (bob's
    daemon, and a solution cell that would run on for a minute) without a record."""
    from autograder.coursedir import tool_env

    pristine, _ = course
    root = shutil.copytree(pristine, tmp_path / "course")
    (root / "submitted" / "cal" / LESSON).mkdir(parents=True)
    cal = DAEMON.replace("time.sleep(0.5)  # ann, graded next to bob, is done first\n", "")
    nbformat.write(_notebook(cal.replace("time.sleep(1)", "time.sleep(60)")),
                   str(root / "submitted" / "cal" / LESSON / f"{LESSON}.ipynb"))
    grader = start_grading(root, LESSON, "--student", "cal", "--create", f"--CourseDirectory.root={root}",
                           command=("-m", "nbgrader", "autograde"), cwd=root, env=tool_env())
    measured = stop(grader, signum, root, first=None)
    lines = grader.log.read_text().strip().splitlines()
    assert grader.returncode == 128 + signum, lines
    assert lines[-1].startswith(f"error: stopped by {signal.Signals(signum).name}"), lines
    assert not any("Traceback" in line for line in lines), lines
    assert not measured["graded_before"] and not (root / "records" / LESSON).exists()


#: A grader waiting on an nbgrader command (its interpreter: the course folder's stand-in script ``python``).
WAITS_ON_NBGRADER = """import sys
from autograder import coursedir
sys.executable = sys.argv[1] + "/python"
coursedir.run_nbgrader(sys.argv[1], "generate_assignment", "tiny")
"""


def test_an_nbgrader_command_of_a_killed_grader_ends_with_it(tmp_path):
    """A grader killed by SIGKILL while phase 2 waits on ``nbgrader generate_assignment`` takes the command
    along (a parent-death signal); earlier it ran on to its end, writing the gradebook (10 s and more)."""
    (tmp_path / "python").write_text("#!/bin/sh\necho $$ > started.pid\nexec sleep 60\n")
    (tmp_path / "python").chmod(0o755)
    grader = subprocess.Popen([sys.executable, "-c", WAITS_ON_NBGRADER, str(tmp_path)], cwd=REPO)
    deadline = time.monotonic() + 60
    while not (tmp_path / "started.pid").exists() and time.monotonic() < deadline and grader.poll() is None:
        time.sleep(0.01)
    nbgrader = psutil.Process(int((tmp_path / "started.pid").read_text()))
    started = nbgrader.create_time()
    grader.kill()
    grader.wait()
    try:
        nbgrader.wait(timeout=GONE_SECONDS)
    except psutil.TimeoutExpired:
        nbgrader.kill()
        pytest.fail(f"the nbgrader command still ran {GONE_SECONDS} s after its grader was killed")
    assert not _alive(nbgrader.pid, started)


@pytest.fixture
def terminal_signals():
    """This test process's stop signals as a terminal gives them (not as ``nohup`` or a test worker left
    them), restored afterwards."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    for sig in before:
        signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_each_stop_signal_ends_what_was_started_then_raises_stopped(monkeypatch, terminal_signals, signum):
    """Inside ``stoppable`` each stop signal runs the reapers, then raises :class:`Stopped` (a
    KeyboardInterrupt, which no ``except Exception`` swallows) with exit status 128 + signal; outside,
    the signals are handled as before."""
    from autograder import stopping

    import multiprocessing

    reaped = []
    monkeypatch.setattr(stopping, "_REAPERS", [lambda: reaped.append(True)])
    monkeypatch.setattr(multiprocessing, "active_children", lambda: [])  # never this test run's own workers
    before = {sig: signal.getsignal(sig) for sig in stopping.STOP_SIGNALS}
    with pytest.raises(stopping.Stopped) as stopped:
        with stopping.stoppable():
            try:
                os.kill(os.getpid(), signum)
                time.sleep(5)  # the handler raises before this ends
            except Exception:
                pytest.fail("an `except Exception` caught the stop")
    assert reaped == [True] and stopped.value.exit_status == 128 + signum
    name = signal.Signals(signum).name
    assert str(stopped.value).startswith(f"stopped by {name}: every process it started has ended")
    assert {sig: signal.getsignal(sig) for sig in stopping.STOP_SIGNALS} == before
    with stopping.stoppable():  # without a signal, nothing happens
        stopping.check()
    assert not reaped[1:]
    with pytest.raises(stopping.Stopped):  # a host that swallows the stop (nbgrader's API does) cannot keep it
        with stopping.stoppable():
            try:
                os.kill(os.getpid(), signum)
                time.sleep(5)
            except BaseException:
                pass
            stopping.check()
    stopping.check()  # the stop belonged to that command: the next one is not stopped by it


@pytest.mark.skipif(not sandbox.cgroups_available(), reason="this process may not make cgroups")
def test_the_cgroups_a_killed_grader_left_are_removed_by_the_next_one(monkeypatch):
    """A grader killed with SIGKILL cannot remove its children's cgroups; the next grading process on the
    machine removes those of processes that are gone (empty: their processes died with the grader)."""
    ended = subprocess.Popen(["true"])
    ended.wait()
    probe = sandbox.Cgroup.create(1 << 30)
    parents = [os.path.dirname(path) for path in probe.paths.values()]
    probe.remove()
    stale = [os.path.join(parent, f"avgpool-trusted-{ended.pid}-1") for parent in parents]
    for path in stale:
        os.mkdir(path)
    try:
        sandbox.Cgroup._remove_stale(parents)
        assert all(os.path.exists(path) for path in stale), "one just made may belong to a grader out of sight"
        for path in stale:  # a minute later
            os.utime(path, (time.time() - 120, time.time() - 120))
        monkeypatch.setattr(sandbox.Cgroup, "_swept", 0)  # as in a new grading process
        sandbox.Cgroup.create(1 << 30).remove()
        assert not any(os.path.exists(path) for path in stale)
    finally:
        for path in stale:
            if os.path.exists(path):
                os.rmdir(path)


def test_a_worker_stopped_while_it_writes_a_record_leaves_no_temporary_file(tmp_path, monkeypatch):
    """A pool worker stopped by SIGTERM runs its reapers, then exits without unwinding: the record it was
    writing is removed (never half-written: a record is only ever put in place whole, by ``os.replace``)."""
    import json

    from autograder import stopping
    from autograder import records

    assert records._remove_unfinished in stopping._REAPERS
    monkeypatch.setattr(stopping, "_REAPERS", [records._remove_unfinished])  # not this process's sandboxes
    left = []

    def stopped_while_writing(*args, **kwargs):
        stopping._reap()  # what the stopped worker's handler does before os._exit
        left.extend(tmp_path.iterdir())
        raise SystemExit(143)

    monkeypatch.setattr(json, "dump", stopped_while_writing)
    with pytest.raises(SystemExit):
        records.write_json(tmp_path / "ann.json", {"score": 1})
    assert left == [] and list(tmp_path.iterdir()) == []


def test_a_stop_signal_the_user_ignores_stays_ignored_and_the_others_still_stop(monkeypatch):
    """Started under ``nohup`` (SIGHUP ignored), a stoppable command keeps ignoring SIGHUP, and SIGTERM
    still stops it."""
    from autograder import stopping

    monkeypatch.setattr(stopping, "_REAPERS", [])
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stopping.stoppable(exit=True):
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is stopping._stop
        with pytest.raises(stopping.Stopped):
            with stopping.stoppable():
                os.kill(os.getpid(), signal.SIGHUP)  # ignored
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
    finally:
        signal.signal(signal.SIGHUP, previous)
