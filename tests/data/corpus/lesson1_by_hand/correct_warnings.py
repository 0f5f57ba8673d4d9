# corpus: correct, but every call warns and prints to stderr (plain nbgrader would score those cells 0), and a cell prints a lone surrogate and terminal escapes (which once removed its autograded notebook and stopped the gradebook phase: now cleaned)
# category: correct
# status: ok
# fails:
# %% output_size
import sys
import warnings


def output_size(input_size, kernel_size, stride=0, padding=0):
    """(H_out, W_out) of 2-D average pooling, floor mode; stride 0 = kernel_size."""
    warnings.warn("output_size: checking the arguments", UserWarning)
    print("debug: output_size called", file=sys.stderr)

    def as_pair(value, name):
        ok = lambda v: isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
        if ok(value):
            return int(value), int(value)
        if isinstance(value, (tuple, list)) and len(value) == 2 and all(ok(v) for v in value):
            return int(value[0]), int(value[1])
        raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")

    size, kernel = as_pair(input_size, "input_size"), as_pair(kernel_size, "kernel_size")
    step, pad = as_pair(stride, "stride"), as_pair(padding, "padding")
    if min(size) < 1:
        raise ValueError("input_size must be >= 1")
    if min(kernel) < 1:
        raise ValueError("kernel_size must be >= 1")
    if min(step) < 0:
        raise ValueError("stride must be >= 0")
    if min(pad) < 0:
        raise ValueError("padding must be >= 0")
    for a in range(2):
        if pad[a] > kernel[a] // 2:
            raise ValueError("padding must be <= kernel_size // 2")
        if size[a] + 2 * pad[a] < kernel[a]:
            raise ValueError("the padded input is smaller than the window")
    step = tuple(k if s == 0 else s for k, s in zip(kernel, step))
    return tuple((size[a] + 2 * pad[a] - kernel[a]) // step[a] + 1 for a in range(2))
# %% worked_example +
print("a lone surrogate: \udcff, a screen wipe: \x1b[2J, a window title: \x1b]0;owned\x07")
