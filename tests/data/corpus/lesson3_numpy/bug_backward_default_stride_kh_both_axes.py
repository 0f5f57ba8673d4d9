# corpus: a vectorized backward whose stride default takes kh on both axes (`sw or kh`), the forward right; loses backward_tests only (issue 43)
# category: bug
# status: ok
# fails: backward_tests
# %% avg_pool2d_numpy_backward
def avg_pool2d_numpy_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Gradient of average pooling w.r.t. x [B, C, H, W] = input_shape, from grad_out [B, C, H_out, W_out]."""
    ### BEGIN SOLUTION
    if not isinstance(grad_out, np.ndarray):
        raise TypeError(f"grad_out must be a NumPy array [B, C, H_out, W_out], got {type(grad_out).__name__}")
    if grad_out.dtype not in (np.float32, np.float64):
        raise TypeError(f"grad_out must have a float dtype (float32 or float64), got {grad_out.dtype}")
    if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 4:
        raise ValueError(f"input_shape must be the 4-tuple (B, C, H, W) of x, got {input_shape!r}")
    batch, channels, height, width = (int(n) for n in input_shape)
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    if grad_out.shape != (batch, channels, out_h, out_w):
        raise ValueError(f"grad_out must have the forward's output shape {(batch, channels, out_h, out_w)} "
                         f"for input_shape {tuple(input_shape)}, got {grad_out.shape}")
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kh  # stride 0 means kernel_size

    def window_spread(g, axis, k, s, p, out):
        """out = the transpose of the forward's window sum along `axis`: element j of out receives g[i] from
        every window i that has it as a tap t (j = i*s + t - p). The elements q, q + s, q + 2s... (phase q)
        receive the taps t = q + p (mod s), each a shifted copy of g: the first of them (t < s) assigns, and
        zeros what it does not reach (no pass of zeros), the others (t + s, t + 2s...) add."""
        def cut(a, start, stop, step=1):
            return a[(slice(None),) * axis + (slice(start, stop, step),)]
        for t in range(max(k, s)):  # t >= k: a tap no window has (stride > kernel), it only zeros its phase
            q = (t - p) % s
            phase = cut(out, q, None, s)  # a view: writing to it writes out
            d = (t - p - q) // s  # phase element r is window (r - d)'s tap t
            lo, hi = max(0, d), min(phase.shape[axis], g.shape[axis] + d)
            if t >= k or lo >= hi:  # no window reaches these elements
                lo = hi = 0
            if t < s:  # the first tap of phase q
                cut(phase, 0, lo)[...] = 0
                cut(phase, hi, None)[...] = 0
                cut(phase, lo, hi)[...] = cut(g, lo - d, hi - d)
            else:
                part = cut(phase, lo, hi)
                np.add(part, cut(g, lo - d, hi - d), out=part)  # in place: no temporary array

    if count_include_pad:
        divisor = grad_out.dtype.type(kh * kw)
    else:  # real elements per window = (real rows) x (real columns), from 1-D counts
        def real(n, k, s, p, n_out):
            start = np.arange(n_out) * s - p
            return np.minimum(start + k, n) - np.maximum(start, 0)
        divisor = np.outer(real(height, kh, sh, ph, out_h), real(width, kw, sw, pw, out_w)).astype(grad_out.dtype)
    # Divide once, on the small array; then the forward's two sums, transposed, in reverse order: columns
    # (on the small array), then rows. The images go in chunks, as in the forward (one per 2 MiB of
    # gradient, 8 at most), and every array is made in grad_out's memory layout.
    grad_x = np.empty_like(grad_out, shape=(batch, channels, height, width))
    chunks = min(8, batch, 1 + grad_x.nbytes // 2**21)
    size = -(-batch // chunks)  # images per chunk
    share = np.empty_like(grad_out, shape=(size, channels, out_h, out_w))  # one chunk's grad_out / divisor
    columns = np.empty_like(grad_out, shape=(size, channels, out_h, width))  # ... and its spread over the columns
    # With padding >= stride, spread into pw extra zero columns on each side (every tap reaches every window there,
    # as in the forward), then copy the real columns out.
    padded = np.empty_like(grad_out, shape=(size, channels, out_h, width + 2 * pw)) if pw >= sw else None
    for chunk in range(chunks):
        part = slice(chunk * size, (chunk + 1) * size)
        m = len(grad_x[part])  # the last chunks may be short or empty
        np.divide(grad_out[part], divisor, out=share[:m])
        if padded is None:
            window_spread(share[:m], 3, kw, sw, pw, columns[:m])
        else:
            window_spread(share[:m], 3, kw, sw, 0, padded[:m])
            columns[:m] = padded[:m, :, :, pw:pw + width]
        window_spread(columns[:m], 2, kh, sh, ph, grad_x[part])
    return grad_x
    ### END SOLUTION
