"""Phase 2 of ``avgpool-course grade``: the gradebook's one writer. The submissions phase 1 read are staged
as sanitized notebooks (release notebook + the student's solution sources) under ``records/staging/``, and
nbgrader's autograde runs on them through its API, one lesson at a time, in this process: nbgrader's
``TrustedExecute`` preprocessor (:mod:`autograder.grading.nbgrader_plugin`) writes the records phase 1 made
into the test cells and nbgrader's own ``SaveAutoGrades`` scores them.

    problems = write_gradebook(root, [(submission, record), ...], seed=run.seed)

While a pool or a cluster grades (this process only waits for them), :class:`LessonWriter` writes each lesson as
soon as its last record is in, in one thread of this process (still the one writer, one lesson at a time):

    with LessonWriter(root, work, seed=run.seed, background=True) as writer:
        ... writer.add(submission, record) as each record comes in ...
    problems = writer.problems
"""

from __future__ import annotations

import shutil
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

from autograder import coursedir, stopping
from autograder.coursedir import ensure_assignment
from autograder.grading.submission import GRADER_FAILED, Submission
from autograder.records import RECORDS, STATUS_GRADER_ERROR, Record, save_record
from autograder.safe_text import clean_text

STAGING = "staging"

SUBMISSION_SECRET = "submission_secret.txt"


def stage(root: Path, submissions: list[Submission]) -> dict[tuple[str, str], str]:
    """Write the sanitized notebook of every submission (as phase 1 read it: nothing is read from
    ``submitted/`` again) under ``records/staging/<student>/<lesson>/``, with its time and secret, each on
    its own: returns ``{(student, lesson): why}`` for those that could not be staged (nothing of theirs is
    left there), so one submission never stops the staging of the others."""
    root = Path(root).resolve()
    staging = root / RECORDS / STAGING
    if staging.exists():
        shutil.rmtree(staging)
    lost: dict[tuple[str, str], str] = {}
    for submission in submissions:
        lesson = submission.lesson
        out = staging / submission.student / lesson.name
        try:
            out.mkdir(parents=True, exist_ok=True)
            nbformat.write(submission.notebook(), str(out / lesson.notebook_name))
            if submission.timestamp:
                (out / "timestamp.txt").write_text(submission.timestamp + "\n")
            if submission.secret:  # nbgrader's release_feedback files the student's feedback under it (hub exchange)
                (out / SUBMISSION_SECRET).write_text(submission.secret)
        except Exception as exc:  # this submission only: the others are staged and written
            shutil.rmtree(out, ignore_errors=True)
            lost[(submission.student, lesson.name)] = f"its notebook could not be staged ({type(exc).__name__}: {exc})"
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


def failure_line(text: str) -> str:
    """What went wrong, in one line of nbgrader's error text (the trusted grader's own failure line, else its
    last exception line, else its last line)."""
    from autograder.grading.nbgrader_plugin import FAILED_ON

    lines = [line.strip() for line in text.splitlines() if line.strip()]
    ours = [line[line.index(FAILED_ON):] for line in lines if FAILED_ON in line]
    errors = [line for line in lines if "Error" in line.split(":")[0]]
    return (ours or errors or lines or ["(no message)"])[-1][:500]


def write_gradebook(root: Path, graded: list[tuple[Submission, Record]], progress: bool = False,
                    seed: int | None = None) -> list[str]:
    """Phase 2: nbgrader autograde on the staged, sanitized notebooks of the ``graded`` submissions (each with
    the record phase 1 made of it), one lesson at a time, in this process (with ``progress``, a line per lesson
    on stderr). Each submission is staged and written on its own: one that cannot be (its notebook cannot be
    staged, or nbgrader fails on it, alone too) becomes a ``grader-error`` record, here and in ``graded``,
    while the others' grades are written. Returns the problems that belong to no one submission (empty when
    all went in)."""
    root = Path(root).resolve()
    graded = [(s, r) for s, r in graded if r.status != STATUS_GRADER_ERROR]  # no score for the grader's failures
    if not graded:
        return []
    records = [r for _, r in graded]
    lost = stage(root, [s for s, _ in graded])
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
            name = next(s.lesson.notebook_name for s, _ in graded if s.lesson.name == lesson)
            missing = [r for r in staged if not (root / "autograded" / r.student / lesson / name).is_file()]
            for record in missing:
                alone = autograde_in_process(root, lesson, [record], seed, record.student)
                if alone:
                    lost[(record.student, lesson)] = f"nbgrader autograde failed on it ({failure_line(alone)})"
            if not missing:
                problems.append(f"nbgrader autograde {lesson} failed:\n{failed}")
        if progress:
            print("failed" if failed else f"{time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
    for record in records:
        if (record.student, record.lesson) in lost:
            record.status = STATUS_GRADER_ERROR
            record.reason = clean_text(f"{GRADER_FAILED}the gradebook could not be written for this submission: "
                                       f"{lost[(record.student, record.lesson)]}; fix the cause and grade again")
            save_record(root, record)
    return problems


class LessonWriter:
    """Phase 2 for the submissions of ``work``, fed record by record (:meth:`add`, in any order): with
    ``background``, each lesson's :func:`write_gradebook` starts in one thread of this process as soon as the
    lesson's last record is in (the lessons after it are still being graded, by other processes); without, every
    lesson is written when the block ends. A lesson with a record missing at the end (the block ended on an
    error or a stop) is not written. ``problems``: what :func:`write_gradebook` returned, every lesson's; ``seconds``:
    how long each lesson's writing took in the background (``progress``: without, each lesson's line on stderr)."""

    def __init__(self, root: Path, work: list[Submission], seed: int | None = None, background: bool = False,
                 progress: bool = False):
        self.root, self.seed, self.progress = root, seed, progress
        self.missing = Counter(submission.lesson.name for submission in work)
        self.graded: dict[str, list[tuple[Submission, Record]]] = {}
        self.problems: list[str] = []
        self.seconds: dict[str, float] = {}
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradebook") if background else None
        self.started: list = []

    def add(self, submission: Submission, record: Record) -> None:
        lesson = submission.lesson.name
        self.graded.setdefault(lesson, []).append((submission, record))
        self.missing[lesson] -= 1
        if self.missing[lesson] == 0 and self.thread is not None:
            self.started.append(self.thread.submit(self._write, lesson))

    def _write(self, lesson: str) -> None:  # in the background: no line of its own under the progress bar
        began = time.monotonic()
        self.problems += write_gradebook(self.root, self.graded[lesson], seed=self.seed)
        self.seconds[lesson] = time.monotonic() - began

    def __enter__(self) -> "LessonWriter":
        return self

    def __exit__(self, kind, error, trace) -> None:
        if self.thread is not None:
            self.thread.shutdown(wait=True, cancel_futures=kind is not None)
            for future in self.started:
                if error is None and not future.cancelled():
                    future.result()  # an error of the writer's is raised here, in the caller's thread
        elif error is None:
            complete = [(s, r) for lesson in sorted(self.graded) if not self.missing[lesson]
                        for s, r in self.graded[lesson]]
            if complete:
                self.problems += write_gradebook(self.root, complete, progress=self.progress, seed=self.seed)
