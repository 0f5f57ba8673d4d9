"""Test utilities for notebooks: run a lesson with some solution cells replaced, see which graded cells pass.

Used by the lesson tests to show that a deliberately wrong solution fails the matching graded cell and
passes the others (nbgrader's own rule for a failed cell: an error or anything on stderr).

Each source notebook is executed whole, as written, once per test run (:func:`executed`, shared by
``tests/lessons/test_notebooks.py``, which checks that every cell runs, and by each lesson's test that the
reference passes every graded cell); the runs with replaced cells are judged in this process
(:func:`failing_cells`), with no kernel.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbgrader.utils import has_failed
from traitlets.config import Config

from shared import REPO


def source_notebook(lesson: str) -> Path:
    found = sorted((REPO / "source" / lesson).glob("*.ipynb"))
    assert len(found) == 1, f"source/{lesson} must hold one notebook"
    return found[0]


def cell_by_id(nb, grade_id: str):
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    raise KeyError(f"no cell with grade_id {grade_id!r}")


def execute(nb, folder: Path | str | None = None, timeout: int = 120, allow_errors: bool = True):
    """Execute ``nb`` in place, top to bottom, in a fresh kernel started in ``folder``; returns ``nb``.

    The kernel talks over unix sockets in a temporary folder of its own, never TCP: two xdist workers
    starting kernels at once can pick the same free port (jupyter_client binds, closes, and hands the
    number on), and a client then waits for a reply from a kernel that never got its request.
    nbclient's stand-in for an ipywidgets ``Output`` is left out (:func:`without_output_widgets`).
    """
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        config = Config({"KernelManager": {"transport": "ipc", "ip": str(Path(sockets) / "ipc")}})
        resources = {"metadata": {"path": str(folder)}} if folder is not None else {}
        without_output_widgets(NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                                              config=config, resources=resources)).execute()
    return nb


def without_output_widgets(client: NotebookClient) -> NotebookClient:
    """``client`` without nbclient's stand-in for the ipywidgets ``Output`` widget (lesson 1's explorer had one).

    The stand-in answers the kernel on the shell channel while the client awaits the cell's reply on that same
    socket, and the reply's wake-up is then lost: the cell waits out its whole timeout and goes on as if nothing
    happened (nbclient issue 312: lesson 1 took 600 s in a CI simulation, the timeout of :func:`executed`; a small
    notebook of Output widgets waited out its timeout in 6 of 12 runs, in none of 12 without the stand-in). It only copies the widget's outputs into the notebook,
    which no test reads; the outputs still reach the cell, and an error still fails it.
    """
    client.widget_registry = {}
    return client


def graded_results(nb) -> dict[str, bool]:
    """``{grade_id: passed}`` for every graded test cell of an executed notebook (nbgrader's rule)."""
    results = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution") and cell.cell_type == "code":
            results[meta["grade_id"]] = not has_failed(cell)
    return results


@functools.lru_cache(maxsize=None)
def executed(lesson: str, timeout: int = 600):
    """The source notebook of ``lesson`` executed top to bottom, every cell, in a fresh kernel started in
    its folder: once per test run (cached), whoever asks first. Do not change the returned notebook."""
    nb = nbformat.read(source_notebook(lesson), as_version=4)
    return execute(nb, source_notebook(lesson).parent, timeout=timeout)


def cell_errors(nb) -> list[str]:
    """One line per code cell of an executed notebook that raised: its index, first line and error."""
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
                found.append(f"cell {index} ({first[:60]!r}): {output.ename}: {output.evalue}")
    return found


def solution_source(lesson: str, grade_id: str) -> str:
    """The reference solution cell of ``lesson`` (to derive wrong variants from)."""
    nb = nbformat.read(source_notebook(lesson), as_version=4)
    return cell_by_id(nb, grade_id).source


def failing_cells(lesson: str, cells, replace: dict[str, str] | None = None, hidden: bool = True,
                  as_graded: bool = False) -> set[str]:
    """The graded test ``cells`` of ``lesson``'s source notebook that fail, run in this process (no kernel): the
    first code cell (the set-up) and every solution cell, in order, ``replace``d where given (``{grade_id: new
    source}``), then each test cell, hidden part included, as the trusted grader's parent runs it (``hidden=False``:
    only the visible part, what the student's own run checks). Any error fails a cell, as in nbgrader. Each
    source is registered with linecache and the namespace is ``__main__``'s, so check_avoids reads the functions' source
    and the classes' module as it does in a notebook. ``as_graded``: the test cells run in notebook order and
    :func:`course.checks.passed` answers what the earlier ones decided, as under the trusted grader (else it answers
    None, as in a notebook).
    For the fast one-bug-one-cell tests; no notebook is executed."""
    import linecache

    nb = nbformat.read(source_notebook(lesson), as_version=4)
    namespace: dict = {"__name__": "__main__"}  # a notebook's: the student's classes are __main__'s, not builtins'

    def run(source: str, name: str) -> None:
        filename = f"<{lesson} {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)

    import contextlib

    import torch

    from course.checks.hooks import grading

    threads = torch.get_num_threads()  # a set-up cell may set it (lesson 5): this process keeps its own
    try:
        code = [cell for cell in nb.cells if cell.cell_type == "code"]
        run(code[0].source, "set-up")
        for cell in code[1:]:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution"):
                run((replace or {}).get(meta["grade_id"], cell.source), meta["grade_id"])
        failed = set()
        order = [c.metadata["nbgrader"]["grade_id"] for c in code if c.metadata.get("nbgrader", {}).get("grade_id")]
        graded: dict[str, bool] = {}
        with grading(graded_so_far=graded) if as_graded else contextlib.nullcontext():
            for grade_id in sorted(cells, key=order.index) if as_graded else sorted(cells):
                try:
                    source = cell_by_id(nb, grade_id).source
                    run(source if hidden else source.split("### BEGIN HIDDEN TESTS")[0], grade_id)
                except Exception:  # an error fails a test cell, as a failed assertion does
                    failed.add(grade_id)
                graded[grade_id] = grade_id not in failed
        return failed
    finally:
        torch.set_num_threads(threads)


def stride_zero_pair_fails_visibly(lesson: str, forward_id: str, backward_id: str) -> None:
    """A stride 0 read as kernel_size only when the whole stride is the int 0 (not per axis of a pair) fails the
    visible part of ``lesson``'s forward and backward tests (lessons 2 and 3: a visible twin of the hidden
    pair). The reference passing them is each lesson's test_reference_passes_every_graded_cell."""
    bug = {grade_id: solution_source(lesson, grade_id).replace("sh, sw = sh or kh, sw or kw",
                                                               "sh, sw = (kh, kw) if stride == 0 else (sh, sw)")
           for grade_id in (forward_id, backward_id)}
    assert all(bug[g] != solution_source(lesson, g) for g in bug), "the bug no longer matches the reference"
    assert failing_cells(lesson, {"forward_tests", "backward_tests"}, bug, hidden=False) == {"forward_tests", "backward_tests"}
