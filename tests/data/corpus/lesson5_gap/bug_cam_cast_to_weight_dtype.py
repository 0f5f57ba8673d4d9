# corpus: honest bug (issue 53 item 12): the CAM casts the features to the weights' dtype (the text asks for the features' dtype); no test mixed dtypes, so it kept its points; now loses cam_values only
# category: bug
# status: ok
# fails: cam_values
# %% class_activation_map
def class_activation_map(features, weight, class_index):
    """CAM [H, W] of class class_index: sum over c of weight[class_index, c] * features[c]; features [C, H, W]."""
    ### BEGIN SOLUTION
    if features.ndim != 3:
        raise ValueError(f"features must be one image's maps [C, H, W], got shape {tuple(features.shape)}")
    if weight.ndim != 2 or weight.shape[1] != features.shape[0]:
        raise ValueError(f"weight must be [num_classes, C] with C = {features.shape[0]}, got shape {tuple(weight.shape)}")
    if not 0 <= class_index < weight.shape[0]:
        raise ValueError(f"class_index must be in 0 .. {weight.shape[0] - 1}, got {class_index}")
    cam = torch.einsum("c,chw->hw", weight[class_index], features.to(weight.dtype))
    return cam
    ### END SOLUTION
