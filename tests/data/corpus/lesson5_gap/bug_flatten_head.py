# corpus: honest bug: the "GAP" head flattens the maps (it only works for one map size)
# category: bug
# status: ok
# fails: gap_head_forward, gap_head_any_size
# %% gap_head
class GAPHead(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.fc = nn.LazyLinear(num_classes)

    def forward(self, x):
        return self.fc(x.flatten(1))
