"""Your own work from an earlier lesson, read from your own notebook of that lesson: asked once, used after.

Lessons 2-4 call ``output_size``, which lesson 1 grades, and lesson 3 compares with your lesson 2 loops.
Rather than asking you to paste them again, :func:`own_work` reads the cells that define them from *your*
notebook of that lesson, in the folder beside this lesson's (``../lesson1_by_hand/*.ipynb``, where the
course's assignments are fetched side by side), and runs their definitions. Nothing here holds an answer of
the course: where your earlier notebook is missing or the function is not written yet, what you get is a
stand-in that says so when called (a :class:`MissingWork`, which is a ``NotImplementedError``).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Callable

#: Top-level statements run from the earlier notebook's cells: definitions and imports only (no prints, no runs).
_DEFINITIONS = (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)


class MissingWork(NotImplementedError):
    """A function of an earlier lesson that could not be read from the student's own notebook."""


def _notebooks(lesson: str, folder: Path) -> list[Path]:
    """The notebooks of ``lesson`` in ``folder`` (``<folder>/<lesson>/``), the lesson's own name first."""
    here = folder / lesson
    named = here / f"{lesson}.ipynb"
    others = sorted(p for p in here.glob("*.ipynb") if p != named) if here.is_dir() else []
    return ([named] if named.is_file() else []) + others


def _code_cells(path: Path) -> list[tuple[bool, str]]:
    """(is the set-up (the first code cell) or a solution cell; source) of each code cell of the notebook at ``path``."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    out = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        solution = bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution"))
        out.append((solution or not out, source))
    return out


def _reads_own_work(statement: ast.stmt) -> bool:
    """Whether ``statement`` is ``name(s) = own_work(...)`` (that lesson's own reading of an earlier one)."""
    return (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name) and statement.value.func.id == "own_work")


def _run_definitions(cells: list[tuple[bool, str]]) -> dict[str, Any]:
    """The namespace of the set-up and solution cells' top-level definitions and imports, and of every cell's
    ``... = own_work(...)`` (what that lesson read from an earlier one), each run on its own, in order (one that
    fails is left out: a stub's ``raise`` never runs, since only definitions do)."""
    namespace: dict[str, Any] = {"__name__": "earlier_lesson", "own_work": own_work}
    for definitions, source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for statement in tree.body:
            if (definitions and isinstance(statement, _DEFINITIONS)) or _reads_own_work(statement):
                try:
                    exec(compile(ast.Module([statement], []), "earlier lesson", "exec"), namespace)
                except Exception:  # noqa: BLE001 - a statement that fails is left out; the message says what is missing
                    continue
    return namespace


def _unfinished(function: Callable) -> bool:
    """Whether ``function`` is still the released stub (its code names NotImplementedError and nothing else)."""
    code = getattr(function, "__code__", None)
    return code is not None and set(code.co_names) == {"NotImplementedError"}


def _stand_in(name: str, why: str) -> Callable:
    def missing(*args, **kwargs):
        raise MissingWork(why)
    missing.__name__ = missing.__qualname__ = name
    missing.__doc__ = why
    return missing


def own_work(lesson: str, *names: str, folder: Path | str | None = None) -> Any:
    """The functions ``names`` as your notebook of ``lesson`` defines them (one name: the function; several: a
    tuple), read from ``<folder>/<lesson>/`` (``folder``: the parent of the current folder by default). A name
    your notebook lacks, or still holds as the released stub, is a stand-in that raises :class:`MissingWork`
    saying where it was looked for, when called."""
    if not names:
        raise ValueError("own_work needs at least one name to read, e.g. own_work('lesson1_by_hand', 'output_size')")
    folder = Path.cwd().parent if folder is None else Path(folder)
    found: dict[str, Any] = {}
    where = folder / lesson / f"{lesson}.ipynb"
    for path in _notebooks(lesson, folder):
        try:
            namespace = _run_definitions(_code_cells(path))
        except (OSError, ValueError):
            continue
        where = path
        found = {n: namespace[n] for n in names if callable(namespace.get(n)) and not _unfinished(namespace[n])}
        if found:
            break
    functions = []
    for name in names:
        if name not in found:
            why = (f"{name} comes from your {lesson} notebook, and it is not written there yet or that notebook "
                   f"is not at {where}. Finish {name} in {lesson}, save it, and run this cell again (or define "
                   f"{name} yourself in this cell).")
            found[name] = _stand_in(name, why)
        functions.append(found[name])
    return functions[0] if len(functions) == 1 else tuple(functions)
