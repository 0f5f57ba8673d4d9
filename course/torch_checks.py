"""Helpers for lesson 4 (a ``torch.autograd.Function`` with its own backward): run, check and time it.

The helpers marked :func:`~course.checks.runs_with_student_code` (:func:`forward_backward`,
:func:`module_forward_backward`, :func:`double_backward`) must run in the process that holds the
student's objects (they call ``.backward()``); they only compute *values* (tensors) at inputs they are
given, so the trusted grader runs them in its sandboxed child and judges the values in the parent.
:func:`run_gradcheck` decides in the caller's process: under the grader it draws fresh random points
each run and checks, in the parent, that the values the child returned from ordinary forward and backward
calls satisfy the adjoint identity of a linear map.
:func:`operators_used` and :func:`saved_tensor_shapes` watch a call from inside; they are for exploring
in a notebook and never decide a grade (whatever runs beside student code can be faked by it).

:func:`compare_times` times callables on a device (CPU or CUDA, synchronised) with
:func:`course.timing.compare` (interleaved rounds, median of the per-round ratios to a baseline).

Nothing here computes average pooling: the reference the tests compare with is
:mod:`course.reference` (PyTorch's own ``avg_pool2d``).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from course.checks import input_generator, random_input, runs_with_student_code
from course.checks.values import LAYOUTS, _laid_out, call_on_layout  # noqa: F401 (lesson 4 imports it from here)

__all__ = [
    "forward_backward",
    "call_on_layout",
    "module_forward_backward",
    "run_gradcheck",
    "double_backward",
    "operators_used",
    "pooling_operators",
    "saved_tensor_shapes",
    "compare_times",
]


def _require_tensor(value: Any, name: str):
    import torch

    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    return value


@runs_with_student_code
def forward_backward(function: Callable, x, grad_out, *args, grad_layout: str = "contiguous") -> tuple:
    """``(out, grad_x)``: ``out = function(x, *args)`` and the gradient of ``sum(out * grad_out)`` by ``x``.

    ``function`` is e.g. ``AvgPool2dFunction.apply`` (``x [B, C, H, W]`` -> ``out [B, C, H_out, W_out]``)
    and ``grad_out`` has the shape of ``out``, laid out as ``grad_layout`` (:data:`LAYOUTS`; autograd hands
    a backward the upstream gradient in the layout it was given). ``x`` is copied first, so the caller's
    tensor is left alone. Both results are detached tensors; ``grad_x`` is ``None`` when nothing reached ``x``.
    """
    point = _require_tensor(x, "x").detach().clone().requires_grad_(True)
    upstream = _laid_out(_require_tensor(grad_out, "grad_out").detach(), grad_layout)
    out = function(point, *args)
    _require_tensor(out, "the function's result")
    if not out.requires_grad:
        raise AssertionError("the output does not require grad, so no backward can run: return the result"
                             " of tensor operations on x from forward (no .detach(), .numpy() or torch.no_grad)")
    out.backward(upstream)
    grad = None if point.grad is None else point.grad.detach()
    return out.detach(), grad


@runs_with_student_code
def module_forward_backward(module_class: Callable, init_args: Sequence, init_kwargs: Mapping, x=None,
                            grad_out=None) -> tuple:
    """``(repr_text, n_parameters, out, grad_x)`` of ``module_class(*init_args, **init_kwargs)`` on ``x``.

    ``n_parameters`` counts every parameter element (a pooling layer has none); ``out`` and ``grad_x``
    are as in :func:`forward_backward`; without ``grad_out`` the module is called on ``x`` and no backward
    runs (``grad_x`` is ``None``); without ``x`` it is built and described, never called (both ``None``).
    """
    import torch

    module = module_class(*init_args, **dict(init_kwargs))
    if not isinstance(module, torch.nn.Module):
        raise AssertionError(f"{getattr(module_class, '__name__', module_class)} must be a torch.nn.Module"
                             f" subclass, got an instance of {type(module).__name__}")
    n_parameters = int(sum(p.numel() for p in module.parameters()))
    if x is None:
        return repr(module), n_parameters, None, None
    if grad_out is None:
        out = _require_tensor(module(_require_tensor(x, "x")), "the module's result")
        return repr(module), n_parameters, out.detach(), None
    out, grad = forward_backward(module, x, grad_out)
    return repr(module), n_parameters, out, grad


@runs_with_student_code
def double_backward(function: Callable, x, grad_out, direction, *args) -> tuple:
    """``(value, note)`` for the second-order check: ``value`` is the derivative of ``sum(grad_x * direction)``
    by ``grad_out``, where ``grad_x`` is the backward's result for ``function(x, *args)`` built with
    ``create_graph=True`` (for a linear function it equals ``J @ direction``, a forward difference along
    ``direction``). ``note`` is ``"once_differentiable"`` when a second derivative raises that error,
    ``"cut off"`` when the backward's result is not connected to autograd, else ``""``. Values only."""
    import torch

    point = _require_tensor(x, "x").detach().clone().requires_grad_(True)
    upstream = _require_tensor(grad_out, "grad_out").detach().clone().requires_grad_(True)
    out = function(point, *args)
    try:
        (grad,) = torch.autograd.grad(out, point, upstream, create_graph=True)
        if not grad.requires_grad:
            return None, "cut off"
        (value,) = torch.autograd.grad(grad, upstream, _require_tensor(direction, "direction"), retain_graph=True,
                                       allow_unused=True)
        if value is None:  # not connected to grad_out: runs the graph, where @once_differentiable raises
            (grad * direction).sum().backward()
            return None, "cut off"
    except RuntimeError as exc:
        if "once_differentiable" in str(exc):
            return None, "once_differentiable"
        raise
    return value.detach(), ""




def _dot(a, b) -> float:
    return float((a.detach().double() * b.detach().double()).sum())


def _magnitude(a, b) -> float:
    """``sum(|a| * |b|)``: the scale that rounding errors of ``<a, b>`` are relative to."""
    return float((a.detach().double().abs() * b.detach().double().abs()).sum())


def run_gradcheck(function: Callable, shape: Sequence[int], args: Sequence = (), seed: int = 0,
                  second_order: bool = False, device: str = "cpu", reference: Callable | None = None) -> tuple:
    """``(ok, message)``: is ``function(x, *args)``'s backward the adjoint of its own forward, at float64 points
    ``x`` of ``shape`` ``[B, C, H, W]``? For a linear function like pooling (``f(x) = A x``) the backward must
    map ``grad_out`` to ``A^T grad_out``.

    Every call is an ordinary one at a point of its own, drawn as every test draws its inputs
    (:func:`~course.checks.random_input`: fresh each grading run, no point related to another): one forward
    call for the output's shape, one :func:`forward_backward` (the call every backward test makes) at a point
    with a random ``grad_out`` ``v`` (not all zeros), giving ``g``, then forward calls at three new points
    ``b_i``. For each pair, ``<g, b_i - b_j>`` must equal ``<f(b_i) - f(b_j), v>`` within ``1e-6`` of the sum
    of the products' magnitudes (exact up to rounding for a linear, or affine, forward; a forward that is
    neither, never right for pooling, fails). The ``b_i`` are drawn after ``g`` came back, so no backward can
    be made to suit them.

    ``reference(x_np, *args) -> ndarray`` (e.g. :func:`course.reference.avg_pool2d_reference`), when given,
    is what the forward must answer at the ``b_i`` too (``rtol = 1e-9``, ``atol = 1e-9`` of the largest value).
    The trusted grader passes it when the forward passed its own tests in this run (:func:`course.checks.passed`):
    such a forward cannot then answer this check's calls differently, however it tells them apart (their order,
    their shapes), to suit a wrong backward; a forward whose bug the backward follows keeps this check.

    ``second_order=True`` also checks the backward of the backward, first: :func:`double_backward` with a
    direction ``w`` gives ``h = J w``, and ``<h, v>`` must equal ``<w, g>`` (``v`` and ``g`` drawn and
    returned after ``h``); a backward marked ``@once_differentiable`` passes (its second derivative raises a
    clear error instead of a wrong value), one cut off from autograd fails.
    """
    import torch

    rng = input_generator(seed)  # under the grader: fresh points every grading run
    label = f"for args {tuple(args)!r} on shape {tuple(shape)}"

    def draw(like_shape):
        """A float64 tensor drawn as every test draws its inputs, from a seed of this check's own."""
        point = random_input(tuple(like_shape), np.float64, seed=int(rng.integers(2**62)))
        return torch.from_numpy(point).to(device)

    def forward(point):
        return _require_tensor(function(point, *args), "the function's result")

    try:
        out_shape = tuple(forward(draw(shape)).shape)
        held = w = None
        once = False
        if second_order:
            w = draw(shape)
            held, note = double_backward(function, draw(shape), draw(out_shape), w, *args)
            if note == "once_differentiable":
                from course.checks import source_of

                try:
                    owner = function if hasattr(function, "__student_source__") else getattr(function, "__self__",
                                                                                              function)
                    marked = "once_differentiable" in source_of(owner)  # Function.apply: its class's source
                except (OSError, TypeError):
                    marked = True  # a built-in or C function: nothing to read, nothing to fake
                if not marked:
                    return False, "a second derivative reported @once_differentiable, but the backward is not marked so"
                once = True
            elif note == "cut off" or held is None:
                return False, ("the gradient your backward returns is cut off from autograd (computed outside"
                               " tensor operations, or detached), so a second derivative would silently be"
                               " zero: use tensor operations only, or mark backward @once_differentiable")
            elif tuple(held.shape) != out_shape:
                return False, (f"second derivative check failed {label}: the backward's own derivative has shape"
                               f" {tuple(held.shape)}, the output has {out_shape}")
        v = draw(out_shape)
        for _ in range(8):  # a grad_out of zeros only (ReLU outputs on a small map) would check nothing
            if bool(v.abs().max() > 0):
                break
            v = draw(out_shape)
        _, grad = forward_backward(function, draw(shape), v, *args)
        if grad is None:
            return False, f"no gradient reached x {label}: the backward returned None for the input"
        if tuple(grad.shape) != tuple(shape):
            return False, f"the gradient has shape {tuple(grad.shape)}, x has {tuple(shape)} ({label})"
        points = [draw(shape) for _ in range(3)]
        values = [forward(point) for point in points]
        for value in values:
            if tuple(value.shape) != out_shape:
                return False, f"the forward's output has shape {tuple(value.shape)} here, {out_shape} before ({label})"
        if reference is not None:
            for point, value in zip(points, values):
                expected = torch.from_numpy(np.asarray(reference(point.cpu().numpy(), *args), dtype=np.float64))
                got = value.detach().double().cpu()
                scale = max(1.0, float(expected.abs().max())) if expected.numel() else 1.0
                if got.shape != expected.shape or not torch.allclose(got, expected, rtol=1e-9, atol=1e-9 * scale):
                    error = float((got - expected).abs().max()) if got.shape == expected.shape else float("nan")
                    return False, (f"gradient check {label}: your forward's values at the check's points differ"
                                   f" from the reference's (max error {error:.3g}), though it passed its own tests")
        for i, j in ((0, 1), (0, 2), (1, 2)):
            analytic = _dot(grad, points[i]) - _dot(grad, points[j])
            numeric = _dot(values[i], v) - _dot(values[j], v)
            bound = 1e-6 * (_magnitude(grad, points[i]) + _magnitude(grad, points[j])
                            + _magnitude(values[i], v) + _magnitude(values[j], v))
            if not abs(analytic - numeric) <= bound:
                return False, (f"gradient check failed {label}: your backward is not the adjoint of your forward:"
                               f" for a random grad_out and points a, b, <backward(grad_out), a - b> = {analytic:.6g}"
                               f" but <forward(a) - forward(b), grad_out> = {numeric:.6g} (equal for pooling, a"
                               f" linear map)")
        if once:
            return True, "backward is marked @once_differentiable: a second derivative raises a clear error"
        if held is None:
            return True, f"gradient check passed {label}"
        second, expected = _dot(held, v), _dot(w, grad)
        if not abs(second - expected) <= 1e-6 * (_magnitude(held, v) + _magnitude(w, grad)):
            return False, (f"second derivative check failed {label}: the backward's own derivative is wrong"
                           f" (<d backward / d grad_out . w, v> = {second:.6g}, <w, backward(v)> = {expected:.6g})")
        return True, f"the backward is itself differentiable: its derivative is the forward's {label}"
    except AssertionError:
        raise
    except Exception as exc:  # the student's own error
        return False, f"gradient check {label} raised {type(exc).__name__}: {str(exc)[:600]}"


def operators_used(function: Callable, x, grad_out, *args) -> tuple:
    """``(forward_ops, backward_ops)``: sorted names of the ATen operators that ``function(x, *args)``
    runs in its forward, and that ``out.backward(grad_out)`` runs, e.g. ``["add_", "slice"]``.

    This sees every PyTorch operator, however it is reached (a helper function, a module, autograd),
    so it can tell whether a solution used PyTorch's own pooling.
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names: set[str] = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.add(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    point = _require_tensor(x, "x").detach().clone().requires_grad_(True)
    upstream = _require_tensor(grad_out, "grad_out").detach().clone()
    forward, backward = Recorder(), Recorder()
    with forward:
        out = function(point, *args)
    if isinstance(out, type(point)) and out.requires_grad:
        with backward:
            out.backward(upstream)
    return sorted(forward.names), sorted(backward.names)


def pooling_operators(names: Sequence[str]) -> list[str]:
    """The names among ``names`` that are PyTorch pooling operators (``avg_pool2d``, ``adaptive_...``)."""
    return [name for name in names if "pool" in name.lower()]


def saved_tensor_shapes(function: Callable, x, *args) -> list:
    """Shapes of the tensors that ``function(x, *args)`` saved for its backward (``ctx.save_for_backward``),
    as a list of tuples; ``[]`` when it saved none (or when its output has no autograd node)."""
    point = _require_tensor(x, "x").detach().clone().requires_grad_(True)
    out = function(point, *args)
    node = getattr(out, "grad_fn", None)
    saved = getattr(node, "saved_tensors", None) or ()
    return [tuple(t.shape) for t in saved if t is not None]


def _synchronize(device: str) -> None:
    if str(device).startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def compare_times(candidates: Mapping[str, Callable[[], Any]], baseline: str, device: str = "cpu",
                  rounds: int = 7, warmup: int = 1) -> dict:
    """Time zero-argument torch callables side by side on ``device``; ``{name: {"seconds": s, "ratio": r}}``.

    :func:`course.timing.compare` does the timing (interleaved rounds, one call per round, the median of
    the per-round ratios); this adds the device: on CUDA every call is followed by
    ``torch.cuda.synchronize()`` (a GPU call returns before its work is done), and ``warmup`` untimed
    rounds come first (allocations, the first launch of CUDA kernels). ``seconds`` is the median time of
    one call; ``ratio`` the median over rounds of ``time / time of baseline`` (below 1: faster).
    """
    from course.timing import compare

    if baseline not in candidates:
        raise ValueError(f"baseline must be one of the candidates {list(candidates)}, got {baseline!r}")
    if not (isinstance(rounds, int) and rounds >= 1):
        raise ValueError(f"rounds must be an int >= 1, got {rounds!r}")
    if not (isinstance(warmup, int) and warmup >= 0):
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")

    def synchronised(call: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            call()
            _synchronize(device)
        return run

    timed = {name: synchronised(call) for name, call in candidates.items()}
    for _ in range(warmup):
        for run in timed.values():
            run()
    _synchronize(device)
    result = compare(timed, rounds=rounds, number=1, baseline=baseline)
    return {name: {"seconds": result["median"][name], "ratio": result["ratio"][name]} for name in candidates}
