"""Helpers for lesson 4 (a ``torch.autograd.Function`` with its own backward): run, check and time it.

The helpers marked :func:`~course.checks.runs_with_student_code` must run in the process that holds the
student's objects (they call ``.backward()``, ``gradcheck``, or watch which PyTorch operators run); they
take plain data plus student callables and return plain data (tensors, bools, strings, lists), so the
trusted grader can run them in its sandboxed child and judge the result in the parent.

:func:`compare_times` times callables on a device (CPU or CUDA, synchronised) with
:func:`course.timing.compare` (interleaved rounds, median of the per-round ratios to a baseline).

Nothing here computes average pooling: the reference the tests compare with is
:mod:`course.reference` (PyTorch's own ``avg_pool2d``).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from course.checks import runs_with_student_code

__all__ = [
    "forward_backward",
    "module_forward_backward",
    "run_gradcheck",
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
def module_forward_backward(module_class: Callable, init_args: Sequence, init_kwargs: Mapping, x,
                            grad_out) -> tuple:
    """``(repr_text, n_parameters, out, grad_x)`` of ``module_class(*init_args, **init_kwargs)`` on ``x``.

    ``n_parameters`` counts every parameter element (a pooling layer has none); ``out`` and ``grad_x``
    are as in :func:`forward_backward`.
    """
    import torch

    module = module_class(*init_args, **dict(init_kwargs))
    if not isinstance(module, torch.nn.Module):
        raise AssertionError(f"{getattr(module_class, '__name__', module_class)} must be a torch.nn.Module"
                             f" subclass, got an instance of {type(module).__name__}")
    n_parameters = int(sum(p.numel() for p in module.parameters()))
    out, grad = forward_backward(module, x, grad_out)
    return repr(module), n_parameters, out, grad


def _gradcheck_input(shape: Sequence[int], seed: int, device: str):
    import torch

    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(tuple(shape), generator=generator, dtype=torch.float64)
    return x.to(device).requires_grad_(True)


@runs_with_student_code
def run_gradcheck(function: Callable, shape: Sequence[int], args: Sequence = (), seed: int = 0,
                  second_order: bool = False, device: str = "cpu") -> tuple:
    """``(ok, message)``: ``torch.autograd.gradcheck`` of ``function(x, *args)`` on a seeded float64 ``x``.

    ``shape`` is the input's ``[B, C, H, W]`` (keep it small: gradcheck runs the forward twice per
    element). gradcheck compares the backward with central differences, element by element, with
    ``atol=1e-5, rtol=1e-3`` (float64 differences are accurate to about 1e-10 for a linear function).

    With ``second_order=True`` it checks the backward of the backward instead: ``ok`` is True when
    ``torch.autograd.gradgradcheck`` passes (the backward is itself differentiable) or when a second
    derivative raises the clear error of ``@once_differentiable``; it is False when the backward's
    result is silently cut off from autograd or its derivative is wrong.
    """
    import torch

    x = _gradcheck_input(shape, seed, device)
    call = lambda point: function(point, *args)  # noqa: E731
    if not second_order:
        try:
            torch.autograd.gradcheck(call, (x,), raise_exception=True)
        except Exception as exc:  # GradcheckError, or the student's own error
            return False, f"gradcheck failed for args {tuple(args)!r} on shape {tuple(shape)}: " \
                          f"{type(exc).__name__}: {str(exc)[:600]}"
        return True, f"gradcheck passed for args {tuple(args)!r} on shape {tuple(shape)}"
    # Second order: first see whether the backward's result is connected to autograd at all.
    try:
        out = call(x)
        upstream = torch.ones_like(out).requires_grad_(True)
        (grad,) = torch.autograd.grad(out, x, upstream, create_graph=True)
        if not grad.requires_grad:
            return False, ("the gradient your backward returns is cut off from autograd (computed outside"
                           " tensor operations, or detached), so a second derivative would silently be"
                           " zero: use tensor operations only, or mark backward @once_differentiable")
        grad.sum().backward()  # runs every node of the second-order graph (once_differentiable's error too)
    except RuntimeError as exc:
        if "once_differentiable" in str(exc):
            return True, "backward is marked @once_differentiable: a second derivative raises a clear error"
        return False, f"second derivative failed: {type(exc).__name__}: {str(exc)[:600]}"
    try:
        torch.autograd.gradgradcheck(call, (x,), raise_exception=True)
    except Exception as exc:
        return False, f"gradgradcheck failed for args {tuple(args)!r}: {type(exc).__name__}: {str(exc)[:600]}"
    return True, f"the backward is itself differentiable: gradgradcheck passed for args {tuple(args)!r}"


@runs_with_student_code
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


@runs_with_student_code
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
