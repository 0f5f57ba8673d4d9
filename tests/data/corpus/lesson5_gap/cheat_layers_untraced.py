# corpus: cheat: counts the parameters by building nn.Linear layers reached through names a spelling-based reader could not trace (a loop target called ctx over [torch], a local called self)
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
    for ctx in [torch]:
        flat = ctx.nn.Linear(int(channels * height * width), int(num_classes), device="meta")
    self = torch
    gap = self.nn.Linear(int(channels), int(num_classes), device="meta")
    return (flat.in_features + 1) * flat.out_features, (gap.in_features + 1) * gap.out_features
