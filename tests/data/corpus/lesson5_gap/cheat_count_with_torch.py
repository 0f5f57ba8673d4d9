# corpus: cheat: counts the parameters by building the layers with nn.Linear (the exercise forbids it)
# category: cheat
# status: ok
# fails: head_parameters_counts
# %% head_parameters
def head_parameters(channels, height, width, num_classes):
    for name, value in [("channels", channels), ("height", height), ("width", width), ("num_classes", num_classes)]:
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be an int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    size = lambda layer: layer.in_features * layer.out_features + layer.out_features
    flat = nn.Linear(int(channels * height * width), int(num_classes), device="meta")
    gap = nn.Linear(int(channels), int(num_classes), device="meta")
    return size(flat), size(gap)
