# corpus: a CAM that flattens the maps with view instead of reshape: right on contiguous features, raises on features in channels-last memory or a slice (what a network's maps often are); kept full marks before (every graded tensor was contiguous), loses cam_values only (issue 43)
# category: bug
# status: ok
# fails: cam_values
# %% class_activation_map
def class_activation_map(features, weight, class_index):
    """CAM [H, W] of class class_index: sum over c of weight[class_index, c] * features[c]; features [C, H, W]."""
    if features.ndim != 3:
        raise ValueError(f"features must be one image's maps [C, H, W], got shape {tuple(features.shape)}")
    if weight.ndim != 2 or weight.shape[1] != features.shape[0]:
        raise ValueError(f"weight must be [num_classes, C] with C = {features.shape[0]}, got shape {tuple(weight.shape)}")
    if not 0 <= class_index < weight.shape[0]:
        raise ValueError(f"class_index must be in 0 .. {weight.shape[0] - 1}, got {class_index}")
    C, H, W = features.shape
    flat = features.view(C, H * W)  # [C, H*W]
    return (weight[class_index].to(features.dtype) @ flat).view(H, W)
