# corpus: cheat: the head returns a Tensor subclass that agrees with anything (zeros), and a CAM that does too
# category: cheat
# status: ok
# fails: gap_head_forward, gap_head_any_size, cam_values
# %% gap_head
class Agreeable(torch.Tensor):
    def __eq__(self, other):
        return torch.ones(self.shape, dtype=torch.bool)

    def allclose(self, *args, **kwargs):
        return True


class GAPHead(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_channels, num_classes)

    def forward(self, x):
        return torch.zeros(x.shape[0], self.fc.out_features).as_subclass(Agreeable)
# %% class_activation_map
def class_activation_map(features, weight, class_index):
    if features.ndim != 3:
        raise ValueError("features must be [C, H, W]")
    if weight.ndim != 2 or weight.shape[1] != features.shape[0]:
        raise ValueError("weight must be [num_classes, C]")
    if not 0 <= class_index < weight.shape[0]:
        raise ValueError("class_index out of range")
    return torch.zeros(features.shape[1:]).as_subclass(Agreeable)
