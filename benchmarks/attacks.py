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
rules; lesson 3's ``check_vectorized`` here is its loop reading alone, which sends a loop over the data to review
where the cost, measured under the grader only, passes).

Beside the generated ones, hand-written attacks of the classes a tester used (:data:`WRITTEN_ATTACKS`: string
evaluators in allowed modules, rebound parameters, iterator tools with lambdas, loops in strings, copy nests)
and honest forms the rules once refused (:data:`HONEST_FORMS`: a helper computing a window, a float64 sum,
accumulators, any loop order, a layer keeping its options in a dict), each run first.

Every verdict is one of three (issue 50): proved allowed, proved forbidden, or review (unproved: the
instructor reads it). Prints per lesson and target: generated, confirmed, refused (forbidden / review), per
lesson the honest programs, and a closing table per lesson: attacks and honest programs as allowed /
forbidden / review; each confirmed program that was allowed is printed whole. Exit status 1 when an attack
was allowed or an honest program was not.
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
    from autograder.grading.lesson import code_of, load_lesson
    from autograder.grading.verdicts import parent_namespace

    loaded = load_lesson(lesson, REPO)
    namespace = parent_namespace(loaded)
    avoids, loops = [], []
    for test in loaded.tests:
        for node in ast.walk(ast.parse(code_of(test.source))):
            name = getattr(node.func, "id", None) if isinstance(node, ast.Call) else None
            if name == "check_avoids":
                target = ast.unparse(node.args[0])
                forbidden = tuple(eval(ast.unparse(node.args[1]), dict(namespace)))
                options = tuple((k.arg, eval(ast.unparse(k.value), dict(namespace))) for k in node.keywords)
                if (target, forbidden, options) not in avoids:
                    avoids.append((target, forbidden, options))
            elif name in ("check_kernel_loops", "check_output_loops", "check_vectorized"):
                if (name, ast.unparse(node.args[0])) not in loops:
                    loops.append((name, ast.unparse(node.args[0])))
    return namespace, avoids, loops


class _Graded:
    """A grader stand-in: the source the grader hands a rule, and the set-up's namespace."""

    def __init__(self, text, namespace):
        self.__student_source__ = text
        self.__trusted_globals__ = namespace


def attack_verdict(lesson: str, program: str) -> tuple[str, str]:
    """The verdict of the lesson's ``check_avoids`` on its attacked function in ``program`` (:func:`verdict_of`)."""
    from autograder.grading.lesson import definition_source
    from course.checks import check_avoids

    namespace, avoids, _ = lesson_rules(lesson)
    entry = ENTRY[lesson][1]
    for target, forbidden, options in avoids:
        if target.split(".")[0] != entry:
            continue
        source = definition_source([program], entry) or program
        found = verdict_of(check_avoids, _Graded(source, namespace), list(forbidden), target, **dict(options))
        if found[0] != "allowed":
            return found
    return "allowed", ""


def refused(lesson: str, program: str) -> str | None:
    """The refusal (proved forbidden, or sent to review) of the lesson's rule for its attacked function in
    ``program``, or None (it passed)."""
    kind, message = attack_verdict(lesson, program)
    return message if kind != "allowed" else None


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
        row = {"generated": 0, "confirmed": 0, "refused": 0, "forbidden": 0, "review": 0, "passed": [],
               "module": f"{module}.{attr}"}
        if importlib.util.find_spec(module.split(".")[0]) is None:
            row["missing"] = True  # not installed here: nothing can reach it
            result[label] = row
            continue
        for steps, program, expr in attacks(lesson, module, attr, depth, limit, seed):
            row["generated"] += 1
            if not confirmed(lesson, module, attr, program, expr):
                continue
            row["confirmed"] += 1
            kind, _ = attack_verdict(lesson, program)
            if kind != "allowed":
                row["refused"] += 1
                row[kind] += 1
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


def honest_runs(lesson: str, program: str, entry: str | None = None) -> bool:
    """Run outside the grader: the rewritten solution computes what the original does (its entry's values on
    one input equal the reference solution's; a layer class: its output and its ``extra_repr``)."""
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
    entry = entry or ENTRY[lesson][1]
    a, b = results[0].get(entry), results[1].get(entry)
    if a is None or b is None:
        return False
    try:
        if isinstance(a, type):  # a layer: AvgPool2d(3, 2, 1)
            import torch
            x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 2, 7, 6)))
            first, second = a(3, 2, 1), b(3, 2, 1)
            return bool(torch.equal(first(x), second(x))) and first.extra_repr() == second.extra_repr()
        if lesson == "lesson5_gap":
            return a(8, 4, 4, 5) == b(8, 4, 4, 5)
        x = np.random.default_rng(0).standard_normal((1, 2, 7, 6))
        if lesson == "lesson4_torch":
            import torch
            x = torch.from_numpy(x).to(torch.float16)
            return bool(torch.equal(a(x, 3, 2, 1), b(x, 3, 2, 1)))
        return bool(np.allclose(a(x, 3, 2, 1), b(x, 3, 2, 1), rtol=1e-12, atol=1e-12))  # (a sum's order)
    except Exception:
        return False


def run_honest(lesson: str) -> dict:
    """The honest rewrites of the lesson's solution: generated, ran, passed (proved allowed), review, forbidden."""
    row = {"generated": 0, "ran": 0, "passed": 0, "review": 0, "forbidden": 0, "failed": []}
    for way, program in honest_programs(lesson):
        row["generated"] += 1
        if not honest_runs(lesson, program):
            row["failed"].append((way, "did not compute what the solution computes"))
            continue
        row["ran"] += 1
        kind, message = judge(lesson, program)
        if kind == "allowed":
            row["passed"] += 1
        else:
            row[kind] += 1
            row["failed"].append((way, f"{kind}: {message}"))
    return row


# --- three verdicts (issue 50 items 2 and 6) -----------------------------------------------------------------
def verdict_of(rule, *args, **kwargs) -> tuple[str, str]:
    """``("allowed" | "forbidden" | "review", message)`` of one rule call: a plain ``AssertionError`` is proved
    forbidden, :class:`~course.checks.NeedsReview` is unproved (manual review), no exception is proved allowed."""
    from course.checks import NeedsReview

    try:
        rule(*args, **kwargs)
    except NeedsReview as review:
        return "review", str(review)
    except AssertionError as refusal:
        return "forbidden", str(refusal)
    return "allowed", ""


def _review_data_loops(function, name: str) -> None:
    from course.timing import review_data_loops as review

    review(function, name)


def judge(lesson: str, program: str, entries: set[str] | None = None) -> tuple[str, str]:
    """The lesson's verdict on ``program``: every ``check_avoids`` and loop rule of its tests (those of
    ``entries`` when given), each on the source the grader would hand it; forbidden wins over review."""
    from autograder.grading.lesson import definition_source
    from course import checks

    namespace, avoids, loops = lesson_rules(lesson)
    found = []
    for target, forbidden, options in avoids:
        if entries is not None and target.split(".")[0] not in entries:
            continue
        source = definition_source([program], target.split(".")[0])
        if source is None:
            return "forbidden", f"{target}: not defined"
        found.append(verdict_of(checks.check_avoids, _Graded(source, namespace), list(forbidden), target,
                                **dict(options)))
    for rule, target in loops:
        if entries is not None and target not in entries:
            continue
        source = definition_source([program], target)
        # check_vectorized: the cost (measured under the grader, not here) and, where it passes, the loop reading
        # that sends a loop over the data to review (course.timing.review_data_loops)
        check = _review_data_loops if rule == "check_vectorized" else getattr(checks, rule)
        found.append(verdict_of(check, _Graded(source or program, namespace), target))
    for kind in ("forbidden", "review"):
        if any(k == kind for k, _ in found):
            return kind, next(m for k, m in found if k == kind)
    return "allowed", ""


#: Attacks written by hand, one per class the tester used in issue 50 (and spellings of them): each pools
#: (confirmed by running it against PyTorch's pooling), and none may be allowed.
_L2_HEAD = ("def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
            "    k = int(kernel_size)\n    out_h, out_w = x.shape[2] // k, x.shape[3] // k\n"
            "    out = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)\n")
_L2_NEST = ("    for b in range(x.shape[0]):\n        for c in range(x.shape[1]):\n"
            "            for i in range(out_h):\n                for j in range(out_w):\n")
_L4_HEAD = "def avg_pool2d_half(x, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
WRITTEN_ATTACKS = {
    "lesson2_loops": {
        "copy nest: shift-and-add (acc = acc + ...)": _L2_HEAD + (
            "    acc = np.zeros((x.shape[0], x.shape[1], x.shape[2] - k + 1, x.shape[3] - k + 1))\n"
            "    for di in range(k):\n        for dj in range(k):\n"
            "            acc = acc + x[:, :, di:di + acc.shape[2], dj:dj + acc.shape[3]]\n") + _L2_NEST + (
            "                    out[b, c, i, j] = acc[b, c, i * k, j * k] / (k * k)\n    return out\n"),
        "copy nest: band matrices": _L2_HEAD + (
            "    rows = np.zeros((out_h, x.shape[2]))\n    cols = np.zeros((out_w, x.shape[3]))\n"
            "    for i in range(out_h):\n        rows[i, i * k:i * k + k] = 1.0 / k\n"
            "    for j in range(out_w):\n        cols[j, j * k:j * k + k] = 1.0 / k\n"
            "    pooled = rows @ x @ cols.T\n") + _L2_NEST + (
            "                    out[b, c, i, j] = pooled[b, c, i, j]\n    return out\n"),
        "copy nest: strided sums with +=": _L2_HEAD + (
            "    total = np.zeros_like(out)\n    for di in range(k):\n        for dj in range(k):\n"
            "            total += x[:, :, di:di + k * out_h:k, dj:dj + k * out_w:k]\n") + _L2_NEST + (
            "                    out[b, c, i, j] = total[b, c, i, j] / (k * k)\n    return out\n"),
        "string evaluator: typing._eval_type": "import typing\n\n" + _L2_HEAD + (
            "    return np.asarray(typing._eval_type(typing.ForwardRef('__import__(\"torch\").nn.functional.avg_' + "
            "'pool2d(__import__(\"torch\").from_numpy(x), k)'), {'x': x, 'k': k}, None))\n"),
        "loop in a string": _L2_HEAD + (
            "    scope = {'x': x, 'out': out, 'k': k}\n    exec('for b in range(x.shape[0]):\\n for c in "
            "range(x.shape[1]):\\n  for i in range(out.shape[2]):\\n   for j in range(out.shape[3]):\\n    "
            "out[b, c, i, j] = x[b, c, i*k:i*k+k, j*k:j*k+k].mean()', scope)\n    return out\n"),
    },
    "lesson3_numpy": {
        "a loop over one output axis, vectorized along the other (cheap where that axis is short)": (
            "def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
            "    k = int(kernel_size)\n    out_h, out_w = x.shape[2] // k, x.shape[3] // k\n"
            "    out = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)\n    for i in range(out_h):\n"
            "        band = x[:, :, i * k:i * k + k, :k * out_w].sum(axis=2)\n"
            "        out[:, :, i, :] = band.reshape(band.shape[:2] + (out_w, k)).sum(axis=3) / (k * k)\n"
            "    return out\n"),
    },
    "lesson4_torch": {
        "string evaluator: typing._eval_type": "import typing\n\n" + _L4_HEAD + (
            "    return typing._eval_type(typing.ForwardRef('F.avg_' + 'pool2d(x, kernel_size)'), "
            "{'F': F, 'x': x, 'kernel_size': kernel_size}, None)\n"),
        "string evaluator: an alias of typing._eval_type": "import typing as t\n\n" + _L4_HEAD + (
            "    run = t._eval_type\n    return run(t.ForwardRef('F.avg_' + 'pool2d(x, kernel_size)'), "
            "{'F': F, 'x': x, 'kernel_size': kernel_size}, None)\n"),
        "string evaluator: get_type_hints": "from typing import get_type_hints\n\n" + _L4_HEAD + (
            "    def f(a: 'F.avg_' + 'pool2d(x, kernel_size)'):\n        pass\n"
            "    return get_type_hints(f, {'F': F, 'x': x, 'kernel_size': kernel_size})['a']\n"),
        "rebound parameter (nonlocal)": _L4_HEAD + (
            "    op = torch.add\n    def swap():\n        nonlocal op\n        op = F.avg_pool2d\n    swap()\n"
            "    return op(x, kernel_size)\n"),
        "rebound parameter (a default replaced in a closure)": _L4_HEAD + (
            "    def outer(fn=torch.add):\n        def inner():\n            nonlocal fn\n"
            "            fn = getattr(F, 'avg_' + 'pool2d')\n            return fn(x, kernel_size)\n"
            "        return inner()\n    return outer()\n"),
        "iterator tool with a lambda": "import functools\n\n" + _L4_HEAD + (
            "    return functools.reduce(lambda a, f: f, [torch.add, F.avg_pool2d])(x, kernel_size)\n"),
        "iterator tool: map of a lambda": _L4_HEAD + (
            "    return next(map(lambda f: f(x, kernel_size), [F.avg_pool2d]))\n"),
    },
}


def attack_pools(lesson: str, program: str) -> bool:
    """Run outside the grader: does the program's entry compute PyTorch's average pooling (kernel 2)?"""
    import contextlib
    import io

    import numpy as np
    import torch

    namespace, _, _ = lesson_rules(lesson)
    scope = dict(namespace)
    entry = ENTRY[lesson][1]
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 8))
    expected = torch.nn.functional.avg_pool2d(torch.from_numpy(x), 2)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(program, "<attack>", "exec"), scope)
            given = torch.from_numpy(x) if lesson == "lesson4_torch" else x
            got = scope[entry](given, 2)
        got = got if isinstance(got, torch.Tensor) else torch.from_numpy(np.asarray(got))
        return bool(torch.allclose(got.double(), expected))
    except Exception:
        return False


def run_written_attacks(lesson: str) -> dict:
    """{label: (confirmed, verdict, message)} of :data:`WRITTEN_ATTACKS` under the lesson's rules for its entry."""
    entry = ENTRY[lesson][1]
    return {label: (attack_pools(lesson, program), *judge(lesson, program, {entry}))
            for label, program in WRITTEN_ATTACKS.get(lesson, {}).items()}


#: Honest forms (issue 50): one function of the lesson's reference solution replaced by a way students write it
#: that the rules once refused; each is run against the reference and must be proved allowed.
_L2_BODY_HEAD = ('''def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] with Python loops -> [B, C, H_out, W_out], in x's dtype."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    height, width = x.shape[2], x.shape[3]
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    kh, kw = as_pair(kernel_size)
    sh, sw = as_pair(stride)
    sh, sw = sh or kh, sw or kw
    ph, pw = as_pair(padding)
    out = np.zeros(x.shape[:2] + (out_h, out_w), dtype=x.dtype)
''')
_L2_CORNERS = '''                    top, left = i * sh - ph, j * sw - pw
                    r0, r1 = max(top, 0), min(top + kh, height)
                    c0, c1 = max(left, 0), min(left + kw, width)
                    divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)
'''
HONEST_FORMS = {
    "lesson2_loops": {
        "a helper computing the window's mean, called in the loops": ("avg_pool2d_loops", '''
def window_total(x, b, c, r0, r1, c0, c1):
    return x[b, c, r0:r1, c0:c1].sum()


''' + _L2_BODY_HEAD + '''    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
''' + _L2_CORNERS + '''                    out[b, c, i, j] = window_total(x, b, c, r0, r1, c0, c1) / divisor
    return out
'''),
        "a float64 window sum": ("avg_pool2d_loops", _L2_BODY_HEAD + '''    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
''' + _L2_CORNERS + '''                    out[b, c, i, j] = x[b, c, r0:r1, c0:c1].astype(np.float64).sum() / divisor
    return out
'''),
        "an accumulator acc = acc + ...": ("avg_pool2d_loops", _L2_BODY_HEAD + '''    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
''' + _L2_CORNERS + '''                    acc = 0.0
                    for r in range(r0, r1):
                        for q in range(c0, c1):
                            acc = acc + x[b, c, r, q]
                    out[b, c, i, j] = acc / divisor
    return out
'''),
        "columns outer, rows inner, += over the window": ("avg_pool2d_loops", _L2_BODY_HEAD + '''    for j in range(out_w):
        for i in range(out_h):
            for b in range(x.shape[0]):
                for c in range(x.shape[1]):
''' + _L2_CORNERS + '''                    total = 0.0
                    for r in range(r0, r1):
                        total += x[b, c, r, c0:c1].sum()
                    out[b, c, i, j] = total / divisor
    return out
'''),
    },
    "lesson3_numpy": {
        "the kernel loop as np.ndindex(kh, kw)": ("avg_pool2d_numpy", '''
def window_counts(height, width, kernel_size, stride, padding, dtype):
    """[H_out, W_out]: the real (not padding) elements of every window, in dtype."""
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    ones = np.pad(np.ones((height, width), dtype), ((ph, ph), (pw, pw)))
    count = np.zeros((out_h, out_w), dtype)
    for a, b in np.ndindex(kh, kw):
        count += ones[a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
    return count


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out]: one strided slice per kernel offset."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    total = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    for a, b in np.ndindex(kh, kw):
        total += padded[:, :, a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
    if count_include_pad:
        return total / x.dtype.type(kh * kw)
    return total / window_counts(x.shape[2], x.shape[3], kernel_size, stride, padding, x.dtype)
'''),
        "the kernel loop as itertools.product of the kernel's ranges": ("avg_pool2d_numpy", '''
import itertools


def window_counts(height, width, kernel_size, stride, padding, dtype):
    """[H_out, W_out]: the real (not padding) elements of every window, in dtype."""
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    ones = np.pad(np.ones((height, width), dtype), ((ph, ph), (pw, pw)))
    count = np.zeros((out_h, out_w), dtype)
    for a, b in itertools.product(range(kh), range(kw)):
        count += ones[a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
    return count


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out]: one strided slice per kernel offset."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    total = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    for a, b in itertools.product(range(kh), range(kw)):
        total += padded[:, :, a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
    if count_include_pad:
        return total / x.dtype.type(kh * kw)
    return total / window_counts(x.shape[2], x.shape[3], kernel_size, stride, padding, x.dtype)
'''),
        "the kernel sizes from a helper the forward and backward share": ("avg_pool2d_numpy", '''
def pool_geometry(kernel_size, stride, padding):
    """((kh, kw), (sh, sw), (ph, pw)) for the forward and the backward alike; stride 0 means kernel_size."""
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    return (kh, kw), (sh or kh, sw or kw), (ph, pw)


def window_counts(height, width, kernel_size, stride, padding, dtype):
    """[H_out, W_out]: the real (not padding) elements of every window, in dtype."""
    (kh, kw), (sh, sw), (ph, pw) = pool_geometry(kernel_size, stride, padding)
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    ones = np.pad(np.ones((height, width), dtype), ((ph, ph), (pw, pw)))
    count = np.zeros((out_h, out_w), dtype)
    for a in range(kh):
        for b in range(kw):
            count += ones[a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
    return count


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out]: one strided slice per kernel offset."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = pool_geometry(kernel_size, stride, padding)
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    total = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    for a in range(kh):
        for b in range(kw):
            total += padded[:, :, a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
    if count_include_pad:
        return total / x.dtype.type(kh * kw)
    return total / window_counts(x.shape[2], x.shape[3], kernel_size, stride, padding, x.dtype)
'''),
        "a mean over sliding_window_view": ("avg_pool2d_numpy", '''
def _pair(value):
    """(a, b) from an int or a pair of ints."""
    if np.ndim(value) == 0:
        return int(value), int(value)
    return int(value[0]), int(value[1])


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out] in x's dtype, with no loop over outputs."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    if sh == 0:
        sh = kh
    if sw == 0:
        sw = kw
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::sh, ::sw][:, :, :out_h, :out_w]
    if count_include_pad:
        return windows.mean(axis=(-2, -1))
    ones = np.pad(np.ones(x.shape[2:], x.dtype), ((ph, ph), (pw, pw)))
    counts = np.lib.stride_tricks.sliding_window_view(ones, (kh, kw))[::sh, ::sw][:out_h, :out_w].sum(axis=(-2, -1))
    return windows.sum(axis=(-2, -1)) / counts
'''),
    },
    "lesson4_torch": {
        "a layer that keeps its options in a dict": ("AvgPool2d", '''
class AvgPool2d(nn.Module):
    def __init__(self, kernel_size, stride=0, padding=0, count_include_pad=True):
        super().__init__()
        self.options = dict(kernel_size=kernel_size, stride=stride, padding=padding,
                            count_include_pad=count_include_pad)

    def forward(self, x):
        return avg_pool2d_torch(x, **self.options)

    def extra_repr(self):
        return ", ".join(f"{k}={v}" for k, v in self.options.items())
'''),
        "a layer that keeps its options in a dict literal and a list": ("AvgPool2d", '''
class AvgPool2d(nn.Module):
    def __init__(self, kernel_size, stride=0, padding=0, count_include_pad=True):
        super().__init__()
        self.sizes = [kernel_size, stride, padding]
        self.options = {"count_include_pad": count_include_pad}

    def forward(self, x):
        return avg_pool2d_torch(x, *self.sizes, self.options["count_include_pad"])

    def extra_repr(self):
        k, s, p = self.sizes
        return f"kernel_size={k}, stride={s}, padding={p}, count_include_pad={self.options['count_include_pad']}"
'''),
        "float16 through a helper bound by position": ("avg_pool2d_half", '''
def _in_float32(x):
    return x.float() if x.dtype == torch.float16 else x


def avg_pool2d_half(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    out = avg_pool2d_torch(_in_float32(x), kernel_size, stride, padding, count_include_pad)
    return out.half() if x.dtype == torch.float16 else out
'''),
    },
}


def _replaced(source: str, name: str, replacement: str) -> str:
    """``source`` with its top-level ``def``/``class`` ``name`` replaced by ``replacement``."""
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
    lines = source.splitlines()
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    return "\n".join(lines[:start] + replacement.strip("\n").splitlines() + lines[node.end_lineno:]) + "\n"


def run_honest_forms(lesson: str) -> dict:
    """{label: (runs, verdict, message)} of :data:`HONEST_FORMS` (each in the lesson's reference solution)."""
    from autograder.grading.lesson import load_lesson

    loaded = load_lesson(lesson, REPO)
    source = "\n\n\n".join(c for c in (loaded.reference_sources().get(i, "") for i in loaded.code_solution_ids)
                           if c.strip())
    found = {}
    for label, (name, replacement) in HONEST_FORMS.get(lesson, {}).items():
        program = _replaced(source, name, replacement)
        found[label] = (honest_runs(lesson, program, name), *judge(lesson, program))
    return found


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
    table = []
    for lesson in args.lesson or list(TARGETS):
        honest = run_honest(lesson)
        forms = run_honest_forms(lesson)
        print(f"{lesson}: honest generated {honest['generated']}, ran {honest['ran']}, passed {honest['passed']}, "
              f"review {honest['review']}, forbidden {honest['forbidden']}")
        for way, why in honest["failed"]:
            bad += 1
            print(f"  HONEST FAILED ({way}): {why[:300]}")
        for label, (runs, kind, why) in forms.items():
            print(f"  honest form {label!r}: {'runs' if runs else 'DOES NOT RUN'}, {kind} {why[:300]}")
            bad += (not runs) + (kind != "allowed")
        attack = {"allowed": 0, "forbidden": 0, "review": 0}
        for label, row in run_attacks(lesson, args.depth, args.limit or None, args.seed).items():
            if row.get("missing"):
                print(f"  {label:16} ({row['module']}: not installed here)")
                continue
            print(f"  {label:16} generated {row['generated']:6}  confirmed {row['confirmed']:6}  "
                  f"refused {row['refused']:6} (forbidden {row['forbidden']}, review {row['review']})  ({row['module']})")
            attack["forbidden"] += row["forbidden"]
            attack["review"] += row["review"]
            attack["allowed"] += len(row["passed"])
            bad += len(row["passed"])
            for steps, program in row["passed"][:args.show]:
                print(f"    NOT REFUSED {' > '.join(steps)}:\n" + "\n".join("      " + line for line in program.splitlines()))
        for label, (pools, kind, why) in run_written_attacks(lesson).items():
            print(f"  written attack {label!r}: {'pools' if pools else 'DOES NOT POOL'}, {kind} "
                  f"{why[:120] if kind != 'allowed' else 'NOT REFUSED'}")
            attack[kind] += pools
            bad += (not pools) + (kind == "allowed")
        honest_counts = {"allowed": honest["passed"] + sum(k == "allowed" for _, k, _ in forms.values()),
                         "forbidden": honest["forbidden"] + sum(k == "forbidden" for _, k, _ in forms.values()),
                         "review": honest["review"] + sum(k == "review" for _, k, _ in forms.values())}
        table.append((lesson, attack, honest_counts))
    print("\nlesson          attacks: allowed / forbidden / review    honest: allowed / forbidden / review")
    for lesson, attack, honest in table:
        print(f"{lesson:15} {attack['allowed']:16} / {attack['forbidden']:9} / {attack['review']:6}    "
              f"{honest['allowed']:15} / {honest['forbidden']:9} / {honest['review']:6}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
