"""Numeric gradient checks by central differences, to test a hand-written backward pass.

For a function ``out = f(x)`` and an upstream gradient ``grad_out`` (same shape as ``out``), the
gradient that a backward pass must return is that of the scalar ``L(x) = sum(f(x) * grad_out)``.
:func:`numeric_gradient` estimates it one element at a time::

    dL/dx[i] ~ (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)

and :func:`gradient_error` says how far a backward pass's answer is from that estimate.

How small should the error be? Central differences have a truncation error of order ``eps**2``
(zero for a function that is linear in ``x``, as pooling is) and a rounding error of order
``machine_epsilon * |out| / eps``. In float64 with the default ``eps=1e-5`` both stay small: a right
backward pass gives ``gradient_error`` around 1e-11, and 1e-10 or below (for pooling and for smooth,
well-scaled functions such as ``tanh``); a wrong one gives an error of order 0.1 to 1. That is why the check runs in float64 only:
in float32 the rounding error alone would be around 1e-2.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["numeric_gradient", "gradient_error"]


def numeric_gradient(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, grad_out: np.ndarray,
                     eps: float = 1e-5) -> np.ndarray:
    """Central-difference gradient of ``sum(f(x) * grad_out)`` with respect to ``x``.

    ``f`` maps an array shaped like ``x`` (any shape, e.g. ``[B, C, H, W]``) to an array shaped like
    ``grad_out`` (e.g. ``[B, C, H_out, W_out]``). ``x`` and ``grad_out`` must be float64 ndarrays.
    Returns a new float64 array shaped like ``x``; ``x`` itself is left unchanged. ``f`` is called
    ``2 * x.size`` times, so keep ``x`` small (a few hundred elements). Expected accuracy: see the
    module docstring (about 1e-11 relative in float64 with the default ``eps``).
    """
    for name, value in (("x", x), ("grad_out", grad_out)):
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{name} must be a NumPy array, got {type(value).__name__}")
        if value.dtype != np.float64:
            raise TypeError(f"{name} must be float64 for a numeric gradient (float32 rounding swamps the "
                            f"difference quotient), got dtype {value.dtype}")
    if not (isinstance(eps, (int, float)) and eps > 0):
        raise ValueError(f"eps must be a positive number, got {eps!r}")
    point = np.array(x, dtype=np.float64, copy=True)
    upstream = np.asarray(grad_out, dtype=np.float64)
    out = np.asarray(f(point))
    if out.shape != upstream.shape:
        raise ValueError(f"grad_out must have the shape of f(x), {out.shape}, got {upstream.shape}")
    gradient = np.zeros_like(point)
    for index in np.ndindex(point.shape):
        original = point[index]
        point[index] = original + eps
        plus = np.array(f(point), dtype=np.float64, copy=True)  # a copy: f may return a view of x
        point[index] = original - eps
        minus = np.array(f(point), dtype=np.float64, copy=True)
        point[index] = original
        step = (original + eps) - (original - eps)  # the step really taken, after rounding x +- eps
        gradient[index] = np.sum((plus - minus) * upstream) / step
    return gradient


def gradient_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    """Largest difference between two gradients, relative to the largest entry of either.

    ``max |analytic - numeric| / max(max |analytic|, max |numeric|)`` for two arrays of the same shape;
    0.0 when both are all zeros. Relative to the whole gradient (not element by element), so entries
    that should be exactly 0 do not blow it up. A right backward pass checked in float64 gives about
    1e-11 (1e-10 or below); a wrong one gives 0.1 or more.
    """
    a = np.asarray(analytic, dtype=np.float64)
    n = np.asarray(numeric, dtype=np.float64)
    if a.shape != n.shape:
        raise ValueError(f"analytic and numeric must have the same shape, got {a.shape} and {n.shape}")
    if a.size == 0:
        return 0.0
    if not (np.isfinite(a).all() and np.isfinite(n).all()):
        return float("inf")
    scale = max(float(np.abs(a).max()), float(np.abs(n).max()))
    if scale == 0.0:
        return 0.0
    return float(np.abs(a - n).max() / scale)
