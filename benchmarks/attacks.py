"""A generator of bypasses, and of honest programs, for the lessons' source rules: ``python -m benchmarks.attacks
[--lesson L] [--limit N] [--seed S] [--depth D]`` (``make attacks``: a seeded 3000 of the about 64 000 programs
up to depth 3 per lesson and target, about an hour on two cores; ``--limit 0`` every one).

For each lesson and forbidden *target* (library pooling, convolution, layers, the reference solution, the
course's helpers: :data:`TARGETS`) it composes programs that reach the target from :data:`PRIMITIVES` (ways to
reach a module, ways to read an attribute, ways to carry a value: look-ups from strings, modules that
re-export ``sys``/``importlib``/``builtins``/the target's module, ``functools.partial``/``reduce``/
``singledispatch``, lambdas, default arguments, closures, ``nonlocal``, class attributes, properties,
descriptors, metaclasses, ``__init_subclass__``, decorators, dataclass defaults, containers, iterators,
generators, ``match``, ``globals()``, library functions that return functions, aliases in another cell),
up to ``--depth`` primitives in a row. Each program is first **run outside the grader**: it is kept only
when the value it computes *is* the target (``confirmed``); then the lesson's rule (its ``check_avoids``
with the lesson's list, as its test cells call it, on the source the grader would hand it) must refuse it.

The honest generator takes the lesson's reference solution cells and rewrites them the ways students do
(locals and helpers renamed, helpers moved to a class of one's own or to another cell under an alias,
loops as comprehensions where the lesson allows), runs each against the course's reference outside the
grader (kept when equal), and every one must pass every rule of the lesson (its ``check_avoids`` and loop
rules).

Prints per lesson and target: generated, confirmed, refused, and per lesson honest generated / passed; each
confirmed program that was not refused is printed whole. Exit status 1 when one was not refused or an honest
program failed.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib.util
import itertools
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: (label, module, attribute) per lesson: what its rule must keep the code from reaching.
TARGETS = {
    "lesson2_loops": [("library pooling", "torch.nn.functional", "avg_pool2d"),
                      ("convolution", "scipy.ndimage", "uniform_filter"),
                      ("layers", "torch.nn", "AvgPool2d"),
                      ("the reference", "course.reference", "avg_pool2d_reference"),
                      ("course helpers", "course.network", "avg_pool")],
    "lesson3_numpy": [("library pooling", "torch.nn.functional", "avg_pool2d"),
                      ("convolution", "scipy.ndimage", "uniform_filter"),
                      ("layers", "torch.nn", "AvgPool2d"),
                      ("the reference", "course.reference", "avg_pool2d_reference"),
                      ("course helpers", "course.network", "avg_pool")],
    "lesson4_torch": [("library pooling", "torch.nn.functional", "avg_pool2d"),
                      ("convolution", "torch.nn.functional", "conv2d"),
                      ("layers", "torch.nn", "AvgPool2d"),
                      ("unlisted layer", "torch.ao.quantization", "QuantStub"),
                      ("the reference", "course.reference", "avg_pool2d_reference"),
                      ("course helpers", "course.network", "build")],
    "lesson5_gap": [("layers", "torch.nn", "Linear"),
                    ("unlisted layer", "torch.ao.quantization", "QuantStub"),
                    ("re-exported F", "torch.functional", "F"),
                    ("course helpers", "course.network", "parameter_total")],
}
#: The function each lesson's attack defines (one its tests check with check_avoids), and how it uses the value.
ENTRY = {
    "lesson2_loops": ("def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
                      "    f = {expr}\n    return f(x, kernel_size)\n", "avg_pool2d_loops"),
    "lesson3_numpy": ("def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
                      "    f = {expr}\n    return f(x, kernel_size)\n", "avg_pool2d_numpy"),
    "lesson4_torch": ("def avg_pool2d_half(x, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
                      "    f = {expr}\n    return f(x, kernel_size)\n", "avg_pool2d_half"),
    "lesson5_gap": ("def head_parameters(channels, height, width, num_classes):\n"
                    "    f = {expr}\n    return f(channels, num_classes)\n", "head_parameters"),
}


@dataclass
class State:
    """A program under construction: top-level code, and an expression for the value (``parent``/``attr``:
    the module expression and attribute name while the value is still read as ``parent.attr``)."""
    module: str
    attr: str
    parent: str
    prelude: list = field(default_factory=list)
    expr: str = ""
    steps: tuple = ()

    def value(self) -> str:
        return self.expr or f"{self.parent}.{self.attr}"


def _uid(state: State) -> str:
    return f"_{len(state.steps)}{len(state.prelude)}"


def _with(state: State, name: str, *, parent: str | None = None, expr: str | None = None, prelude=()) -> State:
    return State(state.module, state.attr, parent if parent is not None else state.parent,
                 state.prelude + list(prelude), expr if expr is not None else state.expr, state.steps + (name,))


# --- how the module is reached (only while the value is still ``module.attr``) --------------------------------
def _module_step(build):
    def step(state: State, rng: random.Random):
        if state.expr:
            return None
        found = build(state, rng)
        if found is None:
            return None
        parent, prelude = found
        return _with(state, step.__name__, parent=parent, prelude=prelude)
    return step


@functools.lru_cache(maxsize=None)
def _reexports(module: str) -> tuple:
    """``(importable module, attribute)`` pairs whose value is the module ``module`` (typing.sys is sys)."""
    import importlib

    target = importlib.import_module(module)
    found = []
    for name, other in sorted(sys.modules.items()):
        if other is None or name.startswith(("__", "_pytest", "pytest")) or other is target:
            continue
        try:
            attributes = sorted(vars(other).items())
        except TypeError:
            continue
        found += [(name, a) for a, v in attributes if v is target and not a.startswith("__")]
    return tuple(found[:200])


@functools.lru_cache(maxsize=None)
def _object_reexports(module: str, attr: str) -> tuple:
    """``(module, name)`` pairs other than ``(module, attr)`` whose attribute is the same object."""
    import importlib

    target = getattr(importlib.import_module(module), attr)
    found = []
    for name, other in sorted(sys.modules.items()):
        if other is None or name.startswith(("__", "_pytest", "pytest", "benchmarks", "tests")):
            continue
        try:
            attributes = sorted(vars(other).items())
        except TypeError:
            continue
        found += [(name, a) for a, v in attributes if v is target and (name, a) != (module, attr)]
    return tuple(found[:200])


PRIMITIVES: dict = {}


def primitive(kind: str):
    def register(step):
        PRIMITIVES[step.__name__] = (kind, step)
        return step
    return register


for _name, _build in {
    "module_import_as": lambda s, r: ("_m", [f"import {s.module} as _m"]),
    "module_from_import": lambda s, r: ("_m", [f"from {s.module.rpartition('.')[0]} import "
                                               f"{s.module.rpartition('.')[2]} as _m"]) if "." in s.module else None,
    "module_importlib": lambda s, r: (f"importlib.import_module({s.module!r})", ["import importlib"]),
    "module_dunder_import": lambda s, r: (f"__import__({s.module!r}, fromlist=['_'])", []),
    "module_builtins_import": lambda s, r: (f"builtins.__import__({s.module!r}, fromlist=['_'])",
                                            ["import builtins"]),
    "module_sys_modules": lambda s, r: (f"sys.modules[{s.module!r}]", ["import sys", f"import {s.module}"]),
    "module_sys_via_typing": lambda s, r: (f"typing.sys.modules[{s.module!r}]", ["import typing", f"import {s.module}"]),
    "module_importlib_via_reexport": lambda s, r: (
        f"_ri.import_module({s.module!r})", ["import " + r.choice(_reexports("importlib"))[0],
                                            "_ri = " + ".".join(r.choice(_reexports("importlib")))])
    if _reexports("importlib") else None,
    "module_reexported": lambda s, r: (lambda pair: (f"_rm.{pair[1]}", [f"import {pair[0]} as _rm"]))(
        r.choice(_reexports(s.module))) if _reexports(s.module) else None,
    "module_through_a_library_call": lambda s, r: (f"copy.copy({s.module})", ["import copy", f"import {s.module}"]),
    "module_through_own_function": lambda s, r: ("_om()", [f"import {s.module}", f"def _om():\n    return {s.module}"]),
    "module_string_split": lambda s, r: (f"sys.modules['.'.join({s.module.split('.')!r})]",
                                         ["import sys", f"import {s.module}"]),
}.items():
    _step = _module_step(_build)
    _step.__name__ = _name
    primitive("module")(_step)


# --- how the attribute is read (while the value is still ``parent.attr``): the value becomes opaque --------
def _attribute_step(build):
    def step(state: State, rng: random.Random):
        if state.expr:
            return None
        found = build(state, rng)
        if found is None:
            return None
        expr, prelude = found
        return _with(state, step.__name__, expr=expr, prelude=prelude)
    return step


def _imported(state: State) -> list:
    return [] if state.parent != state.module else [f"import {state.module}"]


for _name, _build in {
    "attr_plain": lambda s, r: (f"{s.parent}.{s.attr}", _imported(s)),
    "attr_getattr": lambda s, r: (f"getattr({s.parent}, {s.attr!r})", _imported(s)),
    "attr_getattr_joined": lambda s, r: (f"getattr({s.parent}, {s.attr[:3]!r} + {s.attr[3:]!r})", _imported(s)),
    "attr_vars": lambda s, r: (f"vars({s.parent})[{s.attr!r}]", _imported(s)),
    "attr_dict": lambda s, r: (f"{s.parent}.__dict__[{s.attr!r}]", _imported(s)),
    "attr_attrgetter": lambda s, r: (f"operator.attrgetter({s.attr!r})({s.parent})", _imported(s) + ["import operator"]),
    "attr_reduce_getattr": lambda s, r: (f"functools.reduce(getattr, [{s.attr!r}], {s.parent})",
                                         _imported(s) + ["import functools"]),
    "attr_builtins_getattr": lambda s, r: (f"builtins.getattr({s.parent}, {s.attr!r})",
                                           _imported(s) + ["import builtins"]),
    "attr_pydoc_locate": lambda s, r: (f"pydoc.locate({s.module + '.' + s.attr!r})", ["import pydoc"]),
    "attr_resolve_name": lambda s, r: (f"pkgutil.resolve_name({s.module + ':' + s.attr!r})", ["import pkgutil"]),
    "attr_eval": lambda s, r: (f"eval({(s.parent + '.' + s.attr)!r})", _imported(s)),
    "attr_formatter": lambda s, r: (f"string.Formatter().get_field('0.{s.attr}', ({s.parent},), {{}})[0]",
                                    _imported(s) + ["import string"]),
    "attr_same_object_elsewhere": lambda s, r: (lambda pair: (f"_ro.{pair[1]}", [f"import {pair[0]} as _ro"]))(
        r.choice(_object_reexports(s.module, s.attr))) if _object_reexports(s.module, s.attr) else None,
    "attr_from_import_in_a_cell": lambda s, r: ("_fa", [f"from {s.module} import {s.attr} as _fa"]),
}.items():
    _step = _attribute_step(_build)
    _step.__name__ = _name
    primitive("attribute")(_step)


# --- how a value is carried (wraps the whole expression) ---------------------------------------------------
def _value_step(build):
    def step(state: State, rng: random.Random):
        base = state.value()
        uid = _uid(state)
        prelude = [] if state.expr else _imported(state)
        expr, more = build(base, uid)
        return _with(state, step.__name__, expr=expr, prelude=prelude + more)
    return step


for _name, _build in {
    "value_lambda": lambda e, u: (f"(lambda: {e})()", []),
    "value_default_argument": lambda e, u: (f"_g{u}()", [f"def _g{u}(h={e}):\n    return h"]),
    "value_closure": lambda e, u: (f"_o{u}()()", [f"def _o{u}():\n    v = {e}\n    def inner():\n        return v\n"
                                                   f"    return inner"]),
    "value_nonlocal": lambda e, u: (f"_n{u}()", [f"def _n{u}():\n    v = None\n    def put():\n        nonlocal v\n"
                                                 f"        v = {e}\n    put()\n    return v"]),
    "value_class_attribute": lambda e, u: (f"_K{u}.p", [f"class _K{u}:\n    p = staticmethod({e})"]),
    "value_property": lambda e, u: (f"_K{u}().p", [f"class _K{u}:\n    @property\n    def p(self):\n        return {e}"]),
    "value_descriptor": lambda e, u: (f"_K{u}.p", [f"class _D{u}:\n    def __get__(self, obj, owner):\n        return {e}",
                                                   f"class _K{u}:\n    p = _D{u}()"]),
    "value_metaclass": lambda e, u: (f"_K{u}.anything", [f"class _M{u}(type):\n    def __getattr__(cls, name):\n"
                                                         f"        return {e}", f"class _K{u}(metaclass=_M{u}):\n    pass"]),
    "value_init_subclass": lambda e, u: (f"_C{u}.p", [f"class _B{u}:\n    def __init_subclass__(cls, **kw):\n"
                                                      f"        cls.p = staticmethod({e})", f"class _C{u}(_B{u}):\n    pass"]),
    "value_decorator": lambda e, u: (f"_h{u}", [f"def _d{u}(f):\n    return {e}", f"@_d{u}\ndef _h{u}():\n    pass"]),
    "value_dataclass_default": lambda e, u: (f"_K{u}().p", ["import dataclasses", "import typing",
                                                            f"@dataclasses.dataclass\nclass _K{u}:\n"
                                                            f"    p: typing.Any = {e}"]),
    "value_list_item": lambda e, u: (f"[{e}][0]", []),
    "value_dict_item": lambda e, u: (f"{{'k': {e}}}['k']", []),
    "value_dict_get": lambda e, u: (f"{{'k': {e}}}.get('k')", []),
    "value_next_iter": lambda e, u: (f"next(iter([{e}]))", []),
    "value_generator_expression": lambda e, u: (f"next(v for v in [{e}])", []),
    "value_generator_function": lambda e, u: (f"next(_y{u}())", [f"def _y{u}():\n    yield {e}"]),
    "value_match": lambda e, u: (f"_m{u}()", [f"def _m{u}():\n    match [{e}]:\n        case [found]:\n"
                                              f"            return found"]),
    "value_globals": lambda e, u: (f"globals()['_v{u}']", [f"_v{u} = {e}"]),
    "value_alias_in_another_cell": lambda e, u: (f"_a{u}", [f"_a{u} = {e}"]),
    "value_partial": lambda e, u: (f"functools.partial({e}).func", ["import functools"]),
    "value_singledispatch": lambda e, u: (f"functools.singledispatch({e}).dispatch(object)", ["import functools"]),
    "value_reduce": lambda e, u: (f"functools.reduce(lambda a, b: b, [{e}])", ["import functools"]),
    "value_min": lambda e, u: (f"min([{e}], key=id)", []),
    "value_sorted": lambda e, u: (f"sorted([{e}], key=id)[0]", []),
    "value_namespace": lambda e, u: (f"types.SimpleNamespace(p={e}).p", ["import types"]),
    "value_itemgetter": lambda e, u: (f"operator.itemgetter(0)([{e}])", ["import operator"]),
    "value_walrus": lambda e, u: (f"[(w := {e}), w][1]", []),
    "value_except": lambda e, u: (f"_t{u}()", [f"def _t{u}():\n    try:\n        raise ValueError({e})\n"
                                               f"    except ValueError as err:\n        return err.args[0]"]),
    "value_own_function_returns": lambda e, u: (f"_r{u}()", [f"def _r{u}():\n    return {e}"]),
    "value_call_of_a_call": lambda e, u: (f"_c{u}()()", [f"def _c{u}():\n    return lambda: {e}"]),
    "value_max": lambda e, u: (f"max([{e}], key=id)", []),
    "value_next_default": lambda e, u: (f"next(iter(()), {e})", []),
    "value_dict_pop": lambda e, u: (f"{{'k': {e}}}.pop('k')", []),
    "value_list_pop": lambda e, u: (f"[{e}].pop()", []),
    "value_getattr_default": lambda e, u: (f"getattr(0, 'missing', {e})", []),
    "value_copy": lambda e, u: (f"copy.copy({e})", ["import copy"]),
    "value_setattr_on_own_class": lambda e, u: (f"_S{u}.p", [f"class _S{u}:\n    pass", f"_S{u}.p = {e}"]),
    "value_own_function_of_that_name": lambda e, u: (
        f"_N{u}.{e.rsplit('.', 1)[-1] if e.rsplit('.', 1)[-1].isidentifier() else 'p'}",
        [f"def {e.rsplit('.', 1)[-1] if e.rsplit('.', 1)[-1].isidentifier() else 'p'}(*a):\n    return a",
         f"_N{u} = types.SimpleNamespace({e.rsplit('.', 1)[-1] if e.rsplit('.', 1)[-1].isidentifier() else 'p'}={e})",
         "import types"]),
}.items():
    _step = _value_step(_build)
    _step.__name__ = _name
    primitive("value")(_step)


# --- programs ------------------------------------------------------------------------------------------------
def _program(lesson: str, state: State) -> str:
    template, _ = ENTRY[lesson]
    seen, lines = set(), []
    for part in state.prelude:  # imports first, each once; then the rest in order
        if part.startswith(("import ", "from ")) and part not in seen:
            seen.add(part)
            lines.append(part)
    lines += [p for p in state.prelude if not p.startswith(("import ", "from "))]
    return "\n".join(lines) + "\n\n\n" + template.format(expr=state.value())


def sequences(depth: int):
    """Every order of primitives up to ``depth``: at most one module step, then at most one attribute step,
    then value steps (a value step on a plain ``module.attr`` reads it plainly first)."""
    modules = [n for n, (k, _) in PRIMITIVES.items() if k == "module"]
    attributes = [n for n, (k, _) in PRIMITIVES.items() if k == "attribute"]
    values = [n for n, (k, _) in PRIMITIVES.items() if k == "value"]
    for m in [None] + modules:
        for a in [None] + attributes:
            head = [s for s in (m, a) if s]
            for n in range(0, depth - len(head) + 1):
                if not head and n == 0:
                    continue
                for tail in itertools.product(values, repeat=n):
                    yield tuple(head) + tail


def attacks(lesson: str, module: str, attr: str, depth: int, limit: int | None, seed: int) -> list[tuple]:
    """``[(steps, program, the expression for the value)]``: a seeded sample of ``limit`` sequences (all when None) built for the target."""
    every = list(sequences(depth))
    rng = random.Random(f"{seed}-{lesson}-{module}-{attr}")
    chosen = every if limit is None or limit >= len(every) else rng.sample(every, limit)
    found = []
    for steps in chosen:
        state = State(module, attr, module)
        for name in steps:
            state = PRIMITIVES[name][1](state, rng)
            if state is None:
                break
        if state is not None:
            found.append((steps, _program(lesson, state), state.value()))
    return found


@functools.lru_cache(maxsize=None)
def lesson_rules(lesson: str):
    """``(namespace, [(checked name, forbidden, options)], [(loop rule, checked name)])`` as the lesson's tests
    call them, with the parent's set-up namespace (what the grader gives the rules)."""
    from autograder.grading.lesson import _code_of, load_lesson
    from autograder.grading.verdicts import parent_namespace

    loaded = load_lesson(lesson, REPO)
    namespace = parent_namespace(loaded)
    avoids, loops = [], []
    for test in loaded.tests:
        for node in ast.walk(ast.parse(_code_of(test.source))):
            name = getattr(node.func, "id", None) if isinstance(node, ast.Call) else None
            if name == "check_avoids":
                target = ast.unparse(node.args[0])
                forbidden = tuple(eval(ast.unparse(node.args[1]), dict(namespace)))
                options = tuple((k.arg, eval(ast.unparse(k.value), dict(namespace))) for k in node.keywords)
                if (target, forbidden, options) not in avoids:
                    avoids.append((target, forbidden, options))
            elif name in ("check_kernel_loops", "check_output_loops"):
                if (name, ast.unparse(node.args[0])) not in loops:
                    loops.append((name, ast.unparse(node.args[0])))
    return namespace, avoids, loops


class _Graded:
    """A grader stand-in: the source the grader hands a rule, and the set-up's namespace."""

    def __init__(self, text, namespace):
        self.__student_source__ = text
        self.__trusted_globals__ = namespace


def refused(lesson: str, program: str) -> str | None:
    """The refusal of the lesson's rule for its attacked function in ``program``, or None (it passed)."""
    from autograder.grading.lesson import definition_source
    from course.checks import check_avoids

    namespace, avoids, _ = lesson_rules(lesson)
    entry = ENTRY[lesson][1]
    for target, forbidden, options in avoids:
        if target.split(".")[0] != entry:
            continue
        source = definition_source([program], entry) or program
        try:
            check_avoids(_Graded(source, namespace), list(forbidden), target, **dict(options))
        except AssertionError as refusal:
            return str(refusal)
    return None


def confirmed(lesson: str, module: str, attr: str, program: str, expr: str) -> bool:
    """Run outside the grader: does the program's value *be* the target?"""
    import importlib
    import io
    import contextlib

    namespace, _, _ = lesson_rules(lesson)
    target = getattr(importlib.import_module(module), attr)
    scope = dict(namespace)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(program + f"\n\ndef __probe__():\n    return {expr}\n", "<attack>", "exec"), scope)
            return scope["__probe__"]() is target
    except Exception:
        return False


def run_attacks(lesson: str, depth: int = 3, limit: int | None = None, seed: int = 0) -> dict:
    """{target label: {"generated", "confirmed", "refused", "passed": [programs confirmed and not refused]}}."""
    result = {}
    for label, module, attr in TARGETS[lesson]:
        row = {"generated": 0, "confirmed": 0, "refused": 0, "passed": [], "module": f"{module}.{attr}"}
        if importlib.util.find_spec(module.split(".")[0]) is None:
            row["missing"] = True  # not installed here: nothing can reach it
            result[label] = row
            continue
        for steps, program, expr in attacks(lesson, module, attr, depth, limit, seed):
            row["generated"] += 1
            if not confirmed(lesson, module, attr, program, expr):
                continue
            row["confirmed"] += 1
            if refused(lesson, program) is not None:
                row["refused"] += 1
            else:
                row["passed"].append((steps, program))
        result[label] = row
    return result


# --- the honest generator ------------------------------------------------------------------------------------
def _renamed_locals(source: str) -> str:
    """Every name the functions bind (not arguments, not a top-level name) renamed ``my_<name>``."""
    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    arguments = {a.arg for f in functions for a in ast.walk(f.args) if isinstance(a, ast.arg)}
    top = {n.id for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.ClassDef)) for n in ast.walk(s)
           if isinstance(n, ast.Name)} | {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
    bound = {n.id for f in functions for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound -= arguments | top
    inside = {id(n) for f in functions for n in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in bound and id(node) in inside:
            node.id = "my_" + node.id
    return ast.unparse(tree)


#: Defs the grader replaces with the course's own (given at grading): left as they are.
GIVEN = {"output_size"}


def _top_level_helpers(tree: ast.Module, entries: set, loops: bool = True) -> list[str]:
    """The top-level defs other than the checked ones and those given at grading (``loops=False``: those
    without a loop, which a loop rule may read as static methods of a class)."""
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in entries
            and n.name not in GIVEN and (loops or not any(isinstance(c, (ast.For, ast.While, ast.comprehension))
                                                          for c in ast.walk(n)))]


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict, attribute_of: str | None = None):
        self.names, self.attribute_of = names, attribute_of

    def visit_Name(self, node):
        if node.id in self.names:
            if self.attribute_of:
                return ast.copy_location(ast.Attribute(ast.Name(self.attribute_of, ast.Load()), self.names[node.id],
                                                       ast.Load()), node)
            node.id = self.names[node.id]
        return node

    def visit_FunctionDef(self, node):
        if node.name in self.names and not self.attribute_of:
            node.name = self.names[node.name]
        local = {n.name for n in ast.walk(node) if isinstance(n, ast.FunctionDef) and n is not node} | {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} | {
            a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        inner = _Rename({k: v for k, v in self.names.items() if k not in local}, self.attribute_of)
        for child in node.body:
            inner.visit(child)
        return node


def _renamed_helpers(source: str, entries: set) -> str:
    tree = ast.parse(source)
    names = {h: "my_" + h.lstrip("_") for h in _top_level_helpers(tree, entries)}
    return ast.unparse(_Rename(names).visit(tree)) if names else source


def _helpers_in_a_class(source: str, entries: set) -> str:
    """The top-level helpers the checked functions use (those without loops) become static methods of
    ``class Tools`` and are called as ``Tools.name``."""
    from autograder.grading.lesson import definition_source, names_bound

    tree = ast.parse(source)
    used = set().union(*[names_bound(definition_source([source], e) or "", top_level=True) for e in entries])
    helpers = [h for h in _top_level_helpers(tree, entries, loops=False) if h in used]
    if not helpers:
        return source
    moved = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in helpers]
    rest = [n for n in tree.body if n not in moved]
    names = {h: h for h in helpers}
    for node in rest:
        _Rename(names, "Tools").visit(node)
    for node in moved:
        _Rename(names, "Tools").visit(node)
        node.decorator_list.insert(0, ast.Name("staticmethod", ast.Load()))
    tools = ast.ClassDef("Tools", [], [], moved, [])
    tree.body = [n for n in rest if isinstance(n, (ast.Import, ast.ImportFrom))] + [tools] + [
        n for n in rest if not isinstance(n, (ast.Import, ast.ImportFrom))]
    return ast.unparse(ast.fix_missing_locations(tree))


def _helpers_aliased_in_another_cell(source: str, entries: set) -> str:
    """Each helper is used through an alias bound at top level (``pair = as_pair``)."""
    tree = ast.parse(source)
    helpers = _top_level_helpers(tree, entries)
    if not helpers:
        return source
    names = {h: "alias_" + h.lstrip("_") for h in helpers}
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name in helpers):
            _Rename(names).visit(node)
        else:
            for inner in node.body:
                _Rename(names).visit(inner)
    text = ast.unparse(tree)
    return text + "\n\n" + "\n".join(f"{a} = {h}" for h, a in names.items())


HONEST_WAYS = {"as written": lambda s, e: s, "locals renamed": lambda s, e: _renamed_locals(s),
               "helpers renamed": _renamed_helpers, "helpers in a class": _helpers_in_a_class,
               "helpers aliased in another cell": _helpers_aliased_in_another_cell,
               "renamed and in a class": lambda s, e: _helpers_in_a_class(_renamed_locals(s), e)}


def honest_programs(lesson: str) -> list[tuple[str, str]]:
    """``[(way, the lesson's solution cells rewritten that way)]``."""
    from autograder.grading.lesson import load_lesson

    loaded = load_lesson(lesson, REPO)
    cells = [loaded.reference_sources().get(i, "") for i in loaded.code_solution_ids]
    source = "\n\n\n".join(c for c in cells if c.strip())
    _, avoids, loops = lesson_rules(lesson)
    entries = {t.split(".")[0] for t, _, _ in avoids} | {t.split(".")[0] for _, t in loops}
    return [(way, rewrite(source, entries)) for way, rewrite in HONEST_WAYS.items()]


def honest_verdict(lesson: str, program: str) -> str | None:
    """None when every rule of the lesson passes ``program``; else the first refusal."""
    from autograder.grading.lesson import definition_source
    from course import checks

    namespace, avoids, loops = lesson_rules(lesson)
    for target, forbidden, options in avoids:
        source = definition_source([program], target.split(".")[0])
        if source is None:
            return f"{target}: not defined"
        try:
            checks.check_avoids(_Graded(source, namespace), list(forbidden), target, **dict(options))
        except AssertionError as refusal:
            return str(refusal)
    for rule, target in loops:
        try:
            getattr(checks, rule)(_Graded(definition_source([program], target), namespace), target)
        except AssertionError as refusal:
            return str(refusal)
    return None


def honest_runs(lesson: str, program: str) -> bool:
    """Run outside the grader: the rewritten solution computes what the original does (its entries' values on
    one input equal the reference solution's)."""
    import contextlib
    import io

    import numpy as np

    from autograder.grading.lesson import load_lesson

    namespace, avoids, _ = lesson_rules(lesson)
    loaded = load_lesson(lesson, REPO)
    original = "\n\n\n".join(loaded.reference_sources().get(i, "") for i in loaded.code_solution_ids)
    results = []
    for text in (original, program):
        scope = dict(namespace)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(text, "<honest>", "exec"), scope)
        except Exception:
            return False
        results.append(scope)
    entry = ENTRY[lesson][1]
    a, b = results[0].get(entry), results[1].get(entry)
    if a is None or b is None:
        return False
    try:
        if lesson == "lesson5_gap":
            return a(8, 4, 4, 5) == b(8, 4, 4, 5)
        x = np.random.default_rng(0).standard_normal((1, 2, 7, 6))
        if lesson == "lesson4_torch":
            import torch
            x = torch.from_numpy(x).to(torch.float16)
            return bool(torch.equal(a(x, 3, 2, 1), b(x, 3, 2, 1)))
        return bool(np.array_equal(a(x, 3, 2, 1), b(x, 3, 2, 1)))
    except Exception:
        return False


def run_honest(lesson: str) -> dict:
    row = {"generated": 0, "ran": 0, "passed": 0, "failed": []}
    for way, program in honest_programs(lesson):
        row["generated"] += 1
        if not honest_runs(lesson, program):
            row["failed"].append((way, "did not compute what the solution computes"))
            continue
        row["ran"] += 1
        verdict = honest_verdict(lesson, program)
        if verdict is None:
            row["passed"] += 1
        else:
            row["failed"].append((way, verdict))
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.attacks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lesson", action="append", help="a lesson (default: every lesson with targets)")
    parser.add_argument("--limit", type=int, default=3000,
                        help="programs per lesson and target, a seeded sample (0: every one, about 64 000 each)")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=3, help="programs printed per target that were not refused")
    args = parser.parse_args(argv)
    print(f"{len(PRIMITIVES)} primitives ({sum(k == 'module' for k, _ in PRIMITIVES.values())} module, "
          f"{sum(k == 'attribute' for k, _ in PRIMITIVES.values())} attribute, "
          f"{sum(k == 'value' for k, _ in PRIMITIVES.values())} value), depth {args.depth}, seed {args.seed}")
    bad = 0
    for lesson in args.lesson or list(TARGETS):
        honest = run_honest(lesson)
        print(f"{lesson}: honest generated {honest['generated']}, ran {honest['ran']}, passed {honest['passed']}")
        for way, why in honest["failed"]:
            bad += 1
            print(f"  HONEST FAILED ({way}): {why[:300]}")
        for label, row in run_attacks(lesson, args.depth, args.limit or None, args.seed).items():
            if row.get("missing"):
                print(f"  {label:16} ({row['module']}: not installed here)")
                continue
            print(f"  {label:16} generated {row['generated']:6}  confirmed {row['confirmed']:6}  "
                  f"refused {row['refused']:6}  ({row['module']})")
            bad += len(row["passed"])
            for steps, program in row["passed"][:args.show]:
                print(f"    NOT REFUSED {' > '.join(steps)}:\n" + "\n".join("      " + line for line in program.splitlines()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
