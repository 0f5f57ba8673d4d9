# corpus: the backward always divides by kh·kw (count_include_pad read by the forward only): wrong wherever a window hangs over the padding with count_include_pad=False; it cost gradcheck_tests too before, which now runs without padding and with count_include_pad=True, so it costs backward_tests alone (issue 53 item 12)
# category: bug
# status: ok
# fails: backward_tests
# %% avg_pool2d_function
class AvgPool2dFunction(torch.autograd.Function):
    """2-D average pooling with a hand-written backward: x [B, C, H, W] -> out [B, C, H_out, W_out]."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, count_include_pad):
        ### BEGIN SOLUTION
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        if x.ndim != 4:
            raise ValueError(f"x must be a 4-D tensor [B, C, H, W], got {x.ndim}-D shape {tuple(x.shape)}")
        if not x.is_floating_point():
            raise TypeError(f"x must be a floating-point tensor (float16/32/64), got dtype {x.dtype}")
        if not isinstance(count_include_pad, bool):
            raise TypeError(f"count_include_pad must be True or False, got {count_include_pad!r}")
        B, C, H, W = x.shape
        H_out, W_out = output_size((H, W), kernel_size, stride, padding)  # checks every argument rule
        (kh, kw), (sh, sw), (ph, pw) = _pair(kernel_size), _pair(stride), _pair(padding)
        sh, sw = sh or kh, sw or kw
        out = x.new_empty((B, C, H_out, W_out))
        planes, out_planes = x.reshape(B * C, 1, H, W), out.view(B * C, 1, H_out, W_out)
        step = _planes_per_chunk(x, H_out * W)
        for first in range(0, B * C, step):  # a chunk of feature maps at a time, so it stays in cache
            rows = window_sum(planes[first:first + step], 2, kh, sh, ph, H_out)        # [n, 1, H_out, W]
            window_sum(rows, 3, kw, sw, pw, W_out, out=out_planes[first:first + step])  # window sums
        out /= divisor(H, W, (kh, kw), (sh, sw), (ph, pw), (H_out, W_out), count_include_pad, out)
        # Backward needs only numbers, not x's values: plain attributes, no save_for_backward.
        ctx.input_size = (H, W)
        ctx.geometry = ((kh, kw), (sh, sw), (ph, pw), count_include_pad)
        return out
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_out):
        ### BEGIN SOLUTION
        H, W = ctx.input_size
        (kh, kw), (sh, sw), (ph, pw), count_include_pad = ctx.geometry
        B, C, H_out, W_out = grad_out.shape
        share = grad_out / divisor(H, W, (kh, kw), (sh, sw), (ph, pw), (H_out, W_out), True,
                                   grad_out)
        share = share.reshape(B * C, 1, H_out, W_out)
        grad_x = grad_out.new_empty((B, C, H, W))
        grad_planes = grad_x.view(B * C, 1, H, W)
        step = _planes_per_chunk(grad_out, H_out * W)
        for first in range(0, B * C, step):
            cols = window_scatter(share[first:first + step], 3, kw, sw, pw, W)          # [n, 1, H_out, W]
            window_scatter(cols, 2, kh, sh, ph, H, out=grad_planes[first:first + step])  # [n, 1, H, W]
        return grad_x, None, None, None, None   # no gradient for the four non-tensor arguments
        ### END SOLUTION


# Helper functions of your own (optional) go here.
### BEGIN SOLUTION (optional)
def _pair(value):
    """(a, b) from an int or a pair (output_size has already checked the value)."""
    return (int(value), int(value)) if isinstance(value, (int, np.integer)) else (int(value[0]), int(value[1]))


def _planes_per_chunk(t, plane_elements, chunk_bytes=1 << 19):
    """How many [H, W] feature maps to process at once: about 512 KB of intermediate on a CPU (it stays
    in cache instead of streaming through memory); all of them at once on a GPU (fewer kernel launches)."""
    if t.device.type != "cpu":
        return max(1, t.shape[0] * t.shape[1])
    return max(1, chunk_bytes // (plane_elements * t.element_size()))


def _along(dim, start, stop, step=None):
    """An index that slices axis ``dim`` of a 4-D tensor and keeps the others whole."""
    index = [slice(None)] * 4
    index[dim] = slice(start, stop, step)
    return tuple(index)


def _taps(n_in, k, s, p, n_out):
    """For each kernel offset along one axis, (first window, end window, first input index) of the
    windows whose tap at that offset lands on a real input element (padding taps are just skipped)."""
    taps = []
    for offset in range(k):
        first = max(0, -((offset - p) // s))                # o * s - p + offset >= 0
        end = min(n_out, (n_in - 1 - offset + p) // s + 1)  # o * s - p + offset <= n_in - 1
        if end > first:
            taps.append((first, end, first * s - p + offset))
    return taps


def window_sum(x, dim, k, s, p, n_out, out=None):
    """Sum of each window along axis ``dim`` (kernel k, stride s, zero padding p) -> n_out on that axis,
    into ``out`` when given. Shift-and-add over the k offsets with strided slices: a tap that every
    window has starts the sum as a copy (no zero fill), the others add into their windows."""
    views = [(first, end, x[_along(dim, start, start + s * (end - first - 1) + 1, s)])
             for first, end, start in _taps(x.shape[dim], k, s, p, n_out)]
    if out is None:
        shape = list(x.shape)
        shape[dim] = n_out
        out = x.new_empty(shape)
    whole = next((i for i, (first, end, _) in enumerate(views) if first == 0 and end == n_out), None)
    if whole is None:
        out.zero_()
    else:
        out.copy_(views.pop(whole)[2])
    for first, end, view in views:
        out[_along(dim, first, end)] += view
    return out


def window_scatter(t, dim, k, s, p, n_in, out=None):
    """The transpose of window_sum: add each window's value t back onto the k inputs it covers along
    ``dim`` -> n_in on that axis, into ``out`` when given. With s <= k the first s offsets write
    disjoint positions that cover all but a tail, so they are copies (no zero fill); the rest add."""
    n_out = t.shape[dim]
    if out is None:
        shape = list(t.shape)
        shape[dim] = n_in
        out = t.new_empty(shape)
    taps = _taps(n_in, k, s, p, n_out)
    copy_first = s <= k and len(taps) == k
    if copy_first:
        tail = max(0, n_out * s - p)
        if tail < n_in:
            out[_along(dim, tail, n_in)] = 0
    else:
        out.zero_()
    for offset, (first, end, start) in enumerate(taps):
        target = out[_along(dim, start, start + s * (end - first - 1) + 1, s)]
        source = t[_along(dim, first, end)]
        if copy_first and offset < s:
            target.copy_(source)
        else:
            target += source
    return out


def divisor(H, W, kernel, stride, padding, out_size, count_include_pad, like):
    """What each window's sum is divided by: k_h * k_w (a number), or with count_include_pad=False the
    [H_out, W_out] map of real (non-padding) elements per window, a product of one count per axis."""
    if count_include_pad:
        return kernel[0] * kernel[1]
    counts = []
    for n, k, s, p, n_out in zip((H, W), kernel, stride, padding, out_size):
        start = torch.arange(n_out, device=like.device) * s - p
        counts.append((torch.clamp(start + k, max=n) - torch.clamp(start, min=0)).to(like.dtype))
    return counts[0][:, None] * counts[1][None, :]
### END SOLUTION
