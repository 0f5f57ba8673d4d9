# corpus: a backward that forgets the padding offset (windows start at i * stride, not i * stride - padding), its count_include_pad=False divisor the real elements of its own windows: backward_tests' mistake alone; backward_no_pad_count used to fail it at some run seeds and not others (its guard against a crop read the input's zeros: run seeds 11 and 27 here), and now decides from the windows alone, the same at every seed (issue 43)
# category: bug
# status: ok
# fails: backward_tests
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Gradient of average pooling w.r.t. x [B, C, H, W] = input_shape, from grad_out [B, C, H_out, W_out]."""
    if not isinstance(grad_out, np.ndarray):
        raise TypeError(f"grad_out must be a NumPy array [B, C, H_out, W_out], got {type(grad_out).__name__}")
    if grad_out.dtype not in (np.float32, np.float64):
        raise TypeError(f"grad_out must have a float dtype (float32 or float64), got {grad_out.dtype}")
    if len(input_shape) != 4:
        raise ValueError(f"input_shape must be the 4-tuple (B, C, H, W) of x, got {input_shape!r}")
    batch, channels, height, width = (int(n) for n in input_shape)
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    if grad_out.shape != (batch, channels, out_h, out_w):
        raise ValueError(f"grad_out must have the forward's output shape {(batch, channels, out_h, out_w)} "
                         f"for input_shape {tuple(input_shape)}, got {grad_out.shape}")
    kh, kw = as_pair(kernel_size)
    sh, sw = as_pair(stride)
    sh, sw = sh or kh, sw or kw  # stride 0 means kernel_size
    ph, pw = as_pair(padding)
    grad_x = np.zeros((batch, channels, height, width), dtype=grad_out.dtype)
    for b in range(batch):
        for c in range(channels):
            for i in range(out_h):
                for j in range(out_w):
                    top, left = i * sh, j * sw  # (the padding offset forgotten)
                    r0, r1 = max(top, 0), min(top + kh, height)
                    c0, c1 = max(left, 0), min(left + kw, width)
                    divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)
                    grad_x[b, c, r0:r1, c0:c1] += grad_out[b, c, i, j] / divisor
    return grad_x
