"""The trusted grader inside ``nbgrader autograde`` and ``nbgrader generate_feedback``.

:class:`TrustedExecute` replaces nbgrader's ``Execute`` in ``Autograde.autograde_preprocessors``: instead
of running the notebook in a kernel shared with student code, it writes each test cell's trusted
verdict into the cell's outputs (the test's printed text for a pass; an ``error`` output carrying only
the failure message for a fail, never the hidden test's source, and without the expected value a
``course.checks.WrongValue`` names: :func:`autograder.outputs.verdict_output`), so that nbgrader's own
``SaveAutoGrades`` scores it. In phase 2 of ``avgpool-course grade`` it writes the records phase 1 made
(``c.TrustedExecute.records``, in-process); otherwise it grades the notebook by
:func:`~autograder.grading.submission.grade_one`, as the CLI does (the same key decides whether earlier
verdicts are reused: a plain ``nbgrader autograde`` is trusted too, and never disagrees with the CLI). Solution cells get the student's captured
output, capped. Manual grades are never touched (``SaveAutoGrades`` writes only ``auto_score``); a short
answer in words the grader cannot be sure of is flagged "needs manual grade" (:class:`TrustedSaveAutoGrades`).

:func:`autograder.outputs.reveal_expected` shows those expected values again from the record, when the instructor
releases them (``autograder.results.feedback_steps.ExpectedAnswers``). :func:`configure` is what ``nbgrader_config.py``
calls.

One grading run per nbgrader call: every notebook of one ``nbgrader autograde`` command, or of one formgrader
"autograde" action (one ``Autograde.start()``), is graded in one
:class:`~autograder.grading.submission.GradingRun` (one seed, one warm template per lesson), closed when the call
ends (:func:`one_run_per_call`). nbgrader has no hook at the end of a call (its pre/post convert hooks run per
submission and swallow errors; ``TrustedExecute`` is made anew for every notebook; ``AutogradeApp`` and
formgrader's API name the ``Autograde`` class itself), so :func:`configure` wraps ``Autograde.start`` in it.

Module-level state, and why it carries nothing of one student to another: ``_CALL`` (the grading runs of the
nbgrader call in progress in this thread, by course and seed; emptied and closed when the call ends: a run's
templates hold a lesson's set-up modules only, each child is forked fresh from them, as in ``avgpool-course grade``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from contextvars import ContextVar
from pathlib import Path

from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor, OverwriteCells, SaveAutoGrades
from traitlets import Dict, Integer, Unicode

from autograder.lessontext import hidden_test_lines
from autograder.outputs import verdict_output
from autograder.stopping import stoppable

#: The key of ``resources["nbgrader"]`` under which :class:`TrustedExecute` lists the test cells whose
#: verdict is a short answer to read by hand, for :class:`TrustedSaveAutoGrades`.
REVIEW = "trusted_needs_review"


#: How the one line of a :class:`TrustedGraderError` starts (``batch`` finds it in nbgrader's log).
FAILED_ON = "the trusted grader failed on"

#: The grading runs of the nbgrader call in progress in this thread (:func:`one_run_per_call`), by (course root,
#: seed); ``None`` outside any.
_CALL: ContextVar[dict | None] = ContextVar("trusted_grading_call", default=None)


@contextlib.contextmanager
def one_run_per_call():
    """Inside, every notebook :class:`TrustedExecute` grades (of one course and seed) is graded in one
    :class:`~autograder.grading.submission.GradingRun`, opened by the first one that computes verdicts; it is
    closed (its children and warm templates end) when the block ends, normally or by an exception, and a stop
    signal ends its processes first (:func:`autograder.stopping.stoppable`: SIGTERM, SIGINT, SIGHUP, then one
    line and exit where the host left the signals alone). Inside another one: that one's runs."""
    if _CALL.get() is not None:
        yield
        return
    runs: dict = {}
    token = _CALL.set(runs)
    try:
        with stoppable(exit=True):
            yield
    finally:
        _CALL.reset(token)
        for run in runs.values():
            run.close()


def _start_in_one_run(start):
    """``start`` (a converter's ``start``) inside :func:`one_run_per_call`."""
    if getattr(start, "one_run_per_call", False):
        return start

    @functools.wraps(start)
    def start_in_one_run(self, *args, **kwargs):
        with one_run_per_call():
            return start(self, *args, **kwargs)

    start_in_one_run.one_run_per_call = True
    return start_in_one_run


class TrustedGraderError(Exception):
    """The trusted grader could not grade this submission (a :class:`~autograder.grading.sandbox.GraderFault`):
    nbgrader counts it as failed (no score written, non-zero exit) and logs it as one line."""


class _OneLine(logging.Filter):
    """nbgrader logs the traceback of an exception a preprocessor raises; for a
    :class:`TrustedGraderError` it logs the error's one line instead."""

    MARK = f"\n{TrustedGraderError.__module__}.{TrustedGraderError.__qualname__}: "

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.msg if isinstance(record.msg, str) else ""
        if text.startswith("Traceback (most recent call last)") and self.MARK in text:
            record.msg, record.args = text.rsplit(self.MARK, 1)[1].strip(), ()
        return True


class TrustedExecute(NbGraderPreprocessor):
    """Write trusted verdicts into test cells instead of executing the notebook."""

    course_root = Unicode("", help="Course root (default: the current directory, as nbgrader uses)").tag(config=True)
    seed = Integer(None, allow_none=True, help="The grading run's seed (hidden inputs). Default: as for "
                   "avgpool-course grade, the latest run's when it did not finish, else a fresh one "
                   "(records/run.json)").tag(config=True)
    records = Dict(help="Phase 2 of avgpool-course grade: the records its phase 1 made, by 'student/lesson' "
                   "(written as they are when the notebook holds the same code; set in-process only)"
                   ).tag(config=True)
    # limits come from the one sandbox policy (c.SandboxPolicy.* in nbgrader_config.py, see policy.py)

    def preprocess(self, nb: NotebookNode, resources: dict):
        from autograder.grading.sandbox import GraderFault

        with stoppable(exit=True):  # SIGTERM, SIGINT, SIGHUP: the sandbox's processes end, then one line, exit
            try:
                return self._preprocess(nb, resources)
            except GraderFault as fault:  # the grader's failure: nbgrader fails this submission, in one line
                if not any(isinstance(f, _OneLine) for f in self.log.filters):
                    self.log.addFilter(_OneLine())
                info = resources["nbgrader"]
                message = " ".join(fault.message.split())
                raise TrustedGraderError(f"{FAILED_ON} {info['student']} / {info['assignment']} "
                                         f"(not the student's fault; no score written): {message}") from None

    def _preprocess(self, nb: NotebookNode, resources: dict):
        from autograder.grading.lesson import load_lesson
        from autograder.grading.policy import load_policy
        from autograder.grading.sandbox import GraderFault
        from autograder.grading.submission import GRADER_FAILED, Submission, grade_one
        from autograder.records import STATUS_GRADER_ERROR

        root = Path(self.course_root or ".").resolve()
        info = resources["nbgrader"]
        lesson = load_lesson(info["assignment"], root)
        submission = Submission.from_notebook(nb, lesson, info["student"])
        record = self.records.get(f"{submission.student}/{lesson.name}")
        if record is None or record.content_key != submission.content_key:
            with self._run(root) as run:
                self.output_chars = run.limits.output_chars
                record = grade_one(submission, run, self.log)
            if record.status == STATUS_GRADER_ERROR:  # recorded as the grader's failure (no score), then nbgrader's
                raise GraderFault(record.reason.removeprefix(GRADER_FAILED))
        else:
            self.output_chars = load_policy(root, self.config).limits().output_chars
        self._write(nb, record, hidden_test_lines(root, lesson.name))
        resources["nbgrader"][REVIEW] = [t["grade_id"] for t in record.tests if t.get("review") is not None]
        return nb, resources

    @contextlib.contextmanager
    def _run(self, root: Path):
        """The grading run of this nbgrader call (:func:`one_run_per_call`: opened now if it is the first notebook
        to grade, closed when the call ends); outside one, a run of this notebook alone, closed after it."""
        from autograder.grading.submission import GradingRun

        runs = _CALL.get()
        if runs is None:
            with GradingRun.open(root, seed=self.seed, config=self.config, slot=999) as run:  # its children end here
                yield run
            return
        key = (root, self.seed)
        if key not in runs:
            runs[key] = GradingRun.open(root, seed=self.seed, config=self.config, slot=999)
        yield runs[key]

    def _write(self, nb: NotebookNode, record, hidden: set[str] = frozenset()) -> None:
        """Each test cell's verdict as its output (:func:`verdict_output`: no hidden-test line, no expected
        value; feedback shows these outputs), each solution cell's captured output."""
        tests = {t["grade_id"]: t for t in record.tests}
        cells = {c["id"]: c for c in record.cells}
        header = "" if record.status == "ok" else f"[{record.status}] "
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            meta = cell.metadata.get("nbgrader", {})
            grade_id = meta.get("grade_id")
            cell.outputs = []
            cell.execution_count = None
            if meta.get("grade") and not meta.get("solution") and grade_id is not None:
                verdict = tests.get(grade_id)
                if verdict is None:
                    verdict = {"passed": False, "message": "this test cell is not part of the lesson's trusted tests"}
                cell.outputs.append(verdict_output(verdict, header, hidden, self.output_chars))
            elif meta.get("solution") and grade_id in cells:
                outcome = cells[grade_id]
                for stream in ("stdout", "stderr"):
                    text = outcome.get(stream) or ""
                    if text:
                        cell.outputs.append(NotebookNode(output_type="stream", name="stdout",
                                                         text=text[: self.output_chars]))
                error = outcome.get("error")
                if error:
                    name = str(error.get("type", "Error"))
                    value = str(error.get("message", ""))[: self.output_chars]
                    cell.outputs.append(NotebookNode(output_type="error", ename=name, evalue=value,
                                                     traceback=[f"{name}: {value}"]))


class TrustedSaveAutoGrades(SaveAutoGrades):
    """nbgrader's ``SaveAutoGrades``, which also flags every test cell whose verdict is to be read by hand (a
    short answer, or code a source rule could not prove allowed or forbidden: ``course.checks.NeedsReview``,
    listed by :class:`TrustedExecute` in the resources) as
    "needs manual grade": its auto score is 0, formgrader lists the submission as needing grading, and the
    instructor's manual score on the cell (formgrader's score box of an autograder test cell) replaces it."""

    def _add_score(self, cell: NotebookNode, resources: dict) -> None:
        super()._add_score(cell, resources)
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        if grade_id in resources["nbgrader"].get(REVIEW, ()):
            grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
            grade.needs_manual_grade = True
            self.gradebook.db.commit()


class RestoreReleasedCells(OverwriteCells):
    """nbgrader's ``OverwriteCells``, without its "checksum has changed" warning for every locked test cell
    that differs from ``source/`` only by the hidden tests the release removed (every test cell of every
    honest submission): such a cell is put back silently. Any other change of a locked cell is still
    reported and overwritten, as nbgrader does. Every text of the notebook is made safe to write first."""

    def preprocess(self, nb: NotebookNode, resources: dict):
        """nbgrader's, on the notebook with every text made safe to write (a lone surrogate in a submitted
        notebook, valid JSON, would stop nbgrader writing it: :func:`~autograder.safe_text.clean_tree`)."""
        from nbformat import from_dict

        from autograder.safe_text import clean_tree

        return super().preprocess(from_dict(clean_tree(nb)), resources)

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None and utils.is_locked(cell):
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source_cell = None
            if source_cell is not None and source_cell.cell_type == cell.cell_type:
                released = NotebookNode(cell_type=cell.cell_type, source=source_cell.source, metadata={})
                ClearHiddenTests(parent=self)._remove_hidden_test_region(released)
                if cell.source == released.source:
                    cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, cell_index)


def configure(c) -> None:
    """Wire the trusted grader into nbgrader's configuration object ``c`` (from ``nbgrader_config.py``).

    Autograde: ``TrustedExecute`` takes the place of ``Execute`` and ``TrustedSaveAutoGrades`` that of
    ``SaveAutoGrades``; the rest of nbgrader's list stays (``IgnorePattern``, ``ClearMetadataPreprocessor``,
    ``LimitOutput``, ``AssignLatePenalties``, ``CheckCellMetadata``). (Feedback's ``ClearHiddenTests`` is set in
    ``nbgrader_config.py`` itself, so it holds even where this module cannot be imported.)
    Sanitizing: nbgrader's own list, with :class:`RestoreReleasedCells` for ``OverwriteCells``.
    One grading run per call: ``Autograde.start`` (what ``nbgrader autograde`` and formgrader's autograde call,
    once per command or action) runs inside :func:`one_run_per_call`.
    """
    from nbgrader.converters import Autograde

    Autograde.start = _start_in_one_run(Autograde.start)
    c.Autograde.sanitize_preprocessors = [
        "nbgrader.preprocessors.ClearOutput",
        "nbgrader.preprocessors.DeduplicateIds",
        "nbgrader.preprocessors.OverwriteKernelspec",
        "autograder.grading.nbgrader_plugin.RestoreReleasedCells",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
    c.Autograde.autograde_preprocessors = [
        "autograder.grading.nbgrader_plugin.TrustedExecute",
        "nbgrader.preprocessors.IgnorePattern",
        "nbconvert.preprocessors.ClearMetadataPreprocessor",
        "nbgrader.preprocessors.LimitOutput",
        "autograder.grading.nbgrader_plugin.TrustedSaveAutoGrades",
        "nbgrader.preprocessors.AssignLatePenalties",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
