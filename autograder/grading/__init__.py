"""The trusted autograder: verdicts that student code cannot forge, faults that cannot spread.

Only the solution cells of a submission are taken (matched by ``grade_id`` against the release); they
run in a sandboxed child process (:mod:`.sandbox`); the lesson's own test cells (hidden tests included)
run in this process against stand-ins for the student's names (:mod:`.verdicts`), which hand back plain
data only; whatever the child or a submission sends is untrusted data, checked field by field and
cleaned before it is written (:mod:`.untrusted`). Scores reach nbgrader's gradebook through nbgrader
itself (:mod:`.nbgrader_plugin`), one writer at a time (:mod:`.batch`), each submission on its own.

API::

    grade(lessons=None, students=None, jobs=1, root=REPO, progress=True, *, limits=None,
          use_cache=True, gradebook=True, check_reference=True, cluster=None, seed=None) -> list[Record]
    grade_one(Submission.read(root, student, lesson), GradingRun.open(root, seed=None)) -> Record
    load_records(root) -> list[Record]
    run_tests(lesson, sources, limits=None, *, uid=None, root=None, seed=None, student=None) -> Verdicts
    load_lesson(lesson, root) -> Lesson;  containment() -> Containment;  Limits(...)
"""

from autograder.grading.batch import GradingError, grade, submissions
from autograder.grading.gradebook import write_gradebook
from autograder.grading.submission import GradingRun, Submission, grade_one
from autograder.grading.intake import Intake, parse_submission, read_submission, sanitized_notebook
from autograder.grading.lesson import Lesson, load_lesson
from autograder.records import STATUSES, Record, load_record, load_records
from autograder.grading.sandbox import Containment, Limits, containment
from autograder.grading.verdicts import TestResult, Verdicts, run_tests

__all__ = [
    "grade", "submissions", "write_gradebook", "GradingError", "GradingRun", "Submission", "grade_one",
    "Intake", "parse_submission", "read_submission", "sanitized_notebook",
    "Lesson", "load_lesson",
    "Record", "STATUSES", "load_record", "load_records",
    "Containment", "Limits", "containment",
    "TestResult", "Verdicts", "run_tests",
]
