"""What a dotted path names in the libraries, read without running code, and what kind of value a library
callee returns (:data:`RETURNS`): the objects the resolver (``resolver.py``) resolves names to."""

from __future__ import annotations

import builtins
import fnmatch
import functools
import inspect
import sys
from typing import Any

from course.checks.analysis.lists import DATA_TYPES_FOR_METHODS, NOT_DATA, RETURNS
from course.checks.analysis.text import _is_constant


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


_MISSING = object()


@functools.lru_cache(maxsize=1)
def data_methods() -> frozenset:
    """The method names of tensors, arrays, NumPy's random generators and Python's containers, strings and
    numbers (:data:`DATA_TYPES_FOR_METHODS`): what a value of unknown kind may still be called through."""
    names: set[str] = set()
    for dotted in DATA_TYPES_FOR_METHODS + ("numpy.random.Generator",):
        kind = getattr(builtins, dotted, None) if "." not in dotted else _library_object(dotted)
        if isinstance(kind, type):
            names |= {n for n in dir(kind) if not n.startswith("_")}
    return frozenset(names)


def returns_data(path: str) -> bool:
    """Is ``path`` a library callee whose result is plain data (:data:`RETURNS`, less :data:`NOT_DATA`)?
    ``*`` matches one whole dotted part."""
    if any(path == n or path.startswith(n + ".") for n in NOT_DATA):
        return False
    parts = path.split(".")
    return any(len(p.split(".")) == len(parts) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, p.split(".")))
               for p in RETURNS)


def _may_call(value: Any) -> bool:
    """Might ``value`` be called to reach other code (a function, class, module; or unknown), or hand out
    such a thing: a library's dict, list, tuple or set that holds one (PyTorch's tables of layer classes)?"""
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        items = list(value.keys()) + list(value.values()) if isinstance(value, dict) else list(value)
        return any(callable(v) or inspect.ismodule(v) for v in items[:10_000])
    return value is _MISSING or callable(value) or inspect.ismodule(value)


def _library_object(path: str) -> Any:
    """The object at dotted ``path`` in a module already imported (``torch.float64``), read without
    running code (``inspect.getattr_static``), or ``_MISSING``."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        found = sys.modules.get(".".join(parts[:cut]))
        if found is not None:
            break
    else:
        return _MISSING
    for part in parts[cut:]:
        try:
            found = inspect.getattr_static(found, part)
        except AttributeError:
            return _MISSING
    return found
