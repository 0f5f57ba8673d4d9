# corpus: a forward that sums the windows in float64 and casts the means back to x's dtype, which the text forbids ("summed in that dtype, do not convert to float64 and back"): values within every tolerance, so it kept full marks before; loses forward_tests only, whose float32 maps of 24-bit values tell a mean rounded once from float64 (every window) from a float32 sum's (55-78 % of them) (issue 43)
# category: bug
# status: ok
# fails: forward_tests
# %% avg_pool2d_numpy
def as_pair(value):
    """(a, b) from an int or a pair of ints (output_size has already checked the value)."""
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


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
    batch, channels, height, width = x.shape
    wide = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))  # float64: more exact (forbidden)
    real = np.pad(np.ones((height, width)), ((ph, ph), (pw, pw)))
    total = np.zeros((batch, channels, out_h, out_w))
    count = np.zeros((out_h, out_w))
    for di in range(kh):
        for dj in range(kw):
            rows = slice(di, di + sh * (out_h - 1) + 1, sh)
            cols = slice(dj, dj + sw * (out_w - 1) + 1, sw)
            total += wide[:, :, rows, cols]
            count += real[rows, cols]
    return (total / (kh * kw if count_include_pad else count)).astype(x.dtype)
