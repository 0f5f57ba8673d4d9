"""Text from a submission or its sandboxed child made safe to write anywhere (a notebook, a record, feedback,
the gradebook, a terminal): each lone surrogate (``'\\udcff'``, valid in JSON, not encodable in UTF-8) becomes
U+FFFD and each control character but tab, newline and carriage return its escape (``\\x1b``).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _safe(match: re.Match) -> str:
    char = match.group()
    return "\ufffd" if "\ud800" <= char <= "\udfff" else f"\\x{ord(char):02x}"


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD and each control character other than tab,
    newline and carriage return by its escape (``'\\x1b'`` becomes the four characters ``\\x1b``, which
    means the same inside a Python string literal). Idempotent."""
    return _UNSAFE.sub(_safe, text)


def clean_tree(value):
    """``value`` (strings, numbers, ``None``, and lists, tuples and dicts of these) with every string, keys
    included, passed through :func:`clean_text`."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_tree(k): clean_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clean_tree(v) for v in value)
    return value
