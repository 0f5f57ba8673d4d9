"""Short answers of the knowledge checks: the form of an answer (:func:`check_answered`), the keyword rule
(:func:`check_short_answer`, :func:`normalised_answer`) and :class:`NeedsReview`, the answers it leaves to
the instructor."""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any, Iterable

import numpy as np


#: How a knowledge-check answer must be written, by form.
_FORMS = {"true/false": "True or False (Python's booleans, no quotes)",
          "short answer": 'a few words in a string, e.g. "..."',
          "2x2 numbers": "two rows of two numbers, nested lists, e.g. [[0.5, 0], [0, 0.5]]"}


def _is_number(value: Any) -> bool:
    return (type(value) in (int, float) or isinstance(value, (np.integer, np.floating))) and math.isfinite(value)


def check_answered(answer: Any, name: str, form: Any, taught_in: str) -> str:
    """Check the *form* of a knowledge-check answer; return formative feedback (to print) that never
    depends on the key: how the answer was read, and where the topic is taught.

    ``form`` is a list of letters (multiple choice), ``"true/false"``, ``"short answer"`` or ``"2x2 numbers"``
    (a prediction of a 2×2 grid: two rows, lists or tuples, of two finite numbers each).
    """
    if isinstance(form, str) and form not in _FORMS:
        raise ValueError(f"form must be a list of letters, {', '.join(repr(f) for f in _FORMS)}, got {form!r}")
    if form == "true/false":
        ok = type(answer) is bool
        read = repr(answer)
    elif form == "2x2 numbers":
        ok = (type(answer) in (list, tuple) and len(answer) == 2
              and all(type(row) in (list, tuple) and len(row) == 2 and all(_is_number(v) for v in row) for row in answer))
        read = repr([[float(v) for v in row] for row in answer]) if ok else ""
    elif form == "short answer":
        ok = type(answer) is str and len(normalised_answer(answer).replace(" ", "")) >= 3
        read = repr(normalised_answer(answer)) if ok else ""
    else:
        ok = any(type(answer) is type(option) and answer == option for option in form)
        read = repr(answer)
    if not ok:
        wanted = _FORMS.get(form) if isinstance(form, str) else f"one of {list(form)!r}"
        raise AssertionError(f"{name}: answer with {wanted}, got {answer!r}")
    return f"{name}: answered, read as {read}. Unsure? It is taught in {taught_in}."


def normalised_answer(text: str) -> str:
    """A short answer as the grader reads it: lower case, Unicode compatibility forms folded, curly
    apostrophes straight, one space between words and none around brackets, commas and ``=`` (so
    ``"(N, C, 1, 1)"`` reads ``"(n,c,1,1)"``), no surrounding spaces or final full stop."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold().replace("\u2019", "'").replace("\u2018", "'")
    folded = re.sub(r"\s+", " ", folded).strip().rstrip(".").strip()
    return re.sub(r"\s*([()\[\],=×*])\s*", r"\1", folded)


class NeedsReview(AssertionError):
    """A short answer that a keyword rule cannot settle (:func:`check_short_answer`): it names the key
    ideas but also negates or contradicts something. It fails like any ``AssertionError`` (no point); the
    trusted grader records the answer (``answer``) so that the instructor scores it by hand."""

    def __init__(self, message: str, answer: str):
        super().__init__(message)
        self.answer = answer


#: A word that negates or reverses what it is next to: ``not`` (but not ``not only``/``not just``), ``no``,
#: ``never``, ``neither``/``nor``, ``none``, ``nothing``, ``without``, ``cannot``, every ``-n't`` (with or
#: without the apostrophe), ``rather than``, ``instead of``, ``unlike``, ``far from``, ``fail(s/ed) to``,
#: ``hardly``, and the words that call a claim untrue or take it back (``false``, ``wrong``, ``myth``,
#: ``doubt``, ``disagree``, ``nope``, ``kidding``, ``misconception``, ``deprecated``, ``said nobody``,
#: ``allegedly``, ``the other way round``, ``the reverse``, ...).
NEGATION = re.compile(r"\b(?:not(?! only\b| just\b| merely\b)|no|never|neither|nor|none|nothing|without|cannot|"
                      r"hardly|rather than|instead of|unlike|far from|fail(?:s|ed)? to|false\w*|wrong\w*|untrue|"
                      r"incorrect\w*|myths?|opposite|contrary|doubt\w*|dubious|questionable|disagree\w*|nope|nah|"
                      r"kidding|joking|misconception\w*|mistaken|deprecated|nonsense|bogus|nobody|no-one|nowhere|"
                      r"allegedly|supposedly|reverse\w*|vice versa|other way (?:a)?round|as if|in your dreams|"
                      r"yeah,? right|lol|sarcas\w*|ironic\w*|pretend\w*|"
                      r"(?:is|are|was|were|do|does|did|has|have|had|wo|ca|could|would|should|must|need)n'?t)\b")
#: A word that offers another answer beside the key ("the mean or the mode"): a choice is not an answer.
ALTERNATIVE = re.compile(r"\b(?:or|either|whichever|otherwise|alternatively)\b")


def _governs(negation: re.Match, match: re.Match, text: str) -> bool:
    """Whether ``negation`` negates ``match``: the match starts after it, at most three words later, with
    no punctuation between ("not the max", "rather than the max"; not "no, the max")."""
    between = text[negation.end():match.start()]
    return (negation.end() <= match.start() and len(re.findall(r"[\w']+", between)) <= 3
            and not re.search(r"[,;:!?()]|\.(?=\s|$)", between))


def check_short_answer(answer: Any, name: str, all_of: Iterable[str], none_of: Iterable[str] = (),
                       contradicts: Iterable[str] = ()) -> None:
    """Grade a short answer by meaning, failing closed: a keyword match never gives a point to an answer
    that also negates or contradicts it. Its :func:`normalised_answer` is read with regular expressions:
    ``all_of`` the key ideas (each with its spellings and its direction: "fewer parameters", not just
    "parameters"; an idea stated as a negation holds its negation: "does not depend on where"),
    ``none_of`` wrong answers (another option: "the mean or the max"), ``contradicts`` the opposites of
    the key ideas ("more parameters"). A negation (:data:`NEGATION`) *governs* what starts at most three
    words after it with no punctuation between ("..., not the max"). Then:

    * a key idea missing, or a wrong answer that no negation governs: not the answer (``AssertionError``);
    * a question mark, a letter outside the Latin alphabet (a look-alike "о" in "nоt"), another answer offered
      (``or``, ``either``: "the mean or the mode"), an opposite that no negation governs, or any other
      negation: one that is not part of a key idea's
      own match and does not govern a wrong answer or an opposite alone, without a key idea ("it does *not*
      reduce overfitting", "..., that is false"): :class:`NeedsReview`, no point until the instructor reads it;
    * else the point ("the mean, not the max" scores: its negation governs a wrong answer only).
    """
    if type(answer) is not str:
        raise AssertionError(f"{name}: a short answer is a string, got {answer!r}")
    text = normalised_answer(answer)
    negations = list(NEGATION.finditer(text))
    keys = [list(re.finditer(pattern, text)) for pattern in all_of]
    wrong = [m for pattern in none_of for m in re.finditer(pattern, text)]
    opposite = [m for pattern in contradicts for m in re.finditer(pattern, text)]
    if not all(keys) or any(not any(_governs(n, m, text) for n in negations) for m in wrong):
        raise AssertionError(f"{name}: {answer!r} is not the answer")
    why = "it asks a question instead of stating an answer" if "?" in text else ""
    if any(char.isalpha() and not char.isascii() for char in text):
        why = "it has letters outside the Latin alphabet (a look-alike letter reads as another word)"
    matches = [m for found in keys for m in found]
    offered = [m for m in ALTERNATIVE.finditer(text) if not any(k.start() <= m.start() < k.end() for k in matches)]
    if offered and not why:
        why = f"it offers more than one answer ({offered[0].group()!r})"
    if any(not any(_governs(n, m, text) for n in negations) for m in opposite):
        why = "it also says something that contradicts the answer"
    for n in negations:
        inside = any(m.start() <= n.start() and n.end() <= m.end() for m in matches)
        allowed = any(_governs(n, m, text) for m in wrong + opposite) and \
            not any(_governs(n, m, text) for m in matches)
        if not (inside or allowed or why):
            why = f"a keyword rule cannot settle an answer that says {n.group()!r}"
    if why:
        raise NeedsReview(f"{name}: {answer!r} needs a look: {why}; your instructor reads it, and it scores 0 "
                          "until then", answer)
