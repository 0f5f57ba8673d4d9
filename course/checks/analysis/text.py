"""The source text the rules read: a student's function with the helpers it uses (:func:`source_of`), parsed
once per text (:func:`parsed`: a cache keyed by the text alone, holding its tree, which no rule changes), and
each tree's nodes listed once (:func:`walked`: keyed weakly by the tree object, so an entry goes with its tree)."""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import re
import textwrap
import threading
import weakref
from typing import Any


#: Held around every conversion between source, C and Python syntax trees in the grader's process: Python
#: 3.11's ``ast`` keeps the depth of such a conversion in state the whole interpreter shares, so two threads
#: converting at once (two submissions graded together in a Dask worker's threads) fail with "SystemError: AST
#: constructor recursion depth mismatch" (CPython gh-106905).
AST_LOCK = threading.RLock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse`` under :data:`AST_LOCK`."""
    with AST_LOCK:
        return ast.parse(source, filename)


def compile_tree(tree: ast.AST, filename: str, mode: str = "exec"):
    """``compile`` of a syntax tree under :data:`AST_LOCK`."""
    with AST_LOCK:
        return compile(tree, filename, mode)


@functools.lru_cache(maxsize=256)
def parsed(source: str) -> ast.Module:
    """:func:`parse`, once per source text (the checks read the tree, never change it)."""
    return parse(source)


_WALKED: "weakref.WeakKeyDictionary[ast.AST, tuple]" = weakref.WeakKeyDictionary()
_WALKED_LOCK = threading.Lock()


def walked(tree: ast.AST) -> tuple:
    """``tuple(ast.walk(tree))``: the same nodes in the same order, listed once per tree while the tree lives (the
    rules walk one tree again and again; none changes it)."""
    with _WALKED_LOCK:
        below = _WALKED.get(tree)
    if below is None:
        below = tuple(ast.walk(tree))[1:]  # (without the tree itself: an entry must not hold its own key)
        with _WALKED_LOCK:
            _WALKED[tree] = below
    return (tree,) + below


def source_of(function: Any) -> str:
    """The source text of a student's function or class (the grader's stand-ins carry it too)."""
    text = getattr(function, "__student_source__", None)
    if text is None:
        text = _with_helpers(function)
    return textwrap.dedent(text)


def _source_text(item: Any) -> str:
    """The source of a function, or of a class; a class defined in a notebook (whose module has no file
    for ``inspect``) is rebuilt from the sources of its methods."""
    try:
        return textwrap.dedent(inspect.getsource(item))
    except (OSError, TypeError):
        if not inspect.isclass(item):
            raise
    methods = [getattr(m, "__func__", getattr(m, "fget", m)) for m in vars(item).values()]
    bodies = [textwrap.dedent(inspect.getsource(m)) for m in methods if inspect.isfunction(m)]
    if not bodies:
        raise OSError(f"no source for class {item.__name__}")
    return f"class {item.__name__}:\n" + "\n".join(textwrap.indent(b, "    ") for b in bodies)


def _with_helpers(function: Any) -> str:
    """The source of ``function`` followed by that of every function or class of the same module (the
    notebook) it names, transitively: in the notebook, the view the grader has of a submission."""
    module = getattr(function, "__module__", None)
    namespace = getattr(function, "__globals__", None) or getattr(inspect.getmodule(function), "__dict__", {})
    wanted, seen, texts, seen_constants = [function], set(), [], set()
    owner = namespace.get(str(getattr(function, "__qualname__", "")).split(".")[0])
    if "." in str(getattr(function, "__qualname__", "")) and inspect.isclass(owner) and owner.__module__ == module:
        wanted.insert(0, owner)  # a method: its class too (what ``self.pool_size = ...`` set is its own)
    while wanted:
        current = wanted.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        try:
            text = _source_text(current)
        except (OSError, TypeError):
            if current is function:
                raise
            continue
        texts.append(text)
        for node in walked(parsed(text)):
            helper = namespace.get(node.id) if isinstance(node, ast.Name) else None
            if (inspect.isfunction(helper) or inspect.isclass(helper)) and helper.__module__ == module:
                wanted.append(helper)
            elif isinstance(node, ast.Name) and node.id in namespace and _is_constant(helper) \
                    and node.id not in seen_constants:
                seen_constants.add(node.id)  # a constant of the notebook's (POOL_NDIM = 4) is its own name
                texts.append(f"{node.id} = {helper!r}")
    return "\n\n".join(texts)


def _is_constant(value: Any) -> bool:
    """A plain constant a notebook may define at the top (a number, a string, a tuple of them)."""
    if isinstance(value, tuple):
        return all(_is_constant(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


def cells_of(function: Any) -> list[str]:
    """The texts of the cells ``function``'s source comes from, to count a rule's lines in: under the grader
    the submission's solution cells (``__student_cells__``); in a notebook every cell (IPython's file of it)
    that defines a function or class of the notebook's own; elsewhere none (lines count in the source read)."""
    cells = getattr(function, "__student_cells__", None)
    if cells is not None:
        return list(cells)
    module = getattr(function, "__module__", None)
    namespace = getattr(function, "__globals__", None) or {}
    files = []
    for item in [function, *namespace.values()]:
        if not (inspect.isfunction(item) or inspect.isclass(item)) or getattr(item, "__module__", None) != module:
            continue
        codes = [item.__code__] if inspect.isfunction(item) else [
            getattr(m, "__func__", m).__code__ for m in vars(item).values()
            if inspect.isfunction(getattr(m, "__func__", m))]
        files += [code.co_filename for code in codes if code.co_filename not in files]
    return ["".join(linecache.getlines(name)) for name in files if linecache.getlines(name)]


_LINE = re.compile(r"\bline (\d+)\b")


def in_cells(message: str, text: str, cells: list[str]) -> str:
    """``message`` with each "line N" of ``text`` (the source a rule read) counted in the cell that holds it
    instead, and that line quoted: "line 37 of its cell, `out[b, c, i, j] = acc[b, c, i, j]`" (issue 53 item 1).
    A line found in no cell (or with no cells) keeps its number in ``text``."""
    lines = text.splitlines()
    read = {line.strip() for line in lines if line.strip()}
    split = [[line.strip() for line in cell.splitlines()] for cell in cells]
    split.sort(key=lambda cell: -len(read & set(cell)))  # a line common to cells (`return out`): the likeliest cell

    def located(match: re.Match) -> str:
        number = int(match.group(1))
        if not 1 <= number <= len(lines) or not lines[number - 1].strip():
            return match.group(0)
        code = lines[number - 1].strip()
        for cell in split:
            if code in cell:
                return f"line {cell.index(code) + 1} of its cell, `{code}`"
        return f"line {number}, `{code}`"

    return _LINE.sub(located, message)


def line_of(text: str, written: str) -> int | None:
    """The first line of ``text`` on which ``written`` (an expression as the rule names it) appears."""
    needle = written.split(" (")[0].strip("`")
    return next((n for n, line in enumerate(text.splitlines(), 1) if needle in line), None)
