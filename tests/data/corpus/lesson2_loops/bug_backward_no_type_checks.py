# corpus: one contract with lesson 3 (issue 53 item 7): a backward that checks only grad_out's shape, as lesson 2's text once asked; a list, an int or float16 grad_out and an input_shape that is not 4 numbers raise no error naming their argument, so only backward_errors is lost (before issue 53 this kept every point)
# category: bug
# status: ok
# fails: backward_errors
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Gradient of average pooling w.r.t. x [B, C, H, W] = input_shape, from grad_out [B, C, H_out, W_out]."""
    ### BEGIN SOLUTION
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
                    top, left = i * sh - ph, j * sw - pw
                    r0, r1 = max(top, 0), min(top + kh, height)
                    c0, c1 = max(left, 0), min(left + kw, width)
                    divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)
                    grad_x[b, c, r0:r1, c0:c1] += grad_out[b, c, i, j] / divisor
    return grad_x
    ### END SOLUTION
