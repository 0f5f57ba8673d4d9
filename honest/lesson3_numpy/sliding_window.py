# honest: from the grading corpus (correct_sliding_window)
# %% avg_pool2d_numpy
def _pair(value):
    """(a, b) from an int or a pair of ints."""
    if np.ndim(value) == 0:
        return int(value), int(value)
    return int(value[0]), int(value[1])


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out] in x's dtype, with no loop over outputs."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    if sh == 0:
        sh = kh
    if sw == 0:
        sw = kw
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::sh, ::sw][:, :, :out_h, :out_w]
    if count_include_pad:
        return windows.mean(axis=(-2, -1))
    ones = np.pad(np.ones(x.shape[2:], x.dtype), ((ph, ph), (pw, pw)))
    counts = np.lib.stride_tricks.sliding_window_view(ones, (kh, kw))[::sh, ::sw][:out_h, :out_w].sum(axis=(-2, -1))
    return windows.sum(axis=(-2, -1)) / counts
# %% avg_pool2d_numpy_backward
def _kernel(kernel_size):
    """(kh, kw) of kernel_size, an int or a pair."""
    return _pair(kernel_size)


def avg_pool2d_numpy_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Gradient of average pooling w.r.t. x [B, C, H, W] = input_shape, from grad_out [B, C, H_out, W_out]."""
    if not isinstance(grad_out, np.ndarray):
        raise TypeError(f"grad_out must be a NumPy array [B, C, H_out, W_out], got {type(grad_out).__name__}")
    if grad_out.dtype not in (np.float32, np.float64):
        raise TypeError(f"grad_out must have a float dtype (float32 or float64), got {grad_out.dtype}")
    if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 4:
        raise ValueError(f"input_shape must be the 4-tuple (B, C, H, W) of x, got {input_shape!r}")
    B, C, H, W = map(int, input_shape)
    out_h, out_w = output_size((H, W), kernel_size, stride, padding)
    if grad_out.shape != (B, C, out_h, out_w):
        raise ValueError(f"grad_out must have the forward's output shape {(B, C, out_h, out_w)} "
                         f"for input_shape {tuple(input_shape)}, got {grad_out.shape}")
    kh, kw = _kernel(kernel_size)
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    sh, sw = sh or kh, sw or kw
    if count_include_pad:
        share = grad_out / grad_out.dtype.type(kh * kw)
    else:
        ones = np.pad(np.ones((H, W), grad_out.dtype), ((ph, ph), (pw, pw)))
        counts = np.lib.stride_tricks.sliding_window_view(ones, (kh, kw))[::sh, ::sw][:out_h, :out_w].sum(axis=(-2, -1))
        share = grad_out / counts
    grad = np.zeros((B, C, H + 2 * ph, W + 2 * pw), grad_out.dtype)
    for a in range(kh):
        for b in range(kw):
            grad[:, :, a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw] += share
    return grad[:, :, ph:ph + H, pw:pw + W]
