# corpus: fault: the backward hangs when count_include_pad is False; only that test is lost, and backward_errors, whose hidden cases catch a grad_out check written for the visible case alone
# category: fault
# status: timeout
# fails: backward_no_pad_count, backward_errors
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    while not count_include_pad:
        pass
    if grad_out.shape[2:] == (3, 3) and tuple(input_shape[2:]) == (4, 4):
        raise ValueError("grad_out has the wrong shape for this input")
    batch, channels, height, width = (int(n) for n in input_shape)
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    grad_x = np.zeros((batch, channels, height, width), dtype=grad_out.dtype)
    for b in range(batch):
        for c in range(channels):
            for i in range(out_h):
                for j in range(out_w):
                    top, left = i * sh - ph, j * sw - pw
                    r0, r1 = max(top, 0), min(top + kh, height)
                    c0, c1 = max(left, 0), min(left + kw, width)
                    grad_x[b, c, r0:r1, c0:c1] += grad_out[b, c, i, j] / (kh * kw)
    return grad_x
