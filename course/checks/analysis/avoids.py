""":func:`check_avoids`: a function uses no forbidden (or, with ``allowed``, no unlisted) library name, nothing
the grader cannot read, and hides nothing it calls.

Caches (issue 56 item 2): the resolver of a source in a set-up, shared with the loop rules
(:func:`~course.checks.analysis.resolver.resolver_for`, keyed by the source text and the plain-data
:class:`~course.checks.analysis.objects.SetUp`), and :func:`_dynamic_findings` (256 at most), the sentences of
:func:`dynamic_code` per source text (the function's source, and every solution cell's, which each call of
``check_avoids`` in a submission reads again). Each key is a source text (and plain data): the same text
reads the same, whoever submitted it; nothing of a namespace or of a call's cells is kept."""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import sys
from typing import Any, Iterable

from course.checks.analysis.lists import (ALLOWED_DUNDERS, ALLOWED_TENSOR_TEXT, ALLOWED_TEXT, DYNAMIC_CALLS,
                                          INTERNAL_MODULES, LOOKUP_KEYWORDS, LOOKUP_NAMES, SYS_INTERNALS,
                                          UNREADABLE_PATHS)
from course.checks.analysis.identity import forbidden_identities, part_matches, walk
from course.checks.analysis.objects import SetUp
from course.checks.analysis.resolver import _Resolver, resolver_for
from course.checks.analysis.text import cells_of, in_cells, line_of, parsed, source_of, walked
from course.checks.answers import NeedsReview


def forbidden_uses(tree: ast.AST, forbidden: Iterable[str], namespace: dict | None = None,
                   own_module: str | None = None, resolver: _Resolver | None = None) -> list[str]:
    """The uses of ``tree`` (see :meth:`_Resolver.uses`) whose resolved path has a part that ``forbidden``
    lists: an entry is a name (``torch``, ``avg_pool2d``), or a case-insensitive pattern with ``*``
    (``"*pool*"`` covers ``lp_pool2d``, ``avg_pool3d``, ``AdaptiveAvgPool2d``, ``torch.nn.modules.pooling``).
    What the code defines itself (its helper ``pool_rows``, its class ``AvgPool2dFunction``,
    ``self.pool_size``, a constant ``POOL_NDIM = 4``) is never a use: its source is part of ``tree``."""
    entries = tuple(forbidden)
    resolver = resolver or _Resolver(tree, namespace, own_module)
    found = [written for written, path in resolver.uses(tree) if any(part_matches(p, entries) for p in path)]
    return sorted(set(found))


def untraced_uses(tree: ast.AST, namespace: dict | None = None, own_module: str | None = None,
                  resolver: _Resolver | None = None) -> list[str]:
    """What ``tree`` calls through a name the resolver cannot trace (a default argument value, a loop
    over functions, a ``match`` capture, an ``except`` target, an unknown decorator, a star-import, an
    attribute set to a function, an item of a container, a name defined nowhere): one sentence each,
    saying what to write instead. Empty when every call is traced (the rule fails closed)."""
    return (resolver or _Resolver(tree, namespace, own_module)).untraced(tree)


def _patched_attributes(tree: ast.AST) -> list[str]:
    """Attributes that ``tree`` sets on what it did not make in the function at hand: a library's
    (``torch.Tensor.backward = f``), a module's, or a class's from outside its body
    (``AvgPool2dFunction.apply = f``). Attributes of a function's own arguments and locals
    (``self.kernel_size``, ``ctx.geometry``) are fine. One sentence each."""
    found: list[str] = []

    def local_names(function) -> set[str]:
        arguments = function.args
        names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                 arguments.vararg, arguments.kwarg] if a is not None}
        return names | {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def visit(node: ast.AST, scope: frozenset) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, scope | local_names(child))
                continue
            if isinstance(child, ast.Attribute) and isinstance(child.ctx, (ast.Store, ast.Del)):
                root = child.value
                while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                    root = root.func if isinstance(root, ast.Call) else root.value
                if not (isinstance(root, ast.Name) and root.id in scope):
                    found.append(f"`{ast.unparse(child)} = ...` (line {child.lineno}; it changes an attribute of what the code did not make "
                                 f"there, e.g. a library's or a class's from outside its body)")
            visit(child, scope)

    visit(tree, frozenset())
    return found


def unreadable_uses(tree: ast.AST, resolver: _Resolver) -> list[str]:
    """The uses of ``tree`` whose resolved path falls under :data:`UNREADABLE_PATHS`: one sentence each."""
    found = []
    for written, path in resolver.uses(tree):
        dotted = ".".join(path)
        why = next((w for p, w in UNREADABLE_PATHS.items() if dotted == p or dotted.startswith(p + ".")), None)
        if why:
            found.append(f"{written} ({dotted}: {why})" if written != dotted else f"{written} ({why})")
    return list(dict.fromkeys(found))


def unlisted_uses(tree: ast.AST, allowed: Iterable[str], resolver: _Resolver) -> list[str]:
    """The uses of ``tree`` (:meth:`_Resolver.kinded_uses`) that ``allowed`` does not list (library functions and
    classes by dotted path, ``.name`` for attributes of values; see :data:`TENSOR_ARITHMETIC`): one entry each, as
    written with its resolved path. The code's own ``def``/``class`` names and the attributes it sets are
    its own (not for a value that may hold a function, class or module); built-in exceptions are allowed."""
    entries = set(allowed)
    attributes = {e[1:] for e in entries if e.startswith(".")}
    own = set(resolver.of_own(tree, _defined)) | set(resolver.stored_attributes)

    def listed(dotted: str) -> bool:
        if dotted in entries:
            return True
        if dotted.startswith("torch.Tensor.") and dotted.count(".") == 2:
            return dotted.rsplit(".", 1)[1] in attributes
        kind = getattr(builtins, dotted, None) if "." not in dotted else None
        return isinstance(kind, type) and issubclass(kind, BaseException)

    found = []
    for written, path, kind in resolver.kinded_uses(tree):
        dotted = ".".join(path)
        if kind == "import":  # importing a module some listed name lives in is fine: its uses are checked
            if not (listed(dotted) or any(e.startswith(dotted + ".") for e in entries)):
                found.append(written)
        elif kind == "library":
            if not listed(dotted):
                found.append(written)
        elif any(a not in attributes and (kind == "holding" or a not in own) for a in path):
            found.append(written)
    return list(dict.fromkeys(found))


def _defined(tree: ast.AST) -> list[str]:
    """The names of every ``def`` and ``class`` of ``tree``."""
    return [node.name for node in walked(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def identity_uses(tree: ast.AST, resolver: "_Resolver") -> list[str]:
    """Identity, not spelling (issue 41 item 1): every library path the code reads is walked to the objects
    it names, through modules and classes only (a module's own attributes, a class's by
    ``inspect.getattr_static``: nothing is called, no instance is touched; a module is imported in the parent
    when the code imports it), and each object is judged by what it *is*: a path that reaches ``sys``,
    ``builtins`` or one of :data:`INTERNAL_MODULES` under another spelling (``typing.sys.modules``,
    ``torch.nn.modules.module.importlib``) is refused as that module, whatever it is called there."""
    found = []
    for written, path, kind in resolver.kinded_uses(tree):
        if kind != "library" or not path:
            continue
        for (spelled, current), part in zip(walk(list(path)), path[1:]):
            if not isinstance(current, type(sys)):
                continue
            name = getattr(current, "__name__", "")
            if (name.split(".")[0] in INTERNAL_MODULES or name == "sys") and spelled != name and \
                    (name != "sys" or part in SYS_INTERNALS):
                found.append(f"`{written}` (the module `{name}`{'.' + part if name == 'sys' else ''}, "
                             f"reached as `{spelled}`)")
                break
    return list(dict.fromkeys(found))


def dynamic_code(tree: ast.AST) -> list[str]:
    """What in ``tree`` hides what it calls (see :data:`DYNAMIC_CALLS`, :data:`INTERNAL_MODULES`,
    :data:`SYS_INTERNALS`, and attributes set on a library or on a class from outside it): one
    sentence per construct found, empty when the code is plain."""
    found: list[str] = _patched_attributes(tree)

    def add(node: ast.AST, sentence: str) -> None:
        found.append(f"{sentence} (line {node.lineno})" if hasattr(node, "lineno") else sentence)
    sys_names = {alias.asname or alias.name for node in walked(tree) if isinstance(node, ast.Import)
                 for alias in node.names if alias.name == "sys"}
    for node in walked(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in sys_names \
                and node.attr in SYS_INTERNALS:
            add(node, f"`sys.{node.attr}`")
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and \
                any(alias.name in SYS_INTERNALS or alias.name == "*" for alias in node.names):
            add(node, "`from sys import` of the interpreter's machinery")
        elif isinstance(node, ast.Name) and node.id in DYNAMIC_CALLS:
            add(node, f"`{node.id}` runs or changes code by name")
        elif (isinstance(node, ast.Name) and node.id in LOOKUP_NAMES) or \
                (isinstance(node, ast.Attribute) and node.attr in LOOKUP_NAMES):
            add(node, f"`{getattr(node, 'id', None) or node.attr}`, which looks functions and classes up by "
                         "a name in a string")
        elif isinstance(node, ast.keyword) and node.arg in LOOKUP_KEYWORDS and not (
                isinstance(node.value, ast.Constant) and node.value.value is LOOKUP_KEYWORDS[node.arg]):
            add(node, f"`{node.arg}={ast.unparse(node.value)}`, which loads pickled objects (any function "
                         "or class)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
                add(node, f"`{node.func.id}` with a computed attribute name")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__") \
                and node.attr not in ALLOWED_DUNDERS:
            add(node, f"the interpreter internal `.{node.attr}`")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                if module.split(".")[0] in INTERNAL_MODULES:
                    add(node, f"the module `{module}`")
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=256)
def _dynamic_findings(source: str) -> tuple[str, ...]:
    """:func:`dynamic_code` of ``source``'s tree, once per source text (raises ``SyntaxError`` when it does not
    parse)."""
    return tuple(dynamic_code(parsed(source)))


def _unproved(name: str, what: str, found: list[str], text: str, cells: list[str]) -> NeedsReview:
    """The third verdict: ``found`` (constructs a rule could not prove allowed nor forbidden) sends the cell to
    the instructor (nbgrader's manual grading): 0 until read. The message and the recorded ``answer`` name
    each construct with its line counted in its cell, quoted."""
    shown = [in_cells(f, text, cells) for f in found[:3]]
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return NeedsReview(f"{name}: {what}: {'; '.join(shown)}{more}. Your instructor will read this code; the cell "
                       f"counts 0 until then. To be scored at once: {ALLOWED_TEXT}", "; ".join(shown) + more)


def check_avoids(function: Any, forbidden: Iterable[str], name: str, *, allowed: Iterable[str] | None = None) -> None:
    """Judge the source of ``function`` (with every helper it uses) with three verdicts (issue 50 item 2):

    * *proved forbidden* (``AssertionError``): a name that resolves, by identity, to what ``forbidden`` lists
      (:func:`forbidden_uses`, :func:`forbidden_identities`: ``F.conv2d`` is ``torch.nn.functional.conv2d``; a
      helper of one's own called ``reference`` is one's own), or to code the grader cannot read
      (:data:`UNREADABLE_PATHS`: the course's helpers, TorchScript): 0, with the line in its cell and what to
      write instead;
    * *unproved* (:class:`~course.checks.NeedsReview`: nbgrader's manual grading, 0 until read): a library name
      that ``allowed`` (an allow-list of functions and classes, :data:`TENSOR_ARITHMETIC`) does not list
      (:func:`unlisted_uses`), reflection or code that hides what it calls (:func:`dynamic_code`,
      :func:`identity_uses`; under the grader in every solution cell), and calls the resolver cannot trace
      (:func:`untraced_uses`);
    * *proved allowed*: nothing of the above (returns ``None``).

    Under the grader the source is the student's as submitted, read in the grader's process.
    """
    try:
        text = source_of(function)
        parsed(text)  # (a source that does not parse is refused here)
    except (OSError, TypeError, SyntaxError) as exc:
        raise AssertionError(f"{name}: could not read the source of {function!r} ({exc})") from None
    if allowed is not None and any("*" in entry for entry in allowed):
        raise ValueError(f"allowed: an allow-list names functions and classes, never whole modules "
                         f"({sorted(e for e in allowed if '*' in e)[:3]} are patterns)")
    cells = cells_of(function)
    namespace = getattr(function, "__trusted_globals__", None)  # the grader's set-up, for its stand-ins
    own_module = None
    if namespace is None:  # the student's kernel: the function's own module (the notebook)
        own_module = getattr(function, "__module__", None)
        namespace = getattr(function, "__globals__", None) or getattr(inspect.getmodule(function), "__dict__", {})
    try:
        _judge(text, cells, namespace, own_module, forbidden, name, allowed, function)
    except AssertionError:  # proved forbidden, or unproved (NeedsReview)
        raise
    except (RecursionError, MemoryError) as exc:
        # the rules' own reading failed on this code: nothing is proved either way, so a person reads it
        raise _unproved(name, f"the grader's reading of {name} failed ({type(exc).__name__}), so no rule could "
                        "check it", [f"{name} (line 1)"], text, cells) from None


def _judge(text: str, cells, namespace, own_module, forbidden, name: str, allowed, function) -> None:
    """The three verdicts of :func:`check_avoids` on the source ``text`` (raises, or returns when allowed)."""
    resolver = resolver_for(text, SetUp.of(text, namespace, own_module))
    with resolver.lock:  # (a cached resolver is shared: one reader at a time)
        _verdicts(resolver, text, cells, forbidden, name, allowed, function)


def _verdicts(resolver: _Resolver, text: str, cells, forbidden, name: str, allowed, function) -> None:
    tree = resolver.tree
    found = forbidden_uses(tree, forbidden, resolver=resolver)
    found += forbidden_identities(resolver.kinded_uses(tree), forbidden)
    found = [f"{f} (line {line_of(text, f)})" if line_of(text, f) else f for f in dict.fromkeys(found)]
    if found:
        raise AssertionError(in_cells(f"{name}: this exercise must not use {', '.join(found)}; write it yourself "
                                      f"({ALLOWED_TEXT})", text, cells))
    unreadable = [f"{f} (line {line_of(text, f)})" if line_of(text, f) else f for f in unreadable_uses(tree, resolver)]
    if unreadable:
        raise AssertionError(in_cells(f"{name}: {'; '.join(unreadable)}: the grader cannot read what that runs, so it "
                                      f"is not accepted here; write it yourself ({ALLOWED_TEXT})", text, cells))
    unlisted = unlisted_uses(tree, allowed, resolver) if allowed is not None else []
    if unlisted:
        raise _unproved(name, f"this exercise allows only tensor operations (write the window sums yourself with "
                        f"{ALLOWED_TENSOR_TEXT}), and the grader cannot prove these among them",
                        [f"{f} (line {line_of(text, f)})" if line_of(text, f) else f for f in unlisted], text, cells)
    hidden = list(_dynamic_findings(text)) + [f"{f} (line {line_of(text, f)})" if line_of(text, f) else f
                                   for f in identity_uses(tree, resolver)]
    if hidden:
        raise _unproved(name, f"{name} (or a helper it uses) hides from the grader what it calls (reflection or code "
                        "built from text), so no rule can check it", hidden, text, cells)
    untraced = untraced_uses(tree, resolver=resolver)
    if untraced:
        raise _unproved(name, f"{name} (or a helper it uses) calls what the grader cannot trace", untraced, text, cells)
    whole = getattr(function, "__submission_source__", None)  # every solution cell, under the grader
    try:
        hidden = list(_dynamic_findings(whole)) if whole is not None else []
    except SyntaxError:
        hidden = []  # a cell that does not parse has already failed to run
    if hidden:
        raise _unproved(name, f"your solution cells reach into the interpreter outside {name} (which can change "
                        "what the tests call)", hidden, whole, cells)
