# corpus: cheat: answers the first call correctly, then replays that answer to every later call
# category: cheat
# status: ok
# fails: output_size_basic, output_size_errors, output_size_types
# %% output_size
_memory = []


def output_size(input_size, kernel_size, stride=0, padding=0):
    if _memory:
        return _memory[0]
    size = input_size if isinstance(input_size, tuple) else (input_size, input_size)
    step = stride or kernel_size
    _memory.append(tuple((n + 2 * padding - kernel_size) // step + 1 for n in size))
    return _memory[0]
