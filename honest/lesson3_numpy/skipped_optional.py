# honest: the optional cells left as the release gives them
# %% sat_optional
def avg_pool2d_sat(x, kernel_size, stride=0, padding=0):
    """Average pooling (count_include_pad=True) of x [B, C, H, W] from a summed-area table (optional)."""
    # YOUR CODE HERE
    raise NotImplementedError("Write your solution here, then run the tests below.")
