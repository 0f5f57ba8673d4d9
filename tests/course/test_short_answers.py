"""Short answers scored only when certain (issue 42), measured both ways, question by question.

Every free-text question of the course has here at least 25 honest answers (its key, the notebook's own
sentences, paraphrases) and at least 40 wrong or self-contradicting ones (taken back with "except",
"apart from", "other than", hedges, contractions, verbs of absence, double negation, "not only ... but",
quotations of the wrong claim, invisible and look-alike characters, mixed scripts, the key's words in the
wrong order of meaning). Each runs through the question's own graded cell from ``source/`` (visible and
hidden part), as the trusted grader runs it. The table: honest answers accepted automatically (at least
70 %), wrong answers accepted automatically (must be 0), answers sent to review; no free-text answer ever
fails silently (it is accepted or goes to the instructor).

Issue 53: beside these, each question's honest paraphrases and wrong answers written by another reader
(``tests/data/paraphrases/``) are graded the same way; the grammars grew from them (:data:`SHARES`: the
auto-accepted share before and after).

Print the table: ``.venv/bin/python -m tests.course.test_short_answers``.
The structured questions (a shape, a layer) are checked exactly: both sides below.
"""

import contextlib
import io

import pytest

from autograder.grading.lesson import load_lesson
from course.checks import read_words
from tests.shared import REPO  # as tests.*: this file also runs as `python -m tests.course...`

ZW, CYR_O, CYR_E = "\u200b", "\u043e", "\u0435"  # a zero-width space; Cyrillic o and e (look like Latin ones)

#: ``{(lesson, question): {"honest": [...], "wrong": [...]}}``, every free-text question of the course.
CASES = {
    ("lesson1_by_hand", "q1"): dict(
        honest=["the arithmetic mean of the window's values",  # the key (the lecture's answer)
                "the arithmetic mean of the values in each window",  # section 1
                "it keeps the mean",  # the introduction: "average pooling keeps the mean"
                "the mean of each window: smoothing rather than peak-picking",  # the recap
                "the mean of each window",  # the recap
                "The mean of the values in the window.", "their AVERAGE", "the averaged value", "the mean, not the max",
                "one number: the average of the k×k values", "1/(k·k) times the sum of the window",
                "the sum of the window's values over the number of values", "the mean value of the pixels it covers",
                "Average", "the window\u2019s mean", "sum/(k*k)", "sum of the window divided by its size",
                "mean", "the average value", "It outputs the average of the values in the window.",
                "the mean of all the values in the window", "the average of the window", "the average over the window",
                "average of the pixels in each window", "it returns the mean of the window's values",
                "the mean value in each window", "the arithmetic average of the window",
                "max pooling takes the max; average pooling takes the mean",
                "the mean, which lies between the smallest and the largest value",
                "the sum divided by k squared"],
        wrong=["the largest value", "the mean or the max", "the sum of the values", "the mode", "the median of the window",
               "the mean or the median", "the minimum", "the max or mean", "the peak value", "mean/max",
               "the max, not the mean", "not the mean", "the maximum value, rather than the average",
               "it does not output the mean, it outputs the largest value", "the mean is wrong, it is the max",
               "the mean? no", "the max; the mean is for max pooling", "max (people think the mean)",
               "the mean of max values", "the mean is what max pooling outputs; average pooling outputs the largest",
               "mean? nah, max", "the average of nothing: the largest value", "the mean (kidding, the max)",
               "largest value, i.e. mean", "the sum, then it takes the max instead of the mean",
               "peak, never the mean", "the geometric mean of the window's values", "the harmonic mean",
               "the root mean square of the window", "the mean of the absolute values",
               "the mean or the mode of the window", "the mean, or the midrange", "the mean, said nobody",
               f"the max, n{CYR_O}t the mean",
               # issue 42: words that take it back, contractions, absence, hedges, quotes, hidden characters
               "anything except the mean", "every statistic apart from the mean", "something other than the mean",
               "it isn't the mean", "it doesn't output the mean", "the mean is exactly what it lacks",
               "the mean, or maybe the max", "probably the mean, possibly the max", "not not the max",
               "not only the mean but also the max", 'the "mean" of the window, as people wrongly say',
               f"the m{ZW}ean of the window's values", f"the m{CYR_E}an of the window's values",
               "the sum divided by the max", "the mean of the window's maximum values", "the max of the window's means",
               "the max of the window's values", "the mean! (not)", "the mean of the window's values except the max",
               "the mean of the window's values`, wrote no one`", "the sum of the window divided by 2",
               "the average is what max pooling outputs", "never the mean", "the mean? I doubt it",
               "the mean, apart from the largest value which it keeps",
               # written against the grammar by a reader of it: its words around another statistic
               "the mean not the mean", "it outputs the max", "its maximum", "the average of the max values",
               "the arithmetic mean of the window's values, said no one", "the window's max, not the mean"]),
    ("lesson1_by_hand", "q7"): dict(
        honest=["it removes millions of parameters, and so reduces overfitting",  # the key
                "it removes millions of parameters, and with them much of the overfitting",  # section 6
                "a head with fewer weights has less to memorise, so it generalizes better",  # section 6
                "far fewer parameters, so less overfitting", "it cuts the weights and generalises better",
                "GAP has no parameters, so the head is much smaller and less prone to overfitting",
                "fewer params -> less overfitting", "reduces the number of parameters and acts as a regularizer",
                "the parameter count drops sharply, which reduces overfitting",
                "it slashes head parameters and so generalizes better",  # lesson 5's words
                "Fewer weights to learn means less overfitting.", "It is parameter-free, which helps against overfitting.",
                "fewer parameters, so it cannot memorise the training set: less overfitting",
                "dense heads have far more parameters; GAP removes most parameters, so less overfitting",
                "fewer parameters and less overfitting", "It has far fewer parameters and therefore overfits less.",
                "removes millions of parameters and reduces overfitting",
                "it removes most of the parameters, which reduces overfitting",
                "less overfitting because it has fewer parameters", "it has fewer parameters, so it generalizes better",
                "fewer weights, less overfitting", "it reduces the parameter count and so reduces overfitting",
                "GAP has far fewer parameters than a dense head, so it overfits less",
                "it gets rid of millions of weights, which curbs overfitting",
                "It drastically reduces the number of parameters and thus reduces overfitting.",
                "Millions fewer parameters, and so less overfitting"],
        wrong=["it removes parameters", "it is faster to print", "less overfitting",
               "it does not reduce overfitting, it adds parameters", "it has fewer parameters but overfits more",
               "more parameters, so less overfitting", "it adds parameters and reduces overfitting",
               "fewer parameters, more overfitting", "GAP is faster and uses less memory",
               "fewer parameters and less generalization", "not fewer but more parameters, and less overfitting",
               "fewer parameters does not reduce overfitting", "it removes parameters but does not generalise better",
               "fewer parameters and less overfitting is a myth", "it reduces the weights which makes overfitting worse",
               "fewer parameters and less overfitting, no, more parameters",
               "it isn't true that it has fewer parameters and less overfitting",
               "fewer parameters and less overfitting are what dense heads give, not GAP",
               "people say fewer parameters and less overfitting, but that is doubtful",
               "fewer parameters and less overfitting: I disagree",
               "GAP has more weights, whereas dense heads have fewer parameters and less overfitting",
               "fewer parameters... less overfitting... nope", "neither: fewer parameters and less overfitting",
               "the dense head has fewer parameters and less overfitting",
               "fewer parameters and less overfitting is a misconception",
               "it increases the parameter count, yet fewer parameters means less overfitting in general",
               "the flatten head removes millions of parameters, and so reduces overfitting",
               "only the dense head removes millions of parameters and so reduces overfitting",
               "replacing GAP with a dense head removes millions of parameters and reduces overfitting",
               f"it does n{CYR_O}t remove millions of parameters, and does n{CYR_O}t reduce overfitting",
               "it removes millions of parameters and so reduces overfitting, said nobody",
               "it removes millions of parameters and so reduces overfitting; it's the other way round",
               "it removes millions of parameters and so reduces overfitting, allegedly",
               "it removes millions of parameters or reduces overfitting",
               # issue 42
               "it removes nothing except parameters that prevent overfitting",
               "it removes millions of parameters, apart from that it reduces nothing",
               "it doesn't remove parameters and doesn't reduce overfitting",
               "fewer parameters and less overfitting is exactly what GAP lacks",
               "fewer parameters, or maybe less overfitting, or more capacity",
               "it removes millions of parameters, other than that it increases overfitting",
               "it is not true that it does not have more parameters, and less overfitting",
               "not only more parameters but also less overfitting",
               '"it removes millions of parameters, and so reduces overfitting" is a myth',
               f"it removes millions of parameters, and so reduces over{ZW}fitting",
               f"it rem{CYR_O}ves millions of parameters, and so reduces overfitting",
               "overfitting removes millions of parameters and so reduces GAP",
               "it reduces overfitting, so it removes parameters",
               "less overfitting so fewer parameters", "fewer overfitting so less parameters",
               "it removes millions of parameters and so reduces underfitting",
               "it removes millions of parameters and so increases overfitting",
               "it adds millions of parameters and so reduces overfitting",
               "it removes millions of parameters and so reduces overfitting?",
               "it removes millions of parameters and so reduces overfitting!",
               "fewer parameters so less overfitting, it isn't",
               # written against the grammar by a reader of it: its words, another subject or direction
               "the dense head removes millions of parameters and so reduces overfitting",
               "it removes millions of parameters and so reduces generalization",
               "it removes millions of overfitting and so reduces parameters",
               "fewer parameters so more overfitting", "it has fewer parameters than overfitting"]),
    ("lesson5_gap", "q8"): dict(
        honest=["it has millions fewer parameters to overfit, and no weight is tied to a position",  # the key
                "fewer parameters and so less overfitting; nothing to learn per position",  # section 6
                "fewer parameters, and where a feature fires does not matter, only how much",  # section 6
                "it learns fewer weights, and the average ignores where the features are",  # question 2's option
                "Far fewer weights to overfit, and no weight is tied to where the object sits.",
                "fewer parameters; translation does not matter after averaging",
                "fewer parameters, so less overfitting, and it is translation invariant",
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
                "fewer parameters; unlike the flatten head, it has no weight per position",
                "fewer parameters and no weight per position; a dense head has a weight for each position",
                "Far fewer weights, so less overfitting; and it does not care where in the map the object is.",
                "fewer parameters and translation invariance",
                "it has far fewer parameters and it is translation invariant",
                "fewer weights to learn, and no weight is tied to a position",
                "fewer parameters; position does not matter",
                "it has fewer parameters, and it doesn't depend on where the object is",
                "translation invariance, and far fewer parameters",
                "fewer parameters and it ignores where the object is"],
        wrong=["it has fewer parameters", "it keeps more spatial detail", "it is deeper",
               "it has fewer parameters and it keeps a weight for every position",
               "it has more parameters and does not depend on where the object is",
               "it has fewer parameters, and it does depend on where the object is",
               "fewer parameters but position matters", "fewer parameters; it memorises where the object sits",
               "it learns a weight for each position and has fewer parameters",
               "millions more parameters, and no weight is tied to a position", "no weight is tied to a position",
               "fewer parameters, and no it is tied to the position",
               "fewer parameters, and it does not ignore where the object is",
               "fewer parameters and translation invariance, not!",
               "it has no fewer parameters, and no weight is tied to a position",
               "fewer parameters, so it is not translation invariant",
               "fewer parameters and it is not true that no weight is tied to a position",
               "fewer parameters, and it has its own weight for each position, shift invariant",
               "fewer parameters, but where the object is does not matter is false",
               "fewer parameters and translation variant",
               "the flatten head has fewer parameters and does not depend on where the object is",
               "fewer parameters and translation invariance are what the flatten head gives",
               "fewer parameters, and position independent? doubtful",
               "fewer parameters; no: it depends on the position",
               "it has fewer parameters, and it learns a separate weight at every position, so shifts hurt",
               "fewer parameters, but translation breaks it", "fewer parameters and it is translation-sensitive",
               "fewer parameters; anywhere the object moves, the accuracy drops",
               "fewer parameters, and only where the object sits matters",
               "fewer parameters and same weights? no, separate weights everywhere",
               "it has millions fewer parameters, and its weights are tied to a position regardless of the input",
               "it has millions fewer parameters, and every weight is tied to one position, anywhere",
               "the dense layer: millions fewer parameters to overfit, and no weight tied to a position",
               f"it has millions fewer parameters to overfit, and it works anywhere: n{CYR_O}t true at all",
               "it has millions fewer parameters to overfit, and no weight is tied to a position, said nobody",
               "it has millions fewer parameters or no weight tied to a position",
               # issue 42
               "fewer parameters, and every weight is tied to a position except one",
               "fewer parameters, and apart from the corners it does not care where the object is",
               "fewer parameters, and other than position nothing matters",
               "fewer parameters, and it isn't translation invariant",
               "fewer parameters, and it doesn't ignore where the object is",
               "fewer parameters, but translation invariance is exactly what it lacks",
               "fewer parameters, and maybe translation invariant, or maybe not",
               "it is not true that it does not tie weights to positions, and fewer parameters",
               "not only fewer parameters but also a weight tied to each position",
               '"no weight is tied to a position" is what people say, but fewer parameters only',
               f"fewer parameters, and it does n{ZW}ot care where the object is",
               f"fewer parameters, and no weight is tied to a p{CYR_O}sition",
               "fewer p\u0430rameters and it doesn\u2019t care where the object is \u2013 wrong",
               "no position is tied to a weight, and fewer parameters than position",
               "where the object is matters, and fewer parameters",
               "fewer parameters, and it cares where the object is",
               "fewer parameters, and it does not care, where the object is matters",
               "more parameters, and it ignores where the object is",
               "fewer parameters, and the flatten head ignores where the object is",
               "fewer parameters, and it is translation invariant?",
               # written against the grammar by a reader of it: its words, another subject or direction
               "fewer parameters and the flatten head is translation invariant",
               "fewer parameters and it does not care about the parameters",
               "fewer parameters and every weight is tied to a position",
               "more parameters and no weight is tied to a position",
               "fewer parameters and it does care where the object is"]),
}


#: Honest paraphrases and wrong answers of every free-text question, written by a reader who never saw the grammars
#: and checked by a second reading (each file's header says so): ``tests/data/paraphrases/<lesson>_<question>.txt``,
#: ``[honest]`` then one answer a line, ``[wrong]`` then one a line (issue 53 item 5).
PARAPHRASES = REPO / "tests" / "data" / "paraphrases"
#: The auto-accepted share of the honest paraphrases, per question: before the grammars grew from them (issue 53)
#: and after (the test asserts at least ``after`` minus :data:`MARGIN`).
SHARES = {("lesson1_by_hand", "q1"): {"before": 21 / 73, "after": 68 / 73},
          ("lesson1_by_hand", "q7"): {"before": 9 / 72, "after": 59 / 72},
          ("lesson5_gap", "q8"): {"before": 0 / 72, "after": 50 / 72}}
MARGIN = 0.03


def paraphrases(lesson_name: str, question: str) -> dict:
    """``{"honest": [...], "wrong": [...]}`` from the question's paraphrase file (``#`` lines are its header)."""
    found, part = {"honest": [], "wrong": []}, None
    for line in (PARAPHRASES / f"{lesson_name}_{question}.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.strip() in ("[honest]", "[wrong]"):
            part = line.strip()[1:-1]
            continue
        found[part].append(line.strip())
    return found


def _cell(lesson_name: str, question: str):
    """The graded cell of ``question`` (its visible check and its hidden test)."""
    lesson = load_lesson(lesson_name, REPO)
    (cell,) = [c for c in lesson.tests if c.source.startswith(f"feedback = check_answered({question}, ")]
    return cell


def verdict(cell, question: str, answer) -> str:
    """Run ``cell`` on ``answer``: "pass", "review" (:class:`course.checks.NeedsReview`) or "fail"."""
    import course.checks as checks

    namespace = {name: getattr(checks, name) for name in
                 ("check_answered", "check_words", "check_shape", "check_layer", "check_value")}
    namespace[question] = answer
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(cell.source, cell.id, "exec"), namespace)
    except checks.NeedsReview:
        return "review"
    except AssertionError:
        return "fail"
    return "pass"


def table() -> list[dict]:
    """One row per free-text question: how many honest and wrong answers, and what became of them."""
    rows = []
    for (lesson_name, question), case in CASES.items():
        cell = _cell(lesson_name, question)
        honest = [verdict(cell, question, text) for text in case["honest"]]
        wrong = [verdict(cell, question, text) for text in case["wrong"]]
        rows.append({"question": f"{lesson_name} {question}", "honest": len(honest), "wrong": len(wrong),
                     "honest accepted": honest.count("pass"), "wrong accepted": wrong.count("pass"),
                     "honest to review": honest.count("review"), "wrong to review": wrong.count("review"),
                     "failed silently": honest.count("fail") + wrong.count("fail"),
                     "accepted wrong": [t for t, v in zip(case["wrong"], wrong) if v == "pass"]})
    return rows


def format_table(rows: list[dict]) -> str:
    lines = ["| question | honest | auto-accepted honest | wrong | auto-accepted wrong | sent to review (honest + wrong) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        share = 100 * r["honest accepted"] / r["honest"]
        lines.append(f"| {r['question']} | {r['honest']} | {r['honest accepted']} ({share:.0f} %) | {r['wrong']} | "
                     f"{r['wrong accepted']} | {r['honest to review']} + {r['wrong to review']} |")
    return "\n".join(lines)


def test_every_free_text_question_is_measured_with_enough_cases():
    from tests.course.test_knowledge_check import LESSONS, _form, _name, _questions

    free_text = sorted((name, _name(c)) for name in LESSONS for c in _questions(load_lesson(name, REPO))
                       if _form(c) == "short answer")
    assert free_text == sorted(CASES)
    for key, case in CASES.items():
        assert len(case["honest"]) >= 25 and len(case["wrong"]) >= 40, key
        assert not set(case["honest"]) & set(case["wrong"]), key


def test_no_wrong_answer_is_accepted_and_most_honest_ones_are():
    rows = table()
    print("\n" + format_table(rows))
    for row in rows:
        assert row["accepted wrong"] == [], row["question"]
        assert row["failed silently"] == 0, row["question"]  # accepted or sent to the instructor, nothing else
        assert row["honest accepted"] >= 0.7 * row["honest"], row["question"]


@pytest.mark.parametrize("key", sorted(CASES))
def test_the_key_and_the_notebooks_sentences_are_accepted(key):
    """The first honest answers of each table are the key and the notebook's own sentences: all accepted."""
    lesson_name, question = key
    cell = _cell(lesson_name, question)
    assert verdict(cell, question, CASES[key]["honest"][0]) == "pass"


@pytest.mark.parametrize("key", sorted(CASES))
def test_paraphrases_by_another_reader_no_wrong_one_accepted_and_most_honest_ones_are(key):
    """Issue 53 item 5: every paraphrase (at least 60 honest, 25 wrong, none written by the grammar's author) through
    the question's graded cell: no wrong one is accepted (each is refused or goes to review), none fails silently,
    and the honest ones are accepted at the share reached when the grammar grew (:data:`SHARES`)."""
    lesson_name, question = key
    cell, found = _cell(lesson_name, question), paraphrases(lesson_name, question)
    header = (PARAPHRASES / f"{lesson_name}_{question}.txt").read_text().splitlines()[:3]
    assert any("never saw the grammars" in line for line in header) and any("second reading" in line for line in header)
    assert len(found["honest"]) >= 60 and len(found["wrong"]) >= 25
    assert not set(found["honest"]) & set(found["wrong"])
    honest = [verdict(cell, question, text) for text in found["honest"]]
    wrong = [verdict(cell, question, text) for text in found["wrong"]]
    assert [t for t, v in zip(found["wrong"], wrong) if v == "pass"] == [], "a wrong answer scored"
    assert "fail" not in honest + wrong, "an answer in words failed without going to the instructor"
    share = honest.count("pass") / len(honest)
    print(f"{lesson_name} {question}: {honest.count('pass')}/{len(honest)} honest paraphrases accepted ({share:.0%}); "
          f"before the grammar grew {SHARES[key]['before']:.0%}")
    assert share >= SHARES[key]["after"] - MARGIN > SHARES[key]["before"]


#: Words that take a claim back, deny it, or put it in doubt: one put anywhere into an accepted answer makes
#: it an answer no grammar accepts.
TAKING_BACK = ["not", "no", "never", "isn't", "doesn't", "don't", "cannot", "except", "without", "lacks", "hardly",
               "barely", "allegedly", "supposedly", "maybe", "probably", "other than", "apart from", "not only",
               "but", "or", "nor", "neither", "false", "wrong", "myth", "more", "worse", "max"]


@pytest.mark.parametrize("key", sorted(CASES))
def test_a_word_that_takes_it_back_put_anywhere_into_an_accepted_answer_is_never_accepted(key):
    """The generated attack: every honest answer of :data:`CASES` the grammar accepts, and every fourth honest
    paraphrase it accepts, with each of :data:`TAKING_BACK` put between any two of its words (or at either end),
    is sent to review."""
    from course.checks import matches, read_words

    lesson_name, question = key
    cell = _cell(lesson_name, question)
    honest = CASES[key]["honest"] + paraphrases(lesson_name, question)["honest"][::4]  # a quarter: seconds, not a minute
    accepted = [read_words(t)[0] for t in honest if verdict(cell, question, t) == "pass"]
    grammar = _grammar(cell)
    tried, taken = 0, []
    for text in accepted:
        words = text.split()
        for at in range(len(words) + 1):
            for inserted in TAKING_BACK:
                attack = " ".join(words[:at] + [inserted] + words[at:])  # plain words: read_words reads them as they are
                tried += 1
                if matches(grammar, attack):  # what check_words scores
                    taken.append(attack)
    assert tried > 3000 and taken == []


def _grammar(cell) -> dict:
    """The grammar a free-text question's hidden test hands to ``check_words`` (its last argument)."""
    import course.checks as checks

    seen = {}
    namespace = {name: getattr(checks, name) for name in ("check_answered", "check_value")}
    namespace["check_words"] = lambda answer, name, grammar: seen.setdefault("grammar", grammar)
    namespace[cell.source.split("(")[1].split(",")[0]] = "the answer"
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(cell.source, cell.id, "exec"), namespace)
    return seen["grammar"]


def test_reading_an_answer_in_words():
    from course.checks import read_words

    assert read_words("The  Mean, of the window\u2019s values.") == ("the mean of the window's values", [])
    assert read_words("fewer params -> less overfitting") == ("fewer params so less overfitting", [])
    assert read_words("1/(k\u00b7k)") == ("1 / k x k", [])
    assert read_words("\uff4d\uff45\uff41\uff4e")[0] == "mean"  # full-width letters: NFKC
    for text, doubt in [(f"m{ZW}ean", "do not show"), ("me\u0336an", "do not show"), ("the mean\u200d", "do not show"),
                        ("me\u0301an", "outside the Latin alphabet"),
                        (f"m{CYR_E}an", "outside the Latin alphabet"), ("the mean?", "question"),
                        ('"the mean"', "quotes"), ("'the mean'", "quotes"), ("the mean!", "exclaims"),
                        ("the mean & max", "does not read")]:
        words, doubts = read_words(text)
        assert any(doubt in d for d in doubts), (text, doubts)


def test_a_doubtful_answer_goes_to_review_even_when_its_words_match():
    from course.checks import NeedsReview, check_words

    grammar = {"answer": ["the mean"]}
    check_words("The mean.", "q", grammar)
    for text in ["the mean?", f"the m{CYR_E}an", f"the me{ZW}an", '"the mean"', "the median", "not the mean"]:
        with pytest.raises(NeedsReview, match="your instructor will read this answer") as raised:
            check_words(text, "q", grammar)
        assert raised.value.answer == text
    with pytest.raises(AssertionError, match="a short answer is a string"):
        check_words(3, "q", grammar)


def test_the_visible_check_says_when_an_answer_goes_to_the_instructor_whatever_it_says():
    """A doubt that does not depend on the key (a question, a hidden or foreign character) is said at once."""
    from course.checks import check_answered
    from course.checks.answers import WHAT_HAPPENS

    assert "whatever it says" not in check_answered("The mean.", "q1", "short answer", "section 1")
    for text, why in [("the mean?", "asks a question"), (f"the m{CYR_E}an", "outside the Latin alphabet"),
                      (f"the me{ZW}an", "do not show")]:
        printed = check_answered(text, "q1", "short answer", "section 1")
        assert "it goes to your instructor whatever it says" in printed and why in printed, printed
        assert WHAT_HAPPENS not in printed


def test_what_the_visible_check_says_will_happen_is_what_grading_does_and_never_tells_the_key():
    """Issue 53 item 5: the visible line of every answer in words says what grading will do, and it is true for
    every honest and wrong answer of every question: "whatever it says" is always review; otherwise the line
    says it either scores by itself or goes to the instructor (:data:`WHAT_HAPPENS`), and grading does one of
    the two, never a silent 0. That line is the same for a right and a wrong answer (saying which would tell
    the key), and the graded feedback of one sent to review says so."""
    from course.checks import check_answered
    from course.checks.answers import WHAT_HAPPENS

    said, happened = {"instructor": 0, "either": 0}, set()
    for (lesson_name, question), case in CASES.items():
        cell = _cell(lesson_name, question)
        for text in case["honest"] + case["wrong"]:
            printed = check_answered(text, question, "short answer", "somewhere")
            outcome = verdict(cell, question, text)
            if "it goes to your instructor whatever it says" in printed:
                said["instructor"] += 1
                assert outcome == "review", (question, text)
            else:
                said["either"] += 1
                assert WHAT_HAPPENS in printed and outcome in ("pass", "review"), (question, text, outcome)
                happened.add(outcome)
        lines = {check_answered(t, question, "short answer", "x").replace(repr(read_words(t)[0]), "<answer>")
                 for t in (case["honest"][0], "the max", "I do not know")}
        assert len(lines) == 1, lines
    assert said["instructor"] >= 20 and said["either"] >= 200, said
    assert happened == {"pass", "review"}, "both outcomes happen to answers the line cannot tell apart"


def _graded_message(lesson_name: str, question: str, answer: str) -> str:
    from course.checks import NeedsReview

    cell = _cell(lesson_name, question)
    import course.checks as checks

    namespace = {name: getattr(checks, name) for name in ("check_answered", "check_words", "check_value")}
    namespace[question] = answer
    with pytest.raises(NeedsReview) as raised, contextlib.redirect_stdout(io.StringIO()):
        exec(compile(cell.source, cell.id, "exec"), namespace)
    return str(raised.value)


def test_an_answer_sent_to_review_is_told_so_when_graded():
    assert "your instructor will read this answer; it counts 0 until then" in _graded_message(
        "lesson1_by_hand", "q1", "the mean, or the max")


def test_a_shape_is_parsed_and_checked_exactly():
    cell = _cell("lesson1_by_hand", "q4")
    for right in ["(N, C, 1, 1)", "[N, C, 1, 1]", "(n,c,1,1)", "N x C x 1 x 1", "N\u00d7C\u00d71\u00d71", "(B, C, 1, 1)",
                  "torch.Size([N, C, 1, 1])", "(N, C, 1, 1,)", " (N, C, 1, 1). "]:
        assert verdict(cell, "q4", right) == "pass", right
    for wrong in ["(N, C, H, W)", "(N, 1, 1, 1)", "(N, C)", "(N, C, 1)", "(1, C, 1, 1)", "(C, N, 1, 1)", "(N, C, 1, 1, 1)",
                  "(N, C, 01, 2)", "(N, H, 1, 1)", "(N, C, 7, 7)"]:
        assert verdict(cell, "q4", wrong) == "fail", wrong
    from course.checks import NeedsReview, check_answered, check_shape

    # issue 53: a string that is not read as a shape goes to the instructor (review), never a 0 for its form
    for unparsed in ["one value per channel", "(N, C, 1, 1) or (N, 1, 1, 1)", "NxCx1x1", "(N, C, H/2, W/2)", "C",
                     "a 4-D tensor with one value per channel"]:
        assert verdict(cell, "q4", unparsed) == "review", unparsed
        for check in (lambda a: check_answered(a, "q4", "shape", "section 6"),
                      lambda a: check_shape(a, "q4", ("N", "C", 1, 1))):
            with pytest.raises(NeedsReview, match="your instructor, who reads it") as raised:
                check(unparsed)
            assert raised.value.answer == unparsed
    for not_a_string in [4, ("N", "C", 1, 1), None, "", "   "]:  # nothing a person could read as written
        assert verdict(cell, "q4", not_a_string) == "fail", not_a_string
        with pytest.raises(AssertionError, match="answer with a shape") as raised:
            check_answered(not_a_string, "q4", "shape", "section 6")
        assert not isinstance(raised.value, NeedsReview)


def test_a_layer_is_parsed_never_run_and_checked_exactly(tmp_path):
    cell = _cell("lesson1_by_hand", "q8")
    for right in ["nn.AdaptiveAvgPool2d((1, 1))", "nn.AdaptiveAvgPool2d(1)", "torch.nn.AdaptiveAvgPool2d(1)",
                  "AdaptiveAvgPool2d(output_size=(1, 1))", "nn.AdaptiveAvgPool2d(output_size=1)",
                  "nn.AdaptiveAvgPool2d([1, 1])", " torch.nn.AdaptiveAvgPool2d( (1 , 1) ) "]:
        assert verdict(cell, "q8", right) == "pass", right
    for wrong in ["nn.AdaptiveMaxPool2d((1, 1))", "nn.AvgPool2d(7)", "nn.AdaptiveAvgPool2d((7, 7))", "nn.AdaptiveAvgPool2d(0)",
                  "nn.AdaptiveAvgPool1d(1)", "nn.AdaptiveAvgPool2d(True)", "nn.AdaptiveAvgPool2d(1.0)",
                  "nn.AdaptiveAvgPool2d((1, None))", "nn.AdaptiveAvgPool2d(1, 1)", "nn.AdaptiveAvgPool2d(size=1)",
                  "nn.AdaptiveAvgPool2d()", "nn.Identity()", "nn.Linear(512, 1000)",
                  "my.nn.AdaptiveAvgPool2d(1)", "nn.AdaptiveAvgPool2d((1, 1, 1))"]:
        assert verdict(cell, "q8", wrong) == "fail", wrong
    marker = tmp_path / "ran"
    from course.checks import NeedsReview, check_layer

    # issue 53: a string that is not read as one call goes to the instructor (review), never a 0 for its form
    for unparsed in ["nn.AdaptiveAvgPool2d", "layer = nn.AdaptiveAvgPool2d(1)", "`nn.AdaptiveAvgPool2d(1)`",
                     "nn.AdaptiveAvgPool2d(1) or nn.AdaptiveMaxPool2d(1)", "nn.AdaptiveAvgPool2d(*[1])",
                     f"nn.AdaptiveAvgPool2d(open({str(marker)!r}, 'w'))", "nn.AdaptiveAvgPool2d(1)(x)",
                     "(" * 500 + ")" * 500, "x" * 300, "adaptive average pooling to 1x1",
                     "F.adaptive_avg_pool2d(x, 1)"]:  # an argument that is not a literal: not read
        assert verdict(cell, "q8", unparsed) == "review", unparsed
        with pytest.raises(NeedsReview, match="your instructor, who reads it"):
            check_layer(unparsed, "q8", ("nn.AdaptiveAvgPool2d",), "output_size", (1,))
    for not_a_string in [None, 1, "", "  "]:
        assert verdict(cell, "q8", not_a_string) == "fail", not_a_string
    assert not marker.exists(), "the answer was run"


if __name__ == "__main__":
    print(format_table(table()))
