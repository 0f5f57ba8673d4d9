"""One reader of argument names in error messages (issue 41 item 4).

:func:`course.checks.check_raises` asks two things of a message: that it *mentions* the argument at fault
(and the rule's words), and that it is not a catch-all (it does not name the same three or more arguments,
equally often, as the error for another argument did). Both read names with :func:`name_counts`, so no
spelling can be "mentioned" for one rule and "not named" for the other:

* Unicode look-alikes fold to ASCII first: compatibility forms (full-width, mathematical letters), accents
  and invisible characters (zero-width spaces, soft hyphens) go, Cyrillic and Greek letters that look like
  Latin ones become those (:data:`LOOK_ALIKES`);
* case, separators and word forms do not matter: ``kernel_size``, ``Kernel Size``, ``kernelSize``,
  ``kernel-sizes``, ``KERNEL_SIZE's`` and ``kernelsize`` all name ``kernel_size``; ``strided`` names
  ``stride``, ``channel`` names ``channels``;
* a name of four letters or more is found inside longer words (``badpadding`` names ``padding``); a
  shorter one (``x``, ``4``) only as a word of its own (``x.shape`` and ``4-D`` name them, ``max`` and
  ``expected`` do not name ``x``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Iterable

#: Letters of other scripts drawn like Latin ones (lower and upper case), read as those.
LOOK_ALIKES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ɡ": "g", "һ": "h",
    "ԛ": "q", "ԝ": "w", "ӏ": "l", "ո": "n", "ս": "u",
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ї": "I", "Ј": "J", "Ԁ": "D", "Ӏ": "I", "Ԛ": "Q",
    "Ԝ": "W",
    # Greek
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "γ": "y", "ς": "s", "η": "n", "ω": "w",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin letters of other shapes
    "ı": "i", "ȷ": "j", "ſ": "s", "ℓ": "l", "ⅰ": "i",
})

#: Word endings read as one word: ``strides``, ``strided``, ``striding`` are ``stride``.
_ENDINGS = ("ings", "ing", "ies", "es", "ed", "s", "e", "y", "d")
_ENDING = "(?:" + "|".join(_ENDINGS) + ")?"
#: A name this long (its stems joined) is found inside longer words; a shorter one only as a word.
INSIDE_WORDS = 4


def folded(text: str) -> str:
    """``text`` with look-alikes read as Latin letters, compatibility forms, accents and invisible
    characters gone (case and separators kept)."""
    text = unicodedata.normalize("NFKC", str(text)).translate(LOOK_ALIKES)
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cf"))


def words(text: str) -> list[str]:
    """The words of ``text``, lower case: split at separators, case changes (``kernelSize``) and between
    letters and digits (``4D``)."""
    text = folded(text)
    text = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", text)
    return re.findall(r"[^\W\d_]+|\d+", text.lower())


def _stem(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


@functools.lru_cache(maxsize=512)
def _pattern(name: str) -> tuple[re.Pattern, bool]:
    """(pattern, inside words) for ``name``: the stems of its words, each with any ending, joined."""
    stems = [_stem(w) for w in words(name)]
    inside = len("".join(stems)) >= INSIDE_WORDS
    if inside:
        return re.compile(_ENDING.join(re.escape(s) for s in stems) + _ENDING), True
    body = (_ENDING + " ").join(re.escape(s) for s in stems) + _ENDING
    return re.compile(rf"(?<!\S){body}(?!\S)"), False


def _covers(family: str, name: str) -> bool:
    """Whether ``name`` is one of ``family``'s (``input`` covers ``input_size`` and ``input_shape``)."""
    a, b = [_stem(w) for w in words(family)], [_stem(w) for w in words(name)]
    return b[: len(a)] == a


def families(names: Iterable[str]) -> list[str]:
    """The names no other of ``names`` covers (``input`` and ``input_size``: ``input``), sorted."""
    names = sorted({n for n in names if words(n)})
    return [n for n in names if not any(o != n and _covers(o, n) for o in names)]


def family_of(name: str, roots: Iterable[str]) -> str | None:
    """The one of ``roots`` that covers ``name``, or ``None``."""
    return next((f for f in roots if _covers(f, name)), None)


def name_counts(message: str, names: Iterable[str]) -> dict[str, int]:
    """How often ``message`` names each of ``names`` (only those it names), read as the module says."""
    found = words(message)
    joined, spaced = "".join(found), " ".join(found)
    counts = {}
    for name in names:
        pattern, inside = _pattern(name)
        count = len(pattern.findall(joined if inside else spaced))
        if count:
            counts[name] = count
    return counts


def mentions(message: str, name: str) -> bool:
    """Whether ``message`` names ``name`` (:func:`name_counts`)."""
    return bool(name_counts(message, [name]))


def first_named(message: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``message`` names first (:func:`name_counts`'s reading), or ``None``."""
    found = words(message)
    joined, spaced = "".join(found), " ".join(found)
    first = None
    for name in names:
        pattern, inside = _pattern(name)
        match = pattern.search(joined if inside else spaced)
        if match:
            at = match.start() if inside else match.start() - spaced[: match.start()].count(" ")
            if first is None or at < first[0] or (at == first[0] and len(name) > len(first[1])):
                first = (at, name)
    return first and first[1]
