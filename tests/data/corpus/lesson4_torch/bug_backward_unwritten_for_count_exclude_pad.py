# corpus: honest bug, a crash: the backward was written for count_include_pad=True only and raises otherwise; it costs backward_tests alone (gradcheck_tests takes count_include_pad=True only since issue 53 item 12; it cost that cell too before), never the wrappers' (module_tests passes count_include_pad=False through, judged against the student's own Function, which raises the same)
# category: bug
# status: ok
# fails: backward_tests
# %% avg_pool2d_function +
class AvgPool2dFunction(torch.autograd.Function):
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
        B, C, H, W = x.shape
        H_out, W_out = output_size((H, W), kernel_size, stride, padding)
        (kh, kw), (sh, sw), (ph, pw) = _pair(kernel_size), _pair(stride), _pair(padding)
        sh, sw = sh or kh, sw or kw
        planes = x.reshape(B * C, 1, H, W)
        out = window_sum(window_sum(planes, 2, kh, sh, ph, H_out), 3, kw, sw, pw, W_out).reshape(B, C, H_out, W_out)
        out = out / divisor(H, W, (kh, kw), (sh, sw), (ph, pw), (H_out, W_out), count_include_pad, out)
        ctx.input_size = (H, W)
        ctx.geometry = ((kh, kw), (sh, sw), (ph, pw), count_include_pad)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        H, W = ctx.input_size
        (kh, kw), (sh, sw), (ph, pw), count_include_pad = ctx.geometry
        if not count_include_pad:
            raise NotImplementedError("backward for count_include_pad=False")
        B, C, H_out, W_out = grad_out.shape
        share = grad_out / divisor(H, W, (kh, kw), (sh, sw), (ph, pw), (H_out, W_out), count_include_pad, grad_out)
        share = share.reshape(B * C, 1, H_out, W_out)
        cols = window_scatter(share, 3, kw, sw, pw, W)
        grad_x = window_scatter(cols, 2, kh, sh, ph, H).reshape(B, C, H, W)
        return grad_x, None, None, None, None
