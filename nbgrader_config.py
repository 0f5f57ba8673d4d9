"""nbgrader configuration: the repository root is the course directory.

Traps this file avoids (see README, "For maintainers"):
- a test cell that writes to stderr scores 0, so known harmless warnings are removed before scoring;
- slow cells: a per-cell timeout that a correct solution never reaches, but a hang does;
- students need a stub that tells them what to do.
"""

import os
import warnings

# nbgrader 0.9's gradebook, under SQLAlchemy 2.1, warns for every submission it adds that an object "not
# in session" is skipped along a relationship; the row is added through the session itself, so the
# gradebook is complete (tests/e2e/test_wheel.py reads it back). Silenced so nbgrader's commands print none.
warnings.filterwarnings("ignore", message=r"Object of type <Submitted\w+> not in session")

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "avgpool-course"
# The folder of this file, absolute (a relative root makes every nbgrader command warn).
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))  # noqa: F821 (__file__: set by traitlets)
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
# Never copy caches or checkpoints to students.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*"]

c.ClearSolutions.code_stub = {
    "python": "# YOUR CODE HERE\nraise NotImplementedError(\"Write your solution here, then run the tests below.\")",
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Optional solution regions (helpers a student may not need) become a comment, not a raise that would
# stop Run All: nbgrader's own pipeline with ClearSolutions swapped for the subclass that knows them.
# Where the course's tools are missing (a student's copy), generate_assignment refuses instead of
# writing stubs that raise at the top level.
from nbgrader.converters.generate_assignment import GenerateAssignment  # noqa: E402
from nbgrader.preprocessors import ClearSolutions  # noqa: E402

try:
    from autograder.release.stubs import ClearSolutionsWithOptional
except ImportError as _stubs_missing:
    def ClearSolutionsWithOptional(nb, resources, _why=str(_stubs_missing)):  # noqa: N802
        raise RuntimeError(f"generate_assignment needs the course's tools (autograder.release.stubs): {_why}; "
                           "run it from the course repository with its .venv")

c.GenerateAssignment.preprocessors = [ClearSolutionsWithOptional if step is ClearSolutions else step
                                      for step in GenerateAssignment.class_traits()["preprocessors"].default()]

c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True

# Harmless library warnings on stderr must not zero a correct answer.
c.IgnorePattern.pattern = r"(?m)^.*(UserWarning|DeprecationWarning|FutureWarning|RuntimeWarning)\b.*$|^\s*warnings\.warn\(.*$"

# The one sandbox policy (autograder/grading/policy.py), read by `avgpool-course grade` and by
# `nbgrader autograde` alike. Defaults shown; set any of them here to change both.
# c.SandboxPolicy.test_seconds = 60.0     # student code of one test cell, all its requests
# c.SandboxPolicy.cell_seconds = 60.0     # each solution cell
# c.SandboxPolicy.start_seconds = 120.0   # set-up before any student code runs
# c.SandboxPolicy.memory_mb = 4096
# c.SandboxPolicy.file_mb = 16
# c.SandboxPolicy.nproc = 64          # processes and threads: every lesson's reference needs at most 3
# c.SandboxPolicy.nofile = 256       # descriptors per process (the machine's file table is shared), 16 or more
# c.SandboxPolicy.msgqueue_kb = 128   # POSIX message queues, KiB (one queue of the default size)
# c.SandboxPolicy.memlock_kb = 64     # locked memory per process, KiB; these three at most the grading
#                                     # process's own hard limit (a child cannot get more): refused above it
# c.SandboxPolicy.output_chars = 20000
# c.SandboxPolicy.reply_mb = 256
# c.SandboxPolicy.require = "platform"  # the lowest containment to grade at: "platform" (the strongest the
#                                     # platform offers: namespaces as root, user-namespace otherwise, both
#                                     # through bubblewrap), or rlimits-only, user-namespace, namespaces, each
#                                     # optionally +cgroup. Below the platform's own only on purpose: every
#                                     # output then says so.

# Feedback shows the gradebook's scores and comments and each test's verdict and message, never the hidden
# tests' source (nbgrader's ClearHiddenTests); its math is MathML, which renders offline (no MathJax from
# the network). Without the course's tools (autograder.results.feedback_steps) generate_feedback refuses instead
# of writing pages of raw TeX.
try:
    from autograder.results.feedback_steps import (ExpectedAnswers, FeedbackPage, HiddenTestsCleared, MathToMathML,
                                                   TestRows)
except ImportError as _steps_missing:
    def _refuse_feedback(nb, resources, _why=str(_steps_missing)):
        raise RuntimeError(f"generate_feedback needs the course's tools (autograder.results.feedback_steps): {_why}; "
                           "install the grader with pip install '.[grader]' in the course repository, or use "
                           "its .venv")

    ExpectedAnswers = HiddenTestsCleared = MathToMathML = TestRows = _refuse_feedback
else:
    # The page heads with the graded cells by exercise and what each checks, lost points first, each a link
    # (TestRows and the template feedback-rows, which extends nbgrader's own feedback template). Set on the
    # feedback's own exporter, never on HTMLExporter: formgrader's view of a submission is an HTMLExporter too.
    c.GenerateFeedback.exporter_class = FeedbackPage

# Expected answers: a failed check that names the expected value (check_value, check_array's values: a
# knowledge check's key, a prediction, a number worked out by hand, a hidden test's reference output) says
# in the graded notebook and in feedback only which check failed, what the student gave and "not the
# expected value", so feedback hands out no key while students may resubmit; every record under records/
# keeps the full message. To release them (after the last resubmission): set this to True and run
# `avgpool-course feedback` (or `nbgrader generate_feedback --force`) again, then release_feedback; no
# regrading. Answers in words sent to the instructor (check_words) and plain asserts show their own messages, which name no key.
c.ExpectedAnswers.reveal = False

c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    HiddenTestsCleared,
    ExpectedAnswers,
    MathToMathML,
    TestRows,
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# Trusted autograding (autograder/grading): `nbgrader autograde` writes verdicts computed by a parent
# process that never runs student code (TrustedExecute replaces Execute; TrustedSaveAutoGrades, nbgrader's
# SaveAutoGrades that also flags short answers to read by hand; IgnorePattern, LimitOutput and late
# penalties stay), and `nbgrader generate_feedback` hides the hidden tests'
# source. Where the trusted grader cannot be imported (a student's copy of the course, a Python without
# the grader installed), every other command works as usual, but `nbgrader autograde` refuses to run:
# it never falls back to executing submissions in a kernel shared with student code.
try:
    from autograder.grading.nbgrader_plugin import configure as _configure_trusted_grading
except ImportError as _exc:
    _TRUSTED_MISSING = (
        f"nbgrader autograde refuses to run: the trusted grader cannot be imported ({_exc}); grading without "
        "it would run student code in nbgrader's own kernel. Install the grader with `pip install .` in the "
        "course repository, or run nbgrader from the repository with its .venv."
    )

    class TrustedGraderMissing(RuntimeError):
        """Raised for every submission that `nbgrader autograde` is asked to grade without the trusted grader."""

    def _refuse_untrusted_autograde(nb, resources):
        raise TrustedGraderMissing(_TRUSTED_MISSING)

    # Both steps of autograde (sanitize, then grade) refuse, before anything is executed or scored.
    c.Autograde.sanitize_preprocessors = [_refuse_untrusted_autograde]
    c.Autograde.autograde_preprocessors = [_refuse_untrusted_autograde]
else:
    _configure_trusted_grading(c)

# --- Late work (issue 16) ----------------------------------------------------------------------------
# `avgpool-course collect --due LESSON=DATE` stores the due dates in the gradebook and each submission's
# time in timestamp.txt; `nbgrader autograde` (which `avgpool-course grade` runs, AssignLatePenalties kept
# in the trusted list) then records how late each one is and applies this penalty; `avgpool-course export`
# takes it off the score and writes <lesson>_hours_late and <lesson>_penalty in grades.csv.
# nbgrader's built-in methods: "none" (the default: lateness recorded, no penalty) and "zero".
# c.LateSubmissionPlugin.penalty_method = "zero"
# Another rule (e.g. 10 % a day): a subclass of nbgrader.plugins.LateSubmissionPlugin, named here:
# c.AssignLatePenalties.plugin_class = "mymodule.TenPercentADay"

# --- nbgrader zip_collect with the placing rules of `avgpool-course collect` (autograder/collect/) ---
# (Only zip_collect imports them; every other command works where the course's tools are missing.)
c.ZipCollectApp.extractor_plugin = "autograder.collect.zip_collect.LMSExtractor"
c.ZipCollectApp.collector_plugin = "autograder.collect.zip_collect.LMSCollector"

# --- nbgrader collect (and formgrader's Collect) from nbgrader's exchange: the course's collect ---------
# (autograder/collect/exchange.py): the student is the account that owns the hand-in (never the name written
# in it), its time the latest change time the kernel recorded (the student's timestamp.txt only shown
# beside it), no link, device or FIFO followed, files, bytes and depth bounded; every refusal reported.
# Where the course's tools are missing, collect refuses instead of trusting the names in the exchange.
try:
    from autograder.collect.exchange import CourseExchangeCollect
except ImportError as _collect_missing:
    from nbgrader.exchange.default.collect import ExchangeCollect as _NbgraderCollect

    class CourseExchangeCollect(_NbgraderCollect):
        """Refuses: nbgrader's own collect believes the names and times students write in the exchange."""

        def init_src(self, _why=str(_collect_missing)):
            self.fail(f"nbgrader collect needs the course's tools (autograder.collect.exchange): {_why}; run it "
                      "from the course repository with its .venv")

c.ExchangeFactory.collect = CourseExchangeCollect
