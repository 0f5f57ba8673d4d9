# honest: the head as an nn.Sequential inside the module, counts from nn.Linear's own formula, the gap with
# statistics.mean, the CAM by a matrix product of the flattened maps
# %% gap_head
class GAPHead(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten())
        self.fc = nn.Linear(in_features=in_channels, out_features=num_classes)

    def forward(self, x):
        pooled = self.pool(x)
        return self.fc(pooled)
# %% head_parameters
def head_parameters(channels, height, width, num_classes):
    def positive_int(value, label):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{label} needs to be an int, not {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{label} needs to be >= 1, not {value}")
        return int(value)

    c = positive_int(channels, "channels")
    h = positive_int(height, "height")
    w = positive_int(width, "width")
    k = positive_int(num_classes, "num_classes")

    def linear(inputs, outputs):
        return inputs * outputs + outputs

    return linear(c * h * w, k), linear(c, k)
# %% overfitting_gap
import statistics


def overfitting_gap(history, last):
    if len(history["train"]) != len(history["held-out"]):
        raise ValueError("history['train'] and history['held-out'] differ in length")
    epochs = len(history["train"])
    if type(last) is bool or not isinstance(last, (int, np.integer)):
        raise TypeError(f"last should be an int, got {last!r}")
    if last < 1 or last > epochs:
        raise ValueError(f"last should be between 1 and {epochs}, got {last}")
    pairs = list(zip(history["train"], history["held-out"]))[-last:]
    return float(statistics.mean(t - v for t, v in pairs))
# %% class_activation_map
def class_activation_map(features, weight, class_index):
    if features.dim() != 3:
        raise ValueError(f"features should be [C, H, W], got {list(features.shape)}")
    channels, height, width = features.shape
    if weight.dim() != 2 or weight.shape[1] != channels:
        raise ValueError(f"weight should be [num_classes, {channels}], got {list(weight.shape)}")
    if not 0 <= class_index < weight.shape[0]:
        raise ValueError(f"class_index should be in 0..{weight.shape[0] - 1}, got {class_index}")
    flat = features.reshape(channels, height * width)
    return (weight[class_index].to(features.dtype) @ flat).reshape(height, width)
