# honest: the windows as a strided view of the padded input (forward) and, backward, each share placed at its
# window's corner and spread over the kernel by a running sum along each axis
# %% avg_pool2d_numpy
from numpy.lib.stride_tricks import as_strided


def _ints(v):
    return (int(v), int(v)) if np.isscalar(v) else (int(v[0]), int(v[1]))


def _real_counts(n, k, s, p, n_out):
    first = np.arange(n_out) * s - p
    return np.clip(first + k, None, n) - np.clip(first, 0, None)


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x: expected a NumPy array, got {type(x).__name__}")
    if len(x.shape) != 4:
        raise ValueError(f"x: expected [B, C, H, W], got shape {x.shape}")
    if x.dtype != np.float32 and x.dtype != np.float64:
        raise TypeError(f"x: dtype must be float32 or float64, not {x.dtype}")
    rows, cols = output_size(x.shape[2:], kernel_size, stride, padding)
    k, s, p = _ints(kernel_size), _ints(stride), _ints(padding)
    s = (s[0] or k[0], s[1] or k[1])
    padded = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    sb, sc, sh, sw = padded.strides
    windows = as_strided(padded, shape=x.shape[:2] + (rows, cols) + k,
                         strides=(sb, sc, sh * s[0], sw * s[1], sh, sw), writeable=False)
    sums = windows.sum(axis=(4, 5))
    if count_include_pad:
        n = k[0] * k[1]
    else:
        n = np.outer(_real_counts(x.shape[2], k[0], s[0], p[0], rows), _real_counts(x.shape[3], k[1], s[1], p[1], cols))
    return sums / x.dtype.type(n) if np.isscalar(n) else sums / n.astype(x.dtype)
# %% avg_pool2d_numpy_backward
def _spread(a, axis, k, length):
    """b[r] = a[r - k + 1] + ... + a[r] along axis (a read as 0 outside it), for r < length."""
    run = np.concatenate([np.zeros_like(np.take(a, [0], axis=axis)), np.cumsum(a, axis=axis)], axis=axis)
    r = np.arange(length)
    n = a.shape[axis]
    return np.take(run, np.minimum(r + 1, n), axis=axis) - np.take(run, np.clip(r - k + 1, 0, n), axis=axis)


def avg_pool2d_numpy_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(grad_out, np.ndarray):
        raise TypeError(f"grad_out: expected a NumPy array, got {type(grad_out).__name__}")
    if grad_out.dtype != np.float32 and grad_out.dtype != np.float64:
        raise TypeError(f"grad_out: dtype must be float32 or float64, not {grad_out.dtype}")
    if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 4:
        raise ValueError(f"input_shape: expected (B, C, H, W), got {input_shape!r}")
    B, C, H, W = [int(v) for v in input_shape]
    rows, cols = output_size((H, W), kernel_size, stride, padding)
    if grad_out.shape != (B, C, rows, cols):
        raise ValueError(f"grad_out: expected shape {(B, C, rows, cols)}, got {grad_out.shape}")
    k, s, p = _ints(kernel_size), _ints(stride), _ints(padding)
    s = (s[0] or k[0], s[1] or k[1])
    if count_include_pad:
        share = grad_out / grad_out.dtype.type(k[0] * k[1])
    else:
        share = grad_out / np.outer(_real_counts(H, k[0], s[0], p[0], rows),
                                    _real_counts(W, k[1], s[1], p[1], cols)).astype(grad_out.dtype)
    corners = np.zeros((B, C, s[0] * (rows - 1) + 1, s[1] * (cols - 1) + 1), grad_out.dtype)
    corners[:, :, ::s[0], ::s[1]] = share
    full = _spread(_spread(corners, 2, k[0], H + 2 * p[0]), 3, k[1], W + 2 * p[1])
    return full[:, :, p[0]:p[0] + H, p[1]:p[1] + W].astype(grad_out.dtype)
