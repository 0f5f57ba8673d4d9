"""check_avoids' resolver: every binding form of Python, one honest use that keeps full marks and one
hidden forbidden use that is refused with a message saying what to write instead (no notebooks)."""

from __future__ import annotations

import ast
import itertools
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course.checks import (TENSOR_ARITHMETIC, NeedsReview, _Resolver, check_avoids, forbidden_uses, unlisted_uses,
                           untraced_uses)
from course.checks.analysis.identity import TEXT_EVALUATORS, evaluates_text, walk
from course.checks.analysis.text import in_cells

#: The lesson set-up's names as the grader's parent resolves them.
SETUP = {"np": np, "torch": torch, "F": F, "nn": nn}
LESSON4 = ["*pool*", "conv*", "interpolate", "reference"]  # lesson 4's list, as its test cells write it
POOLING_ONLY = ["*pool*", "interpolate", "reference"]  # without conv*: what the allow-list alone refuses
LESSON5 = ["nn", "Linear", "numel", "parameters", "build", "parameter_total", "print_summary", "network"]


class _Graded:
    """A grader stand-in: the student's source and the set-up's namespace."""

    def __init__(self, text, namespace=SETUP):
        self.__student_source__ = text
        self.__trusted_globals__ = namespace


def _unquoted(message: str) -> str:
    """``message`` without the quoted lines (``(line 3, `return op(x, k)`)`` reads ``(line 3)``): the words
    the tests below look for; :func:`test_rule_messages_count_lines_in_the_cell_and_quote_them` checks the quotes."""
    return re.sub(r"(line \d+)(?: of its cell)?, `[^`\n]*`", r"\1", message)


def _refusal(source, forbidden=POOLING_ONLY, namespace=SETUP) -> str:
    with pytest.raises(AssertionError) as caught:
        check_avoids(_Graded(source, namespace), forbidden, "pool")
    return _unquoted(str(caught.value))


# One row per binding form of /work/shared/traps.md: (form, honest source, cheat source, words of the refusal).
FORMS = [
    ("assignment",
     "def pool(x, k):\n    kh, kw = (k, k) if isinstance(k, int) else k\n    total = x.unfold(2, kh, kh)\n"
     "    total = total.unfold(3, kw, kw)\n    return total.mean((-1, -2))",
     "def pool(x, k):\n    ops = F\n    return ops.avg_pool2d(x, k)",
     "ops.avg_pool2d (torch.nn.functional.avg_pool2d)"),
    ("import",
     "import numpy as np2\nfrom numpy.lib.stride_tricks import sliding_window_view as windows\n"
     "def pool(x, k):\n    return np2.cumsum(windows(x, (k, k), axis=(-2, -1)), axis=-1)",
     "from torch.nn import functional as nnf\ndef pool(x, k):\n    return nnf.avg_pool2d(x, k)",
     "nnf.avg_pool2d (torch.nn.functional.avg_pool2d)"),
    ("def/class: a local named like one's own function",
     "def window(x, k):\n    return x.unfold(2, k, k).unfold(3, k, k)\n"
     "class Pool:\n    def __init__(self, k):\n        self.kernel_size = k\n"
     "    def forward(self, x):\n        return window(x, self.kernel_size).mean((-1, -2))\n"
     "def pool(x, k):\n    return Pool(k).forward(x)",
     "import torch.nn.functional as G\ndef pool(x, k):\n    return G.avg_pool2d(x, k)\n"
     "def unused():\n    def G():\n        return 0\n    return G()",
     "G.avg_pool2d (torch.nn.functional.avg_pool2d)"),
    ("global",
     "CALLS = 0\ndef pool(x, k):\n    global CALLS\n    CALLS += 1\n    return x[..., ::k, ::k] * 0 + x.mean()",
     "def pool(x, k):\n    global ctx\n    ctx = F\n    return ctx.avg_pool2d(x, k)",
     "ctx.avg_pool2d (torch.nn.functional.avg_pool2d)"),
    ("global bound outside the source the grader reads",
     "def pool(x, k):\n    return x[..., ::k, ::k]",
     "def pool(x, k):\n    global op\n    return op(x, k)",
     "`op` (line 3) is a name that is neither defined in your solution cells, imported, nor given by the set-up"),
    ("nonlocal",
     "def pool(x, k):\n    count = 0\n    def bump():\n        nonlocal count\n        count += 1\n"
     "    bump()\n    return x[..., ::k, ::k] / count",
     "def pool(x, k):\n    fn = None\n    def pick():\n        nonlocal fn\n        fn = getattr(F, 'avg_pool2d')\n"
     "    pick()\n    return fn(x, k)",
     "getattr(F, 'avg_pool2d') (torch.nn.functional.avg_pool2d)"),
    ("match capture",
     "def pool(x, k):\n    match k:\n        case (a, b):\n            kh, kw = a, b\n        case _:\n"
     "            kh = kw = k\n    return x.unfold(2, kh, kh).unfold(3, kw, kw).mean((-1, -2))",
     "def pool(x, k):\n    match F:\n        case object(avg_pool2d=fn):\n            return fn(x, k)",
     "case ...(avg_pool2d=...)"),
    ("match capture of a module",
     "def pool(x, k):\n    match x.ndim:\n        case 4:\n            return x[..., ::k, ::k]",
     "def pool(x, k):\n    match torch:\n        case object(nn=fn):\n            return fn.functional.conv2d(x, x)",
     "calls an attribute of `fn`, which is bound by a `match` capture from a function, class or module"),
    ("walrus",
     "def pool(x, k):\n    if (n := k * k) > 1:\n        return sum(x[..., i::k, j::k] for i in range(k) for j in range(k)) / n\n"
     "    return x",
     "def pool(x, k):\n    [(ctx := F) for _ in range(1)]\n    return ctx.avg_pool2d(x, k)",
     "ctx.avg_pool2d (torch.nn.functional.avg_pool2d)"),
    ("comprehension and for targets",
     "def pool(x, k):\n    rows = [x[..., i::k, :] for i in range(k)]\n    for row in rows:\n        row.shape\n"
     "    return sum(r.sum() for r in rows)",
     "def pool(x, k):\n    for self in [F]:\n        return self.avg_pool2d(x, k)",
     "self.avg_pool2d"),
    ("for target over a container of functions",
     "def pool(x, k):\n    out = x\n    for axis in (2, 3):\n        out = out.unfold(axis, k, k)\n    return out.mean((-1, -2))",
     "def pool(x, k):\n    for fn in [torch.relu, torch.sigmoid]:\n        x = fn(x)\n    return x",
     "`fn(...)` (line 3) calls `fn` bound by a loop or comprehension target over a container of functions"),
    ("except target",
     "def pool(x, k):\n    try:\n        return x[..., ::k, ::k]\n    except (TypeError, ValueError) as error:\n"
     "        raise ValueError(f'pool: {error}') from error",
     "def pool(x, k):\n    try:\n        raise LookupError(torch.relu)\n    except LookupError as ctx:\n"
     "        fn = ctx.args[0]\n    return fn(x)",
     "`fn(...)` (line 6) calls `fn` bound by an `except ... as` target"),
    ("default argument",
     "def pool(x, k, stride=None, dtype=torch.float64, scale=1 << 2):\n    return x.to(dtype)[..., ::stride or k, ::k] * scale",
     "def pool(x, k, fn=getattr(F, 'avg_pool2d')):\n    return fn(x, k)",
     "getattr(F, 'avg_pool2d') (torch.nn.functional.avg_pool2d)"),
    ("default argument that is not a constant",
     "def pool(x, k, ones=None):\n    ones = torch.ones(k, k) if ones is None else ones\n    return x.unfold(2, k, k).mean()",
     "def pool(x, k, fn=[torch.relu][0]):\n    return fn(x)",
     "`fn(...)` (line 2) calls `fn` bound by a default argument value that is not a constant"),
    ("decorator",
     "class Function(torch.autograd.Function):\n    @staticmethod\n    @torch.autograd.function.once_differentiable\n"
     "    def backward(ctx, g):\n        return g\n    @property\n    def size(self):\n        return 1\n"
     "    @size.setter\n    def size(self, value):\n        self.k = value\ndef pool(x, k):\n    return Function.apply(x)",
     "def swap(f):\n    return torch.relu\n@swap\ndef pooled(x, k):\n    return x\ndef pool(x, k):\n    return pooled(x, k)",
     "the decorator `@swap` on `pooled` (line 4) can replace `pooled` with anything"),
    ("getattr with a literal",
     "def pool(x, k):\n    return getattr(x, 'unfold')(2, k, k).mean(-1)",
     "def pool(x, k):\n    return getattr(F, 'avg_pool2d')(x, k)",
     "getattr(F, 'avg_pool2d') (torch.nn.functional.avg_pool2d)"),
    ("container of functions",
     "def pool(x, k):\n    parts = {'rows': x[..., ::k, :]}\n    return parts['rows'].sum()",
     "def pool(x, k):\n    ops = {'p': torch.relu}\n    return ops['p'](x)",
     "`ops['p'](...)` (line 3) calls an item of a container"),
    ("attribute set on one's own object",
     "class Pool:\n    def forward(ctx, x, k):\n        ctx.save_for_backward(x)\n        ctx.kernel = k\n"
     "        (saved,) = ctx.saved_tensors\n        return saved[..., ::ctx.kernel, ::ctx.kernel]\n"
     "def pool(x, k):\n    return Pool().forward(x, k)",
     "class Pool:\n    def forward(ctx, x, k):\n        ctx.f = torch.relu\n        return ctx.f(x)\n"
     "def pool(x, k):\n    return Pool().forward(x, k)",
     "calls `.f`, an attribute your code sets to a function, class or module (line 3)"),
]


@pytest.mark.parametrize("form, honest, cheat, words", FORMS, ids=[f[0] for f in FORMS])
def test_each_binding_form_honest_passes_and_hidden_use_is_refused(form, honest, cheat, words):
    check_avoids(_Graded(honest), LESSON4, "pool")
    message = _refusal(cheat)
    assert words in message, message
    assert any(w in message for w in ("must not use", "directly by their module name", "define it", "remove it"))  # says what to write


def test_untraced_calls_say_what_to_write_instead():
    message = _refusal("def pool(x, k, fn=[torch.relu][0]):\n    return fn(x)")
    assert "call functions and classes directly by their module name (torch.zeros, F.pad, x.sum" in message
    assert "instead of through `fn`" in message


@pytest.mark.parametrize("cheat", [
    "def head_parameters(c, h, w, k):\n    for ctx in [torch]:\n        layer = ctx.nn.Linear(c * h * w, k)\n"
    "    return layer.weight.shape",
    "def head_parameters(c, h, w, k):\n    self = torch\n    return self.nn.Linear(c, k).weight.shape",
    "def head_parameters(c, h, w, k):\n    return getattr(torch, 'nn').Linear(c, k).weight.shape",
    "def head_parameters(c, h, w, k, make=getattr(torch, 'nn')):\n    return make.Linear(c, k).weight.shape",
])
def test_lesson5_layers_built_through_untraced_names_are_refused(cheat):
    honest = ("def head_parameters(c, h, w, k):\n    for name, value in [('c', c), ('k', k)]:\n"
              "        if value < 1:\n            raise ValueError(f'{name} must be >= 1')\n"
              "    return c * h * w * k + k, c * k + k")
    check_avoids(_Graded(honest), LESSON5, "head_parameters")
    with pytest.raises(AssertionError, match="nn"):
        check_avoids(_Graded(cheat), LESSON5, "head_parameters")


_COUNTS = ("    return (flat.in_features + 1) * flat.out_features, (gap.in_features + 1) * gap.out_features\n")
_BUILD = "    flat, gap = Lin(c * h * w, k, device='meta'), Lin(c, k, device='meta')\n" + _COUNTS


@pytest.mark.parametrize("cheat, words", [  # issue 31 item 6 (h6): corpus lesson5_gap/cheat_layers_by_name_lookup
    ("import string\ndef head_parameters(c, h, w, k):\n    Lin = string.Formatter().get_field('0.nn.Linear', (torch,), {})[0]\n"
     + _BUILD, "`get_field`, which looks functions and classes up by a name in a string"),
    ("import logging.config\ndef head_parameters(c, h, w, k):\n"
     "    Lin = logging.config.BaseConfigurator({}).resolve('torch.nn.Linear')\n" + _BUILD, "`BaseConfigurator`, which"),
    ("import io\ndef head_parameters(c, h, w, k):\n    Lin = np.load(io.BytesIO(b'ctorch.nn\\nLinear\\n.'), allow_pickle=True)\n"
     + _BUILD, "`allow_pickle=True`, which loads pickled objects"),
    ("import typing\ndef head_parameters(c, h, w, k):\n    def hint(layer: 'torch.nn.Linear'):\n        pass\n"
     "    Lin = typing.get_type_hints(hint)['layer']\n" + _BUILD, "`get_type_hints`, which"),
    ("import torch.ao.quantization.quantization_mappings as maps\ndef head_parameters(c, h, w, k):\n"
     "    Lin = next(iter(maps.DEFAULT_DYNAMIC_SPARSE_QUANT_MODULE_MAPPINGS))\n" + _BUILD,
     "`Lin(...)` (line 4) calls `Lin`, a value computed at run time (line 3)"),
    ("import torch.ao.quantization.quantization_mappings as maps\ndef head_parameters(c, h, w, k):\n"
     "    for Lin in maps.DEFAULT_DYNAMIC_SPARSE_QUANT_MODULE_MAPPINGS:\n" + _BUILD.replace("    ", "        ", 1) + "",
     "calls `Lin` bound by a loop or comprehension target over a container of functions, classes or modules"),
])
def test_layers_reached_through_a_name_in_a_string_or_a_library_table_are_refused(cheat, words):
    """A class looked up from a string (format fields, logging's resolver, pickles, string annotations) or
    taken out of a library's table of classes, then called: refused; calling a lambda, an alias or a
    choice between two library functions stays fine."""
    for honest in ("def head_parameters(c, h, w, k):\n    times = lambda a, b: a * b\n    return times(c * h * w, k) + k, c * k + k",
                   "def head_parameters(c, h, w, k):\n    make = torch.ones if c > 1 else torch.zeros\n"
                   "    return int(make(c * h * w, k).sum()) + k, c * k + k",
                   "def locate(c):\n    return c\ndef head_parameters(c, h, w, k):\n"  # a helper's name is not a lookup
                   "    return locate(c) * h * w * k + k, locate(c) * k + k"):
        check_avoids(_Graded(honest), LESSON5, "head_parameters")
    message = _refusal(cheat, LESSON5)
    assert words in message, message


@pytest.mark.parametrize("cheat, words", [
    ("from torch.nn.functional import *\ndef pool(x, k):\n    return relu(x)", "import *"),
    ("import operator\ndef pool(x, k):\n    return operator.attrgetter('avg_' + 'pool2d')(F)(x, k)", "by name"),
    ("def pool(x, k):\n    fns = torch.overrides.get_overridable_functions()[F]\n    return fns[17](x, k)", "by name"),
    ("import functools\ndef pool(x, k):\n    return functools.reduce(getattr, ['avg_pool2d'], F)(x, k)", "as a value"),
    ("def pool(x, k):\n    return (torch.relu or x)(x)", "calls the value of an expression"),
    ("def pool(x, k):\n    for f in sum([[torch.relu]], []):\n        x = f(x)\n    return x", "calls `f` bound by a loop"),
    ("def pool(x, k, p=[torch.relu][0]):\n    fn = getattr(x, 'nope', p)\n    return fn(x)", "calls `fn` bound by a default"),
    ("class P:\n    def __init__(self):\n        self.fns = [torch.relu]\n        self.fns = self.fns\n"
     "    def forward(self, x):\n        for f in self.fns:\n            x = f(x)\n        return x\n"
     "def pool(x, k):\n    return P().forward(x)", "calls `f` bound by a loop or comprehension target"),
    ("def pool(x, k):\n    return __builtins__['ev' + 'al']('x')", "the interpreter's machinery"),
    ("def pool(x, k, fn=[torch.relu][0]):\n    return helper(fn, x)\ndef helper(g, x):\n    return g(x)",
     "is passed to `helper`"),
    ("def pick(fn=[torch.relu][0]):\n    return fn\ndef pool(x, k):\n    return pick()(x)", "hands on a value"),
])
def test_other_ways_to_hide_what_is_called_are_refused(cheat, words):
    assert words in _refusal(cheat)


def test_the_api_lists_forbidden_and_untraced_uses_separately():
    tree = ast.parse("def pool(x, k, fn=[torch.relu][0]):\n    y = getattr(F, 'avg_pool2d')(x, k)\n    return fn(y)")
    assert forbidden_uses(tree, LESSON4, SETUP) == ["getattr(F, 'avg_pool2d') (torch.nn.functional.avg_pool2d)"]
    found = untraced_uses(tree, SETUP)
    assert len(found) == 1 and found[0].startswith("`fn(...)` (line 3) calls `fn`")
    honest = ast.parse("def pool(x, k):\n    return x.unfold(2, k, k).mean(-1)")
    assert forbidden_uses(honest, LESSON4, SETUP) == [] and untraced_uses(honest, SETUP) == []


def test_scopes_follow_python_rules():
    """A class body's names are not visible in its methods; a comprehension's target is its own; a
    parameter shadows the set-up's name of the same spelling."""
    shadow = "def pool(x, F):\n    return F.avg_pool2d(x)"  # F is the caller's data here, not torch's module
    assert forbidden_uses(ast.parse(shadow), ["torch"], SETUP) == []
    class_body = "class P:\n    F = 1\n    def f(self, x):\n        return F.avg_pool2d(x)"
    assert forbidden_uses(ast.parse(class_body), ["torch"], SETUP) == ["F.avg_pool2d (torch.nn.functional.avg_pool2d)"]
    comprehension = "def pool(x):\n    F = x\n    return [F.sum() for F in [torch]]"
    assert "calls an attribute of `F`" in untraced_uses(ast.parse(comprehension), SETUP)[0]


def test_reference_solutions_pass_every_check_avoids_of_their_lesson():
    """Each lesson's reference solution cells, read as the grader reads them, have nothing forbidden and
    nothing untraced for every check_avoids of the lesson's tests, and loop as each loop rule asks."""
    from pathlib import Path

    from autograder.grading.lesson import code_of, definition_source, load_lesson
    from autograder.grading.verdicts import parent_namespace

    from course.checks import check_kernel_loops, check_output_loops

    LOOP_RULES = {"check_kernel_loops": check_kernel_loops, "check_output_loops": check_output_loops}
    root = Path(__file__).resolve().parents[2]
    checked = allow_listed = 0
    loops = set()
    for name in ("lesson2_loops", "lesson3_numpy", "lesson4_torch", "lesson5_gap"):
        lesson = load_lesson(name, root)
        namespace = parent_namespace(lesson)
        cells = [lesson.reference_sources().get(i, "") for i in lesson.code_solution_ids]
        for test in lesson.tests:
            for node in ast.walk(ast.parse(code_of(test.source))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check_avoids":
                    target = ast.unparse(node.args[0]).split(".")[0]
                    forbidden = eval(ast.unparse(node.args[1]), dict(namespace))
                    options = {k.arg: eval(ast.unparse(k.value), dict(namespace)) for k in node.keywords}
                    check_avoids(_Graded(definition_source(cells, target), namespace), forbidden, target, **options)
                    checked += 1
                    allow_listed += "allowed" in options
                elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in LOOP_RULES:
                    target = ast.unparse(node.args[0])
                    LOOP_RULES[node.func.id](_Graded(definition_source(cells, target), namespace), target)
                    loops.add((name, node.func.id, target))
    assert checked >= 10
    assert allow_listed >= 7  # every check_avoids of lesson 4 is its allow-list
    # lesson 3's vectorized cells judge cost alone (issue 50): check_kernel_loops is only a hint in their message
    assert loops == {("lesson2_loops", "check_output_loops", "avg_pool2d_loops"),
                     ("lesson2_loops", "check_output_loops", "avg_pool2d_loops_backward")}, loops


class _OwnAttributes(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.pool_size = k

    def forward(self, x):
        return x[..., ::self.pool_size, ::self.pool_size]


class _CalledAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.shrink = [torch.relu][0]

    def forward(self, x):
        return self.shrink(x)


def test_in_the_notebook_a_method_is_read_with_its_class():
    """In the student's kernel a method's source comes with its class: ``self.pool_size`` set in
    ``__init__`` is the student's own name, and a function stored on ``self`` and called is refused."""
    check_avoids(_OwnAttributes.forward, LESSON4, "forward")
    with pytest.raises(AssertionError, match=re.escape("calls `.shrink`, an attribute your code sets to a function")):
        check_avoids(_CalledAttribute.forward, LESSON4, "forward")


def test_a_loop_over_dtypes_is_data_but_a_loop_over_functions_is_not():
    honest = "def pool(x, k):\n    for dtype in (torch.float32, torch.float64):\n        y = x.to(dtype)\n    return y[..., ::k, ::k]"
    check_avoids(_Graded(honest), LESSON4, "pool")
    cheat = "def pool(x, k):\n    for dtype in (torch.float32, torch.relu):\n        y = x.to(dtype)\n    return y"
    assert "is passed to `x.to`" in _refusal(cheat)


def test_a_name_rebound_from_itself_is_resolved_and_ends():
    cheat = "def head_parameters(c, h, w, k):\n    m = torch\n    for _ in range(2):\n        m = m.nn\n    return m.Linear(c, k)"
    assert "m.Linear (torch.nn.Linear)" in _refusal(cheat, LESSON5)


def test_a_name_rebound_from_a_chain_of_its_own_calls_ends_and_is_judged():
    """``t = t.cumsum(2).cumsum(3)`` (a summed-area table, honest) once recursed without end in the parent; a
    forbidden call in the same chain is still refused."""
    honest = ("def pool(x, k):\n    t = np.pad(x, ((0, 0), (0, 0), (1, 0), (1, 0)))\n"
              "    t = t.cumsum(axis=2).cumsum(axis=3)\n    return t[..., k:, k:] - t[..., :-k, :-k]")
    check_avoids(_Graded(honest), POOLING_ONLY, "pool")
    cheat = honest.replace("t.cumsum(axis=2).cumsum(axis=3)", "F.avg_pool2d(t, k).cumsum(axis=2).cumsum(axis=3)")
    assert "F.avg_pool2d (torch.nn.functional.avg_pool2d" in _refusal(cheat)


def test_a_reading_that_fails_sends_the_cell_to_review_never_to_a_silent_zero(monkeypatch):
    """Where the rules' own reading of the code runs out of stack, nothing is proved: the third verdict."""
    from course.checks.analysis import avoids

    honest = "def pool(x, k):\n    return x.unfold(2, k, k).unfold(3, k, k).mean((-1, -2))"
    check_avoids(_Graded(honest), POOLING_ONLY, "pool")

    def runs_out(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(avoids, "resolver_for", runs_out)
    with pytest.raises(NeedsReview, match="reading of pool failed .RecursionError."):
        check_avoids(_Graded(honest), POOLING_ONLY, "pool")


HONEST_POOL = ("class Pool:\n    def __init__(self, k):\n        self.kernel_size = k\n"
               "def pool(x, k):\n    layer = Pool(k)\n    layer.kernel_size = k\n"
               "    return x.unfold(2, layer.kernel_size, k).unfold(3, k, k).mean((-1, -2))")


@pytest.mark.parametrize("cheat, words", [
    ("def pool(x, k):\n    return x\ntorch.Tensor.backward = pool", "`torch.Tensor.backward = ...`"),
    ("class Pool(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n"
     "Pool.apply = F.relu\ndef pool(x, k):\n    return Pool.apply(x)", "`Pool.apply = ...`"),
    ("def pool(x, k):\n    np.add = np.subtract\n    return x", "`np.add = ...`"),
    ("from course.network import Layer, build\n"
     "def pool(x, k):\n    return build([Layer('avg_' + 'pool', (k,))], tuple(x.shape))(x)",
     "build (course.network.build: the course's own helpers"),
    ("UNIT = torch.jit.CompilationUnit('def mean_windows(x: torch.Tensor) -> torch.Tensor:\\n    return x')\n"
     "def pool(x, k):\n    return UNIT.mean_windows(x)", "TorchScript compiles code from text"),
])
def test_patched_libraries_course_helpers_and_code_from_text_are_refused(cheat, words):
    """Setting attributes of a library or of a class from outside it (the tests would call something else
    than the checked source), the course's own helpers and code compiled from text are refused; attributes
    of one's own arguments and locals (``self.kernel_size``, ``layer.kernel_size``) are fine."""
    check_avoids(_Graded(HONEST_POOL), LESSON4, "pool")
    assert words in _refusal(cheat)


# Lesson 4's "tensor operations only" is an allow-list (issue 31 item 1): every honest way to pool keeps its
# points, and whatever is not listed is refused with its name, pooling or not.
HONEST_TENSOR_POOLING = {
    "padded copy, shift and add": (
        "def pool(x, k, s, p):\n    xp = F.pad(x, (p, p, p, p))\n    H, W = xp.shape[-2:]\n"
        "    ho, wo = (H - k) // s + 1, (W - k) // s + 1\n    out = x.new_zeros((*x.shape[:2], ho, wo))\n"
        "    for i, j in itertools.product(range(k), range(k)):\n"
        "        out += xp[:, :, i:i + s * (ho - 1) + 1:s, j:j + s * (wo - 1) + 1:s]\n    return out / (k * k)"),
    "Tensor.unfold": "def pool(x, k, s):\n    return x.unfold(2, k, s).unfold(3, k, s).mean(dim=(-1, -2))",
    "F.unfold and F.fold": (
        "def pool(x, k, s):\n    B, C, H, W = x.shape\n    return F.unfold(x.reshape(B * C, 1, H, W), k, stride=s).mean(1)\n"
        "def back(g, size, k, s):\n    cols = g.reshape(g.shape[0], 1, -1).expand(-1, k * k, -1) / (k * k)\n"
        "    return F.fold(cols, size, k, stride=s)"),
    "prefix sums": (
        "def pool(x, k):\n    c = torch.cumsum(F.pad(x, (1, 0, 1, 0)), dim=2).cumsum(dim=3)\n"
        "    return (c[..., k:, k:] - c[..., :-k, k:] - c[..., k:, :-k] + c[..., :-k, :-k]) / (k * k)"),
    "a pooling matrix and einsum": (
        "def pool(x, k):\n    n = x.shape[-1] // k\n    A = torch.kron(torch.eye(n, dtype=x.dtype), torch.ones(1, k)) / k\n"
        "    return torch.einsum('ih,bchw,jw->bcij', A, x, A)"),
    "a class of one's own, a NumPy backward marked once_differentiable": (
        "import itertools\nclass Geometry:\n    def __init__(self, k):\n        self.k = k\n    def out(self, n):\n"
        "        return n // self.k\nclass P(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, k):\n"
        "        ctx.g, ctx.shape = Geometry(k), x.shape\n        return x.unfold(2, k, k).unfold(3, k, k).mean((-1, -2))\n"
        "    @staticmethod\n    @torch.autograd.function.once_differentiable\n    def backward(ctx, g):\n"
        "        k, n = ctx.g.k, ctx.g.out(ctx.shape[-1])\n        a = g.detach().cpu().numpy()\n"
        "        out = np.zeros(tuple(ctx.shape), dtype=a.dtype)\n"
        "        for i, j in itertools.product(range(k), range(k)):\n"
        "            out[..., i:n * k:k, j:n * k:k] += a / (k * k)\n"
        "        return torch.from_numpy(out).to(g.device), None\ndef pool(x, k):\n    return P.apply(x, k)"),
}

TENSOR_CHEATS = [
    ("def pool(x, k):\n    w = torch.ones(1, 1, k, k, dtype=x.dtype) / (k * k)\n    B, C, H, W = x.shape\n"
     "    return F.conv2d(x.reshape(B * C, 1, H, W), w, stride=k).reshape(B, C, H // k, W // k)",
     "F.conv2d (torch.nn.functional.conv2d)"),
    ("def back(g, k):\n    return F.conv_transpose2d(g, torch.ones(1, 1, k, k) / k / k, stride=k)",
     "F.conv_transpose2d (torch.nn.functional.conv_transpose2d)"),
    ("def pool(x, k):\n    return torch.conv2d(x, torch.ones(1, 1, k, k) / k ** 2, stride=k)", "torch.conv2d"),
    ("def pool(x, k):\n    return torch.nn.grad.conv2d_input(x.shape, torch.ones(1, 1, k, k), x)",
     "torch.nn.grad.conv2d_input"),
    ("def pool(x, k):\n    op = torch.ops.aten\n    return op.mean(x)", "op.mean (torch.ops.aten.mean)"),
    ("def pool(x, k):\n    return np.convolve(x, np.ones(k))", "np.convolve (numpy.convolve)"),
    ("import scipy.ndimage as nd\ndef pool(x, k):\n    return nd.uniform_filter(x, k)", "import scipy.ndimage"),
    ("def pool(x, k):\n    return F.linear(x, torch.ones(1, x.shape[-1]))", "F.linear (torch.nn.functional.linear)"),
    ("def pool(x, k):\n    return torch.vmap(torch.sum)(x)", "torch.vmap"),
    ("def helper(m, x):\n    return m.conv2d(x, x)\ndef pool(x, k):\n    return helper(F, x)", "m.conv2d"),
    # a value that may hold a module: attributes the code sets or defines itself do not excuse it
    ("class C:\n    def __init__(self):\n        self.conv2d = 0\ndef pool(x, k):\n    m = next(iter([F]))\n"
     "    return m.conv2d(x, torch.ones(1, 1, k, k))", "m.conv2d"),
    ("def conv2d(a, b):\n    return a\ndef pool(x, k):\n    return next(iter([F])).conv2d(x, torch.ones(1, 1, k, k))",
     ".conv2d"),
]


@pytest.mark.parametrize("honest", list(HONEST_TENSOR_POOLING.values()), ids=list(HONEST_TENSOR_POOLING))
def test_tensor_arithmetic_allows_every_honest_way_to_pool(honest):
    namespace = {**SETUP, "itertools": __import__("itertools")}
    check_avoids(_Graded(honest, namespace), LESSON4, "pool", allowed=TENSOR_ARITHMETIC)
    tree = ast.parse(honest)
    assert unlisted_uses(tree, TENSOR_ARITHMETIC, _Resolver(tree, namespace, None)) == []


@pytest.mark.parametrize("cheat, words", TENSOR_CHEATS, ids=[w for _, w in TENSOR_CHEATS])
def test_tensor_arithmetic_refuses_whatever_it_does_not_list(cheat, words):
    """Refused under the allow-list with the call's name and what to write instead; the pooling deny-list
    alone lets the convolutions pass (the gap the allow-list closes)."""
    with pytest.raises(AssertionError) as caught:
        check_avoids(_Graded(cheat), POOLING_ONLY, "pool", allowed=TENSOR_ARITHMETIC)
    message = str(caught.value)
    assert words in message and "allows only tensor operations" in message, message
    assert "write the window sums yourself with strided slices and +=, F.pad, x.unfold" in message


def test_pooling_under_any_binding_is_still_refused_under_the_allow_list():
    """The deny-list's cheats (every binding form) stay refused when the allow-list is on too."""
    for _, _, cheat, _ in FORMS:
        with pytest.raises(AssertionError):
            check_avoids(_Graded(cheat), LESSON4, "pool", allowed=TENSOR_ARITHMETIC)
    for cheat in ("def pool(x, k):\n    return torch.ops.aten.avg_pool2d.default(x, [k, k])",
                  "from torch.nn.functional import lp_pool2d as mean_windows\ndef pool(x, k):\n    return mean_windows(x, 1, k)",
                  "def pool(x, k):\n    return F.adaptive_avg_pool2d(x, 1)",
                  "def pool(x, k):\n    return F.interpolate(x, scale_factor=1 / k, mode='area')"):
        assert "must not use" in _refusal(cheat)


def test_a_module_held_by_a_computed_value_is_not_excused_by_attributes_the_code_sets():
    """Deny-list side of the same rule: ``ctx.avg_pool2d = 0`` somewhere no longer hides ``m.avg_pool2d``."""
    cheat = ("class C:\n    def __init__(self):\n        self.avg_pool2d = 0\n"
             "def pool(x, k):\n    m = next(iter([F]))\n    return m.avg_pool2d(x, k)")
    assert "m.avg_pool2d" in _refusal(cheat)
    check_avoids(_Graded(HONEST_POOL), LESSON4, "pool")  # self.kernel_size, layer.kernel_size: still one's own


# --- how a function loops: lesson 3 loops only over the kernel's offsets (check_kernel_loops), lesson 2 loops
# over the outputs (check_output_loops); one reader of loops (course.checks._LoopNests) for both.
_HEAD = '''
def as_pair(value):
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def output_size(input_size, kernel_size, stride=0, padding=0):
    """(the lesson's, given at grading: its own loops are not read)"""
    size = tuple(int(n) for n in input_size)
    while False:
        pass
    return tuple((size[a] + 2 * as_pair(padding)[a] - as_pair(kernel_size)[a]) // (as_pair(stride)[a] or as_pair(kernel_size)[a]) + 1 for a in range(2))


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    a = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
'''
KERNEL_LOOPS_HONEST = {
    "shift_and_add": '''
    out = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    for di in range(kh):
        for dj in range(kw):
            out += a[:, :, di:di + sh * (out_h - 1) + 1:sh, dj:dj + sw * (out_w - 1) + 1:sw]
    return out / (kh * kw)
''',
    "sliding_window_view_no_loop": '''
    windows = np.lib.stride_tricks.sliding_window_view(a, (kh, kw), axis=(2, 3))
    return windows[:, :, ::sh, ::sw].mean(axis=(-2, -1))
''',
    "prefix_sums": '''
    table = np.pad(a, ((0, 0), (0, 0), (1, 0), (1, 0))).cumsum(2).cumsum(3)
    top, left = slice(0, sh * (out_h - 1) + 1, sh), slice(0, sw * (out_w - 1) + 1, sw)
    bottom, right = slice(kh, kh + sh * (out_h - 1) + 1, sh), slice(kw, kw + sw * (out_w - 1) + 1, sw)
    return (table[:, :, bottom, right] - table[:, :, top, right] - table[:, :, bottom, left] + table[:, :, top, left]) / (kh * kw)
''',
    "separable_generators_and_axes": '''
    kernel = tuple(as_pair(kernel_size))
    rows = sum(a[:, :, t:t + sh * (out_h - 1) + 1:sh] for t in range(kernel[0]))
    for axis, (k, s) in enumerate(zip((kw,), (sw,))):
        rows = sum(rows[..., t:t + s * (out_w - 1) + 1:s] for t in range(k))
    return rows / (kh * kw)
''',
    "product_and_a_helper_over_taps": '''
    def tap(di, dj):
        return a[:, :, di:di + sh * (out_h - 1) + 1:sh, dj:dj + sw * (out_w - 1) + 1:sw]

    def taps(k1, k2):
        found = []
        for di, dj in itertools.product(range(k1), range(k2)):
            found.append(tap(di, dj))
        return found

    parts = taps(kh, kw)
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total / (kh * kw)
''',
    "stride_phases_and_a_list_of_taps": '''
    out = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    for q in range(min(sh, out_h)):  # stride phases, then the taps of each
        for t in range((q + ph) % sh, kh, sh):
            out *= 1
    full, partial = [], []
    for t in range(kh):
        chosen = full if t % 2 else partial
        chosen.append(t)
    partial += full[1:]
    shape = tuple(int(n) for n in x.shape[2:])
    b, c, h, w = (int(n) for n in x.shape)
    for t in partial:
        out += a[:, :, t:t + sh * (out_h - 1) + 1:sh, :sw * (out_w - 1) + 1:sw] * 0
    return out
''',
}
KERNEL_LOOPS_CHEATS = {  # each loops over the data some way; the words its refusal must say
    "rows_short_axis": ('''
    out = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    for i in range(out_h):
        out[:, :, i, :] = a[:, :, i * sh:i * sh + kh].sum(axis=2)[..., ::sw][..., :out_w]
    return out
''', ["for i in range(out_h)", "for di in range(kh)"]),
    "shape": ('''
    for i in range(x.shape[2]):
        pass
    return a
''', ["x.shape[2]"]),
    "while": ('''
    i = 0
    while i < out_h:
        i += 1
    return a
''', ["while"]),
    "recursion": ('''
    if out_h > 1:
        return avg_pool2d_numpy(x[:, :, 1:], kernel_size, stride, padding)
    return a
''', ["recursion"]),
    "vectorize": ('''
    return np.vectorize(lambda v: v / 2)(a)
''', ["vectorize", "once per item"]),
    "apply_along_axis": ('''
    return np.apply_along_axis(np.mean, 3, a)
''', ["apply_along_axis"]),
    "helper_called_with_the_output_size": ('''
    def each(n):
        for i in range(n):
            a[:, :, i] *= 1
    each(out_h)
    return a
''', ["for i in range(n)"]),
    "over_the_array": ('''
    return np.stack([m.sum() for m in a])
''', ["for m in a"]),
    "a_large_constant": ('''
    for i in range(1000):
        if i >= out_h:
            break
    return a
''', ["1000 times"]),
    "a_power_of_the_kernel": ('''
    for i in range(kh ** 4):
        if i >= out_h:
            break
    return a
''', ["625 times"]),
    "nested_kernel_loops": ('''
    for p in range(kh):
        for q in range(kh):
            for r in range(kh):
                pass
    return a
''', ["125 times"]),
    "map_over_rows": ('''
    return np.stack(list(map(lambda i: a[:, :, i].sum(), range(out_h))))
''', ["map"]),
    "sum_over_rows": ('''
    return sum(a[:, :, i] for i in range(out_h))
''', ["for i in range(out_h)"]),
    "helper_as_a_value": ('''
    def row(i):
        return a[:, :, i]
    return np.stack([np.zeros(3)] + [np.asarray(f(0)) for f in (row,)])
''', ["passed as a value"]),
    "an_alias_of_a_helper": ('''
    def row(i):
        for t in range(kh):
            pass
    f = [row][0]
    for t in range(kh):
        f(t)
    return a
''', ["a value the rule cannot trace"]),
    "a_counter_that_grows": ('''
    n = kh
    n = n * out_h
    for i in range(n):
        pass
    return a
''', ["for i in range(n)"]),
    "a_list_that_grows_while_read": ('''
    taps = [0]
    for t in taps:
        if len(taps) < out_h:
            taps.append(t)
    return a
''', ["a list grows"]),
    "a_method_with_a_loop": ('''
    class Rows:
        def __iter__(self):
            for i in range(out_h):
                yield i
    for i in Rows():
        pass
    return a
''', ["for i in Rows()"]),
    "a_default_that_is_not_the_argument": ('''
    def each(n=kh):
        for i in range(n):
            pass
    each(out_h)
    return a
''', ["for i in range(n)"]),
    "a_loop_in_a_default_value": ('''
    def each(rows=[a[:, :, i].sum() for i in range(out_h)]):
        return rows
    return each()
''', ["for i in range(out_h)"]),
    "a_loop_in_a_class_body": ('''
    class Table:
        rows = [a[:, :, i].sum() for i in range(out_h)]
    return a
''', ["for i in range(out_h)"]),
    "a_method_that_calls_itself": ('''
    class Rows:
        def each(self, i):
            if i < out_h:
                a[:, :, i] *= 1
                self.each(i + 1)
    Rows.each(None, 0)
    return a
''', ["a loop or a call"]),
    "an_item_of_a_list_that_grows": ('''
    sizes = [kh]
    sizes.append(out_h)
    for n in sizes:
        for i in range(n):
            pass
    return a
''', ["for i in range(n)"]),
    "a_list_grown_where_the_rule_does_not_look": ('''
    rows = [0]
    for t in range(kh):
        list.extend(rows, range(out_h))
    for i in rows:
        pass
    return a
''', ["for i in rows"]),
    "unpacked_through_a_filter": ('''
    first, second = (i for i in range(out_h) if i > out_h - 3)
    return a
''', ["for i in range(out_h)"]),
}


def _kernel_loops_refusal(body: str) -> str:
    from course.checks import check_kernel_loops

    with pytest.raises(AssertionError) as caught:
        check_kernel_loops(_Graded(_HEAD + body, {**SETUP, "itertools": itertools}), "avg_pool2d_numpy")
    return str(caught.value)


@pytest.mark.parametrize("body", KERNEL_LOOPS_HONEST.values(), ids=KERNEL_LOOPS_HONEST.keys())
def test_kernel_loops_honest_vectorized_code_passes(body):
    from course.checks import check_kernel_loops

    check_kernel_loops(_Graded(_HEAD + body, {**SETUP, "itertools": itertools}), "avg_pool2d_numpy")
    namespace: dict = {"np": np, "itertools": itertools}
    exec(compile(_HEAD + body, "<honest>", "exec"), namespace)  # and it runs: right values on a small input
    x = np.arange(2 * 3 * 7 * 8, dtype=np.float64).reshape(2, 3, 7, 8)
    out = namespace["avg_pool2d_numpy"](x, 3, 2, 1)
    assert out.shape == (2, 3, 4, 4)


@pytest.mark.parametrize("cheat", KERNEL_LOOPS_CHEATS, ids=list(KERNEL_LOOPS_CHEATS))
def test_kernel_loops_a_loop_over_the_data_is_refused_and_says_what_to_write(cheat):
    body, words = KERNEL_LOOPS_CHEATS[cheat]
    message = _kernel_loops_refusal(body)
    assert "avg_pool2d_numpy" in message and "for di in range(kh)" in message, message
    for word in words:
        assert word in message, (word, message)


def test_kernel_loops_in_the_notebook_read_the_function_with_its_helpers():
    """In the student's kernel the function's own module supplies the source (with its helpers)."""
    from course.checks import check_kernel_loops, check_output_loops

    honest: dict = {"np": np, "itertools": itertools}
    exec(compile(_HEAD + KERNEL_LOOPS_HONEST["shift_and_add"], "<honest>", "exec"), honest)
    source = _HEAD + KERNEL_LOOPS_HONEST["shift_and_add"]
    honest["avg_pool2d_numpy"].__student_source__ = source  # (exec'd code has no file for inspect)
    check_kernel_loops(honest["avg_pool2d_numpy"], "avg_pool2d_numpy")
    with pytest.raises(AssertionError, match="explicit Python loops"):
        check_output_loops(honest["avg_pool2d_numpy"], "avg_pool2d_numpy")


OUTPUT_LOOPS_HONEST = {
    "four_loops_any_order": '''
    out = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    for i in range(out_h):
        for b in range(x.shape[0]):
            for j in range(out_w):
                for c in range(x.shape[1]):
                    out[b, c, i, j] = a[b, c, i * sh:i * sh + kh, j * sw:j * sw + kw].mean()
    return out
''',
    "positions_with_a_helper_per_window": '''
    def window(i, j):
        return a[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw].sum(axis=(2, 3)) / (kh * kw)

    out = np.empty(x.shape[:2] + (out_h, out_w), x.dtype)
    for j in range(out_w):
        for i in range(out_h):
            out[:, :, i, j] = window(i, j)
    return out
''',
    "nested_comprehensions": '''
    return np.array([[[[a[b, c, i * sh:i * sh + kh, j * sw:j * sw + kw].mean() for j in range(out_w)]
                       for i in range(out_h)] for c in range(x.shape[1])] for b in range(x.shape[0])])
''',
}


@pytest.mark.parametrize("body", OUTPUT_LOOPS_HONEST.values(), ids=OUTPUT_LOOPS_HONEST.keys())
def test_output_loops_honest_loops_pass_vectorized_code_fails(body):
    from course.checks import check_output_loops

    check_output_loops(_Graded(_HEAD.replace("avg_pool2d_numpy", "avg_pool2d_loops") + body), "avg_pool2d_loops")
    for vectorized in ("shift_and_add", "sliding_window_view_no_loop", "prefix_sums"):
        source = _HEAD.replace("avg_pool2d_numpy", "avg_pool2d_loops") + KERNEL_LOOPS_HONEST[vectorized]
        with pytest.raises(AssertionError, match=r"explicit Python loops.*for i in range\(out_h\)"):
            check_output_loops(_Graded(source), "avg_pool2d_loops")
    rows_only = _HEAD.replace("avg_pool2d_numpy", "avg_pool2d_loops") + KERNEL_LOOPS_CHEATS["rows_short_axis"][0]
    with pytest.raises(AssertionError, match="finds 1 loop"):
        check_output_loops(_Graded(rows_only), "avg_pool2d_loops")


def test_the_long_output_case_outruns_every_accepted_loop_and_is_drawn_per_run(grader_state):
    """``long_output_case``: outputs longer than LOOP_LIMIT on both axes at every drawn geometry (within
    the geometry bound the loop rule reads), the same in a notebook, drawn anew per grading run."""
    from course import checks
    from course.reference import avg_pool2d_reference

    assert checks.long_output_case(150) == checks.long_output_case(150)  # a notebook: fixed
    drawn = set()
    for run in range(40):
        grader_state(run_seed=1000 + run)
        shape, kernel, stride, padding = checks.long_output_case(150)
        assert max(kernel + stride + padding) <= checks.GEOMETRY_BOUND
        out = avg_pool2d_reference(np.zeros(shape), kernel, stride, padding).shape
        assert min(out[2:]) > checks.LOOP_LIMIT, (shape, kernel, stride, padding, out)
        drawn.add((kernel, stride, padding))
    assert len(drawn) >= 10, drawn


# --- issue 41 item 1: identity, not spelling ---------------------------------------------------------------
IDENTITY = [  # (what, cheat source, lesson list, honest source of the same shape)
    ("a module that re-exports torch.nn.functional under another name (torch.functional.F)",
     "import torch.functional as tf\ndef pool(c, h, w, k):\n    return tf.F.linear(torch.ones(c), torch.ones(k, c)).sum()",
     LESSON5, "import math\ndef pool(c, h, w, k):\n    return math.prod((c, h, w, k)) + k"),
    ("a layer class no list names, a subclass of nn.Module (torch.ao.quantization.QuantStub)",
     "import torch.ao.quantization as q\ndef pool(c, h, w, k):\n    return q.QuantStub()",
     LESSON5, "import numbers\ndef pool(c, h, w, k):\n    return isinstance(c, numbers.Integral) and c * k + k"),
]


@pytest.mark.parametrize("what, cheat, forbidden, honest", IDENTITY, ids=[row[0][:40] for row in IDENTITY])
def test_forbidden_lists_judge_objects_by_identity(what, cheat, forbidden, honest):
    assert "must not use" in _refusal(cheat, forbidden)
    check_avoids(_Graded(honest), forbidden, "pool")


def test_an_object_is_judged_by_what_it_is_and_a_class_by_what_it_derives_from():
    from course.checks.analysis.identity import forbidden_identities, judged

    assert judged(F.avg_pool2d, LESSON4) and judged(torch.nn.modules.pooling.F.avg_pool2d, LESSON4)
    assert "subclass of" in judged(torch.nn.LazyLinear, ["Linear"])
    assert judged(torch.zeros, LESSON4) is None and judged(np.cumsum, LESSON5) is None
    uses = [("P.avg", ["torch", "nn", "modules", "pooling", "F", "avg_pool2d"], "library"),
            ("tf.F.linear", ["torch", "functional", "F", "linear"], "library")]
    assert forbidden_identities(uses, LESSON5) == ["tf.F.linear (torch.functional.F is torch.nn.functional)"]
    assert forbidden_identities(uses[1:], LESSON4) == []


def test_an_allow_list_names_functions_and_classes_never_whole_modules():
    """Issue 50 item 3: ``typing.*`` admitted ``typing._eval_type``, which ran PyTorch's pooling from a string
    (16 points, twice). A pattern is refused when the list is used; lesson 4's list has none."""
    assert not [entry for entry in TENSOR_ARITHMETIC if "*" in entry]
    with pytest.raises(ValueError, match="allowed: an allow-list names functions and classes"):
        check_avoids(_Graded("def pool(x, k):\n    return x"), LESSON4, "pool", allowed={"typing.*", "int"})
    check_avoids(_Graded("def pool(x, k):\n    return x"), LESSON4, "pool", allowed={"typing.Any", "int"})


def test_nothing_on_the_allow_list_evaluates_text():
    """Every library entry of lesson 4's list is walked to its object; none reaches eval, exec, compile,
    __import__, an unpickler or a YAML loader (a class: construction and the attributes the list names). The
    scan sees the evaluators the tester used (both sides)."""
    import typing

    attributes = {e[1:] for e in TENSOR_ARITHMETIC if e.startswith(".")} | {"__init__", "__new__"}
    for entry in sorted(e for e in TENSOR_ARITHMETIC if "." in e and not e.startswith(".")):
        walked = walk(entry.split("."))
        if len(walked) != entry.count(".") + 1:
            continue  # (numpy.add.at: a ufunc's method, C code)
        assert evaluates_text(walked[-1][1], attributes) is None, entry
    assert not {e for e in TENSOR_ARITHMETIC if "." not in e} & TEXT_EVALUATORS
    assert evaluates_text(typing._eval_type) and evaluates_text(typing.get_type_hints)
    assert evaluates_text(F.pad) is None


STRING_EVALUATORS = [  # the tester's lesson 4 attack and spellings of it: PyTorch's pooling run from a string
    "import typing\ndef pool(x, k):\n    return typing._eval_type(typing.ForwardRef('F.avg_' + 'pool2d(x, k)'), "
    "{'F': F, 'x': x, 'k': k}, None)",
    "import typing as t\ndef pool(x, k):\n    run = t._eval_type\n    return run(t.ForwardRef('F.avg_' + 'pool2d(x, k)'), "
    "{'F': F, 'x': x, 'k': k}, None)",
    "from typing import get_type_hints\ndef pool(x, k):\n    def f(a: 'F.avg_' + 'pool2d(x, k)'):\n        pass\n"
    "    return get_type_hints(f, {'F': F, 'x': x, 'k': k})['a']",
]


@pytest.mark.parametrize("cheat", STRING_EVALUATORS)
def test_a_string_evaluator_in_an_allowed_module_goes_to_review(cheat):
    """Unproved, never allowed: the cell goes to the instructor with the construct and its line quoted."""
    namespace = dict(SETUP)
    exec(compile(cheat, "<cheat>", "exec"), namespace)  # it really pools
    x = torch.rand(1, 1, 4, 4)
    assert torch.equal(namespace["pool"](x, 2), F.avg_pool2d(x, 2))
    with pytest.raises(NeedsReview) as caught:
        check_avoids(_Graded(cheat), LESSON4, "pool", allowed=TENSOR_ARITHMETIC)
    assert re.search(r"line \d, `[^`]+`", caught.value.answer), caught.value.answer


THREE_VERDICTS = {  # source -> verdict under lesson 4's lists
    "allowed": "def pool(x, k):\n    return x.unfold(2, k, k).unfold(3, k, k).mean((-1, -2))",
    "forbidden": "def pool(x, k):\n    ops = F\n    return ops.avg_pool2d(x, k)",
    "review": "def pool(x, k):\n    return getattr(F, 'avg' + '_pool2d')(x, k)",
}


def test_three_verdicts_proved_allowed_proved_forbidden_unproved():
    """Issue 50 item 2: points; 0 with the line and what to write (a plain AssertionError); manual review
    (NeedsReview: 0 until the instructor reads it, the construct and its line recorded)."""
    check_avoids(_Graded(THREE_VERDICTS["allowed"]), LESSON4, "pool", allowed=TENSOR_ARITHMETIC)
    with pytest.raises(AssertionError) as caught:
        check_avoids(_Graded(THREE_VERDICTS["forbidden"]), LESSON4, "pool", allowed=TENSOR_ARITHMETIC)
    assert not isinstance(caught.value, NeedsReview)
    assert "must not use ops.avg_pool2d (torch.nn.functional.avg_pool2d) (line 3, `return ops.avg_pool2d(x, k)`)" \
        in str(caught.value) and "write it yourself" in str(caught.value)
    with pytest.raises(NeedsReview) as caught:
        check_avoids(_Graded(THREE_VERDICTS["review"]), LESSON4, "pool", allowed=TENSOR_ARITHMETIC)
    assert "your instructor will read this code" in str(caught.value).lower()
    assert "getattr (line 2, `return getattr(F, 'avg' + '_pool2d')(x, k)`)" in caught.value.answer
    with pytest.raises(NeedsReview) as caught:  # (the deny-list alone: the reflection itself is named)
        check_avoids(_Graded(THREE_VERDICTS["review"]), LESSON4, "pool")
    assert "`getattr` with a computed attribute name (line 2, `return getattr(F, 'avg' + '_pool2d')(x, k)`)" \
        in caught.value.answer


def test_rule_messages_count_lines_in_the_cell_and_quote_them():
    """Issue 53 item 1: under the grader the rule reads the function's statements gathered from the cells
    (``def`` first); its line numbers count in the cell that holds the line, which is quoted."""
    cell = "import torch\n\n\n# my pooling\ndef pool(x, k):\n    ops = F\n    return ops.avg_pool2d(x, k)\n"
    graded = _Graded("def pool(x, k):\n    ops = F\n    return ops.avg_pool2d(x, k)")
    graded.__student_cells__ = ["x = 1", cell]
    with pytest.raises(AssertionError, match=r"\(line 7 of its cell, `return ops.avg_pool2d\(x, k\)`\)"):
        check_avoids(graded, LESSON4, "pool")
    graded.__student_source__ = "def pool(x, k):\n    return getattr(F, 'avg' + '_pool2d')(x, k)"
    graded.__student_cells__ = ["\n\n" + graded.__student_source__]
    with pytest.raises(NeedsReview) as caught:
        check_avoids(graded, LESSON4, "pool")
    assert "line 4 of its cell, `return getattr(F, 'avg' + '_pool2d')(x, k)`" in caught.value.answer
    text = "def pool(x):\n    y = F\n    return out"  # a line two cells share: the cell holding the rest of it
    assert in_cells("(line 3)", text, ["def a():\n    return out", "\n# mine\ndef pool(x):\n    y = F\n    return out"]) \
        == "(line 5 of its cell, `return out`)"


def test_a_notebook_function_counts_lines_in_its_own_cell(tmp_path):
    """In a notebook (IPython compiles each cell as its own file) the cell is the function's file."""
    import importlib.util

    path = tmp_path / "cell.py"
    path.write_text("import torch.nn.functional as F\n\n\ndef pool(x, k):\n    return F.avg_pool2d(x, k)\n")
    spec = importlib.util.spec_from_file_location("cell_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(AssertionError, match=r"\(line 5 of its cell, `return F.avg_pool2d\(x, k\)`\)"):
        check_avoids(module.pool, LESSON4, "pool")


OWN_CONTAINERS = [  # issue 50: a correct layer that keeps its options in a dict lost 4 points
    "class AvgPool2d(nn.Module):\n    def __init__(self, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
    "        super().__init__()\n        self.options = dict(kernel_size=kernel_size, stride=stride, padding=padding,"
    " count_include_pad=count_include_pad)\n    def forward(self, x):\n        return pool(x, **self.options)\n"
    "    def extra_repr(self):\n        return ', '.join(f'{k}={v}' for k, v in self.options.items())\n"
    "def pool(x, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
    "    return x.unfold(2, kernel_size, kernel_size).unfold(3, kernel_size, kernel_size).mean((-1, -2))",
    "class Pool:\n    def __init__(self, k):\n        self.options = {'k': k}\n        self.sizes = [k, k]\n"
    "        self.names = {n for n in ('k',)}\n    def forward(self, x):\n        k = self.options.get('k')\n"
    "        return x.unfold(2, self.sizes[0], k).unfold(3, k, k).mean((-1, -2)) * len(self.names)\n"
    "def pool(x, k):\n    return Pool(k).forward(x)",
]


@pytest.mark.parametrize("honest", OWN_CONTAINERS)
def test_attributes_an_own_class_sets_to_containers_are_proved(honest):
    check_avoids(_Graded(honest), LESSON4, "AvgPool2d.forward", allowed=TENSOR_ARITHMETIC)


def test_a_container_attribute_that_holds_a_function_is_not_proved():
    cheat = ("class P:\n    def __init__(self):\n        self.options = dict(f=torch.relu)\n"
             "    def forward(self, x):\n        for _, g in self.options.items():\n            return g(x)\n"
             "def pool(x, k):\n    return P().forward(x)")
    with pytest.raises(NeedsReview, match="a function, class or module"):
        check_avoids(_Graded(cheat), LESSON4, "pool")


# --- issue 41 item 2: values of unknown kind are not callable -----------------------------------------------
UNKNOWN_KIND = [  # (what, cheat, honest of the same shape); lesson 5's list (no allow-list: the rule alone)
    ("an attribute of a module passed through a library call (copy.copy)",
     "import copy\ndef pool(c, h, w, k):\n    m = copy.copy(torch)\n    return m.ao.quantization.QuantStub()",
     "import copy\ndef pool(c, h, w, k):\n    shape = copy.copy([c, h, w])\n    return shape.count(c) * k"),
    ("an attribute of what the code's own function returns",
     "def g():\n    return torch\ndef pool(c, h, w, k):\n    return g().ao.quantization.QuantStub()",
     "def g(c):\n    return np.zeros(c)\ndef pool(c, h, w, k):\n    return g(c).sum() + c * k"),
    ("a call's result",
     "def g():\n    return torch.ones\ndef pool(c, h, w, k):\n    return g()(c).sum()",
     "def g(c):\n    return torch.ones(c)\ndef pool(c, h, w, k):\n    return g(c).sum()"),
    ("a value through functools.reduce",
     "import functools\ndef pool(c, h, w, k):\n    m = functools.reduce(lambda a, b: b, [torch])\n    return m.ao.quantization.QuantStub()",
     "import functools, operator\ndef pool(c, h, w, k):\n    n = functools.reduce(operator.mul, [c, h, w])\n    return n * k"),
    ("a value through next/min/sorted/dict.get",
     "def pool(c, h, w, k):\n    m = {'a': torch}.get('a')\n    return max([m], key=id).ao.quantization.QuantStub()",
     "def pool(c, h, w, k):\n    sizes = {'c': c}\n    return max([sizes.get('c'), k]) * sorted([h, w])[0]"),
    ("an attribute read of what the code's own function returns, handed on through max and an alias",
     "def g():\n    return torch.ao.quantization\nt = max([g().QuantStub], key=id)\n"
     "def pool(c, h, w, k):\n    f = t\n    return f()",
     "def g(c):\n    return np.zeros(c)\nt = max([3, 4])\ndef pool(c, h, w, k):\n    f = t\n    return f * g(c).shape[0]"),
    ("a method of one's own class named like the library's does not excuse an attribute of a function's result",
     "class Own:\n    def QuantStub(self):\n        return 0\ndef g():\n    return torch.ao.quantization\n"
     "def pool(c, h, w, k):\n    return g().QuantStub()",
     "class Own:\n    def count(self, c):\n        return c\ndef pool(c, h, w, k):\n    return Own().count(c) * k"),
    ("a student function named like the library's does not excuse it",
     "import copy\ndef QuantStub():\n    return 0\ndef pool(c, h, w, k):\n    return copy.copy(torch.ao.quantization).QuantStub()",
     "def count(c):\n    return c\ndef pool(c, h, w, k):\n    return count(c) * k"),
]


@pytest.mark.parametrize("what, cheat, honest", UNKNOWN_KIND, ids=[row[0][:40] for row in UNKNOWN_KIND])
def test_values_of_unknown_kind_are_not_callable(what, cheat, honest):
    refusal = _refusal(cheat, LESSON5)
    assert "call functions and classes directly" in refusal or "must not use" in refusal, refusal
    check_avoids(_Graded(honest), LESSON5, "pool")
