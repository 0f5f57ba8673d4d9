"""Error messages in many styles against every lesson's error cells: ``python -m benchmarks.message_styles``.

For each lesson's test cells that call ``check_raises`` (as the grader runs them: one compiled cell, fresh
globals), every function the cell checks is replaced by a stub that raises the error type the cell wants,
with a message written in one *style*: :data:`HONEST` styles name the argument at fault (and the rule's
words the cell asks for), sometimes with other arguments for context; :data:`CATCH_ALL` styles name every
argument of the function, in every spelling (plurals, case, separators, look-alike letters, names inside
longer words, with values, shuffled), plus every rule word the lesson's cells ask for, so that they
"mention" whatever a check wants. An honest style must pass every cell; a catch-all must fail every cell
that checks errors for two or more arguments of a function of three or more (:func:`catchable`; a function
of two arguments, lesson 5's ``overfitting_gap``, is a known limit, printed as such).

Prints per lesson how many styles of each kind behave, then a table: per style and lesson, the error cells
an honest style passed ("2/2 pass") and those a catch-all lost ("2/3 out": the rest are known limits). ``tests/course/test_message_styles.py`` asserts both sides.
"""

from __future__ import annotations

import json
import re
import sys
import types
from functools import lru_cache
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

#: The arguments of each function the error cells check, in order.
SIGNATURES = {
    "output_size": ("input_size", "kernel_size", "stride", "padding"),
    "avg_pool2d_loops": ("x", "kernel_size", "stride", "padding", "count_include_pad"),
    "avg_pool2d_loops_backward": ("grad_out", "input_shape", "kernel_size", "stride", "padding", "count_include_pad"),
    "avg_pool2d_numpy": ("x", "kernel_size", "stride", "padding", "count_include_pad"),
    "avg_pool2d_numpy_backward": ("grad_out", "input_shape", "kernel_size", "stride", "padding", "count_include_pad"),
    "AvgPool2dFunction.apply": ("x", "kernel_size", "stride", "padding", "count_include_pad"),
    "head_parameters": ("channels", "height", "width", "num_classes"),
    "overfitting_gap": ("history", "last"),
    "class_activation_map": ("features", "weight", "class_index"),
}
_CHECK = re.compile(r"check_raises\(\s*\w+,\s*\[([^\]]*)\],\s*([\w.]+)")


@lru_cache(maxsize=None)
def error_cells() -> dict[str, dict[str, str]]:
    """{lesson: {grade_id: source}} of every graded cell that calls ``check_raises``."""
    found = {}
    for path in sorted((REPO / "source").glob("*/*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and grade_id and "check_raises(" in source and \
                    cell["metadata"]["nbgrader"].get("grade"):
                found.setdefault(path.parent.name, {})[grade_id] = source
    return found


def _functions(source: str) -> list[str]:
    return sorted({m.group(2) for m in _CHECK.finditer(source)})


def rule_words(lesson: str) -> list[str]:
    """Every word after the first in the ``mentions`` of the lesson's cells (``float``, ``4``...)."""
    words = set()
    for source in error_cells()[lesson].values():
        for m in _CHECK.finditer(source):
            words |= set(re.findall(r"[\"']([^\"']+)[\"']", m.group(1))[1:])
    return sorted(words)


def _spaced(name: str) -> str:
    return name.replace("_", " ")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def _plural(name: str) -> str:
    return name if name.endswith("s") else name + "s"


_CYRILLIC = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "i": "і"})
_FULL = {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)}


def _or(names) -> str:
    names = list(names)
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def _values(values: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in values.items())


# A style: (argument at fault, the rule's words asked for, every argument of the function, the call's
# values by argument name) -> message.
HONEST = {
    "name, rule, value": lambda a, w, s, v: f"{a} must be a valid {' '.join(w) or 'value'}, got {v.get(a)!r}",
    "invalid name: value": lambda a, w, s, v: f"invalid {a}: {v.get(a)!r} {' '.join(w)}",
    "terse": lambda a, w, s, v: f"{a}: {' '.join(w) or 'bad value'}",
    "expected ...; got": lambda a, w, s, v: f"expected {a} to be {' '.join(w) or 'in range'}; got {a}={v.get(a)!r}",
    "a sentence": lambda a, w, s, v: f"The value {v.get(a)!r} given for {a} is not allowed ({' '.join(w)}).",
    "upper case": lambda a, w, s, v: f"{a.upper()} IS WRONG {' '.join(w).upper()}",
    "spaced words": lambda a, w, s, v: f"the {_spaced(a)} is not acceptable {' '.join(w)}",
    "camel case": lambda a, w, s, v: f"bad {_camel(a)} {' '.join(w)}",
    "hyphenated": lambda a, w, s, v: f"{a.replace('_', '-')} out of range {' '.join(w)}",
    "plural": lambda a, w, s, v: f"{_plural(a)} like {v.get(a)!r} are not allowed here {' '.join(w)}",
    "possessive": lambda a, w, s, v: f"{a}'s value {v.get(a)!r} breaks the rule {' '.join(w)}",
    "quoted": lambda a, w, s, v: f"argument '{a}' is invalid {' '.join(w)}",
    "the call, then the rule": lambda a, w, s, v: f"{_values(v)}: {a} is invalid {' '.join(w)}",
    "signature, then the rule": lambda a, w, s, v: f"({', '.join(s)}): {a} is invalid {' '.join(w)}",
    "the rule, then the call": lambda a, w, s, v: f"{a} is invalid {' '.join(w)} (called with {_values(v)})",
    "one other for context": lambda a, w, s, v: f"{a} does not fit {next(o for o in s if o != a)} {' '.join(w)}",
    "two others for context": lambda a, w, s, v: (
        f"{a} {' '.join(w)} does not fit with " + " and ".join([o for o in s if o != a][:2])),
    "named twice": lambda a, w, s, v: f"{a} must be valid {' '.join(w)}; {a}={v.get(a)!r}",
    "with the type": lambda a, w, s, v: f"{a} must not be {type(v.get(a)).__name__} {' '.join(w)}",
    "accented": lambda a, w, s, v: f"{a} est invalide (reçu {v.get(a)!r}) {' '.join(w)}",
    "name after the rule": lambda a, w, s, v: f"out of range {' '.join(w)}: {a}",
    "multi-line": lambda a, w, s, v: f"bad argument\n  {a} = {v.get(a)!r}\n  {' '.join(w)}",
}

CATCH_ALL = {
    "one of them": lambda a, w, s, v: f"{_or(s)} is wrong ({', '.join(w)})",
    "with every value": lambda a, w, s, v: f"invalid {_or(s)} (got {_values(v)}) {' '.join(w)}",
    "plurals": lambda a, w, s, v: f"{_or(_plural(n) for n in s)} are wrong {' '.join(w)}",
    "spaced words": lambda a, w, s, v: f"the {_or(_spaced(n) for n in s)} is wrong {' '.join(w)}",
    "camel case": lambda a, w, s, v: f"{_or(_camel(n) for n in s)} is invalid {' '.join(w)}",
    "title case": lambda a, w, s, v: f"{_or(_spaced(n).title() for n in s)} Is Invalid {' '.join(w)}",
    "upper case": lambda a, w, s, v: f"{_or(n.upper() for n in s)} IS INVALID {' '.join(w)}",
    "hyphenated": lambda a, w, s, v: f"{_or(n.replace('_', '-') for n in s)} is invalid {' '.join(w)}",
    "joined": lambda a, w, s, v: f"{'/'.join(s)} invalid {' '.join(w)}",
    "inside longer words": lambda a, w, s, v: "bad" + "or".join(n.replace("_", "") for n in s) + " " + " ".join(w),
    "possessives": lambda a, w, s, v: f"{_or(n + chr(39) + 's' for n in s)} value is wrong {' '.join(w)}",
    "inflected": lambda a, w, s, v: f"{_or(n + 'ed' for n in s)} wrongly {' '.join(w)}",
    "cyrillic look-alikes": lambda a, w, s, v: f"{_or(n.translate(_CYRILLIC) for n in s)} is wrong {' '.join(w)}",
    "full width": lambda a, w, s, v: f"{_or(s).translate(str.maketrans(_FULL))} is wrong {' '.join(w)}",
    "zero-width spaces": lambda a, w, s, v: f"{_or(n[:1] + chr(0x200B) + n[1:] for n in s)} is wrong {' '.join(w)}",
    "soft hyphens": lambda a, w, s, v: f"{_or(n[:2] + chr(0xAD) + n[2:] for n in s)} is wrong {' '.join(w)}",
    "accents": lambda a, w, s, v: f"{_or(n[:1] + chr(0x301) + n[1:] for n in s)} is wrong {' '.join(w)}",
    "shuffled by value": lambda a, w, s, v: "one of " + ", ".join(sorted(s, key=lambda k: repr(v.get(k)))) +
    " is wrong " + " ".join(w),
    "names and their types": lambda a, w, s, v: "; ".join(f"{n}: {type(v.get(n)).__name__}" for n in s) +
    " " + " ".join(w),
    "rule words first": lambda a, w, s, v: f"{' '.join(w)}: check {_or(s)}",
    "mixed spellings": lambda a, w, s, v: " ".join(
        (n, _camel(n), _plural(n), n.upper())[i % 4] for i, n in enumerate(s)) + " invalid " + " ".join(w),
    "signature": lambda a, w, s, v: f"f({', '.join(s)}) failed {' '.join(w)}",
}

GLOBALS = {"print": lambda *a, **k: None, "check_value": lambda *a, **k: None,
           "check_avoids": lambda *a, **k: None, "NOT_YOURS": []}

_SHIM = """
def check_raises(error, mentions, function, *args, **kwargs):
    __state__.update(error=error, mentions=list(mentions))
    try:
        return __check_raises__(error, mentions, function, *args, **kwargs)
    finally:
        __state__.clear()
"""


def _stub(name: str, style, state: dict, words: list[str]):
    arguments = SIGNATURES[name]

    def stub(*args, **kwargs):
        if not state:
            return (1, 1)  # a call outside check_raises (lesson 1 checks the result's type first)
        values = dict(zip(arguments, args)) | kwargs
        raise state["error"](style(state["mentions"][0], list(state["mentions"][1:]) or words, arguments, values))
    return stub


def run_cell(lesson: str, grade_id: str, style, *, catch_all: bool) -> str | None:
    """None when the cell passes with every checked function replaced by a stub saying ``style``; else
    the check's failure."""
    import torch

    from course.checks import check_raises, random_input

    source = error_cells()[lesson][grade_id]
    state: dict = {}
    words = rule_words(lesson)
    scope = dict(GLOBALS, np=np, torch=torch, random_input=random_input, __state__=state,
                 __check_raises__=check_raises)
    for name in _functions(source):
        # a catch-all style always carries every rule word; an honest one those its check asks for
        function = _stub(name, (lambda a, w, s, v, f=style: f(a, words, s, v)) if catch_all else style, state,
                         words)
        if "." in name:
            owner, attribute = name.split(".")
            scope[owner] = types.SimpleNamespace(**{attribute: function})
        else:
            scope[name] = function
    exec(compile(_SHIM, f"<test {grade_id}>", "exec"), scope)
    try:
        exec(compile(source, f"<test {grade_id}>", "exec"), scope)
    except AssertionError as failure:
        return str(failure)
    return None


def catchable(lesson: str, grade_id: str) -> bool:
    """Whether the cell checks errors for two or more arguments of a function of three or more (a catch-all
    over two arguments, or in a cell that checks one argument only, has nothing to be told apart from)."""
    from course.checks import CATCH_ALL_NAMES

    source = error_cells()[lesson][grade_id]
    faults: dict = {}
    for m in _CHECK.finditer(source):
        faults.setdefault(m.group(2), set()).add(re.findall(r"[\"']([^\"']+)[\"']", m.group(1))[0])
    return any(len(SIGNATURES[f]) >= CATCH_ALL_NAMES and len(a) >= 2 for f, a in faults.items())


def table() -> dict[str, dict[str, dict[str, list[str]]]]:
    """{lesson: {"honest"/"catch-all": {style: [grade_ids the style passed]}}}."""
    result = {}
    for lesson, cells in error_cells().items():
        result[lesson] = {}
        for kind, styles in (("honest", HONEST), ("catch-all", CATCH_ALL)):
            result[lesson][kind] = {
                name: [g for g in cells if run_cell(lesson, g, style, catch_all=kind == "catch-all") is None]
                for name, style in styles.items()}
    return result


def main() -> int:
    found, bad = table(), 0
    for lesson, kinds in found.items():
        cells = list(error_cells()[lesson])
        limits = [g for g in cells if not catchable(lesson, g)]
        print(f"{lesson}: cells {', '.join(cells)}" + (f" (a catch-all cannot be told apart, a known limit: "
                                                       f"{', '.join(limits)})" if limits else ""))
        honest = kinds["honest"]
        ok = sum(len(p) == len(cells) for p in honest.values())
        print(f"  honest styles passing every cell: {ok}/{len(honest)}")
        for name, passed in honest.items():
            if len(passed) != len(cells):
                bad += 1
                print(f"    FAILS {name}: passed only {passed}")
        catch = kinds["catch-all"]
        refused = sum(not [g for g in p if g not in limits] for p in catch.values())
        print(f"  catch-all styles refused on every catchable cell: {refused}/{len(catch)}")
        for name, passed in catch.items():
            if [g for g in passed if g not in limits]:
                bad += 1
                print(f"    PASSES {name}: {[g for g in passed if g not in limits]}")
    lessons = list(found)
    print("\nstyle" + "".join(f" | {lesson.split('_')[0]:>8}" for lesson in lessons))
    for kind, styles in (("honest", HONEST), ("catch-all", CATCH_ALL)):
        for name in styles:
            row = []
            for lesson in lessons:
                cells, passed = list(error_cells()[lesson]), found[lesson][kind][name]
                row.append(f"{len(passed)}/{len(cells)} pass" if kind == "honest" else
                           f"{len([g for g in cells if g not in passed])}/{len(cells)} out")
            print(f"{kind}: {name}".ljust(40)[:40] + "".join(f" | {r:>8}" for r in row))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
