# honest: from the grading corpus (correct_padded_copy, without its warning)
# %% avg_pool2d_loops
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
