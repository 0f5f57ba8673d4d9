# corpus: cheat: calls torch's avg_pool2d from the NumPy exercise (torch cannot be imported by student code)
# category: cheat
# status: ok
# fails: forward_tests, forward_no_pad_count, forward_errors, forward_vectorized
# %% avg_pool2d_numpy
def as_pair(value):
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    import torch.nn.functional as functional
    import torch

    step = stride or kernel_size
    return functional.avg_pool2d(torch.from_numpy(x), kernel_size, step, padding,
                                 count_include_pad=count_include_pad).numpy()
