"""The knowledge checks' answers, scored only when certain (issue 42): the form of an answer
(:func:`check_answered`), and the checks of its hidden part.

* An answer with a structure is parsed and checked exactly: a letter or a boolean (``check_value``), a shape
  (:func:`read_shape`, :func:`check_shape`) and a PyTorch layer written as code (:func:`read_layer`,
  :func:`check_layer`: parsed with :mod:`ast`, never evaluated): a parsed wrong answer loses its point; a string
  that cannot be parsed is :class:`NeedsReview` (a person reads it), never a 0 for its form.
* An answer in words earns its point only when its :func:`read_words` form matches one of the question's
  accepted forms *whole*: a small :data:`Grammar` written from the course's own sentences, in the question's
  hidden test. Anything else (no form matched, a character the reading removed or does not read, another
  script, a question, a quotation) is :class:`NeedsReview`: 0 until the instructor reads it (nbgrader's
  "needs manual grade"), never a silent point or a silent 0.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import math
import re
import unicodedata
from typing import Any

import numpy as np

from course.checks.values import WrongValue


#: How a knowledge-check answer must be written, by form.
_FORMS = {"true/false": "True or False (Python's booleans, no quotes)",
          "short answer": 'a few words in a string, e.g. "..."',
          "shape": 'a shape in a string, dimensions as letters or whole numbers, e.g. "(N, C, 7, 7)"',
          "layer": 'the layer as you would create it in code, one call in a string, '
                   'e.g. "nn.Conv2d(3, 8, kernel_size=3)"',
          "2x2 numbers": "two rows of two numbers, nested lists, e.g. [[0.5, 0], [0, 0.5]]"}


def _is_number(value: Any) -> bool:
    return (type(value) in (int, float) or isinstance(value, (np.integer, np.floating))) and math.isfinite(value)


class Answered(str):
    """The feedback line of an answer whose form was checked (to print), which also knows where the topic is
    taught: a hidden test runs its check of the key inside :meth:`graded`, so a wrong answer points there too."""

    def __new__(cls, text: str, taught_in: str):
        line = super().__new__(cls, text)
        line.taught_in = taught_in
        return line

    @contextlib.contextmanager
    def graded(self):
        """Run the check of the key: a wrong answer (:class:`WrongValue`) says where it is taught, never the key."""
        try:
            yield
        except WrongValue as wrong:
            pointer = f"; it is taught in {self.taught_in}"
            raise WrongValue(f"{wrong}{pointer}", f"{wrong.withheld}{pointer}") from None


#: What happens to an answer in words that has no doubt, said before it is graded. Which of the two cannot be
#: said then: the accepted forms are in the hidden test, and "scores by itself" would tell the answer is right.
WHAT_HAPPENS = ("when graded, it either scores by itself (its words are one of the forms the grader accepts for "
                "this question) or goes to your instructor, who reads it and scores it by hand (0 until then); "
                "which one is not shown before grading, since that would tell whether it is right")


def _unparsed(answer: Any, name: str, form: str) -> None:
    """A shape or a layer the reader cannot parse: :class:`NeedsReview` when it is a string with something in
    it (a person can read it), else an ``AssertionError`` naming the form."""
    wanted = _FORMS[form]
    if type(answer) is str and answer.strip():
        raise NeedsReview(f"{name}: {answer!r} is not read as {wanted}, so it goes to your instructor, who "
                          "reads it and scores it by hand (0 until then); write it in that form to have it "
                          "scored by itself", answer)
    raise AssertionError(f"{name}: answer with {wanted}, got {answer!r}")


def check_answered(answer: Any, name: str, form: Any, taught_in: str) -> Answered:
    """Check the *form* of a knowledge-check answer; return formative feedback (to print) that never
    depends on the key: how the answer was read, and where the topic is taught (an :class:`Answered`,
    whose ``graded()`` gives a wrong answer the same pointer).

    An answer in words is said to go to the instructor when a doubt sends it there whatever it says; else
    :data:`WHAT_HAPPENS` (either may happen: the visible check cannot know which without the key). A shape or a
    layer that is not parsed is :class:`NeedsReview` at once (:func:`_unparsed`).

    ``form`` is a list of letters (multiple choice), ``"true/false"``, ``"short answer"`` (words:
    :func:`check_words` grades them), ``"shape"`` (:func:`check_shape`), ``"layer"`` (:func:`check_layer`) or
    ``"2x2 numbers"`` (a prediction of a 2×2 grid: two rows, lists or tuples, of two finite numbers each).
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
        words, doubts = read_words(answer) if type(answer) is str else ("", [])
        ok = len(words.replace(" ", "")) >= 3
        read = repr(words) + (f"; it goes to your instructor whatever it says ({doubts[0]}), who reads it and "
                              "scores it by hand: 0 until then" if doubts else f"; {WHAT_HAPPENS}")
    elif form in ("shape", "layer"):
        parsed = read_shape(answer) if form == "shape" else read_layer(answer)
        if parsed is None:
            _unparsed(answer, name, form)
        ok = True
        read = "(" + ", ".join(map(str, parsed)) + ")" if form == "shape" else answer.strip()
    else:
        ok = any(type(answer) is type(option) and answer == option for option in form)
        read = repr(answer)
    if not ok:
        wanted = _FORMS.get(form) if isinstance(form, str) else f"one of {list(form)!r}"
        raise AssertionError(f"{name}: answer with {wanted}, got {answer!r}")
    return Answered(f"{name}: answered, read as {read}. Unsure? It is taught in {taught_in}.", taught_in)


#: A grammar: ``{rule: [alternative, ...]}``, started at ``"answer"``. An alternative is words separated
#: by spaces; ``<rule>`` stands for any alternative of that rule; a trailing ``?`` makes an item optional.
#: Words are those of :func:`read_words` (lower case, ``'`` kept inside a word, ``/`` and ``x`` as words).
Grammar = dict

#: Characters read as they are besides ASCII: the multiplication signs, the curly apostrophes, arrows, dashes.
_READ = {"\u00d7": " x ", "\u00b7": " x ", "*": " x ", "\u2019": "'", "\u2018": "'", "\u2192": " so ",
         "->": " so ", "=>": " so ", "\u2013": " ", "\u2014": " "}
#: What an answer in words may hold after :data:`_READ`: letters, digits, spaces, ``'``, ``/``, ``+``, ``=``
#: and the punctuation that only separates (read as a space).
_SEPARATORS = ",;:.()[]{}-"
#: Marks that change what the words around them say: a question, an exclamation, a quotation.
_MARKS = {"?": "it asks a question", "!": "it exclaims", '"': "it quotes", "`": "it quotes",
          "\u201c": "it quotes", "\u201d": "it quotes", "\u00ab": "it quotes", "\u00bb": "it quotes"}


def read_words(answer: str) -> tuple[str, list[str]]:
    """An answer in words as the grammars read it, and the doubts that send it to the instructor whatever
    it says: ``("the mean of the window's values", [])``. Unicode NFKC; format, control (other than white
    space), combining, private-use and unassigned characters removed (a doubt: they do not show); any other
    letter outside ASCII (another script: a look-alike "о" in "nоt") a doubt; a question mark, an
    exclamation mark or a quotation mark a doubt; case folded; ``,;:.()[]{}-`` read as spaces; ``×·*``
    read as ``x``, an arrow as ``so``; one space between words."""
    doubts = []
    text = unicodedata.normalize("NFKC", str(answer))
    hidden = [c for c in text if unicodedata.category(c) in ("Cf", "Cc", "Mn", "Me", "Mc", "Co", "Cs", "Cn")
              and not c.isspace()]
    if hidden:
        doubts.append("it has characters that do not show (" + ", ".join(f"U+{ord(c):04X}" for c in hidden[:3]) + ")")
        text = "".join(c for c in text if c not in hidden)
    for mark, why in _MARKS.items():
        if mark in text and why not in doubts:
            doubts.append(why)
    text = text.casefold()
    for old, new in _READ.items():
        text = text.replace(old, new)
    if re.search(r"(?<![a-z0-9])'|'(?![a-z])", text):
        doubts.append("it quotes")
    foreign = sorted({c for c in text if not (c.isascii() or c.isspace())})
    if foreign:
        doubts.append("it has letters or signs outside the Latin alphabet (" + "".join(foreign[:5]) + ")")
    odd = sorted({c for c in text if c.isascii() and not (c.isalnum() or c.isspace() or c in "'/+=" + _SEPARATORS)
                  and c not in _MARKS})
    if odd:
        doubts.append(f"it has signs the grader does not read ({''.join(odd)})")
    text = re.sub(f"[{re.escape(_SEPARATORS)}]", " ", text)
    text = re.sub(r"([/+=])", r" \1 ", text)
    return " ".join(re.findall(r"[^\s]+", text)), doubts


@functools.lru_cache(maxsize=64)
def _checked(grammar_items: tuple) -> dict:
    """``{rule: (alternatives, the words it can start with, whether it can be empty)}``, each alternative
    ``(items, the words it can start with, whether it can be empty)``, an item ``(word or rule, is_rule,
    optional)``; a ValueError for an item that is neither a
    word nor a ``<rule>``, a rule that does not exist, or one that refers to itself (directly or not)."""
    rules = {}
    for name, alternatives in grammar_items:
        parsed = []
        for text in alternatives:
            items = []
            for item in text.split():
                optional = item.endswith("?")
                item = item.rstrip("?")
                if item.startswith("<") and item.endswith(">"):
                    items.append((item[1:-1], True, optional))
                elif re.fullmatch(r"[a-z0-9'/+=]+", item):
                    items.append((item, False, optional))
                else:
                    raise ValueError(f"grammar: {item!r} is neither a word nor a <rule>")
            parsed.append(tuple(items))
        rules[name] = tuple(parsed)

    def visit(name: str, seen: tuple) -> None:
        if name in seen:
            raise ValueError(f"grammar: rule <{name}> refers to itself")
        if name not in rules:
            raise ValueError(f"grammar: no rule <{name}>")
        for alternative in rules[name]:
            for item, is_rule, _ in alternative:
                if is_rule:
                    visit(item, seen + (name,))

    visit("answer", ())
    first: dict[str, tuple[frozenset, bool]] = {}

    def starts(items: tuple) -> tuple[frozenset, bool]:
        """The words a sequence of items can start with, and whether it can be empty (to skip what cannot match)."""
        words = set()
        for item, is_rule, optional in items:
            item_words, item_empty = rule_starts(item) if is_rule else ({item}, False)
            words |= item_words
            if not (optional or item_empty):
                return frozenset(words), False
        return frozenset(words), True

    def rule_starts(name: str) -> tuple[frozenset, bool]:
        if name not in first:
            each = [starts(alternative) for alternative in rules[name]]
            first[name] = (frozenset().union(*(w for w, _ in each)), any(e for _, e in each))
        return first[name]

    return {name: (tuple((alternative, *starts(alternative)) for alternative in alternatives), *rule_starts(name))
            for name, alternatives in rules.items()}


def matches(grammar: Grammar, words: str) -> bool:
    """Whether ``words`` (read by :func:`read_words`) is, whole, one of the answers ``grammar`` accepts: every
    way of reading it is tried (the word positions each rule can end at, from each start, remembered)."""
    rules = _checked(tuple((k, tuple(v)) for k, v in grammar.items()))
    tokens = words.split()

    @functools.cache
    def ends(rule: str, start: int) -> frozenset:
        found = set()
        word = tokens[start] if start < len(tokens) else None
        for alternative, words, empty in rules[rule][0]:
            if not (empty or word in words):
                continue
            positions = {start}
            for item, is_rule, optional in alternative:
                after = set(positions) if optional else set()
                for at in positions:
                    if is_rule:
                        _, can_start, can_be_empty = rules[item]
                        if can_be_empty or (at < len(tokens) and tokens[at] in can_start):
                            after |= ends(item, at)
                    elif at < len(tokens) and tokens[at] == item:
                        after.add(at + 1)
                positions = after
                if not positions:
                    break
            found |= positions
        return frozenset(found)

    return len(tokens) in ends("answer", 0)


class NeedsReview(AssertionError):
    """An answer the grader cannot settle with certainty: no point until the instructor reads it (the
    trusted grader records ``answer``; nbgrader flags the cell "needs manual grade")."""

    def __init__(self, message: str, answer: str):
        super().__init__(message)
        self.answer = answer


def check_words(answer: Any, name: str, grammar: Grammar) -> None:
    """Give the point to an answer in words only when :func:`read_words` reads it with no doubt and the
    whole of it is one of ``grammar``'s forms; anything else (a string) is :class:`NeedsReview`."""
    if type(answer) is not str:
        raise AssertionError(f"{name}: a short answer is a string, got {answer!r}")
    words, doubts = read_words(answer)
    if not doubts and matches(grammar, words):
        return
    why = doubts[0] if doubts else "it is not one of the forms this question scores automatically"
    raise NeedsReview(f"{name}: {answer!r} goes to your instructor ({why}): your instructor will read this "
                      "answer; it counts 0 until then", answer)


# ---- structured answers ---------------------------------------------------------------------------------

_DIMENSION = re.compile(r"[A-Za-z_]\w*|[0-9]+")


def read_shape(answer: Any) -> tuple | None:
    """A shape of two dimensions or more written in a string, as a tuple of its dimensions (a name as written,
    or an int), or ``None`` when it is not one (a single word is not read as a shape): ``"(N, C, 7, 7)"``,
    ``"[N, C, 7, 7]"``, ``"N x C x 7 x 7"``, ``"N×C×7×7"`` and
    ``"torch.Size([N, C, 7, 7])"`` all read ``("N", "C", 7, 7)``."""
    if type(answer) is not str or len(answer) > 200:
        return None
    text = unicodedata.normalize("NFKC", answer).strip().rstrip(".").strip()
    size = re.fullmatch(r"torch\.Size\(\s*(.*)\s*\)", text, flags=re.S)
    if size:
        text = size.group(1).strip()
    if text[:1] + text[-1:] in ("()", "[]"):
        text = text[1:-1]
    parts = [p.strip() for p in re.split(r",|\s[x×*]\s|×|\*", text)]
    if parts and parts[-1] == "" and "," in text:  # "(N, C, 1, 1,)"
        parts = parts[:-1]
    if len(parts) < 2 or not all(_DIMENSION.fullmatch(p) for p in parts):
        return None
    return tuple(int(p) if p.isdigit() else p for p in parts)


def check_shape(answer: Any, name: str, expected: tuple, aliases: dict | None = None) -> None:
    """Assert that ``answer`` (a string) reads (:func:`read_shape`) as ``expected``: numbers equal, names
    equal up to case or one of ``aliases[name]`` (``{"N": ("B",)}``). A wrong shape is a
    :class:`course.checks.WrongValue` (the feedback does not show the key); a string that is not read as a shape
    is :class:`NeedsReview` (a person reads it), any other answer an ``AssertionError``."""
    got = read_shape(answer)
    if got is None:
        _unparsed(answer, name, "shape")
    aliases = aliases or {}

    def same(g, e) -> bool:
        if type(e) is int:
            return type(g) is int and g == e
        return type(g) is str and g.casefold() in {a.casefold() for a in (e, *aliases.get(e, ()))}

    if not (len(got) == len(expected) and all(same(g, e) for g, e in zip(got, expected))):
        shown = "(" + ", ".join(map(str, got)) + ")"
        raise WrongValue(f"{name}: expected ({', '.join(map(str, expected))}) but got {shown}",
                         f"{name}: got {shown}, not the expected shape")


def read_layer(answer: Any) -> tuple[str, tuple, dict] | None:
    """A layer written as code in a string (``"nn.Conv2d(3, 8, kernel_size=3)"``), parsed, never evaluated:
    ``(dotted name, positional literals, keyword literals)``, or ``None`` when it is not one call of a
    (dotted) name with literal arguments."""
    if type(answer) is not str or len(answer) > 200:
        return None
    try:
        tree = ast.parse(answer.strip(), mode="eval")
        call = tree.body
        if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return None
        parts, node = [], call.func
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(node.id)
        args = tuple(ast.literal_eval(a) for a in call.args)
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    return ".".join(reversed(parts)), args, kwargs


def _plain_equal(got: Any, want: Any) -> bool:
    """Equal, type for type (``True`` is not ``1``; a tuple and a list of the same ints are both sizes)."""
    if type(want) in (tuple, list):
        return type(got) in (tuple, list) and len(got) == len(want) and all(map(_plain_equal, got, want))
    return type(got) is type(want) and got == want


def check_layer(answer: Any, name: str, layers: tuple[str, ...], argument: str, values: tuple) -> None:
    """Assert that ``answer`` (a string) is a call (:func:`read_layer`) of one of ``layers`` (dotted names as
    written: ``"nn.AvgPool2d"``) with one argument, positional or named ``argument``, equal to one
    of ``values``. A wrong layer or argument is a :class:`course.checks.WrongValue`; a string that is not read
    as one call is :class:`NeedsReview` (a person reads it), any other answer an ``AssertionError``."""
    got = read_layer(answer)
    if got is None:
        _unparsed(answer, name, "layer")
    callee, args, kwargs = got
    given = list(args) + [v for k, v in kwargs.items() if k == argument]
    ok = (callee in layers and len(given) == 1 and set(kwargs) <= {argument}
          and any(_plain_equal(given[0], v) for v in values))
    if not ok:
        raise WrongValue(f"{name}: expected {layers[0]}({values[0]!r}) but got {answer.strip()}",
                         f"{name}: got {answer.strip()}, not the expected layer")
