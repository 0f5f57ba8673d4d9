# corpus: an honest forward without a loop: the windows as a matrix per axis (H_out × H and W_out × W of ones), out = A_h @ x @ A_w^T divided by the counts. Right on every small input, but the matrices grow with the square of the map: on the vectorized cell's 60 000-row input it needs about 29 GB and runs out of memory. It costs forward_vectorized alone, whose message says the code ran out of memory (MemoryError, with the array it asked for), never blaming a loop; the value cells keep their points, and the record says memory (issue 43)
# category: bug
# status: memory
# fails: forward_vectorized
# %% avg_pool2d_numpy
def as_pair(value):
    """(a, b) from an int or a pair of ints (output_size has already checked the value)."""
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def window_matrix(n, k, s, p, n_out, dtype):
    """[n_out, n] of ones where output o's window (padded by p) covers input i."""
    starts = np.arange(n_out) * s - p
    inputs = np.arange(n)
    return ((inputs[None, :] >= starts[:, None]) & (inputs[None, :] < starts[:, None] + k)).astype(dtype)


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out] in x's dtype, with no loop over outputs."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    rows = window_matrix(x.shape[2], kh, sh, ph, out_h, x.dtype)   # [H_out, H]
    cols = window_matrix(x.shape[3], kw, sw, pw, out_w, x.dtype)   # [W_out, W]
    total = rows @ x @ cols.T                                      # [B, C, H_out, W_out]
    if count_include_pad:
        return total / x.dtype.type(kh * kw)
    count = rows.sum(axis=1)[:, None] * cols.sum(axis=1)[None, :]  # real elements per window
    return total / count
