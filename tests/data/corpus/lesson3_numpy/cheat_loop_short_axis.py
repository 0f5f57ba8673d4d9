# corpus: cheat: a Python loop over the output pixels of the shorter output axis (rows or columns, whichever is fewer), vectorized along the other: on the timed inputs, long along one axis only, its loop runs over the other, short axis (one turn), and on the balanced input over a side of a square map (100 to 270 turns, each a whole-array pass over a row): about as costly as whole-array code (at most 33 times PyTorch under the grader, within the limit), so the cost passes it (issue 50: a known gap, xfail); the loop reader sees `for i in range(out_h)` grow with the data, so the cell goes to review (0 until the instructor reads it), never full marks
# category: cheat
# status: ok
# fails: forward_vectorized
# reviews: forward_vectorized
# %% avg_pool2d_numpy +
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
    if out_h > out_w:  # loop over the fewer output columns instead: the same code on the transposed maps
        swapped = avg_pool2d_numpy(np.ascontiguousarray(x.transpose(0, 1, 3, 2)), (kw, kh), (sw, sh), (pw, ph),
                                   count_include_pad)
        return np.ascontiguousarray(swapped.transpose(0, 1, 3, 2))
    H, W = x.shape[2:]
    out = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
    padded_w = np.pad(x, ((0, 0), (0, 0), (0, 0), (pw, pw)))
    starts = np.arange(out_w) * sw
    col_count = np.minimum(starts - pw + kw, W) - np.maximum(starts - pw, 0)
    for i in range(out_h):  # a loop over output rows
        top = i * sh - ph
        r0, r1 = max(top, 0), min(top + kh, H)
        rows = padded_w[:, :, r0:r1, :].sum(axis=2)
        total = np.zeros(x.shape[:2] + (out_w,), x.dtype)
        for t in range(kw):
            total += rows[:, :, t:t + sw * (out_w - 1) + 1:sw]
        out[:, :, i, :] = total / (kh * kw if count_include_pad else (r1 - r0) * col_count).astype(x.dtype) if not count_include_pad else total / x.dtype.type(kh * kw)
    return out
