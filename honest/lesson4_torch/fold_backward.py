# honest: forward sums one strided slice of the padded input per kernel offset; backward spreads the shares
# with F.fold (the sum of sliding blocks)
# %% avg_pool2d_function
def _hw(value):
    if isinstance(value, (int, np.integer)):
        return int(value), int(value)
    return int(value[0]), int(value[1])


class AvgPool2dFunction(torch.autograd.Function):
    """x [B, C, H, W] -> the mean of every window, [B, C, H_out, W_out]."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, count_include_pad):
        if not torch.is_tensor(x):
            raise TypeError(f"x: expected a tensor, got {type(x).__name__}")
        if len(x.shape) != 4:
            raise ValueError(f"x: expected 4 dimensions, got shape {tuple(x.shape)}")
        if x.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
            raise TypeError(f"x: expected a float dtype, got {x.dtype}")
        if type(count_include_pad) is not bool:
            raise TypeError("count_include_pad must be True or False")
        n_rows, n_cols = output_size(tuple(x.shape[2:]), kernel_size, stride, padding)
        k, s, p = _hw(kernel_size), list(_hw(stride)), _hw(padding)
        s = (s[0] or k[0], s[1] or k[1])
        big = F.pad(x, (p[1], p[1], p[0], p[0]))
        mask = F.pad(torch.ones_like(x[:1, :1]), (p[1], p[1], p[0], p[0]))
        total = torch.zeros(x.shape[:2] + (n_rows, n_cols), dtype=x.dtype, device=x.device)
        real = torch.zeros((n_rows, n_cols), dtype=x.dtype, device=x.device)
        for i in range(k[0]):
            for j in range(k[1]):
                rows = slice(i, i + s[0] * (n_rows - 1) + 1, s[0])
                cols = slice(j, j + s[1] * (n_cols - 1) + 1, s[1])
                total += big[:, :, rows, cols]
                real += mask[0, 0, rows, cols]
        divisor = real if not count_include_pad else torch.full_like(real, k[0] * k[1])
        ctx.geometry = (tuple(x.shape[2:]), k, s, p)
        ctx.save_for_backward(divisor)
        return total / divisor

    @staticmethod
    def backward(ctx, grad_out):
        (divisor,) = ctx.saved_tensors
        (H, W), k, s, p = ctx.geometry
        B, C, n_rows, n_cols = grad_out.shape
        blocks = (grad_out / divisor).reshape(B * C, 1, n_rows * n_cols).expand(B * C, k[0] * k[1], n_rows * n_cols)
        spread = F.fold(blocks.contiguous(), (H + 2 * p[0], W + 2 * p[1]), k, stride=s)
        return spread.reshape(B, C, H + 2 * p[0], W + 2 * p[1])[:, :, p[0]:p[0] + H, p[1]:p[1] + W], None, None, None, None
