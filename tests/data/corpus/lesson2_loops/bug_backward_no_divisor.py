# corpus: honest bug: the backward hands the whole upstream gradient to every input of the window (and checks no grad_out shape: backward_errors)
# category: bug
# status: ok
# fails: backward_tests, backward_no_pad_count, backward_errors
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
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
                    grad_x[b, c, max(top, 0):top + kh, max(left, 0):left + kw] += grad_out[b, c, i, j]
    return grad_x
