# honest: the head written with torch.nn.functional, counts by hand, a loop for the gap, the CAM with tensordot
# %% gap_head
class GAPHead(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.fc = nn.Linear(in_channels, num_classes)

    def forward(self, features):
        pooled = F.adaptive_avg_pool2d(features, output_size=1)
        return self.fc(pooled.view(pooled.shape[0], -1))
# %% head_parameters
def head_parameters(channels, height, width, num_classes):
    args = [channels, height, width, num_classes]
    names = ["channels", "height", "width", "num_classes"]
    for value, name in zip(args, names):
        if type(value) is bool or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name}: expected an int, got {value!r}")
        if value < 1:
            raise ValueError(f"{name}: must be at least 1, got {value}")
    features = int(channels) * int(height) * int(width)
    weights_flat = features * int(num_classes)
    weights_gap = int(channels) * int(num_classes)
    biases = int(num_classes)
    return weights_flat + biases, weights_gap + biases
# %% overfitting_gap
def overfitting_gap(history, last):
    train, held_out = history["train"], history["held-out"]
    if len(train) != len(held_out):
        raise ValueError("history: 'train' and 'held-out' must have the same length")
    if not isinstance(last, (int, np.integer)) or isinstance(last, (bool, np.bool_)):
        raise TypeError(f"last: expected an int, got {type(last).__name__}")
    if not 0 < last <= len(train):
        raise ValueError(f"last: must be in 1..{len(train)}, got {last}")
    total = 0.0
    for epoch in range(len(train) - last, len(train)):
        total += train[epoch] - held_out[epoch]
    return total / last
# %% class_activation_map
def class_activation_map(features, weight, class_index):
    C = features.shape[0]
    if len(features.shape) != 3:
        raise ValueError(f"features: expected [C, H, W], got {tuple(features.shape)}")
    if len(weight.shape) != 2 or weight.shape[1] != C:
        raise ValueError(f"weight: expected [num_classes, {C}], got {tuple(weight.shape)}")
    if class_index < 0 or class_index >= weight.shape[0]:
        raise ValueError(f"class_index: {class_index} is out of range 0..{weight.shape[0] - 1}")
    w = weight[class_index].to(features.dtype)
    return torch.tensordot(w, features, dims=1)
