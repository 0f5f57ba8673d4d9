"""One path per submission: read once (:class:`Submission`), graded in a run (:class:`GradingRun`), decided
and recorded once (:func:`grade_one`).

Both graders take this path: ``avgpool-course grade`` (:mod:`.batch` maps :func:`grade_one` over the
submissions, in worker processes or on Dask) and ``nbgrader autograde``
(:class:`~autograder.grading.nbgrader_plugin.TrustedExecute`). So they reuse earlier verdicts in exactly
the same cases: :meth:`GradingRun.key` is the one key of the verdict cache (``records/cache/<key>.json``),
a hash of everything a verdict depends on (the submission's code and the lesson's trusted cells, the
limits, the run's seed, the grader's version, the rules' version, the containment level), and
:func:`reused` the one place that looks it up. Every :class:`~autograder.records.Record` of a grading is
built here, failures included (:meth:`Submission.failed`). ``records/run.json`` holds the seed of the
latest grading run and whether it finished (:meth:`GradingRun.open`, :meth:`GradingRun.finish`). A run's
children, warm templates and uid leases are its own (:attr:`GradingRun.resources`), ended by ``run.close()``.

    with GradingRun.open(root) as run:            # the course's policy, a resumed or fresh seed; closed at the end
        record = grade_one(Submission.read(root, "ann", "lesson1_by_hand"), run)   # saved under records/ too

Module-level state, and why it carries nothing of one student to another: :func:`rules_version`'s cache (a hash
of the ``course`` package's code, the same for every submission of the process) and ``_MAKING`` (a lock, no data).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import nbformat

from autograder.grading.intake import (INVALID, Intake, parse_submission, read_submission,
                                       sanitized_notebook, valid_submission_secret, valid_timestamp)
from autograder.grading.lesson import GRADER_VERSION, Lesson, load_lesson
from autograder.grading.policy import load_policy
from autograder.grading.sandbox import GraderFault, Limits, Resources, containment, level_meets, sandbox_uid
from autograder.grading.verdicts import TestResult, Verdicts, new_seed, run_tests
from autograder.records import RECORDS, STATUS_GRADER_ERROR, STATUS_OK, Record, read_json, save_record, write_json
from autograder.variants import graded_identity

#: How the reason of a grader's failure starts (the student is never blamed, no score is written).
GRADER_FAILED = "the grader failed (not the student): "
RUN_FILE = "run.json"
_MAKING = threading.Lock()  # held while a run makes its resources


@lru_cache(maxsize=1)
def rules_version() -> str:
    """A hash of the ``course`` package's code (the checks and rules every trusted test cell calls): a
    change of a rule changes every verdict's key, with no version to bump by hand."""
    import course

    digest = hashlib.sha256()
    folder = Path(course.__file__).resolve().parent
    for path in sorted(folder.rglob("*.py")):
        digest.update(f"{path.relative_to(folder)}\n".encode() + path.read_bytes() + b"\n")
    return digest.hexdigest()


def _limits_key(limits: Limits) -> dict:
    """The limits a verdict depends on (:meth:`Limits.as_dict`), each as its field's type: 5 and 5.0
    seconds are the same limits."""
    kinds = {f.name: f.type for f in dataclasses.fields(limits)}
    return {name: float(value) if kinds[name] in ("float", float) else value
            for name, value in limits.as_dict().items()}


def verdict_key(content_key: str, limits: Limits, seed: int, level: str, student: str | None = None) -> str:
    """The verdict cache's key: a hash of everything a verdict depends on (``content_key``: the student's
    code and the lesson's trusted cells, :meth:`Lesson.content_key`; the limits; the run's seed; the
    grader's and the rules' versions; the containment ``level`` it is graded at; the graded identity
    ``student`` where the lesson draws numbers per student, :mod:`autograder.variants`)."""
    payload = {"content": content_key, "limits": _limits_key(limits), "seed": int(seed), "grader": GRADER_VERSION,
               "rules": rules_version(), "level": level}
    if student is not None:
        payload["student"] = student
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Submission:
    """One submission, read once: whose (``student``), of which ``lesson``, what was taken of it
    (``intake``: status, reason, solution sources by grade_id, notes), and the hand-in's ``timestamp`` and
    ``secret`` as nbgrader wrote them (``None`` when missing or not valid)."""

    student: str
    lesson: Lesson
    intake: Intake
    timestamp: str | None = None
    secret: str | None = None

    @classmethod
    def read(cls, root: Path, student: str, lesson: str) -> "Submission":
        """``submitted/<student>/<lesson>/`` of course ``root`` (never raises for what a submission holds)."""
        taken = load_lesson(lesson, Path(root))
        folder = Path(root) / "submitted" / student / lesson
        try:
            intake = read_submission(folder, taken)
        except OSError as exc:  # the folder itself cannot be listed
            intake = Intake(INVALID, f"the submission cannot be read ({exc})")
        return cls(student, taken, intake, valid_timestamp(folder), valid_submission_secret(folder))

    @classmethod
    def from_notebook(cls, nb, lesson: Lesson, student: str) -> "Submission":
        """The submission of an in-memory notebook (nbgrader's, after its own sanitizing), taken as
        :meth:`read` takes a file."""
        try:
            data = json.dumps(nb if isinstance(nb, dict) else dict(nb)).encode()
        except (TypeError, ValueError) as exc:
            return cls(student, lesson, Intake(INVALID, f"the notebook cannot be read ({exc})"))
        return cls(student, lesson, parse_submission(data, lesson, student))

    @property
    def sources(self) -> dict[str, str]:
        """The solution sources that are graded (none unless the intake is ``ok``)."""
        return self.intake.sources if self.intake.status == STATUS_OK else {}

    @property
    def content_key(self) -> str:
        return self.lesson.content_key(self.sources)

    def notebook(self) -> nbformat.NotebookNode:
        """The sanitized notebook nbgrader sees: the release with these sources swapped in."""
        return sanitized_notebook(self.lesson, self.sources)

    def record(self, verdicts: Verdicts | None) -> Record:
        """The record of this submission from its ``verdicts`` (``None``: no code ran, since the intake
        failed; every test then fails with the intake's reason)."""
        if verdicts is None:
            return self.failed(self.intake.status, self.intake.reason, seed=None,
                               message=f"{self.intake.status}: {self.intake.reason}", fault=None)
        tests = [asdict(t) for t in verdicts.tests]
        score = float(sum(t["points"] for t in tests))
        kinds = verdicts.fault_kinds
        status = kinds[0] if kinds else STATUS_OK
        reason = "; ".join(verdicts.faults) if verdicts.faults else ""
        failed = [t["grade_id"] for t in tests if not t["passed"]]
        if not reason and failed:
            reason = f"{len(failed)} of {len(tests)} tests failed: {', '.join(failed)}"
        review = [t["grade_id"] for t in tests if t.get("review") is not None]
        if review:  # an answer in words, or code a rule could not prove either way: the instructor scores it by hand
            reason += f"; needs a look (0 until scored by hand): {', '.join(review)}"
        return Record(self.student, self.lesson.name, status, score, self.lesson.max_score, tests, reason,
                      verdicts.containment, verdicts.content_key, verdicts.cells, list(self.intake.notes),
                      verdicts.seconds, verdicts.seed, verdicts.level, dict(verdicts.phases))

    def failed(self, status: str, reason: str, *, seed: int | None, message: str | None = None,
               fault: str | None = "") -> Record:
        """A record without verdicts: ``status`` (``crash``: the submission broke the grader's worker;
        ``grader-error``: the grader failed, no score is written; an intake's status), every test 0 with
        ``message`` (default ``reason``) and ``fault`` (default ``status``)."""
        here = containment()
        return Record.failed(self.student, self.lesson.name, status, reason,
                             tests=[(t.id, t.points) for t in self.lesson.tests], max_score=self.lesson.max_score,
                             containment=here.describe(), content_key=self.content_key, notes=self.intake.notes,
                             seed=seed, level=here.level, message=message, fault=status if fault == "" else fault)


@dataclass(frozen=True)
class GradingRun:
    """One grading run of course ``root``: the ``limits`` of every child (with the containment floor,
    ``limits.require``), the ``seed`` every hidden input is drawn from, whether earlier verdicts may be
    reused (``use_cache``), and which sandbox uid of this process grades (``slot``). Its children, warm templates
    and uid leases in this process are its :attr:`resources`, made on first use and ended by :meth:`close`
    (``with GradingRun.open(...) as run:`` closes it); a copy (``dataclasses.replace``, or one sent to a worker
    process) has resources of its own."""

    root: Path
    limits: Limits
    seed: int
    use_cache: bool = True
    slot: int = 0

    def __post_init__(self):
        object.__setattr__(self, "root", Path(self.root).resolve())

    @classmethod
    def open(cls, root: Path, *, limits: Limits | None = None, seed: int | None = None, config=None,
             use_cache: bool = True, slot: int = 0) -> "GradingRun":
        """A run that starts now: ``limits`` (default: the course's policy, read from nbgrader's ``config``
        when given, else from ``nbgrader_config.py``) and ``seed`` (default: the latest run's when it did not
        finish, so the new run resumes it; else a fresh one), noted (unfinished) in ``records/run.json``."""
        root = Path(root).resolve()
        limits = limits or load_policy(root, config).limits()
        path = root / RECORDS / RUN_FILE
        if seed is None:
            last = read_json(path)
            resumable = isinstance(last, dict) and last.get("finished") is False and type(last.get("seed")) is int
            seed = last["seed"] if resumable else new_seed()
        write_json(path, {"seed": int(seed), "finished": False})
        return cls(root, limits, int(seed), use_cache, slot)

    @property
    def resources(self) -> Resources:
        """This run's :class:`~autograder.grading.sandbox.Resources` in this process (made on first use)."""
        with _MAKING:  # two threads of one run share one
            made = self.__dict__.get("_resources")
            if made is None or made.closed:
                made = Resources()
                object.__setattr__(self, "_resources", made)
        return made

    def close(self) -> None:
        """End every child of this run, close its warm templates and release its uid leases (in this process);
        nothing of another run's. The run may be used again: it then opens resources anew."""
        made = self.__dict__.pop("_resources", None)
        if made is not None:
            made.close()

    def __enter__(self) -> "GradingRun":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getstate__(self) -> dict:  # a copy in another process makes its own resources
        return {k: v for k, v in self.__dict__.items() if k != "_resources"}

    @property
    def floor(self) -> str:
        """The lowest containment level this run grades at (``c.SandboxPolicy.require``)."""
        return self.limits.require

    def finish(self) -> None:
        """Note in ``records/run.json`` that this run finished (the next run draws a fresh seed)."""
        write_json(self.root / RECORDS / RUN_FILE, {"seed": self.seed, "finished": True})

    def key(self, submission: Submission) -> str:
        """The verdict cache's key of ``submission`` in this run, at this machine's containment level."""
        return verdict_key(submission.content_key, self.limits, self.seed, containment().level,
                           self.identity(submission))

    def identity(self, submission: Submission) -> str | None:
        """Whose numbers ``submission`` is graded on (:func:`autograder.variants.graded_identity`): the
        student folder collect placed it in, never what the notebook says; ``None``: the lecture's."""
        return graded_identity(self.root, submission.student, submission.lesson.name)

    def cache_path(self, key: str) -> Path:
        return self.root / RECORDS / "cache" / f"{key}.json"

    def store(self, submission: Submission, verdicts: Verdicts) -> None:
        """Keep ``verdicts`` of ``submission`` for a later grading of the same key."""
        write_json(self.cache_path(self.key(submission)), verdicts.as_dict())

    def verdicts(self, submission: Submission) -> Verdicts:
        """Compute the verdicts of ``submission`` here, in a sandboxed child (a :class:`GraderFault` when
        the grader fails)."""
        return run_tests(submission.lesson, submission.sources, self.limits,
                         uid=sandbox_uid(self.slot, self.resources), root=self.root, seed=self.seed,
                         student=self.identity(submission), resources=self.resources)


def _verdicts_from(data) -> Verdicts | None:
    try:
        data = dict(data)
        data["tests"] = [TestResult(**t) for t in data["tests"]]
        return Verdicts(**data)
    except (TypeError, KeyError, ValueError):
        return None


def reused(submission: Submission, run: GradingRun) -> Record | None:
    """The record of ``submission`` when no student code has to run for it (saved): its intake failed, or
    ``run`` may reuse verdicts and holds them under :meth:`GradingRun.key`, graded at a level that meets its
    floor. ``None``: it has to be graded. The only place that decides reuse."""
    if submission.intake.status != STATUS_OK:
        return _saved(run, submission.record(None))
    cached = _verdicts_from(read_json(run.cache_path(run.key(submission))) or {}) if run.use_cache else None
    if cached is None or not level_meets(cached.level, run.floor):  # below the floor now required: grade again
        return None
    cached.phases = {**cached.phases, "reused": True}  # the phases of the grading that computed them
    return _saved(run, submission.record(cached))


def recorded(submission: Submission, run: GradingRun, verdicts: Verdicts) -> Record:
    """The record of ``verdicts`` computed for ``submission`` in ``run`` (kept for reuse, saved), with the
    seconds of the cache's write and the record's build as its ``record_wall`` phase."""
    started = time.monotonic()
    run.store(submission, verdicts)
    record = submission.record(verdicts)
    record.phases["record_wall"] = round(time.monotonic() - started, 4)
    return _saved(run, record)


def failure(submission: Submission, run: GradingRun, status: str, message: str) -> Record:
    """The record of a grading that failed (saved): ``grader-error`` (``message`` says why the grader
    failed; no score is written) or ``crash`` (grading it broke the grader's worker)."""
    reason = GRADER_FAILED + message if status == STATUS_GRADER_ERROR else message
    return _saved(run, submission.failed(status, reason, seed=run.seed))


def _saved(run: GradingRun, record: Record) -> Record:
    save_record(run.root, record)
    return record


def grade_one(submission: Submission, run: GradingRun, log=None) -> Record:
    """The record of ``submission`` in ``run``, also saved under ``records/``: reused (:func:`reused`) or
    computed in a sandboxed child (:func:`recorded`); a :class:`GraderFault` gives a ``grader-error``
    record. Never raises for anything a submission contains. ``log``: a logger told which of the two."""
    record = reused(submission, run)
    if log is not None:
        log.info("Trusted grader: %s verdicts for %s / %s", "reusing earlier" if record is not None else "computing",
                 submission.student, submission.lesson.name)
    if record is not None:
        return record
    try:
        verdicts = run.verdicts(submission)
    except GraderFault as fault:
        return failure(submission, run, STATUS_GRADER_ERROR, fault.message)
    return recorded(submission, run, verdicts)


__all__ = ["GRADER_FAILED", "GradingRun", "Submission", "failure", "grade_one", "recorded",
           "reused", "rules_version", "verdict_key"]
