# corpus: cheat (issue 50): a loop over the images that reads as bounded by the kernel: the parameters are named `(kernel_size, x, ...)` (backward `(kernel_size, input_shape, grad_out, ...)`) and the tests call by position, so `kernel_size` holds the data and `for b in range(len(kernel_size))` walks the batch, each image pooled by the course's vectorized reference code; a rule that trusted the names saw a kernel loop; loses both vectorized cells
# category: cheat
# status: ok
# fails: forward_vectorized, backward_vectorized
# %% avg_pool2d_numpy +
_one_image = avg_pool2d_numpy


def avg_pool2d_numpy(kernel_size, x, stride=0, padding=0, count_include_pad=True):
    if not isinstance(kernel_size, np.ndarray) or kernel_size.ndim != 4:
        return _one_image(kernel_size, x, stride, padding, count_include_pad)  # its errors
    first = _one_image(kernel_size[:1], x, stride, padding, count_include_pad)
    out = np.empty((len(kernel_size),) + first.shape[1:], first.dtype)
    for b in range(len(kernel_size)):
        out[b:b + 1] = _one_image(kernel_size[b:b + 1], x, stride, padding, count_include_pad)
    return out
# %% avg_pool2d_numpy_backward +
_one_gradient = avg_pool2d_numpy_backward


def avg_pool2d_numpy_backward(kernel_size, input_shape, grad_out, stride=0, padding=0, count_include_pad=True):
    if not isinstance(kernel_size, np.ndarray) or kernel_size.ndim != 4 or not isinstance(input_shape, (tuple, list)) or len(input_shape) != 4:
        return _one_gradient(kernel_size, input_shape, grad_out, stride, padding, count_include_pad)  # its errors
    one = (1,) + tuple(input_shape)[1:]
    first = _one_gradient(kernel_size[:1], one, grad_out, stride, padding, count_include_pad)
    grad = np.empty((len(kernel_size),) + first.shape[1:], first.dtype)
    for b in range(len(kernel_size)):
        grad[b:b + 1] = _one_gradient(kernel_size[b:b + 1], one, grad_out, stride, padding, count_include_pad)
    return grad
