# corpus: honest bug, one penalty (issue 29): the head sums each map instead of averaging it; it takes any map size and its logits do not depend on how a map's values are laid out, so only gap_head_forward (the logits' values) fails, not gap_head_any_size
# category: bug
# status: ok
# fails: gap_head_forward
# %% gap_head
class GAPHead(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_channels, num_classes)

    def forward(self, x):
        return self.fc(x.sum(dim=(2, 3)))
