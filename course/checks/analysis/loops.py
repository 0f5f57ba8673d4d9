"""How a function loops (one reader of loops, :class:`_LoopNests`); the rules that read it, lesson 3's
:func:`~course.checks.analysis.loop_rules.check_kernel_loops` and lesson 2's
:func:`~course.checks.analysis.loop_rules.check_output_loops`, are in ``loop_rules``."""

from __future__ import annotations

import ast
import math
from typing import Iterable

from course.checks.analysis.lists import (_APPENDS, CONSUMERS, CONTRACTS, ELEMENT_WISE, GEOMETRY, GEOMETRY_BOUND,
                                          GEOMETRY_LENGTH, LOOP_LIMIT, MAP_CONVERSIONS, NPY_MAXDIMS, PER_ELEMENT_CALLS,
                                          SHAPE_ARGUMENTS, WINDOW_SUMS)
from course.checks.analysis.resolver import _Resolver, _Scope
from course.checks.analysis.text import walked


def _is_ndindex(path: str) -> bool:
    """``numpy.ndindex`` under any of NumPy's own paths (``numpy.lib.index_tricks.ndindex``)."""
    return path.split(".")[0] == "numpy" and path.split(".")[-1] == "ndindex"


class _LoopNests:
    """How often each loop of a function turns, read from its source (with the helpers it calls by name):
    a loop's length is *bounded* when it follows from the geometry arguments (``kernel_size``, ``stride``,
    ``padding``, each entry read as :data:`GEOMETRY_BOUND`) and constants, else it grows with the data.
    ``problems``: one sentence per loop that is not bounded, per nest that turns more than
    :data:`LOOP_LIMIT` times, and per construct whose number of turns cannot be read (``while``, recursion,
    a function passed as a value, ``np.vectorize``...). ``data_depth``: the most loops that grow with the
    data around a value the function writes (``out[...] = ...``, ``+=`` into an item, a comprehension's item)."""

    def __init__(self, tree: ast.Module, resolver: _Resolver, entry: str, given: Iterable[str] = ()):
        self.r, self.problems, self.data_depth, self.entry_def = resolver, [], 0, None
        self.roles: dict[str, str | None] = {}  # the entry's parameters -> their role in the contract (by position)
        self.write_depth = 0  # the most loops over the data around any write (computed there or not)
        self.unsure = False  # a value written in a nest came through a binding the rule does not read
        self.copies: list[ast.AST] = []  # writes in a nest of values it did not compute
        # A helper the grader runs as the course's own (``given-at-grading``: output_size) is not walked, if the
        # code binds its name only by that one def.
        self.given = {n for n in given if [b[0] for b in self.r.module.bindings.get(n, [])] == ["def"]}
        # Not walked either: a helper run as the course's own, and a def that nothing can run (a later
        # definition replaces it, and its name is read nowhere else).
        loaded = [n for n in walked(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        replaced = {id(d) for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            b[3] > d.lineno for b in self.r.module.bindings.get(d.name, []))}
        skipped = [d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            d.name in self.given or id(d) in replaced and not any(
                n.id == d.name and not (d.lineno <= n.lineno <= d.end_lineno) for n in loaded))]
        inside_given = {id(n) for d in skipped for n in ast.walk(d)}
        self.parents = {id(c): n for n in walked(tree) for c in ast.iter_child_nodes(n)}
        self.defs = [n for n in walked(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.reached: set[int] = set()
        self.finished: dict[int, dict] = {}  # def -> the most it appended in one call, the lists it grew unboundedly
        self.stack: list[int] = []
        self.visits = 0
        self._worked: dict[tuple, tuple[bool, bool, bool]] = {}  # _work's answers, by all that they depend on
        self._returned: dict[int, list] = {}  # _returns of each def
        self.augmented, self.grown, self.not_lists = set(), set(), set()  # (scope, name) of ``n += ...``; of lists that grow
        for node in walked(tree):
            target = node.target if isinstance(node, ast.AugAssign) else node.func.value if isinstance(node, ast.Call) \
                and isinstance(node.func, ast.Attribute) and node.func.attr in _APPENDS else None
            if isinstance(target, ast.Name) and self._local(target, self.r.scope_of.get(id(target), self.r.module)):
                where = self.r.lookup(target.id, self.r.scope_of.get(id(target), self.r.module))
                (self.augmented if isinstance(node, ast.AugAssign) else self.grown).add((id(where), target.id))
                if isinstance(node, ast.AugAssign) and not self._list_growth(node):
                    self.not_lists.add((id(where), target.id))  # out += tap: never read as a list
        self.grown |= self.augmented
        self.escapes = self._escaping_names(tree)
        found = self._callable(ast.Name(entry, ast.Load()), self.r.module)
        if not found or not isinstance(found[-1], (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            found = defs[:1] if not self.r.lookup(entry, self.r.module) else []
        if not found:
            self.problems.append(f"`{entry}` is not a `def` the rule can read: write it as `def {entry}(...)`")
            return
        entry_def = self.entry_def = found[-1]
        contract = CONTRACTS.get(entry)
        positional = [a.arg for a in entry_def.args.posonlyargs + entry_def.args.args]
        self.roles = {name: (name if contract is None else None) for name in self._params(entry_def)}
        if contract is not None:  # by position, as the tests call it
            self.roles.update({name: contract[i] for i, name in enumerate(positional) if i < len(contract)})
        params = {name: GEOMETRY_BOUND if self.roles[name] in GEOMETRY else None for name in self._params(entry_def)}
        lengths = {name: SHAPE_ARGUMENTS.get(self.roles[name], GEOMETRY_LENGTH if self.roles[name] in GEOMETRY else None)
                   for name in self._params(entry_def)}
        inner = id(self._inner(entry_def))
        self._invoke(entry_def, {inner: params, ("len", inner): lengths}, 1, 0)
        for node in self.defs:
            if id(node) not in self.reached and id(node) not in inside_given and any(
                    isinstance(n, (ast.For, ast.While, ast.comprehension, ast.Call)) for n in ast.walk(node)):
                self._problem(node, f"`{node.name}` has a loop or a call (it may call itself), but the rule cannot see "
                              f"how often it runs (call it by name from {entry}, not through an object, an operator or "
                              f"a value)")

    # --- reading the code -----------------------------------------------------------------------------
    def _problem(self, node: ast.AST, text: str) -> None:
        sentence = f"line {getattr(node, 'lineno', '?')}: {text}"
        if sentence not in self.problems:
            self.problems.append(sentence)

    def _inner(self, function: ast.AST) -> _Scope:
        body = function.body if isinstance(function.body, list) else [function.body]
        return self.r.scope_of.get(id(body[0]), self.r.module)

    @staticmethod
    def _params(function: ast.AST) -> list[str]:
        a = function.args
        return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None]

    def _callable(self, callee: ast.AST, scope: _Scope, seen: frozenset = frozenset()) -> list[ast.AST] | None:
        """The code's own ``def``s (or named lambdas, or static methods of its own classes) that calling ``callee``
        may run; None when it is not one."""
        if not isinstance(callee, ast.Name):
            return self._static_method(callee, scope)
        where = self.r.lookup(callee.id, self.r.scope_of.get(id(callee), scope))
        if where is None or (id(where), callee.id) in seen:
            return None
        found = []
        for kind, detail, value_scope, _ in where.bindings.get(callee.id, []):
            if kind == "def":
                found.append(detail)
            elif kind == "assign" and isinstance(detail, ast.Lambda):
                found.append(detail)
            elif kind == "assign" and isinstance(detail, ast.Name):
                more = self._callable(detail, value_scope, seen | {(id(where), callee.id)})
                if more is None:
                    return None
                found += more
            else:
                return None
        return found or None

    def _call_context(self, function: ast.AST, call: ast.Call, ctx: dict, scope: _Scope) -> dict:
        """``ctx`` plus the bound of each parameter of ``function`` at this call."""
        a = function.args
        positional = a.posonlyargs + a.args
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
        starred = any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords)
        given = {} if starred else {p.arg: x for p, x in zip(positional, call.args)}
        given.update({k.arg: k.value for k in call.keywords if k.arg is not None and not starred})
        params, lengths = {}, {}
        for name in self._params(function):
            if name in given:
                params[name] = self.value(given[name], ctx, scope)
                lengths[name] = self.length(given[name], ctx, scope)
            elif name in defaults and not starred:
                params[name] = self.value(defaults[name], ctx, self.r.scope_of.get(id(defaults[name]), scope))
            else:
                params[name] = None
        inner = id(self._inner(function))
        return {**ctx, inner: params, ("len", inner): lengths}

    def value(self, node: ast.AST, ctx: dict, scope: _Scope | None = None, seen: frozenset = frozenset(),
              growing: bool = False) -> int | None:
        """An upper bound of ``|v|`` for every int ``v`` in the value of ``node``, or None (it may grow with the data).
        A name read again while its own bindings are read (``sh = sh or kh``) adds nothing where the value is only
        chosen from its parts, and is unbounded where it grows (``n = n + 1``, ``growing``)."""
        scope = self.r.scope_of.get(id(node), scope) or self.r.module
        if isinstance(node, ast.Constant):
            return abs(int(node.value)) if isinstance(node.value, (bool, int)) else None
        if isinstance(node, ast.Name):
            where = self.r.lookup(node.id, scope)
            if where is None:
                return self.r.setup.constant(node.id)
            key = (id(where), node.id)
            if key in self.grown or (key in seen and growing):  # (a list that grows may hold anything)
                return None
            if key in seen:
                return 0
            bounds = []
            for kind, detail, value_scope, _ in where.bindings[node.id]:
                if kind == "param" or (kind in ("assign", "untraced") and value_scope is not where
                                       and where.kind == "function" and node.id in ctx.get(id(where), {})):
                    bounds.append(ctx.get(id(where), {}).get(node.id))  # an argument: its bound at this call
                elif kind == "assign" and detail is not None and not isinstance(detail, ast.Lambda):
                    bounds.append(self.value(detail, ctx, value_scope, seen | {key}, growing))
                elif kind == "for":
                    bounds.append(self.items(detail, ctx, value_scope, seen | {key}, growing))
                else:
                    bounds.append(None)
            return None if None in bounds else max(bounds, default=0)
        if isinstance(node, ast.UnaryOp):
            return 1 if isinstance(node.op, ast.Not) else self.value(node.operand, ctx, scope, seen, growing)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):  # its items
            return self.value(node.elt, ctx, scope, seen, growing)
        if isinstance(node, ast.Dict):
            bounds = [self.value(v, ctx, scope, seen, growing) for v in node.values]
            return None if None in bounds or None in node.keys else max(bounds, default=0)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and any(
                isinstance(side, (ast.List, ast.Tuple)) for side in (node.left, node.right)):  # [k] * 2: its items
            return self.value(node.left if isinstance(node.left, (ast.List, ast.Tuple)) else node.right, ctx, scope,
                              seen, growing)
        if isinstance(node, ast.BinOp):
            grows = growing or not isinstance(node.op, (ast.Mod, ast.FloorDiv, ast.Div, ast.RShift, ast.BitAnd))
            a, b = self.value(node.left, ctx, scope, seen, grows), self.value(node.right, ctx, scope, seen, grows)
            if isinstance(node.op, ast.Mod):
                return b
            if a is None or b is None:
                return None
            cap = 10 ** 9
            return min(cap, {ast.Add: lambda: a + b, ast.Sub: lambda: a + b, ast.Mult: lambda: a * b,
                             ast.FloorDiv: lambda: a, ast.Div: lambda: a, ast.RShift: lambda: a,
                             ast.BitAnd: lambda: min(a, b), ast.BitOr: lambda: 2 * max(a, b),
                             ast.BitXor: lambda: 2 * max(a, b), ast.Pow: lambda: a ** min(b, 64) if a > 1 else 1,
                             ast.LShift: lambda: a << min(b, 64)}.get(type(node.op), lambda: cap)())
        if isinstance(node, ast.Compare):
            return 1
        if isinstance(node, (ast.BoolOp, ast.IfExp, ast.Tuple, ast.List)):
            parts = node.values if isinstance(node, ast.BoolOp) else (node.body, node.orelse) \
                if isinstance(node, ast.IfExp) else node.elts
            bounds = [self.value(p, ctx, scope, seen, growing) for p in parts]
            return None if None in bounds else max(bounds, default=0)
        if isinstance(node, ast.Subscript):
            return self.value(node.value, ctx, scope, seen, growing)
        if isinstance(node, ast.NamedExpr):
            return self.value(node.value, ctx, scope, seen, growing)
        if isinstance(node, ast.Call):
            name = self._builtin(node.func, scope)
            if (name in ("min", "max") and len(node.args) == 1) or (
                    name in ("tuple", "list", "sorted", "reversed", "set", "frozenset") and len(node.args) == 1):
                return self.items(node.args[0], ctx, scope, seen, growing)  # (an item of, or the items of, it)
            if self._conversion_map(node, scope):
                return self.items(node.args[1], ctx, scope, seen, growing)
            bounds = [self.value(x, ctx, scope, seen, growing or name not in ("min", "max", "abs", "int", "round"))
                      for x in node.args]
            if name == "min":
                known = [b for b in bounds if b is not None]
                return min(known) if known else None
            if name == "max":
                return None if None in bounds else max(bounds, default=0)
            if name in ("abs", "int", "round") and node.args:
                return bounds[0]
            if name == "len" and node.args:
                return self.length(node.args[0], ctx, scope, seen)
            functions = self._callable(node.func, scope)
            if functions and all(id(f) not in self.stack for f in functions):
                returned = []
                for function in functions:
                    inner = self._call_context(function, node, ctx, scope)
                    returned += [self.value(r.value, inner, None, seen, True) if r.value is not None else 0
                                 for r in self._returns(function)]
                return None if None in returned else max(returned, default=0)
        return None

    def items(self, node: ast.AST, ctx: dict, scope: _Scope | None = None, seen: frozenset = frozenset(),
              growing: bool = False) -> int | None:
        """A bound of the ints an iteration over ``node`` hands out (the loop target's values)."""
        scope = self.r.scope_of.get(id(node), scope) or self.r.module
        if isinstance(node, ast.Call):
            name = self._builtin(node.func, scope)
            if name == "range":
                bounds = [self.value(x, ctx, scope, seen, growing) for x in node.args[:2]]
                return None if None in bounds or not bounds else max(bounds)
            if name in ("zip", "reversed", "sorted", "list", "tuple", "iter", "set", "frozenset"):
                bounds = [self.items(x, ctx, scope, seen, growing) for x in node.args]
                return None if None in bounds else max(bounds, default=0)
            if name == "enumerate" and node.args:
                bounds = [self.length(node.args[0], ctx, scope, seen), self.items(node.args[0], ctx, scope, seen, growing)]
                return None if None in bounds else max(bounds)
            if self._conversion_map(node, scope):
                return self.items(node.args[1], ctx, scope, seen, growing)
            paths = self.r.carried(node.func, scope).paths if not self._callable(node.func, scope) else frozenset()
            if paths and all(_is_ndindex(p) for p in paths):  # indices below each dimension
                bounds = [self.value(x, ctx, scope, seen, growing) for x in self._dimensions(node.args)]
                return None if None in bounds or node.keywords else max(bounds, default=0)
            if paths and all(p == "itertools.product" for p in paths):  # tuples of the items of its iterables
                bounds = [self.items(x, ctx, scope, seen, growing) for x in node.args]
                return None if None in bounds or not bounds else max(bounds)
            return self.value(node, ctx, scope, seen, growing)  # a helper's result: the ints in it
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return self.value(node, ctx, scope, seen, growing) if not any(isinstance(e, ast.Starred) for e in node.elts) \
                else None
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.value(node.elt, ctx, scope, seen, growing)
        return self.value(node, ctx, scope, seen, growing) if isinstance(node, ast.Name) else None

    def length(self, node: ast.AST, ctx: dict, scope: _Scope | None = None, seen: frozenset = frozenset(),
               frame: dict | None = None) -> int | None:
        """A bound of how many items an iteration over ``node`` hands out, or None (it may grow with the data)."""
        scope = self.r.scope_of.get(id(node), scope) or self.r.module
        if isinstance(node, ast.Call):
            name = self._builtin(node.func, scope)
            arguments = [x for x in node.args if not isinstance(x, ast.Starred)]
            if len(arguments) < len(node.args) or any(k.arg is None for k in node.keywords):
                return None
            if name == "range":
                if len(arguments) == 1:
                    return self.value(arguments[0], ctx, scope, seen)
                bounds = [self.value(x, ctx, scope, seen) for x in arguments[:2]]
                return None if None in bounds or not bounds else sum(bounds)
            if name in ("enumerate", "reversed", "sorted", "list", "tuple", "iter", "set", "frozenset") and arguments:
                return self.length(arguments[0], ctx, scope, seen, frame)
            if name == "zip" or self._conversion_map(node, scope):
                known = [n for n in (self.length(x, ctx, scope, seen, frame) for x in arguments[name != "zip":])
                         if n is not None]
                return min(known) if known else None
            paths = self.r.carried(node.func, scope).paths if not self._callable(node.func, scope) else frozenset()
            if paths and all(p == "itertools.product" for p in paths):
                sizes = [self.length(x, ctx, scope, seen, frame) for x in arguments]
                repeat = next((self.value(k.value, ctx, scope, seen) for k in node.keywords if k.arg == "repeat"), 1)
                return None if None in sizes or repeat is None else math.prod(sizes) ** repeat
            if paths and all(_is_ndindex(p) for p in paths) and not node.keywords:  # np.ndindex(kh, kw), ((kh, kw))
                sizes = [self.value(x, ctx, scope, seen) for x in self._dimensions(arguments)]
                return None if None in sizes else math.prod(sizes)
            functions = self._callable(node.func, scope)
            if functions and all(id(f) not in self.stack for f in functions):
                sizes = []
                for function in functions:
                    inner = self._call_context(function, node, ctx, scope)
                    done = self.finished.get(id(function))  # a list it built and returns: as long as it grew
                    done = dict(done, iterated=False, measured=False) if done else None
                    sizes += [self.length(r.value, inner, None, seen, done) if r.value is not None else None
                              for r in self._returns(function)]
                return None if None in sizes or not sizes else max(sizes)
            return None
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return len(node.elts) if not any(isinstance(e, ast.Starred) for e in node.elts) else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):  # (k,) * 2, (a,) + (b,)
            sequences = [self.length(side, ctx, scope, seen, frame) for side in (node.left, node.right)]
            if isinstance(node.op, ast.Add):
                return None if None in sequences else sum(sequences)
            counts = [self.value(side, ctx, scope, seen) for side in (node.right, node.left)]
            sizes = [n * c for n, c in zip(sequences, counts) if n is not None and c is not None]
            return min(sizes) if sizes else None
        if isinstance(node, (ast.IfExp, ast.BoolOp)):  # one of its parts
            sizes = [self.length(part, ctx, scope, seen, frame)
                     for part in ((node.body, node.orelse) if isinstance(node, ast.IfExp) else node.values)]
            return None if None in sizes else max(sizes)
        if isinstance(node, ast.Dict):
            return len(node.keys)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            sizes = [self.length(g.iter, ctx, None, seen, frame) for g in node.generators]
            return None if None in sizes else math.prod(sizes)
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "strides"):
            return NPY_MAXDIMS
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return self.length(node.value, ctx, scope, seen, frame)
        if isinstance(node, ast.Name):
            where = self.r.lookup(node.id, scope)
            key = (id(where), node.id)
            own = frame is not None and where is frame["scope"] and key not in frame["unbounded"] \
                and key not in self.escapes
            # an argument is what the call passed (a graded call passes ints and tuples, which nothing can grow)
            passed = all(b[0] == "param" for b in where.bindings[node.id]) if where is not None else False
            if where is None or key in seen or key in self.not_lists or (
                    key in self.grown | (set() if passed else self.escapes) and not own):
                return None
            argument = node.id in ctx.get(id(where), {})
            sizes = [ctx.get(("len", id(where)), {}).get(node.id) if kind == "param" or (
                         argument and kind in ("assign", "untraced") and value_scope is not where)
                     else self.length(detail, ctx, value_scope, seen | {key}) if kind == "assign" and detail is not None
                     else None for kind, detail, value_scope, _ in where.bindings[node.id]]
            if None in sizes:
                return None
            if own:  # a list of this function's own: it grows by what this call appended so far
                frame["measured"] = True
                return max(sizes) + frame["appended"]
            return max(sizes)
        return None

    @staticmethod
    def _dimensions(arguments: list) -> list:
        """The dimensions ``np.ndindex`` is given: its arguments, or the items of its one tuple or list."""
        if len(arguments) == 1 and isinstance(arguments[0], (ast.Tuple, ast.List)):
            return arguments[0].elts
        return arguments

    def _escaping_names(self, tree: ast.AST) -> set:
        """(scope, name) of the code's own values that leave its sight, so that a list may grow where the rule
        does not count it: passed to a call other than NumPy's or a built-in that only reads (``list.append(L,
        v)``), put in a container or an attribute, its ``.append`` taken as a value."""
        reading = {"len", "sum", "list", "tuple", "sorted", "reversed", "enumerate", "zip", "min", "max", "any",
                   "all", "iter", "set", "frozenset", "print", "isinstance", "bool", "repr", "str", "map"}
        found = set()
        for node in walked(tree):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                continue
            scope = self.r.scope_of.get(id(node), self.r.module)
            if not self._local(node, scope):
                continue
            parent = self.parents.get(id(node))
            grand = self.parents.get(id(parent))
            if isinstance(parent, ast.Call) and node is not parent.func:
                callee = self._builtin(parent.func, scope)
                paths = self.r.carried(parent.func, scope).paths
                escapes = callee not in reading and not (paths and all(p.split(".")[0] == "numpy" for p in paths))
            elif isinstance(parent, ast.Attribute):
                escapes = parent.attr in _APPENDS and not (isinstance(grand, ast.Call) and grand.func is parent)
            else:
                escapes = isinstance(parent, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred, ast.keyword)) or (
                    isinstance(parent, ast.Assign) and not all(isinstance(t, ast.Name) for t in parent.targets))
            if escapes:
                found.add((id(self.r.lookup(node.id, scope)), node.id))
        return found

    def _local(self, node: ast.AST, scope: _Scope) -> bool:
        """Is ``node`` a name the code binds itself to a value (a list of its own, say), not an import?"""
        if not isinstance(node, ast.Name):
            return False
        where = self.r.lookup(node.id, self.r.scope_of.get(id(node), scope))
        return where is not None and all(b[0] not in ("import", "def", "class") for b in where.bindings[node.id])

    def _builtin(self, callee: ast.AST, scope: _Scope) -> str | None:
        """``callee``'s name when it is Python's built-in of that name (not rebound by the code or the set-up)."""
        if isinstance(callee, ast.Name) and self.r.lookup(callee.id, scope) is None and callee.id not in self.r.setup:
            return callee.id
        return None

    # --- what a loop nest computes (lesson 2: the window values, not a copy of a whole-array result) -------
    def _nest_lines(self, frame: dict) -> tuple[int, int]:
        """The lines of the outermost loop over the data around here in this call (a helper called inside
        a nest: its whole def)."""
        node = frame["nest"][0] if frame["nest"] else frame["function"]
        return node.lineno, node.end_lineno

    def _in_nest(self, name: str, scope: _Scope, frame: dict) -> bool:
        """Is ``name`` bound inside the nest (its loop targets, what the nest assigns, a helper's arguments)?"""
        where = self.r.lookup(name, scope)
        if where is None:
            return False
        lo, hi = self._nest_lines(frame)
        entry = frame["function"] is self.entry_def
        return any((kind in ("for", "assign") and lo <= line <= hi) or (kind == "param" and not entry)
                   for kind, _, _, line in where.bindings.get(name, []))

    def _window(self, node: ast.AST, scope: _Scope, frame: dict) -> bool:
        """A subscript of a 4-D array (four positions, or ``...`` first) whose last two positions each read a
        name bound in the nest: ``out[b, c, i, j]``, ``x[:, :, r0:r1, c0:c1]``, ``a[..., i:i + kh, j]``."""
        positions = []
        while isinstance(node, ast.Subscript):
            part = node.slice
            positions = (list(part.elts) if isinstance(part, ast.Tuple) else [part]) + positions
            node = node.value
        if len(positions) < 4 and not (positions and isinstance(positions[0], ast.Constant)
                                       and positions[0].value is Ellipsis and len(positions) >= 3):
            return False
        return all(any(isinstance(n, ast.Name) and self._in_nest(n.id, self.r.scope_of.get(id(n), scope), frame)
                       for n in ast.walk(p)) for p in positions[-2:])

    def _computes(self, value: ast.AST, scope: _Scope, frame: dict, accumulates: bool) -> bool:
        """Does the nest compute ``value`` (what it writes) itself: from the data it indexes inside the nest (a
        sum or mean of a window, ``+=`` of grad_out into grad_x, or an item: a wrong value is the value tests'
        to judge), with no whole-array result on the way?"""
        reads, whole, reduced = self._work(value, scope, frame, frozenset())
        return not whole and (reduced or reads)

    def _work(self, node: ast.AST, scope: _Scope, frame: dict, seen: frozenset) -> tuple[bool, bool, bool]:
        """``(reads, whole, reduced)`` of an expression: it reads the data; a whole-array computation feeds it
        (a library call on the data other than a copy or an element-wise one, or a sum made outside the nest);
        a window of the data is summed in the nest. Each answer once per reading, keyed by all it depends on
        (the node, the scope, the outermost loop of the nest, the def, what its call passed, ``seen``): a name read
        twice in an expression is not read through its bindings twice."""
        nest = frame["nest"][0] if frame["nest"] else None
        key = (id(node), id(scope), id(nest), id(frame["function"]), frozenset(frame.get("passed", {}).items()), seen)
        if key not in self._worked:
            self._worked[key] = self._work_of(node, scope, frame, seen)
        return self._worked[key]

    def _work_of(self, node: ast.AST, scope: _Scope, frame: dict, seen: frozenset) -> tuple[bool, bool, bool]:
        scope = self.r.scope_of.get(id(node), scope)

        def union(parts) -> tuple[bool, bool, bool]:
            found = [self._work(p, scope, frame, seen) for p in parts]
            return tuple(any(f[k] for f in found) for k in range(3))

        if isinstance(node, ast.Constant):
            return False, False, False
        if isinstance(node, ast.Name):
            where = self.r.lookup(node.id, scope)
            if where is None or (id(where), node.id) in seen:
                return False, False, False
            seen = seen | {(id(where), node.id)}
            lo, hi = self._nest_lines(frame)
            result = [False, False, False]
            for kind, detail, value_scope, line in where.bindings.get(node.id, []):
                if kind == "param":  # what the call passed; the entry's data (not its geometry); else data
                    passed = frame.get("passed", {}).get((id(where), node.id))
                    if passed is not None:
                        result = [a or b for a, b in zip(result, passed)]
                    elif where is not self._inner(self.entry_def) or \
                            self.roles.get(node.id) not in GEOMETRY + tuple(SHAPE_ARGUMENTS):
                        result[0] = True
                    continue
                if kind in ("def", "class", "import"):
                    continue  # code, not data
                if kind not in ("for", "assign") or detail is None:
                    self.unsure = True  # (no proof either way: check_output_loops sends such a copy to review)
                    return True, True, False  # (a binding the rule does not read: not the nest's own work)
                reads, whole, reduced = self._work(detail, value_scope, frame, seen)
                accumulated = kind == "assign" and (isinstance(self.parents.get(id(detail)), ast.AugAssign) or (
                    isinstance(detail, ast.BinOp) and any(isinstance(o, ast.Name) and o.id == node.id
                                                          for o in (detail.left, detail.right))))  # acc = acc + ...
                if lo <= line <= hi:
                    reduced = reduced or (accumulated and reads and not whole)
                else:
                    whole, reduced = whole or reduced or (accumulated and reads), False
                result = [result[0] or reads, result[1] or whole, result[2] or reduced]
            return tuple(result)
        if isinstance(node, ast.Attribute):
            if node.attr in ("shape", "dtype", "ndim", "size", "itemsize", "strides"):
                return False, False, False
            return self._work(node.value, scope, frame, seen)
        if isinstance(node, ast.Call):
            callee = node.func
            arguments = list(node.args) + [k.value for k in node.keywords]
            functions = self._callable(callee, scope) or self._static_method(callee, scope)
            if functions:
                found = []
                for function in functions:
                    if ("def", id(function)) in seen:
                        continue
                    a = function.args
                    positional = [p.arg for p in a.posonlyargs + a.args]
                    given = dict(zip(positional, node.args)) | {k.arg: k.value for k in node.keywords if k.arg}
                    if any(isinstance(x, ast.Starred) for x in node.args) or any(k.arg is None for k in node.keywords):
                        found.append(union(arguments))
                    where = id(self._inner(function))
                    passed = {(where, name): self._work(x, scope, frame, seen) for name, x in given.items()}
                    inner = {**frame, "function": function, "nest": [], "passed": passed}
                    found += [self._work(r.value, self._inner(function), inner, seen | {("def", id(function))})
                              for r in self._returns(function) if r.value is not None]
                return tuple(any(f[k] for f in found) for k in range(3))
            method = isinstance(callee, ast.Attribute) and not self.r.carried(callee, scope).paths
            paths = self.r.carried(callee, scope).paths if not method else frozenset()
            names = {callee.attr} if method else {p.split(".")[-1] for p in paths} | (
                {callee.id} if isinstance(callee, ast.Name) and self._builtin(callee, scope) else set())
            operand = callee.value if method else node.args[0] if node.args else None
            reads, whole, reduced = union(arguments + ([callee.value] if method else []))
            while isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute) and \
                    operand.func.attr in ELEMENT_WISE:  # x[b, c, r0:r1, c0:c1].astype(np.float64).sum()
                operand = operand.func.value
            if names and names <= WINDOW_SUMS and operand is not None:
                windowed = self._window(operand, scope, frame) or isinstance(
                    operand, (ast.GeneratorExp, ast.ListComp)) or (isinstance(operand, ast.Name) and self._in_nest(
                        operand.id, scope, frame))
                return reads, whole or (reads and not windowed), reduced or (reads and windowed)
            if names and names <= ELEMENT_WISE:
                return reads, whole, reduced
            return reads, whole or reads, reduced
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):  # band matrices: whole-array sums
            reads, whole, reduced = union([node.left, node.right])
            return reads, whole or reads, reduced
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return union([node.elt] + [g.iter for g in node.generators] + [c for g in node.generators for c in g.ifs])
        return union(list(ast.iter_child_nodes(node)))

    def _static_method(self, callee: ast.AST, scope: _Scope) -> list | None:
        """``Tools.pair`` where ``Tools`` is a class of the code's own and ``pair`` a ``@staticmethod`` of it."""
        if not (isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name)):
            return None
        where = self.r.lookup(callee.value.id, scope)
        bindings = where.bindings.get(callee.value.id, []) if where is not None else []
        if len(bindings) != 1 or bindings[0][0] != "class":
            return None
        found = [n for n in bindings[0][1].body if isinstance(n, ast.FunctionDef) and n.name == callee.attr
                 and any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in n.decorator_list)]
        return found or None

    def _conversion_map(self, node: ast.AST, scope: _Scope) -> bool:
        """``map(int, items)``: Python's ``map`` of a built-in conversion (:data:`MAP_CONVERSIONS`) over iterables."""
        if not (isinstance(node, ast.Call) and self._builtin(node.func, scope) == "map" and len(node.args) >= 2
                and not node.keywords and not any(isinstance(x, ast.Starred) for x in node.args)):
            return False
        function = node.args[0]
        if self._builtin(function, scope) in MAP_CONVERSIONS:
            return True
        paths = self.r.carried(function, scope).paths if not isinstance(function, ast.Name) or \
            self.r.lookup(function.id, scope) is not None else frozenset()
        return bool(paths) and paths <= MAP_CONVERSIONS

    def _returns(self, function: ast.AST) -> list:
        if isinstance(function, ast.Lambda):
            return [ast.Return(function.body)]
        if id(function) not in self._returned:
            self._returned[id(function)] = [n for n in self._own_nodes(function.body) if isinstance(n, ast.Return)]
        return self._returned[id(function)]

    @staticmethod
    def _own_nodes(body: list):
        """Every node of ``body`` outside the functions and classes it defines."""
        stack = list(reversed(body))
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(reversed(list(ast.iter_child_nodes(node))))

    # --- walking the code, with how often each part runs -----------------------------------------------
    def _invoke(self, function: ast.AST, ctx: dict, turns: int, data: int) -> int:
        """Walk one call of ``function``; the items it (and what it called) appended to lists."""
        self.reached.add(id(function))
        self.stack.append(id(function))
        frame = {"appended": 0, "iterated": False, "measured": False, "turns": turns, "unbounded": set(),
                 "scope": self._inner(function), "function": function, "nest": []}
        body = function.body if isinstance(function.body, list) else [function.body]
        for statement in body:
            self._walk(statement, ctx, turns, data, frame)
        self.stack.pop()
        done = self.finished.setdefault(id(function), {"appended": 0, "unbounded": set(), "scope": frame["scope"]})
        done["appended"] = max(done["appended"], frame["appended"])
        done["unbounded"] |= frame["unbounded"]
        return frame["appended"]

    def _loop(self, node: ast.AST, size: int | None, turns: int, data: int, text: str) -> tuple[int, int]:
        """The turns and data depth inside a loop of ``size`` turns, entered ``turns`` times."""
        if size is None:
            self._problem(node, f"`{text}` turns as often as the data is long (the rule cannot trace its length "
                          f"to kernel_size, stride or padding)")
            return turns, data + 1
        if turns * size > LOOP_LIMIT:
            self._problem(node, f"`{text}` and the loops around it turn up to {turns * size} times for a "
                          f"{GEOMETRY_BOUND}×{GEOMETRY_BOUND} kernel, more than the {LOOP_LIMIT} a loop over the "
                          f"kernel's offsets needs")
        return turns * max(size, 1), data

    def _walk(self, node: ast.AST, ctx: dict, turns: int, data: int, frame: dict) -> None:
        self.visits += 1
        if self.visits > 200_000:
            self._problem(node, "the code calls its helpers too often for the rule to follow")
            return
        scope = self.r.scope_of.get(id(node), self.r.module)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):  # the body runs when called;
            arguments = node.args  # defaults and decorators run here
            for part in node.decorator_list if not isinstance(node, ast.Lambda) else []:
                self._walk(part, ctx, turns, data, frame)
            for part in arguments.defaults + [d for d in arguments.kw_defaults if d is not None]:
                self._walk(part, ctx, turns, data, frame)
            if not isinstance(node, ast.Lambda):
                return
        if isinstance(node, ast.ClassDef):  # a class body runs here, its methods when called
            for part in node.decorator_list + node.bases + [k.value for k in node.keywords] + node.body:
                self._walk(part, ctx, turns, data, frame)
            return
        if isinstance(node, ast.Lambda):
            parent = self.parents.get(id(node))
            if not (isinstance(parent, ast.Assign) and all(isinstance(t, ast.Name) for t in parent.targets)) and \
                    any(isinstance(n, (ast.comprehension, ast.Call)) for n in ast.walk(node.body)):
                self._problem(node, "a lambda that loops or calls is passed as a value, so the rule cannot count "
                              "how often it runs")
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self._walk(node.iter, ctx, turns, data, frame)
            size = self._measured(node.iter, ctx, scope, frame)
            inner_turns, inner_data = self._loop(node, size, turns, data, f"for {ast.unparse(node.target)} in "
                                                 f"{ast.unparse(node.iter)}")
            frame["nest"].append(node) if size is None else None
            for statement in node.body:
                self._walk(statement, ctx, inner_turns, inner_data, frame)
            frame["nest"].pop() if size is None else None
            for statement in node.orelse:
                self._walk(statement, ctx, turns, data, frame)
            return
        if isinstance(node, ast.While):
            self._problem(node, f"`while {ast.unparse(node.test)}` turns a number of times that the source does not "
                          f"say")
            for child in [node.test] + node.body + node.orelse:
                self._walk(child, ctx, turns, data + 1, frame)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            parent = self.parents.get(id(node))
            unpacked = (isinstance(node, ast.GeneratorExp) and len(node.generators) == 1 and not node.generators[0].ifs
                        and isinstance(parent, ast.Assign) and len(parent.targets) == 1
                        and isinstance(parent.targets[0], ast.Tuple)
                        and not any(isinstance(e, ast.Starred) for e in parent.targets[0].elts))
            inner_turns, inner_data = turns, data
            for generator in node.generators:
                self._walk(generator.iter, ctx, inner_turns, inner_data, frame)
                size = len(parent.targets[0].elts) + 1 if unpacked else \
                    self._measured(generator.iter, ctx, self.r.scope_of.get(id(generator.iter), scope), frame)
                inner_turns, inner_data = self._loop(generator.iter, size, inner_turns, inner_data,
                                                     f"for {ast.unparse(generator.target)} in "
                                                     f"{ast.unparse(generator.iter)}")
                for condition in generator.ifs:
                    self._walk(condition, ctx, inner_turns, inner_data, frame)
            if inner_data > data:
                frame["nest"].append(node)
            self.write_depth = max(self.write_depth, inner_data)
            if all(self._computes(part, self.r.scope_of.get(id(part), scope), frame, False)
                   for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt])):
                self.data_depth = max(self.data_depth, inner_data)
            if inner_data > data:
                frame["nest"].pop()
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self._walk(part, ctx, inner_turns, inner_data, frame)
            return
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Subscript) for t in targets):
                self.write_depth = max(self.write_depth, data)
            if any(isinstance(t, ast.Subscript) for t in targets) and all(
                    self._window(t, scope, frame) for t in targets if isinstance(t, ast.Subscript)) and \
                    self._computes(node.value, scope, frame, isinstance(node, ast.AugAssign)):
                self.data_depth = max(self.data_depth, data)
            elif any(isinstance(t, ast.Subscript) for t in targets) and data >= 2:
                self.copies.append(node)  # a write in a nest of what the nest did not compute
            if isinstance(node, ast.AugAssign) and self._list_growth(node):
                size = self.length(node.value, ctx, scope, frame=frame) if isinstance(node.op, ast.Add) else None
                self._grows(node, node.target, size, turns, frame)
                frame["measured"] = False
        if isinstance(node, ast.Call):
            self._call(node, ctx, turns, data, frame, scope)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and self._callable(node, scope):
            self._problem(node, f"`{node.id}` is passed as a value, so the rule cannot count how often it runs: "
                          f"call your helpers by name")
        for child in ast.iter_child_nodes(node):
            self._walk(child, ctx, turns, data, frame)

    @staticmethod
    def _list_growth(node: ast.AugAssign) -> bool:
        """``taps += [t]``, ``taps += full[2:]``: a list that grows (``out += tap`` adds arrays, and the rule
        does not read ``out`` as a list at all)."""
        return isinstance(node.target, ast.Name) and isinstance(node.op, (ast.Add, ast.Mult)) and isinstance(
            node.value, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)) or (
            isinstance(node.value, ast.Subscript) and isinstance(node.value.slice, ast.Slice))

    def _measured(self, node: ast.AST, ctx: dict, scope: _Scope, frame: dict) -> int | None:
        """The length of what a loop iterates; a loop over a list of the function's own freezes its lists."""
        frame["measured"] = False
        size = self.length(node, ctx, scope, frame=frame)
        frame["iterated"] = frame["iterated"] or frame["measured"]
        return size

    def _grows(self, node: ast.AST, receiver: ast.AST, size: int | None, turns: int, frame: dict) -> None:
        """A list ``receiver`` grows by ``size`` items each time ``node`` runs (``turns`` times in all)."""
        if frame["iterated"]:
            self._problem(node, "a list grows after a loop over a list: build every list first, then loop")
        if size is None and isinstance(receiver, ast.Name):
            scope = self.r.scope_of.get(id(receiver), self.r.module)
            frame["unbounded"].add((id(self.r.lookup(receiver.id, scope)), receiver.id))
        elif size is not None:
            frame["appended"] += size * (turns // max(frame["turns"], 1))

    def _call(self, node: ast.Call, ctx: dict, turns: int, data: int, frame: dict, scope: _Scope) -> None:
        callee = node.func
        paths = self.r.carried(callee, scope).paths if not isinstance(callee, ast.Name) or \
            self.r.lookup(callee.id, scope) is None else frozenset()
        last = {p.split(".")[-1] for p in paths} | ({callee.id} if self._builtin(callee, scope) else set())
        per_element = last & PER_ELEMENT_CALLS
        if self._conversion_map(node, scope):
            per_element = set()
            sizes = [self._measured(x, ctx, scope, frame) for x in node.args[1:]]
            if all(size is None for size in sizes):
                self._loop(node, None, turns, data, ast.unparse(node))
        if per_element == {"ndindex"} and self.length(node, ctx, scope) is not None:
            per_element = set()  # np.ndindex(kh, kw): a loop of a counted length (the loop that iterates it counts it)
        if per_element:
            self._problem(node, f"`{ast.unparse(callee)}` runs Python once per item, a loop the rule cannot "
                          f"count")
        name = self._builtin(callee, scope)
        if name in CONSUMERS and node.args and not (name in ("min", "max") and len(node.args) > 1) and \
                not isinstance(node.args[0], (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            size = self._measured(node.args[0], ctx, scope, frame)
            if size is None:
                self._loop(node, None, turns, data, f"{name}({ast.unparse(node.args[0])})")
        if isinstance(callee, ast.Attribute) and callee.attr in _APPENDS and self._local(callee.value, scope):
            size = _APPENDS[callee.attr]
            if size is None:
                size = self.length(node.args[0], ctx, scope) if node.args else None
            self._grows(node, callee.value, size, turns, frame)
        functions = self._callable(callee, scope)
        if isinstance(callee, ast.Name) and callee.id in self.given and self.r.lookup(callee.id, scope) is self.r.module:
            functions = [None]  # the course's own at grading: not walked
        if functions == [None]:
            pass
        elif not functions and isinstance(callee, ast.Name) and self.r.lookup(callee.id, scope) is not None and \
                self.r.carried(callee, scope).holds and not self.r.carried(callee, scope).paths:
            self._problem(node, f"`{callee.id}(...)` calls a value the rule cannot trace to one of your defs, so it "
                          f"cannot count how often that runs: call your helpers by their own name")
        elif functions:
            for function in functions:
                if id(function) in self.stack:
                    self._problem(node, f"`{ast.unparse(callee)}` calls itself (recursion), so the rule cannot count "
                                  f"how often it runs")
                    continue
                appended = self._invoke(function, self._call_context(function, node, ctx, scope), turns, data)
                if appended and frame["iterated"]:
                    self._problem(node, "a list grows after a loop over a list: build every list first, then loop")
                frame["appended"] += appended
        else:
            self._walk(callee, ctx, turns, data, frame)
        for argument in node.args + [k.value for k in node.keywords]:
            self._walk(argument, ctx, turns, data, frame)
