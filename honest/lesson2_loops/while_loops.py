# honest: while loops over the output, the window cut with slices
# %% avg_pool2d_loops
def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(x, np.ndarray):
        raise TypeError("x must be a NumPy array")
    if x.ndim != 4:
        raise ValueError("x must be 4-D: [B, C, H, W]")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError("x must be float32 or float64")
    k = (kernel_size, kernel_size) if np.isscalar(kernel_size) else tuple(kernel_size)
    s = (stride, stride) if np.isscalar(stride) else tuple(stride)
    p = (padding, padding) if np.isscalar(padding) else tuple(padding)
    s = (s[0] or k[0], s[1] or k[1])
    n_rows, n_cols = output_size(x.shape[2:], kernel_size, stride, padding)
    result = np.zeros((x.shape[0], x.shape[1], n_rows, n_cols), dtype=x.dtype)
    row = 0
    while row < n_rows:
        col = 0
        while col < n_cols:
            y0 = row * s[0] - p[0]
            x0 = col * s[1] - p[1]
            ys = slice(max(y0, 0), min(y0 + k[0], x.shape[2]))
            xs = slice(max(x0, 0), min(x0 + k[1], x.shape[3]))
            window = x[:, :, ys, xs]
            n = k[0] * k[1] if count_include_pad else window.shape[2] * window.shape[3]
            result[:, :, row, col] = window.sum(axis=(2, 3)) / n
            col += 1
        row += 1
    return result
# %% my_cases
my_cases = [((2, 1, 6, 6), "float32", 2, 0, 1, False), ((1, 3, 7, 5), "float64", 3, 2, 1, True)]
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(grad_out, np.ndarray) or grad_out.dtype not in (np.float32, np.float64):
        raise TypeError("grad_out must be a float32 or float64 NumPy array")
    if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 4:
        raise ValueError(f"input_shape must hold 4 numbers (B, C, H, W), got {input_shape!r}")
    n_img, n_ch, rows, cols = [int(v) for v in input_shape]
    k = (kernel_size, kernel_size) if np.isscalar(kernel_size) else tuple(kernel_size)
    s = (stride, stride) if np.isscalar(stride) else tuple(stride)
    p = (padding, padding) if np.isscalar(padding) else tuple(padding)
    s = (s[0] or k[0], s[1] or k[1])
    n_rows, n_cols = output_size((rows, cols), kernel_size, stride, padding)
    if grad_out.shape != (n_img, n_ch, n_rows, n_cols):
        raise ValueError(f"grad_out must be {(n_img, n_ch, n_rows, n_cols)}, got {grad_out.shape}")
    grad = np.zeros((n_img, n_ch, rows, cols), dtype=grad_out.dtype)
    row = 0
    while row < n_rows:
        col = 0
        while col < n_cols:
            y0, x0 = row * s[0] - p[0], col * s[1] - p[1]
            ys = slice(max(y0, 0), min(y0 + k[0], rows))
            xs = slice(max(x0, 0), min(x0 + k[1], cols))
            n = k[0] * k[1] if count_include_pad else (ys.stop - ys.start) * (xs.stop - xs.start)
            grad[:, :, ys, xs] += (grad_out[:, :, row, col] / n)[:, :, None, None]
            col += 1
        row += 1
    return grad
