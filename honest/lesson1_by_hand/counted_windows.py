# honest: windows counted by sliding them (from the grading corpus: correct_other_algorithm)
# %% output_size
def _pair(value, name):
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: a bool is not a size")
    if isinstance(value, (int, np.integer)):
        return [int(value)] * 2
    if type(value) in (tuple, list) and len(value) == 2:
        return [_pair(v, name)[0] for v in value]
    raise TypeError(f"{name} should be an int or two ints, not {value!r}")


def output_size(input_size, kernel_size, stride=0, padding=0):
    sizes, kernels = _pair(input_size, "input_size"), _pair(kernel_size, "kernel_size")
    strides, pads = _pair(stride, "stride"), _pair(padding, "padding")
    result = []
    for n, k, s, p in zip(sizes, kernels, strides, pads):
        if n < 1:
            raise ValueError(f"input_size {n} is not positive")
        if k < 1:
            raise ValueError(f"kernel_size {k} must be at least 1")
        if s < 0:
            raise ValueError(f"stride {s} must not be negative")
        if p < 0 or p > k // 2:
            raise ValueError(f"padding {p} must be between 0 and kernel_size // 2 = {k // 2}")
        if n + 2 * p < k:
            raise ValueError(f"input of size {n} (padded {n + 2 * p}) is smaller than kernel_size {k}")
        step, count, start = s or k, 0, 0
        while start + k <= n + 2 * p:
            count, start = count + 1, start + step
        result.append(count)
    return tuple(result)
