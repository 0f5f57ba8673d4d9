"""The reference solutions, taken from ``source/<lesson>/<lesson>.ipynb`` the way the grader takes them.

Only the code of the nbgrader solution cells (metadata ``nbgrader.solution: true``) runs, in order, in a
fresh namespace; never a second copy of the code. Solution cells use the names the lesson's setup cell
imports (``np``, ``torch``, ``F``...), so the namespace first receives the *import statements* of the
notebook's other code cells (and nothing else of them). A lesson that is missing or broken is reported
as not available, with the reason, instead of stopping the benchmarks.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from autograder.coursedir import REPO, CourseError, notebook

#: The names each benchmarked lesson must define (the contract of lessons 2-4).
REQUIRED = {
    "lesson2_loops": ("avg_pool2d_loops", "avg_pool2d_loops_backward"),
    "lesson3_numpy": ("avg_pool2d_numpy", "avg_pool2d_numpy_backward"),
    "lesson4_torch": ("AvgPool2dFunction", "avg_pool2d_torch", "AvgPool2d"),
}


@dataclass
class Solutions:
    """The objects one lesson's solution cells define, or why there are none (``reason``)."""

    lesson: str
    names: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None

    @property
    def available(self) -> bool:
        return self.reason is None

    def __getitem__(self, name: str) -> Any:
        return self.names[name]

    def status(self) -> str:
        """``"available"`` or ``"not available (<reason>)"``."""
        return "available" if self.available else f"not available ({self.reason})"


def lesson_notebook(lesson: str, root: Path = REPO) -> Path | None:
    """The one notebook of ``source/<lesson>/``, or None when there is none (a benchmark then reports the
    lesson as not available instead of stopping)."""
    try:
        return notebook(root, "source", lesson)
    except CourseError:
        return None


def is_solution(cell) -> bool:
    """True for a code cell that nbgrader marks as a solution cell."""
    return cell.cell_type == "code" and bool(cell.metadata.get("nbgrader", {}).get("solution", False))


def solution_cells(notebook: Path) -> list[tuple[str, str]]:
    """``[(grade_id, source)]`` of the notebook's solution cells, in notebook order."""
    nb = nbformat.read(notebook, as_version=4)
    return [(c.metadata["nbgrader"].get("grade_id", f"cell{i}"), c.source)
            for i, c in enumerate(nb.cells) if is_solution(c)]


def setup_imports(notebook: Path) -> str:
    """The top-level ``import`` / ``from ... import`` statements of the notebook's non-solution code cells."""
    nb = nbformat.read(notebook, as_version=4)
    lines = []
    for cell in nb.cells:
        if cell.cell_type != "code" or is_solution(cell) or cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a cell with IPython magics: its imports are not needed
            continue
        lines += [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(dict.fromkeys(lines))


def load(lesson: str, root: Path = REPO, required: tuple[str, ...] | None = None) -> Solutions:
    """Execute the solution cells of ``lesson`` in a fresh namespace and return the ``required`` names."""
    required = REQUIRED.get(lesson, ()) if required is None else required
    notebook = lesson_notebook(lesson, root)
    if notebook is None:
        return Solutions(lesson, reason=f"no notebook in source/{lesson}")
    namespace: dict[str, Any] = {"__name__": f"solutions_{lesson}"}
    try:
        exec(compile(setup_imports(notebook), f"<{lesson}: setup imports>", "exec"), namespace)
        cells = solution_cells(notebook)
        for grade_id, source in cells:
            exec(compile(source, f"<{lesson}: solution cell {grade_id}>", "exec"), namespace)
    except Exception as error:  # noqa: BLE001 - any failure means "not available", with the reason
        return Solutions(lesson, reason=f"its solution cells fail: {type(error).__name__}: {error}")
    if not cells:
        return Solutions(lesson, reason=f"source/{lesson} has no solution cells")
    missing = [name for name in required if name not in namespace]
    if missing:
        return Solutions(lesson, reason=f"its solution cells do not define {', '.join(missing)}")
    return Solutions(lesson, {name: namespace[name] for name in required})
