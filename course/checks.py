"""The checks that graded test cells call: one test, two places.

In a student's notebook these helpers run on the student's own objects and fail with a message that
teaches. In the trusted grader (``autograder.trusted``) the *same* test-cell code runs again in a clean
parent process where every name that the student's solution cells defined is a stand-in
(:class:`StudentCall`-like proxy): calling it runs the student's code in a sandboxed child process and
hands back plain data only (arrays, tensors rebuilt from arrays, numbers, strings, tuples, or the
student's exception as the matching built-in type). The comparison itself then runs in the parent,
which never ran student code.

The rules for writing a graded test cell, so that both places work:

* get the student's results only by calling student names (functions, classes, ``Cls.apply``) or by
  reading student variables; pass them inputs made in the test cell (seeded);
* judge with the ``check_*`` helpers below (plain ``assert`` is fine too);
* a helper that must run *next to* the student's code (because it calls ``.backward()`` on a tensor,
  say) is marked :func:`runs_with_student_code`; the grader ships the whole call to the child;
* end the cell with a statement (``print(...)``), never a bare expression.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import inspect
import math
import re
import textwrap
import unicodedata
from typing import Any, Callable, Iterable

import numpy as np


@functools.lru_cache(maxsize=256)
def _parse(source: str) -> ast.Module:
    """``ast.parse``, once per source text (the checks read the tree, never change it)."""
    return ast.parse(source)

__all__ = [
    "check_array",
    "check_value",
    "check_raises",
    "check_answered",
    "check_short_answer",
    "normalised_answer",
    "check_avoids",
    "runs_with_student_code",
    "random_input",
    "source_of",
]

#: Attribute the trusted grader sets on a helper that must run beside the student's code.
RUNS_WITH_STUDENT_CODE = "__runs_with_student_code__"


#: Every helper marked :func:`runs_with_student_code`, by its spec ``"module:qualname"``.
MARKED_HELPERS: dict[str, Callable] = {}

#: Set by the trusted grader (in its parent process only) while it grades one submission: an object with
#: ``wants(args, kwargs) -> bool`` (do the arguments hold stand-ins for student objects?) and
#: ``send(spec, args, kwargs)`` (run the helper in the sandboxed child, return its plain-data result) and
#: ``timed_call(function, args, kwargs)`` (call a student function, return its result and the CPU seconds
#: the child spent, read from outside the child).
#: ``None`` in a student's kernel and in the child, where marked helpers are ordinary calls.
router = None


def runs_with_student_code(helper: Callable) -> Callable:
    """Mark ``helper`` as one that must run in the process that holds the student's objects.

    It must only *compute values* (run student code at the inputs it is given and return plain data),
    never decide a verdict: whatever runs beside student code can be faked by it. In a notebook it is
    an ordinary call. In the trusted grader's parent, a call whose arguments hold student objects (from
    a test cell, or from another helper) goes to the sandboxed child, and its result comes back as plain
    data to be judged in the parent.
    """
    spec = f"{helper.__module__}:{helper.__qualname__}"

    @functools.wraps(helper)
    def wrapper(*args, **kwargs):
        current = router
        if current is not None and current.wants(args, kwargs):
            return current.send(spec, args, kwargs)
        return helper(*args, **kwargs)

    setattr(wrapper, RUNS_WITH_STUDENT_CODE, spec)
    MARKED_HELPERS[spec] = wrapper
    return wrapper


#: Set by the trusted grader (in its parent process only) while it grades one submission: the grading
#: run's seed (an int the record keeps). With it, :func:`input_generator` and :func:`random_input` draw
#: from both it and the test's own seed, so hidden inputs change from one grading run to the next and
#: the same run seed gives the same inputs again. ``None`` in a student's kernel and in the child.
run_seed = None

#: The kinds of input :func:`random_input` draws from under the grader, one per call (see there), and how
#: often: pooling mostly follows a ReLU, so ReLU outputs come most often.
INPUT_KINDS = {"normal": 0.15, "relu": 0.4, "integer": 0.15, "large": 0.15, "tiny": 0.15}


def input_generator(seed: int) -> np.random.Generator:
    """The generator a test draws from: seeded by ``seed`` alone in a notebook (the same on every
    machine), by ``(run_seed, seed)`` under the trusted grader (fresh every grading run, reproducible
    from the record's seed)."""
    return np.random.default_rng(seed if run_seed is None else [int(run_seed), int(seed)])


def random_input(shape: Iterable[int], dtype: Any = np.float64, seed: int = 0) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` drawn from :func:`input_generator` ``(seed)``.

    In a notebook: standard normal, the same on every machine. Under the trusted grader each call draws
    one of :data:`INPUT_KINDS`: standard normal; ReLU outputs (``max(z - 0.5, 0)``: zeros inside windows,
    sometimes whole windows of them); small integers in ``[-4, 4]`` (exact in every float dtype); large
    magnitudes (``1e3`` to ``1e4``, a third of them 0, one sign per call: a window's sum has no
    cancellation that float rounding could turn into an error above ``rtol``); tiny ones (standard
    normal ``× 1e-3``). Every value is finite in float16 too.
    """
    shape = tuple(shape)
    rng = input_generator(seed)
    if run_seed is None:
        return rng.standard_normal(shape).astype(dtype)
    kind = rng.choice(list(INPUT_KINDS), p=list(INPUT_KINDS.values()))
    if kind == "relu":
        values = np.maximum(rng.standard_normal(shape) - 0.5, 0.0)
    elif kind == "integer":
        values = rng.integers(-4, 5, shape).astype(np.float64)
    elif kind == "large":
        values = rng.choice([-1.0, 1.0]) * rng.uniform(1e3, 1e4, shape) * (rng.random(shape) < 2 / 3)
    elif kind == "tiny":
        values = rng.standard_normal(shape) * 1e-3
    else:
        values = rng.standard_normal(shape)
    return values.astype(dtype)


def _plain(value: Any) -> str:
    """``repr`` of a value with NumPy scalars shown as plain numbers (``1.0``, not ``np.float64(1.0)``)."""
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_plain(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    return repr(value)


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _as_numpy(value: Any) -> np.ndarray:
    """A plain ndarray view of an ndarray or a torch tensor (moved to the CPU)."""
    if type(value) is np.ndarray:
        return value
    return value.detach().cpu().numpy()


def check_array(actual: Any, expected: Any, name: str, *, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Assert that ``actual`` matches the reference ``expected`` (an ndarray or a torch tensor).

    Checks, in this order and each with its own message: the exact type (``np.ndarray`` or
    ``torch.Tensor``, no subclass), the shape, the dtype, that every value is finite, then
    ``|actual - expected| <= atol + rtol * |expected|`` element-wise.
    """
    expected_type = type(expected)
    if type(actual) is not expected_type:
        raise AssertionError(
            f"{name}: expected a {_type_name(expected)} but got {_type_name(actual)}"
            " (return the array itself, not a subclass, list or scalar)"
        )
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(
            f"{name}: expected shape {tuple(expected.shape)} but got {tuple(actual.shape)}"
        )
    if actual.dtype != expected.dtype:
        raise AssertionError(
            f"{name}: expected dtype {expected.dtype} but got {actual.dtype}"
            " (the output keeps the input's dtype)"
        )
    got, want = _as_numpy(actual), _as_numpy(expected)
    if not np.isfinite(got).all():
        bad = np.argwhere(~np.isfinite(got))[0]
        raise AssertionError(f"{name}: non-finite value {got[tuple(bad)]} at index {tuple(int(i) for i in bad)}")
    error = np.abs(got.astype(np.float64) - want.astype(np.float64))
    allowed = atol + rtol * np.abs(want.astype(np.float64))
    if (error > allowed).any():
        worst = np.unravel_index(int(np.argmax(error - allowed)), error.shape)
        where = tuple(int(i) for i in worst)
        raise AssertionError(
            f"{name}: {int((error > allowed).sum())} of {error.size} values differ; worst at index {where}:"
            f" got {_plain(got[where])}, expected {_plain(want[where])} (max abs error {error.max():.3g},"
            f" tolerance atol={atol:g}, rtol={rtol:g})"
        )


def _same_plain(actual: Any, expected: Any) -> bool:
    if isinstance(expected, (tuple, list)):
        return (
            type(actual) is type(expected)
            and len(actual) == len(expected)
            and all(_same_plain(a, e) for a, e in zip(actual, expected))
        )
    if type(expected) is bool:
        return type(actual) in (bool, np.bool_) and bool(actual) == expected
    if type(expected) is int:
        is_int = type(actual) is int or (isinstance(actual, np.integer) and type(actual) is not np.bool_)
        return is_int and int(actual) == expected
    if type(expected) is float:
        is_real = type(actual) in (float, int) or isinstance(actual, (np.floating, np.integer))
        return is_real and math.isclose(float(actual), expected, rel_tol=1e-9, abs_tol=1e-12)
    return type(actual) is type(expected) and actual == expected


def check_value(actual: Any, expected: Any, name: str) -> None:
    """Assert that a plain value (int, float, bool, str, or a tuple/list of them) equals ``expected``.

    The type must match too (an ``int`` where an ``int`` is asked, a ``tuple`` where a tuple is asked);
    NumPy scalars count as ints and floats; floats compare with a relative tolerance of 1e-9.
    """
    if not _same_plain(actual, expected):
        raise AssertionError(
            f"{name}: expected {_plain(expected)} ({_type_name(expected)}) but got {_plain(actual)} ({_type_name(actual)})"
        )


def check_raises(error: type[BaseException], mentions: Iterable[str], function: Callable, *args, **kwargs) -> None:
    """Assert that ``function(*args, **kwargs)`` raises ``error`` whose message names every word in ``mentions``.

    A good error names the argument and the rule it broke, e.g. ``"kernel_size must be >= 1, got 0"``.
    """
    call = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    try:
        function(*args, **kwargs)
    except error as exc:
        message = str(exc)
        missing = [word for word in mentions if word.lower() not in message.lower()]
        if missing:
            raise AssertionError(
                f"({call}) raised {type(exc).__name__}({message!r}), but the message should mention"
                f" {', '.join(repr(w) for w in missing)} so the caller knows which argument and rule"
            ) from None
        return
    except Exception as exc:  # the wrong kind of error
        raise AssertionError(
            f"({call}) should raise {error.__name__} but raised {type(exc).__name__}: {exc}"
        ) from None
    raise AssertionError(f"({call}) should raise {error.__name__}, but it returned normally")


#: How a knowledge-check answer must be written, by form.
_FORMS = {"true/false": "True or False (Python's booleans, no quotes)",
          "short answer": 'a few words in a string, e.g. "..."'}


def check_answered(answer: Any, name: str, form: Any, taught_in: str) -> str:
    """Check the *form* of a knowledge-check answer; return formative feedback (to print) that never
    depends on the key: how the answer was read, and where the topic is taught.

    ``form`` is a list of letters (multiple choice), ``"true/false"`` or ``"short answer"``.
    """
    if isinstance(form, str) and form not in _FORMS:
        raise ValueError(f"form must be a list of letters, 'true/false' or 'short answer', got {form!r}")
    if form == "true/false":
        ok = type(answer) is bool
        read = repr(answer)
    elif form == "short answer":
        ok = type(answer) is str and len(normalised_answer(answer).replace(" ", "")) >= 3
        read = repr(normalised_answer(answer)) if ok else ""
    else:
        ok = any(type(answer) is type(option) and answer == option for option in form)
        read = repr(answer)
    if not ok:
        wanted = _FORMS.get(form) if isinstance(form, str) else f"one of {list(form)!r}"
        raise AssertionError(f"{name}: answer with {wanted}, got {answer!r}")
    return f"{name}: answered, read as {read}. Unsure? It is taught in {taught_in}."


def normalised_answer(text: str) -> str:
    """A short answer as the grader reads it: lower case, Unicode compatibility forms folded, one space
    between words and none around brackets, commas and ``=`` (so ``"(N, C, 1, 1)"`` reads
    ``"(n,c,1,1)"``), no surrounding spaces or final full stop."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold()
    folded = re.sub(r"\s+", " ", folded).strip().rstrip(".").strip()
    return re.sub(r"\s*([()\[\],=×*])\s*", r"\1", folded)


def check_short_answer(answer: Any, name: str, all_of: Iterable[str], none_of: Iterable[str] = ()) -> None:
    """Grade a short answer by meaning: its :func:`normalised_answer` must match every regular expression
    of ``all_of`` (the key ideas, each with its spellings) and none of ``none_of`` (ideas that contradict
    it, so naming every option scores nothing)."""
    if type(answer) is not str:
        raise AssertionError(f"{name}: a short answer is a string, got {answer!r}")
    text = normalised_answer(answer)
    if not all(re.search(pattern, text) for pattern in all_of) or any(re.search(p, text) for p in none_of):
        raise AssertionError(f"{name}: {answer!r} is not the answer")


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
        for node in ast.walk(_parse(text)):
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


def _origin_of(value: Any, own_module: str | None) -> str | None:
    """Where an object of a namespace comes from, as a dotted path (``torch.nn.functional.avg_pool2d``),
    or ``None`` for the code's own objects and plain constants (their source is read anyway)."""
    if _is_constant(value):
        return None
    value = getattr(value, "func", value) if isinstance(value, functools.partial) else value
    if inspect.ismodule(value):
        return value.__name__
    module = getattr(value, "__module__", None) if (callable(value) or inspect.isclass(value)) else None
    if not isinstance(module, str):
        kind = type(value)
        module, name = kind.__module__, kind.__qualname__
    else:
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "")
    if module == own_module:
        return None
    return f"{module}.{name}" if name else module


def _chain(node: ast.AST) -> tuple[ast.Name | None, list[str]]:
    """``a.b.c`` -> (the Name ``a``, ["b", "c"]); for ``f(x).b`` the base is not a name (None)."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.insert(0, node.attr)
        node = node.value
    return (node if isinstance(node, ast.Name) else None), attributes


def _uses(tree: ast.AST, namespace: dict | None = None, own_module: str | None = None) -> list[tuple[str, list[str]]]:
    """What the code refers to, resolved: ``(as written, dotted path)`` per use. A name is resolved by the
    code's own imports (``import torch.nn.functional as F``: ``F.conv2d`` is ``torch.nn.functional.conv2d``),
    then by ``namespace`` (the notebook's, or the set-up's under the grader), else it stays as written
    (a built-in, or a name the code does not show). The code's own functions, classes, variables and
    arguments, and the attributes of ``self``/``ctx``/``cls``, are its own: not uses (a local called
    ``reference`` or a helper ``def parameters()`` is not a use of anything); attributes read from its
    own values (``x.reshape``) are uses by name."""
    namespace = namespace or {}
    own = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module or ''}.{alias.name}".lstrip(".")
    local = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))}
    local |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    uses: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            modules += [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) else []
            uses += [(f"import {module}", module.split(".")) for module in modules if module]
    consumed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in consumed:
            inner = node.value
            while isinstance(inner, ast.Attribute):
                consumed.add(id(inner))
                inner = inner.value
            base, attributes = _chain(node)
            written = ast.unparse(node) if base is not None else "." + ".".join(attributes)
            if base is None:
                uses.append((written, attributes))
                continue
            consumed.add(id(base))
            uses.append(_resolved(base.id, attributes, written, own, imported, local, namespace, own_module))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in consumed:
            uses.append(_resolved(node.id, [], node.id, own, imported, local, namespace, own_module))
    return [use for use in uses if use[1]]


def _resolved(name, attributes, written, own, imported, local, namespace, own_module) -> tuple[str, list[str]]:
    if name in own or (name in ("self", "ctx", "cls") and name in local):
        return written, []
    if name in imported:
        path = imported[name]
    elif name in local:
        return written, attributes
    elif name in namespace:
        path = _origin_of(namespace[name], own_module)
        if path is None:
            return written, attributes
    else:
        path = name
    resolved = ".".join([path] + attributes)
    return (written if resolved == written else f"{written} ({resolved})"), resolved.split(".")


def forbidden_uses(tree: ast.AST, forbidden: Iterable[str], namespace: dict | None = None,
                   own_module: str | None = None) -> list[str]:
    """The uses of ``tree`` (see :func:`_uses`) whose resolved path has a part that ``forbidden`` lists: an
    entry is a name (``torch``, ``avg_pool2d``), or a case-insensitive pattern with ``*`` (``"*pool*"``
    covers ``lp_pool2d``, ``avg_pool3d``, ``AdaptiveAvgPool2d``, ``torch.nn.modules.pooling``). What the
    code defines itself (its helper ``pool_rows``, its class ``AvgPool2dFunction``, ``self.pool_size``,
    a constant ``POOL_NDIM = 4``) is never a use: its source is part of ``tree`` anyway."""
    entries = list(forbidden)

    def matches(part: str) -> bool:
        return any(fnmatch.fnmatchcase(part.lower(), e.lower()) if "*" in e else part == e for e in entries)

    found = [written for written, path in _uses(tree, namespace, own_module) if any(matches(p) for p in path)]
    return sorted(set(found))


#: What an exercise's code may not do, because it would hide from a reader (and from the grader) what
#: the code calls: run code built from strings, reach into interpreter internals, or work elsewhere.
DYNAMIC_CALLS = {"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "setattr", "delattr",
                 "breakpoint", "memoryview"}
INTERNAL_MODULES = {"importlib", "ctypes", "gc", "inspect", "threading", "_thread", "multiprocessing",
                    "subprocess", "os", "signal", "builtins", "types", "marshal", "pickle", "concurrent",
                    "code", "codeop", "runpy", "pty", "socket", "asyncio", "shutil", "dis", "weakref"}
#: ``sys`` is fine for printing (``sys.stderr``); these parts of it reach the interpreter's machinery.
SYS_INTERNALS = {"modules", "settrace", "setprofile", "gettrace", "getprofile", "_getframe", "meta_path",
                 "path_hooks", "path_importer_cache", "addaudithook", "_current_frames", "setrecursionlimit"}
ALLOWED_DUNDERS = {"__name__", "__qualname__", "__init__", "__doc__", "__class__"}
ALLOWED_TEXT = ("allowed: NumPy and PyTorch operations, plain attribute access (np.sum, x.shape), Python's "
                "built-ins such as range, len, min, max, isinstance, and your own helper functions")


def dynamic_code(tree: ast.AST) -> list[str]:
    """What in ``tree`` hides what it calls (see :data:`DYNAMIC_CALLS`, :data:`INTERNAL_MODULES`,
    :data:`SYS_INTERNALS`): one
    sentence per construct found, empty when the code is plain."""
    found: list[str] = []
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


def check_avoids(function: Any, forbidden: Iterable[str], name: str) -> None:
    """Assert that the source of ``function`` (with every helper it uses) uses nothing that ``forbidden``
    lists, by what each name resolves to (modules, functions, or ``*`` patterns: :func:`forbidden_uses`;
    ``F.conv2d`` is ``torch.nn.functional.conv2d``, a helper of one's own called ``reference`` is one's
    own), and hides nothing it calls
    (:func:`dynamic_code`: no ``getattr`` with a computed name, ``eval``, ``__import__``, ``importlib``,
    ``sys``, ``gc``, threads, ``.__dict__``...). Under the
    grader that last rule covers every statement of the solution cells, not just ``function``'s source:
    top-level code that reaches the grader's helpers (e.g. through ``gc``) hides what the tests call.

    Used where an exercise forbids a library shortcut, e.g. ``torch`` or ``avg_pool2d`` in the loops
    lesson. Under the grader the source is the student's as submitted, read in the grader's process.
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
    found = forbidden_uses(tree, forbidden, namespace, own_module)
    if found:
        raise AssertionError(f"{name}: this exercise must not use {', '.join(found)}; write it yourself "
                             f"({ALLOWED_TEXT})")
    hidden = dynamic_code(tree)
    if hidden:
        raise AssertionError(f"{name} (or a helper it uses) uses {'; '.join(hidden)}: code that hides what it "
                             f"calls cannot be checked, so it is not accepted here ({ALLOWED_TEXT})")
    whole = getattr(function, "__submission_source__", None)  # every solution cell, under the grader
    try:
        hidden = dynamic_code(_parse(whole)) if whole is not None else []
    except SyntaxError:
        hidden = []  # a cell that does not parse has already failed to run
    if hidden:
        raise AssertionError(f"your solution cells use {'; '.join(hidden)} outside {name}: code that reaches "
                             f"into the interpreter can change what the tests call, so no test of how you "
                             f"wrote {name} accepts it; remove it from every solution cell ({ALLOWED_TEXT})")
