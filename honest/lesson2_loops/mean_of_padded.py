# honest: the backward spread into a zero-padded array, then cut
# %% my_cases
my_cases = [((1, 2, 7, 7), "float32", 3, 2, 1, False), ((1, 1, 8, 8), "float64", 4, 0, 0, True),
            ((3, 1, 5, 6), "float32", 2, 1, 1, True)]
# %% avg_pool2d_loops_backward
def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Spread each output's gradient over its window in a padded array, then cut the padding off."""
    if type(grad_out) is not np.ndarray:
        raise TypeError("grad_out: expected a numpy array")
    if grad_out.dtype.kind != "f" or grad_out.itemsize < 4:
        raise TypeError("grad_out: expected float32 or float64")
    if len(input_shape) != 4:
        raise ValueError("input_shape: expected 4 numbers")
    shape = tuple(int(v) for v in input_shape)
    kernel = np.broadcast_to(kernel_size, 2).astype(int)
    step = np.broadcast_to(stride, 2).astype(int)
    step = np.where(step == 0, kernel, step)
    pad = np.broadcast_to(padding, 2).astype(int)
    h_out, w_out = output_size(shape[2:], kernel_size, stride, padding)
    if grad_out.shape != shape[:2] + (h_out, w_out):
        raise ValueError("grad_out: not the forward's output shape")
    ones = np.pad(np.ones(shape[2:]), [(pad[0], pad[0]), (pad[1], pad[1])])
    big = np.zeros(shape[:2] + (shape[2] + 2 * pad[0], shape[3] + 2 * pad[1]), dtype=grad_out.dtype)
    for r in range(h_out):
        for c in range(w_out):
            top, left = r * step[0], c * step[1]
            n = kernel[0] * kernel[1] if count_include_pad else ones[top:top + kernel[0], left:left + kernel[1]].sum()
            big[:, :, top:top + kernel[0], left:left + kernel[1]] += (grad_out[:, :, r, c] / n)[:, :, None, None]
    return big[:, :, pad[0]:pad[0] + shape[2], pad[1]:pad[1] + shape[3]]
