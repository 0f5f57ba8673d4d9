# corpus: honest bug that forward and backward share: the divisor helper always counts the padding (count_include_pad=False treated as True), so the backward is the true adjoint of its own (wrong) forward: it costs the forward and backward tests, never the gradient check
# category: bug
# status: ok
# fails: forward_tests, backward_tests
# %% avg_pool2d_function +
def divisor(H, W, kernel, stride, padding, out_size, count_include_pad, like):
    """What each window's sum is divided by (the bug: k_h * k_w whatever count_include_pad says)."""
    return kernel[0] * kernel[1]
