# honest: lesson 2's own loops pasted into the optional cell
# %% lesson2_loops
def as_pair(value):
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if type(x) is not np.ndarray:
        raise TypeError(f"x must be a NumPy array, not {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must have 4 dimensions [B, C, H, W], got {x.ndim}")
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:
        raise TypeError(f"x must be float32 or float64 (a float dtype), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    real = np.pad(np.ones(x.shape[2:], dtype=x.dtype), ((ph, ph), (pw, pw)))
    out = np.empty(x.shape[:2] + (out_h, out_w), dtype=x.dtype)
    for i in range(out_h):
        for j in range(out_w):
            rows, cols = slice(i * sh, i * sh + kh), slice(j * sw, j * sw + kw)
            count = kh * kw if count_include_pad else real[rows, cols].sum()
            for b in range(x.shape[0]):
                for c in range(x.shape[1]):
                    out[b, c, i, j] = padded[b, c, rows, cols].sum() / count
    return out


def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Spread each output's gradient over its window in a padded array, then cut the padding off."""
    if type(grad_out) is not np.ndarray:
        raise TypeError("grad_out: expected a numpy array")
    if grad_out.dtype.kind != "f" or grad_out.itemsize < 4:
        raise TypeError("grad_out: expected float32 or float64")
    if len(input_shape) != 4:
        raise ValueError("input_shape: expected 4 numbers")
    shape = tuple(int(v) for v in input_shape)
    kernel = np.broadcast_to(kernel_size, 2).astype(int)
    step = np.broadcast_to(stride, 2).astype(int)
    step = np.where(step == 0, kernel, step)
    pad = np.broadcast_to(padding, 2).astype(int)
    h_out, w_out = output_size(shape[2:], kernel_size, stride, padding)
    if grad_out.shape != shape[:2] + (h_out, w_out):
        raise ValueError("grad_out: not the forward's output shape")
    ones = np.pad(np.ones(shape[2:]), [(pad[0], pad[0]), (pad[1], pad[1])])
    big = np.zeros(shape[:2] + (shape[2] + 2 * pad[0], shape[3] + 2 * pad[1]), dtype=grad_out.dtype)
    for r in range(h_out):
        for c in range(w_out):
            top, left = r * step[0], c * step[1]
            n = kernel[0] * kernel[1] if count_include_pad else ones[top:top + kernel[0], left:left + kernel[1]].sum()
            big[:, :, top:top + kernel[0], left:left + kernel[1]] += (grad_out[:, :, r, c] / n)[:, :, None, None]
    return big[:, :, pad[0]:pad[0] + shape[2], pad[1]:pad[1] + shape[3]]
