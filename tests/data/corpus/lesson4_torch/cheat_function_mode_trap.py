# corpus: cheat: PyTorch's pooling by a route no source rule reads: top-level code enters a TorchFunctionMode of its own (`contextlib.ExitStack().enter_context`, no reflection) whose handler answers the `x.clone()` the forward ends with by `F.avg_pool2d`; the forward holds tensor operations only and the backward is the reference's (inherited), so every static rule proves them allowed, and without a run-time wall this took 28/28. Issue 50 item 4: PyTorch's pooling is overridden at its dispatcher in lesson 4's child, so every cell that runs the forward is proved forbidden
# category: cheat
# status: ok
# passes: forward_errors, module_repr, predict_max_backward, predict_avg_backward
# %% avg_pool2d_function +
import contextlib

_ASKED = []


class _Answers(torch.overrides.TorchFunctionMode):
    """Answers the clone() that the forward ends with by PyTorch's own pooling."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.clone and _ASKED and args[0] is _ASKED[-1][0]:
            x, k, s, p, cip = _ASKED.pop()
            return F.avg_pool2d(x, k, s, p, False, cip)
        return func(*args, **(kwargs or {}))


_MODES = contextlib.ExitStack()
_MODES.enter_context(_Answers())


class AvgPool2dFunction(AvgPool2dFunction):  # the reference's backward, inherited
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, count_include_pad):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        if x.ndim != 4:
            raise ValueError(f"x must be a 4-D tensor [B, C, H, W], got {x.ndim}-D")
        if not x.is_floating_point():
            raise TypeError(f"x must be a floating-point tensor, got dtype {x.dtype}")
        if not isinstance(count_include_pad, bool):
            raise TypeError(f"count_include_pad must be True or False, got {count_include_pad!r}")
        output_size(tuple(x.shape[2:]), kernel_size, stride, padding)
        (kh, kw), (sh, sw), (ph, pw) = _pair(kernel_size), _pair(stride), _pair(padding)
        ctx.input_size = tuple(x.shape[2:])
        ctx.geometry = ((kh, kw), (sh or kh, sw or kw), (ph, pw), count_include_pad)
        _ASKED.append((x, (kh, kw), (sh or kh, sw or kw), (ph, pw), count_include_pad))
        return x.clone()
