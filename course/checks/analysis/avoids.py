""":func:`check_avoids`: a function uses no forbidden (or, with ``allowed``, no unlisted) library name, nothing
the grader cannot read, and hides nothing it calls."""

from __future__ import annotations

import ast
import builtins
import fnmatch
import inspect
import sys
from typing import Any, Iterable

from course.checks.analysis.lists import (ALLOWED_DUNDERS, ALLOWED_TENSOR_TEXT, ALLOWED_TEXT, DYNAMIC_CALLS,
                                          INTERNAL_MODULES, LOOKUP_KEYWORDS, LOOKUP_NAMES, SYS_INTERNALS,
                                          UNREADABLE_PATHS)
from course.checks.analysis.identity import forbidden_identities, own_attribute, walk
from course.checks.analysis.resolver import _Resolver, forbidden_uses, untraced_uses
from course.checks.analysis.text import _parse, source_of


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
                    found.append(f"`{ast.unparse(child)} = ...` (it changes an attribute of what the code did not make "
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
    """The uses of ``tree`` (:meth:`_Resolver.kinded_uses`) that ``allowed`` does not list (library paths,
    ``*`` patterns, ``.name`` for attributes of values; see :data:`TENSOR_ARITHMETIC`): one entry each, as
    written with its resolved path. The code's own ``def``/``class`` names and the attributes it sets are
    its own (not for a value that may hold a function, class or module); built-in exceptions are allowed."""
    entries = set(allowed)
    patterns = [e.split(".") for e in entries if "*" in e]
    attributes = {e[1:] for e in entries if e.startswith(".")}
    own = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                    ast.ClassDef))} | set(resolver.stored_attributes)

    def by_pattern(dotted: str) -> bool:
        """A ``*`` entry matches whole dotted parts, never across dots; ``math.*`` only ``math``'s own
        attributes (not a module it imports or a function it re-exports: ``typing.sys`` is ``sys``)."""
        parts = dotted.split(".")
        for pattern in patterns:
            if len(pattern) == len(parts) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pattern)):
                walked = walk(parts)
                fixed = ".".join(p for p in pattern if "*" not in p)
                if len(walked) == len(parts) and own_attribute(walked[-1][1], fixed):
                    return True
        return False

    def listed(dotted: str) -> bool:
        if dotted in entries or by_pattern(dotted):
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
    sys_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names if alias.name == "sys"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in sys_names \
                and node.attr in SYS_INTERNALS:
            found.append(f"`sys.{node.attr}`")
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and \
                any(alias.name in SYS_INTERNALS or alias.name == "*" for alias in node.names):
            found.append("`from sys import` of the interpreter's machinery")
        elif isinstance(node, ast.Name) and node.id in DYNAMIC_CALLS:
            found.append(f"`{node.id}` runs or changes code by name")
        elif (isinstance(node, ast.Name) and node.id in LOOKUP_NAMES) or \
                (isinstance(node, ast.Attribute) and node.attr in LOOKUP_NAMES):
            found.append(f"`{getattr(node, 'id', None) or node.attr}`, which looks functions and classes up by "
                         "a name in a string")
        elif isinstance(node, ast.keyword) and node.arg in LOOKUP_KEYWORDS and not (
                isinstance(node.value, ast.Constant) and node.value.value is LOOKUP_KEYWORDS[node.arg]):
            found.append(f"`{node.arg}={ast.unparse(node.value)}`, which loads pickled objects (any function "
                         "or class)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
                found.append(f"`{node.func.id}` with a computed attribute name")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__") \
                and node.attr not in ALLOWED_DUNDERS:
            found.append(f"the interpreter internal `.{node.attr}`")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                if module.split(".")[0] in INTERNAL_MODULES:
                    found.append(f"the module `{module}`")
    return list(dict.fromkeys(found))


def check_avoids(function: Any, forbidden: Iterable[str], name: str, *, allowed: Iterable[str] | None = None) -> None:
    """Assert that the source of ``function`` (with every helper it uses) uses nothing that ``forbidden``
    lists, by what each name resolves to (modules, functions, or ``*`` patterns: :func:`forbidden_uses`;
    ``F.conv2d`` is ``torch.nn.functional.conv2d``, a helper of one's own called ``reference`` is one's
    own), calls nothing through a name the resolver cannot trace (:func:`untraced_uses`: the rule fails
    closed), and hides nothing it calls
    (:func:`dynamic_code`: no ``getattr`` with a computed name, ``eval``, ``__import__``, ``importlib``,
    ``sys``, ``gc``, threads, ``.__dict__``...). Under the
    grader that last rule covers every statement of the solution cells, not just ``function``'s source:
    top-level code that reaches the grader's helpers (e.g. through ``gc``) hides what the tests call.

    Used where an exercise forbids a library shortcut, e.g. ``torch`` or ``avg_pool2d`` in the loops
    lesson. Under the grader the source is the student's as submitted, read in the grader's process.
    Where an exercise allows only some operations ("tensor operations only", lesson 4), ``allowed`` is
    that allow-list (:data:`TENSOR_ARITHMETIC`, :func:`unlisted_uses`): anything else is refused too.
    """
    try:
        tree = _parse(source_of(function))
    except (OSError, TypeError, SyntaxError) as exc:
        raise AssertionError(f"{name}: could not read the source of {function!r} ({exc})") from None
    namespace = getattr(function, "__trusted_globals__", None)  # the grader's set-up, for its stand-ins
    own_module = None
    if namespace is None:  # the student's kernel: the function's own module (the notebook)
        own_module = getattr(function, "__module__", None)
        namespace = getattr(function, "__globals__", None) or getattr(inspect.getmodule(function), "__dict__", {})
    resolver = _Resolver(tree, namespace, own_module)
    found = forbidden_uses(tree, forbidden, resolver=resolver)
    found += forbidden_identities(resolver.kinded_uses(tree), forbidden)
    if found:
        raise AssertionError(f"{name}: this exercise must not use {', '.join(found)}; write it yourself "
                             f"({ALLOWED_TEXT})")
    unlisted = unlisted_uses(tree, allowed, resolver) if allowed is not None else []
    if unlisted:
        raise AssertionError(f"{name}: this exercise allows only tensor operations, and {', '.join(unlisted[:4])} "
                             f"{'is' if len(unlisted) == 1 else 'are'} not among them (no pooling, convolution or "
                             f"resampling function computes the windows for you); write the window sums yourself "
                             f"with {ALLOWED_TENSOR_TEXT}")
    unreadable = unreadable_uses(tree, resolver)
    if unreadable:
        raise AssertionError(f"{name}: {'; '.join(unreadable)}: the grader cannot read what that runs, so it is not "
                             f"accepted here; write it yourself ({ALLOWED_TEXT})")
    hidden = dynamic_code(tree) + identity_uses(tree, resolver)
    if hidden:
        raise AssertionError(f"{name} (or a helper it uses) uses {'; '.join(hidden)}: code that hides what it "
                             f"calls cannot be checked, so it is not accepted here ({ALLOWED_TEXT})")
    untraced = untraced_uses(tree, resolver=resolver)
    if untraced:
        raise AssertionError(f"{name} (or a helper it uses) calls what the grader cannot trace, so it cannot check "
                             f"what {name} uses: {'; '.join(untraced[:3])}")
    whole = getattr(function, "__submission_source__", None)  # every solution cell, under the grader
    try:
        hidden = dynamic_code(_parse(whole)) if whole is not None else []
    except SyntaxError:
        hidden = []  # a cell that does not parse has already failed to run
    if hidden:
        raise AssertionError(f"your solution cells use {'; '.join(hidden)} outside {name}: code that reaches "
                             f"into the interpreter can change what the tests call, so no test of how you "
                             f"wrote {name} accepts it; remove it from every solution cell ({ALLOWED_TEXT})")
