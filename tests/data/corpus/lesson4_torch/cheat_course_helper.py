# corpus: cheat: PyTorch's pooling reached through the course's own helper course.network.build, asked by a Layer whose operation is the string "avg_pool" (no name with pool in it)
# category: cheat
# status: ok
# passes: predict_max_backward, predict_avg_backward
# %% avg_pool2d_function +
from course.network import Layer, build


def _net(x, kernel_size, stride, padding, count_include_pad):
    spec = Layer("avg_" + "pool", (kernel_size,), {"stride": stride, "padding": padding, "count_include_pad": count_include_pad})
    return build([spec], tuple(x.shape), dtype=x.dtype)


class AvgPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, count_include_pad):
        output_size(tuple(x.shape[2:]), kernel_size, stride, padding)
        ctx.save_for_backward(x)
        ctx.args = (kernel_size, stride, padding, count_include_pad)
        return _net(x, *ctx.args)(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            point = x.detach().requires_grad_(True)
            out = _net(point, *ctx.args)(point)
            (grad,) = torch.autograd.grad(out, point, grad_out, create_graph=True)
        return grad, None, None, None, None
