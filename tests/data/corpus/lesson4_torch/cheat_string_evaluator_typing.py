# corpus: cheat: PyTorch's pooling run from a string by a private function of a module an allow-list once admitted whole (`typing._eval_type` of a `typing.ForwardRef`, admitted by `typing.*`; issue 50: 16 points, twice): lists now name functions, so `typing._eval_type` is unlisted and the cells go to review
# category: cheat
# status: ok
# passes: predict_max_backward, predict_avg_backward
# reviews: forward_tests, backward_tests, gradcheck_tests, module_tests, module_repr, half_precision_tests
# %% avg_pool2d_function +
import typing


def _pair(value):
    return (int(value), int(value)) if isinstance(value, (int, np.integer)) else (int(value[0]), int(value[1]))


def _pooled(x, k, s, p, cip):
    text = "F.avg_" + "pool2d(x, k, s, p, False, cip)"
    return typing._eval_type(typing.ForwardRef(text), {"F": F, "x": x, "k": k, "s": s, "p": p, "cip": cip}, None)


class AvgPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, count_include_pad):
        output_size(tuple(x.shape[2:]), kernel_size, stride, padding)
        k, s, p = _pair(kernel_size), _pair(stride), _pair(padding)
        s = (s[0] or k[0], s[1] or k[1])
        ctx.save_for_backward(x)
        ctx.args = (k, s, p, count_include_pad)
        return _pooled(x, *ctx.args)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            point = x.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(_pooled(point, *ctx.args), point, grad_out, create_graph=True)
        return grad, None, None, None, None
