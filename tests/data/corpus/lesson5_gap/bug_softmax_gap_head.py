# corpus: one mistake, one penalty: a GAP head that returns softmax probabilities instead of logits; it also lost gap_head_any_size (whose "logits come from the maps" check moved every logit by the same amount, which a softmax cancels); now only gap_head_forward (issue 43)
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
        return self.fc(self.pool(x).flatten(1)).softmax(dim=1)  # probabilities
        ### END SOLUTION
