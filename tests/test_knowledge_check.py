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
from autograder.grading.lesson import load_lesson, names_bound
from tests.nbtools import REPO

HIDDEN = "### BEGIN HIDDEN TESTS"


def _questions(lesson) -> list:
    """The knowledge-check questions: options, true/false or a short answer. A prediction checked in another
    form (lesson 4's "2x2 numbers") is an exercise, tested with its lesson."""
    return [cell for cell in lesson.tests if cell.source.lstrip().startswith("feedback = check_answered(")
            and (isinstance(_form(cell), list) or _form(cell) in ("true/false", "short answer"))]


def _form(cell) -> object:
    """The answer's form as the visible check states it: a list of letters, "true/false", "short answer"."""
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
    from course.checks import NeedsReview, check_answered, check_short_answer, check_value

    source = cell.source.split(HIDDEN)[0] if visible_only else cell.source
    namespace = {"check_answered": check_answered, "check_short_answer": check_short_answer,
                 "check_value": check_value, **answers}
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
        wrong = {"true/false": not answers[name] if isinstance(answers[name], bool) else None,
                 "short answer": "I do not know"}.get(form) if isinstance(form, str) else \
            next(letter for letter in form if letter != answers[name])
        assert not _passes(cell, {**answers, name: wrong})[0], f"{cell.id} passes the wrong answer {wrong!r}"


@pytest.mark.parametrize("lesson_name", LESSONS)
def test_a_wrong_option_fails_naming_its_question_but_not_the_key(lesson_name):
    """What graded feedback shows of a wrong option or boolean (``WrongValue.withheld``) names the question
    and the answer given, never the key; the full message (the record's, for the instructor to release)
    names it."""
    from course.checks import WrongValue, check_answered, check_short_answer, check_value

    lesson = load_lesson(lesson_name, REPO)
    answers = _answers(lesson)
    closed = [cell for cell in _questions(lesson) if _form(cell) != "short answer"]
    assert closed
    for cell in closed:
        name, form = _name(cell), _form(cell)
        wrong = not answers[name] if form == "true/false" else next(x for x in form if x != answers[name])
        namespace = {"check_answered": check_answered, "check_short_answer": check_short_answer,
                     "check_value": check_value, **answers, name: wrong}
        with pytest.raises(WrongValue) as failed, contextlib.redirect_stdout(io.StringIO()):
            exec(compile(cell.source, cell.id, "exec"), namespace)
        assert failed.value.withheld == f"{name}: got {wrong!r} ({type(wrong).__name__}), not the expected value"
        assert repr(answers[name]) in str(failed.value), f"{cell.id}: the record keeps the key"


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


#: Every short-answer question: honest answers (paraphrases, the notebook's own sentences) that must score,
#: and wrong or self-contradicting ones, each with what it must get: "fail" (0) or "review" (0 until the
#: instructor reads it: ``course.checks.NeedsReview``, listed under "Needs a look"). "unsure": honest
#: answers the rule cannot settle (a negation or another option named), which go to review, never 0.
SHORT_ANSWERS = {
    ("lesson1_by_hand", "q1"): dict(
        honest=["the arithmetic mean of the window's values", "The mean of the values in the window.", "their AVERAGE",
                "sum of the window divided by its size", "the averaged value",
                "the arithmetic mean of the values in each window",  # section 1
                "it keeps the mean",  # the introduction: "average pooling keeps the mean"
                "the mean of each window: smoothing rather than peak-picking",  # the recap
                "the mean, not the max", "one number: the average of the k×k values",
                "1/(k·k) times the sum of the window",
                "the sum of the window's values over the number of values", "the mean value of the pixels it covers",
                "Average", "the window’s mean", "sum/(k*k)"],
        unsure=["max pooling takes the max; average pooling takes the mean",
                "the mean, which lies between the smallest and the largest value"],
        wrong=[("the largest value", "fail"), ("the mean or the max", "fail"), ("the sum of the values", "fail"),
               ("b", "fail"), ("the median of the window", "fail"), ("the mean or the median", "fail"),
               ("the minimum", "fail"), ("the max or mean", "fail"), ("the peak value", "fail"), ("mean/max", "fail"),
               ("the max, not the mean", "review"), ("not the mean", "review"),
               ("the maximum value, rather than the average", "review"),
               ("it does not output the mean, it outputs the largest value", "review"),
               ("the mean is wrong, it is the max", "review"), ("the mean? no", "review"),
               # the helper's own attacks (a reader of course/checks.py who does not know the keys)
               ("the max; the mean is for max pooling", "review"), ("max (people think the mean)", "review"),
               ("the mean of max values", "review"),
               ("the mean is what max pooling outputs; average pooling outputs the largest", "review"),
               ("mean? nah, max", "review"), ("the average of nothing: the largest value", "review"),
               ("the mean (kidding, the max)", "review"), ("largest value, i.e. mean", "review"),
               ("the sum, then it takes the max instead of the mean", "review"), ("peak, never the mean", "review"),
               # issue 31 item 6 (h6): another mean, another statistic offered, a claim taken back in other words
               ("the geometric mean of the window's values", "review"), ("the harmonic mean", "review"),
               ("the root mean square of the window", "review"), ("the mean of the absolute values", "review"),
               ("the mean or the mode of the window", "review"), ("the mean, or the midrange", "review"),
               ("the mean, said nobody", "review"), ("the max, n\u043et the mean", "review")]),
    ("lesson1_by_hand", "q4"): dict(
        honest=["one value per channel, shape (N, C, 1, 1)", "(N, C, 1, 1)", "one number for each channel", "[n,c,1,1]",
                "a single value per feature map, (N,C,1,1)", "one value per channel per image", "N x C x 1 x 1",
                "N×C×1×1", "one number per map",
                "[N, C, H, W] → [N, C, 1, 1]",  # section 6
                "it averages each channel to one number",  # section 6
                "one value per channel",  # the recap
                "[B, C, 1, 1]",  # lesson 5 writes B
                "it keeps the channels and reduces H and W to 1", "the channel-wise mean, (N, C, 1, 1)"],
        unsure=["one number per channel; no spatial size is left"],
        wrong=[("(N, 1, 1, 1)", "fail"), ("one value per image", "fail"), ("(N, C, H/2, W/2)", "fail"), ("a", "fail"),
               ("(N, C, H, W)", "fail"), ("it averages the channels together into one number per image", "fail"),
               ("(N, C, 1, 1) or (N, 1, 1, 1)", "fail"), ("(N, C)", "fail"),
               ("one value per channel; no wait, it drops the channels", "review"),
               ("not one value per channel", "review"), ("(N, C, 1, 1): the channels are averaged away", "review"),
               ("it does not keep the channels, one number per image", "review"), ("(N, C, 1, 1) is false", "review"),
               # the helper's own attacks (a reader of course/checks.py who does not know the keys)
               ("(N, C, 1, 1) is what max pooling gives; GAP gives (N, 1, 1, 1)", "fail"),
               ("one value per channel? nope", "review"),
               ("per channel... just kidding, one value per image", "review"),
               ("(N, C, H, W), not (N, C, 1, 1)", "review"), ("one value per channel is a misconception", "review"),
               ("(N, C, 1, 1) for max; average gives (N, C, H, W)", "review"),
               ("it keeps C only for max pooling", "review"),
               ("one number for each channel of the batch, i.e. (N, 1, 1, 1)", "fail"),
               ("each channel is summed into one: shape (1, C, 1, 1)", "fail"),
               ("(N, C, 1, 1) minus the channels", "review"),
               # issue 31 item 6 (h6): one value per image in other words, another shape offered
               ("a single value per image, after (N, C, 1, 1)", "review"), ("(N, C, 1, 1) or (N, C, 2, 2)", "review"),
               ("(N, C, 1, 1) or (N, 1, H, W)", "review"), ("(N, C, 1, 1), (N, C, 7, 7) in the lecture", "review"),
               ("(N, C, 1, 1); it's the other way round", "review")]),
    ("lesson1_by_hand", "q7"): dict(
        honest=["it removes millions of parameters, and so reduces overfitting",
                "far fewer parameters, so less overfitting",
                "it cuts the weights and generalises better",
                "it removes millions of parameters, and with them much of the overfitting",  # section 6
                "a head with fewer weights has less to memorise, so it generalizes better",  # section 6
                "GAP has no parameters, so the head is much smaller and less prone to overfitting",
                "fewer params -> less overfitting", "reduces the number of parameters and acts as a regularizer",
                "the parameter count drops sharply, which reduces overfitting",
                "it slashes head parameters and so generalizes better",  # lesson 5's words
                "Fewer weights to learn means less overfitting.",
                "It is parameter-free, which helps against overfitting."],
        unsure=["dense heads have far more parameters; GAP removes most parameters, so less overfitting",
                "fewer parameters, so it cannot memorise the training set: less overfitting"],
        wrong=[("it removes parameters", "fail"), ("it is faster to print", "fail"), ("less overfitting", "fail"),
               ("it does not reduce overfitting, it adds parameters", "fail"),
               ("it has fewer parameters but overfits more", "fail"), ("more parameters, so less overfitting", "fail"),
               ("it adds parameters and reduces overfitting", "fail"), ("fewer parameters, more overfitting", "fail"),
               ("GAP is faster and uses less memory", "fail"), ("fewer parameters and less generalization", "fail"),
               ("not fewer but more parameters, and less overfitting", "fail"),
               ("fewer parameters does not reduce overfitting", "review"),
               ("it removes parameters but does not generalise better", "review"),
               ("fewer parameters and less overfitting is a myth", "review"),
               ("it reduces the weights which makes overfitting worse", "review"),
               ("fewer parameters and less overfitting, no, more parameters", "review"),
               ("it isn't true that it has fewer parameters and less overfitting", "review"),
               # the helper's own attacks (a reader of course/checks.py who does not know the keys)
               ("fewer parameters and less overfitting are what dense heads give, not GAP", "review"),
               ("people say fewer parameters and less overfitting, but that is doubtful", "review"),
               ("fewer parameters and less overfitting: I disagree", "review"),
               ("fewer parameters and less overfitting are the two myths", "review"),
               ("GAP has more weights, whereas dense heads have fewer parameters and less overfitting", "review"),
               ("fewer parameters... less overfitting... nope", "review"),
               ("neither: fewer parameters and less overfitting", "review"),
               ("the dense head has fewer parameters and less overfitting", "review"),
               ("fewer parameters and less overfitting is a misconception", "review"),
               ("it increases the parameter count, yet fewer parameters means less overfitting in general", "review"),
               # issue 31 item 6 (h6): the key given to the other head with other verbs, GAP replaced, taken back
               ("the flatten head removes millions of parameters, and so reduces overfitting", "review"),
               ("only the dense head removes millions of parameters and so reduces overfitting", "review"),
               ("replacing GAP with a dense head removes millions of parameters and reduces overfitting", "review"),
               ("it does n\u043et remove millions of parameters, and does n\u043et reduce overfitting", "review"),
               ("it removes millions of parameters and so reduces overfitting, said nobody", "review"),
               ("it removes millions of parameters and so reduces overfitting; it's the other way round", "review"),
               ("it removes millions of parameters and so reduces overfitting, allegedly", "review"),
               ("it removes millions of parameters or reduces overfitting", "review")]),
    ("lesson1_by_hand", "q8"): dict(
        honest=["nn.AdaptiveAvgPool2d((1, 1))",  # section 6
                "torch.nn.AdaptiveAvgPool2d(1)", "AdaptiveAvgPool2d(output_size = (1,1))",
                "nn.AdaptiveAvgPool2d(1)",  # lesson 5
                "nn.AdaptiveAvgPool2d(output_size=1)", "layer = nn.AdaptiveAvgPool2d((1, 1))",
                "pool = torch.nn.AdaptiveAvgPool2d([1, 1])", "nn.AdaptiveAvgPool2d(output_size=(1, 1))",
                "self.pool = nn.AdaptiveAvgPool2d(1)", "nn.AdaptiveAvgPool2d((1,1)), not nn.AdaptiveMaxPool2d",
                "`nn.AdaptiveAvgPool2d((1, 1))`", "torch.nn.AdaptiveAvgPool2d( (1 , 1) )"],
        unsure=["nn.AdaptiveAvgPool2d(1), no parameters"],
        wrong=[("nn.AvgPool2d(2)", "fail"), ("nn.AdaptiveMaxPool2d((1, 1))", "fail"),
               ("AdaptiveAvgPool2d((7, 7))", "fail"),
               ("nn.AdaptiveAvgPool2d(1) or nn.AdaptiveMaxPool2d(1)", "fail"), ("nn.MaxPool2d(7)", "fail"),
               ("nn.AdaptiveAvgPool2d", "fail"), ("nn.AvgPool2d(7) instead of nn.AdaptiveAvgPool2d(1)", "fail"),
               ("nn.Linear(512, 1000)", "fail"), ("nn.AdaptiveAvgPool1d(1)", "fail"),
               ("nn.AdaptiveAvgPool2d(0)", "fail"),
               ("not nn.AdaptiveAvgPool2d(1)", "review"), ("nn.AdaptiveAvgPool2d(1) is wrong", "review"),
               ("nn.AdaptiveAvgPool2d(1) or nn.AdaptiveAvgPool2d(7)", "review"),
               # the helper's own attacks (a reader of course/checks.py who does not know the keys)
               ("nn.AdaptiveAvgPool2d(1) is deprecated, use nn.AvgPool2d", "fail"),
               ("nope: nn.AdaptiveAvgPool2d(1)", "review"), ("nn.AdaptiveAvgPool2d(1) -- just kidding", "review"),
               ("F.adaptive_avg_pool2d(x, 1) rather than nn.AdaptiveAvgPool2d(1)", "review"),
               ("nn.AdaptiveAvgPool2d(1) would be wrong", "review"),
               ("nn.AdaptiveAvgPool2d(1)? I doubt it", "review"),
               ("use nn.Identity(), never nn.AdaptiveAvgPool2d(1)", "review"),
               ("nn.AdaptiveAvgPool2d(1) and then nn.AdaptiveAvgPool2d(2)", "review"),
               ("torch.mean, not nn.AdaptiveAvgPool2d(1)", "review"),
               ("nn.AdaptiveAvgPool2d(1) is a myth", "review"),
               # issue 31 item 6 (h6): another layer offered beside the key
               ("nn.AdaptiveAvgPool2d(1) or nn.AdaptiveAvgPool1d(1)", "review"),
               ("nn.AdaptiveAvgPool2d((1, 1)) or nn.Identity()", "review"),
               ("nn.AdaptiveAvgPool2d(1) or nn.LPPool2d(1, 7)", "review"),
               ("nn.AdaptiveAvgPool2d(1), nn.AdaptiveAvgPool3d(1)", "review")]),
    ("lesson5_gap", "q8"): dict(
        honest=["it has millions fewer parameters to overfit, and no weight is tied to a position",
                "Far fewer weights to overfit, and no weight is tied to where the object sits.",
                "fewer parameters; translation does not matter after averaging",
                "fewer parameters and so less overfitting; nothing to learn per position",  # section 6
                "fewer parameters, and where a feature fires does not matter, only how much",  # section 6
                "fewer parameters, so less overfitting, and it is translation invariant",
                "it learns fewer weights, and the average ignores where the features are",  # question 2's option
                "less to memorise, and it does not care where the object is",
                "fewer params; it doesn't care where the object is",
                "fewer params; it works wherever the shape appears",
                "far fewer parameters, and the same weights apply at every position",
                "it has fewer parameters and is position-independent",
                "GAP slashes head parameters and averages over the whole map, so position is irrelevant",
                "fewer parameters (less overfitting), and the features are counted regardless of their location",
                "fewer parameters, and it does not learn a separate weight for each position",
                "fewer parameters, and it is not sensitive to where the shape is",
                "fewer parameters, and it does not care where the object is, only whether it is there",
                "fewer parameters; unlike the flatten head, it has no weight per position"],
        unsure=["fewer parameters and no weight per position; a dense head has a weight for each position"],
        wrong=[("it has fewer parameters", "fail"), ("it keeps more spatial detail", "fail"), ("it is deeper", "fail"),
               ("it has fewer parameters and it keeps a weight for every position", "fail"),
               ("it has more parameters and does not depend on where the object is", "fail"),
               ("it has fewer parameters, and it does depend on where the object is", "fail"),
               ("fewer parameters but position matters", "fail"),
               ("fewer parameters; it memorises where the object sits", "fail"),
               ("it learns a weight for each position and has fewer parameters", "fail"),
               ("millions more parameters, and no weight is tied to a position", "fail"),
               ("no weight is tied to a position", "fail"),
               ("fewer parameters, and no it is tied to the position", "fail"),
               ("fewer parameters, and it does not ignore where the object is", "review"),
               ("fewer parameters and translation invariance, not!", "review"),
               ("it has no fewer parameters, and no weight is tied to a position", "review"),
               ("fewer parameters, so it is not translation invariant", "review"),
               ("fewer parameters and it is not true that no weight is tied to a position", "review"),
               ("fewer parameters, and it has its own weight for each position, shift invariant", "review"),
               ("fewer parameters, but where the object is does not matter is false", "review"),
               ("fewer parameters and translation variant", "review"),
               # the helper's own attacks (a reader of course/checks.py who does not know the keys)
               ("the flatten head has fewer parameters and does not depend on where the object is", "review"),
               ("fewer parameters and translation invariance are what the flatten head gives", "review"),
               ("fewer parameters, and position independent? doubtful", "review"),
               ("fewer parameters; no: it depends on the position", "fail"),
               ("it has fewer parameters, and it learns a separate weight at every position, so shifts hurt", "review"),
               ("fewer parameters, but translation breaks it", "review"),
               ("fewer parameters and it is translation-sensitive", "review"),
               ("fewer parameters; anywhere the object moves, the accuracy drops", "review"),
               ("fewer parameters, and only where the object sits matters", "fail"),
               ("fewer parameters and same weights? no, separate weights everywhere", "review"),
               # issue 31 item 6 (h6): weights tied to a position in other words, the other head, taken back
               ("it has millions fewer parameters, and its weights are tied to a position regardless of the input",
                "review"),
               ("it has millions fewer parameters, and every weight is tied to one position, anywhere", "review"),
               ("the dense layer: millions fewer parameters to overfit, and no weight tied to a position", "review"),
               ("it has millions fewer parameters to overfit, and it works anywhere: n\u043et true at all", "review"),
               ("it has millions fewer parameters to overfit, and no weight is tied to a position, said nobody",
                "review"),
               ("it has millions fewer parameters or no weight tied to a position", "review")]),
}


def _short_answer_questions() -> list[tuple[str, str]]:
    return sorted((name, _name(cell)) for name in LESSONS for cell in _questions(load_lesson(name, REPO))
                  if _form(cell) == "short answer")


def test_every_short_answer_question_has_its_table_of_paraphrases_and_contradictions():
    assert _short_answer_questions() == sorted(SHORT_ANSWERS)
    for question, table in SHORT_ANSWERS.items():
        assert len(table["honest"]) >= 10 and len(table["wrong"]) >= 10, question
        assert {want for _, want in table["wrong"]} <= {"fail", "review"}, question


@pytest.mark.parametrize("lesson_name, question", sorted(SHORT_ANSWERS))
def test_a_short_answer_is_graded_by_meaning_and_a_contradiction_never_scores(lesson_name, question):
    """Each honest answer scores; each wrong one fails or goes to review, as the table says; an honest
    answer the rule cannot settle goes to review (never a silent 0, never a silent point)."""
    lesson = load_lesson(lesson_name, REPO)
    cell = next(c for c in _questions(lesson) if c.source.startswith(f"feedback = check_answered({question},"))
    table, answers = SHORT_ANSWERS[(lesson_name, question)], _answers(lesson)
    got = {text: _verdict(cell, {**answers, question: text})[0]
           for text in table["honest"] + table["unsure"] + [text for text, _ in table["wrong"]]}
    expected = {**{t: "pass" for t in table["honest"]}, **{t: "review" for t in table["unsure"]},
                **dict(table["wrong"])}
    assert {t: v for t, v in got.items() if v != expected[t]} == {}, question
