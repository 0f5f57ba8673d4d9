# corpus: correct (issue 53 item 10): an honest rewrite of the two new exercises: GridHead with torch.flatten and the width as grid ** 2 * in_channels; global_pools builds a float32 map and pools it with torch; q10/q11 right
# category: correct
# status: ok
# fails:
# %% grid_head
class GridHead(nn.Module):
    """Adaptive average pooling to grid x grid, flatten, a dense layer: [B, in_channels, H, W] -> [B, num_classes]."""

    def __init__(self, in_channels, num_classes, grid):
        super().__init__()
        self.grid = grid
        self.pool = nn.AdaptiveAvgPool2d((grid, grid))
        self.fc = nn.Linear(grid ** 2 * in_channels, num_classes)

    def forward(self, x):
        pooled = self.pool(x)  # [B, C, grid, grid] whatever H x W
        return self.fc(torch.flatten(pooled, start_dim=1))
# %% global_pools
def global_pools(peak, background, height, width):
    """(average, maximum) of a height x width map: every value `background` but one, `peak` (peak >= background)."""
    feature_map = torch.full((height, width), float(background))
    feature_map[height // 2, width // 2] = peak
    return feature_map.mean().item(), feature_map.max().item()
