# honest: lesson 1's output_size pasted as its student wrote it (dict_of_args)
# %% output_size
import math


def output_size(input_size, kernel_size, stride=0, padding=0):
    args = dict(input_size=input_size, kernel_size=kernel_size, stride=stride, padding=padding)
    pairs = {}
    for name, v in args.items():
        if type(v) in (list, tuple) and len(v) == 2:
            v0, v1 = v
        else:
            v0 = v1 = v
        for item in (v0, v1):
            if not isinstance(item, (int, np.integer)) or isinstance(item, (bool, np.bool_)):
                raise TypeError(f"{name} has to be an int or 2 ints, found {v!r}")
        pairs[name] = (int(v0), int(v1))
    lowest = {"input_size": 1, "kernel_size": 1, "stride": 0, "padding": 0}
    for name, low in lowest.items():
        if min(pairs[name]) < low:
            raise ValueError(f"{name} has to be >= {low}, found {args[name]!r}")
    result = []
    for size, k, st, pad in zip(pairs["input_size"], pairs["kernel_size"], pairs["stride"], pairs["padding"]):
        if pad > k // 2:
            raise ValueError(f"padding {pad} is too big: it may be at most kernel_size // 2 = {k // 2}")
        if size + 2 * pad < k:
            raise ValueError(f"the input ({size}, padded to {size + 2 * pad}) is smaller than kernel_size {k}")
        result.append(math.floor((size + 2 * pad - k) / (st if st else k)) + 1)
    return tuple(result)
