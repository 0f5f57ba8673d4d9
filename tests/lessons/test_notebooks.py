"""Every source notebook, with its solutions, runs top to bottom without an error (what nbval's lax mode
checked) and passes every graded test cell by nbgrader's rule (what ``nbgrader validate`` checks of a
solution): each notebook is executed once per test run (:func:`nbtools.executed`), and the lesson tests
read the same run."""

from __future__ import annotations

import pytest

from autograder import coursedir
from nbtools import REPO, cell_errors, execute, executed, graded_results

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("lesson", coursedir.lessons(REPO))
def test_source_notebook_runs_top_to_bottom(lesson):
    nb = executed(lesson)
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "nothing was executed"
    assert cell_errors(nb) == [], f"{lesson}: cells that raise"
    results = graded_results(nb)
    assert results, f"{lesson} has no graded test cell"
    failed = sorted(grade_id for grade_id, passed in results.items() if not passed)
    assert not failed, f"the solution of {lesson} fails these graded test cells (an error or stderr): {failed}"


def test_a_notebook_with_an_error_is_found():
    """The other side: the checks find a raising cell and a graded test cell that fails by writing to stderr
    (in a small notebook made here)."""
    import nbformat

    graded = {"nbgrader": {"grade": True, "solution": False, "locked": True, "grade_id": "warns", "points": 1}}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell("1 / 0"),
                                         nbformat.v4.new_code_cell("import sys; print('no', file=sys.stderr)",
                                                                   metadata=graded)])
    execute(nb, timeout=60)
    assert len(cell_errors(nb)) == 1 and "ZeroDivisionError" in cell_errors(nb)[0]
    assert graded_results(nb) == {"warns": False}
