"""The knowledge checks: guessing wins no more than chance, and the visible checks give the same feedback
to a right and a wrong answer (they never reveal the key). Answers in words are measured question by
question in ``tests/course/test_short_answers.py``.

Every question is a graded cell whose visible part calls ``check_answered``; its hidden part decides.
The cells run here in-process, from the instructor's notebooks, exactly as the trusted grader runs them.
"""

import ast
import contextlib
import dataclasses
import io
import math
import re

import pytest

from autograder.coursedir import lessons
from autograder.grading.lesson import load_lesson, names_bound
from tests.shared import REPO  # as tests.*: this file also runs as `python -m tests.course...`

HIDDEN = "### BEGIN HIDDEN TESTS"
#: A well-formed wrong answer of each form that is not a list of letters (a boolean is the key's negation).
WELL_FORMED_WRONG = {"true/false": None, "short answer": "I do not know", "shape": "(N, C, H, W)",
                     "layer": "nn.AdaptiveMaxPool2d(1)"}


def _questions(lesson) -> list:
    """The knowledge-check questions: options, true/false, a shape, a layer or a short answer. A prediction
    checked in another form (lesson 4's "2x2 numbers") is an exercise, tested with its lesson."""
    return [cell for cell in lesson.tests if cell.source.lstrip().startswith("feedback = check_answered(")
            and (isinstance(_form(cell), list) or _form(cell) in WELL_FORMED_WRONG)]


def _form(cell) -> object:
    """The answer's form as the visible check states it: a list of letters, or a key of :data:`WELL_FORMED_WRONG`."""
    return ast.literal_eval(_call(cell).args[2])


def _call(cell) -> ast.Call:
    """The visible ``feedback = check_answered(qN, "qN", form, taught_in)`` call of a question."""
    return ast.parse(cell.source.split(HIDDEN)[0]).body[0].value


def _name(cell) -> str:
    """The answer variable a question reads (``q3``)."""
    return _call(cell).args[0].id


LESSONS = [name for name in lessons(REPO) if _questions(load_lesson(name, REPO))]


def _answers(lesson) -> dict:
    """The reference answers: the solution cell that binds the questions' variables, run on its own."""
    wanted = {_name(cell) for cell in _questions(lesson)}
    (cell,) = [c for c in lesson.solutions if names_bound(c.source, top_level=True) & wanted]
    namespace: dict = {}
    exec(compile(cell.source, cell.id, "exec"), namespace)
    return {name: namespace[name] for name in wanted}


def _passes(cell, answers: dict, visible_only: bool = False) -> tuple[bool, str]:
    """Run one question's cell on ``answers``; (passed, what it printed)."""
    passed, printed = _verdict(cell, answers, visible_only)
    return passed == "pass", printed


def _verdict(cell, answers: dict, visible_only: bool = False) -> tuple[str, str]:
    """Run one question's cell on ``answers``: ("pass", "fail" or "review", what it printed)."""
    import course.checks as checks
    from course.checks import NeedsReview

    source = cell.source.split(HIDDEN)[0] if visible_only else cell.source
    namespace = {name: getattr(checks, name) for name in
                 ("check_answered", "check_words", "check_shape", "check_layer", "check_value")}
    from course.variants import variant

    namespace["variant"] = variant  # a question with options of the student's own order (no id here: the lecture's)
    namespace.update(answers)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(source, cell.id, "exec"), namespace)
    except NeedsReview:
        return "review", printed.getvalue()
    except AssertionError:
        return "fail", printed.getvalue()
    return "pass", printed.getvalue()


def _score(lesson, answer_for) -> float:
    return sum(cell.points for cell in _questions(lesson)
               if _passes(cell, {name: answer_for(cell, name) for name in _answers(lesson)})[0])


@pytest.mark.parametrize("lesson_name", LESSONS)
def test_the_reference_answers_score_every_point_and_one_wrong_answer_loses_exactly_its_point(lesson_name):
    lesson = load_lesson(lesson_name, REPO)
    questions, answers = _questions(lesson), _answers(lesson)
    assert len(questions) == len(answers) >= 6
    assert _score(lesson, lambda cell, name: answers[name]) == sum(c.points for c in questions)
    for cell in questions:
        name = _name(cell)
        form = _form(cell)
        wrong = (not answers[name] if form == "true/false" else WELL_FORMED_WRONG[form]) if isinstance(form, str) \
            else next(letter for letter in form if letter != answers[name])
        assert not _passes(cell, {**answers, name: wrong})[0], f"{cell.id} passes the wrong answer {wrong!r}"


@pytest.mark.parametrize("lesson_name", LESSONS)
def test_a_wrong_option_fails_naming_its_question_but_not_the_key(lesson_name):
    """What graded feedback shows of a wrong option or boolean (``WrongValue.withheld``) names the question,
    the answer given and where it is taught, never the key; the full message (the record's, for the instructor to release)
    names it."""
    import course.checks as checks
    from course.checks import WrongValue

    lesson = load_lesson(lesson_name, REPO)
    answers = _answers(lesson)
    closed = [cell for cell in _questions(lesson) if isinstance(_form(cell), list) or _form(cell) == "true/false"]
    assert closed
    for cell in closed:
        name, form = _name(cell), _form(cell)
        wrong = not answers[name] if form == "true/false" else next(x for x in form if x != answers[name])
        namespace = {n: getattr(checks, n) for n in ("check_answered", "check_words", "check_shape", "check_layer",
                                                     "check_value")}
        namespace["variant"] = __import__("course.variants").variants.variant  # no id here: the lecture's order
        namespace.update({**answers, name: wrong})
        with pytest.raises(WrongValue) as failed, contextlib.redirect_stdout(io.StringIO()):
            exec(compile(cell.source, cell.id, "exec"), namespace)
        taught_in = ast.literal_eval(_call(cell).args[3])  # a wrong answer is told where it is taught (issue 53)
        assert failed.value.withheld == (f"{name}: got {wrong!r} ({type(wrong).__name__}), not the expected value; "
                                         f"it is taught in {taught_in}")
        assert repr(answers[name]) in str(failed.value), f"{cell.id}: the record keeps the key"


def _best_guess(questions: list) -> tuple[float, float]:
    """(the best score of answering one letter and one boolean everywhere, the expected score of chance)."""
    chance = sum(c.points / (2 if _form(c) == "true/false" else len(_form(c)))
                 for c in questions if isinstance(_form(c), list) or _form(c) == "true/false")
    letters = sorted({letter for c in questions if isinstance(_form(c), list) for letter in _form(c)})
    names = [_name(c) for c in questions]
    best = 0.0
    for letter in letters:
        for boolean in (True, False):
            answers = {n: boolean if _form(c) == "true/false" else letter for n, c in zip(names, questions)}
            best = max(best, sum(c.points for c in questions if _passes(c, answers)[0]))
    return best, chance


@pytest.mark.parametrize("lesson_name", LESSONS)
def test_answering_the_same_letter_or_the_same_boolean_everywhere_wins_no_more_than_chance(lesson_name):
    questions = _questions(load_lesson(lesson_name, REPO))
    best, chance = _best_guess(questions)
    assert best <= math.ceil(chance), f"one guess everywhere scores {best}, chance is {chance:.2f}"


def test_the_guessing_rule_catches_a_key_where_one_letter_wins():
    """The old lesson-1 key, planted back: every multiple-choice answer was (b)."""
    questions = _questions(load_lesson("lesson1_by_hand", REPO))
    key = r'(?:"[a-c]"|"abc"\[kc\["q\d+_order"\]\.index\(\d\)\])'  # a letter, or the student's own order's
    planted = [dataclasses.replace(c, source=re.sub(r'check_value\((q\d+), ' + key, r'check_value(\1, "b"',
                                                     c.source)) for c in questions]
    assert planted != questions
    best, chance = _best_guess(planted)
    assert best > math.ceil(chance)


@pytest.mark.parametrize("lesson_name", LESSONS)
def test_the_visible_check_prints_the_same_feedback_for_a_right_and_a_wrong_answer(lesson_name):
    lesson = load_lesson(lesson_name, REPO)
    answers = _answers(lesson)
    for cell in _questions(lesson):
        name = _name(cell)
        form = _form(cell)
        options = ([True, False] if form == "true/false" else [answers[name], WELL_FORMED_WRONG[form]]) \
            if isinstance(form, str) else form
        printed = set()
        for option in options:
            passed, text = _passes(cell, {**answers, name: option}, visible_only=True)
            assert passed, f"{cell.id}: the visible check refuses the well-formed answer {option!r}"
            printed.add(re.sub(r" read as .*?\. Unsure", " read as <answer>. Unsure", text))
        assert len(printed) == 1, f"{cell.id}: the feedback depends on the answer: {printed}"
        assert not _passes(cell, {**answers, name: 3.5}, visible_only=True)[0], f"{cell.id} accepts 3.5"


KEY_CHECKS = ("check_value(", "check_array(", "check_shape(", "check_layer(")


def test_every_checked_key_points_a_wrong_answer_to_where_it_is_taught():
    """Every hidden check of a key that follows a visible ``feedback = check_answered(...)`` or
    ``check_prediction(...)`` runs inside ``feedback.graded()`` (issue 53: a wrong answer got no pointer)."""
    seen = 0
    for name in lessons(REPO):
        for cell in load_lesson(name, REPO).tests:
            visible, _, hidden = cell.source.partition(HIDDEN)
            if re.match(r"feedback = check_(answered|prediction)\(", visible) and any(k in hidden for k in KEY_CHECKS):
                seen += 1
                assert "with feedback.graded():" in hidden, f"{name}/{cell.id}: the key's check is not in graded()"
    assert seen >= 20


def test_a_wrong_prediction_is_told_where_it_is_taught_never_the_key():
    """Lesson 2's predictions: the withheld message of a wrong one names the section, not the right answer."""
    import course.bugs as bugs
    from course.checks import WrongValue, check_value

    lesson = load_lesson("lesson2_loops", REPO)
    cells = [c for c in lesson.tests if c.source.startswith("feedback = check_prediction(")]
    assert len(cells) == 3
    for cell in cells:
        from course.variants import lesson2_checks, variant

        namespace = {**{n: getattr(bugs, n) for n in bugs.__all__}, "check_value": check_value,
                     "lesson2_checks": lesson2_checks, "variant": variant,  # no id here: the lecture's checks
                     "prediction_divisor": ("C", (2, 2)), "prediction_stride": ("C", (2, 2)),
                     "prediction_padding": ("C", (2, 2))}
        with pytest.raises(WrongValue) as failed, contextlib.redirect_stdout(io.StringIO()):
            exec(compile(cell.source, cell.id, "exec"), namespace)
        assert failed.value.withheld.endswith(f"; it is taught in {bugs.TAUGHT_IN}"), failed.value.withheld
        bug = {"predict_divisor": bugs.divisor_always_full, "predict_stride": bugs.stride_zero_ignored,
               "predict_padding": bugs.padding_one_side}[cell.id]
        key = str(bugs.first_failure(bug, bugs.CHECKS))
        assert key not in failed.value.withheld and key in str(failed.value)
