# honest: the windows as Tensor.unfold views of the padded input; backward adds each share back with one strided
# slice per kernel offset
# %% avg_pool2d_function
def two_ints(v):
    return (int(v), int(v)) if isinstance(v, (int, np.integer)) else (int(v[0]), int(v[1]))


def check_input(x):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch tensor, got {type(x).__name__}")
    if x.dim() != 4:
        raise ValueError(f"x must have 4 dimensions [B, C, H, W], got {x.dim()}")
    if not torch.is_floating_point(x):
        raise TypeError(f"x must hold floats (a float tensor), got {x.dtype}")


class AvgPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, count_include_pad):
        check_input(x)
        if count_include_pad not in (True, False):
            raise TypeError(f"count_include_pad must be a bool, got {count_include_pad!r}")
        H, W = x.shape[-2:]
        rows, cols = output_size((H, W), kernel_size, stride, padding)
        kh, kw = two_ints(kernel_size)
        sh, sw = two_ints(stride)
        sh, sw = (sh if sh > 0 else kh), (sw if sw > 0 else kw)
        ph, pw = two_ints(padding)
        padded = torch.nn.functional.pad(x, (pw, pw, ph, ph))
        sums = padded.unfold(2, kh, sh).unfold(3, kw, sw).sum(dim=(-2, -1))
        if count_include_pad:
            counts = torch.full((rows, cols), float(kh * kw), dtype=x.dtype, device=x.device)
        else:
            real = torch.nn.functional.pad(torch.ones((1, 1, H, W), dtype=x.dtype, device=x.device), (pw, pw, ph, ph))
            counts = real.unfold(2, kh, sh).unfold(3, kw, sw).sum(dim=(-2, -1))[0, 0]
        ctx.save_for_backward(counts)
        ctx.sizes = (H, W, kh, kw, sh, sw, ph, pw)
        return sums / counts

    @staticmethod
    def backward(ctx, grad_out):
        (counts,) = ctx.saved_tensors
        H, W, kh, kw, sh, sw, ph, pw = ctx.sizes
        share = grad_out / counts
        rows, cols = share.shape[-2:]
        grad = grad_out.new_zeros(grad_out.shape[:2] + (H + 2 * ph, W + 2 * pw))
        for a in range(kh):
            for b in range(kw):
                grad[:, :, a:a + sh * (rows - 1) + 1:sh, b:b + sw * (cols - 1) + 1:sw] += share
        return grad[:, :, ph:ph + H, pw:pw + W], None, None, None, None
# %% half_precision
def avg_pool2d_half(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not (isinstance(x, torch.Tensor) and x.dtype == torch.float16):
        return avg_pool2d_torch(x, kernel_size, stride, padding, count_include_pad)
    wide = avg_pool2d_torch(x.float(), kernel_size, stride, padding, count_include_pad)
    return wide.half()
