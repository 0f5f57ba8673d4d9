"""Identity, not spelling (issue 41 item 1): the objects a library path names, walked through modules and
classes only, and judged by what they *are* against a lesson's lists.

A path (``torch.nn.modules.pooling.F.avg_pool2d``) is walked from the module it starts with (imported in
the parent when the code imports it) through a module's own attributes (its ``__dict__``, or a submodule)
and a class's (``inspect.getattr_static``): nothing is called, no instance is touched, no property runs. The
walk stops at the first object that is neither a module nor a class (a function, a dtype, a tensor).

A lesson's forbidden list (names and ``*`` patterns, as its tests write them) is turned once per grading run
into the objects it names (:func:`forbidden_objects`): every module whose dotted name has a part it lists,
and every function, class or module that any loaded module holds under a listed name. An object is
forbidden when it is one of those (by identity: ``F.avg_pool2d`` re-exported by ten modules is one object),
when its own name (``__module__``/``__qualname__``, a module's ``__name__``) has a listed part, or, for a
class, when a class it derives from is forbidden (a layer class no list names, subclass of ``nn.Module``).

Caches (issue 56 item 2): :func:`forbidden_objects`, once per list and count of loaded modules; :func:`_matcher`,
a list's patterns compiled once per list (64 lists at most); and
:data:`_NOT_FOUND`, the dotted names that are no importable module here (``importlib.util.find_spec`` says so,
or fails): a fact of the installed libraries, the same for every submission, which the walk asked for again
for each use of each call (``torch.nn.functional.avg_pool2d`` is no module)."""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import importlib
import importlib.util
import inspect
import io
import re
import sys
from typing import Any, Iterable

_MODULE = type(sys)
_MISSING = object()
#: Modules whose import does something beyond defining names (opens a browser, prints, a window): never
#: imported by the grader's parent to walk a path.
_NOT_IMPORTED = {"this", "antigravity", "idlelib", "tkinter", "turtle", "turtledemo", "webbrowser", "__main__"}
#: Dotted names that are no importable module (see the module's docstring); at most 100,000 are kept.
_NOT_FOUND: set[str] = set()


def part_matches(part: str, entries: Iterable[str]) -> bool:
    """Does one dotted part (``avg_pool2d``) match an entry: a name exactly, or a case-insensitive pattern
    with ``*`` (``*pool*``)? Parts are whole: a pattern never matches across a dot."""
    names, patterns = _matcher(tuple(entries))
    return part in names or (patterns is not None and patterns.match(part.lower()) is not None)


@functools.lru_cache(maxsize=64)
def _matcher(entries: tuple) -> tuple[frozenset, re.Pattern | None]:
    """``entries`` as a set of exact names and one regular expression of every pattern (``fnmatch``'s, lower
    case), once per list: what :func:`part_matches` tests, as ``fnmatch.fnmatchcase`` of each would."""
    patterns = [fnmatch.translate(e.lower()) for e in entries if "*" in e]
    return frozenset(e for e in entries if "*" not in e), re.compile("|".join(patterns)) if patterns else None


def _import(name: str) -> Any:
    """The module ``name``, imported in the parent if it is not yet (its output swallowed), or ``_MISSING``."""
    found = sys.modules.get(name)
    if found is not None:
        return found
    if name.split(".")[0] in _NOT_IMPORTED or name in _NOT_FOUND:
        return _MISSING
    try:
        spec = importlib.util.find_spec(name)
    except Exception:  # noqa: BLE001 - a parent that is no package: no such module
        spec = None
    if spec is None:
        if len(_NOT_FOUND) < 100_000:
            _NOT_FOUND.add(name)
        return _MISSING
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - not importable here: nothing to walk
        return _MISSING


def walk(path: list[str]) -> list[tuple[str, Any]]:
    """``[(spelled prefix, object)]`` along ``path`` while it can be walked without running code: from the
    first part as a module, through modules (their attributes, or submodules) and classes
    (``inspect.getattr_static``); it ends at the first object that is neither, or at a part not found."""
    if not path:
        return []
    current = _import(path[0])
    if current is _MISSING:
        return []
    found = [(path[0], current)]
    for index, part in enumerate(path[1:], start=1):
        if isinstance(current, _MODULE):
            following = current.__dict__.get(part, _MISSING)
            if following is _MISSING:
                name = current.__dict__.get("__name__")
                following = _import(f"{name}.{part}") if isinstance(name, str) else _MISSING
        elif isinstance(current, type):
            try:
                following = inspect.getattr_static(current, part)
            except AttributeError:
                following = _MISSING
        else:
            break
        if following is _MISSING:
            break
        current = following
        found.append((".".join(path[:index + 1]), current))
    return found


def _names(value: Any) -> list[str]:
    """An object's own dotted names: a module's ``__name__``; a function's or class's ``__module__`` and
    ``__qualname__`` (read from the object itself, never from an instance's class machinery)."""
    if isinstance(value, _MODULE):
        name = value.__dict__.get("__name__")
        return [name] if isinstance(name, str) else []
    if not (isinstance(value, type) or inspect.isroutine(value) or type(value).__name__ == "ufunc"):
        return []
    names = []
    for attribute in ("__module__", "__qualname__", "__name__"):
        try:
            text = inspect.getattr_static(value, attribute) if isinstance(value, type) else getattr(value, attribute)
        except AttributeError:
            continue
        if isinstance(text, str):
            names.append(text)
    return names


def _holdable(value: Any) -> bool:
    return isinstance(value, (_MODULE, type)) or inspect.isroutine(value) or type(value).__name__ == "ufunc"


@functools.lru_cache(maxsize=64)
def _forbidden_objects(entries: tuple, loaded: int) -> dict:
    found: dict[int, tuple[Any, str]] = {}
    names, patterns = _matcher(entries)

    def matches(part: str) -> bool:  # part_matches(part, entries), with the list's matcher at hand
        return part in names or (patterns is not None and patterns.match(part.lower()) is not None)

    for name, module in list(sys.modules.items()):
        if not isinstance(module, _MODULE):
            continue
        if any(matches(part) for part in name.split(".")):
            found[id(module)] = (module, name)
        try:
            items = list(module.__dict__.items())
        except Exception:  # noqa: BLE001 - a module without a plain namespace
            continue
        for attribute, value in items:
            if isinstance(attribute, str) and matches(attribute) and _holdable(value) and id(value) not in found:
                found[id(value)] = (value, f"{name}.{attribute}")
    return found


def forbidden_objects(entries: Iterable[str]) -> dict:
    """``{id: (object, a dotted name of it)}``: the objects ``entries`` names among the loaded modules (once
    per grading run: cached by the list and by how many modules are loaded)."""
    return _forbidden_objects(tuple(sorted(set(entries))), len(sys.modules))


def judged(value: Any, entries: Iterable[str]) -> str | None:
    """Why ``value`` is forbidden by ``entries`` (a sentence naming what it is), or ``None``."""
    entries = tuple(entries)
    table = forbidden_objects(entries)
    candidates = [value]
    if isinstance(value, type):
        candidates = [c for c in inspect.getmro(value) if c is not object]
    for candidate in candidates:
        names = _names(candidate)
        if id(candidate) in table and table[id(candidate)][0] is candidate:
            why = table[id(candidate)][1]
        elif any(part_matches(part, entries) for text in names for part in text.split(".")):
            why = ".".join(names[:2])
        else:
            continue
        return why if candidate is value else f"{'.'.join(_names(value)[:2])}, a subclass of {why}"
    return None


def forbidden_identities(uses: Iterable[tuple[str, list[str], str]], entries: Iterable[str]) -> list[str]:
    """The ``("library"`` or ``"import")`` uses (:meth:`_Resolver.kinded_uses`) whose walked path reaches an
    object that ``entries`` forbids, at any step: one entry each, as written with what it is."""
    entries = tuple(entries)
    found = []
    for written, path, kind in uses:
        if kind not in ("library", "import") or any(part_matches(part, entries) for part in path):
            continue  # (a path spelled with a listed part is refused by its spelling already)
        for spelled, value in walk(list(path)):
            why = judged(value, entries)
            if why is not None:
                found.append(f"{written} (it is {why})" if spelled == ".".join(path) else
                             f"{written} ({spelled} is {why})")
                break
    return list(dict.fromkeys(found))


def own_attribute(value: Any, prefix: str) -> bool:
    """Is ``value``, reached as an attribute of module ``prefix`` through a ``prefix.*`` allow-list entry, that
    module's own (not a module it imports, nor a function or class it re-exports from elsewhere)?"""
    if isinstance(value, _MODULE):
        return False
    names = _names(value)
    module = names[0] if names and (isinstance(value, type) or inspect.isroutine(value)) else None
    if isinstance(module, str):
        return module == prefix or module.startswith(prefix + ".") or module.lstrip("_") == prefix
    return True


#: What evaluates text or loads objects (issue 50 item 3): never on an allow-list, nor anything reaching it.
TEXT_EVALUATORS = {"eval", "exec", "compile", "__import__", "loads", "load", "Unpickler",
                   "_eval_type", "_evaluate", "safe_load", "full_load", "unsafe_load", "run_path", "run_module",
                   "literal_eval", "get_type_hints", "ForwardRef", "locate", "resolve_name"}


def evaluates_text(item: Any, methods: Iterable[str] = ("__init__", "__new__"), depth: int = 3) -> str | None:
    """Where ``item`` (a function, or a class's ``methods``: those an allow-list lets code call) reaches what
    :data:`TEXT_EVALUATORS` names, read from its Python code (the names each code object reads, its nested
    code, and, ``depth`` calls deep, the functions of its module it calls by name), or ``None``: a C function
    runs no Python text of its own. A sentence naming the function and what it reaches."""
    seen: set[int] = set()

    def codes(thing: Any) -> list:
        thing = getattr(thing, "__func__", thing)
        if inspect.isclass(thing):  # the methods code may call (an allow-list's attributes, construction)
            return [c for name, v in vars(thing).items() if name in methods and not inspect.isclass(v)
                    for c in codes(getattr(v, "fget", v))]
        code = getattr(thing, "__code__", None)
        return [code] if code is not None else []

    def visit(thing: Any, level: int) -> str | None:
        for code in codes(thing):
            stack = [code]
            while stack:
                current = stack.pop()
                if id(current) in seen:
                    continue
                seen.add(id(current))
                hit = set(current.co_names) & TEXT_EVALUATORS
                if hit:
                    return f"{getattr(thing, '__qualname__', thing)} reaches {sorted(hit)[0]}"
                stack += [c for c in current.co_consts if inspect.iscode(c)]
                if level > 0:
                    module = sys.modules.get(getattr(thing, "__module__", "") or "")
                    for name in current.co_names:
                        called = getattr(module, name, None) if module is not None else None
                        if inspect.isfunction(called) or inspect.isclass(called):
                            found = visit(called, level - 1)
                            if found:
                                return found
        return None

    return visit(item, depth)
