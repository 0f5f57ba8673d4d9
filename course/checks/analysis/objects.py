"""What a dotted path names in the libraries, read without running code, and what kind of value a library
callee returns (:data:`RETURNS`): the objects the resolver (``resolver.py``) resolves names to; and what the
resolver reads of a namespace (:class:`SetUp`), as plain data.

Cache (issue 56 item 2): :func:`_names_read`, the names a source's tree reads, once per source text (256 at most)."""

from __future__ import annotations

import builtins
import fnmatch
import functools
import inspect
import sys
import ast
from typing import Any, Iterable

from course.checks.analysis.lists import DATA_TYPES_FOR_METHODS, NOT_DATA, RETURNS
from course.checks.analysis.text import _is_constant, parsed, walked


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


def _carried_by(value: Any, own_module: str | None) -> tuple[str | None, bool, frozenset]:
    """``(taint, holds, paths)`` of a namespace's value for the resolver (its ``_Carried``): its dotted path, or
    for the notebook's own function or class, the taint of a source the check cannot read."""
    path = _origin_of(value, own_module)
    if path is None:
        callable_ = callable(value) and not _is_constant(value)
        return (None if not callable_ else "a name of the notebook whose source the check cannot read"), callable_, \
            frozenset()
    return None, _may_call(value), frozenset([path])


class SetUp:
    """What the resolver and the loop rules read of a namespace (the grader's set-up, or the notebook's globals)
    for the ``names`` a tree reads: per name the namespace binds, ``(taint, holds, paths)`` (:meth:`carried`) and an
    int's size (:meth:`constant`). Plain data (strings, booleans, ints), never the namespace's objects: the key of
    :func:`~course.checks.analysis.resolver.resolver_for`'s cache, beside the source text."""

    __slots__ = ("_entries", "_key")

    def __init__(self, namespace: dict | None, own_module: str | None, names: Iterable[str]):
        namespace = namespace or {}
        self._entries = {name: (_carried_by(namespace[name], own_module), abs(int(namespace[name]))
                                if type(namespace[name]) in (bool, int) else None)
                         for name in sorted(names) if name in namespace}
        self._key = tuple(self._entries.items())

    @classmethod
    def of(cls, source: str, namespace: dict | None, own_module: str | None) -> "SetUp":
        """What the rules read of ``namespace`` for ``source`` (the names its tree reads)."""
        return cls(namespace, own_module, _names_read(source))

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def carried(self, name: str) -> tuple[str | None, bool, frozenset]:
        """``(taint, holds, paths)`` of the namespace's ``name`` (``name`` must be in it)."""
        return self._entries[name][0]

    def constant(self, name: str) -> int | None:
        """``abs`` of the namespace's ``name`` when it is an int (or a bool), else ``None``."""
        entry = self._entries.get(name)
        return entry[1] if entry is not None else None

    def __eq__(self, other) -> bool:
        return isinstance(other, SetUp) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)


@functools.lru_cache(maxsize=256)
def _names_read(source: str) -> frozenset:
    """The identifiers of the ``ast.Name`` nodes of ``source``'s tree: every name a rule may look up in a
    namespace."""
    return frozenset(node.id for node in walked(parsed(source)) if isinstance(node, ast.Name))
