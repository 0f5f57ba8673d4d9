"""Grading many submissions: verdicts in parallel (phase 1), then one writer to the gradebook (phase 2).

Phase 1 computes each submission's verdicts in ``jobs`` worker processes (each with its own sandbox
uid), caches them under ``records/cache/`` and writes ``records/<lesson>/<student>.json``. With ``jobs`` > 1 the
workers first grade each lesson's reference (the canary), which also warms their templates. Phase 2
stages the sanitized notebooks (release notebook + the student's solution sources) and runs nbgrader's
autograde on them through its API, one lesson at a time, in this process: nbgrader's
``TrustedExecute`` preprocessor (see :mod:`autograder.grading.nbgrader_plugin`) writes the cached
verdicts into the test cells and nbgrader's own ``SaveAutoGrades`` scores them.

Every grading run has one seed (:func:`grade`'s ``seed``, else a fresh one), from which every test draws
its hidden inputs (``course.checks.run_seed``); the canary, every submission and every record share it,
and it is part of the cache key. A run killed half-way and started again resumes its seed
(:meth:`~autograder.grading.submission.GradingRun.open`), reuses the cache and ends with the same gradebook as
one clean run. Each submission is read, decided and recorded by :func:`~autograder.grading.submission.grade_one`
(on Dask: its two halves, :func:`~autograder.grading.submission.reused` here and ``recorded`` when the
worker's verdicts come back).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import nbformat

from autograder.grading import intake as intake_mod
from autograder.coursedir import CourseError, check_lessons, ensure_assignment
from autograder import coursedir, stopping
from autograder.grading.intake import Intake
from autograder.grading.lesson import load_lesson
from autograder.grading.policy import load_policy
from autograder.grading.sandbox import GraderFault, Limits, check_level, containment, floor_banner, sandbox_uid
from autograder.grading.submission import GradingRun, Submission, failure, grade_one, recorded, reused
from autograder.grading.verdicts import Verdicts, run_tests
from autograder.records import RECORDS, STATUS_GRADER_ERROR, Record, save_record
from autograder.safe_text import clean_text

REPO = Path(__file__).resolve().parents[2]
STAGING = "staging"

_SLOT = 0
#: How long the client waits for a Dask scheduler to answer before it gives up.
CLUSTER_CONNECT_SECONDS = 30


class GradingError(CourseError):
    """The batch cannot run at all (no such lesson, no gradebook entry and nbgrader failed, ...)."""


def cluster_verdicts(lesson, sources: dict[str, str], limits: Limits, root: str, seed: int) -> Verdicts:
    """On a Dask worker: the verdicts of one submission (its solution sources), in the same sandbox as
    local grading, with a sandbox uid of this worker process's own. Needs nothing of the course folder
    but the course's packages (the lesson and the sources come with the task); a
    :class:`GraderFault` travels back to the client, which records a grader error."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    return run_tests(lesson, sources, limits, uid=sandbox_uid(100 + os.getpid() % 800), root=Path(root), seed=seed)


def _init_worker(slots) -> None:
    global _SLOT
    _SLOT = slots.get()
    os.environ.setdefault("MPLBACKEND", "Agg")


def _work(run: GradingRun, student: str, lesson: str) -> Record:
    return grade_one(Submission.read(run.root, student, lesson), dataclasses.replace(run, slot=_SLOT))


def _canary_work(run: GradingRun, lesson: str) -> str:
    """In a pool worker: :func:`canary` of ``lesson`` ("" when the reference got full marks, else why not).
    It also starts the worker's warm template of the lesson, which the submissions then use."""
    try:
        canary(dataclasses.replace(run, slot=_SLOT), lesson)
    except CanaryFailed as failed:
        return str(failed)
    return ""


def _failed(run: GradingRun, student: str, lesson: str, status: str, message: str) -> Record:
    """The saved record of a submission the grader failed on (``grader-error``) or that broke its worker
    (``crash``): :func:`~autograder.grading.submission.failure`."""
    return failure(Submission.read(run.root, student, lesson), run, status, message)


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


def compute(run: GradingRun, work: list[tuple[str, str]], jobs: int = 1, progress: bool = True,
            cluster: str | None = None, canaries: list[str] = ()) -> list[Record]:
    """Phase 1: the record of every ``(student, lesson)`` in ``work`` in ``run`` (:func:`grade_one` of
    each), ``jobs`` at a time here, or on the workers of the Dask cluster whose scheduler is at
    ``cluster``. ``canaries`` (with ``jobs`` > 1): the lessons whose reference the pool's workers grade
    first, all of them before any submission (:class:`CanaryFailed`, nothing graded, unless each gets
    full marks)."""
    from tqdm import tqdm

    records: dict[tuple[str, str], Record] = {}
    bar = tqdm(total=len(work), desc="grading", unit="submission", disable=not progress, leave=True)
    try:
        if cluster:
            _cluster_round(run, work, records, bar, cluster)
        elif jobs <= 1:
            for student, lesson in work:
                try:
                    records[(student, lesson)] = grade_one(Submission.read(run.root, student, lesson), run)
                except Exception as exc:  # a grader bug must not lose the batch: record it
                    records[(student, lesson)] = _failed(run, student, lesson, STATUS_GRADER_ERROR, repr(exc))
                bar.update(1)
        else:
            pending = list(work)
            while pending:
                pending = _pool_round(run, pending, jobs, records, bar, canaries)
    finally:
        bar.close()
    return [records[item] for item in work]


def _pool_round(run: GradingRun, pending, jobs, records, bar, canaries=()) -> list:
    """Run ``pending`` in a pool (after the ``canaries``, see :func:`compute`); if the pool breaks (a
    worker was killed), return what is left. A submission that breaks a pool on its own gets a ``crash``
    record."""
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
        futures = {pool.submit(_work, run, s, l): (s, l) for s, l in pending}
        for future in as_completed(futures):
            item = futures[future]
            try:
                records[item] = future.result()
                bar.update(1)
            except BrokenProcessPool:
                left.append(item)
            except Exception as exc:  # a grader bug must not lose the batch: record it
                records[item] = _failed(run, item[0], item[1], STATUS_GRADER_ERROR, repr(exc))
                bar.update(1)
    if not left:
        return []
    if len(pending) == 1:
        item = left[0]
        records[item] = _failed(run, item[0], item[1], "crash", "grading this submission killed the grader's worker")
        bar.update(1)
        return []
    for item in left:  # one at a time, so that only the culprit is lost
        _pool_round(run, [item], 1, records, bar)
    return []


def _cluster_round(run: GradingRun, work, records, bar, address) -> None:
    """Phase 1 on a Dask cluster: the client (this process) reads each submission and decides what is
    reused (:func:`~autograder.grading.submission.reused`), sends what has to run to the workers
    (:func:`cluster_verdicts`) and writes every record itself. Tasks of a worker that dies are run again
    on another one by the scheduler; a submission that keeps killing workers ends as a ``crash`` record."""
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
        for student, lesson_name in work:
            try:
                submission = Submission.read(run.root, student, lesson_name)
                record = reused(submission, run)
            except Exception as exc:  # a grader bug must not lose the batch: record it
                record = _failed(run, student, lesson_name, STATUS_GRADER_ERROR, repr(exc))
            if record is not None:
                records[(student, lesson_name)] = record
                bar.update(1)
                continue
            future = client.submit(cluster_verdicts, submission.lesson, submission.sources, run.limits, str(run.root),
                                   run.seed, pure=False, key=f"grade-{lesson_name}-{student}-{uuid.uuid4().hex[:8]}")
            futures[future] = submission
        for future in completed(futures):
            submission = futures[future]
            item = (submission.student, submission.lesson.name)
            try:
                records[item] = recorded(submission, run, future.result())
            except GraderFault as fault:
                records[item] = failure(submission, run, STATUS_GRADER_ERROR, fault.message)
            except (KilledWorker, FutureCancelledError):
                records[item] = failure(submission, run, "crash", "grading this submission killed Dask workers again "
                                        "and again")
            except Exception as exc:  # a grader bug must not lose the batch: record it
                records[item] = failure(submission, run, STATUS_GRADER_ERROR, repr(exc))
            bar.update(1)


# ---------------------------------------------------------------------------------------------------
# Phase 2: nbgrader, one writer

SUBMISSION_SECRET = "submission_secret.txt"


def stage(root: Path, records: list[Record]) -> dict[tuple[str, str], str]:
    """Write the sanitized notebook of every record under ``records/staging/<student>/<lesson>/``, each on its
    own: returns ``{(student, lesson): why}`` for those that could not be staged (nothing of theirs is left
    there), so one submission never stops the staging of the others."""
    root = Path(root).resolve()
    staging = root / RECORDS / STAGING
    if staging.exists():
        shutil.rmtree(staging)
    lost: dict[tuple[str, str], str] = {}
    for record in records:
        out = staging / record.student / record.lesson
        try:
            lesson = load_lesson(record.lesson, root)
            folder = root / "submitted" / record.student / record.lesson
            taken = intake_mod.read_submission(folder, lesson)
            sources = taken.sources if taken.status == "ok" else {}
            out.mkdir(parents=True, exist_ok=True)
            nbformat.write(intake_mod.sanitized_notebook(lesson, sources), str(out / lesson.notebook_name))
            stamp = intake_mod.valid_timestamp(folder)
            if stamp:
                (out / "timestamp.txt").write_text(stamp + "\n")
            secret = intake_mod.valid_submission_secret(folder)
            if secret:  # nbgrader's release_feedback files the student's feedback under it (hub exchange)
                (out / SUBMISSION_SECRET).write_text(secret)
        except Exception as exc:  # this submission only: the others are staged and written
            shutil.rmtree(out, ignore_errors=True)
            lost[(record.student, record.lesson)] = f"its notebook could not be staged ({type(exc).__name__}: {exc})"
    return lost


def autograde_in_process(root: Path, lesson: str, records: list[Record], seed: int | None = None,
                         student: str = "*") -> str:
    """``nbgrader autograde <lesson>`` on the staged notebooks (of ``student``, or all), in this process through
    nbgrader's API (no interpreter to start, nbgrader imported once per batch:
    :func:`autograder.coursedir.nbgrader_api`), writing the ``records`` phase 1 made (``TrustedExecute.records``).
    Returns nbgrader's error text ("" when it went in). The course's ``nbgrader_config.py`` applies, as for
    the command."""
    config = coursedir.course_config(root)
    config.CourseDirectory.submitted_directory = f"{RECORDS}/{STAGING}"
    config.TrustedExecute.course_root = str(root)
    config.TrustedExecute.records = {f"{r.student}/{r.lesson}": r for r in records if r.lesson == lesson}
    if seed is not None:  # a verdict TrustedExecute has to compute itself uses the run's hidden inputs too
        config.TrustedExecute.seed = int(seed)
    result = coursedir.nbgrader_api(root, config,
                                    lambda api: api.autograde(lesson, student, force=True, create=True))
    stopping.check()  # nbgrader's API turns a stop into a failed result: stop here all the same
    return "" if result.get("success") else f"{result.get('log', '')[-3000:]}\n{result.get('error', '')[-3000:]}"


def _last_line(text: str) -> str:
    """What went wrong, in one line of nbgrader's error text (the trusted grader's own failure line, else its
    last exception line, else its last line)."""
    from autograder.grading.nbgrader_plugin import FAILED_ON

    lines = [line.strip() for line in text.splitlines() if line.strip()]
    ours = [line[line.index(FAILED_ON):] for line in lines if FAILED_ON in line]
    errors = [line for line in lines if "Error" in line.split(":")[0]]
    return (ours or errors or lines or ["(no message)"])[-1][:500]


def write_gradebook(root: Path, records: list[Record], progress: bool = False, seed: int | None = None) -> list[str]:
    """Phase 2: nbgrader autograde on the staged, sanitized notebooks, one lesson at a time, in this
    process (with ``progress``, a line per lesson on stderr). Each submission is staged and written on its
    own: one that cannot be (its notebook cannot be staged, or nbgrader fails on it, alone too) becomes a
    ``grader-error`` record, here and in ``records``, while the others' grades are written. Returns the
    problems that belong to no one submission (empty when all went in)."""
    root = Path(root).resolve()
    records = [r for r in records if r.status != STATUS_GRADER_ERROR]  # no score for the grader's failures
    if not records:
        return []
    lost = stage(root, records)
    problems = []
    lessons = sorted({r.lesson for r in records})
    for number, lesson in enumerate(lessons, 1):
        began = time.monotonic()
        staged = [r for r in records if r.lesson == lesson and (r.student, r.lesson) not in lost]
        if progress:
            print(f"writing the gradebook (nbgrader autograde): lesson {number} of {len(lessons)}, {lesson}, "
                  f"{len(staged)} submission(s) ...", end=" ", file=sys.stderr, flush=True)
        failed = ""
        if staged:
            ensure_assignment(root, lesson)
            failed = autograde_in_process(root, lesson, staged, seed)
        if failed:  # nbgrader goes on past a submission it fails on: which ones are missing, and why
            name = load_lesson(lesson, root).notebook_name
            missing = [r for r in staged if not (root / "autograded" / r.student / lesson / name).is_file()]
            for record in missing:
                alone = autograde_in_process(root, lesson, [record], seed, record.student)
                if alone:
                    lost[(record.student, lesson)] = f"nbgrader autograde failed on it ({_last_line(alone)})"
            if not missing:
                problems.append(f"nbgrader autograde {lesson} failed:\n{failed}")
        if progress:
            print("failed" if failed else f"{time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
    for record in records:
        if (record.student, record.lesson) in lost:
            record.status = STATUS_GRADER_ERROR
            record.reason = clean_text(f"the grader failed (not the student): the gradebook could not be written for "
                                       f"this submission: {lost[(record.student, record.lesson)]}; fix the cause "
                                       "and grade again")
            save_record(root, record)
    return problems


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
    work = sorted(submissions(root, lessons, students), key=lambda item: (item[1], item[0]))
    run = GradingRun.open(root, limits=limits, seed=seed, use_cache=use_cache)
    started = time.monotonic()
    references = sorted({lesson for _, lesson in work}) if check_reference else []
    in_pool = bool(references) and jobs > 1 and not cluster and len(work) > 1  # the workers grade them first
    if references:
        if progress:
            print("checking each lesson's reference solution first (it must get full marks here) ...",
                  end="\n" if in_pool else " ", file=sys.stderr, flush=True)
        for lesson in [] if in_pool else references:
            canary(run, lesson)
        if progress and not in_pool:
            print(f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    records = compute(run, work, jobs=jobs, progress=progress, cluster=cluster, canaries=references if in_pool else [])
    if gradebook and records:
        problems = write_gradebook(root, records, progress=progress, seed=run.seed)
        if problems:
            raise GradingError("\n".join(problems))
    if not any(r.status == STATUS_GRADER_ERROR for r in records):  # else the next run resumes this one
        run.finish()
    if progress:
        print(f"graded {len(records)} submission(s) in {time.monotonic() - started:.1f} s "
              f"({containment().level} containment, run seed {run.seed})", file=sys.stderr)
        banner = floor_banner(containment().level, limits.require)
        if banner and records:
            print(banner, file=sys.stderr)
    return records
