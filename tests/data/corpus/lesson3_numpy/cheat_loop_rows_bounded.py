# corpus: cheat: loops over the output rows or columns, whichever are fewer, with a bound the loop rule accepts (at most 64 turns: `range(min(out_h, 64))`), each vectorized along the other axis (sliding_window_view), so its loops pass check_kernel_loops and it is fast enough on the timed inputs; the hidden case whose outputs are longer than 64 on both axes gets rows left at zero; the backward loops over the rows of grad_out (the shorter axis of the timed inputs) and the loop rule refuses it; the rows left at zero cost forward_tests only (issue 29: forward_no_pad_count judges the count_include_pad=False divisor against the student's own count_include_pad=True result, and zero rows are zero in both); issue 50: the balanced input (rows longer than 64 on a square map) gives rows left at zero against its own pieces, so forward_vectorized fails too; the backward loops over the shorter output axis, which the cost passes (a known gap, xfail, until the loop reader that sees `for i in range(out_h)` grow with the data sent the cell to review)
# category: cheat
# status: ok
# fails: forward_tests, forward_vectorized, backward_vectorized
# reviews: backward_vectorized
# %% avg_pool2d_numpy +
def _rows(padded, ones, kh, kw, sh, sw, out_h, out_w, count_include_pad):
    """Pool [B, C, Hp, Wp] one output row at a time (at most 64 rows), each row vectorized along its columns."""
    out = np.zeros(padded.shape[:2] + (out_h, out_w), padded.dtype)
    for i in range(min(out_h, 64)):
        rows = padded[:, :, i * sh:i * sh + kh].sum(axis=2)
        sums = np.lib.stride_tricks.sliding_window_view(rows, kw, axis=2)[:, :, ::sw][:, :, :out_w].sum(axis=3)
        if count_include_pad:
            out[:, :, i] = sums / padded.dtype.type(kh * kw)
        else:
            count = ones[i * sh:i * sh + kh].sum(axis=0)
            counts = np.lib.stride_tricks.sliding_window_view(count, kw)[::sw][:out_w].sum(axis=1)
            out[:, :, i] = sums / counts.astype(padded.dtype)
    return out


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
    if out_h <= out_w:
        return _rows(padded, ones, kh, kw, sh, sw, out_h, out_w, count_include_pad)
    # fewer output columns: the same loop over the columns of the transposed maps
    swapped = _rows(padded.transpose(0, 1, 3, 2), ones.T, kw, kh, sw, sh, out_w, out_h, count_include_pad)
    return np.ascontiguousarray(swapped.transpose(0, 1, 3, 2))
# %% avg_pool2d_numpy_backward +
def avg_pool2d_numpy_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(grad_out, np.ndarray):
        raise TypeError(f"grad_out must be a NumPy array [B, C, H_out, W_out], got {type(grad_out).__name__}")
    if grad_out.dtype not in (np.float32, np.float64):
        raise TypeError(f"grad_out must have a float dtype (float32 or float64), got {grad_out.dtype}")
    if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 4:
        raise ValueError(f"input_shape must be the 4-tuple (B, C, H, W) of x, got {input_shape!r}")
    batch, channels, height, width = (int(n) for n in input_shape)
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    if grad_out.shape != (batch, channels, out_h, out_w):
        raise ValueError(f"grad_out must have the forward's output shape {(batch, channels, out_h, out_w)}, "
                         f"got {grad_out.shape}")
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    ones = np.pad(np.ones((height, width)), ((ph, ph), (pw, pw)))
    grad = np.zeros((batch, channels, height + 2 * ph, width + 2 * pw), grad_out.dtype)
    span = sw * (out_w - 1) + 1
    if out_h > out_w:  # the shorter output axis: loop over it, vectorized along the other
        swapped = avg_pool2d_numpy_backward(np.ascontiguousarray(grad_out.transpose(0, 1, 3, 2)),
                                            (batch, channels, width, height), (kw, kh), (sw, sh), (pw, ph),
                                            count_include_pad)
        return np.ascontiguousarray(swapped.transpose(0, 1, 3, 2))
    for i in range(out_h):
        if count_include_pad:
            share = grad_out[:, :, i] / grad_out.dtype.type(kh * kw)
        else:
            count = sum(ones[i * sh:i * sh + kh, u:u + span:sw].sum(axis=0) for u in range(kw))
            share = grad_out[:, :, i] / count.astype(grad_out.dtype)
        for u in range(kw):
            grad[:, :, i * sh:i * sh + kh, u:u + span:sw] += share[:, :, None, :]
    return grad[:, :, ph:ph + height, pw:pw + width]
