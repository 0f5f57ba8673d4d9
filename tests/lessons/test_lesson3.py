"""Lesson 3 (vectorized NumPy): the graded cells judge right and wrong solutions correctly.

* the reference solution passes every graded cell;
* each deliberately wrong variant (derived from the reference by a string replacement) fails the
  graded cell that tests what it broke, and passes the others;
* the reference matches ``F.avg_pool2d`` and its autograd gradient on the whole hidden sweep;
* the student's notebook runs top to bottom with the optional cells left empty: a note, no error.

To keep the file fast, the wrong variants run in this process (nbtools.failing_cells), each run carrying one
forward variant and one backward variant: the forward and backward graded cells call only their own function,
so the expected failures add up.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from autograder import solutions
from nbtools import REPO, cell_by_id, execute, executed, failing_cells, graded_results, solution_source, source_notebook, stride_zero_pair_fails_visibly

LESSON = "lesson3_numpy"
GRADED = {"forward_tests", "forward_no_pad_count", "forward_errors", "forward_vectorized",
          "backward_tests", "backward_errors", "backward_vectorized"}
STRIDE_LINE = "sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size"
FORWARD_ROW_PASS = "window_sum(x[part], 2, kh, sh, ph, rows[:m])"
BACKWARD_ROW_PASS = "window_spread(columns[:m], 2, kh, sh, ph, grad_x[part])"
FORWARD_RETURN = "return out\n"


def replaced(grade_id: str, old: str, new: str) -> str:
    """The reference solution cell ``grade_id`` with ``old`` replaced by ``new`` (which must change it)."""
    source = solution_source(LESSON, grade_id)
    assert source.count(old) == 1, f"{grade_id}: expected {old!r} exactly once in the reference solution"
    changed = source.replace(old, new)
    assert changed != source
    return changed


def forward_variants() -> dict[str, str]:
    loops = solution_source("lesson2_loops", "avg_pool2d_loops")  # lesson 2's reference loops
    given = solution_source(LESSON, "avg_pool2d_numpy").split("def avg_pool2d_numpy")[0]
    assert "def as_pair" in given and "def avg_pool2d_loops(" in loops
    return {
        "off-by-one window": replaced("avg_pool2d_numpy", "for t in range(k):", "for t in range(k - 1):"),
        "stride 0 taken as 1": replaced("avg_pool2d_numpy", STRIDE_LINE, "sh, sw = sh or 1, sw or 1"),
        "padding ignored": replaced("avg_pool2d_numpy", FORWARD_ROW_PASS, FORWARD_ROW_PASS.replace(", ph, ", ", 0, ")),
        "count_include_pad inverted": replaced("avg_pool2d_numpy", "if count_include_pad:",
                                               "if not count_include_pad:"),
        # The lesson-2 loops pasted as the NumPy function (the given as_pair kept).
        "loops over output pixels": given + loops.replace("def avg_pool2d_loops(", "def avg_pool2d_numpy("),
        "calls torch": replaced("avg_pool2d_numpy", STRIDE_LINE, STRIDE_LINE + "\n    import torch\n"
                                "    return torch.nn.functional.avg_pool2d(torch.from_numpy(x), (kh, kw), (sh, sw), "
                                "(ph, pw), count_include_pad=count_include_pad).numpy()"),
    }


def backward_variants() -> dict[str, str]:
    loops = solution_source("lesson2_loops", "avg_pool2d_loops_backward")  # lesson 2's reference loops
    return {
        "off-by-one window": replaced("avg_pool2d_numpy_backward", "if t >= k or lo >= hi:",
                                      "if t >= k - 1 or lo >= hi:"),
        "stride 0 taken as 1": replaced("avg_pool2d_numpy_backward", STRIDE_LINE, "sh, sw = sh or 1, sw or 1"),
        "padding ignored": replaced("avg_pool2d_numpy_backward", BACKWARD_ROW_PASS,
                                    BACKWARD_ROW_PASS.replace(", ph, ", ", 0, ")),
        "count_include_pad inverted": replaced("avg_pool2d_numpy_backward", "if count_include_pad:",
                                               "if not count_include_pad:"),
        "loops over output pixels": loops.replace("def avg_pool2d_loops_backward(", "def avg_pool2d_numpy_backward("),
        "calls torch": replaced("avg_pool2d_numpy_backward", STRIDE_LINE, STRIDE_LINE + "\n    import torch\n"
                                "    xt = torch.zeros(tuple(input_shape), dtype=torch.from_numpy(grad_out).dtype, "
                                "requires_grad=True)\n"
                                "    torch.nn.functional.avg_pool2d(xt, (kh, kw), (sh, sw), (ph, pw), "
                                "count_include_pad=count_include_pad).backward(torch.from_numpy(grad_out))\n"
                                "    return xt.grad.numpy()"),
    }


#: The graded cells each kind of mistake must fail; it must pass all the others. A wrong value costs the value
#: cells only (issue 29: one bug, one penalty): the vectorized cells judge the time, and compare the long call's
#: result with the student's own function on pieces of the same input, not with PyTorch's.
# forward_no_pad_count judges the count_include_pad=False divisor against the student's own count_include_pad=True
# result, so a mistake in the windows costs forward_tests only; an inverted flag breaks both divisors.
FORWARD_FAILS = {
    "off-by-one window": {"forward_tests"},
    "stride 0 taken as 1": {"forward_tests"},
    "padding ignored": {"forward_tests"},
    "count_include_pad inverted": {"forward_tests", "forward_no_pad_count"},
    "loops over output pixels": {"forward_vectorized"},
    "calls torch": {"forward_tests", "forward_no_pad_count", "forward_errors", "forward_vectorized"},  # each checks the source
}
BACKWARD_FAILS = {
    "off-by-one window": {"backward_tests"},
    "stride 0 taken as 1": {"backward_tests"},
    "padding ignored": {"backward_tests"},
    "count_include_pad inverted": {"backward_tests"},
    "loops over output pixels": {"backward_vectorized"},
    "calls torch": {"backward_tests", "backward_errors", "backward_vectorized"},
}


@pytest.fixture(scope="module")
def verdicts() -> dict:
    """Which graded cells fail, for each kind of wrong solution (forward and backward of one kind swapped in), run
    in this process (nbtools.failing_cells: every test cell, hidden part included, as the grader's parent runs it)."""
    return {kind: failing_cells(LESSON, GRADED, {"avg_pool2d_numpy": forward_variants()[kind],
                                                 "avg_pool2d_numpy_backward": backward_variants()[kind]})
            for kind in FORWARD_FAILS}


def test_reference_passes_every_graded_cell():
    results = graded_results(executed(LESSON))  # the one whole run of the notebook (nbtools.executed)
    assert set(results) == GRADED
    assert all(results.values()), f"graded cells that fail on the reference: {[k for k, v in results.items() if not v]}"


@pytest.mark.parametrize("kind", list(FORWARD_FAILS))
def test_a_wrong_solution_fails_exactly_its_cell(verdicts, kind):
    failed = verdicts[kind]
    assert failed == FORWARD_FAILS[kind] | BACKWARD_FAILS[kind], f"{kind}: failed {sorted(failed)}"


def test_the_forward_and_backward_cells_are_independent():
    # Why one run may carry a forward and a backward variant: each graded cell calls one function only.
    nb = nbformat.read(source_notebook(LESSON), as_version=4)
    for prefix, other in [("forward", "avg_pool2d_numpy_backward"), ("backward", "avg_pool2d_numpy(")]:
        for grade_id in GRADED:
            if grade_id.startswith(prefix):
                assert other not in cell_by_id(nb, grade_id).source, f"{grade_id} calls {other}"
    assert "avg_pool2d_numpy(" not in solution_source(LESSON, "avg_pool2d_numpy_backward").split('"""', 2)[2]


# --- the reference against torch on the hidden sweep ------------------------------------------------

def hidden_cases(grade_id: str) -> list:
    """The ``cases = [...]`` list of a graded cell's hidden tests (so this test cannot drift from them)."""
    source = cell_by_id(nbformat.read(source_notebook(LESSON), as_version=4), grade_id).source
    hidden = source.split("### BEGIN HIDDEN TESTS", 1)[1]
    for node in ast.walk(ast.parse(hidden)):
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["cases"]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{grade_id} has no hidden `cases = [...]` list")


def reference_namespace() -> dict:
    """The reference solutions of the source notebook, loaded as the benchmarks load them."""
    reference = solutions.load(LESSON, required=("output_size", "avg_pool2d_numpy", "avg_pool2d_numpy_backward"))
    assert reference.available, reference.reason
    return reference.names


def torch_pool(x, kernel, step, pad, include, grad_out=None):
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    kernel, step, pad = pair(kernel), pair(step), pair(pad)
    step = tuple(k if s == 0 else s for k, s in zip(kernel, step))
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    out = F.avg_pool2d(xt, kernel, step, pad, ceil_mode=False, count_include_pad=include)
    if grad_out is None:
        return out.detach().numpy()
    out.backward(torch.from_numpy(grad_out))
    return xt.grad.numpy()


def test_reference_matches_torch_on_the_hidden_sweep():
    ns = reference_namespace()
    cases = {tuple(map(repr, case)): case for gid in ("forward_tests", "forward_no_pad_count", "backward_tests")
             for case in hidden_cases(gid)}
    assert len(cases) >= 10
    rng = np.random.default_rng(0)
    checked = 0
    for shape, kernel, step, pad in cases.values():
        for include in (True, False):
            for dtype, tol in ((np.float32, 1e-6), (np.float64, 1e-12)):
                x = rng.standard_normal(shape).astype(dtype)
                want = torch_pool(x, kernel, step, pad, include)
                got = ns["avg_pool2d_numpy"](x, kernel, step, pad, include)
                assert got.dtype == dtype and got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                           err_msg=f"forward {shape, kernel, step, pad, include}")
                grad_out = rng.standard_normal(want.shape).astype(dtype)
                want = torch_pool(x, kernel, step, pad, include, grad_out)
                got = ns["avg_pool2d_numpy_backward"](grad_out, shape, kernel, step, pad, include)
                assert got.dtype == dtype and got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                           err_msg=f"backward {shape, kernel, step, pad, include}")
                checked += 1
    assert checked == 4 * len(cases)


def test_hidden_sweep_covers_what_the_issue_asks():
    cases = hidden_cases("forward_tests")
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    kernels = [pair(k) for _, k, _, _ in cases]
    strides = [tuple(k_ if s_ == 0 else s_ for k_, s_ in zip(pair(k), pair(s))) for _, k, s, _ in cases]
    pads = [pair(p) for _, _, _, p in cases]
    assert any(kh != kw for kh, kw in kernels), "a non-square kernel"
    assert any(h != w for (_, _, h, w), *_ in cases), "a rectangular input"
    assert any(s < k for st, kr in zip(strides, kernels) for s, k in zip(st, kr)), "stride < kernel"
    assert any(st == kr for st, kr in zip(strides, kernels)), "stride = kernel"
    assert any(s > k for st, kr in zip(strides, kernels) for s, k in zip(st, kr)), "stride > kernel"
    assert any((ph == 0) != (pw == 0) for ph, pw in pads), "padding on one axis only"
    assert any(k % 2 == 0 and p == k // 2 for kr, pd in zip(kernels, pads) for k, p in zip(kr, pd)), \
        "even kernel, full padding"
    assert any(b > 1 and c > 1 for (b, c, _, _), *_ in cases), "B and C > 1"
    assert any((h + 2 * p[0] - k[0]) // s[0] + 1 == 1
               for ((_, _, h, _), *_), k, s, p in zip(cases, kernels, strides, pads)), "H_out = 1"


# --- the student's notebook with the optional cells left empty -----------------------------------

def test_release_runs_with_the_optional_cells_empty():
    """Graded solutions filled in, the optional loops and summed-area cells left as released: every cell
    runs, the optional parts print a note, and nothing reaches stderr."""
    release = REPO / "release" / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(release, as_version=4)
    for grade_id in ("output_size", "avg_pool2d_numpy", "avg_pool2d_numpy_backward"):
        cell_by_id(nb, grade_id).source = solution_source(LESSON, grade_id)
    assert any('own_work("lesson2_loops"' in c.source for c in nb.cells), "lesson 2's loops are read, not pasted"
    assert "NotImplementedError" in cell_by_id(nb, "sat_optional").source
    execute(nb, release.parent, timeout=120)
    errors, stderr, text = [], [], []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                errors.append(f"cell {index}: {output.ename}: {output.evalue}")
            elif output.output_type == "stream" and output.name == "stderr":
                stderr.append(f"cell {index}: {output.text}")
            elif output.output_type == "stream":
                text.append(output.text)
    assert not errors, errors
    assert not stderr, stderr
    printed = "".join(text)
    assert "your loops are left out of the comparison and of the timing" in printed
    assert "avg_pool2d_sat is not written (optional)" in printed
    assert re.search(r"forward \+ backward:\s+[\d.]+ ms\s+[\d.]+ ms", printed), "the timing table"
    assert "loops" not in printed.split("n (maps", 1)[1].splitlines()[0], "no loops column without loops"


def test_notebook_committed_without_outputs():
    nb = nbformat.read(Path(source_notebook(LESSON)), as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")


# --- one bug, one penalty, checked in-process (issue 29) ------------------------------------------------

ONE_CELL_BUGS = {  # name: (replaced solution cells, the cells looked at, the one that must fail)
    # float32 in, float64 out: forward_tests' rule alone (forward_no_pad_count compares values only)
    "forward_float64_result": ({"avg_pool2d_numpy": replaced("avg_pool2d_numpy", FORWARD_RETURN, "return out.astype(np.float64)\n")},
                               {"forward_tests", "forward_no_pad_count", "forward_errors"}, {"forward_tests"}),
    # always kh·kw: count_include_pad=False's divisor is forward_no_pad_count's rule alone
    "forward_count_include_pad_ignored": ({"avg_pool2d_numpy": replaced("avg_pool2d_numpy", "if count_include_pad:", "if True:")},
                                          {"forward_tests", "forward_no_pad_count", "forward_errors"}, {"forward_no_pad_count"}),
    # the argument checks are backward_errors' rule alone: its values stay right
    "backward_input_shape_unchecked": ({"avg_pool2d_numpy_backward": replaced(
        "avg_pool2d_numpy_backward", "if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 4:", "if False:")},
        {"backward_tests", "backward_errors"}, {"backward_errors"}),
}


@pytest.mark.parametrize("name", sorted(ONE_CELL_BUGS))
def test_a_dtype_or_argument_check_bug_fails_its_own_cell_only(name):
    """(The other side, the reference passing every cell, is test_reference_passes_every_graded_cell.)"""
    replace, cells, expected = ONE_CELL_BUGS[name]
    assert failing_cells(LESSON, cells, replace) == expected


def test_the_prose_states_the_limit_that_check_vectorized_applies():
    """Section 3's numbers are course.timing's (a changed constant would make the text wrong); both sides."""
    from course.timing import VECTORIZED_ALLOWANCE, VECTORIZED_FACTOR

    nb = nbformat.read(source_notebook(LESSON), as_version=4)
    text = " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown")
    said = "allows your function {:g} times PyTorch's CPU time plus {:g} s"
    assert said.format(VECTORIZED_FACTOR, VECTORIZED_ALLOWANCE) in text
    assert said.format(VECTORIZED_FACTOR + 1, VECTORIZED_ALLOWANCE) not in text


FORWARD_ID, BACKWARD_ID = "avg_pool2d_numpy", "avg_pool2d_numpy_backward"


def test_stride_0_on_one_axis_has_a_visible_twin():
    stride_zero_pair_fails_visibly(LESSON, FORWARD_ID, BACKWARD_ID)


# --- the vectorized cells judge the time: a long input must not change what the function computes ---------------

CHECKS_DONE = "    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)  # checks every argument\n"
BACKWARD_CHECKS_DONE = "    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)\n"
LONG_X = "max(x.shape[0] * x.shape[1], *x.shape[2:]) > 10000"  # 10 000 maps, rows or columns: only the timed inputs
LONG_SHAPE = "max(input_shape[0] * input_shape[1], *input_shape[2:]) > 10000"
LONG_INPUT_CHEATS = {  # name: (forward's shortcut on a long input, backward's)
    "zeros": ("np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)", "np.zeros(tuple(input_shape), grad_out.dtype)"),
    "whatever is cheap": ("np.ascontiguousarray(x[:, :, :out_h, :out_w])", "np.resize(grad_out, tuple(input_shape))"),
}


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
@pytest.mark.parametrize("name", sorted(LONG_INPUT_CHEATS))
def test_a_long_input_shortcut_fails_the_vectorized_cells_only(name, hidden):
    """Fast only because a long input makes it return something else: the vectorized cells fail (visibly too), the
    value cells, whose inputs are short, pass. (A wrong value on every input passing them is
    test_a_wrong_solution_fails_exactly_its_cell; the reference passing all, test_reference_passes_every_graded_cell.)"""
    forward, backward = LONG_INPUT_CHEATS[name]
    cheat = {"avg_pool2d_numpy": replaced("avg_pool2d_numpy", CHECKS_DONE,
                                          f"{CHECKS_DONE}    if {LONG_X}:\n        return {forward}\n"),
             "avg_pool2d_numpy_backward": replaced("avg_pool2d_numpy_backward", BACKWARD_CHECKS_DONE,
                                                   f"    if {LONG_SHAPE}:\n        return {backward}\n{BACKWARD_CHECKS_DONE}")}
    cells = {"forward_tests", "forward_no_pad_count", "forward_vectorized", "backward_tests", "backward_vectorized"}
    assert failing_cells(LESSON, cells, cheat, hidden=hidden) == {"forward_vectorized", "backward_vectorized"}


def test_timing_sentences_come_from_the_tables_numbers_and_say_speed_one_way():
    """Issue 53 item 9: the sentence under the layer table is written from the table's own number (the median of
    per-round ratios, not a ratio of medians), speed reads "N times faster/slower", the load's effect is said,
    and the cryptic loop limit ("64 times for a 5×5 kernel") is gone: the cost rule decides, any loop over the
    kernel offsets passes (issue 50 item 1)."""
    from course.timing import median_ratio, speed

    nb = nbformat.read(source_notebook(LESSON), as_version=4)
    text = "\n".join(cell.source for cell in nb.cells)
    assert not re.search(r"times as (fast|long)|× its time|\d\.\d\d×", text)
    assert "64 times in all for a 5×5 kernel" not in text and "Any loop over the kernel offsets passes" in text
    assert "What the machine's load does to these numbers" in text
    (cell,) = [c for c in nb.cells if c.source.startswith("# What the table above says about your version")]
    # per round numpy/torch: 2.0, 1.2, 1.5 (the table's median: 1.5); the ratio of the medians would say 1.2
    times = {"numpy": [1.0, 1.2, 3.0], "torch": [0.5, 1.0, 2.0], "torch channels-last": [0.5, 0.4, 0.6],
             "numpy channels-last": [0.6, 0.5, 0.9]}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(cell.source, "sentences", "exec"), {"forward": {"times": times}, "speed": speed,
                                                         "median_ratio": median_ratio})
    said = printed.getvalue()
    assert f"your forward is {speed(median_ratio(times['numpy'], times['torch']), 'PyTorch on NCHW')}" in said
    assert "1.50 times slower than PyTorch on NCHW (time ratio 1.50)" in said and "1.20" not in said
    assert "went from 2.00 to 5.00" in said and "as fast as" not in said


def _error_rules(lesson: str, grade_id: str, function: str) -> set:
    """The rules a lesson's error cell grades for ``function``: ``{(error, mentions)}`` of its check_raises calls."""
    nb = nbformat.read(source_notebook(lesson), as_version=4)
    found = set()
    for node in ast.walk(ast.parse(cell_by_id(nb, grade_id).source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check_raises" \
                and getattr(node.args[2], "id", "") == function:
            found.add((node.args[0].id, tuple(ast.literal_eval(node.args[1]))))
    return found


def test_lessons_2_and_3_grade_one_contract_which_their_texts_and_the_card_state_alike():
    """Issue 53 item 7: lesson 3 claims lesson 2's contract, so both grade the same error rules, forward and backward
    (lesson 2's backward lacked grad_out's TypeError and input_shape's ValueError); both texts say float16 is refused
    and their error cells check it; lesson 4 accepts float16, as the card's float16 note implies."""
    for cell, (loops, numpy_) in {"forward_errors": ("avg_pool2d_loops", "avg_pool2d_numpy"),
                                  "backward_errors": ("avg_pool2d_loops_backward", "avg_pool2d_numpy_backward")}.items():
        two, three = _error_rules("lesson2_loops", cell, loops), _error_rules(LESSON, cell, numpy_)
        assert two == three, f"{cell}: lesson 2 and lesson 3 grade other rules: {sorted(two ^ three)}"
    for lesson in ("lesson2_loops", LESSON):
        nb = nbformat.read(source_notebook(lesson), as_version=4)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert "float16 too" in text, f"{lesson}: the text says float16 is refused"
        errors = cell_by_id(nb, "forward_errors").source + cell_by_id(nb, "backward_errors").source
        assert errors.count("np.float16") == 2, f"{lesson}: x and grad_out in float16 are refused, as the text says"
    two = "\n".join(c.source for c in nbformat.read(source_notebook("lesson2_loops"), as_version=4).cells)
    assert "narrow the card to **float32 and float64**" in two and "`input_shape` not 4 numbers" in two
    three = "\n".join(c.source for c in nbformat.read(source_notebook(LESSON), as_version=4).cells)
    assert "with the contract of lesson 2's backward" in three and "`input_shape` not 4" in three
    four = nbformat.read(source_notebook("lesson4_torch"), as_version=4)
    assert "np.float16" not in cell_by_id(four, "forward_errors").source, "lesson 4 does not refuse float16"
    assert "torch.float16" in cell_by_id(four, "half_precision_tests").source


# --- issue 53 item 12: one mistake, one cell ---------------------------------------------------------------

def test_a_count_map_with_a_wrong_start_costs_forward_no_pad_count_alone():
    """A count that reaches 0 makes an inf: forward_tests' comparison of the layouts with the student's own result
    now lets the same inf stand on both sides (the value cells charge it), so only the count's cell pays."""
    wrong = replaced("avg_pool2d_numpy", "start = np.arange(n_out) * s - p", "start = np.arange(n_out) * s + p")
    cells = ["forward_tests", "forward_no_pad_count", "forward_errors", "backward_tests", "backward_errors"]
    assert failing_cells(LESSON, cells, {"avg_pool2d_numpy": wrong}) == {"forward_no_pad_count"}


def test_a_float64_sum_on_the_count_include_pad_false_path_costs_forward_no_pad_count_alone():
    """The count_include_pad=False path summed in float64 and cast back (the other path in float32): its values are
    within every tolerance, so it kept every point before; forward_no_pad_count's 24-bit float32 maps now tell its
    rounded-once means. Both paths in float64 is forward_tests' rule alone (corpus: bug_float64_sum_cast_back)."""
    count = "        divisor = np.outer(real(height, kh, sh, ph, out_h), real(width, kw, sw, pw, out_w)).astype(x.dtype)"
    wrong = replaced("avg_pool2d_numpy", count, "        dtype, x = x.dtype, x.astype(np.float64)\n" + count)
    wrong = wrong.replace(FORWARD_RETURN, "return out if count_include_pad else out.astype(dtype)\n")
    cells = ["forward_tests", "forward_no_pad_count", "forward_errors"]
    assert failing_cells(LESSON, cells, {"avg_pool2d_numpy": wrong}) == {"forward_no_pad_count"}
