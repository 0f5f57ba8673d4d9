"""What a submission or its sandboxed child hands the grader is untrusted data.

Two rules, each in one place:

* :func:`checked`: every field of every message the child sends is checked by type and range before the
  parent uses it (:data:`MESSAGES` says what each message holds); anything else is a
  :class:`~autograder.grading._child.ProtocolError` naming the field and the rule. Student code can write
  to the child's reply pipe, so a malformed message after student code ran is the student's fault (the
  sandbox turns it into a crash of that cell or test), never an error of the grader.
* :func:`~autograder.safe_text.clean_text` / :func:`~autograder.safe_text.clean_tree` (in
  :mod:`autograder.safe_text`, which records and feedback use too): text made safe to write anywhere.
"""

from __future__ import annotations

import math

from autograder.grading._child import BUILTIN_ERRORS, ProtocolError, decode
from autograder.safe_text import clean_text, clean_tree

# ---------------------------------------------------------------------------------------------------
# Messages. A rule takes (value, bounds) and returns the value to use, or raises _Broken(what it must be).

class _Broken(Exception):
    pass


def _text(limit: str | int):
    """A string of at most ``limit`` characters (a number, or the name of a bound), cleaned."""
    def rule(value, bounds):
        most = bounds[limit] if isinstance(limit, str) else limit
        if type(value) is not str or len(value) > most:
            raise _Broken(f"must be text of at most {most} characters")
        return clean_text(value)
    return rule


def _integer(low: str | int, high: str | int | None = None):
    """An int (not a bool) with ``low <= value < high`` (numbers, or names of bounds)."""
    def rule(value, bounds):
        lo = bounds[low] if isinstance(low, str) else low
        hi = bounds[high] if isinstance(high, str) else high
        if type(value) is not int or value < lo or (hi is not None and value >= hi):
            raise _Broken(f"must be an int in [{lo}, {'...' if hi is None else hi})")
        return value
    return rule


def _the(name: str):
    """Exactly the value of bound ``name`` (which cell a message must be about, say)."""
    def rule(value, bounds):
        if type(value) is not type(bounds[name]) or value != bounds[name]:
            raise _Broken(f"must be {bounds[name]!r}")
        return value
    return rule


def _seconds(value, bounds):
    if type(value) not in (int, float) or not math.isfinite(value) or not 0 <= value <= 1e7:
        raise _Broken("must be a finite number of seconds >= 0")
    return float(value)


def _flag(value, bounds):
    if type(value) is not bool:
        raise _Broken("must be true or false")
    return value


def _mapping(value, bounds):
    if type(value) is not dict:
        raise _Broken("must be an object")
    return clean_tree(value)


def _names(value, bounds):
    if type(value) is not list or len(value) > 1_000_000 or any(type(v) is not str for v in value):
        raise _Broken("must be a list of at most 1000000 strings")
    return [clean_text(v) for v in value]


def _operators(value, bounds):
    """The walled operators a request's student code called (``_child.WALL_HITS``): a few names."""
    if type(value) is not list or len(value) > 100 or any(type(v) is not str or len(v) > 200 for v in value):
        raise _Broken("must be a list of at most 100 operator names")
    return [clean_text(v) for v in value]


#: The phases a child may report about itself with ``ready`` (``_child.Child.run_cells``): its CPU seconds.
CHILD_PHASES = ("start_cpu", "contain_cpu", "setup_cpu", "cells_cpu")


def _phases(value, bounds):
    """The child's own CPU seconds by phase: only :data:`CHILD_PHASES`, each a number of seconds (shown in the
    record beside the parent's figures, never used for a verdict)."""
    if type(value) is not dict or any(k not in CHILD_PHASES for k in value):
        raise _Broken(f"must be an object with keys among {', '.join(CHILD_PHASES)}")
    return {k: _seconds(v, bounds) for k, v in value.items()}


def _anything(value, bounds):  # a value tree: the codec checks it when it is read (decode)
    return value


def _nested(kind: str):
    def rule(value, bounds):
        if type(value) is not dict:
            raise _Broken(f"must be an object ({kind})")
        return _fields(value, kind, bounds)
    return rule


def _optional(rule):
    """``rule``, for a field that may be left out."""
    def optional(value, bounds):
        return rule(value, bounds)
    optional.optional = True
    return optional


def _one_of(*choices: str):
    def rule(value, bounds):
        if value not in choices or type(value) is not str:
            raise _Broken(f"must be one of {', '.join(choices)}")
        return value
    return rule


#: What each message from the child holds: ``{op: {field: rule}}`` (a reply to a request has no ``op``:
#: ``reply``), and the objects nested in them (``error``, ``capture``). Bounds: ``cells`` (how many cells the
#: child runs), ``first`` (the first cell that may start now), ``cell`` (the cell that is running),
#: ``output_chars`` (captured output kept per stream).
MESSAGES = {
    "hello": {"op": _one_of("hello"), "active": _mapping, "pid": _integer(1)},
    "cell_start": {"op": _one_of("cell_start"), "index": _integer("first", "cells")},
    "cell_done": {"op": _one_of("cell_done"), "index": _the("cell"), "raise": _optional(_nested("error")),
                  "stdout": _nested("capture"), "stderr": _nested("capture"), "seconds": _seconds},
    "ready": {"op": _one_of("ready"), "names": _names, "phases": _optional(_phases)},
    "reply": {"ok": _optional(_anything), "raise": _optional(_nested("error")), "stdout": _nested("capture"),
              "stderr": _nested("capture"), "seconds": _seconds, "wall": _optional(_operators)},
    "error": {"type": _text(200), "builtin": _one_of(*BUILTIN_ERRORS, "BaseException"), "message": _text(4000),
              "memory": _optional(_flag)},
    "capture": {"text": _text("output_chars"), "dropped": _integer(0)},
    "ref": {"$ref": _integer(1), "type": _text(1000), "callable": _flag},  # a student object inside a value
}


def _fields(message: dict, kind: str, bounds: dict) -> dict:
    """``message`` as :data:`MESSAGES` ``[kind]`` says it must be (see :func:`checked`)."""
    shape = MESSAGES[kind]
    unknown = sorted(str(k) for k in message if k not in shape)
    if unknown:
        raise ProtocolError(f"a {kind!r} message has unknown fields {', '.join(unknown)[:200]}")
    out = {}
    for name, rule in shape.items():
        if name not in message:
            if getattr(rule, "optional", False):
                continue
            raise ProtocolError(f"a {kind!r} message lacks its field {name!r}")
        try:
            out[name] = rule(message[name], bounds)
        except _Broken as broken:
            shown = clean_text(repr(message[name])[:80])
            raise ProtocolError(f"field {name!r} of a {kind!r} message {broken}, got {shown}") from None
    return out


def checked(message: dict, expected: tuple[str, ...], **bounds) -> dict:
    """``message`` from the child, which must be one of the ``expected`` kinds of :data:`MESSAGES` (by its
    ``op``; ``reply`` has none), with every field checked against ``bounds`` and its text cleaned.
    Raises :class:`ProtocolError` naming the field and the rule."""
    kind = message.get("op", "reply") if type(message) is dict else None
    if kind not in expected or type(kind) is not str:
        raise ProtocolError(f"unexpected message {clean_text(repr(kind)[:80])} (expected {' or '.join(expected)})")
    return _fields(message, kind, bounds)


#: What reading a value tree (trusted code, untrusted data) raises where the data is malformed.
_UNREADABLE = (ProtocolError, ValueError, TypeError, LookupError, ArithmeticError, RuntimeError, EOFError)


def decoded(node, blobs: list[bytes], ref):
    """The value of tree ``node`` that the child sent (:func:`_child.decode`; ``ref`` gets each student
    object's node checked as ``MESSAGES["ref"]``). Anything malformed is a :class:`ProtocolError`."""
    def checked_ref(item):
        return ref(_fields(item, "ref", {}))

    try:
        return decode(node, blobs, checked_ref)
    except _UNREADABLE as exc:
        raise ProtocolError(f"a value that cannot be read ({type(exc).__name__}: {clean_text(str(exc)[:200])})") \
            from None
