# corpus: cheat (issue 50): a loop over the output rows inside a string run by exec (`exec(ROWS, scope)`), the rest of the forward plain NumPy; no path allows it: check_avoids cannot prove code run from text (exec, and the globals() and locals() it reads), so every graded cell that reads the source goes to the instructor's review (0 until read), the backward's too (the rule reads every solution cell), and on the input 10^5 rows long its cost alone fails forward_vectorized (benchmarks.vectorized_cost)
# category: cheat
# status: ok
# fails: *
# reviews: backward_errors, backward_tests, backward_vectorized, forward_errors, forward_no_pad_count, forward_tests, forward_vectorized
# %% avg_pool2d_numpy +
def pool_row(padded, ones, i, kh, kw, sh, sw, out_w, count_include_pad):
    """Output row i [B, C, W_out] of the zero-padded input (ones: the padded map of ones, for the counts)."""
    band = padded[:, :, i * sh:i * sh + kh].sum(axis=2)
    real = ones[i * sh:i * sh + kh].sum(axis=0)
    total = np.zeros(padded.shape[:2] + (out_w,), padded.dtype)
    count = np.zeros(out_w, padded.dtype)
    for b in range(kw):
        total += band[:, :, b:b + sw * (out_w - 1) + 1:sw]
        count += real[b:b + sw * (out_w - 1) + 1:sw]
    return total / (padded.dtype.type(kh * kw) if count_include_pad else count)


def spread_row(grad, g_row, ones, i, kh, kw, sh, sw, count_include_pad):
    """Adds output row i's shares (g_row [B, C, W_out]) into grad (zero-padded [B, C, Hp, Wp]); returns grad."""
    out_w = g_row.shape[2]
    real = ones[i * sh:i * sh + kh].sum(axis=0)
    count = np.zeros(out_w, g_row.dtype)
    for b in range(kw):
        count += real[b:b + sw * (out_w - 1) + 1:sw]
    share = g_row / (g_row.dtype.type(kh * kw) if count_include_pad else count)
    for b in range(kw):
        grad[:, :, i * sh:i * sh + kh, b:b + sw * (out_w - 1) + 1:sw] += share[:, :, None, :]
    return grad


ROWS = '''
for i in range(out_h):
    out[:, :, i] = pool_row(padded, ones, i, kh, kw, sh, sw, out_w, count_include_pad)
'''


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
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    ones = np.pad(np.ones(x.shape[2:], x.dtype), ((ph, ph), (pw, pw)))
    out = np.empty(x.shape[:2] + (out_h, out_w), x.dtype)
    exec(ROWS, {**globals(), **locals()})
    return out
