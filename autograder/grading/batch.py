"""Grading many submissions: the schedulers. Phase 1 maps :func:`~autograder.grading.submission.grade_one`
over the submissions (each read once, here), in ``jobs`` worker processes (each with its own sandbox uid) or on
the workers of a Dask cluster; each record is saved as ``records/<lesson>/<student>.json``. With ``jobs`` > 1
the workers first grade each lesson's reference (the canary), which also warms their templates. Phase 2
(:mod:`autograder.grading.gradebook`, one writer, in this process) puts the records into nbgrader's gradebook,
a lesson as soon as its last record is in while the pool's or the cluster's workers grade the next lessons.

Every grading run has one seed (:func:`grade`'s ``seed``, else a fresh one), from which every test draws
its hidden inputs (the checks' ``run_seed``, set by ``run_tests``); the canary, every submission and every record share it,
and it is part of the cache key. A run killed half-way and started again resumes its seed
(:meth:`~autograder.grading.submission.GradingRun.open`), reuses the cache and ends with the same gradebook as
one clean run. Each submission is read, decided and recorded by :func:`~autograder.grading.submission.grade_one`
(on Dask: its two halves, :func:`~autograder.grading.submission.reused` here and ``recorded`` when the
worker's verdicts come back).
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path


from autograder.coursedir import CourseError, check_lessons
from autograder import stopping
from autograder.grading.gradebook import LessonWriter
from autograder.grading.intake import Intake
from autograder.grading.lesson import load_lesson
from autograder.grading.policy import load_policy
from autograder.grading.sandbox import GraderFault, Limits, check_level, containment, floor_banner, sandbox_uid
from autograder.grading.submission import GradingRun, Submission, failure, grade_one, recorded, reused
from autograder.grading.verdicts import Verdicts, run_tests
from autograder.records import STATUS_GRADER_ERROR, Record

REPO = Path(__file__).resolve().parents[2]

#: A pool worker's own (a worker process serves the one grading run of its pool and ends with it): its sandbox
#: ``slot`` and its ``run``, the pool's run with that slot, whose resources (warm templates, uid lease) it keeps
#: from one submission to the next and closes at exit. Empty in every other process.
_WORKER: dict = {}
#: How long the client waits for a Dask scheduler to answer before it gives up.
CLUSTER_CONNECT_SECONDS = 30


class GradingError(CourseError):
    """The batch cannot run at all (no such lesson, no gradebook entry and nbgrader failed, ...)."""


def cluster_verdicts(lesson, sources: dict[str, str], limits: Limits, root: str, seed: int,
                     student: str | None = None) -> Verdicts:
    """On a Dask worker: the verdicts of one submission (its solution sources), in the same sandbox as
    local grading, with a sandbox uid of this worker process's own. Needs nothing of the course folder
    but the course's packages (the lesson and the sources come with the task); a
    :class:`GraderFault` travels back to the client, which records a grader error."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    return run_tests(lesson, sources, limits, uid=sandbox_uid(100 + os.getpid() % 800), root=Path(root), seed=seed,
                     student=student)


def _init_worker(slots) -> None:
    _WORKER["slot"] = slots.get()
    os.environ.setdefault("MPLBACKEND", "Agg")


def _worker_run(run: GradingRun) -> GradingRun:
    """In a pool worker: ``run`` with this worker's slot, the same object (and resources) for every task."""
    mine, wanted = _WORKER.get("run"), dataclasses.replace(run, slot=_WORKER.get("slot", 0))
    if mine != wanted:
        if mine is not None:
            mine.close()
        mine = _WORKER["run"] = wanted
    return mine


def _work(run: GradingRun, submission: Submission) -> Record:
    return grade_one(submission, _worker_run(run))


def _canary_work(run: GradingRun, lesson: str) -> str:
    """In a pool worker: :func:`canary` of ``lesson`` ("" when the reference got full marks, else why not).
    It also starts the worker's warm template of the lesson, which the submissions then use."""
    try:
        canary(_worker_run(run), lesson)
    except CanaryFailed as failed:
        return str(failed)
    return ""


def submissions(root: Path, lessons: list[str] | None = None, students: list[str] | None = None) -> list[tuple[str, str]]:
    """``(student, lesson)`` for every folder ``submitted/<student>/<lesson>/`` of a known lesson."""
    root = Path(root)
    chosen = check_lessons(lessons, root, released=True)
    folder = root / "submitted"
    if not folder.is_dir():
        return []
    found = []
    for student_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        if students is not None and student_dir.name not in students:
            continue
        for lesson in chosen:
            if (student_dir / lesson).is_dir():
                found.append((student_dir.name, lesson))
    return found


def compute(run: GradingRun, work: list[Submission], jobs: int = 1, progress: bool = True,
            cluster: str | None = None, canaries: list[str] = (), writer: LessonWriter | None = None) -> list[Record]:
    """Phase 1: the record of every submission in ``work`` in ``run`` (:func:`grade_one` of each), ``jobs``
    at a time here, or on the workers of the Dask cluster whose scheduler is at ``cluster``. ``canaries``
    (with ``jobs`` > 1): the lessons whose reference the pool's workers grade first, all of them before any
    submission (:class:`CanaryFailed`, nothing graded, unless each gets full marks). ``writer``: given each
    record as it comes in (:class:`~autograder.grading.gradebook.LessonWriter`)."""
    from tqdm import tqdm

    records: dict[int, Record] = {}  # by position in work
    bar = tqdm(total=len(work), desc="grading", unit="submission", disable=not progress, leave=True)

    def done(number: int, record: Record) -> None:
        records[number] = record
        bar.update(1)
        if writer is not None:
            writer.add(work[number], record)

    try:
        if cluster:
            _cluster_round(run, work, done, cluster)
        elif jobs <= 1:
            for number, submission in enumerate(work):
                try:
                    record = grade_one(submission, run)
                except Exception as exc:  # a grader bug must not lose the batch: record it
                    record = failure(submission, run, STATUS_GRADER_ERROR, repr(exc))
                done(number, record)
        else:
            _pool_round(run, work, list(range(len(work))), jobs, done, canaries)
    finally:
        bar.close()
    return [records[number] for number in range(len(work))]


def _pool_round(run: GradingRun, work: list[Submission], pending: list[int], jobs, done, canaries=()) -> None:
    """Run the submissions ``pending`` (positions in ``work``) in a pool (after the ``canaries``, see
    :func:`compute`), each record to ``done(position, record)``; if the pool breaks (a worker was killed), run
    what is left again one at a time, so that a submission that breaks a pool on its own gets a ``crash``
    record and only it."""
    context = multiprocessing.get_context("spawn")
    slots = context.Queue()
    width = min(jobs, len(pending))
    for slot in range(1, width + 1):
        slots.put(slot)
    left: list = []
    # each worker ends with the grader (SIGTERM, SIGHUP, the grader's death), its sandboxes with it
    with ProcessPoolExecutor(max_workers=width, mp_context=context, initializer=stopping.serve_as_worker,
                             initargs=(os.getpid(), f"{__name__}:_init_worker", slots)) as pool:
        try:
            failed = [f for f in pool.map(_canary_work, [run] * len(canaries), canaries) if f]
        except BrokenProcessPool:
            failed = ["a grading worker died while it graded a lesson's reference solution; nothing was graded"]
        if failed:
            raise CanaryFailed("; ".join(failed))
        futures = {pool.submit(_work, run, work[number]): number for number in pending}
        for future in as_completed(futures):
            number = futures[future]
            try:
                done(number, future.result())
            except BrokenProcessPool:
                left.append(number)
            except Exception as exc:  # a grader bug must not lose the batch: record it
                done(number, failure(work[number], run, STATUS_GRADER_ERROR, repr(exc)))
    if left and len(pending) == 1:
        done(left[0], failure(work[left[0]], run, "crash", "grading this submission killed the grader's worker"))
        return
    for number in sorted(left):  # one at a time, so that only the culprit is lost
        _pool_round(run, work, [number], 1, done)


def _cluster_round(run: GradingRun, work: list[Submission], done, address) -> None:
    """Phase 1 on a Dask cluster: the client (this process) decides what is reused
    (:func:`~autograder.grading.submission.reused`), sends what has to run to the workers
    (:func:`cluster_verdicts`) and writes every record itself (``recorded``). Tasks of a worker that dies
    are run again on another one by the scheduler; a submission that keeps killing workers ends as a
    ``crash`` record. Each record goes to ``done(position, record)``."""
    import uuid

    try:
        from distributed import Client, as_completed as completed
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker
    except ImportError as exc:
        raise GradingError(f"--cluster needs Dask's distributed package ({exc}); install it with "
                           "pip install '.[cluster]' here and on every worker") from None
    try:
        client = Client(address, timeout=f"{CLUSTER_CONNECT_SECONDS}s")
    except (OSError, TimeoutError) as exc:
        raise GradingError(f"no Dask scheduler answers at {address} ({exc}); start one (dask scheduler) and its "
                           "workers (dask worker ADDRESS), or check the address") from None
    with client:
        futures = {}
        for number, submission in enumerate(work):
            try:
                record = reused(submission, run)
            except Exception as exc:  # a grader bug must not lose the batch: record it
                record = failure(submission, run, STATUS_GRADER_ERROR, repr(exc))
            if record is not None:
                done(number, record)
                continue
            name = f"grade-{submission.lesson.name}-{submission.student}-{uuid.uuid4().hex[:8]}"
            future = client.submit(cluster_verdicts, submission.lesson, submission.sources, run.limits, str(run.root),
                                   run.seed, run.identity(submission), pure=False, key=name)
            futures[future] = number
        for future in completed(futures):
            number = futures[future]
            submission = work[number]
            try:
                record = recorded(submission, run, future.result())
            except GraderFault as fault:
                record = failure(submission, run, STATUS_GRADER_ERROR, fault.message)
            except (KilledWorker, FutureCancelledError):
                record = failure(submission, run, "crash", "grading this submission killed Dask workers again and again")
            except Exception as exc:  # a grader bug must not lose the batch: record it
                record = failure(submission, run, STATUS_GRADER_ERROR, repr(exc))
            done(number, record)


class CanaryFailed(GradingError):
    """The lesson's reference solution did not get full marks here: the grader or its machine is broken."""


def canary(run: GradingRun, lesson_name: str) -> None:
    """Grade the lesson's own reference solution first, in ``run`` (the hidden inputs the submissions
    get); anything short of full marks means this grader cannot be trusted today (a missing package, a
    broken sandbox, limits too tight for the machine). Its verdicts are always computed, and kept for
    reuse, so a submission of the reference's code is not graded twice."""
    lesson = load_lesson(lesson_name, run.root)
    reference = Submission("", lesson, Intake("ok", "", lesson.reference_sources()))
    try:
        verdicts = run.verdicts(reference)
    except GraderFault as fault:
        raise CanaryFailed(f"{lesson_name}: the reference solution could not be graded ({fault.message}); "
                           "nothing was graded") from None
    lost = [f"{t.grade_id} ({t.fault or 'failed'}: {t.message[:200]})" for t in verdicts.tests if not t.passed]
    if lost:
        raise CanaryFailed(f"{lesson_name}: the reference solution lost points on {'; '.join(lost)} (run seed "
                           f"{run.seed}); the grader or this machine is broken (or the limits are too tight), so "
                           "nothing was graded")
    run.store(reference, verdicts)


def grade(lessons: list[str] | None = None, students: list[str] | None = None, jobs: int = 1,
          root: Path = REPO, progress: bool = True, *, limits: Limits | None = None, use_cache: bool = True,
          gradebook: bool = True, check_reference: bool = True, cluster: str | None = None,
          seed: int | None = None) -> list[Record]:
    """Grade ``submitted/<student>/<lesson>/`` of course ``root`` with the trusted grader.

    ``lessons``/``students``: which ones (default: every submission of every lesson). ``jobs``: worker
    processes for phase 1, or ``cluster``: the address of a Dask scheduler whose workers run phase 1
    (the gradebook still has one writer, this process). ``gradebook``: also run phase 2 (nbgrader
    autograde into the gradebook).
    ``check_reference``: grade each lesson's reference solution first and stop (:class:`CanaryFailed`)
    unless it gets full marks. A submission the grader fails on gets status ``grader-error`` and no
    score in the gradebook.
    ``seed``: the run's seed, from which every test draws its hidden inputs (the same seed gives the same
    verdicts and reuses the cache); default: the seed of the latest run if it did not finish (a rerun
    after a stop resumes it), else a fresh one (:meth:`~autograder.grading.submission.GradingRun.open`).
    Returns one :class:`Record` per submission (each holds the seed), sorted by lesson then student.
    """
    root = Path(root).resolve()
    limits = limits or load_policy(root).limits()
    if not cluster:  # below the required containment nothing is graded here (a Dask worker checks its own)
        try:
            check_level(limits.require)
        except GraderFault as fault:
            raise GradingError(f"nothing was graded: {fault.message}") from None
    found = sorted(submissions(root, lessons, students), key=lambda item: (item[1], item[0]))
    with GradingRun.open(root, limits=limits, seed=seed, use_cache=use_cache) as run:  # closed: its children end
        work = [Submission.read(root, student, lesson) for student, lesson in found]  # each read once, here
        started = time.monotonic()
        references = sorted({lesson for _, lesson in found}) if check_reference else []
        in_pool = bool(references) and jobs > 1 and not cluster and len(work) > 1  # the workers grade them first
        if references:
            if progress:
                print("checking each lesson's reference solution first (it must get full marks here) ...",
                      end="\n" if in_pool else " ", file=sys.stderr, flush=True)
            for lesson in [] if in_pool else references:
                canary(run, lesson)
            if progress and not in_pool:
                print(f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        elsewhere = bool(cluster) or jobs > 1  # phase 1 in other processes: phase 2 goes on beside it
        writer = LessonWriter(root, work, seed=run.seed, background=elsewhere, progress=progress) if gradebook else None
        with writer or contextlib.nullcontext():
            records = compute(run, work, jobs=jobs, progress=progress, cluster=cluster,
                              canaries=references if in_pool else [], writer=writer)
        if writer is not None and progress and writer.seconds:
            print("wrote the gradebook (nbgrader autograde) lesson by lesson while grading: "
                  + ", ".join(f"{lesson} {seconds:.0f} s" for lesson, seconds in sorted(writer.seconds.items())),
                  file=sys.stderr, flush=True)
        if writer is not None and writer.problems:
            raise GradingError("\n".join(writer.problems))
        if not any(r.status == STATUS_GRADER_ERROR for r in records):  # else the next run resumes this one
            run.finish()
    if progress:
        print(f"graded {len(records)} submission(s) in {time.monotonic() - started:.1f} s "
              f"({containment().level} containment, run seed {run.seed})", file=sys.stderr)
        banner = floor_banner(containment().level, limits.require)
        if banner and records:
            print(banner, file=sys.stderr)
    return records
