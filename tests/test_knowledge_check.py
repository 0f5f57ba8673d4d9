"""The knowledge checks: guessing wins no more than chance, short answers are graded by meaning, and the
visible checks give the same feedback to a right and a wrong answer (they never reveal the key).

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
from autograder.trusted.lesson import load_lesson, names_bound
from tests.nbtools import REPO

HIDDEN = "### BEGIN HIDDEN TESTS"


def _questions(lesson) -> list:
    return [cell for cell in lesson.tests if cell.source.lstrip().startswith("feedback = check_answered(")]


LESSONS = [name for name in lessons(REPO) if _questions(load_lesson(name, REPO))]


def _form(cell) -> object:
    """The answer's form as the visible check states it: a list of letters, "true/false", "short answer"."""
    return ast.literal_eval(_call(cell).args[2])


def _call(cell) -> ast.Call:
    """The visible ``feedback = check_answered(qN, "qN", form, taught_in)`` call of a question."""
    return ast.parse(cell.source.split(HIDDEN)[0]).body[0].value


def _name(cell) -> str:
    """The answer variable a question reads (``q3``)."""
    return _call(cell).args[0].id


def _answers(lesson) -> dict:
    """The reference answers: the solution cell that binds the questions' variables, run on its own."""
    wanted = {_name(cell) for cell in _questions(lesson)}
    (cell,) = [c for c in lesson.solutions if names_bound(c.source, top_level=True) & wanted]
    namespace: dict = {}
    exec(compile(cell.source, cell.id, "exec"), namespace)
    return {name: namespace[name] for name in wanted}


def _passes(cell, answers: dict, visible_only: bool = False) -> tuple[bool, str]:
    """Run one question's cell on ``answers``; (passed, what it printed)."""
    from course.checks import check_answered, check_short_answer, check_value

    source = cell.source.split(HIDDEN)[0] if visible_only else cell.source
    namespace = {"check_answered": check_answered, "check_short_answer": check_short_answer,
                 "check_value": check_value, **answers}
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(source, cell.id, "exec"), namespace)
    except AssertionError:
        return False, printed.getvalue()
    return True, printed.getvalue()


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
        wrong = {"true/false": not answers[name] if isinstance(answers[name], bool) else None,
                 "short answer": "I do not know"}.get(form) if isinstance(form, str) else \
            next(letter for letter in form if letter != answers[name])
        assert not _passes(cell, {**answers, name: wrong})[0], f"{cell.id} passes the wrong answer {wrong!r}"


def _best_guess(questions: list) -> tuple[float, float]:
    """(the best score of answering one letter and one boolean everywhere, the expected score of chance)."""
    chance = sum(c.points / (2 if _form(c) == "true/false" else len(_form(c)))
                 for c in questions if _form(c) != "short answer")
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
    planted = [dataclasses.replace(c, source=re.sub(r'check_value\((q\d+), "[a-c]"', r'check_value(\1, "b"',
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
        options = {"true/false": [True, False], "short answer": [answers[name], "I do not know"]}.get(form) \
            if isinstance(form, str) else form
        printed = set()
        for option in options:
            passed, text = _passes(cell, {**answers, name: option}, visible_only=True)
            assert passed, f"{cell.id}: the visible check refuses the well-formed answer {option!r}"
            printed.add(re.sub(r" read as .*?\. Unsure", " read as <answer>. Unsure", text))
        assert len(printed) == 1, f"{cell.id}: the feedback depends on the answer: {printed}"
        assert not _passes(cell, {**answers, name: 3.5}, visible_only=True)[0], f"{cell.id} accepts 3.5"


SHORT_ANSWERS = {
    # lesson, question: (answers that mean the same as the lecture's, answers that do not)
    ("lesson1_by_hand", "q1"): (["The mean of the values in the window.", "their AVERAGE",
                                 "sum of the window divided by its size", "the averaged value", "the mean, not the max"],
                                ["the largest value", "the mean or the max", "the sum of the values", "b"]),
    ("lesson1_by_hand", "q4"): (["(N, C, 1, 1)", "one number for each channel", "[n,c,1,1]",
                                 "a single value per feature map, (N,C,1,1)",
                                 "one value per channel per image", "N x C x 1 x 1", "N×C×1×1", "one number per map"],
                                ["(N, 1, 1, 1)", "one value per image", "(N, C, H/2, W/2)", "a"]),
    ("lesson1_by_hand", "q7"): (["far fewer parameters, so less overfitting", "it cuts the weights and"
                                 " generalises better"],
                                ["it removes parameters", "it is faster to print", "less overfitting"]),
    ("lesson1_by_hand", "q8"): (["nn.AdaptiveAvgPool2d((1, 1))", "torch.nn.AdaptiveAvgPool2d(1)",
                                 "AdaptiveAvgPool2d(output_size = (1,1))"],
                                ["nn.AvgPool2d(2)", "nn.AdaptiveMaxPool2d((1, 1))", "AdaptiveAvgPool2d((7, 7))"]),
    ("lesson5_gap", "q8"): (["Far fewer weights to overfit, and no weight is tied to where the object sits.",
                             "fewer parameters; translation does not matter after averaging"],
                            ["it has fewer parameters", "it keeps more spatial detail", "it is deeper"]),
}


@pytest.mark.parametrize("lesson_name, question", sorted(SHORT_ANSWERS))
def test_a_short_answer_is_graded_by_meaning_not_spelling(lesson_name, question):
    lesson = load_lesson(lesson_name, REPO)
    cell = next(c for c in _questions(lesson) if c.source.startswith(f"feedback = check_answered({question},"))
    assert _form(cell) == "short answer"
    right, wrong = SHORT_ANSWERS[(lesson_name, question)]
    answers = _answers(lesson)
    for text in right:
        assert _passes(cell, {**answers, question: text})[0], f"{question}: {text!r} should pass"
    for text in wrong:
        assert not _passes(cell, {**answers, question: text})[0], f"{question}: {text!r} should fail"
