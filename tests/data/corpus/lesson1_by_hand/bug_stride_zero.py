# corpus: honest bug: forgets that stride 0 means stride = kernel_size (divides by zero)
# category: bug
# status: ok
# fails: output_size_basic
# %% output_size
def output_size(input_size, kernel_size, stride=0, padding=0):
    def as_pair(value, name):
        is_int = lambda v: isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
        if is_int(value):
            return int(value), int(value)
        if isinstance(value, (tuple, list)) and len(value) == 2 and all(is_int(v) for v in value):
            return int(value[0]), int(value[1])
        raise TypeError(f"{name} must be an int or a pair of ints")

    size, kernel = as_pair(input_size, "input_size"), as_pair(kernel_size, "kernel_size")
    step, pad = as_pair(stride, "stride"), as_pair(padding, "padding")
    if min(size) < 1 or min(kernel) < 1:
        raise ValueError("input_size and kernel_size must be >= 1")
    if min(step) < 0:
        raise ValueError("stride must be >= 0")
    if min(pad) < 0 or any(p > k // 2 for p, k in zip(pad, kernel)):
        raise ValueError("padding must be >= 0 and <= kernel_size // 2")
    if any(n + 2 * p < k for n, p, k in zip(size, pad, kernel)):
        raise ValueError("the input is smaller than the kernel")
    return tuple((n + 2 * p - k) // s + 1 for n, p, k, s in zip(size, pad, kernel, step))
