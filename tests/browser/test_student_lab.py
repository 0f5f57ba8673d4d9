"""The student's JupyterLab, tested in headless Chromium on a temporary copy of ``release/``.

One walk-through does what a student does with lesson 1 (run all, meet the stub's error, type an
answer, validate), and checks what would break them: the nbgrader extension missing or failing, plots
that do not render, a lesson cell that raises on its own. The last tests show that these checks fail
when their fault is planted (nbgrader disabled, a ``1/0`` cell in the lesson).
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

import labdriver as lab
from labdriver import SOLVED, STUB

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]  # 150 s ran out at load 15

# The stub with a `1/0` cell as its first code cell: Run All stops there, before the set-up cell's imports
# (torch, matplotlib: seconds of CPU in every fresh kernel) that the walk-through already covers.
BROKEN = f"{lab.LESSON}/{lab.LESSON}_broken.ipynb"


@pytest.fixture(autouse=True)
def environment_untouched():
    """No test may change the environment's own Jupyter configuration (``.venv/etc/jupyter``)."""
    before = lab.environment_config_digest()
    yield
    assert lab.environment_config_digest() == before, "the test changed the venv's Jupyter configuration"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A student's course folder: ``release/`` copied, plus a solved and a broken copy of lesson 1."""
    root = lab.prepare_course(tmp_path_factory.mktemp("browser") / "course")
    (root / BROKEN).write_bytes((root / STUB).read_bytes())
    first_code = next(i for i, cell in enumerate(lab.notebook_cells(root / STUB)) if cell["type"] == "code")
    lab.insert_cell(root / BROKEN, first_code, "1/0")
    return root


@pytest.fixture(scope="module")
def server(course, tmp_path_factory, chromium):
    with lab.lab_server(course, tmp_path_factory.mktemp("jupyter")) as running:
        yield running


def test_student_walkthrough(server, browser, screenshots):
    folder, shots = screenshots
    stub_cells = lab.notebook_cells(server.root / STUB)
    solved_cells = lab.notebook_cells(server.root / SOLVED)
    exercise = lab.cell_index(server.root / STUB, "worked_example")

    # The extensions, as the command line (run meanwhile) and the extension manager's API see them.
    cli_problems = ThreadPoolExecutor(1).submit(lab.cli_extension_problems, server.env)
    assert lab.rest_extension_problems(server) == []

    with lab.chromium_page(browser) as (page, log):
        lab.open_notebook(page, server, STUB)
        lab.screenshot(page, folder, "lesson1_opened", shots)
        lab.validate_button(page)  # nbgrader's lab extension put its button in the toolbar

        # The Extension Manager lists nbgrader and nothing failed or incompatible.
        panel_text = lab.open_extension_manager(page)
        lab.screenshot(page, folder, "extension_manager", shots)
        assert "nbgrader" in panel_text
        assert not re.search(r"incompatible|error|failed", panel_text, re.I), panel_text
        lab.close_extension_manager(page)

        # Run all: the stub stops at the first exercise with its NotImplementedError.
        lab.run_all(page)
        outputs = lab.cell_outputs(page)
        first_error = lab.check_first_error_is_stub(stub_cells, outputs)
        assert first_error == exercise, f"first error in cell {first_error}, expected the first exercise {exercise}"
        lab.check_plots_render(stub_cells[:first_error], outputs[:first_error])
        lab.show_cell(page, first_error, ".jp-OutputArea-output")
        lab.screenshot(page, folder, "stub_not_implemented", shots)

        # Type the worked example's answer into its cell and run it with its test.
        answer = lab.strip_solution_markers(lab.cell_source(solved_cells, "worked_example"))
        lab.set_cell_source(page, exercise, answer)
        lab.run_cells_from(page, exercise, 2)
        outputs = lab.cell_outputs(page)
        assert not outputs[exercise]["error"] and not outputs[exercise + 1]["error"], outputs[exercise + 1]
        assert "by_hand_avg: shape and ranges OK" in outputs[exercise + 1]["text"]
        lab.screenshot(page, folder, "answer_typed_and_tested", shots)

        # Validate the half-done notebook: nbgrader reports the remaining exercises, not this one.
        status, text = lab.validate(page)
        lab.screenshot(page, folder, "validate_stub_fails", shots)
        assert status == "failed", f"Validate on the stub: {status}\n{text}"
        graded = [c for c in stub_cells if c["nbgrader"].get("grade") and not c["nbgrader"].get("solution")]
        failed = text.count("The following cell failed")
        assert failed == len(graded) - 2, f"{failed} failed cells reported, expected every test cell " \
                                          f"but the worked example's two ({len(graded) - 2}):\n{text}"
        assert "NotImplementedError" in text and "output_size" in text
        assert "by_hand_avg" not in text, "the typed answer did not reach the saved notebook"
        lab.close_dialog(page)
        lab.close_and_shut_down(page)

        # The fully solved copy: everything runs, every plot is an image, Validate says Success.
        lab.open_from_path(page, server.root, SOLVED)
        lab.run_all(page)
        outputs = lab.cell_outputs(page)
        lab.check_no_errors(solved_cells, outputs)
        images = lab.check_plots_render(solved_cells, outputs)
        assert images >= 4, f"only {images} images in the solved lesson"
        last_plot = max(i for i, c in enumerate(solved_cells) if "plt.show()" in c["source"])
        lab.show_cell(page, last_plot, ".jp-OutputArea-output img")
        lab.screenshot(page, folder, "solved_plots", shots)
        lab.check_validate_passes(page, lambda: lab.screenshot(page, folder, "validate_solved_success", shots))

        assert lab.page_extension_problems(page, log) == []
        assert not log["pageerror"], log["pageerror"]
    server.shutdown_kernels()
    assert cli_problems.result(timeout=60) == []


def test_detects_unexpected_lesson_error(server, browser, screenshots):
    """A lesson cell that raises on its own (``1/0``, ahead of the first exercise) fails the stub check."""
    folder, shots = screenshots
    with lab.chromium_page(browser) as (page, _):
        lab.open_notebook(page, server, BROKEN)
        lab.run_all(page)
        outputs = lab.cell_outputs(page)
        first_error = next(i for i, out in enumerate(outputs) if out["error"])
        lab.show_cell(page, first_error, ".jp-OutputArea-output")
        lab.screenshot(page, folder, "unexpected_error", shots)
    server.shutdown_kernels()
    with pytest.raises(AssertionError, match=r"unexpected error in cell \d+ \('1/0'\): ZeroDivisionError"):
        lab.check_first_error_is_stub(lab.notebook_cells(server.root / BROKEN), outputs)


@pytest.fixture(scope="module")
def half_disabled(tmp_path_factory):
    """One JupyterLab for both ``test_detects_disabled_nbgrader`` cases, on its own course copy and throwaway
    config dir, started with nbgrader's validate server extension disabled (a server reads that at start).
    The lab-extension case disables the lab extension too, in the same dir (``labconfig/page_config.json``,
    which the server reads at every page load, and keeps), so it runs second: the server-extension case
    has shown on this server that the Validate button is there while only the server extension is off."""
    top = tmp_path_factory.mktemp("disabled")
    course = lab.prepare_course(top / "course")
    lab.disable_nbgrader(top / "config", "server_extension")
    with lab.lab_server(course, top / "home", top / "config") as running:
        yield running, top / "config"


@pytest.mark.parametrize("disabled", ["server_extension", "labextension"])  # this order: see half_disabled
def test_detects_disabled_nbgrader(disabled, half_disabled, browser, screenshots):
    """With nbgrader's lab or server extension disabled (in a throwaway config dir) the checks fail:
    the command line reports it, and Validate on the solved lesson no longer says Success."""
    folder, shots = screenshots
    server, config = half_disabled
    if disabled == "labextension":
        lab.disable_nbgrader(config, disabled)
    cli_problems = ThreadPoolExecutor(1).submit(lab.cli_extension_problems, server.env, (disabled,))  # its listing only

    with lab.chromium_page(browser) as (page, log):
        lab.open_notebook(page, server, SOLVED)
        lab.screenshot(page, folder, f"{disabled}_disabled", shots)
        expected = "no Validate button" if disabled == "labextension" else r"Validate did not succeed \(error\)"
        with pytest.raises(AssertionError, match=expected) as failure:
            lab.check_validate_passes(page, lambda: lab.screenshot(page, folder, "validate_answer", shots))
        print(f"with the {disabled} disabled, the check reports: {failure.value}")
        if disabled == "labextension":
            assert lab.page_extension_problems(page, log), "the page did not show nbgrader disabled"
    server.shutdown_kernels()
    name = lab.NBGRADER_LAB if disabled == "labextension" else lab.NBGRADER_SERVER[0]
    assert any(name in problem for problem in cli_problems.result(timeout=60)), \
        f"the command line did not notice the disabled {disabled}: {cli_problems.result()}"
    print(f"with the {disabled} disabled, the command line reports: {cli_problems.result()}")
