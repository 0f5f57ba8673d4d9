"""Every source notebook, with its solutions, runs top to bottom without an error (what nbval's lax mode
checked): each notebook is executed once per test run (:func:`nbtools.executed`), and the lesson tests
read the same run for "the reference passes every graded cell"."""

from __future__ import annotations

import pytest

from autograder import coursedir
from nbtools import REPO, cell_errors, execute, executed

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("lesson", coursedir.lessons(REPO))
def test_source_notebook_runs_top_to_bottom(lesson):
    nb = executed(lesson)
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "nothing was executed"
    assert cell_errors(nb) == [], f"{lesson}: cells that raise"


def test_a_notebook_with_an_error_is_found():
    """The other side: the check finds a raising cell (in a small notebook made here)."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell("1 / 0")])
    execute(nb, timeout=60)
    assert len(cell_errors(nb)) == 1 and "ZeroDivisionError" in cell_errors(nb)[0]
