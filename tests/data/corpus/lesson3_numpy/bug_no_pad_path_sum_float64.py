# corpus: the count_include_pad=False path sums in float64 and casts the means back to x's dtype (the True path sums in float32, as the text asks): values within every tolerance and the dtype right, so it kept full marks before; forward_no_pad_count's 24-bit float32 maps now tell its rounded-once means, and it costs that cell alone (issue 53 item 12)
# category: bug
# status: ok
# fails: forward_no_pad_count
# %% avg_pool2d_numpy
def as_pair(value):
    """(a, b) from an int or a pair of ints (output_size has already checked the value)."""
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out] in x's dtype, with no loop over outputs."""
    ### BEGIN SOLUTION
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)  # checks every argument
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    batch, channels, height, width = x.shape

    def window_sum(a, axis, k, s, p, out):
        """out = the sum of the k taps of every window along `axis` of a (stride s, zero padding p)."""
        def cut(b, start, stop, step=1):
            return b[(slice(None),) * axis + (slice(start, stop, step),)]
        full, partial = [], []
        for t in range(k):  # tap t of window i reads element i*s + t - p; windows lo..hi-1 read a real one
            lo = max(0, -((t - p) // s))
            hi = min(out.shape[axis], (a.shape[axis] - 1 - t + p) // s + 1)
            if lo < hi:
                first = lo * s + t - p
                taps = full if (lo, hi) == (0, out.shape[axis]) else partial
                taps.append((lo, hi, cut(a, first, first + (hi - lo - 1) * s + 1, s)))  # a strided view
        if len(full) >= 2:  # start from two taps that every window has: no pass of zeros
            np.add(full[0][2], full[1][2], out=out)
        elif full:
            out[...] = full[0][2]
        else:
            out[...] = 0
        for lo, hi, tap in full[2:]:
            np.add(out, tap, out=out)  # in place: no temporary array
        for lo, hi, tap in partial:  # border taps: only the windows whose tap is a real element
            part = cut(out, lo, hi)
            np.add(part, tap, out=part)

    if count_include_pad:
        divisor = x.dtype.type(kh * kw)
    else:  # real elements per window = (real rows) x (real columns), from 1-D counts
        def real(n, k, s, p, n_out):
            start = np.arange(n_out) * s - p
            return np.minimum(start + k, n) - np.maximum(start, 0)
        dtype, x = x.dtype, x.astype(np.float64)  # more exact: float64, back to x's dtype at the end
        divisor = np.outer(real(height, kh, sh, ph, out_h), real(width, kw, sw, pw, out_w)).astype(x.dtype)
    # Separable: sum the kh rows of every window, then the kw columns of those row sums. The images go in
    # chunks, one per 2 MiB of input (a chunk's row sums are still in the CPU's cache when its column pass
    # reads them), 8 at most (8 chunks times kh taps stays within the loop rule's budget). Every array is made
    # in x's memory layout (np.empty_like keeps it): on channels-last memory each add runs over whole rows of
    # W x C numbers, on NCHW memory over rows of W.
    chunks = min(8, batch, 1 + x.nbytes // 2**21)
    size = -(-batch // chunks)  # images per chunk
    out = np.empty_like(x, shape=(batch, channels, out_h, out_w))
    rows = np.empty_like(x, shape=(size, channels, out_h, width))  # one chunk's row sums, reused by every chunk
    # With padding >= stride, several column taps are border taps, and NumPy adds into a part of an array at
    # about half its speed: then copy the row sums between pw zero columns, where every column tap is whole.
    padded = np.zeros_like(x, shape=(size, channels, out_h, width + 2 * pw)) if pw >= sw else None
    for chunk in range(chunks):
        part = slice(chunk * size, (chunk + 1) * size)
        m = len(out[part])  # the last chunks may be short or empty
        window_sum(x[part], 2, kh, sh, ph, rows[:m])
        if padded is None:
            window_sum(rows[:m], 3, kw, sw, pw, out[part])
        else:
            padded[:m, :, :, pw:pw + width] = rows[:m]
            window_sum(padded[:m], 3, kw, sw, 0, out[part])
        out[part] /= divisor  # divide once, while the chunk is in cache
    return out if count_include_pad else out.astype(dtype)
    ### END SOLUTION
