# honest: the arguments turned into NumPy arrays, the rules checked on whole arrays
# %% output_size
def output_size(input_size, kernel_size, stride=0, padding=0):
    arrays = {}
    for name, value in [("input_size", input_size), ("kernel_size", kernel_size), ("stride", stride),
                        ("padding", padding)]:
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(items) not in (1, 2) or not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                                               for v in items):
            raise TypeError(f"{name} should be one int or two ints, got {value!r}")
        arrays[name] = np.array(items * (3 - len(items)), dtype=np.int64)
    n, k, s, p = arrays["input_size"], arrays["kernel_size"], arrays["stride"], arrays["padding"]
    if (n < 1).any():
        raise ValueError(f"input_size must be at least 1, got {input_size}")
    if (k < 1).any():
        raise ValueError(f"kernel_size must be at least 1, got {kernel_size}")
    if (s < 0).any():
        raise ValueError(f"stride cannot be negative, got {stride}")
    if (p < 0).any() or (p > k // 2).any():
        raise ValueError(f"padding must lie in 0 .. kernel_size // 2, got padding {padding}, kernel_size {kernel_size}")
    if (n + 2 * p < k).any():
        raise ValueError(f"the padded input {n + 2 * p} is smaller than the kernel {k}")
    s = np.where(s == 0, k, s)
    h, w = (n + 2 * p - k) // s + 1
    return int(h), int(w)
# %% pool_both
def pool_both(image, kernel_size):
    k = (kernel_size, kernel_size) if np.ndim(kernel_size) == 0 else tuple(kernel_size)
    rows, cols = image.shape[0] // k[0], image.shape[1] // k[1]
    avg = np.zeros((rows, cols), np.float32)
    mx = np.zeros((rows, cols), np.float32)
    for r in range(rows):
        for c in range(cols):
            block = image[r * k[0]:(r + 1) * k[0], c * k[1]:(c + 1) * k[1]]
            avg[r, c] = block.mean(dtype=np.float32)
            mx[r, c] = block.max()
    return avg, mx
