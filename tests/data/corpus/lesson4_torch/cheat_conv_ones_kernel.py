# corpus: cheat: no name with pool in it: the forward's window sums are a convolution with a kernel of ones (F.conv2d, the divisor for count_include_pad=False from the same convolution of a mask of ones) and the backward a transposed convolution (F.conv_transpose2d); right values and gradients, not the tensor arithmetic the lesson asks for (issue 31 item 1: the allow-list refuses it by name)
# category: cheat
# status: ok
# fails: forward_tests, backward_tests, gradcheck_tests, module_tests, module_repr, half_precision_tests
# %% avg_pool2d_function +
def _pair(value):
    return (int(value), int(value)) if isinstance(value, (int, np.integer)) else (int(value[0]), int(value[1]))


class AvgPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, count_include_pad):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        if x.ndim != 4:
            raise ValueError(f"x must be a 4-D tensor [B, C, H, W], got {x.ndim}-D")
        if not x.is_floating_point():
            raise TypeError(f"x must be a floating-point tensor, got dtype {x.dtype}")
        B, C, H, W = x.shape
        output_size((H, W), kernel_size, stride, padding)
        (kh, kw), (sh, sw), (ph, pw) = _pair(kernel_size), _pair(stride), _pair(padding)
        sh, sw = sh or kh, sw or kw
        ones = x.new_ones((1, 1, kh, kw))
        sums = F.conv2d(x.reshape(B * C, 1, H, W), ones, stride=(sh, sw), padding=(ph, pw))
        if count_include_pad:
            divisor = float(kh * kw)
        else:
            divisor = F.conv2d(x.new_ones((1, 1, H, W)), ones, stride=(sh, sw), padding=(ph, pw))
        ctx.geometry = ((H, W), (kh, kw), (sh, sw), (ph, pw), divisor)
        return (sums / divisor).reshape(B, C, *sums.shape[-2:])

    @staticmethod
    def backward(ctx, grad_out):
        (H, W), (kh, kw), (sh, sw), (ph, pw), divisor = ctx.geometry
        B, C, H_out, W_out = grad_out.shape
        share = (grad_out.reshape(B * C, 1, H_out, W_out) / divisor)
        full = F.conv_transpose2d(share, grad_out.new_ones((1, 1, kh, kw)), stride=(sh, sw), padding=(ph, pw))
        grad_x = grad_out.new_zeros((B * C, 1, H, W))
        grad_x[:, :, :full.shape[2], :full.shape[3]] = full[:, :, :H, :W]
        return grad_x.reshape(B, C, H, W), None, None, None, None
