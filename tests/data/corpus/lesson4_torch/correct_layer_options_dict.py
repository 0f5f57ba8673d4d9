# corpus: correct: the layer keeps its options in a dict (`self.options = dict(...)`, then `**self.options` and `self.options.items()`) (issue 50: it lost module_tests and module_repr, 4 points, as "a value the grader cannot name")
# category: correct
# status: ok
# fails:
# %% wrappers
def avg_pool2d_torch(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling of x [B, C, H, W] -> [B, C, H_out, W_out] through AvgPool2dFunction (stride 0 = kernel)."""
    return AvgPool2dFunction.apply(x, kernel_size, stride, padding, count_include_pad)


class AvgPool2d(nn.Module):
    def __init__(self, kernel_size, stride=0, padding=0, count_include_pad=True):
        super().__init__()
        self.options = dict(kernel_size=kernel_size, stride=stride, padding=padding,
                            count_include_pad=count_include_pad)

    def forward(self, x):
        return avg_pool2d_torch(x, **self.options)

    def extra_repr(self):
        return ", ".join(f"{k}={v}" for k, v in self.options.items())
