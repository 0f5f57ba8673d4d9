"""A bug is graded once: lesson 1's ``output_size``, re-pasted into lessons 2-4, runs there as the
reference when the trusted grader grades (the cell carries the tag ``given-at-grading``)."""

import dataclasses

import pytest

import corpus
from autograder.grading import load_lesson
from autograder.coursedir import lessons
from autograder.grading.lesson import GIVEN_TAG
from autograder.grading.sandbox import Limits
from autograder.grading.verdicts import run_tests
from tests.nbtools import REPO

FAST = Limits(test_seconds=10, cell_seconds=10, start_seconds=90, memory_bytes=5 << 29, output_chars=2000)


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
