# corpus: honest bug: right values with lesson 3's whole-array tools (np.pad, sliding_window_view, a count map) instead of the explicit loops this exercise asks for; before check_output_loops it took 24/24
# category: bug
# status: ok
# fails: forward_avoids, backward_avoids
# %% avg_pool2d_loops
def as_pair(value):
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def _counts(height, width, kh, kw, sh, sw, ph, pw, count_include_pad, dtype):
    if count_include_pad:
        return dtype.type(kh * kw)
    ones = np.pad(np.ones((height, width), dtype), ((ph, ph), (pw, pw)))
    return np.lib.stride_tricks.sliding_window_view(ones, (kh, kw))[::sh, ::sw].sum(axis=(-2, -1))


def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
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
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]
    sums = windows.sum(axis=(-2, -1))[:, :, :out_h, :out_w]
    counts = _counts(x.shape[2], x.shape[3], kh, kw, sh, sw, ph, pw, count_include_pad, x.dtype)
    return (sums / (counts[:out_h, :out_w] if np.ndim(counts) else counts)).astype(x.dtype)
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(grad_out, np.ndarray):
        raise TypeError(f"grad_out must be a NumPy array [B, C, H_out, W_out], got {type(grad_out).__name__}")
    if grad_out.dtype not in (np.float32, np.float64):
        raise TypeError(f"grad_out must have a float dtype (float32 or float64), got {grad_out.dtype}")
    if len(input_shape) != 4:
        raise ValueError(f"input_shape must be the 4-tuple (B, C, H, W) of x, got {input_shape!r}")
    batch, channels, height, width = (int(n) for n in input_shape)
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    if grad_out.shape != (batch, channels, out_h, out_w):
        raise ValueError(f"grad_out must have the forward's output shape {(batch, channels, out_h, out_w)}, "
                         f"got {grad_out.shape}")
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    counts = _counts(height, width, kh, kw, sh, sw, ph, pw, count_include_pad, grad_out.dtype)
    share = grad_out / (counts[:out_h, :out_w] if np.ndim(counts) else counts)
    grad = np.zeros((batch, channels, height + 2 * ph, width + 2 * pw), grad_out.dtype)
    view = np.lib.stride_tricks.as_strided(grad, (batch, channels, out_h, out_w, kh, kw),
                                           grad.strides[:2] + (grad.strides[2] * sh, grad.strides[3] * sw)
                                           + grad.strides[2:], writeable=True)
    np.add.at(view, (slice(None),) * 4, share[..., None, None] + np.zeros((kh, kw), grad_out.dtype))
    return grad[:, :, ph:ph + height, pw:pw + width]
