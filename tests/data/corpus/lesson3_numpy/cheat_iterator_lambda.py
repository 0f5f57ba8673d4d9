# corpus: cheat (issue 50): a Python loop over the output rows hidden in iterator tools fed a lambda: the forward is `np.stack(list(map(lambda i: pool_row(...), range(out_h))), axis=2)`, the backward `functools.reduce(lambda g, i: spread_row(g, ...), range(out_h), zeros)`; no `for` statement over the data; on the input 10^5 rows long each costs a Python call per row; loses both vectorized cells
# category: cheat
# status: ok
# fails: forward_vectorized, backward_vectorized
# %% avg_pool2d_numpy +
import functools


def pool_row(padded, ones, i, kh, kw, sh, sw, out_w, count_include_pad):
    """Output row i [B, C, W_out] of the zero-padded input (ones: the padded map of ones, for the counts)."""
    band = padded[:, :, i * sh:i * sh + kh].sum(axis=2)
    real = ones[i * sh:i * sh + kh].sum(axis=0)
    total = np.zeros(padded.shape[:2] + (out_w,), padded.dtype)
    count = np.zeros(out_w, padded.dtype)
    for b in range(kw):
        total += band[:, :, b:b + sw * (out_w - 1) + 1:sw]
        count += real[b:b + sw * (out_w - 1) + 1:sw]
    return total / (padded.dtype.type(kh * kw) if count_include_pad else count)


def spread_row(grad, g_row, ones, i, kh, kw, sh, sw, count_include_pad):
    """Adds output row i's shares (g_row [B, C, W_out]) into grad (zero-padded [B, C, Hp, Wp]); returns grad."""
    out_w = g_row.shape[2]
    real = ones[i * sh:i * sh + kh].sum(axis=0)
    count = np.zeros(out_w, g_row.dtype)
    for b in range(kw):
        count += real[b:b + sw * (out_w - 1) + 1:sw]
    share = g_row / (g_row.dtype.type(kh * kw) if count_include_pad else count)
    for b in range(kw):
        grad[:, :, i * sh:i * sh + kh, b:b + sw * (out_w - 1) + 1:sw] += share[:, :, None, :]
    return grad


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    ones = np.pad(np.ones(x.shape[2:], x.dtype), ((ph, ph), (pw, pw)))
    return np.ascontiguousarray(np.stack(list(map(lambda i: pool_row(padded, ones, i, kh, kw, sh, sw, out_w, count_include_pad), range(out_h))), axis=2))
# %% avg_pool2d_numpy_backward +
def avg_pool2d_numpy_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(grad_out, np.ndarray):
        raise TypeError(f"grad_out must be a NumPy array [B, C, H_out, W_out], got {type(grad_out).__name__}")
    if grad_out.dtype not in (np.float32, np.float64):
        raise TypeError(f"grad_out must have a float dtype (float32 or float64), got {grad_out.dtype}")
    if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 4:
        raise ValueError(f"input_shape must be the 4-tuple (B, C, H, W) of x, got {input_shape!r}")
    batch, channels, height, width = (int(n) for n in input_shape)
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    if grad_out.shape != (batch, channels, out_h, out_w):
        raise ValueError(f"grad_out must have the forward's output shape {(batch, channels, out_h, out_w)} "
                         f"for input_shape {tuple(input_shape)}, got {grad_out.shape}")
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    grad = np.zeros((batch, channels, height + 2 * ph, width + 2 * pw), grad_out.dtype)
    ones = np.pad(np.ones((height, width), grad_out.dtype), ((ph, ph), (pw, pw)))
    grad = functools.reduce(lambda g, i: spread_row(g, grad_out[:, :, i], ones, i, kh, kw, sh, sw, count_include_pad), range(out_h), grad)
    return np.ascontiguousarray(grad[:, :, ph:ph + height, pw:pw + width])
