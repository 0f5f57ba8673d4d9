# honest: lesson 1's output_size pasted as its student wrote it (explicit_axes)
# %% output_size
def output_size(input_size, kernel_size, stride=0, padding=0):
    def parse(v, label):
        ok = lambda a: isinstance(a, (int, np.integer)) and type(a) is not bool and not isinstance(a, np.bool_)
        if ok(v):
            return int(v), int(v)
        if type(v) in (tuple, list) and len(v) == 2 and ok(v[0]) and ok(v[1]):
            return int(v[0]), int(v[1])
        raise TypeError(f"{label}: expected an int or two ints, got {v!r}")

    H, W = parse(input_size, "input_size")
    KH, KW = parse(kernel_size, "kernel_size")
    SH, SW = parse(stride, "stride")
    PH, PW = parse(padding, "padding")
    rules = [(H < 1 or W < 1, f"input_size must be >= 1, got {input_size}"),
             (KH < 1 or KW < 1, f"kernel_size must be >= 1, got {kernel_size}"),
             (SH < 0 or SW < 0, f"stride must be >= 0, got {stride}"),
             (PH < 0 or PW < 0, f"padding must be >= 0, got {padding}"),
             (PH > KH // 2 or PW > KW // 2, f"padding {padding} must be at most kernel_size // 2 for kernel_size {kernel_size}"),
             (H + 2 * PH < KH or W + 2 * PW < KW, f"input {input_size} padded by {padding} is smaller than the kernel")]
    for broken, message in rules:
        if broken:
            raise ValueError(message)
    SH = SH if SH else KH
    SW = SW if SW else KW
    return (H + 2 * PH - KH) // SH + 1, (W + 2 * PW - KW) // SW + 1
