"""The reference the graded tests compare with: PyTorch's own ``avg_pool2d`` and its autograd gradient.

Students see it used in the tests; the exercises forbid calling it (the tests check the source).
NumPy arrays in, NumPy arrays out; the computation runs in the input's dtype, as the spec card says.
"""

from __future__ import annotations

import numpy as np


def _torch_args(kernel_size, stride, padding):
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    kernel = pair(kernel_size)
    step = tuple(k if s == 0 else s for k, s in zip(kernel, pair(stride)))
    return kernel, step, pair(padding)


def avg_pool2d_reference(x: np.ndarray, kernel_size, stride=0, padding=0, count_include_pad=True) -> np.ndarray:
    """``torch.nn.functional.avg_pool2d`` on ``x[B, C, H, W]`` -> ``[B, C, H_out, W_out]`` (stride 0 = kernel)."""
    import torch
    import torch.nn.functional as F

    kernel, step, pad = _torch_args(kernel_size, stride, padding)
    out = F.avg_pool2d(torch.from_numpy(np.ascontiguousarray(x)), kernel, step, pad,
                       ceil_mode=False, count_include_pad=count_include_pad)
    return out.numpy()


def avg_pool2d_grad_reference(x: np.ndarray, grad_out: np.ndarray, kernel_size, stride=0, padding=0,
                              count_include_pad=True) -> np.ndarray:
    """Gradient of ``sum(avg_pool2d(x) * grad_out)`` with respect to ``x``: ``[B, C, H, W]``, by autograd."""
    import torch
    import torch.nn.functional as F

    kernel, step, pad = _torch_args(kernel_size, stride, padding)
    xt = torch.from_numpy(np.array(x, copy=True)).requires_grad_(True)
    out = F.avg_pool2d(xt, kernel, step, pad, ceil_mode=False, count_include_pad=count_include_pad)
    out.backward(torch.from_numpy(np.ascontiguousarray(grad_out, dtype=x.dtype)))
    return xt.grad.numpy()
