"""Unit tests of course/torch_checks.py: each helper on a right and a wrong case."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from course.checks import RUNS_WITH_STUDENT_CODE, grading
from course.torch_checks import (compare_times, forward_backward, module_forward_backward, operators_used,
                                 pooling_operators, run_gradcheck, saved_tensor_shapes)


def torch_pool(x, k, s, p, cip):
    return F.avg_pool2d(x, k, s or k, p, count_include_pad=cip)


class Scaled(torch.autograd.Function):
    """2x2 sum pooling times ``scale`` with a backward that forgets the scale (wrong unless scale == 1)."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return F.avg_pool2d(x, 2) * 4 * scale

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.repeat_interleave(2, -1).repeat_interleave(2, -2), None


class OnceDifferentiable(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        return grad_out * 3


class Detached(torch.autograd.Function):
    """A right first derivative computed outside autograd, not marked once_differentiable."""

    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad_out):
        return torch.from_numpy(grad_out.detach().numpy() * 3)


class SavesInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


def test_only_value_helpers_run_beside_student_code():
    from course.torch_checks import double_backward

    for helper in (forward_backward, module_forward_backward, double_backward):
        assert getattr(helper, RUNS_WITH_STUDENT_CODE).startswith("course.torch_checks:")
    for decides in (run_gradcheck, operators_used, saved_tensor_shapes):  # verdicts and lists: never in the child
        assert not hasattr(decides, RUNS_WITH_STUDENT_CODE)


def test_forward_backward_returns_output_and_gradient_and_leaves_x_alone():
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    out, grad = forward_backward(torch_pool, x, torch.ones(1, 1, 2, 2), 2, 0, 0, True)
    assert torch.equal(out, F.avg_pool2d(x, 2)) and not out.requires_grad
    assert torch.equal(grad, torch.full((1, 1, 4, 4), 0.25))
    assert x.grad is None and not x.requires_grad


def test_forward_backward_says_when_the_output_is_cut_off():
    with pytest.raises(AssertionError, match="does not require grad"):
        forward_backward(lambda x: x.detach() * 2, torch.ones(2), torch.ones(2))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        forward_backward(torch_pool, [1.0], torch.ones(1))


def test_run_gradcheck_passes_a_right_backward_and_fails_a_wrong_one():
    ok, message = run_gradcheck(torch_pool, (1, 2, 5, 6), (3, 2, 1, False))
    assert ok, message
    assert run_gradcheck(Scaled.apply, (1, 1, 4, 4), (1.0,))[0]
    ok, message = run_gradcheck(Scaled.apply, (1, 1, 4, 4), (0.5,))
    assert not ok and "gradient check failed" in message and "not the adjoint of your forward" in message


def test_run_gradcheck_second_order_accepts_differentiable_or_once_differentiable_only():
    ok, message = run_gradcheck(torch_pool, (1, 1, 4, 5), (2, 1, 1, True), second_order=True)
    assert ok and "itself differentiable" in message
    ok, message = run_gradcheck(OnceDifferentiable.apply, (1, 1, 2, 2), (), second_order=True)
    assert ok and "once_differentiable" in message
    assert run_gradcheck(Detached.apply, (1, 1, 2, 2), ())[0]  # its first derivative is right...
    ok, message = run_gradcheck(Detached.apply, (1, 1, 2, 2), (), second_order=True)
    assert not ok and "cut off from autograd" in message  # ...but a second one would be silently zero


class ProbeAware(torch.autograd.Function):
    """2x2 average pooling whose backward is half the true gradient, and whose forward answers a point without
    grad next to the last point that had it (a central-difference probe) as if it were half as steep."""

    last = []

    @staticmethod
    def forward(ctx, x):
        out = F.avg_pool2d(x, 2)
        if x.requires_grad:
            ProbeAware.last[:] = [x.detach().clone(), out.detach().clone()]
        elif ProbeAware.last and 0 < float((x - ProbeAware.last[0]).abs().max()) < 1e-3:
            out = ProbeAware.last[1] + 0.5 * (out - ProbeAware.last[1])
        return out

    @staticmethod
    def backward(ctx, grad_out):
        return 0.5 * grad_out.repeat_interleave(2, -1).repeat_interleave(2, -2) / 4


def pool2(x_np):
    return F.avg_pool2d(torch.from_numpy(x_np), 2).numpy()


class Doubled(torch.autograd.Function):
    """A consistent bug: 2x2 pooling times 2, with the backward of exactly that (its true adjoint)."""

    @staticmethod
    def forward(ctx, x):
        return 2 * F.avg_pool2d(x, 2)

    @staticmethod
    def backward(ctx, grad_out):
        return 2 * grad_out.repeat_interleave(2, -1).repeat_interleave(2, -2) / 4


class Switching(torch.autograd.Function):
    """2x2 pooling with a backward half the true gradient, and a forward that answers right until it has seen a
    call with grad (the forward tests come before any), then half as steep: consistent with its backward in
    every later call, whatever their flags or points."""

    seen_grad = False

    @staticmethod
    def forward(ctx, x):
        Switching.seen_grad = Switching.seen_grad or x.requires_grad
        return F.avg_pool2d(x, 2) * (0.5 if Switching.seen_grad else 1.0)

    @staticmethod
    def backward(ctx, grad_out):
        return 0.5 * grad_out.repeat_interleave(2, -1).repeat_interleave(2, -2) / 4


class SecondOrderWrong(torch.autograd.Function):
    """A right first derivative whose own derivative (by grad_out) is half the right one."""

    @staticmethod
    def forward(ctx, x):
        return F.avg_pool2d(x, 2)

    @staticmethod
    def backward(ctx, grad_out):
        spread = lambda g: g.repeat_interleave(2, -1).repeat_interleave(2, -2) / 4  # noqa: E731
        return spread(grad_out.detach()) + 0.5 * (spread(grad_out) - spread(grad_out.detach()))


def test_run_gradcheck_judges_the_backward_against_its_own_forward(monkeypatch):
    for second_order in (False, True):
        ok, message = run_gradcheck(Doubled.apply, (1, 2, 4, 6), second_order=second_order)
        assert ok, f"a bug the backward follows is the forward's, not the gradient check's: {message}"
        ok, message = run_gradcheck(Doubled.apply, (1, 2, 4, 6), second_order=second_order, reference=pool2)
        assert not ok and "differ from the reference" in message, "pinned to the reference, the forward is wrong"
        ok, message = run_gradcheck(ProbeAware.apply, (1, 2, 4, 6), second_order=second_order)
        assert not ok and "not the adjoint" in message, "no probes to answer: the half-size backward fails"
        assert run_gradcheck(lambda x: F.avg_pool2d(x, 2), (1, 2, 4, 6), second_order=second_order,
                             reference=pool2)[0], "a right one passes, pinned or not"
    ok, message = run_gradcheck(SecondOrderWrong.apply, (1, 2, 4, 6), second_order=True)
    assert run_gradcheck(SecondOrderWrong.apply, (1, 2, 4, 6))[0] and not ok and "second derivative" in message
    for seed in range(5):  # any nonzero error of the backward shows, at every draw of the points
        with grading(run_seed=seed):
            assert not run_gradcheck(Scaled.apply, (1, 1, 4, 4), (1 - 1e-3,))[0]
            assert not run_gradcheck(ProbeAware.apply, (1, 2, 4, 6))[0]


def test_run_gradcheck_calls_cannot_be_told_apart_and_a_pinned_forward_cannot_switch(monkeypatch):
    with grading(run_seed=11):  # under the grader: points drawn as every test's inputs
        points = []

        def recorded(x):
            points.append((x.requires_grad, x.detach().clone()))
            return F.avg_pool2d(x, 2)

        assert run_gradcheck(recorded, (1, 2, 4, 6), second_order=True)[0]
        assert [flag for flag, _ in points] == [False, True, True, False, False, False], \
            "forward calls, then double_backward and forward_backward (the calls every backward test makes)"
        for i, (_, a) in enumerate(points):
            for _, b in points[i + 1:]:
                assert float((a - b).abs().max()) > 1e-2, "no point next to another"
        monkeypatch.setattr(Switching, "seen_grad", False)
        assert Switching.apply(torch.ones(1, 1, 2, 2)).item() == 1.0, "right in the forward tests"
        ok, message = run_gradcheck(Switching.apply, (1, 2, 4, 6))
        assert ok, "unpinned, its later answers suit its backward: why the grader pins a forward that passed"
        ok, message = run_gradcheck(Switching.apply, (1, 2, 4, 6), reference=pool2)
        assert not ok and "differ from the reference" in message


def test_passed_reads_the_verdicts_of_this_grading_run(monkeypatch):
    from course import checks

    assert checks.passed("forward_tests") is None, "in a notebook nothing is graded"
    with checks.grading(graded_so_far={"forward_tests": True, "forward_errors": False}):
        assert checks.passed("forward_tests") is True and checks.passed("forward_errors") is False
        with pytest.raises(ValueError, match="grade_id: no test cell 'forward_test' was graded before"):
            checks.passed("forward_test")
    assert checks.passed("forward_tests") is None, "after the run: nothing graded again"


def test_operators_used_sees_torch_pooling_however_it_is_reached():
    x, g = torch.randn(1, 2, 4, 4), torch.ones(1, 2, 2, 2)
    forward, backward = operators_used(lambda t: nn.AvgPool2d(2)(t), x, g)
    assert pooling_operators(forward) == ["avg_pool2d"]
    assert pooling_operators(backward) == ["avg_pool2d_backward"]
    forward, backward = operators_used(lambda t: (t[..., ::2, ::2] + t[..., 1::2, 1::2]) / 2, x, g)
    assert pooling_operators(forward) == [] and pooling_operators(backward) == [] and "slice" in forward


def test_saved_tensor_shapes():
    assert saved_tensor_shapes(SavesInput.apply, torch.ones(2, 3)) == [(2, 3)]
    assert saved_tensor_shapes(Scaled.apply, torch.ones(1, 1, 4, 4), 1.0) == []


def test_module_forward_backward_reports_repr_parameters_output_and_gradient():
    x = torch.randn(1, 2, 6, 6)
    text, n, out, grad = module_forward_backward(nn.AvgPool2d, (2,), {"stride": 2}, x, torch.ones(1, 2, 3, 3))
    assert text.startswith("AvgPool2d(kernel_size=2, stride=2") and n == 0
    assert torch.allclose(out, F.avg_pool2d(x, 2)) and torch.allclose(grad, torch.full_like(x, 0.25))
    assert module_forward_backward(nn.Conv2d, (2, 3, 1), {}, x, torch.ones(1, 3, 6, 6))[1] == 2 * 3 + 3
    with pytest.raises(AssertionError, match="must be a torch.nn.Module"):
        module_forward_backward(lambda: object(), (), {}, x, x)
    text, n, out, grad = module_forward_backward(nn.AvgPool2d, (3,), {"padding": 1})  # built, never called
    assert text.startswith("AvgPool2d(kernel_size=3, stride=3, padding=1") and n == 0 and out is None and grad is None
    text, n, out, grad = module_forward_backward(nn.AvgPool2d, (2,), {}, x)  # called, no backward
    assert torch.equal(out, F.avg_pool2d(x, 2)) and not out.requires_grad and grad is None


def test_compare_times_reports_median_seconds_and_ratios():
    x = torch.randn(64, 64)
    result = compare_times({"one": lambda: x + 1, "ten": lambda: [x + 1 for _ in range(10)]},
                           baseline="one", rounds=5)
    assert set(result) == {"one", "ten"} and result["one"]["ratio"] == 1.0
    assert result["ten"]["ratio"] > 2 and result["ten"]["seconds"] > result["one"]["seconds"]
    with pytest.raises(ValueError, match="baseline"):
        compare_times({"a": lambda: None}, baseline="b")
    with pytest.raises(ValueError, match="rounds"):
        compare_times({"a": lambda: None}, baseline="a", rounds=0)
    with pytest.raises(ValueError, match="warmup"):
        compare_times({"a": lambda: None}, baseline="a", warmup=-1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_compare_times_and_gradcheck_on_cuda():
    x = torch.randn(8, 8, 32, 32, device="cuda")
    result = compare_times({"a": lambda: F.avg_pool2d(x, 2), "b": lambda: F.avg_pool2d(x, 3)}, "a",
                           device="cuda", rounds=3)
    assert result["a"]["ratio"] == 1.0
    assert run_gradcheck(torch_pool, (1, 1, 4, 4), (2, 0, 0, True), device="cuda")[0]


def test_compare_times_synchronises_cuda_after_every_call(monkeypatch):
    import course.torch_checks as torch_checks

    synced, calls = [], []
    monkeypatch.setattr(torch_checks, "_synchronize", lambda device: synced.append(device))
    compare_times({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, "a", device="cuda",
                  rounds=3, warmup=1)
    assert len(calls) == 8 and synced.count("cuda") >= len(calls)


def test_call_on_layout_hands_the_same_values_in_each_layout_and_reads_the_input_back():
    import torch

    from course.torch_checks import LAYOUTS, call_on_layout

    x = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)
    seen = {}

    def record(y):
        seen[layout] = (y.is_contiguous(), y.is_contiguous(memory_format=torch.channels_last))
        return y.reshape(y.shape) * 1

    for layout in LAYOUTS:
        out, after = call_on_layout(record, x, layout)
        assert torch.equal(out, x) and torch.equal(after, x)
    assert seen == {"contiguous": (True, False), "channels_last": (False, True), "strided": (False, False)}
    with pytest.raises(RuntimeError):  # a view of channels-last memory as [B*C, H, W] is not possible
        call_on_layout(lambda y: y.view(6, 4, 5), x, "channels_last")

    def halves(y):
        y /= 2
        return y

    out, after = call_on_layout(halves, x, "contiguous")
    assert torch.equal(after, x / 2), "an input changed in place is read back as changed"
    assert torch.equal(x, torch.arange(120, dtype=torch.float32).reshape(2, 3, 4, 5)), "the caller's x is untouched"


def test_call_on_layout_lays_out_tensors_and_arrays_and_reads_the_input_back():
    """Issue 43: the layouts (channels-last, strided) reach the function with the same values, for a tensor (any
    [..., C, H, W]), an ndarray and forward_backward's grad_out; a view that needs contiguous memory raises there, and
    an in-place update of the input shows in what is read back."""
    from course.torch_checks import LAYOUTS, call_on_layout

    x = torch.arange(2 * 3 * 4 * 5, dtype=torch.float64).reshape(2, 3, 4, 5)
    for value in (x, x[0], x.numpy()):
        for layout in LAYOUTS:
            out, after = call_on_layout(lambda y: y * 1, value, layout)
            assert (out == value).all() and (after == value).all()
    with pytest.raises(RuntimeError):
        call_on_layout(lambda y: y.view(6, 20), x, "channels_last")
    assert call_on_layout(lambda y: y.reshape(6, 20), x, "channels_last")[0].shape == (6, 20)
    with pytest.raises(RuntimeError):  # a slice: rows and columns cannot be merged by a view either
        call_on_layout(lambda y: y.view(3, 20), x[0], "strided")
    _, after = call_on_layout(lambda y: y.__itruediv__(2), x.numpy(), "strided")
    assert (after == x.numpy() / 2).all()

    def flattens_grad_out(t):
        class Flat(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, grad):
                return grad.view(grad.shape[0] * grad.shape[1], -1).view(grad.shape) * 2
        return Flat.apply(t)
    assert forward_backward(flattens_grad_out, x, torch.ones_like(x))[1].eq(2).all()
    with pytest.raises(RuntimeError):
        forward_backward(flattens_grad_out, x, torch.ones_like(x), grad_layout="channels_last")
