# corpus: cheat: pooling computed on whole arrays by shift-and-add (`acc = acc + xp[:, :, di:..., dj:...]` over the kernel offsets), then copied item by item in a loop nest (issue 50: 2 points); right values, so only the loop cell fails, proved: every value written in the nest comes from the whole-array sum
# category: cheat
# status: ok
# fails: forward_avoids
# %% avg_pool2d_loops
def as_pair(value):
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    height, width = x.shape[2], x.shape[3]
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    kh, kw = as_pair(kernel_size)
    sh, sw = as_pair(stride)
    sh, sw = sh or kh, sw or kw
    ph, pw = as_pair(padding)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    real = np.pad(np.ones((height, width)), ((ph, ph), (pw, pw)))
    acc = np.zeros(x.shape[:2] + (xp.shape[2] - kh + 1, xp.shape[3] - kw + 1))
    count = np.zeros((xp.shape[2] - kh + 1, xp.shape[3] - kw + 1))
    for di in range(kh):
        for dj in range(kw):
            acc = acc + xp[:, :, di:di + acc.shape[2], dj:dj + acc.shape[3]]
            count = count + real[di:di + count.shape[0], dj:dj + count.shape[1]]
    out = np.zeros(x.shape[:2] + (out_h, out_w), dtype=x.dtype)
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
                    divisor = kh * kw if count_include_pad else count[i * sh, j * sw]
                    out[b, c, i, j] = acc[b, c, i * sh, j * sw] / divisor
    return out
