"""nbgrader configuration: the repository root is the course directory.

Traps this file avoids (see README, "For maintainers"):
- a test cell that writes to stderr scores 0, so known harmless warnings are removed before scoring;
- slow cells: a per-cell timeout that a correct solution never reaches, but a hang does;
- students need a stub that tells them what to do.
"""

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "avgpool-course"
c.CourseDirectory.root = "."
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
    from autograder.stubs import ClearSolutionsWithOptional
except ImportError as _stubs_missing:
    def ClearSolutionsWithOptional(nb, resources, _why=str(_stubs_missing)):  # noqa: N802
        raise RuntimeError(f"generate_assignment needs the course's tools (autograder.stubs): {_why}; "
                           "run it from the course repository with its .venv")

c.GenerateAssignment.preprocessors = [ClearSolutionsWithOptional if step is ClearSolutions else step
                                      for step in GenerateAssignment.class_traits()["preprocessors"].default()]

c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True

# Harmless library warnings on stderr must not zero a correct answer.
c.IgnorePattern.pattern = r"(?m)^.*(UserWarning|DeprecationWarning|FutureWarning|RuntimeWarning)\b.*$|^\s*warnings\.warn\(.*$"

# The one sandbox policy (autograder/trusted/policy.py), read by `avgpool-course grade` and by
# `nbgrader autograde` alike. Defaults shown; set any of them here to change both.
# c.SandboxPolicy.test_seconds = 60.0     # student code of one test cell, all its requests
# c.SandboxPolicy.cell_seconds = 60.0     # each solution cell
# c.SandboxPolicy.start_seconds = 120.0   # set-up before any student code runs
# c.SandboxPolicy.memory_mb = 4096
# c.SandboxPolicy.file_mb = 16
# c.SandboxPolicy.nproc = 256
# c.SandboxPolicy.output_chars = 20000
# c.SandboxPolicy.reply_mb = 256

# Feedback shows each test's verdict and message, never the hidden tests' source.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# Trusted autograding (autograder/trusted): `nbgrader autograde` writes verdicts computed by a parent
# process that never runs student code (TrustedExecute replaces Execute; IgnorePattern, LimitOutput,
# SaveAutoGrades and late penalties stay), and `nbgrader generate_feedback` hides the hidden tests'
# source. Where the trusted grader cannot be imported (a student's copy of the course, a Python without
# the grader installed), every other command works as usual, but `nbgrader autograde` refuses to run:
# it never falls back to executing submissions in a kernel shared with student code.
try:
    from autograder.trusted.nbgrader_plugin import configure as _configure_trusted_grading
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
