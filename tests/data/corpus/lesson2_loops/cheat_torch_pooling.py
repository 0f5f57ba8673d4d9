# corpus: cheat: calls torch's pooling inside the loops exercise (the child cannot import torch at all)
# category: cheat
# status: ok
# fails: forward_tests, forward_no_pad_count, forward_errors, forward_avoids, backward_tests, backward_no_pad_count, backward_errors, backward_avoids
# reviews: backward_avoids, backward_errors, backward_no_pad_count, backward_tests
# %% avg_pool2d_loops
def as_pair(value):
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    functional = __import__("importlib").import_module("to" + "rch.nn.functional")
    tensor = __import__("to" + "rch").from_numpy(np.ascontiguousarray(x))
    step = stride or kernel_size
    return functional.avg_pool2d(tensor, kernel_size, step, padding, count_include_pad=count_include_pad).numpy()
