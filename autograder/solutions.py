"""The one way to take a lesson's reference solutions from ``source/<lesson>/<lesson>.ipynb``.

* :func:`solution_cells` gives their text by grade_id (what the sample class and the benchmarks hand in
  as a submission's answers);
* :func:`load` runs them, in notebook order, in a fresh namespace and returns the names asked for (what
  the benchmarks time and the device check checks). Solution cells use the names the lesson's setup
  cell imports (``np``, ``torch``, ``F``...), so the namespace first receives the *import statements*
  of the notebook's other code cells (and nothing else of them);
* :func:`load_stage` finds the lesson by what it defines (:data:`STAGES`), so no lesson name is written
  in code: the first lesson of ``source/`` whose solution cells define a stage's names at top level.

A lesson that is missing or broken comes back as not available, with the reason, never as an exception.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from autograder import lessontext
from autograder.coursedir import REPO, CourseError, lessons, notebook

#: The stages of the course that are timed and checked, and the names their lesson's solutions define.
STAGES = {
    "loops": ("avg_pool2d_loops", "avg_pool2d_loops_backward"),
    "numpy": ("avg_pool2d_numpy", "avg_pool2d_numpy_backward"),
    "function": ("AvgPool2dFunction", "avg_pool2d_torch", "AvgPool2d"),
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
    """The one notebook of ``source/<lesson>/``, or None when there is none."""
    try:
        return notebook(root, "source", lesson)
    except CourseError:
        return None


def _is_solution(cell) -> bool:
    return cell.cell_type == "code" and bool(cell.metadata.get("nbgrader", {}).get("solution", False))


def solution_cells(path: Path) -> dict[str, str]:
    """``{grade_id: source}`` of the solution cells of a source notebook (``source/<lesson>/x.ipynb``), in
    notebook order, without the delimiter lines its course's config sets (as a student would write them)."""
    nb = nbformat.read(path, as_version=4)
    delims = lessontext.delimiters(Path(path).resolve().parents[2])
    return {cell.metadata["nbgrader"].get("grade_id", f"cell{i}"): lessontext.strip_markers(cell.source, delims)
            for i, cell in enumerate(nb.cells) if _is_solution(cell)}


def setup_imports(path: Path) -> str:
    """The top-level ``import`` / ``from ... import`` statements of the notebook's non-solution code cells."""
    lines = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code" or _is_solution(cell) or cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a cell with IPython magics: its imports are not needed
            continue
        lines += [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(dict.fromkeys(lines))


def defined_names(path: Path) -> set[str]:
    """The names the notebook's solution cells define at top level (functions, classes, assignments),
    read from the source without running it."""
    names: set[str] = set()
    for source in solution_cells(path).values():
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def load(lesson: str, root: Path = REPO, required: tuple[str, ...] = ()) -> Solutions:
    """Execute the solution cells of ``lesson`` in a fresh namespace and return the ``required`` names."""
    path = lesson_notebook(lesson, root)
    if path is None:
        return Solutions(lesson, reason=f"no notebook in source/{lesson}")
    namespace: dict[str, Any] = {"__name__": f"solutions_{lesson}"}
    try:
        exec(compile(setup_imports(path), f"<{lesson}: setup imports>", "exec"), namespace)
        cells = solution_cells(path)
        for grade_id, source in cells.items():
            exec(compile(source, f"<{lesson}:{grade_id}>", "exec"), namespace)
    except Exception as error:  # noqa: BLE001 - any failure means "not available", with the reason
        return Solutions(lesson, reason=f"its solution cells fail: {type(error).__name__}: {error}")
    if not cells:
        return Solutions(lesson, reason=f"source/{lesson} has no solution cells")
    missing = [name for name in required if name not in namespace]
    if missing:
        return Solutions(lesson, reason=f"its solution cells do not define {', '.join(missing)}")
    return Solutions(lesson, {name: namespace[name] for name in required})


def lesson_of(stage: str, root: Path = REPO) -> str | None:
    """The first lesson of ``source/`` whose solution cells define every name of ``STAGES[stage]``."""
    try:
        found = lessons(root)
    except CourseError:
        return None
    return next((lesson for lesson in found if (path := lesson_notebook(lesson, root))
                 and set(STAGES[stage]) <= defined_names(path)), None)


def load_stage(stage: str, root: Path = REPO) -> Solutions:
    """The reference solutions of one stage of :data:`STAGES`, from the lesson that defines them."""
    lesson = lesson_of(stage, root)
    if lesson is None:
        return Solutions(stage, reason=f"no lesson in {root}/source defines {', '.join(STAGES[stage])}")
    return load(lesson, root, STAGES[stage])
