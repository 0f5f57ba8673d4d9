"""Test utilities for notebooks: run a lesson with some solution cells replaced, see which graded cells pass.

Used by the lesson tests to show that a deliberately wrong solution fails the matching graded cell and
passes the others (nbgrader's own rule for a failed cell: an error or anything on stderr).
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbgrader.utils import has_failed

REPO = Path(__file__).resolve().parent.parent


def source_notebook(lesson: str) -> Path:
    found = sorted((REPO / "source" / lesson).glob("*.ipynb"))
    assert len(found) == 1, f"source/{lesson} must hold one notebook"
    return found[0]


def cell_by_id(nb, grade_id: str):
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    raise KeyError(f"no cell with grade_id {grade_id!r}")


def run_graded(notebook: Path, replace: dict[str, str] | None = None, timeout: int = 120,
               skip_ungraded: bool = False) -> dict[str, bool]:
    """Execute ``notebook`` with solution cells replaced (``{grade_id: new source}``).

    Returns ``{grade_id: passed}`` for every graded test cell. ``skip_ungraded`` blanks the plain
    (ungraded, unlocked) code cells that only demonstrate, to save time.
    """
    nb = nbformat.read(notebook, as_version=4)
    nb = copy.deepcopy(nb)
    for grade_id, text in (replace or {}).items():
        cell_by_id(nb, grade_id).source = text
    if skip_ungraded:  # keep the first code cell: it holds the imports and the setup
        first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        for cell in nb.cells[first_code + 1:]:
            if cell.cell_type == "code" and "nbgrader" not in cell.metadata:
                cell.source = "pass"
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(Path(notebook).parent)}})
    client.execute()
    results = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution") and cell.cell_type == "code":
            results[meta["grade_id"]] = not has_failed(cell)
    return results


def solution_source(lesson: str, grade_id: str) -> str:
    """The reference solution cell of ``lesson`` (to derive wrong variants from)."""
    nb = nbformat.read(source_notebook(lesson), as_version=4)
    return cell_by_id(nb, grade_id).source
