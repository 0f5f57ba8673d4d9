"""Lesson 2 (loops): the reference solution passes every graded cell and matches torch on the hidden
sweep; each deliberately wrong solution fails exactly the graded cells it should and passes the others.

Wrong variants are made by editing the reference solution cells, so they stay in sync with it. One
notebook run carries one forward bug and one backward bug at once: the cells they touch are
independent, so each bug must fail only its own cells.
"""

from __future__ import annotations

import re

import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder import solutions
from nbtools import (cell_by_id, executed, failing_cells, graded_results, solution_source, source_notebook,
                     stride_zero_pair_fails_visibly)

LESSON = "lesson2_loops"
FORWARD_CELLS = {"forward_tests", "forward_no_pad_count", "forward_errors", "forward_avoids"}
BACKWARD_CELLS = {"backward_tests", "backward_no_pad_count", "backward_errors", "backward_avoids"}
PREDICTION_CELLS = {"predict_divisor", "predict_stride", "predict_padding"}
CATCH_CELLS = {"catches_divisor", "catches_stride", "catches_padding_side", "catches_dtype", "catches_padding_ignored"}
ALL_CELLS = FORWARD_CELLS | BACKWARD_CELLS | PREDICTION_CELLS | CATCH_CELLS


def edited(grade_id: str, old: str, new: str) -> str:
    """The reference solution cell ``grade_id`` with ``old`` replaced by ``new`` (which must change it)."""
    source = solution_source(LESSON, grade_id)
    assert source.count(old) == 1, f"{grade_id}: {old!r} must occur exactly once in the reference solution"
    changed = source.replace(old, new)
    assert changed != source
    return changed


def forward(old: str, new: str) -> tuple[str, str]:
    return "avg_pool2d_loops", edited("avg_pool2d_loops", old, new)


def backward(old: str, new: str) -> tuple[str, str]:
    return "avg_pool2d_loops_backward", edited("avg_pool2d_loops_backward", old, new)


AFTER_ARGS = "    ph, pw = as_pair(padding)\n"

# (name, the wrong solution cells, the graded cells that must fail). One bug, one penalty (issue 29): the
# count_include_pad=False cells judge the divisor against the student's own count_include_pad=True result
# (course.checks.check_real_divisor), so a window mistake costs forward_tests / backward_tests only; an inverted
# flag fails both cells, because it breaks both divisors (True divides by the real elements, False by kh·kw).
FORWARD_BUGS = {
    "off_by_one_window": (forward("min(top + kh, height)", "min(top + kh - 1, height)"), {"forward_tests"}),
    # stride 0 is forward_tests' rule alone: forward_no_pad_count tests the divisor at explicit strides
    "stride_0_not_kernel_size": (forward("sh, sw = sh or kh, sw or kw", "sh, sw = sh, sw"), {"forward_tests"}),
    "padding_ignored": (forward("top, left = i * sh - ph, j * sw - pw", "top, left = i * sh, j * sw"),
                        {"forward_tests"}),
    "count_include_pad_inverted": (forward("if count_include_pad else", "if not count_include_pad else"),
                                   {"forward_tests", "forward_no_pad_count"}),
    "calls_the_reference": (forward(AFTER_ARGS, AFTER_ARGS + "    return avg_pool2d_reference(x, kernel_size, "
                                    "stride, padding, count_include_pad)\n"),
                            {"forward_tests", "forward_no_pad_count", "forward_errors", "forward_avoids"}),  # every graded cell of the forward checks its source first
    "calls_torch": (forward(AFTER_ARGS, AFTER_ARGS + "    import torch\n    return torch.nn.functional.avg_pool2d("
                            "torch.from_numpy(x), (kh, kw), (sh, sw), (ph, pw), "
                            "count_include_pad=count_include_pad).numpy()\n"),
                    {"forward_tests", "forward_no_pad_count", "forward_errors", "forward_avoids"}),
}
BACKWARD_BUGS = {
    "divisor_inverted": (backward("if count_include_pad else", "if not count_include_pad else"),
                         {"backward_tests", "backward_no_pad_count"}),
    # where the gradient goes is backward_tests' rule: each window's part is still divided by its real elements
    "first_position_only": (backward("grad_x[b, c, r0:r1, c0:c1] +=", "grad_x[b, c, r0, c0] +="), {"backward_tests"}),
    "off_by_one_window": (backward("min(top + kh, height)", "min(top + kh + 1, height)"), {"backward_tests"}),
    "padding_ignored": (backward("top, left = i * sh - ph, j * sw - pw", "top, left = i * sh, j * sw"),
                        {"backward_tests"}),
    "overwrites_instead_of_adding": (backward("grad_x[b, c, r0:r1, c0:c1] +=", "grad_x[b, c, r0:r1, c0:c1] ="),
                                     {"backward_tests"}),
    "calls_the_reference": (backward(AFTER_ARGS, AFTER_ARGS + "    return avg_pool2d_grad_reference(np.zeros("
                                     "input_shape, grad_out.dtype), grad_out, kernel_size, stride, padding, "
                                     "count_include_pad)\n"),
                            {"backward_tests", "backward_no_pad_count", "backward_errors", "backward_avoids"}),
    # one bug, one cell: stride 0 is backward_tests' rule, backward_no_pad_count uses explicit strides
    "stride_0_not_kernel_size": (backward("sh, sw = sh or kh, sw or kw", "sh, sw = sh, sw"), {"backward_tests"}),
}
# output_size is graded through the forward's error tests: one that allows padding > kernel_size // 2.
OUTPUT_SIZE_BUG = (("output_size", edited("output_size", "if pad[axis] > kernel[axis] // 2:", "if False:")),
                   {"forward_errors"})

# Pair the bugs so that each notebook run checks one forward and one backward bug (7 runs in all): the
# backward's stride-0 bug, the one left over, rides with the forward's.
RUNS = [(f, b) for f, b in zip(FORWARD_BUGS, BACKWARD_BUGS)] + [("stride_0_not_kernel_size", "stride_0_not_kernel_size")]


def test_reference_passes_every_graded_cell():
    results = graded_results(executed(LESSON))  # the one whole run of the notebook (nbtools.executed)
    assert set(results) == ALL_CELLS
    assert all(results.values()), results


def run_of(forward_bug: str, backward_bug: str) -> tuple[dict[str, str], set[str]]:
    """The replaced solution cells of one notebook run, and the graded cells that must fail."""
    (f_id, f_src), f_fails = FORWARD_BUGS[forward_bug]
    (b_id, b_src), b_fails = BACKWARD_BUGS[backward_bug]
    replace = {f_id: f_src, b_id: b_src}
    expected_failures = f_fails | b_fails
    if forward_bug == "calls_the_reference":  # ride along: output_size's bug fails only forward_errors
        (o_id, o_src), o_fails = OUTPUT_SIZE_BUG
        replace[o_id] = o_src
        expected_failures |= o_fails
    return replace, expected_failures


@pytest.mark.parametrize("forward_bug, backward_bug", RUNS, ids=[f"{f}+{b}" for f, b in RUNS])
def test_wrong_solution_fails_only_its_cells(forward_bug, backward_bug):
    """Every graded cell, hidden parts included, judged in this process (nbtools.failing_cells: the set-up,
    every solution cell and the test cells, as the notebook runs them)."""
    replace, expected_failures = run_of(forward_bug, backward_bug)
    failed = failing_cells(LESSON, ALL_CELLS, replace)
    assert failed == expected_failures, f"{forward_bug} + {backward_bug}: failed {sorted(failed)}"


def test_the_reference_passes_every_graded_cell_in_process():
    """The in-process harness agrees with the notebook run: the reference fails no graded cell there either."""
    assert failing_cells(LESSON, ALL_CELLS) == set()


# --- the reference solution against torch on the whole hidden sweep --------------------------------

def reference_functions() -> dict:
    """The reference solutions of the source notebook, loaded as the benchmarks load them."""
    reference = solutions.load(LESSON, required=("output_size", "avg_pool2d_loops", "avg_pool2d_loops_backward"))
    assert reference.available, reference.reason
    return reference.names


def hidden_sweep() -> list:
    """The ``cases`` of the hidden tests, read from the test cells (so the two never drift): the forward and
    backward cells sweep the same cases, the ``count_include_pad=False`` cells the same or fewer (the
    stride-pair case lives only where its bug is judged: one bug, one cell)."""
    import nbformat

    nb = nbformat.read(source_notebook(LESSON), as_version=4)

    def cases_of(grade_id: str) -> list:
        hidden = cell_by_id(nb, grade_id).source.split("### BEGIN HIDDEN TESTS")[1]
        namespace = {"np": np}
        exec(hidden.split("for n, ")[0], namespace)
        return namespace["cases"]

    full, no_pad = cases_of("forward_tests"), cases_of("forward_no_pad_count")
    assert cases_of("backward_tests") == full, "the forward and backward sweeps must be the same"
    assert cases_of("backward_no_pad_count") == no_pad, "the two count_include_pad=False sweeps must be the same"
    assert all(case in full for case in no_pad), "a count_include_pad=False case the full sweep lacks"
    return full


def test_hidden_sweep_covers_the_contract():
    cases = hidden_sweep()
    pair = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v, v)  # noqa: E731
    kernels = [pair(k) for _, k, _, _ in cases]
    strides = [tuple(s or k for s, k in zip(pair(s), pair(k))) for _, k, s, _ in cases]
    pads = [pair(p) for _, _, _, p in cases]
    assert any(kh != kw for kh, kw in kernels), "a non-square kernel"
    assert any(shape[2] != shape[3] for shape, *_ in cases), "a rectangular input"
    assert any(s[0] < k[0] for s, k in zip(strides, kernels)), "stride < kernel"
    assert any(s == k for s, k in zip(strides, kernels)), "stride = kernel"
    assert any(s[0] > k[0] or s[1] > k[1] for s, k in zip(strides, kernels)), "stride > kernel"
    assert any((p[0] == 0) != (p[1] == 0) for p in pads), "padding on one axis only"
    assert any(k[0] % 2 == 0 and p[0] == k[0] // 2 > 0 for k, p in zip(kernels, pads)), "even kernel, padding k//2"
    assert any(shape[0] > 1 and shape[1] > 1 for shape, *_ in cases), "B and C > 1"
    assert any((shape[2] + 2 * p[0] - k[0]) // s[0] + 1 == 1
               for (shape, *_), k, s, p in zip(cases, kernels, strides, pads)), "H_out = 1"


@pytest.mark.parametrize("dtype, tolerance", [(np.float32, 1e-6), (np.float64, 1e-12)])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_reference_solution_matches_torch_on_the_sweep(dtype, tolerance, count_include_pad):
    functions = reference_functions()
    pool, pool_backward = functions["avg_pool2d_loops"], functions["avg_pool2d_loops_backward"]
    pair = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v, v)  # noqa: E731
    rng = np.random.default_rng(0)
    for shape, kernel, stride, padding in hidden_sweep():
        x = rng.standard_normal(shape).astype(dtype)
        ours = pool(x, kernel, stride, padding, count_include_pad)
        k = pair(kernel)
        s = tuple(si or ki for si, ki in zip(pair(stride), k))
        xt = torch.from_numpy(x.copy()).requires_grad_(True)
        theirs = F.avg_pool2d(xt, k, s, pair(padding), ceil_mode=False, count_include_pad=count_include_pad)
        assert ours.dtype == dtype and ours.shape == tuple(theirs.shape)
        assert np.abs(ours - theirs.detach().numpy()).max() <= tolerance, (shape, kernel, stride, padding)
        grad_out = rng.standard_normal(ours.shape).astype(dtype)
        theirs.backward(torch.from_numpy(grad_out))
        grad_x = pool_backward(grad_out, x.shape, kernel, stride, padding, count_include_pad)
        assert grad_x.dtype == dtype and grad_x.shape == x.shape
        assert np.abs(grad_x - xt.grad.numpy()).max() <= tolerance, (shape, kernel, stride, padding)


def test_release_hides_the_solutions_and_hidden_tests():
    import nbformat

    from nbtools import REPO

    release = nbformat.read(REPO / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    text = "\n".join(cell.source for cell in release.cells)
    for secret in ("BEGIN SOLUTION", "HIDDEN TESTS", "cases = [", "divisor = kh * kw"):
        assert secret not in text, f"{secret!r} reached release/{LESSON}"
    assert "def as_pair(value)" in text, "the given helper must stay in the release"


def test_a_wrong_prediction_fails_its_own_cell_only():
    """Both sides: the reference predictions pass (above); a prediction of the wrong check, and one of the
    wrong place, fail exactly their cells."""
    wrong = edited("predictions", 'prediction_padding = ("B", (0, 2))', 'prediction_padding = ("C", (0, 2))')
    wrong = wrong.replace('prediction_divisor = ("B", (0, 0))', 'prediction_divisor = ("B", (0, 1))')
    assert failing_cells(LESSON, ALL_CELLS, {"predictions": wrong}) == {"predict_padding", "predict_divisor"}


def test_the_checks_catch_every_bug_and_pass_the_reference():
    from course.bugs import CHECKS, divisor_always_full, first_failure, padding_one_side, stride_zero_ignored
    from course.reference import avg_pool2d_reference

    assert first_failure(avg_pool2d_reference, CHECKS) is None
    assert all(first_failure(bug, CHECKS) for bug in (divisor_always_full, stride_zero_ignored, padding_one_side))


def test_a_test_without_the_default_stride_misses_only_the_stride_bug():
    """Both sides: the reference cases catch all five bugs (above); without the default-stride case the
    stride bug goes unseen and only its cell fails."""
    weaker = edited("my_cases", '    ((1, 1, 4, 4), "float64", 2, 0, 0, True),', "")
    assert failing_cells(LESSON, ALL_CELLS, {"my_cases": weaker}) == {"catches_stride"}


def test_the_notebook_never_shows_the_graded_predictions_answers():
    """Issue 53: the predictions are graded on ``CHECKS``, so no cell a student runs computes the bugs on them;
    the cell after the predictions runs them on ``PRACTICE``, where each bug is caught first elsewhere."""
    from course import bugs

    nb = nbformat.read(source_notebook(LESSON), as_version=4)
    shown = [cell.source.split("### BEGIN HIDDEN TESTS")[0] for cell in nb.cells if cell.cell_type == "code"]
    assert not [s for s in shown if re.search(r"first_failure\([^()]*,\s*CHECKS\)", s)], "a cell shows a key"
    assert any("first_failure(bug, PRACTICE)" in s for s in shown), "the method is shown on other checks"
    for bug in (bugs.divisor_always_full, bugs.stride_zero_ignored, bugs.padding_one_side):
        practice, graded = bugs.first_failure(bug, bugs.PRACTICE), bugs.first_failure(bug, bugs.CHECKS)
        assert practice is not None and practice != graded, f"{bug.__name__}: the practice shows the key {graded}"
    assert bugs.first_failure(bugs.avg_pool2d_reference, bugs.PRACTICE) is None


def test_cases_as_checks_refuses_what_the_card_does_not_allow():
    from course.bugs import cases_as_checks

    assert list(cases_as_checks([((1, 1, 4, 4), "float64", 2, 0, 0, True)])) == ["case 1"]
    for bad, words in [([((1, 1, 4, 4), "float64", 3, 1, 2, True)], "not a valid"),
                       ([((1, 1, 40, 4), "float64", 2, 0, 0, True)], "from 1 to 16"),
                       ([((1, 1, 4, 4), "float16", 2, 0, 0, True)], "dtype"),
                       ([((1, 1, 4, 4), "float64", 2, 0, 0, True)] * 7, "1 to 6 cases"),
                       ("cases", "must be a list")]:
        with pytest.raises(AssertionError, match=words):
            cases_as_checks(bad)
    # each rule of the spec card in its own words, never PyTorch's ("effective kernel size", "dilation"; issue 53)
    for shape, kernel, step, pad, rule in [((1, 1, 4, 4), 3, 1, 2, "padding must be >= 0 and at most kernel_size // 2 = 1, got 2"),
                                           ((1, 1, 4, 4), 2, 1, -1, "padding must be >= 0 and at most kernel_size // 2 = 1, got -1"),
                                           ((1, 1, 4, 4), 0, 1, 0, "kernel_size must be >= 1, got 0"),
                                           ((1, 1, 4, 4), 2, -1, 0, "stride must be >= 0 (0 means kernel_size), got -1"),
                                           ((1, 1, 2, 9), 5, 1, 1, "smaller than kernel_size 5: no window fits")]:
        with pytest.raises(AssertionError) as refused:
            cases_as_checks([(shape, "float64", kernel, step, pad, True)])
        assert rule in str(refused.value) and not re.search("dilation|effective|pad=|should", str(refused.value))


# --- one bug, one penalty, checked in-process (issue 29) ------------------------------------------------

ONE_CELL_BUGS = {  # name: (replaced solution cells, the one graded cell that must fail)
    "forward_float64_result": (dict([forward("np.zeros(x.shape[:2] + (out_h, out_w), dtype=x.dtype)",
                                             "np.zeros(x.shape[:2] + (out_h, out_w))")]), {"forward_avoids"}),
    "backward_float64_result": (dict([backward("np.zeros((batch, channels, height, width), dtype=grad_out.dtype)",
                                               "np.zeros((batch, channels, height, width))")]), {"backward_avoids"}),
    "backward_grad_out_unchecked": (dict([backward("if grad_out.shape != (batch, channels, out_h, out_w):",
                                                   "if False:")]), {"backward_errors"}),
    # lesson 3's contract (issue 53 item 7): grad_out's type and dtype and input_shape's length are checked too
    "backward_dtype_unchecked": (dict([backward("if grad_out.dtype not in (np.float32, np.float64):",
                                                "if False:")]), {"backward_errors"}),
    "backward_input_shape_unchecked": (dict([backward("if len(input_shape) != 4:", "if False:")]),
                                       {"backward_errors"}),
    # always kh·kw: count_include_pad=False's divisor is the *_no_pad_count cells' rule alone (issue 29)
    "forward_divisor_always_kh_kw": (dict([forward("divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)",
                                                   "divisor = kh * kw")]), {"forward_no_pad_count"}),
    "backward_divisor_always_kh_kw": (dict([backward("divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)",
                                                     "divisor = kh * kw")]), {"backward_no_pad_count"}),
}


@pytest.mark.parametrize("name", sorted(ONE_CELL_BUGS))
def test_a_one_cell_bug_fails_its_own_cell_only(name):
    """A float64 result for float32 input is *_avoids' rule alone (the value cells compare values only), a
    missing grad_out check backward_errors' alone, an always-kh·kw divisor the *_no_pad_count cells' alone. (The other side, the reference passing every cell, is
    test_reference_passes_every_graded_cell; a harness that failed or passed every cell fails here.)"""
    replace, expected = ONE_CELL_BUGS[name]
    assert failing_cells(LESSON, FORWARD_CELLS if "avg_pool2d_loops" in replace else BACKWARD_CELLS, replace) == expected


FORWARD_ID, BACKWARD_ID = "avg_pool2d_loops", "avg_pool2d_loops_backward"


def test_stride_0_on_one_axis_has_a_visible_twin():
    stride_zero_pair_fails_visibly(LESSON, FORWARD_ID, BACKWARD_ID)


# --- issue 53 item 8: output_size is asked once, in lesson 1 ------------------------------------------------

def test_the_students_own_lesson_1_output_size_is_read_not_pasted(tmp_path, monkeypatch):
    """As released, lesson 2 reads output_size from the student's own lesson 1 notebook beside it (a plain cell,
    never graded: at grading the tagged cell after it runs the course's own). With lesson 1 finished there,
    every visible check of lesson 2 passes; with lesson 1 still as released, the forward's checks fail saying
    where output_size was looked for, and no answer of the course stands in for it."""
    release = nbformat.read(source_notebook(LESSON).parents[2] / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    code = [c.source for c in release.cells if c.cell_type == "code"]
    (reading,) = [s for s in code if 'own_work("lesson1_by_hand", "output_size")' in s]
    stub = cell_by_id(release, "output_size").source
    assert "def output_size" not in stub, "the release holds no output_size of the course's"
    lesson1 = nbformat.read(source_notebook("lesson1_by_hand").parents[2] / "release" / "lesson1_by_hand"
                            / "lesson1_by_hand.ipynb", as_version=4)
    (tmp_path / "lesson1_by_hand").mkdir()
    (tmp_path / LESSON).mkdir()
    monkeypatch.chdir(tmp_path / LESSON)
    cells = sorted(ALL_CELLS - PREDICTION_CELLS)
    as_released = {"output_size": reading + "\n\n\n" + stub}
    nbformat.write(lesson1, tmp_path / "lesson1_by_hand" / "lesson1_by_hand.ipynb")
    assert {"forward_tests", "backward_tests"} <= failing_cells(LESSON, cells, as_released, hidden=False)
    cell_by_id(lesson1, "output_size").source = solution_source("lesson1_by_hand", "output_size")
    nbformat.write(lesson1, tmp_path / "lesson1_by_hand" / "lesson1_by_hand.ipynb")
    assert failing_cells(LESSON, cells, as_released, hidden=False) == set()


# --- issue 53 item 12: one mistake, one cell ---------------------------------------------------------------

WINDOW_MISTAKES = {  # a mistake in the windows' place or size: forward_tests' alone, whatever the divisor cell sees
    "steps by the kernel": ("top, left = i * sh - ph, j * sw - pw", "top, left = i * kh - ph, j * kw - pw"),
    "adds the padding": ("top, left = i * sh - ph, j * sw - pw", "top, left = i * sh + ph, j * sw + pw"),
    # sized from a slice of x: wrong only where the output is larger than x (an even kernel, padding k // 2, stride 1)
    "output sized from a slice of x": ("out = np.zeros(x.shape[:2] + (out_h, out_w), dtype=x.dtype)",
                                       "out = np.zeros_like(x[:, :, :out_h, :out_w])"),
}


@pytest.mark.parametrize("name", sorted(WINDOW_MISTAKES))
def test_a_window_mistake_costs_forward_tests_alone(name):
    """Windows of the student's own that hold no real element (a true one always holds one) are the window cells'
    to charge: forward_no_pad_count compared 0 / (a negative count) with NaN there and charged them again."""
    old, new = WINDOW_MISTAKES[name]
    assert failing_cells(LESSON, sorted(FORWARD_CELLS), {"avg_pool2d_loops": edited("avg_pool2d_loops", old, new)}) \
        == {"forward_tests"}


def test_dividing_by_the_real_count_with_count_include_pad_true_too_costs_forward_tests_alone():
    """count_include_pad=True divides by the real elements as well: its count_include_pad=False results are right, so
    forward_no_pad_count (which took the student's own True result as its yardstick) no longer charges it again."""
    wrong = edited("avg_pool2d_loops", "divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)",
                   "divisor = (r1 - r0) * (c1 - c0)")
    assert failing_cells(LESSON, sorted(FORWARD_CELLS), {"avg_pool2d_loops": wrong}) == {"forward_tests"}
