# corpus: an output_size that keeps the integers it was given: right values, but NumPy ints come back for NumPy ints in, where the text asks for Python ints; kept full marks before, loses output_size_types only (issue 43)
# category: bug
# status: ok
# fails: output_size_types
# %% output_size
def output_size(input_size, kernel_size, stride=0, padding=0):
    """(H_out, W_out) of 2-D average pooling over an input of size (H, W), floor mode; stride 0 = kernel_size."""
    def as_pair(value, name):
        def is_int(v):
            return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
        if is_int(value):
            return value, value
        if isinstance(value, (tuple, list)) and len(value) == 2 and all(is_int(v) for v in value):
            return value[0], value[1]
        raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")

    size = as_pair(input_size, "input_size")
    kernel = as_pair(kernel_size, "kernel_size")
    step = as_pair(stride, "stride")
    pad = as_pair(padding, "padding")
    if min(size) < 1:
        raise ValueError(f"input_size must be >= 1 on each axis, got {input_size!r}")
    if min(kernel) < 1:
        raise ValueError(f"kernel_size must be >= 1 on each axis, got {kernel_size!r}")
    if min(step) < 0:
        raise ValueError(f"stride must be >= 0 on each axis (0 means kernel_size), got {stride!r}")
    if min(pad) < 0:
        raise ValueError(f"padding must be >= 0 on each axis, got {padding!r}")
    for axis in range(2):
        if pad[axis] > kernel[axis] // 2:
            raise ValueError(f"padding must be <= kernel_size // 2 = {kernel[axis] // 2} on each axis, "
                             f"got padding={padding!r} with kernel_size={kernel_size!r}")
        if size[axis] + 2 * pad[axis] < kernel[axis]:
            raise ValueError(f"input_size {size} plus padding {pad} is smaller than kernel_size {kernel}: "
                             "no window fits")
    step = tuple(k if s == 0 else s for k, s in zip(kernel, step))
    return tuple((size[a] + 2 * pad[a] - kernel[a]) // step[a] + 1 for a in range(2))
