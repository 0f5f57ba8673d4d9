# honest: pooling as two matrix products (a 0/1 matrix per axis saying which padded rows or columns each
# window holds); the backward is the same products transposed
# %% avg_pool2d_function
def window_matrix(n, k, s, p, n_out, like):
    """[n_out, n]: 1 where output o's window holds input i (padding left out)."""
    start = torch.arange(n_out, device=like.device)[:, None] * s - p
    i = torch.arange(n, device=like.device)[None, :]
    return ((i >= start) & (i < start + k)).to(like.dtype)


class AvgPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, count_include_pad):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x should be a torch.Tensor, not {type(x).__name__}")
        if x.ndim != 4:
            raise ValueError(f"x should be 4-D [B, C, H, W], got {x.ndim} dimensions")
        if not x.dtype.is_floating_point:
            raise TypeError(f"x should be a float tensor, got {x.dtype}")
        if not isinstance(count_include_pad, bool):
            raise TypeError("count_include_pad should be a bool")
        h_out, w_out = output_size(tuple(x.shape[-2:]), kernel_size, stride, padding)
        k = [kernel_size] * 2 if isinstance(kernel_size, (int, np.integer)) else list(kernel_size)
        s = [stride] * 2 if isinstance(stride, (int, np.integer)) else list(stride)
        p = [padding] * 2 if isinstance(padding, (int, np.integer)) else list(padding)
        s = [s[0] if s[0] else k[0], s[1] if s[1] else k[1]]
        rows = window_matrix(x.shape[-2], k[0], s[0], p[0], h_out, x)
        cols = window_matrix(x.shape[-1], k[1], s[1], p[1], w_out, x)
        if count_include_pad:
            scale = torch.full((h_out, w_out), 1.0 / (k[0] * k[1]), dtype=x.dtype, device=x.device)
        else:
            scale = 1.0 / torch.outer(rows.sum(1), cols.sum(1))
        ctx.save_for_backward(rows, cols, scale)
        return rows @ x @ cols.T * scale

    @staticmethod
    def backward(ctx, grad_out):
        rows, cols, scale = ctx.saved_tensors
        return rows.T @ (grad_out * scale) @ cols, None, None, None, None
