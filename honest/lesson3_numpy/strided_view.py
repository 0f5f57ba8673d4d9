# honest: the windows as a strided view of the padded input
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
