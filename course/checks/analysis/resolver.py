"""The resolver: every name a function reads, per scope by Python's rules, resolved to a dotted path
(:class:`_Resolver`); the two rules read straight from it (``forbidden_uses``, ``untraced_uses``) are in ``avoids``.

Caches (issue 56 item 2): :func:`resolver_for`, one resolver per ``(source text, SetUp)``, 64 at most
(:class:`SetUp`: what it reads of the namespace, as plain data), shared by every rule on that source (a user holds
its ``lock``); and per resolver, readings of its own tree (:meth:`~_Resolver.kinded_uses`,
:meth:`~_Resolver.untraced`, the names it defines), each once (:meth:`~_Resolver.of_own`)."""

from __future__ import annotations

import ast
import builtins
import functools
import threading
from typing import Any

from course.checks.analysis.lists import (_BUILTIN_NAMES, ALLOWED_DUNDERS, DATA_BUILTINS, INSTEAD, KNOWN_DECORATORS, NAME_LOOKUPS, UNKNOWN)
from course.checks.analysis.objects import SetUp, _library_object, _may_call, data_methods, returns_data
from course.checks.analysis.text import parsed, walked


def _chain(node: ast.AST) -> tuple[ast.Name | None, list[str]]:
    """``a.b.c`` (or ``getattr(a.b, "c")``) -> (the Name ``a``, ["b", "c"]); for ``f(x).b`` the base is not
    a name (None)."""
    attributes = []
    while True:
        if isinstance(node, ast.Attribute):
            attributes.insert(0, node.attr)
            node = node.value
        elif _literal_getattr(node):
            attributes.insert(0, node.args[1].value)
            node = node.args[0]
        else:
            break
    return (node if isinstance(node, ast.Name) else None), attributes


def _literal_getattr(node: ast.AST) -> bool:
    """``getattr(obj, "name")`` (or ``hasattr``), which reads an attribute as ``obj.name`` does."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))


def _is_constant_expr(node: ast.AST) -> bool:
    """A literal (``None``, ``2``, ``(1, 1)``, ``1 << 19``, ``-1``): a default value that is plain data."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_is_constant_expr(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _is_constant_expr(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_constant_expr(node.left) and _is_constant_expr(node.right)
    return False


#: The expressions whose value is made of, or chosen from, these parts (what the resolver follows).
_VALUE_PARTS = {ast.Tuple: lambda node: node.elts, ast.List: lambda node: node.elts, ast.Set: lambda node: node.elts,
                ast.Dict: lambda node: node.values, ast.BoolOp: lambda node: node.values,
                ast.IfExp: lambda node: (node.body, node.orelse), ast.Starred: lambda node: (node.value,),
                ast.NamedExpr: lambda node: (node.value,)}


class _Scope:
    """One scope of the checked code (module, function or lambda, class body, comprehension)."""

    def __init__(self, kind: str, parent: "_Scope | None", depth: int = 0):
        self.kind, self.parent, self.depth = kind, parent, depth
        self.bindings: dict[str, list[tuple]] = {}   # name -> [(kind, detail, scope the detail is read in, line)]
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()

    def bind(self, name: str, kind: str, detail: Any, scope: "_Scope", line: int) -> None:
        self.bindings.setdefault(name, []).append((kind, detail, scope, line))

    def function_scope(self) -> "_Scope":
        """Where a walrus binds: the nearest scope that is not a comprehension."""
        scope = self
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope


class _Carried:
    """What a value may carry: why it cannot be traced (or None), whether it may be a function, class or
    module (``holds``), and the dotted paths it may be (an alias of ``torch.nn.functional``)."""

    __slots__ = ("taint", "holds", "paths")

    def __init__(self, taint: str | None = None, holds: bool = False, paths: frozenset = frozenset()):
        self.taint, self.holds, self.paths = taint, holds, paths

    def __or__(self, other: "_Carried") -> "_Carried":
        return _Carried(self.taint or other.taint, self.holds or other.holds, self.paths | other.paths)

    def key(self):
        return (self.taint, self.holds, self.paths)


@functools.lru_cache(maxsize=64)
def resolver_for(source: str, setup: SetUp) -> "_Resolver":
    """The :class:`_Resolver` of ``source`` in ``setup`` (:meth:`SetUp.of`), shared by every rule that reads that
    source in that set-up: hold its ``lock`` while reading it, and read its own ``tree``."""
    return _Resolver(parsed(source), setup=setup)


class _Resolver:
    """Resolves every name the code reads, per scope, by Python's rules (function locals and arguments,
    comprehensions, class bodies, ``global``/``nonlocal``, walrus), to the code's own ``def``/``class``,
    an import, the set-up's ``namespace``, a built-in, or a local whose bindings it understands; and lists
    the calls it cannot trace (see :func:`untraced_uses`)."""

    def __init__(self, tree: ast.AST, namespace: dict | None = None, own_module: str | None = None, *,
                 setup: SetUp | None = None):
        self.tree = tree
        self.setup = setup or SetUp(namespace, own_module, {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
        self.lock = threading.RLock()  # held by whoever reads a resolver that resolver_for shares
        self._once: dict[tuple, tuple] = {}  # readings of self.tree (kinded_uses, untraced...), once
        self.scope_of: dict[int, _Scope] = {}
        self.problems: list[str] = []
        self.imports: list[tuple[str, list[str]]] = []
        self.pattern_attributes: list[str] = []
        self.stored_attributes: dict[str, list[tuple[ast.AST, _Scope, int]]] = {}
        self.item_stores: list[tuple[ast.Name, ast.AST, _Scope]] = []
        self.decorated: list[tuple[ast.AST, ast.AST, _Scope]] = []
        self._reading: set[str] = set()  # attributes whose stored values are being read (self.a = self.a)
        self._naming: set[tuple] = set()  # names whose kind is being found (t = t.cumsum(2).cumsum(3)), as ``seen``
        self.module = _Scope("module", None)
        self.scopes = [self.module]
        self._visit_body(getattr(tree, "body", [tree]), self.module)
        self._move_declared()
        for base, value, where in self.item_stores:  # fns[0] = F.relu: fns now holds a function
            owner = self.lookup(base.id, self.scope_of.get(id(base), where))
            if owner is not None:
                owner.bindings[base.id].append(("item", value, where, base.lineno))
        self.state: dict[tuple[int, str], _Carried] = {}
        self._settle()

    # --- building the scopes ------------------------------------------------------------------------
    def _new(self, kind: str, parent: _Scope) -> _Scope:
        scope = _Scope(kind, parent, parent.depth + 1)
        self.scopes.append(scope)
        return scope

    def _visit_body(self, body: list, scope: _Scope) -> None:
        for statement in body:
            self._visit(statement, scope)

    def _bind_target(self, target: ast.AST, kind: str, detail: Any, scope: _Scope, value_scope: _Scope) -> None:
        """Bind every name of an assignment target (tuples unpacked: each name may be any part of it)."""
        if isinstance(target, ast.Name):
            scope.bind(target.id, kind, detail, value_scope, target.lineno)
            self.scope_of[id(target)] = scope
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(element, kind, detail, scope, value_scope)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, kind, detail, scope, value_scope)
        elif isinstance(target, ast.Attribute):
            self.stored_attributes.setdefault(target.attr, []).append((detail if kind == "assign" else None,
                                                                      value_scope, target.lineno))
            self._visit(target.value, scope)
        elif isinstance(target, ast.Subscript):
            base, _ = _chain(target.value)
            if base is not None and kind == "assign":
                self.item_stores.append((base, detail, value_scope))
            self._visit(target.value, scope)
            self._visit(target.slice, scope)
        else:
            self._visit(target, scope)

    def _visit_arguments(self, args: ast.arguments, outer: _Scope, inner: _Scope) -> None:
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        pairs += [(a, None) for a in (args.vararg, args.kwarg) if a is not None]
        for arg, default in pairs:
            if default is None or _is_constant_expr(default):
                inner.bind(arg.arg, "param", None, outer, arg.lineno)
            elif _chain(default)[0] is not None:  # an alias: x=torch.float64 is torch.float64 unless given
                inner.bind(arg.arg, "assign", default, outer, arg.lineno)
            else:
                inner.bind(arg.arg, "untraced", "a default argument value that is not a constant", outer, arg.lineno)
            if default is not None:
                self._visit(default, outer)
            if arg.annotation is not None:
                self._visit(arg.annotation, outer)

    def _declarations(self, body: list, scope: _Scope) -> None:
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Global):
                scope.declared_global.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                scope.declared_nonlocal.update(node.names)
            elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(ast.iter_child_nodes(node))

    def _visit(self, node: ast.AST, scope: _Scope) -> None:
        self.scope_of[id(node)] = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                self._visit(decorator, scope)
                self.decorated.append((decorator, node, scope))
            if node.returns is not None:
                self._visit(node.returns, scope)
            inner = self._new("function", scope)
            self._visit_arguments(node.args, scope, inner)
            scope.bind(node.name, "def", node, scope, node.lineno)
            self._declarations(node.body, inner)
            self._visit_body(node.body, inner)
        elif isinstance(node, ast.Lambda):
            inner = self._new("function", scope)
            self._visit_arguments(node.args, scope, inner)
            self._visit(node.body, inner)
        elif isinstance(node, ast.ClassDef):
            for part in node.decorator_list:
                self._visit(part, scope)
                self.decorated.append((part, node, scope))
            for part in node.bases + [k.value for k in node.keywords]:
                self._visit(part, scope)
            scope.bind(node.name, "class", node, scope, node.lineno)
            inner = self._new("class", scope)
            self._visit_body(node.body, inner)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = self._new("comprehension", scope)
            for index, generator in enumerate(node.generators):
                where = scope if index == 0 else inner
                self._visit(generator.iter, where)
                self._bind_target(generator.target, "for", generator.iter, inner, where)
                for condition in generator.ifs:
                    self._visit(condition, inner)
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self._visit(part, inner)
        elif isinstance(node, ast.Assign):
            self._visit(node.value, scope)
            for target in node.targets:
                self._bind_target(target, "assign", node.value, scope, scope)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            if node.value is not None:
                self._visit(node.value, scope)
                self._bind_target(node.target, "assign", node.value, scope, scope)
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self._visit(ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target), scope)
            if isinstance(node, ast.AnnAssign):
                self._visit(node.annotation, scope)
        elif isinstance(node, ast.NamedExpr):
            self._visit(node.value, scope)
            self._bind_target(node.target, "assign", node.value, scope.function_scope(), scope)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._visit(node.iter, scope)
            self._bind_target(node.target, "for", node.iter, scope, scope)
            self._visit_body(node.body + node.orelse, scope)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self._visit(item.context_expr, scope)
                if item.optional_vars is not None:
                    self._bind_target(item.optional_vars, "assign", item.context_expr, scope, scope)
            self._visit_body(node.body, scope)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                first = alias.name.split(".")[0]
                path = alias.name if alias.asname else first
                scope.bind(alias.asname or first, "import", path, scope, node.lineno)
                self.imports.append((f"import {alias.name}", alias.name.split(".")))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module:
                self.imports.append((f"import {module}", module.split(".")))
            for alias in node.names:
                if alias.name == "*":
                    self.problems.append(f"`from {module} import *` binds names the grader cannot see: import the "
                                         f"names you use (from {module} import a, b)")
                    continue
                path = f"{module}.{alias.name}".lstrip(".")
                scope.bind(alias.asname or alias.name, "import", path, scope, node.lineno)
                self.imports.append((f"import {path}", path.split(".")))
        elif isinstance(node, ast.ExceptHandler):
            if node.type is not None:
                self._visit(node.type, scope)
            if node.name:
                scope.bind(node.name, "untraced", "an `except ... as` target", scope, node.lineno)
            self._visit_body(node.body, scope)
        elif isinstance(node, ast.Match):
            self._visit(node.subject, scope)
            for case in node.cases:
                self._visit_pattern(case.pattern, node.subject, scope)
                if case.guard is not None:
                    self._visit(case.guard, scope)
                self._visit_body(case.body, scope)
        else:
            for child in ast.iter_child_nodes(node):
                self._visit(child, scope)

    def _visit_pattern(self, pattern: ast.AST, subject: ast.AST, scope: _Scope) -> None:
        for node in ast.walk(pattern):
            name = getattr(node, "name", None) if isinstance(node, (ast.MatchAs, ast.MatchStar)) else \
                getattr(node, "rest", None) if isinstance(node, ast.MatchMapping) else None
            if name:  # a part of the subject: data when the subject is
                scope.bind(name, "match", subject, scope, node.lineno)
            if isinstance(node, ast.MatchClass):
                self.pattern_attributes += node.kwd_attrs
                self._visit(node.cls, scope)
            elif isinstance(node, ast.MatchValue):
                self._visit(node.value, scope)
            elif isinstance(node, ast.MatchMapping):
                for key in node.keys:
                    self._visit(key, scope)

    def _move_declared(self) -> None:
        """Bindings under ``global``/``nonlocal`` belong to the scope the declaration names."""
        for scope in sorted(self.scopes, key=lambda s: -s.depth):
            for name in list(scope.bindings):
                if name in scope.declared_global:
                    self.module.bindings.setdefault(name, []).extend(scope.bindings.pop(name))
                elif name in scope.declared_nonlocal:
                    target = self._enclosing(scope, name)
                    if target is not None:
                        target.bindings.setdefault(name, []).extend(scope.bindings.pop(name))

    def _enclosing(self, scope: _Scope, name: str) -> _Scope | None:
        outer = scope.parent
        while outer is not None and outer.kind != "module":
            if outer.kind != "class" and (name in outer.bindings or name in outer.declared_nonlocal):
                return outer
            outer = outer.parent
        return None

    # --- resolving ----------------------------------------------------------------------------------
    def lookup(self, name: str, scope: _Scope) -> _Scope | None:
        """The scope whose bindings ``name`` reads in ``scope`` (``None``: the set-up or the built-ins)."""
        if scope.kind != "module":
            if name in scope.declared_global:
                return self.module if name in self.module.bindings else None
            if name in scope.declared_nonlocal:
                return self._enclosing(scope, name)
            if name in scope.bindings:
                return scope
        outer = scope.parent
        while outer is not None:
            if outer.kind == "module":
                break
            if outer.kind != "class" and name in outer.bindings and name not in outer.declared_global:
                return outer
            outer = outer.parent
        return self.module if name in self.module.bindings else None

    def own(self, name: str, scope: _Scope) -> bool:
        """Is ``name`` (read in ``scope``) only ever the code's own ``def`` or ``class``?"""
        where = self.lookup(name, scope)
        return where is not None and all(b[0] in ("def", "class") for b in where.bindings[name])

    def _outside(self, name: str) -> _Carried | None:
        """What a name that the code does not bind is: the set-up's, a built-in, or ``None`` (unknown)."""
        if name in self.setup:
            return _Carried(*self.setup.carried(name))
        if name in _BUILTIN_NAMES:
            return _Carried(None, True, frozenset([name]))
        return None

    def name(self, name: str, scope: _Scope) -> _Carried:
        """What reading ``name`` in ``scope`` may give."""
        where = self.lookup(name, scope)
        if where is None:
            found = self._outside(name)
            return found if found is not None else _Carried(UNKNOWN, True, frozenset([name]))
        carried = self.state.get((id(where), name), _Carried())
        if where is self.module and name in self.setup:
            carried = carried | (self._outside(name) or _Carried())
        return carried

    def carried(self, node: ast.AST, scope: _Scope | None = None) -> _Carried:
        """What the value of expression ``node`` may carry from the names it reads."""
        scope = self.scope_of.get(id(node), scope) or self.module
        if isinstance(node, ast.Name):
            return self.name(node.id, scope)
        if isinstance(node, ast.Attribute) or _literal_getattr(node):
            base = node.value if isinstance(node, ast.Attribute) else node.args[0]
            attribute = node.attr if isinstance(node, ast.Attribute) else node.args[1].value
            inner = self.carried(base, scope)
            if isinstance(base, ast.Name) and self.own(base.id, scope):
                return _Carried(None, True)
            paths = frozenset(f"{p}.{attribute}" for p in inner.paths if p.count(".") < 16)  # m = m.nn: finite
            holds = inner.holds and (not paths or any(_may_call(_library_object(p)) for p in paths))
            found = _Carried(inner.taint, holds, paths)
            if not inner.paths and attribute in self.stored_attributes and attribute not in self._reading:
                self._reading.add(attribute)  # self.fns = [torch.relu]: self.fns holds functions
                for value, where, _ in self.stored_attributes[attribute]:
                    stored = self.carried(value, where) if value is not None else _Carried(
                        "a value the grader cannot trace", True)
                    found = found | _Carried(stored.taint, stored.holds)
                self._reading.discard(attribute)
            if not isinstance(node, ast.Attribute) and len(node.args) > 2:  # getattr(x, "a", default)
                found = found | self.carried(node.args[2], scope)
            return found
        if isinstance(node, ast.Subscript):
            inner = self.carried(node.value, scope)
            return _Carried(inner.taint, inner.holds)
        if isinstance(node, ast.Call):
            callee = node.func
            if isinstance(callee, ast.Name) and self.lookup(callee.id, scope) is None and callee.id in DATA_BUILTINS \
                    and callee.id not in self.setup:
                return _Carried()
            arguments = [self.carried(a, scope) for a in node.args] + \
                [self.carried(k.value, scope) for k in node.keywords]
            found = _Carried()
            for argument in arguments:
                found = found | _Carried(argument.taint)  # own code may hand an argument back
            if isinstance(callee, ast.Name) and self.lookup(callee.id, scope) is None and callee.id in _BUILTIN_NAMES:
                for argument in arguments:  # next, list, sorted, min, zip, type...: their arguments' items
                    found = found | _Carried(argument.taint, argument.holds)
            elif self.kind(node, scope) == "unknown":  # copy.copy(F), functools.reduce(...), f()(): anything
                found = found | _Carried(None, True)
            return found
        if isinstance(node, ast.Lambda):
            return _Carried(None, True)
        parts = _VALUE_PARTS.get(type(node))
        if parts is not None:  # a value made of (or chosen from) its parts carries what any part carries
            found = _Carried()
            for part in parts(node):
                found = found | self.carried(part, scope)
            return found
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.carried(node.elt)
        if isinstance(node, ast.DictComp):
            return self.carried(node.value)
        return _Carried()

    def kind(self, node: ast.AST, scope: _Scope, seen: frozenset = frozenset()) -> str:
        """What kind of value ``node`` is (issue 41 item 2): ``"library"`` (a path the lists judge), ``"own"``
        (the code's own def or class, or an object of its class), ``"own result"`` (what its own function
        returns: only data attributes of it are read, since its own names excuse no library object), ``"data"`` (an argument, a constant, the
        result of a callee :data:`RETURNS` lists, a data method's result) or ``"unknown"`` (anything else:
        the result of an unlisted library call or of a call's result; it may be a function, class or module)."""
        scope = self.scope_of.get(id(node), scope) or self.module
        if isinstance(node, ast.Name):
            if self.own(node.id, scope):
                return "own"
            carried = self.name(node.id, scope)
            if carried.paths:
                return "library"
            where = self.lookup(node.id, scope)
            key = (id(where), node.id)
            if where is None or key in seen or key in self._naming:  # a name read in its own value: its other bindings
                return "data"
            kinds = set()
            self._naming.add(key)  # also across carried(), which starts kind() afresh (a chain of calls on the name)
            try:
                for binding in where.bindings.get(node.id, []):
                    kind, detail, value_scope, _ = binding
                    if kind in ("def", "class"):
                        kinds.add("own")
                    elif kind == "assign" and detail is not None:
                        kinds.add(self.kind(detail, value_scope, seen | {key}))
                    elif kind != "param" and self._binding(binding).holds:
                        kinds.add("unknown")  # a loop target, an item stored, an except target... that may be a function
            finally:
                self._naming.discard(key)
            return next((k for k in ("unknown", "own result", "own") if k in kinds), "data")
        if isinstance(node, (ast.Attribute, ast.Subscript)) or _literal_getattr(node):
            if isinstance(node, ast.Attribute) and self.carried(node, scope).paths:
                return "library"
            base = node.value if not _literal_getattr(node) else node.args[0]
            return self.kind(base, scope, seen)
        if isinstance(node, ast.Call):
            callee = node.func
            if isinstance(callee, ast.Name) and self.lookup(callee.id, scope) is None and callee.id in _BUILTIN_NAMES \
                    and callee.id not in self.setup:
                return "unknown" if self.carried(node, scope).holds else "data"
            callee_kind = self.kind(callee, scope, seen)
            if callee_kind == "own":  # an object of one's own class; or what one's own function returns
                where = self.lookup(callee.id, scope) if isinstance(callee, ast.Name) else None
                classes = where is not None and all(b[0] == "class" for b in where.bindings.get(callee.id, []))
                return "own" if classes else "own result"
            if callee_kind == "library":
                paths = self.carried(callee, scope).paths
                return "data" if paths and all(returns_data(p) for p in paths) else "unknown"
            if isinstance(callee, ast.Attribute) and callee_kind == "data" and callee.attr in data_methods():
                return "data"
            return "unknown"
        if isinstance(node, ast.Lambda):
            return "own"
        return "data"

    def own_methods(self) -> set[str]:
        """The names bound in the code's own class bodies (methods, class attributes), and the attributes it sets."""
        if not hasattr(self, "_own_methods"):
            self._own_methods = {name for scope in self.scopes if scope.kind == "class" for name in scope.bindings}
            self._own_methods |= set(self.stored_attributes)
        return self._own_methods

    def _binding(self, binding: tuple) -> _Carried:
        kind, detail, where, _ = binding
        if kind in ("def", "class"):
            return _Carried(None, True)
        if kind == "import":
            return _Carried(None, True, frozenset([detail]))
        if kind == "untraced":
            return _Carried(detail, True)
        if kind == "assign":
            return self.carried(detail, where) if detail is not None else _Carried()
        if kind == "item":
            found = self.carried(detail, where)
            return _Carried(found.taint, found.holds)
        if kind in ("for", "match"):
            found = self.carried(detail, where)
            if found.taint or found.holds:
                return _Carried(found.taint or ("a loop or comprehension target over a container of functions, "
                                "classes or modules" if kind == "for" else "a `match` capture from a function, "
                                "class or module"), True)
        return _Carried()  # an argument: the caller's data

    def _settle(self) -> None:
        """Every local's :class:`_Carried`, to a fixed point (bindings read other locals; what a local
        carries only grows, so it ends)."""
        for _ in range(1000):
            changed = False
            for scope in self.scopes:
                for name, bindings in scope.bindings.items():
                    found = _Carried()
                    for binding in bindings:
                        found = found | self._binding(binding)
                    key = (id(scope), name)
                    if key not in self.state or self.state[key].key() != found.key():
                        self.state[key], changed = found, True
            if not changed:
                return
        self.problems.append("the code binds its names in too long a chain to be resolved: " + INSTEAD)

    # --- what the code uses, and what it calls that cannot be traced ---------------------------------
    def uses(self, tree: ast.AST) -> list[tuple[str, list[str]]]:
        """``(as written, dotted path)`` per use: ``F.conv2d`` is ``torch.nn.functional.conv2d``; the code's
        own ``def``/``class`` names are not uses; attributes of a local that holds data (``x.reshape``)
        are uses by name, except attributes the code sets itself (``self.kernel_size``)."""
        return [(written, path) for written, path, _ in self.kinded_uses(tree)]

    def kinded_uses(self, tree: ast.AST) -> list[tuple[str, list[str], str]]:
        """:meth:`uses` with the kind of each: ``"import"`` (the module an import statement names),
        ``"library"`` (a dotted path from an import, the set-up or the built-ins), ``"data"`` (attribute names of a value that holds data, ``x.reshape``) or
        ``"holding"`` (attribute names of a value that may be a function, class or module the resolver
        cannot name, ``next(iter([F])).conv2d``: the code's own attribute names do not excuse these). Of the
        resolver's own tree: read once (the list is new, its entries shared: read them, never change them)."""
        return self.of_own(tree, self._kinded_uses)

    def of_own(self, tree: ast.AST, reading) -> list:
        """``reading(tree)`` (a function of the tree and this resolver alone), once for the resolver's own tree (a new
        list each time; its entries shared)."""
        if tree is not self.tree:
            return reading(tree)
        key = (reading.__module__, reading.__qualname__)
        if key not in self._once:
            self._once[key] = tuple(reading(tree))
        return list(self._once[key])

    def _kinded_uses(self, tree: ast.AST) -> list[tuple[str, list[str], str]]:
        found = [(w, p, "import") for w, p in self.imports] + \
            [(f"case ...({a}=...)", [a], "holding") for a in self.pattern_attributes]
        consumed: set[int] = set()
        for node in walked(tree):
            if id(node) in consumed:
                continue
            if isinstance(node, ast.Attribute) or _literal_getattr(node):
                inner = node
                while isinstance(inner, ast.Attribute) or _literal_getattr(inner):
                    if not isinstance(inner, ast.Attribute):
                        consumed.add(id(inner.func))
                    inner = inner.value if isinstance(inner, ast.Attribute) else inner.args[0]
                    if isinstance(inner, (ast.Attribute, ast.Name)) or _literal_getattr(inner):
                        consumed.add(id(inner))
                base, attributes = _chain(node)
                written = ast.unparse(node)
                if base is None:
                    holds = self.carried(inner).holds
                    found.append(("." + ".".join(attributes), attributes, "holding" if holds else "data"))
                    continue
                found += self._resolved(base, attributes, written)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                found += self._resolved(node, [], node.id)
        return [use for use in found if use[1]]

    def _resolved(self, base: ast.Name, attributes: list[str], written: str) -> list[tuple[str, list[str], str]]:
        scope = self.scope_of.get(id(base), self.module)
        if self.own(base.id, scope):
            return []
        carried = self.name(base.id, scope)
        if not carried.paths:  # a local holding data: its attributes, but not those the code sets itself
            if carried.holds:  # ...unless it may hold a function, class or module (m = next(iter([F])))
                return [(written, attributes, "holding")]
            return [(written, [a for a in attributes if a not in self.stored_attributes], "data")]
        uses = []
        for path in sorted(carried.paths):
            resolved = ".".join([path] + attributes)
            uses.append((written if resolved == written else f"{written} ({resolved})", resolved.split("."),
                         "library"))
        return uses

    def untraced(self, tree: ast.AST) -> list[str]:
        """One sentence per call (or use) whose target the resolver cannot trace, saying what to write (of the
        resolver's own tree: read once)."""
        return self.of_own(tree, self._untraced_of)

    def _untraced_of(self, tree: ast.AST) -> list[str]:
        problems = list(self.problems)
        callees: set[int] = set()  # the callee of each call seen (ast.walk meets a call before its callee)
        for decorator, node, scope in self.decorated:
            problems += self._decorator(decorator, node, scope)
        for written, path in self.uses(tree):
            if ".".join(path) in NAME_LOOKUPS:
                problems.append(f"`{written}` hands out library functions by name, as a computed `getattr` does: "
                                f"{INSTEAD}")
        for node in walked(tree):
            scope = self.scope_of.get(id(node), self.module)
            line = getattr(node, "lineno", "?")
            if isinstance(node, ast.Call):
                callees.add(id(node.func))
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                carried = self.name(node.id, scope)
                if node.id.startswith("__") and node.id.endswith("__") and node.id not in ALLOWED_DUNDERS:
                    problems.append(f"`{node.id}` (line {line}) is the interpreter's machinery: {INSTEAD}")
                elif carried.taint == UNKNOWN:
                    problems.append(f"`{node.id}` (line {line}) is {UNKNOWN}: define it, or import it by name")
                if node.id in ("getattr", "hasattr") and self.lookup(node.id, scope) is None and id(node) not in callees:
                    problems.append(f"`{node.id}` (line {line}) is passed around as a value: read attributes as "
                                    "x.name")
            elif isinstance(node, ast.Call):
                called = self._call(node, scope)
                problems += called
                if not called and isinstance(node.func, ast.Name) and not self.own(node.func.id, scope) and \
                        self._computed(node.func.id, scope) is None and self.kind(node.func, scope) == "unknown":
                    problems.append(f"`{node.func.id}(...)` (line {line}) calls a name bound to a value of unknown kind "
                                    f"(it may be any function or class): {INSTEAD}")
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)) or _literal_getattr(node):
                value, attribute = (node.value, node.attr) if isinstance(node, ast.Attribute) else \
                    (node.args[0], node.args[1].value)
                kind = self.kind(value, scope) if not (isinstance(value, ast.Name) and self.own(value.id, scope)) \
                    else "own class"
                if kind in ("unknown", "own", "own result") and attribute not in data_methods() | (
                        self.own_methods() if kind == "own" else set()):
                    what = "a value of unknown kind (it may be a function, class or module)" if kind == "unknown" \
                        else "what your own code returns"
                    problems.append(f"`{ast.unparse(node)}` (line {line}) reads `.{attribute}` of {what}, and "
                                    f"`{attribute}` is no tensor, array or container attribute nor one of your own: "
                                    f"{INSTEAD}")
            elif isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)) and node.value is not None:
                carried = self.carried(node.value, scope)
                if carried.taint and carried.taint != UNKNOWN:
                    problems.append(f"`{ast.unparse(node)}` (line {line}) hands on a value bound by {carried.taint}:"
                                    f" {INSTEAD}")
        return list(dict.fromkeys(problems))

    def _decorator(self, decorator: ast.AST, node: ast.AST, scope: _Scope) -> list[str]:
        expression = decorator.func if isinstance(decorator, ast.Call) else decorator
        base, attributes = _chain(expression)
        if base is not None:
            if self.own(base.id, scope) and attributes and attributes[-1] in ("setter", "getter", "deleter"):
                return []
            paths = {".".join([p] + attributes) for p in self.name(base.id, scope).paths}
            if paths and paths <= KNOWN_DECORATORS:
                return []
        return [f"the decorator `@{ast.unparse(decorator)}` on `{node.name}` (line {node.lineno}) can replace "
                f"`{node.name}` with anything, so what it calls cannot be checked: remove it (understood: "
                "@staticmethod, @classmethod, @property, @once_differentiable, @torch.no_grad())"]

    def _plain(self, node: ast.AST) -> bool:
        """Is ``node`` a value the resolver can name: a name, an attribute path, a lambda, a constant, or
        made of those (a tuple, ``a or b``, ``a if c else b``)? A call's result or an item is not."""
        if isinstance(node, (ast.Name, ast.Lambda, ast.Constant)) or _chain(node)[0] is not None:
            return True
        parts = _VALUE_PARTS.get(type(node))
        return parts is not None and all(self._plain(part) for part in parts(node))

    def _computed(self, name: str, scope: _Scope) -> int | None:
        """The line where local ``name`` (read in ``scope``) is bound to a value computed at run time (the
        result of a call, an item of a container), or ``None``: calling such a local calls what no reader
        of the source can name (``Lin = np.load(pickled)``, ``Lin = string.Formatter().get_field(...)[0]``)."""
        where = self.lookup(name, scope)
        for kind, detail, _, line in (where.bindings.get(name, []) if where is not None else []):
            if kind == "assign" and detail is not None and not self._plain(detail):
                return line
        return None

    def _aliased_attributes(self, name: str, scope: _Scope, seen: frozenset = frozenset()) -> list[str]:
        """The attributes local ``name`` is an alias of (``f = Own.p``, ``g = f``): calling it calls them."""
        where = self.lookup(name, scope)
        if where is None or (id(where), name) in seen:
            return []
        found = []
        for kind, detail, value_scope, _ in where.bindings.get(name, []):
            if kind == "assign" and isinstance(detail, ast.Attribute):
                found += _chain(detail)[1][-1:]
            elif kind == "assign" and isinstance(detail, ast.Name):
                found += self._aliased_attributes(detail.id, value_scope, seen | {(id(where), name)})
        return found

    def _stored(self, attribute: str) -> tuple[int, str] | None:
        """Where the code sets ``.attribute`` to a function, class or module, or to what it cannot trace."""
        for value, where, line in self.stored_attributes.get(attribute, []):
            if value is None:
                return line, "a value the grader cannot trace"
            base, _ = _chain(value.func if isinstance(value, ast.Call) else value)
            if isinstance(value, ast.Lambda) or (base is not None and self.own(base.id, where)):
                continue  # one's own function, method, class or an object of it
            if _is_constant_expr(value):
                continue  # a number or a string: calling it raises
            parts = self._container_parts(value, where)
            carried = self.carried(value, where)
            for part in parts or []:
                carried = carried | self.carried(part, where)
            if carried.taint or carried.holds:
                return line, "a function, class or module"
            if parts is None and not isinstance(value, (ast.Tuple, ast.List, ast.Attribute)):  # (unpacked: parts alike)
                return line, "a value the grader cannot name (an item, a call's result, a name it carries)"
        return None

    def _container_parts(self, value: ast.AST, scope: _Scope) -> list[ast.AST] | None:
        """The parts of a dict, list, tuple or set that ``value`` makes (a literal, or Python's own ``dict(...)``,
        ``list(...)``, ``tuple(...)``, ``set(...)``, ``frozenset(...)`` called by name): an attribute set to it holds
        a container of those parts, whose methods (``self.options.items()``) are data methods. ``None`` otherwise."""
        if isinstance(value, (ast.Dict, ast.Set, ast.List, ast.Tuple)):
            return [p for p in (value.keys if isinstance(value, ast.Dict) else []) + list(
                value.values if isinstance(value, ast.Dict) else value.elts) if p is not None]
        if isinstance(value, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return [value.key, value.value] if isinstance(value, ast.DictComp) else [value.elt]
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
                value.func.id in ("dict", "list", "tuple", "set", "frozenset") and \
                self.lookup(value.func.id, scope) is None and value.func.id not in self.setup:
            return list(value.args) + [k.value for k in value.keywords]
        return None

    def _call(self, node: ast.Call, scope: _Scope) -> list[str]:
        callee, line = node.func, node.lineno
        written = ast.unparse(callee)
        problems = []
        base, attributes = _chain(callee) if isinstance(callee, ast.Attribute) else (None, [])
        if isinstance(callee, ast.Name) or base is not None:
            name = callee if isinstance(callee, ast.Name) else base
            checked = attributes + (self._aliased_attributes(callee.id, scope) if name is callee else [])
            if not self.own(name.id, scope):
                carried = self.name(name.id, scope)
                if carried.taint and carried.taint != UNKNOWN:
                    what = f"`{name.id}`" if name is callee else f"an attribute of `{name.id}`, which is"
                    problems.append(f"`{written}(...)` (line {line}) calls {what} bound by {carried.taint}: "
                                    f"{INSTEAD} instead of through `{written}`")
                elif name is callee and self._computed(name.id, scope) is not None:
                    problems.append(f"`{written}(...)` (line {line}) calls `{name.id}`, a value computed at run time "
                                    f"(line {self._computed(name.id, scope)}) that no reader of the source can name: "
                                    f"{INSTEAD} instead of through `{written}`")
        elif isinstance(callee, ast.Attribute):
            checked = [callee.attr]
        elif isinstance(callee, ast.Subscript):
            problems.append(f"`{written}(...)` (line {line}) calls an item of a container: {INSTEAD}")
            checked = []
        elif _literal_getattr(callee):  # getattr(x, "name")(...) is x.name(...)
            checked = [callee.args[1].value]
        elif isinstance(callee, ast.Call):
            problems.append(f"`{written}(...)` (line {line}) calls the result of a call, which may be any function or "
                            f"class: bind what you call to a name (your own def) and call that, or {INSTEAD}")
            checked = []
        elif isinstance(callee, ast.Lambda):
            checked = []
        else:
            problems.append(f"`{written}(...)` (line {line}) calls the value of an expression: {INSTEAD}")
            checked = []
        if (isinstance(callee, ast.Attribute) or _literal_getattr(callee)) and \
                not (base is not None and self.own(base.id, scope)):
            value, attribute = (callee.value, callee.attr) if isinstance(callee, ast.Attribute) else \
                (callee.args[0], callee.args[1].value)
            kind = self.kind(value, scope)
            allowed = data_methods() | (self.own_methods() if kind == "own" else set())
            if kind in ("unknown", "own", "own result") and attribute not in allowed:
                what = "a value of unknown kind (the result of a call the grader does not know to return data: it may " \
                    "be a function, class or module)" if kind == "unknown" else "what your own code returns"
                problems.append(f"`{written}(...)` (line {line}) calls `.{attribute}` of {what}, and "
                                f"`{attribute}` is no tensor, array or container method nor one of your own: {INSTEAD}")
        for attribute in checked:
            stored = self._stored(attribute)  # (on a class of the code's own too: `Own.p = F.avg_pool2d`)
            if stored is not None:
                problems.append(f"`{written}(...)` (line {line}) calls `.{attribute}`, an attribute your code sets "
                                f"to {stored[1]} (line {stored[0]}): {INSTEAD} instead of through `{written}`")
        if isinstance(callee, ast.Name) and self.lookup(callee.id, scope) is None and callee.id not in self.setup \
                and (callee.id in DATA_BUILTINS or isinstance(getattr(builtins, callee.id, None), type) and
                     issubclass(getattr(builtins, callee.id), BaseException)):
            return problems  # a number, a string or an exception of its arguments: nothing is called
        for argument in list(node.args) + [k.value for k in node.keywords]:
            carried = self.carried(argument, scope)
            if carried.taint and carried.taint != UNKNOWN:
                problems.append(f"`{ast.unparse(argument)}` (line {line}) is passed to `{written}`, but it is bound "
                                f"by {carried.taint}: {INSTEAD}")
        return problems
