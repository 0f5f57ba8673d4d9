# corpus: honest bug (issue 53 item 12): GAPHead flattens the batch axis too (.flatten()); it cost gap_head_forward and gap_head_any_size, now gap_head_forward alone (any_size judges against the head's own square-map logits)
# category: bug
# status: ok
# fails: gap_head_forward
# %% gap_head
class GAPHead(nn.Module):
    """Global average pooling then a dense layer: [B, in_channels, H, W] -> [B, num_classes] logits."""

    def __init__(self, in_channels, num_classes):
        ### BEGIN SOLUTION
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_channels, num_classes)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return self.fc(self.pool(x).flatten())
        ### END SOLUTION
