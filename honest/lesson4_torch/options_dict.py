# honest: the layer's options in a dict (from the grading corpus: correct_layer_options_dict)
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
# %% half_precision
def avg_pool2d_half(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    half = torch.is_tensor(x) and x.dtype is torch.float16
    y = avg_pool2d_torch(x.to(torch.float32) if half else x, kernel_size, stride, padding, count_include_pad)
    return y.to(torch.float16) if half else y
