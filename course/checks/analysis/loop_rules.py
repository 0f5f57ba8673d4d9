"""The loop rules of lessons 2 and 3, read by :class:`~course.checks.analysis.loops._LoopNests`:
:func:`check_output_loops` (lesson 2: each window computed inside loops over the data) and
:func:`check_kernel_loops` (lesson 3: loops only over the kernel's offsets, a hint beside the cost rule).

Cache (issue 56 item 2): :func:`_reading`, one :class:`LoopReading` (plain data: the problems found, depths, the
nodes of the copies) per ``(source text, SetUp, entry name, given names)``, bounded (64): the
:class:`~course.checks.analysis.objects.SetUp` is what the reading takes from the namespace, as plain data, so a
hit is the same reading of the same text whoever submitted it; the text and cells each call's messages quote are
set per call (:func:`loop_nests`), never stored."""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
from typing import Any, Iterable

from course.checks.analysis.lists import LOOP_INSTEAD, LOOP_LIMIT
from course.checks.analysis.loops import _LoopNests
from course.checks.analysis.objects import SetUp
from course.checks.analysis.resolver import resolver_for
from course.checks.analysis.text import parsed, cells_of, in_cells, source_of
from course.checks.answers import NeedsReview
from course.checks.values import random_geometry


@dataclasses.dataclass(frozen=True)
class LoopReading:
    """What :class:`_LoopNests` found (its ``problems``, ``data_depth``, ``write_depth``, ``unsure``, ``copies``: plain
    data and nodes of the read tree, never the resolver), and, per call of the rules, the ``text`` read and the
    ``cells`` to count its lines in."""

    problems: tuple[str, ...]
    data_depth: int
    write_depth: int
    unsure: bool
    copies: tuple[ast.AST, ...]
    text: str = ""
    cells: list[str] = dataclasses.field(default_factory=list)

    def unread(self) -> list[str]:
        """The problems that say the rule cannot read a construct (a ``while``, recursion, a function passed as
        a value...), not those that only say a loop grows with the data (lesson 2's loops all do)."""
        return [p for p in self.problems if "as the data is long" not in p]


def long_output_case(seed: int) -> tuple[tuple[int, int, int, int], tuple[int, int], tuple[int, int], tuple[int, int]]:
    """``(shape [1, 2, H, W], kernel_size, stride, padding)`` whose outputs are longer than :data:`LOOP_LIMIT`
    on both axes (71 or more), its kernel (2 or 3 per axis), stride (1 or 2) and padding drawn from
    :func:`input_generator` ``(seed)``, so per grading run: a loop that :func:`check_kernel_loops` accepts
    cannot walk these outputs, and no one geometry can be special-cased."""
    kernel, stride, padding = random_geometry(seed)
    size = tuple((LOOP_LIMIT + 6) * s + k for k, s in zip(kernel, stride))
    return (1, 2) + size, kernel, stride, padding


def loop_nests(function: Any, name: str, given: Iterable[str] = ()) -> LoopReading:
    """What :class:`_LoopNests` reads of ``function``'s source (with its helpers), read as :func:`check_avoids` reads
    it; ``text`` and ``cells`` (to count its lines in, :func:`in_cells`) ride along."""
    try:
        text = source_of(function)
        parsed(text)  # (a source that does not parse is refused here)
    except (OSError, TypeError, SyntaxError) as exc:
        raise AssertionError(f"{name}: could not read the source of {function!r} ({exc})") from None
    namespace = getattr(function, "__trusted_globals__", None)
    own_module = None
    if namespace is None:
        own_module = getattr(function, "__module__", None)
        namespace = getattr(function, "__globals__", None) or getattr(inspect.getmodule(function), "__dict__", {})
    reading = _reading(text, SetUp.of(text, namespace, own_module), name, tuple(given))
    return dataclasses.replace(reading, text=text, cells=cells_of(function))


@functools.lru_cache(maxsize=64)
def _reading(text: str, setup: SetUp, name: str, given: tuple) -> LoopReading:
    """:class:`_LoopNests` of ``text`` in ``setup``, once per its key (see the module's docstring)."""
    resolver = resolver_for(text, setup)
    with resolver.lock:
        nests = _LoopNests(resolver.tree, resolver, name, given)
    return LoopReading(tuple(nests.problems), nests.data_depth, nests.write_depth, nests.unsure, tuple(nests.copies))


def check_kernel_loops(function: Any, name: str, given: Iterable[str] = ("output_size",)) -> None:
    """Assert that every Python loop of ``function`` (``for``, ``while``, comprehensions, recursion, and the
    loops of the helpers it calls) turns only as often as the kernel says: a ``range`` bounded by
    ``kernel_size``, ``stride`` or ``padding``, or a fixed tuple, never the outputs, channels or images.
    What the rule cannot bound fails (see :class:`_LoopNests`), with what to write instead."""
    nests = loop_nests(function, name, given)
    if nests.problems:
        raise AssertionError(in_cells(f"{name} (or a helper it calls) loops in Python over what is not the kernel's "
                                      f"offsets: {'; '.join(nests.problems[:3])}. Instead, {LOOP_INSTEAD}",
                                      nests.text, nests.cells))


def check_output_loops(function: Any, name: str, given: Iterable[str] = ("output_size",)) -> None:
    """Lesson 2's rule (issue 50 item 5): the window values are computed inside Python loops over the data.

    *Proved allowed*: at least two nested loops whose length grows with the input (output rows and columns, in
    any order, or batch and channel too) around a value the function (or a helper it calls) writes and computes
    there: a sum or mean of a window of the input taken inside the nest, or ``+=`` / ``acc = acc + ...`` of the
    data (:meth:`_LoopNests._computes`). *Proved forbidden* (``AssertionError``): every loop read and none such a
    nest (whole-array code), or a nest that
    copies what whole-array code computed (``sliding_window_view``, prefix sums, shift-and-add outside the nest,
    band matrices with ``@``), every binding on the way read. *Unproved* (:class:`~course.checks.NeedsReview`):
    loops the rule cannot read as such a nest, or a copy through a binding it does not read."""
    nests = loop_nests(function, name, given)
    depth = nests.data_depth
    if depth >= 2:
        return
    if depth < 2 <= nests.write_depth:
        text = (f"{name} must compute each output in explicit Python loops (this lesson's exercise), but its "
                f"{nests.write_depth} loops over the data only write values computed elsewhere (a whole-array result "
                f"copied, or no sum of a window of the input inside the loops): inside `for i in range(out_h):` and "
                f"`for j in range(out_w):`, sum each window of the input (`out[b, c, i, j] = x[b, c, r0:r1, c0:c1]."
                f"sum() / divisor`, or `+=` of grad_out into grad_x[b, c, r0:r1, c0:c1])")
        if not nests.unsure and not nests.unread():
            raise AssertionError(in_cells(text + (f" (line {nests.copies[0].lineno})" if nests.copies else ""),
                                          nests.text, nests.cells))
        written = in_cells(f"line {nests.copies[0].lineno}", nests.text, nests.cells) if nests.copies else "a write"
        unread = "; ".join(in_cells(p, nests.text, nests.cells) for p in nests.unread()[:2])
        raise NeedsReview(f"{text}. The grader cannot tell where the value written on {written} comes from"
                          f"{' (' + unread + ')' if unread else ''}, so your instructor will read this code; the cell "
                          "counts 0 until then", f"{name}: a loop nest that may copy values computed elsewhere, "
                          f"{written}{'; ' + unread if unread else ''}")
    text = (f"{name} must compute each output in explicit Python loops (this lesson's exercise), but the rule finds "
            f"{nests.write_depth} loop(s) over the data around what it writes: loop over the output rows and columns, "
            f"e.g. `for i in range(out_h):` and `for j in range(out_w):`, and write each output "
            f"(`out[b, c, i, j] = ...` or `+=` into grad_x)")
    if not nests.unread():  # every loop read: none is a nest over the data around a write
        raise AssertionError(text)
    found = [in_cells(p, nests.text, nests.cells) for p in nests.unread()[:3]]
    raise NeedsReview(f"{text}. The rule cannot read your loops as such a nest ({'; '.join(found) or 'no nest found'})"
                      f", so your instructor will read this code; the cell counts 0 until then",
                      f"{name}: loops the rule cannot read as a nest over the outputs: {'; '.join(found)}")
