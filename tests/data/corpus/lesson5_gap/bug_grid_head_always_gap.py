# corpus: honest bug (issue 53 item 10): GridHead pools to 1 x 1 whatever grid says (and sizes fc for it): right on grid 1 only; loses grid_head_any_size only
# category: bug
# status: ok
# fails: grid_head_any_size
# %% grid_head
class GridHead(nn.Module):
    """Adaptive average pooling to grid x grid, flatten, a dense layer: [B, in_channels, H, W] -> [B, num_classes]."""

    def __init__(self, in_channels, num_classes, grid):
        ### BEGIN SOLUTION
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_channels, num_classes)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return self.fc(self.pool(x).flatten(1))
        ### END SOLUTION
