# honest: lesson 1's output_size pasted as its student wrote it (checks_per_axis)
# %% output_size
def output_size(input_size, kernel_size, stride=0, padding=0):
    def two(value, what):
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{what} must be an int or a pair of ints, not a bool")
        if isinstance(value, (int, np.integer)):
            return [int(value), int(value)]
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return [two(value[0], what)[0], two(value[1], what)[0]]
        raise TypeError(f"{what} must be an int or a pair of ints, got {value!r}")

    sizes, kernels = two(input_size, "input_size"), two(kernel_size, "kernel_size")
    strides, pads = two(stride, "stride"), two(padding, "padding")
    answer = []
    for axis in (0, 1):
        n, k, s, p = sizes[axis], kernels[axis], strides[axis], pads[axis]
        if n <= 0:
            raise ValueError(f"input_size must be positive, got {input_size!r}")
        if k <= 0:
            raise ValueError(f"kernel_size must be positive, got {kernel_size!r}")
        if s < 0:
            raise ValueError(f"stride must not be negative, got {stride!r}")
        if p < 0:
            raise ValueError(f"padding must not be negative, got {padding!r}")
        if 2 * p > k:
            raise ValueError(f"padding {p} is more than half of kernel_size {k}")
        if n + 2 * p < k:
            raise ValueError(f"input of {n} (with padding {n + 2 * p}) is smaller than the kernel {k}")
        if s == 0:
            s = k
        answer.append((n + 2 * p - k) // s + 1)
    return tuple(answer)
