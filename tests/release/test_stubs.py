"""Stubs that do not stop Run All once the student has written the exercise: optional regions become
comments, and no release cell that defines functions or classes raises at its top level or in a class
body (a cell that is one answer, ``q1 = ...``, raises until the student replaces it: that is its stub);
a broken nbgrader_config.py stops the release instead of being ignored."""

import ast

import nbformat
import pytest

from autograder.coursedir import lessons, notebook
from autograder.coursedir import CourseError, check_config
from autograder.release.stubs import ClearSolutionsWithOptional
from shared import REPO

SOURCE = '''class Pool:
    def forward(self, x):
        ### BEGIN SOLUTION
        return helper(x)
        ### END SOLUTION


# helpers
### BEGIN SOLUTION (optional)
def helper(x):
    return x
### END SOLUTION
'''


def _clear(source: str) -> str:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "x", "locked": False}
    ClearSolutionsWithOptional()._replace_solution_region(cell, "python")
    return cell.source


def _raises_where_it_runs(source: str) -> list[int]:
    """Lines of ``raise`` statements that run when a cell of definitions runs, left there after the
    student has written them: at the top level or in a class body."""
    tree = ast.parse(source)
    if not any(isinstance(node, (ast.FunctionDef, ast.ClassDef)) for node in tree.body):
        return []  # a cell that is one answer: its stub is the raise the student replaces
    lines = [node.lineno for node in tree.body if isinstance(node, ast.Raise)]
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            lines += [item.lineno for item in node.body if isinstance(item, ast.Raise)]
    return lines


def test_an_optional_region_becomes_a_comment_and_a_normal_one_still_raises():
    cleared = _clear(SOURCE)
    assert "def helper" not in cleared and "return helper" not in cleared
    assert "# YOUR CODE HERE (optional" in cleared
    assert cleared.count("raise NotImplementedError") == 1  # forward's, inside the method
    assert _raises_where_it_runs(cleared) == []
    without_marker = _clear(SOURCE.replace(" (optional)", ""))
    assert _raises_where_it_runs(without_marker) != [], "the rule sees the top-level raise it forbids"


@pytest.mark.parametrize("lesson", lessons(REPO))
def test_no_release_stub_raises_when_its_cell_runs(lesson):
    nb = nbformat.read(notebook(REPO, "release", lesson), as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            assert _raises_where_it_runs(cell.source) == [], f"{lesson} cell {index}: a stub raises at the top level"


def test_a_config_that_does_not_load_stops_the_release(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text((REPO / "nbgrader_config.py").read_text())
    check_config(tmp_path)
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.Nope = undefined_name\n")
    with pytest.raises(CourseError, match="does not load .*NameError.*silently ignore"):
        check_config(tmp_path)
