"""Lesson 4 (autograd Function): the reference passes every graded cell, wrong variants fail theirs.

The wrong variants are derived from the reference solution by string replacement (each replacement is
asserted to apply) and judged in this process, every graded cell with its hidden part (tests/nbtools.failing_cells);
the reference is judged on the one whole run of the notebook (nbtools.executed).
"""

import itertools

import pytest
import torch
import torch.nn.functional as F

from autograder.device_check import SWEEP, check_correctness, load_reference, torch_args
from nbtools import executed, failing_cells, graded_results, solution_source, source_notebook

LESSON = "lesson4_torch"
GRADED = {"forward_tests": 6, "forward_errors": 3, "backward_tests": 6, "gradcheck_tests": 4, "module_tests": 3,
          "module_repr": 1, "predict_max_backward": 1, "predict_avg_backward": 1, "half_precision_tests": 3}


def replaced(text: str, old: str, new: str) -> str:
    assert old in text, f"the reference solution changed: {old!r} not found"
    return text.replace(old, new)


def forward_calls_torch_pooling(source: str) -> str:
    start = source.index("        out = x.new_empty((B, C, H_out, W_out))")
    last = "        out /= divisor(H, W, (kh, kw), (sh, sw), (ph, pw), (H_out, W_out), count_include_pad, out)\n"
    end = source.index(last) + len(last)
    return (source[:start] + "        out = F.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw),"
            " count_include_pad=count_include_pad)\n" + source[end:])


def swapped_predictions() -> str:
    """The prediction cell with max pooling's and average pooling's gradients swapped (each a right form)."""
    ref = solution_source(LESSON, "predict_backward")
    return replaced(replaced(ref, "predicted_max_grad = ", "predicted_tmp = "), "predicted_avg_grad = ",
                    "predicted_max_grad = ").replace("predicted_tmp = ", "predicted_avg_grad = ")


def variants() -> dict:
    """{name: ({grade_id: replacement source of that solution cell}, the graded cells it must fail)}."""
    ref = solution_source(LESSON, "avg_pool2d_function")
    wrappers = solution_source(LESSON, "wrappers")
    return {
        # one bug, one penalty: stride 0 is forward_tests' rule alone; the wrappers (module_tests,
        # half_precision_tests) are judged against what the student's own Function does at stride 0
        "stride 0 not treated as kernel_size": (
            {"avg_pool2d_function": replaced(ref, "sh, sw = sh or kh, sw or kw", "pass  # stride used as given")},
            {"forward_tests"}),
        # two independent bugs in one run (notebook runs are slow); each costs its own cells only
        "count_include_pad inverted in backward only, and the wrapper's default stride is 1": (
            {"avg_pool2d_function": replaced(ref, "(H_out, W_out), count_include_pad,\n                                   grad_out)",
                                             "(H_out, W_out), not count_include_pad,\n                                   grad_out)"),
             "wrappers": replaced(wrappers, "def avg_pool2d_torch(x, kernel_size, stride=0,",
                                  "def avg_pool2d_torch(x, kernel_size, stride=1,")},
            {"backward_tests", "module_tests"}),  # gradcheck_tests: no padding, where the flag changes nothing
        "backward does not divide, and the two predictions swapped": (
            {"avg_pool2d_function": replaced(ref, "share = grad_out / divisor(", "share = grad_out + 0 * divisor("),
             "predict_backward": swapped_predictions()},
            {"backward_tests", "gradcheck_tests", "predict_max_backward", "predict_avg_backward"}),
        # one bug, one penalty: the wrappers (module_tests, half_precision_tests) are judged against the
        # student's own Function at the same arguments, so a Function that fails (a divisor that always counts
        # the padding) or raises (count_include_pad=False left unwritten) costs the Function's cells alone
        # (gradcheck_tests runs without padding, where the divisor is kh·kw either way)
        "the divisor always counts the padding": (
            {"avg_pool2d_function": replaced(ref, "out /= divisor(H, W, (kh, kw), (sh, sw), (ph, pw), (H_out, W_out), "
                                             "count_include_pad, out)", "out /= kh * kw")},
            {"forward_tests"}),
        "count_include_pad=False raises": (
            {"avg_pool2d_function": replaced(ref, "        (kh, kw), (sh, sw), (ph, pw) = _pair(",
                                             "        if not count_include_pad:\n"
                                             "            raise NotImplementedError('count_include_pad=False')\n"
                                             "        (kh, kw), (sh, sw), (ph, pw) = _pair(")},
            {"forward_tests", "backward_tests"}),  # gradcheck_tests takes count_include_pad=True only
        # module_tests reads avg_pool2d_torch with the Function it calls (helpers are read transitively);
        # a method is read with its class, in the notebook as under the grader, so the backward's
        # check_avoids (backward_tests, gradcheck_tests) sees the forward's call too.
        "forward calls F.avg_pool2d": ({"avg_pool2d_function": forward_calls_torch_pooling(ref)},
                                       {"forward_tests", "backward_tests", "gradcheck_tests", "module_tests",
                                        "module_repr", "half_precision_tests"}),
        # Saving x is taught (cell 5) and not graded: which tensors a Function saves can only be watched
        # from inside the student's process, where it can be faked.
        "saves x for the backward": (
            {"avg_pool2d_function": replaced(ref, "ctx.input_size = (H, W)",
                                             "ctx.save_for_backward(x)\n        ctx.input_size = (H, W)")},
            set()),
        # issue 53 item 12: float16 is one of the card's dtypes; a Function that refuses it costs forward_tests
        # (the float16 wrapper of exercise 4.4 sums in float32, so half_precision_tests keeps its points)
        "refuses float16": (
            {"avg_pool2d_function": replaced(ref, "        if not x.is_floating_point():",
                                             "        if x.dtype not in (torch.float32, torch.float64):")},
            {"forward_tests"}),
        # ... and a wrapper's own bug costs module_tests: the layer drops count_include_pad
        "the layer drops count_include_pad": (
            {"wrappers": replaced(wrappers, "self.stride, self.padding, self.count_include_pad)",
                                  "self.stride, self.padding)")},
            {"module_tests"}),
        # a rule that fails costs its own points: output, gradient and parameters right, no extra_repr
        "no extra_repr": (
            {"wrappers": replaced(wrappers, 'return (f"kernel_size=', 'return "" and (f"kernel_size=')},
            {"module_repr"}),
    }


def test_graded_cells_have_their_points():
    import nbformat

    nb = nbformat.read(source_notebook(LESSON), as_version=4)
    found = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"].get("points")
             for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"}
    assert found == GRADED


def test_reference_passes_every_graded_cell():
    results = graded_results(executed(LESSON))  # the one whole run of the notebook (nbtools.executed)
    assert results == {grade_id: True for grade_id in GRADED}


def test_reference_passes_every_graded_cell_in_process():
    """The in-process harness the wrong variants are judged with agrees with the notebook on the reference."""
    assert failing_cells(LESSON, GRADED) == set()


@pytest.mark.parametrize("name", list(variants()))
def test_wrong_variant_fails_its_cells_and_passes_the_others(name):
    replacements, should_fail = variants()[name]
    failed = failing_cells(LESSON, GRADED, replacements)
    assert failed == should_fail, f"{name}: failed {sorted(failed)}, expected {sorted(should_fail)}"


def test_a_float16_mean_summed_in_float16_fails_only_the_half_precision_cell():
    """Both sides: the reference passes half_precision_tests (above); the same call without the float32
    sum fails it, and nothing else."""
    wrong = replaced(solution_source(LESSON, "half_precision"),
                     "return avg_pool2d_torch(x.float(), kernel_size, stride, padding, count_include_pad).half()",
                     "return avg_pool2d_torch(x, kernel_size, stride, padding, count_include_pad)")
    assert failing_cells(LESSON, GRADED, {"half_precision": wrong}) == {"half_precision_tests"}


@pytest.fixture(scope="module")
def reference():
    return load_reference()


def test_reference_passes_gradcheck_and_matches_torch_on_the_sweep(reference):
    assert check_correctness(reference["AvgPool2dFunction"].apply, "cpu", log=lambda *_: None) == []


def test_reference_matches_torch_in_float64_forward_and_backward(reference):
    function = reference["AvgPool2dFunction"].apply
    generator = torch.Generator().manual_seed(3)
    for (shape, k, s, p), cip in itertools.product(SWEEP, (True, False)):
        x = torch.randn(shape, generator=generator, dtype=torch.float64, requires_grad=True)
        ours, theirs = function(x, k, s, p, cip), F.avg_pool2d(x, *torch_args(k, s, p), count_include_pad=cip)
        upstream = torch.randn(theirs.shape, generator=generator, dtype=torch.float64)
        assert ours.dtype == torch.float64 and ours.shape == theirs.shape
        assert (ours - theirs).abs().max() <= 1e-12
        (g_ours,), (g_theirs,) = torch.autograd.grad(ours, x, upstream), torch.autograd.grad(theirs, x, upstream)
        assert (g_ours - g_theirs).abs().max() <= 1e-12


def test_reference_backward_is_itself_differentiable(reference):
    function = reference["AvgPool2dFunction"].apply
    x = torch.randn(1, 2, 6, 7, dtype=torch.float64, requires_grad=True)
    for args in [((3, 2), (2, 1), (1, 1), False), (2, 1, 1, True)]:
        assert torch.autograd.gradgradcheck(lambda t: function(t, *args), (x,))


def test_reference_keeps_dtype_and_saves_no_tensor(reference):
    function = reference["AvgPool2dFunction"].apply
    for dtype in (torch.float16, torch.float32, torch.float64):
        x = torch.randn(2, 3, 8, 8).to(dtype).requires_grad_(True)
        out = function(x, 3, 2, 1, False)
        assert out.dtype == dtype and out.grad_fn.saved_tensors == ()


def test_reference_module_repr_and_parameters(reference):
    layer = reference["AvgPool2d"]((3, 2), stride=1, padding=(1, 0), count_include_pad=False)
    assert repr(layer) == "AvgPool2d(kernel_size=(3, 2), stride=1, padding=(1, 0), count_include_pad=False)"
    assert list(layer.parameters()) == []


def test_half_precision_inputs_are_drawn_per_grading_run(grader_state):
    """Issue 31: half_precision_tests' inputs come from the grading run's seed (course.checks.input_generator,
    random_input), as every other hidden input: the same run seed draws them again, another run seed draws
    anew, and the float16 ones stay in [0, 2) (the relative-error bound needs positive means)."""
    import nbformat
    import numpy as np

    import course.checks
    from nbtools import cell_by_id

    source = cell_by_id(nbformat.read(source_notebook(LESSON), as_version=4), "half_precision_tests").source
    drawn = [line for line in source.splitlines() if line.startswith(("rows = ", "maps = ", "x32 = "))]
    assert len(drawn) == 3, drawn

    def inputs(run_seed):
        grader_state(run_seed=run_seed)
        namespace = {"torch": torch, "np": np, "input_generator": course.checks.input_generator,
                     "random_input": course.checks.random_input}
        exec("\n".join(drawn), namespace)
        return [namespace[name] for name in ("rows", "maps", "x32")]

    first, again, other = inputs(11), inputs(11), inputs(12)
    assert all(torch.equal(a, b) for a, b in zip(first, again)), "a regrade with the same seed draws the same"
    assert not any(torch.equal(a, b) for a, b in zip(first, other)), "a new run seed draws new inputs"
    assert first[0].dtype == first[1].dtype == torch.float16 and first[2].dtype == torch.float32
    assert 0 <= first[0].min() and first[1].max() <= 2 and 1 <= first[1].min()


# --- issue 53 item 12: one mistake, one cell ---------------------------------------------------------------

BACKWARD_GEOMETRY_MISTAKES = {  # backward_tests' alone: gradcheck_tests runs on square maps, no padding, count_include_pad=True
    "saved size swapped (W, H)": ("ctx.input_size = (H, W)", "ctx.input_size = (W, H)"),
    "backward ignores count_include_pad": ("(H_out, W_out), count_include_pad,\n                                   grad_out)",
                                           "(H_out, W_out), True,\n                                   grad_out)"),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_GEOMETRY_MISTAKES))
def test_a_backward_geometry_mistake_costs_backward_tests_alone(name):
    """A backward wrong only on non-square or padded maps loses backward_tests alone (the other side:
    test_a_backward_wrong_on_square_maps_still_loses_gradcheck_tests)."""
    old, new = BACKWARD_GEOMETRY_MISTAKES[name]
    ref = solution_source(LESSON, "avg_pool2d_function")
    assert failing_cells(LESSON, GRADED, {"avg_pool2d_function": replaced(ref, old, new)}, as_graded=True) \
        == {"backward_tests"}


def test_a_backward_wrong_on_square_maps_still_loses_gradcheck_tests():
    """Half the gradient everywhere (the gradcheck-probe cheats' backward, with an honest forward) is not the adjoint
    of the forward on gradcheck's square maps either: it loses gradcheck_tests as well as backward_tests."""
    ref = solution_source(LESSON, "avg_pool2d_function")
    half = replaced(ref, "return grad_x, None, None, None, None", "return grad_x / 2, None, None, None, None")
    assert failing_cells(LESSON, GRADED, {"avg_pool2d_function": half}, as_graded=True) == \
        {"backward_tests", "gradcheck_tests"}
