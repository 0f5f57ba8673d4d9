# corpus: correct another way: GAP as x.mean((2, 3)), the CAM as a weighted sum of maps
# category: correct
# status: ok
# fails:
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
