"""A tiny generated image data set whose class does not depend on where the object sits.

Each image is ``[1, 20, 20]`` grayscale: one 5x5 glyph (a square outline, a plus, an X or a disc) at a
random position, a random brightness, and Gaussian background noise. Nothing is downloaded; the same seed
gives the same images on every machine.

* ``placement="center"``: the glyph's top-left corner lies in rows/columns 5..10, so the glyph stays in
  the middle of the image (the training set and the plain test set);
* ``placement="border"``: the corner lies in 0..2 or 13..15 on both axes, so the glyph sits near a
  corner, at places the training set never shows (the *shifted* test set).

Example::

    train, test, shifted = shapes_splits()
    train.images.shape, train.labels.dtype   # torch.Size([1200, 1, 20, 20]), torch.int64
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

__all__ = ["CLASS_NAMES", "IMAGE_SIZE", "GLYPH_SIZE", "CENTER_OFFSETS", "BORDER_OFFSETS", "ShapesData",
           "glyphs", "make_shapes", "shapes_splits"]

IMAGE_SIZE = 20
GLYPH_SIZE = 5
CLASS_NAMES = ("square", "plus", "cross", "disc")
#: Top-left offsets (row or column) of the glyph in the plain sets and in the shifted set.
CENTER_OFFSETS = tuple(range(5, 11))
BORDER_OFFSETS = (0, 1, 2, 13, 14, 15)
NOISE = 0.25


class ShapesData(NamedTuple):
    """``images`` [N, 1, H, W] float32, ``labels`` [N] int64, ``positions`` [N, 2] int64 (glyph top-left row, col)."""

    images: torch.Tensor
    labels: torch.Tensor
    positions: torch.Tensor


def glyphs() -> np.ndarray:
    """The four 5x5 glyphs ``[4, 5, 5]`` (float32, 0 or 1) in the order of :data:`CLASS_NAMES`."""
    k = GLYPH_SIZE
    square = np.ones((k, k), np.float32)
    square[1:-1, 1:-1] = 0
    plus = np.zeros((k, k), np.float32)
    plus[k // 2, :] = 1
    plus[:, k // 2] = 1
    cross = np.maximum(np.eye(k, dtype=np.float32), np.fliplr(np.eye(k, dtype=np.float32)))
    rows, cols = np.mgrid[:k, :k] - k // 2
    disc = ((rows ** 2 + cols ** 2) <= (k // 2) ** 2 + 1).astype(np.float32)
    return np.stack([square, plus, cross, disc])


def make_shapes(n: int, seed: int, placement: str = "center") -> ShapesData:
    """``n`` images (a multiple of 4: every class ``n // 4`` times, shuffled) placed as ``placement`` says."""
    if not isinstance(n, int) or n < len(CLASS_NAMES) or n % len(CLASS_NAMES):
        raise ValueError(f"n must be a positive multiple of {len(CLASS_NAMES)} (balanced classes), got {n!r}")
    offsets = {"center": CENTER_OFFSETS, "border": BORDER_OFFSETS}.get(placement)
    if offsets is None:
        raise ValueError(f"placement must be 'center' or 'border', got {placement!r}")
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % len(CLASS_NAMES))
    positions = rng.choice(np.array(offsets), size=(n, 2))
    brightness = rng.uniform(0.6, 1.0, size=n).astype(np.float32)
    images = (NOISE * rng.standard_normal((n, 1, IMAGE_SIZE, IMAGE_SIZE))).astype(np.float32)
    shapes = glyphs()
    for i in range(n):
        r, c = positions[i]
        images[i, 0, r:r + GLYPH_SIZE, c:c + GLYPH_SIZE] += brightness[i] * shapes[labels[i]]
    return ShapesData(torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64)),
                      torch.from_numpy(positions.astype(np.int64)))


def shapes_splits(n_train: int = 1200, n_test: int = 400, seed: int = 0) -> tuple[ShapesData, ShapesData, ShapesData]:
    """(train, test, shifted): train and test centred, shifted near the corners; three independent seeds."""
    return (make_shapes(n_train, seed, "center"), make_shapes(n_test, seed + 1, "center"),
            make_shapes(n_test, seed + 2, "border"))
