# honest: the optional cells left as the release gives them
# %% lesson2_loops
def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Your lesson 2 forward (optional): x [B, C, H, W] -> [B, C, H_out, W_out] with Python loops."""
    # YOUR CODE HERE
    raise NotImplementedError("Write your solution here, then run the tests below.")


def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Your lesson 2 backward (optional): gradient w.r.t. x [B, C, H, W] from grad_out, with loops."""
    # YOUR CODE HERE
    raise NotImplementedError("Write your solution here, then run the tests below.")
# %% sat_optional
def avg_pool2d_sat(x, kernel_size, stride=0, padding=0):
    """Average pooling (count_include_pad=True) of x [B, C, H, W] from a summed-area table (optional)."""
    # YOUR CODE HERE
    raise NotImplementedError("Write your solution here, then run the tests below.")
