# honest: from the grading corpus (correct_ndindex), its cells whole (the corpus appends them to the reference's)
# %% avg_pool2d_numpy
def as_pair(value):
    """(a, b) from an int or a pair of ints."""
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def window_counts(height, width, kernel_size, stride, padding, dtype):
    """[H_out, W_out]: the real (not padding) elements of every window, in dtype."""
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    ones = np.pad(np.ones((height, width), dtype), ((ph, ph), (pw, pw)))
    count = np.zeros((out_h, out_w), dtype)
    for a, b in np.ndindex(kh, kw):
        count += ones[a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
    return count


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out]: one strided slice per kernel offset."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    total = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    for a, b in np.ndindex(kh, kw):
        total += padded[:, :, a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw]
    if count_include_pad:
        return total / x.dtype.type(kh * kw)
    return total / window_counts(x.shape[2], x.shape[3], kernel_size, stride, padding, x.dtype)
# %% avg_pool2d_numpy_backward
def avg_pool2d_numpy_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Gradient w.r.t. x [B, C, H, W] = input_shape: each window's share added with one slice per kernel offset."""
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
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    if count_include_pad:
        share = grad_out / grad_out.dtype.type(kh * kw)
    else:
        share = grad_out / window_counts(height, width, kernel_size, stride, padding, grad_out.dtype)
    grad = np.zeros((batch, channels, height + 2 * ph, width + 2 * pw), grad_out.dtype)
    for a, b in np.ndindex(kh, kw):
        grad[:, :, a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw] += share
    return np.ascontiguousarray(grad[:, :, ph:ph + height, pw:pw + width])
