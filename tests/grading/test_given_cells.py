"""A bug is graded once: lesson 1's ``output_size``, re-pasted into lessons 2-4, runs there as the
reference when the trusted grader grades (the cell carries the tag ``given-at-grading``)."""

import dataclasses
import textwrap

import pytest

import corpus
from autograder.grading import load_lesson
from autograder.coursedir import lessons
from autograder.grading.lesson import GIVEN_TAG
from autograder.grading.verdicts import run_tests
import shared
from shared import REPO

FAST = dataclasses.replace(shared.FAST, test_seconds=10, cell_seconds=10, start_seconds=90, memory_bytes=5 << 29)


@pytest.mark.parametrize("lesson_name", lessons(REPO))
def test_only_the_re_pasted_output_size_is_given(lesson_name):
    lesson = load_lesson(lesson_name, REPO)
    assert lesson.given == ([] if lesson_name in ("lesson1_by_hand", "lesson5_gap") else ["output_size"])
    release = lesson.release_path.read_text()
    assert (GIVEN_TAG in release) == bool(lesson.given), "students see the tag, and the text explains it"


def test_a_lesson_1_bug_in_the_re_pasted_cell_costs_no_points_in_lesson_2_but_would_without_the_tag():
    lesson = load_lesson("lesson2_loops", REPO)
    case = next(c for c in corpus.cases("lesson2_loops") if c.name == "correct_with_lesson1_bug")
    sources = case.sources(lesson)
    assert "zip(size, pad, kernel, step)" in sources["output_size"], "the case carries lesson 1's bug"
    graded = run_tests(lesson, sources, FAST, root=REPO)
    assert all(t.passed for t in graded.tests), [(t.grade_id, t.message) for t in graded.tests if not t.passed]
    untagged = dataclasses.replace(lesson, given=[])
    regraded = run_tests(untagged, sources, FAST, root=REPO)
    failed = {t.grade_id for t in regraded.tests if not t.passed}
    assert {"forward_tests", "backward_tests"} <= failed, failed


def test_the_content_key_ignores_a_given_cell_so_nbgrader_reuses_the_grade():
    """The batch keys a record by the submission's sources; nbgrader's TrustedExecute recomputes the key
    from the notebook. A student's own output_size (replaced at grading) must not make them differ, or
    every submission of lessons 2-4 is graded a second time inside `nbgrader autograde`."""
    lesson = load_lesson("lesson2_loops", REPO)
    given = next(iter(lesson.given))
    sources = dict(lesson.reference_sources(), **{given: "def output_size(*a):\n    return (1, 1)\n"})
    assert lesson.content_key(sources) == lesson.content_key(lesson.graded_sources(sources))
    other = next(i for i in lesson.code_solution_ids if i not in lesson.given)
    changed = dict(sources, **{other: sources[other] + "\n# edited\n"})
    assert lesson.content_key(changed) != lesson.content_key(sources), "a graded cell still changes the key"


def test_a_given_cell_keeps_the_students_own_definitions_and_drops_the_rest():
    """Only the reference's names are replaced: every other top-level def, class, import and assignment
    of the student's cell runs after the reference, as written; prints and other statements do not."""
    lesson = load_lesson("lesson4_torch", REPO)
    student = ("import numpy as np\n\n\n@staticmethod\ndef _as_pair(v):\n    return (v, v) if isinstance(v, int) else tuple(v)\n\n\n"
               "class Geometry:\n    pass\n\n\nSCALE: int = 2\nA = 1; print('hi')\n\n\n"
               "def output_size(*a):\n    return (1, 1)\n\n\nprint(output_size((4, 4), 2))\n"
               "if True:\n    def _lost(v):\n        return v\n")
    graded = lesson.graded_sources({"output_size": student})["output_size"]
    reference = lesson.reference_sources()["output_size"]
    assert graded.startswith(reference)
    kept = graded[len(reference):]
    for line in ("import numpy as np", "@staticmethod\ndef _as_pair(v):", "class Geometry:", "SCALE: int = 2", "A = 1"):
        assert line in kept, line
    assert "print" not in kept and "return (1, 1)" not in kept and "_lost" not in kept
    assert lesson.graded_sources({"output_size": graded})["output_size"] == graded, "idempotent"
    assert lesson.lost_names({"output_size": student}) == {"_lost": "output_size"}
    assert lesson.graded_sources({"output_size": "def output_size(:\n"})["output_size"] == reference


def test_the_copy_with_a_helper_beside_it_gets_full_marks_and_a_lost_helper_is_named_as_such():
    """Issue 43: lesson 4's exercise 4.0 copied as it was, with `_as_pair` beside `output_size` and used by
    the Function, scored 5/28 with messages blaming a forbidden operation. Now it gets full marks; a helper
    the grader cannot keep (defined under an `if`) costs the points with a message saying where it lived."""
    lesson = load_lesson("lesson4_torch", REPO)
    case = next(c for c in corpus.cases("lesson4_torch") if c.name == "correct_helper_beside_output_size")
    sources = case.sources(lesson)
    assert "def _as_pair" in sources["output_size"] and "_as_pair(" in sources["avg_pool2d_function"]
    graded = run_tests(lesson, sources, FAST, root=REPO)
    assert all(t.passed for t in graded.tests), [(t.grade_id, t.message) for t in graded.tests if not t.passed]
    before, helper, after = sources["output_size"].partition("def _as_pair")
    helper, rest, after = (helper + after).partition("def output_size")
    hidden = dict(sources, output_size=before + "if True:\n" + textwrap.indent(helper, "    ") + rest + after)
    assert lesson.lost_names(hidden) == {"_as_pair": "output_size"}
    regraded = run_tests(lesson, hidden, FAST, root=REPO)
    failed = [t for t in regraded.tests if not t.passed]
    assert {t.grade_id for t in failed} >= {"forward_tests", "backward_tests"}
    for test in failed:
        assert "`_as_pair` lived in the `output_size` cell, which is replaced at grading" in test.message, test.message
        assert "not among them" not in test.message
