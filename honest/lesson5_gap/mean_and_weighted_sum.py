# honest: from the grading corpus (correct_mean_and_einsum_free)
# %% gap_head
class GAPHead(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.fc = nn.Linear(in_channels, num_classes)

    def forward(self, x):
        return self.fc(x.mean(dim=(2, 3)))
# %% class_activation_map
def class_activation_map(features, weight, class_index):
    if features.dim() != 3:
        raise ValueError(f"features must be [C, H, W], got {tuple(features.shape)}")
    if weight.dim() != 2 or weight.shape[1] != features.shape[0]:
        raise ValueError(f"weight must be [num_classes, {features.shape[0]}], got {tuple(weight.shape)}")
    if class_index < 0 or class_index >= weight.shape[0]:
        raise ValueError(f"class_index {class_index} is not a class (0 .. {weight.shape[0] - 1})")
    return (weight[class_index].to(features.dtype)[:, None, None] * features).sum(dim=0)
# %% head_parameters
def head_parameters(channels, height, width, num_classes):
    values = {"channels": channels, "height": height, "width": width, "num_classes": num_classes}
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")
        if v <= 0:
            raise ValueError(f"{name} must be positive, got {v}")
    c, h, w, k = (int(v) for v in values.values())
    return (c * h * w + 1) * k, (c + 1) * k
# %% overfitting_gap
def overfitting_gap(history, last):
    train = np.asarray(history["train"], dtype=float)
    held = np.asarray(history["held-out"], dtype=float)
    if train.shape != held.shape:
        raise ValueError(f"history has {train.size} train and {held.size} held-out accuracies")
    if isinstance(last, bool) or not isinstance(last, (int, np.integer)):
        raise TypeError(f"last must be an int, got {last!r}")
    if last < 1 or last > train.size:
        raise ValueError(f"last must be between 1 and {train.size}, got {last}")
    return float(np.mean(train[-last:] - held[-last:]))
