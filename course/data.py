"""Images for the lessons: nothing is downloaded; everything ships with a package or is generated."""

from __future__ import annotations

import numpy as np


def sample_image(size: int | None = 128) -> np.ndarray:
    """Grace Hopper's portrait from matplotlib's bundled sample data, as grayscale ``[H, W]`` float32 in [0, 1].

    ``size`` crops the centre to a ``size x size`` square first (``None`` keeps the whole picture,
    ``[600, 512]``).
    """
    import matplotlib.cbook as cbook
    import matplotlib.pyplot as plt

    with cbook.get_sample_data("grace_hopper.jpg") as handle:
        rgb = plt.imread(handle, format="jpg").astype(np.float32) / 255.0
    gray = rgb[..., :3] @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    if size is not None:
        if size < 1 or size > min(gray.shape):
            raise ValueError(f"size must be between 1 and {min(gray.shape)}, got {size}")
        top = (gray.shape[0] - size) // 2
        left = (gray.shape[1] - size) // 2
        gray = gray[top : top + size, left : left + size]
    return np.ascontiguousarray(gray, dtype=np.float32)
