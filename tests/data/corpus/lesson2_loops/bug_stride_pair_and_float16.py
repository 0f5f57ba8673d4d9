# corpus: honest bugs: forward and backward replace stride 0 by kernel_size only when the whole stride is the int 0, so a pair such as (0, 1) slides by 0 rows; and any floating dtype passes the forward's check (np.issubdtype), so float16 is pooled instead of refused (each kept full marks before its hidden case: a stride pair (0, 1), a float16 input)
# category: bug
# status: ok
# fails: forward_tests, backward_tests, forward_errors
# %% avg_pool2d_loops
def as_pair(value):
    """(a, b) from an int or a pair of ints (output_size has already checked the value)."""
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] with Python loops -> [B, C, H_out, W_out], in x's dtype."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    height, width = x.shape[2], x.shape[3]
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    kh, kw = as_pair(kernel_size)
    sh, sw = as_pair(stride)
    if stride == 0:
        sh, sw = kh, kw
    ph, pw = as_pair(padding)
    out = np.zeros(x.shape[:2] + (out_h, out_w), dtype=x.dtype)
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
                    top, left = i * sh - ph, j * sw - pw  # window corner in unpadded coordinates
                    r0, r1 = max(top, 0), min(top + kh, height)  # the window's real rows ...
                    c0, c1 = max(left, 0), min(left + kw, width)  # ... and columns (padding adds 0)
                    total = x[b, c, r0:r1, c0:c1].sum()
                    divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)
                    out[b, c, i, j] = total / divisor
    return out
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Gradient of average pooling w.r.t. x [B, C, H, W] = input_shape, from grad_out [B, C, H_out, W_out]."""
    if not isinstance(grad_out, np.ndarray):
        raise TypeError(f"grad_out must be a NumPy array [B, C, H_out, W_out], got {type(grad_out).__name__}")
    if grad_out.dtype not in (np.float32, np.float64):
        raise TypeError(f"grad_out must have a float dtype (float32 or float64), got {grad_out.dtype}")
    if len(input_shape) != 4:
        raise ValueError(f"input_shape must be the 4-tuple (B, C, H, W) of x, got {input_shape!r}")
    batch, channels, height, width = (int(n) for n in input_shape)
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    if grad_out.shape != (batch, channels, out_h, out_w):
        raise ValueError(f"grad_out must have the forward's output shape {(batch, channels, out_h, out_w)} "
                         f"for input_shape {tuple(input_shape)}, got {grad_out.shape}")
    kh, kw = as_pair(kernel_size)
    sh, sw = as_pair(stride)
    if stride == 0:
        sh, sw = kh, kw
    ph, pw = as_pair(padding)
    grad_x = np.zeros((batch, channels, height, width), dtype=grad_out.dtype)
    for b in range(batch):
        for c in range(channels):
            for i in range(out_h):
                for j in range(out_w):
                    top, left = i * sh - ph, j * sw - pw
                    r0, r1 = max(top, 0), min(top + kh, height)
                    c0, c1 = max(left, 0), min(left + kw, width)
                    divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)
                    grad_x[b, c, r0:r1, c0:c1] += grad_out[b, c, i, j] / divisor
    return grad_x
