# corpus: count_include_pad=True divides each window by its real elements too (the divisor line lost its condition): count_include_pad=False is right, True is wrong at the borders; it cost forward_no_pad_count too before (that cell took the student's own True result as its yardstick), now a right count_include_pad=False result passes there and the mistake costs forward_tests alone (issue 53 item 12)
# category: bug
# status: ok
# fails: forward_tests
# %% avg_pool2d_loops
def as_pair(value):
    """(a, b) from an int or a pair of ints (output_size has already checked the value)."""
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] with Python loops -> [B, C, H_out, W_out], in x's dtype."""
    ### BEGIN SOLUTION
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
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
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
                    divisor = (r1 - r0) * (c1 - c0)
                    out[b, c, i, j] = total / divisor
    return out
    ### END SOLUTION
