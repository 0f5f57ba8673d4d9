# corpus: head_parameters that computes with the integers it was given: right for Python ints, but NumPy ints come back for NumPy ints in, and they wrap around past 2**63; kept full marks before, loses head_parameters_counts only (issue 43)
# category: bug
# status: ok
# fails: head_parameters_counts
# %% head_parameters
def head_parameters(channels, height, width, num_classes):
    """(flatten_head, gap_head): parameter counts of both heads on [B, channels, height, width] features."""
    for name, value in [("channels", channels), ("height", height), ("width", width),
                        ("num_classes", num_classes)]:
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    flatten_head = channels * height * width * num_classes + num_classes
    gap_head = channels * num_classes + num_classes
    return flatten_head, gap_head
