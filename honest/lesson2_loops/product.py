# honest: one loop over every output position (itertools.product), each window summed tap by tap
# %% avg_pool2d_loops
import itertools

def pair(v):
    return (int(v), int(v)) if isinstance(v, (int, np.integer)) else (int(v[0]), int(v[1]))

def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(x, np.ndarray):
        raise TypeError("x must be an ndarray")
    if x.ndim != 4:
        raise ValueError("x must be [B, C, H, W]")
    if x.dtype != np.float32 and x.dtype != np.float64:
        raise TypeError("x must have dtype float32 or float64")
    H, W = x.shape[2], x.shape[3]
    oh, ow = output_size((H, W), kernel_size, stride, padding)
    kh, kw = pair(kernel_size)
    sh, sw = pair(stride)
    if sh == 0: sh = kh
    if sw == 0: sw = kw
    ph, pw = pair(padding)
    y = np.empty((*x.shape[:2], oh, ow), dtype=x.dtype)
    for n, ch in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for a in range(oh):
            for b in range(ow):
                r0, c0 = a * sh - ph, b * sw - pw
                rows = range(max(r0, 0), min(r0 + kh, H))
                cols = range(max(c0, 0), min(c0 + kw, W))
                acc = x[n, ch, rows.start:rows.stop, cols.start:cols.stop].sum()
                y[n, ch, a, b] = acc / (kh * kw if count_include_pad else len(rows) * len(cols))
    return y
# %% my_cases
my_cases = [
    ((1, 1, 5, 5), "float64", 3, 0, 1, False),
    ((2, 2, 6, 8), "float32", 2, 0, 0, True),
    ((1, 1, 6, 6), "float32", 3, 1, 1, True),
]
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(grad_out, np.ndarray):
        raise TypeError("grad_out must be an ndarray")
    if not np.issubdtype(grad_out.dtype, np.floating) or grad_out.dtype == np.float16:
        raise TypeError("grad_out must have dtype float32 or float64")
    if len(input_shape) != 4:
        raise ValueError("input_shape must be [B, C, H, W]")
    B, Ch, H, W = (int(v) for v in input_shape)
    oh, ow = output_size((H, W), kernel_size, stride, padding)
    if tuple(grad_out.shape) != (B, Ch, oh, ow):
        raise ValueError("grad_out does not have the output's shape")
    kh, kw = pair(kernel_size)
    sh, sw = pair(stride)
    if sh == 0: sh = kh
    if sw == 0: sw = kw
    ph, pw = pair(padding)
    g = np.zeros((B, Ch, H, W), dtype=grad_out.dtype)
    for n, ch in itertools.product(range(B), range(Ch)):
        for a in range(oh):
            for b in range(ow):
                r0, c0 = a * sh - ph, b * sw - pw
                rows = range(max(r0, 0), min(r0 + kh, H))
                cols = range(max(c0, 0), min(c0 + kw, W))
                share = grad_out[n, ch, a, b] / (kh * kw if count_include_pad else len(rows) * len(cols))
                g[n, ch, rows.start:rows.stop, cols.start:cols.stop] += share
    return g
