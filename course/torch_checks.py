"""Helpers for lesson 4 (a ``torch.autograd.Function`` with its own backward): run, check and time it.

The helpers marked :func:`~course.checks.runs_with_student_code` (:func:`forward_backward`,
:func:`module_forward_backward`, :func:`double_backward`) must run in the process that holds the
student's objects (they call ``.backward()``); they only compute *values* (tensors) at inputs they are
given, so the trusted grader runs them in its sandboxed child and judges the values in the parent.
:func:`run_gradcheck` decides in the caller's process: under the grader it draws fresh random points
each run and compares the child's backward products with central differences of the reference,
computed in the parent.
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

from course.checks import input_generator, runs_with_student_code

__all__ = [
    "forward_backward",
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
def forward_backward(function: Callable, x, grad_out, *args) -> tuple:
    """``(out, grad_x)``: ``out = function(x, *args)`` and the gradient of ``sum(out * grad_out)`` by ``x``.

    ``function`` is e.g. ``AvgPool2dFunction.apply`` (``x [B, C, H, W]`` -> ``out [B, C, H_out, W_out]``)
    and ``grad_out`` has the shape of ``out``. ``x`` is copied first, so the caller's tensor is left
    alone. Both results are detached tensors; ``grad_x`` is ``None`` when nothing reached ``x``.
    """
    point = _require_tensor(x, "x").detach().clone().requires_grad_(True)
    upstream = _require_tensor(grad_out, "grad_out").detach().clone()
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


def run_gradcheck(function: Callable, shape: Sequence[int], args: Sequence = (), seed: int = 0,
                  second_order: bool = False, device: str = "cpu", reference: Callable | None = None) -> tuple:
    """``(ok, message)``: ``function(x, *args)``'s backward checked against central differences at a random
    float64 point ``x`` of ``shape`` ``[B, C, H, W]``: of ``reference`` when given, else of ``function``'s
    own forward.

    ``reference(x_np, *args) -> ndarray`` is the function the backward must be the derivative of, on NumPy
    arrays (e.g. :func:`course.reference.avg_pool2d_reference`). With it, ``function`` is called exactly once,
    by :func:`forward_backward` (or :func:`double_backward`), the call every backward test makes, so
    nothing in that call can tell a gradient check from a value test, and no answer of ``function``'s feeds
    the numeric side. The trusted grader requires it (under a run seed a check without one raises
    ``ValueError``): a student's forward that sees the check's probes (next to the point of the backward
    call) could answer them to suit a wrong backward.

    The check is computed here from values only: the numeric side at ``x ± eps·d`` for random directions
    ``d`` (and single elements), and the backward's product ``grad_x`` with a random ``grad_out`` ``v``; it
    passes when ``<grad_x, d>`` equals ``(<f(x + eps d), v> - <f(x - eps d), v>) / (2 eps)`` within
    ``1e-6 + 1e-5·|value|`` (float64; exact up to rounding for a linear function like pooling).

    ``second_order=True`` checks the backward of the backward: the derivative of ``<grad_x, w>`` by ``v``
    must equal the central difference of the numeric side along ``w``; a backward marked
    ``@once_differentiable`` passes (its second derivative raises a clear error instead of a wrong value).
    """
    import torch

    from course import checks

    if reference is None and checks.run_seed is not None:
        raise ValueError("reference: under the trusted grader run_gradcheck needs the reference function (numeric"
                         " side from the reference, never from the student's forward)")
    rng = input_generator(seed)  # under the grader: fresh points every grading run
    label = f"for args {tuple(args)!r} on shape {tuple(shape)}"
    numeric_side = "the reference" if reference is not None else "the forward"

    def tensor(like_shape):
        return torch.from_numpy(rng.standard_normal(tuple(like_shape))).to(device)

    def forward(point):
        """The function whose central differences are the truth: the reference, else ``function`` itself."""
        if reference is not None:
            return torch.from_numpy(np.asarray(reference(point.detach().cpu().numpy(), *args),
                                               dtype=np.float64)).to(point.device)
        return _require_tensor(function(point, *args), "the function's result")

    x = tensor(shape)
    try:
        out = forward(x)
        v = tensor(out.shape)
        eps = 1e-6
        if not second_order:
            _, grad = forward_backward(function, x, v, *args)
            if grad is None:
                return False, f"no gradient reached x {label}: the backward returned None for the input"
            if tuple(grad.shape) != tuple(shape):
                return False, f"the gradient has shape {tuple(grad.shape)}, x has {tuple(shape)} ({label})"
            directions = [tensor(shape) for _ in range(4)]
            for index in rng.choice(int(np.prod(shape)), size=min(4, int(np.prod(shape))), replace=False):
                one = torch.zeros(tuple(shape), dtype=torch.float64, device=device)
                one.view(-1)[int(index)] = 1.0
                directions.append(one)
            for d in directions:
                numeric = (_dot(forward(x + eps * d), v) - _dot(forward(x - eps * d), v)) / (2 * eps)
                analytic = _dot(grad, d)
                if abs(numeric - analytic) > 1e-6 + 1e-5 * abs(numeric):
                    return False, (f"gradient check failed {label}: along a direction the backward gives "
                                   f"{analytic:.6g}, central differences of {numeric_side} give {numeric:.6g}")
            return True, f"gradient check passed {label}"
        w = tensor(shape)
        value, note = double_backward(function, x, v, w, *args)
        if note == "once_differentiable":
            from course.checks import source_of

            try:
                owner = function if hasattr(function, "__student_source__") else getattr(function, "__self__", function)
                marked = "once_differentiable" in source_of(owner)  # Function.apply: its class's source
            except (OSError, TypeError):
                marked = True  # a built-in or C function: nothing to read, nothing to fake
            if not marked:
                return False, "a second derivative reported @once_differentiable, but the backward is not marked so"
            return True, "backward is marked @once_differentiable: a second derivative raises a clear error"
        if note == "cut off" or value is None:
            return False, ("the gradient your backward returns is cut off from autograd (computed outside"
                           " tensor operations, or detached), so a second derivative would silently be"
                           " zero: use tensor operations only, or mark backward @once_differentiable")
        numeric = (forward(x + eps * w).double() - forward(x - eps * w).double()) / (2 * eps)
        error = float((value.double() - numeric).abs().max()) if tuple(value.shape) == tuple(numeric.shape) else None
        if error is None or error > 1e-6 + 1e-5 * float(numeric.abs().max()):
            return False, f"second derivative check failed {label}: the backward's own derivative is wrong"
        return True, f"the backward is itself differentiable: its derivative matches central differences {label}"
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
