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
(:func:`~autograder.grading.records.run_seed`), reuses the cache and ends with the same gradebook as one
clean run.
"""

from __future__ import annotations

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
from autograder.grading.lesson import load_lesson
from autograder.grading.records import cache_key, cache_path, make_record, run_finished, run_seed
from autograder.grading.policy import load_policy
from autograder.grading.sandbox import (GraderFault, Limits, check_level, containment, floor_banner, level_meets,
                                        sandbox_uid)
from autograder.grading.verdicts import Verdicts, TestResult, run_tests
from autograder.records import RECORDS, STATUS_GRADER_ERROR, Record, read_json, save_record, write_json
from autograder.safe_text import clean_text
from autograder.variants import graded_identity

REPO = Path(__file__).resolve().parents[2]
STAGING = "staging"

_SLOT = 0
#: How long the client waits for a Dask scheduler to answer before it gives up.
CLUSTER_CONNECT_SECONDS = 30


class GradingError(CourseError):
    """The batch cannot run at all (no such lesson, no gradebook entry and nbgrader failed, ...)."""


def _verdicts_from(data: dict) -> Verdicts | None:
    try:
        data = dict(data)
        data["tests"] = [TestResult(**t) for t in data["tests"]]
        return Verdicts(**data)
    except (TypeError, KeyError):
        return None


def _opened(root: Path, student: str, lesson_name: str, limits: Limits, use_cache: bool, seed: int):
    """``(lesson, taken, key, record)`` of one submission: ``record`` is already final (and saved) when
    no student code has to run (not a readable notebook, or its verdicts are cached), else ``None``."""
    lesson = load_lesson(lesson_name, root)
    taken = intake_mod.read_submission(root / "submitted" / student / lesson_name, lesson)
    if taken.status != "ok":
        record = make_record(student, lesson, taken, None, containment().describe())
        save_record(root, record)
        return lesson, taken, None, record
    key = cache_key(lesson.content_key(taken.sources), limits, seed, graded_identity(root, student, lesson_name))
    cached = _verdicts_from(read_json(cache_path(root, key)) or {}) if use_cache else None
    if cached is not None and not level_meets(cached.level, limits.require):
        cached = None  # graded below the containment now required: grade again
    record = _finished(root, student, lesson, taken, key, cached, store=False) if cached is not None else None
    return lesson, taken, key, record


def _finished(root: Path, student: str, lesson, taken, key: str, verdicts: Verdicts, store: bool = True) -> Record:
    """The record of computed ``verdicts`` (cached under ``key`` when ``store``), saved."""
    if store:
        write_json(cache_path(root, key), verdicts.as_dict())
    record = make_record(student, lesson, taken, verdicts, verdicts.containment or containment().describe())
    save_record(root, record)
    return record


def grade_submission(root: Path, student: str, lesson_name: str, limits: Limits | None = None, *, seed: int,
                     slot: int = 0, use_cache: bool = True) -> Record:
    """Phase 1 for one submission ``submitted/<student>/<lesson>/`` with the hidden inputs of run ``seed``:
    its record (also saved under ``records/``). Never raises for anything a submission contains."""
    root = Path(root).resolve()
    limits = limits or load_policy(root).limits()
    lesson, taken, key, record = _opened(root, student, lesson_name, limits, use_cache, seed)
    if record is not None:
        return record
    try:
        verdicts = run_tests(lesson, taken.sources, limits, uid=sandbox_uid(slot), root=root, seed=seed,
                             student=graded_identity(root, student, lesson_name))
    except GraderFault as fault:
        return _grader_error_record(root, student, lesson_name, fault.message, seed)
    return _finished(root, student, lesson, taken, key, verdicts)


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
    global _SLOT
    _SLOT = slots.get()
    os.environ.setdefault("MPLBACKEND", "Agg")


def _work(root: str, student: str, lesson: str, limits: Limits, use_cache: bool, seed: int) -> Record:
    return grade_submission(Path(root), student, lesson, limits, seed=seed, slot=_SLOT, use_cache=use_cache)


def _canary_work(root: str, lesson: str, limits: Limits, seed: int) -> str:
    """In a pool worker: :func:`canary` of ``lesson`` ("" when the reference got full marks, else why not).
    It also starts the worker's warm template of the lesson, which the submissions then use."""
    try:
        canary(Path(root), lesson, limits, seed, slot=_SLOT)
    except CanaryFailed as failed:
        return str(failed)
    return ""


def _failed_record(root: Path, student: str, lesson_name: str, message: str, status: str, seed: int) -> Record:
    """A record without verdicts: ``crash`` (the submission broke the grader's worker) or
    ``grader-error`` (the grader failed; no score goes into the gradebook)."""
    lesson = load_lesson(lesson_name, root)
    tests = [{"grade_id": t.id, "points": 0.0, "max_points": t.points, "passed": False, "message": message,
              "seconds": 0.0, "fault": status, "output": ""} for t in lesson.tests]
    taken = intake_mod.read_submission(root / "submitted" / student / lesson_name, lesson)
    record = Record(student, lesson_name, status, 0.0, lesson.max_score, tests, message, containment().describe(),
                    lesson.content_key(taken.sources), [], taken.notes, seed=seed, level=containment().level)
    save_record(root, record)
    return record


def _crash_record(root: Path, student: str, lesson_name: str, message: str, seed: int) -> Record:
    return _failed_record(root, student, lesson_name, message, "crash", seed)


def _grader_error_record(root: Path, student: str, lesson_name: str, message: str, seed: int) -> Record:
    return _failed_record(root, student, lesson_name, f"the grader failed (not the student): {message}",
                          STATUS_GRADER_ERROR, seed)


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


def compute(root: Path, work: list[tuple[str, str]], limits: Limits, jobs: int = 1, progress: bool = True,
            use_cache: bool = True, cluster: str | None = None, canaries: list[str] = (), *,
            seed: int) -> list[Record]:
    """Phase 1: the record of every ``(student, lesson)`` in ``work`` with the hidden inputs of run
    ``seed``, ``jobs`` at a time here, or on the
    workers of the Dask cluster whose scheduler is at ``cluster``. ``canaries`` (with ``jobs`` > 1): the
    lessons whose reference the pool's workers grade first, all of them before any submission
    (:class:`CanaryFailed`, nothing graded, unless each gets full marks)."""
    from tqdm import tqdm

    root = Path(root).resolve()
    records: dict[tuple[str, str], Record] = {}
    bar = tqdm(total=len(work), desc="grading", unit="submission", disable=not progress, leave=True)
    try:
        if cluster:
            _cluster_round(root, work, limits, use_cache, records, bar, cluster, seed)
        elif jobs <= 1:
            for student, lesson in work:
                try:
                    records[(student, lesson)] = grade_submission(root, student, lesson, limits, seed=seed,
                                                                  use_cache=use_cache)
                except Exception as exc:  # a grader bug must not lose the batch: record it
                    records[(student, lesson)] = _grader_error_record(root, student, lesson, repr(exc), seed)
                bar.update(1)
        else:
            pending = list(work)
            while pending:
                pending = _pool_round(root, pending, limits, jobs, use_cache, records, bar, seed, canaries)
    finally:
        bar.close()
    return [records[item] for item in work]


def _pool_round(root, pending, limits, jobs, use_cache, records, bar, seed, canaries=()) -> list:
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
            failed = [f for f in pool.map(_canary_work, [str(root)] * len(canaries), canaries,
                                          [limits] * len(canaries), [seed] * len(canaries)) if f]
        except BrokenProcessPool:
            failed = ["a grading worker died while it graded a lesson's reference solution; nothing was graded"]
        if failed:
            raise CanaryFailed("; ".join(failed))
        futures = {pool.submit(_work, str(root), s, l, limits, use_cache, seed): (s, l) for s, l in pending}
        for future in as_completed(futures):
            item = futures[future]
            try:
                records[item] = future.result()
                bar.update(1)
            except BrokenProcessPool:
                left.append(item)
            except Exception as exc:  # a grader bug must not lose the batch: record it
                records[item] = _grader_error_record(root, item[0], item[1], repr(exc), seed)
                bar.update(1)
    if not left:
        return []
    if len(pending) == 1:
        item = left[0]
        records[item] = _crash_record(root, item[0], item[1], "grading this submission killed the grader's worker",
                                      seed)
        bar.update(1)
        return []
    for item in left:  # one at a time, so that only the culprit is lost
        _pool_round(root, [item], limits, 1, use_cache, records, bar, seed)
    return []


def _cluster_round(root, work, limits, use_cache, records, bar, address, seed) -> None:
    """Phase 1 on a Dask cluster: the client (this process) reads each submission and its cache, sends
    what has to run to the workers (:func:`cluster_verdicts`) and writes every record itself. Tasks of
    a worker that dies are run again on another one by the scheduler; a submission that keeps killing
    workers ends as a ``crash`` record."""
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
                lesson, taken, key, record = _opened(root, student, lesson_name, limits, use_cache, seed)
            except Exception as exc:  # a grader bug must not lose the batch: record it
                record = _grader_error_record(root, student, lesson_name, repr(exc), seed)
                lesson, taken, key = None, None, None
            if record is not None:
                records[(student, lesson_name)] = record
                bar.update(1)
                continue
            future = client.submit(cluster_verdicts, lesson, taken.sources, limits, str(root), seed,
                                   graded_identity(root, student, lesson_name), pure=False,
                                   key=f"grade-{lesson_name}-{student}-{uuid.uuid4().hex[:8]}")
            futures[future] = (student, lesson, taken, key)
        for future in completed(futures):
            student, lesson, taken, key = futures[future]
            try:
                records[(student, lesson.name)] = _finished(root, student, lesson, taken, key, future.result())
            except GraderFault as fault:
                records[(student, lesson.name)] = _grader_error_record(root, student, lesson.name, fault.message,
                                                                       seed)
            except (KilledWorker, FutureCancelledError):
                records[(student, lesson.name)] = _crash_record(root, student, lesson.name, "grading this submission "
                                                                "killed Dask workers again and again", seed)
            except Exception as exc:  # a grader bug must not lose the batch: record it
                records[(student, lesson.name)] = _grader_error_record(root, student, lesson.name, repr(exc), seed)
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


def autograde_in_process(root: Path, lesson: str, seed: int | None = None, student: str = "*") -> str:
    """``nbgrader autograde <lesson>`` on the staged notebooks (of ``student``, or all), in this process through
    nbgrader's API (no interpreter to start, nbgrader imported once per batch:
    :func:`autograder.coursedir.nbgrader_api`). Returns nbgrader's error text ("" when it went in). The course's ``nbgrader_config.py`` applies, as for the command."""
    config = coursedir.course_config(root)
    config.CourseDirectory.submitted_directory = f"{RECORDS}/{STAGING}"
    config.TrustedExecute.course_root = str(root)
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
            failed = autograde_in_process(root, lesson, seed)
        if failed:  # nbgrader goes on past a submission it fails on: which ones are missing, and why
            name = load_lesson(lesson, root).notebook_name
            missing = [r for r in staged if not (root / "autograded" / r.student / lesson / name).is_file()]
            for record in missing:
                alone = autograde_in_process(root, lesson, seed, record.student)
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


def canary(root: Path, lesson_name: str, limits: Limits, seed: int, slot: int = 0) -> None:
    """Grade the lesson's own reference solution first, with the run's ``seed`` (the hidden inputs the
    submissions get); anything short of full marks means this grader cannot be trusted today (a missing
    package, a broken sandbox, limits too tight for the machine). Full marks go into the verdict cache,
    so a submission of the reference's code is not graded twice."""
    lesson = load_lesson(lesson_name, root)
    try:
        verdicts = run_tests(lesson, lesson.reference_sources(), limits, uid=sandbox_uid(slot), root=root, seed=seed)
    except GraderFault as fault:
        raise CanaryFailed(f"{lesson_name}: the reference solution could not be graded ({fault.message}); "
                           "nothing was graded") from None
    lost = [f"{t.grade_id} ({t.fault or 'failed'}: {t.message[:200]})" for t in verdicts.tests if not t.passed]
    if lost:
        raise CanaryFailed(f"{lesson_name}: the reference solution lost points on {'; '.join(lost)} (run seed "
                           f"{seed}); the grader or this machine is broken (or the limits are too tight), so "
                           "nothing was graded")
    # the verdicts of the reference's code: a submission of the same code is not graded again in this run
    write_json(cache_path(root, cache_key(lesson.content_key(lesson.reference_sources()), limits, seed)),
               verdicts.as_dict())


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
    after a stop resumes it), else a fresh one (:func:`~autograder.grading.records.run_seed`).
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
    seed = run_seed(root, seed)
    started = time.monotonic()
    references = sorted({lesson for _, lesson in work}) if check_reference else []
    in_pool = bool(references) and jobs > 1 and not cluster and len(work) > 1  # the workers grade them first
    if references:
        if progress:
            print("checking each lesson's reference solution first (it must get full marks here) ...",
                  end="\n" if in_pool else " ", file=sys.stderr, flush=True)
        for lesson in [] if in_pool else references:
            canary(root, lesson, limits, seed)
        if progress and not in_pool:
            print(f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    records = compute(root, work, limits, jobs=jobs, progress=progress, use_cache=use_cache, cluster=cluster,
                      canaries=references if in_pool else [], seed=seed)
    if gradebook and records:
        problems = write_gradebook(root, records, progress=progress, seed=seed)
        if problems:
            raise GradingError("\n".join(problems))
    if not any(r.status == STATUS_GRADER_ERROR for r in records):  # else the next run resumes this one
        run_finished(root, seed)
    if progress:
        print(f"graded {len(records)} submission(s) in {time.monotonic() - started:.1f} s "
              f"({containment().level} containment, run seed {seed})", file=sys.stderr)
        banner = floor_banner(containment().level, limits.require)
        if banner and records:
            print(banner, file=sys.stderr)
    return records
