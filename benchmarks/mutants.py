"""Hidden tests judged by the bugs they catch: ``python -m benchmarks.mutants [--lesson L] [--limit N]
[--jobs J] [--seed S] [--operator NAME|contract]``.

For each lesson, the reference solution cells (:func:`autograder.solutions.solution_cells`, as a student
would write them) that feed a graded test cell are mutated with :mod:`ast` (:data:`OPERATORS`: arithmetic
and comparison operators, integer and answer constants, off-by-ones in ``range()`` and slices, divisor and
padding variants, axis swaps, dtype changes, a dropped ``+=``, a removed statement, and the contract's
plausible mistakes, :data:`CONTRACT_OPERATORS`: the stride-0 default taken from the other axis, ``view`` for
``reshape``, an input updated in place, a NumPy int for ``int()``, a float64 sum cast back, float64 on one
``count_include_pad`` path). A seeded choice of
``--limit`` mutants per lesson is graded with the trusted grader (one run seed for the whole run, kept in
the results) and each one is classified (:func:`classify`):

* caught      a test cell that the mutated cell feeds, full marks with the reference, lost points;
* missed      every such test kept its points;
* equivalent  the same program (its normalised unparse is the reference's), or listed with a reason in
              ``benchmarks/mutants_equivalent.toml`` (``["<mutant id>"] reason = "..."``);
* broken      does not compile (not graded);
* error       the grader could not grade it (a grader fault: never counted as caught or missed).

Prints per lesson: mutants, caught, equivalent, missed, broken, the mutation score (caught / (caught +
missed)) and each missed mutant (id, cell, a one-line diff); writes ``benchmarks/results/mutants.json``.
"""

from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import functools
import hashlib
import json
import multiprocessing
import random
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from autograder import solutions
from autograder.coursedir import REPO, lessons

RESULTS = Path(__file__).resolve().parent / "results"
EQUIVALENT_FILE = Path(__file__).resolve().parent / "mutants_equivalent.toml"
CLASSES = ("caught", "missed", "equivalent", "broken", "error")


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutation of one solution cell: the ``site``-th of :func:`mutants_of` on ``reference`` (the
    cell's reference source); :attr:`source` is the whole mutated cell."""

    id: str  # stable: <cell>:<operator>:<line>:<hash of the place and the change>
    cell: str
    operator: str
    line: int
    before: str  # the mutated line, before and after (one-line diff)
    after: str
    reference: str = dataclasses.field(repr=False, default="")
    site: int = -1

    @functools.cached_property
    def source(self) -> str:
        """The mutated cell (unparsed from its AST; computed when first asked: unparsing is the slow part)."""
        tree = ast.parse(self.reference)
        index, _, replacement = _sites(tree)[self.site]
        return _unparse_with(tree, _parents(tree), list(ast.walk(tree))[index], replacement)


# ---------------------------------------------------------------------------------------------------
# Mutation operators: each takes a node and gives (operator name, replacement node) pairs; a replacement
# of ``None`` removes the statement (it becomes ``pass``). Messages and docstrings are left alone.

_BINOP_SWAPS = {ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Div, ast.Add], ast.Div: [ast.Mult, ast.FloorDiv],
                ast.FloorDiv: [ast.Div, ast.Mult], ast.Mod: [ast.FloorDiv]}
_CMP_FLIPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
              ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_DTYPE_SWAPS = {"float32": "float64", "float64": "float32", "float16": "float32", "double": "float",
                "float": "double", "half": "float", "int64": "int32"}
_AXIS_CALLS = {"transpose", "permute", "swapaxes", "movedim"}
_REDUCE_CALLS = {"sum", "mean", "cumsum", "flatten", "reshape", "view"}
_PADDING_NAMES = {"p", "ph", "pw", "pad", "padding"}
_FLAG_NAMES = {"count_include_pad"}


def _binop(node):
    if isinstance(node, ast.BinOp):
        for new in _BINOP_SWAPS.get(type(node.op), []):
            yield "operator", ast.BinOp(node.left, new(), node.right)
        if isinstance(node.op, (ast.Div, ast.FloorDiv)):  # divisor variant: off by one
            yield "divisor", ast.BinOp(node.left, node.op, ast.BinOp(node.right, ast.Add(), ast.Constant(1)))


def _compare(node):
    if isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            if type(op) in _CMP_FLIPS:
                ops = list(node.ops)
                ops[index] = _CMP_FLIPS[type(op)]()
                yield "comparison", ast.Compare(node.left, ops, node.comparators)


def _constant(node):
    if not isinstance(node, ast.Constant):
        return
    value = node.value
    if isinstance(value, bool):
        yield "constant", ast.Constant(not value)
    elif isinstance(value, int):
        yield "constant", ast.Constant(value + 1)
        yield "constant", ast.Constant(value - 1)
    elif isinstance(value, float):
        yield "constant", ast.Constant(value + 1.0)
        yield "constant", ast.Constant(value / 2)
    elif isinstance(value, str) and len(value) == 1 and value.isalpha():  # a multiple-choice letter
        letters = "ABCD" if value.isupper() else "abcd"
        if value in letters:
            yield "constant", ast.Constant(letters[(letters.index(value) + 1) % len(letters)])


def _range(node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
        stop = 0 if len(node.args) == 1 else 1
        for index, delta in dict.fromkeys([(stop, -1), (stop, 1), (0, 1)]):  # range(n): (0, 1) once
            args = list(node.args)
            args[index] = ast.BinOp(args[index], ast.Add() if delta > 0 else ast.Sub(), ast.Constant(1))
            yield "off-by-one", ast.Call(node.func, args, node.keywords)


def _slice(node):
    if isinstance(node, ast.Slice):
        for part in ("lower", "upper"):
            bound = getattr(node, part)
            if bound is not None:
                for op in (ast.Add(), ast.Sub()):
                    new = copy.copy(node)
                    setattr(new, part, ast.BinOp(bound, op, ast.Constant(1)))
                    yield "off-by-one", new


def _padding(node):
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        if node.id in _PADDING_NAMES:
            yield "padding", ast.Constant(0)
        elif node.id in _FLAG_NAMES:
            yield "divisor", ast.UnaryOp(ast.Not(), node)
    elif isinstance(node, ast.IfExp):  # e.g. divisor = full if count_include_pad else real: one branch only
        yield "divisor", node.body
        yield "divisor", node.orelse


def _axis(node):
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return
    name, args = node.func.attr, node.args
    if name in _AXIS_CALLS and len(args) >= 2:
        yield "axis", ast.Call(node.func, [args[1], args[0], *args[2:]], node.keywords)
    elif name in _REDUCE_CALLS:
        for index, keyword in enumerate(node.keywords):
            if keyword.arg in ("axis", "dim") and isinstance(keyword.value, ast.Tuple) and len(keyword.value.elts) > 1:
                keywords = list(node.keywords)
                keywords[index] = ast.keyword(keyword.arg, ast.Tuple(keyword.value.elts[:-1], ast.Load()))
                yield "axis", ast.Call(node.func, args, keywords)


def _dtype(node):
    if isinstance(node, ast.Attribute) and node.attr in _DTYPE_SWAPS and isinstance(node.ctx, ast.Load):
        yield "dtype", ast.Attribute(node.value, _DTYPE_SWAPS[node.attr], node.ctx)
    elif isinstance(node, ast.Name) and node.id in ("min", "max") and isinstance(node.ctx, ast.Load):
        yield "operator", ast.Name("max" if node.id == "min" else "min", ast.Load())


def _statement(node):
    if isinstance(node, ast.AugAssign):
        yield "augmented", ast.copy_location(ast.Assign([node.target], node.value), node)
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.If, ast.For)) or (
            isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant)):  # never a docstring
        yield "removed", None


_KERNEL_AXES = {"kh": "kw", "kw": "kh", "k_h": "k_w", "k_w": "k_h"}
#: Names that hold an array or tensor in the lessons' code (an in-place update of a Python number is no mutant).
_ARRAY_NAMES = {"x", "grad_out", "out", "grad", "g", "share", "features", "maps", "images", "t", "fmap", "weights"}
_INPLACE = {ast.Div: "__itruediv__", ast.Mult: "__imul__", ast.Add: "__iadd__", ast.Sub: "__isub__"}


def _default_axis(node):
    """The stride-0 default taken from the other axis: ``sw or kw`` -> ``sw or kh`` (per-axis default swap)."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
        other = node.values[1]
        if isinstance(other, ast.Name) and other.id in _KERNEL_AXES:
            yield "default-axis", ast.BoolOp(ast.Or(), [node.values[0], ast.Name(_KERNEL_AXES[other.id], ast.Load())])


def _view(node):
    """``t.reshape(...)`` -> ``t.view(...)``: raises on a non-contiguous (channels-last, sliced) tensor."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "reshape" \
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id in ("np", "numpy", "torch")):
        yield "view", ast.Call(ast.Attribute(node.func.value, "view", ast.Load()), node.args, node.keywords)


def _in_place(node):
    """``y = x / d`` -> ``y = x.__itruediv__(d)``: the caller's ``x`` changed in place (an input mutated)."""
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) and type(node.value.op) in _INPLACE \
            and isinstance(node.value.left, ast.Name) and node.value.left.id in _ARRAY_NAMES:
        method = ast.Attribute(node.value.left, _INPLACE[type(node.value.op)], ast.Load())
        yield "in-place", ast.copy_location(ast.Assign(node.targets, ast.Call(method, [node.value.right], [])), node)


def _int_type(node):
    """``int(v)`` -> ``np.int64(v)``: a NumPy integer where a Python int is asked (and overflow past 2**63)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
        yield "int-type", ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "int64", ast.Load()), node.args, [])


def _accumulation(node):
    """``a.sum(...)`` -> ``a.astype('float64').sum(...).astype(a.dtype)``: summed in float64, cast back."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sum" \
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id in ("np", "numpy", "torch")):
        wide = ast.Call(ast.Attribute(node.func.value, "astype", ast.Load()), [ast.Constant("float64")], [])
        summed = ast.Call(ast.Attribute(wide, "sum", ast.Load()), node.args, node.keywords)
        yield "accumulation", ast.Call(ast.Attribute(summed, "astype", ast.Load()),
                                       [ast.Attribute(node.func.value, "dtype", ast.Load())], [])


def _dtype_path(node):
    """One branch of an ``if`` on ``count_include_pad`` computes in float64: ``x`` -> ``x.astype('float64')``
    in the first assignment of that branch only (a dtype promoted on one code path)."""
    if isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id in _FLAG_NAMES for n in ast.walk(node.test)):
        for branch in ("body", "orelse"):
            statements = getattr(node, branch)
            first = next((s for s in statements if isinstance(s, ast.Assign)), None)
            if first is None:
                continue
            wide = ast.Call(ast.Attribute(first.value, "astype", ast.Load()), [ast.Constant("float64")], [])
            new = copy.copy(node)
            setattr(new, branch, [ast.copy_location(ast.Assign(first.targets, wide), first) if s is first else s
                                  for s in statements])
            yield "dtype-path", new


OPERATORS = (_binop, _compare, _constant, _range, _slice, _padding, _axis, _dtype, _statement, _default_axis, _view,
             _in_place, _int_type, _accumulation, _dtype_path)
#: The operators of issue 43 (the contract rules each graded cell must judge); the report counts them apart.
CONTRACT_OPERATORS = ("default-axis", "view", "in-place", "int-type", "accumulation", "dtype-path")


def _protected(tree: ast.AST) -> set[int]:
    """Nodes whose mutation changes only a message: error texts, f-strings, docstrings (by ``id``)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Raise, ast.JoinedStr)):
            skip.update(id(sub) for sub in ast.walk(node) if sub is not node or isinstance(node, ast.JoinedStr))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            skip.add(id(node.body[0].value))
    return skip


def _sites(tree: ast.AST) -> list[tuple[int, str, ast.AST | None]]:
    """(node index in ``ast.walk`` order, operator, replacement) of every mutation of ``tree``."""
    skip = _protected(tree)
    found = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        for operator in OPERATORS:
            for name, replacement in operator(node):
                found.append((index, name, replacement))
    return found


def _parents(tree: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    """``{id(node): (parent, field, position in the field's list or None)}`` of every node of ``tree``."""
    found = {}
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if isinstance(value, ast.AST):
                found[id(value)] = (parent, field, None)
            elif isinstance(value, list):
                for position, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        found[id(item)] = (parent, field, position)
    return found


def _unparse_with(tree: ast.AST, parents: dict, target: ast.AST, replacement: ast.AST | None) -> str:
    """``tree`` unparsed with ``target`` replaced (a statement by ``pass`` when ``replacement`` is None);
    ``tree`` is left as it was."""
    parent, field, position = parents[id(target)]
    new = replacement if replacement is not None else ast.Pass()
    if not hasattr(new, "lineno"):  # a new statement: unparse reads its line (never move an existing node)
        ast.copy_location(new, target)
    if position is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[position] = new
    try:
        return ast.unparse(tree)
    finally:
        if position is None:
            setattr(parent, field, target)
        else:
            getattr(parent, field)[position] = target


def normalised(source: str) -> str | None:
    """``source`` unparsed from its AST (comments, layout and docstrings' place aside); None: no parse."""
    try:
        return ast.unparse(ast.parse(source))
    except (SyntaxError, ValueError):
        return None


def mutants_of(source: str, cell: str) -> list[Mutant]:
    """Every mutant of one cell's ``source``, in a fixed order (the same source gives the same list)."""
    original = ast.parse(source)
    lines = source.splitlines()
    nodes = list(ast.walk(original))
    result = []
    tensors = "torch" in source  # view is a tensor's reshape; astype a NumPy array's
    for site, (index, name, replacement) in enumerate(_sites(original)):
        if (name == "view" and not tensors) or (name == "accumulation" and tensors):
            continue
        target = nodes[index]
        line = getattr(target, "lineno", 0)
        before = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        after = _changed_line(target, replacement, lines[line - 1] if 0 < line <= len(lines) else "")
        place = (line, getattr(target, "col_offset", 0), getattr(target, "end_lineno", 0),
                 getattr(target, "end_col_offset", 0))
        change = "" if replacement is None else ast.unparse(replacement)
        digest = hashlib.sha1(f"{cell}\n{place}\n{ast.unparse(target)}\n{name}\n{change}".encode()).hexdigest()[:8]
        result.append(Mutant(f"{cell}:{name}:{line}:{digest}", cell, name, line, before, after, source, site))
    return result


def _changed_line(target: ast.AST, replacement: ast.AST | None, line: str) -> str:
    """The mutated line as the diff shows it: the replaced expression spliced in at its columns (the
    unparsed replacement alone when the expression spans lines)."""
    if replacement is None:
        return "pass"
    new = ast.unparse(replacement)
    start, end = getattr(target, "col_offset", None), getattr(target, "end_col_offset", None)
    if start is None or end is None or target.lineno != target.end_lineno:
        return new
    encoded = line.encode()  # AST columns count UTF-8 bytes
    return (encoded[:start].decode(errors="replace") + new + encoded[end:].decode(errors="replace")).strip()


# ---------------------------------------------------------------------------------------------------
# A lesson's mutants and their classes

def graded_cells(lesson) -> dict[str, set[str]]:
    """``{solution cell id: ids of the test cells it feeds}`` for the cells that feed at least one test and
    that the grader runs as written (not a *given* cell): a test reads a name the cell binds, or a name
    bound by another solution cell that reads one of those (transitively)."""
    from autograder.grading.lesson import names_bound, names_read

    code = [c for c in lesson.solutions if c.cell_type == "code"]
    fed: dict[str, set[str]] = {}
    for cell in code:
        if cell.id in lesson.given:
            continue
        affected = names_bound(cell.source, top_level=True)
        changed = True
        while changed:
            changed = False
            for other in code:
                if other.id != cell.id and names_read(other.source) & affected:
                    new = names_bound(other.source, top_level=True) - affected
                    if new:
                        affected |= new
                        changed = True
        tests = {t.id for t in lesson.tests if names_read(t.source) & affected}
        if tests:
            fed[cell.id] = tests
    return fed


def lesson_mutants(lesson) -> list[Mutant]:
    """Every mutant of the lesson's graded reference cells (duplicates and unchanged programs included:
    :func:`classify` calls the latter equivalent)."""
    sources = solutions.solution_cells(lesson.source_path)
    cells = graded_cells(lesson)
    found, seen = [], set()
    for cell in sources:
        if cell not in cells:
            continue
        for mutant in mutants_of(sources[cell], cell):
            if mutant.id not in seen:
                seen.add(mutant.id)
                found.append(mutant)
    return found


def choose(mutants: list[Mutant], limit: int | None, seed: int) -> list[Mutant]:
    """A seeded choice of ``limit`` mutants (all when ``limit`` is None), in a stable order."""
    chosen = list(mutants)
    random.Random(seed).shuffle(chosen)
    return sorted(chosen[:limit] if limit is not None else chosen, key=lambda m: m.id)


def load_equivalent(path: Path = EQUIVALENT_FILE) -> dict[str, str]:
    """``{mutant id: reason}`` of the committed equivalent mutants; an entry without a reason is an error."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    reasons = {}
    for key, entry in data.items():
        reason = entry.get("reason") if isinstance(entry, dict) else None
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{path.name}: mutant {key!r} needs a reason (reason = \"...\")")
        reasons[key] = reason.strip()
    return reasons


def static_class(mutant_id: str, source: str, reference: str, equivalent: dict[str, str]) -> tuple[str, str] | None:
    """(class, why) of mutant ``mutant_id`` (its cell's ``source``, the cell's ``reference``) decided
    without grading: broken, equivalent; None when it must be graded."""
    try:
        compile(source, f"<{mutant_id}>", "exec")
    except (SyntaxError, ValueError) as error:
        return "broken", f"{type(error).__name__}: {error}"
    if normalised(source) == normalised(reference):
        return "equivalent", "the same program once unparsed"
    if mutant_id in equivalent:
        return "equivalent", equivalent[mutant_id]
    return None


def classify(baseline: dict[str, bool], graded: dict[str, bool], fed: set[str]) -> str:
    """``caught`` when a test in ``fed`` that passed with the reference (``baseline``: test id -> passed)
    fails for the mutant (``graded``), else ``missed`` (a test the grader did not report proves nothing)."""
    lost = [t for t in fed if baseline.get(t) and t in graded and not graded[t]]
    return "caught" if lost else "missed"


# ---------------------------------------------------------------------------------------------------
# Grading (in worker processes: the grader's helpers route through module globals)

LIMITS = dict(test_seconds=20, cell_seconds=20, start_seconds=120)


def grade(lesson_name: str, root: str, sources: dict[str, str], seed: int,
          tests: set[str] | None = None) -> tuple[dict[str, bool] | None, str]:
    """``({test id: passed}, "")`` of one submission graded by the trusted grader with the lesson's test
    cells (only those of ``tests`` when given: a mutant is judged by the tests its cell feeds), or
    ``(None, why)`` when the grader failed (a grader fault)."""
    from autograder.grading import load_lesson
    from autograder.grading.batch import cluster_verdicts
    from autograder.grading.sandbox import GraderFault, Limits

    lesson = load_lesson(lesson_name, Path(root))
    if tests is not None:
        lesson = dataclasses.replace(lesson, tests=[t for t in lesson.tests if t.id in tests])
    try:
        verdicts = cluster_verdicts(lesson, sources, Limits(**LIMITS), root, seed)
    except GraderFault as fault:
        return None, fault.message
    return {t.grade_id: t.passed for t in verdicts.tests}, ""


def _grade_mutant(lesson_name: str, root: str, reference: dict[str, str], mutant: Mutant, seed: int,
                  tests: set[str]):
    return mutant, grade(lesson_name, root, {**reference, mutant.cell: mutant.source}, seed, tests)


def run_lesson(lesson_name: str, root: Path, limit: int | None, seed: int, jobs: int,
               equivalent: dict[str, str], progress=print, operators: list[str] | None = None) -> dict:
    """Mutate, grade and classify one lesson (only the mutants of ``operators`` when given); the summary
    and every mutant's class."""
    from autograder.grading import load_lesson

    lesson = load_lesson(lesson_name, root)
    reference = solutions.solution_cells(lesson.source_path)
    fed = graded_cells(lesson)
    every = [m for m in lesson_mutants(lesson) if not operators or m.operator in operators]
    chosen = choose(every, limit, seed)
    baseline, why = grade(lesson_name, str(root), reference, seed)
    summary = {"lesson": lesson_name, "available": len(every), "seed": seed, "baseline_failed": [],
               "mutants": []}
    if baseline is None:
        summary["failure"] = f"the reference could not be graded: {why}"
        return summary
    summary["baseline_failed"] = sorted(t for t, ok in baseline.items() if not ok)
    records, pending = [], []
    for mutant in chosen:
        decided = static_class(mutant.id, mutant.source, reference[mutant.cell], equivalent)
        if decided:
            records.append((mutant, decided[0], decided[1], []))
        else:
            pending.append(mutant)
    # spawned, not forked: a fork would share this process's sandbox state (its warm template, its uid lease)
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_grade_mutant, lesson_name, str(root), reference, m, seed, fed[m.cell]): m
                   for m in pending}
        for done, future in enumerate(futures, 1):
            try:
                mutant, (graded, why) = future.result()
            except Exception as exc:  # a worker that died or failed: the grader's fault, never a verdict
                mutant, graded, why = futures[future], None, f"{type(exc).__name__}: {exc}"
            if graded is None:
                records.append((mutant, "error", why, []))
            else:
                lost = sorted(t for t, ok in graded.items() if baseline.get(t) and not ok)
                records.append((mutant, classify(baseline, graded, fed[mutant.cell]), "", lost))
            if progress and done % 10 == 0:
                progress(f"  {lesson_name}: {done}/{len(pending)} graded")
    for mutant, kind, why, lost in sorted(records, key=lambda r: r[0].id):
        entry = {k: v for k, v in dataclasses.asdict(mutant).items() if k not in ("reference", "site")}
        summary["mutants"].append(dict(entry, **{"class": kind, "why": why, "lost": lost}))
    counts = {kind: sum(1 for m in summary["mutants"] if m["class"] == kind) for kind in CLASSES}
    judged = counts["caught"] + counts["missed"]
    summary.update(counts, total=len(chosen), score=round(counts["caught"] / judged, 3) if judged else None,
                   operators=operator_counts(summary["mutants"]))
    return summary


def operator_counts(mutants: list[dict]) -> dict[str, dict[str, int]]:
    """``{operator: {class: number}}`` of graded ``mutants`` (entries of a summary), every operator listed."""
    found: dict[str, dict[str, int]] = {}
    for mutant in mutants:
        row = found.setdefault(mutant["operator"], dict.fromkeys(CLASSES, 0))
        row[mutant["class"]] += 1
    return found


def report(summaries: list[dict]) -> str:
    """The per-lesson table and the missed mutants, as text."""
    head = f"{'lesson':<18}{'mutants':>8}{'caught':>8}{'equiv':>7}{'missed':>8}{'broken':>8}{'error':>7}{'score':>8}"
    lines = [head, "-" * len(head)]
    for s in summaries:
        if "failure" in s:
            lines.append(f"{s['lesson']:<18}{s['failure']}")
            continue
        score = f"{s['score']:.0%}" if s["score"] is not None else "-"
        lines.append(f"{s['lesson']:<18}{s['total']:>8}{s['caught']:>8}{s['equivalent']:>7}{s['missed']:>8}"
                     f"{s['broken']:>8}{s['error']:>7}{score:>8}")
    contract: dict[str, dict[str, int]] = {}
    for s in summaries:
        for operator, row in s.get("operators", {}).items():
            if operator in CONTRACT_OPERATORS:
                total = contract.setdefault(operator, dict.fromkeys(CLASSES, 0))
                for kind, number in row.items():
                    total[kind] += number
    if contract:
        lines.append("\ncontract operators (issue 43), all lessons: caught / caught + missed")
        for operator in CONTRACT_OPERATORS:
            row = contract.get(operator)
            if row:
                judged = row["caught"] + row["missed"]
                lines.append(f"  {operator:<14}{row['caught']:>4} / {judged:<4}"
                             f"(equivalent {row['equivalent']}, broken {row['broken']}, error {row['error']})")
    for s in summaries:
        missed = [m for m in s.get("mutants", []) if m["class"] == "missed"]
        if missed:
            lines.append(f"\nmissed in {s['lesson']}:")
            lines += [f"  {m['id']}  [{m['cell']}]  {m['before']}  ->  {m['after']}" for m in missed]
        errors = [m for m in s.get("mutants", []) if m["class"] == "error"]
        lines += [f"  grader error {m['id']}: {m['why'][:200]}" for m in errors]
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lesson", action="append", help="a lesson of source/ (repeatable; default: all)")
    parser.add_argument("--limit", type=int, default=50, help="mutants per lesson (default: %(default)s; 0 = all)")
    parser.add_argument("--operator", action="append", help="only mutants of this operator (repeatable; e.g. "
                        "default-axis; 'contract' = every one of CONTRACT_OPERATORS)")
    parser.add_argument("--jobs", type=int, default=2, help="grading processes (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=31, help="choice of mutants and grading run seed (default: %(default)s)")
    parser.add_argument("--root", type=Path, default=REPO, help="course root holding source/ and release/")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder of mutants.json (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.limit < 0:
        parser.error(f"--limit must be >= 0 (0 = every mutant), got {args.limit}")
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    if args.operator:
        args.operator = sorted({o for name in args.operator
                                for o in (CONTRACT_OPERATORS if name == "contract" else (name,))})
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    root = args.root.resolve()
    names = args.lesson or lessons(root)
    unknown = [n for n in names if n not in lessons(root)]
    if unknown:
        print(f"--lesson: no lesson {', '.join(unknown)} in {root}/source", file=sys.stderr)
        return 2
    equivalent = load_equivalent()
    started = time.monotonic()
    summaries = []
    for name in names:
        print(f"{name}: mutating and grading ...", flush=True)
        summaries.append(run_lesson(name, root, args.limit or None, args.seed, args.jobs, equivalent,
                                    progress=lambda text: print(text, flush=True), operators=args.operator))
    print(report(summaries))
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "mutants.json"
    out.write_text(json.dumps({"seed": args.seed, "limit": args.limit, "seconds": round(time.monotonic() - started, 1),
                               "lessons": summaries}, indent=1))
    print(f"\nwritten: {out}")
    return 1 if any("failure" in s for s in summaries) else 0


if __name__ == "__main__":
    sys.exit(main())
