# honest: lesson 1's output_size pasted as its student wrote it (while_counting)
# %% output_size
def _as_two(value, arg):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer, tuple, list)):
        raise TypeError(f"{arg}: give an int or a pair of ints, not {value!r}")
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise TypeError(f"{arg}: a pair needs exactly 2 ints, got {value!r}")
        return _as_two(value[0], arg)[0], _as_two(value[1], arg)[0]
    return int(value), int(value)


def output_size(input_size, kernel_size, stride=0, padding=0):
    n = _as_two(input_size, "input_size")
    k = _as_two(kernel_size, "kernel_size")
    s = _as_two(stride, "stride")
    p = _as_two(padding, "padding")
    out = []
    for d in range(2):
        if n[d] < 1:
            raise ValueError(f"input_size must be 1 or more, got {input_size}")
        if k[d] < 1:
            raise ValueError(f"kernel_size must be 1 or more, got {kernel_size}")
        if s[d] < 0:
            raise ValueError(f"stride may not be negative (0 means kernel_size), got {stride}")
        if not 0 <= p[d] <= k[d] // 2:
            raise ValueError(f"padding must be from 0 to kernel_size // 2, got padding {padding} and kernel_size {kernel_size}")
        room = n[d] + 2 * p[d]
        if room < k[d]:
            raise ValueError(f"input_size {input_size} with padding {padding} cannot hold one window of {kernel_size}")
        hop = s[d] or k[d]
        windows, end = 1, k[d]
        while end + hop <= room:
            windows, end = windows + 1, end + hop
        out.append(windows)
    return out[0], out[1]
