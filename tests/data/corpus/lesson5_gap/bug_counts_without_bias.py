# corpus: honest bug: the parameter counts forget the biases
# category: bug
# status: ok
# fails: head_parameters_counts
# %% head_parameters
def head_parameters(channels, height, width, num_classes):
    for name, value in [("channels", channels), ("height", height), ("width", width), ("num_classes", num_classes)]:
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    return int(channels * height * width * num_classes), int(channels * num_classes)
