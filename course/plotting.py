"""Pictures for the lessons: small grids with their numbers and pooling windows, images side by side."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _pair(value, name: str) -> tuple[int, int]:
    """``(a, b)`` from an int or a pair (a drawing helper: no checks beyond the shape of the value)."""
    first, second = (value, value) if np.ndim(value) == 0 else value
    return int(first), int(second)


def window_corners(shape: tuple[int, int], kernel_size, stride=0, padding=0) -> list[tuple[int, int]]:
    """Top-left corners ``(row, col)`` of every pooling window over a ``shape = (H, W)`` grid.

    Coordinates are in the unpadded grid, so a padded window starts at a negative row or column.
    Floor mode: a window that would run past the padded edge is dropped.
    """
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    ph, pw = _pair(padding, "padding")
    sh, sw = sh or kh, sw or kw
    height, width = shape
    rows = range(-ph, height + ph - kh + 1, sh)
    cols = range(-pw, width + pw - kw + 1, sw)
    return [(r, c) for r in rows for c in cols]


def show_grid(values, title: str | None = None, kernel_size=None, stride=0, padding=0, ax=None,
              fmt: str = "{:g}", cmap: str = "Blues"):
    """Draw a 2-D array ``[H, W]`` as coloured cells with their numbers.

    With ``kernel_size`` the pooling windows are outlined in turn (one colour each); ``padding`` adds
    the zero border in grey. Returns the matplotlib ``Axes``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    grid = np.asarray(values)
    if grid.ndim != 2:
        raise ValueError(f"values must be a 2-D array [H, W], got shape {grid.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(0.6 * grid.shape[1] + 1.5, 0.6 * grid.shape[0] + 1.0))
    ph, pw = _pair(padding, "padding") if kernel_size is not None else (0, 0)
    image = ax.imshow(grid, cmap=cmap, extent=(-0.5, grid.shape[1] - 0.5, grid.shape[0] - 0.5, -0.5))
    for (r, c), value in np.ndenumerate(grid):
        shade = image.norm(value) if np.ptp(grid) > 0 else 0.0  # a constant grid draws in the lightest colour
        colour = "white" if shade > 0.6 else "black"
        ax.text(c, r, fmt.format(value), ha="center", va="center", fontsize=10, color=colour)
    for r in range(-ph, grid.shape[0] + ph):
        for c in range(-pw, grid.shape[1] + pw):
            if not (0 <= r < grid.shape[0] and 0 <= c < grid.shape[1]):
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, facecolor="0.9", edgecolor="0.7"))
                ax.text(c, r, "0", ha="center", va="center", fontsize=9, color="0.5")
    if kernel_size is not None:
        kh, kw = _pair(kernel_size, "kernel_size")
        colours = plt.get_cmap("tab10")
        for i, (r, c) in enumerate(window_corners(grid.shape, kernel_size, stride, padding)):
            inset = 0.06 * (i % 3)
            ax.add_patch(Rectangle((c - 0.5 + inset, r - 0.5 + inset), kw - 2 * inset, kh - 2 * inset,
                                   fill=False, linewidth=2.5, edgecolor=colours(i % 10)))
    ax.set_xlim(-0.5 - pw, grid.shape[1] - 0.5 + pw)
    ax.set_ylim(grid.shape[0] - 0.5 + ph, -0.5 - ph)
    ax.set_xticks(range(grid.shape[1]))
    ax.set_yticks(range(grid.shape[0]))
    if title:
        ax.set_title(title)
    return ax


def show_images(images: Sequence, titles: Sequence[str] | None = None, cmap: str = "gray",
                size: float = 3.0, same_scale: bool = True):
    """Show 2-D images ``[H, W]`` side by side, each with its title and shape; returns the ``Figure``.

    ``same_scale`` uses one colour scale for all, so brightness compares across panels.
    """
    import matplotlib.pyplot as plt

    arrays = [np.asarray(image) for image in images]
    if not arrays:
        raise ValueError("images must hold at least one image")
    if titles is not None and len(titles) != len(arrays):
        raise ValueError(f"titles must have one entry per image: {len(titles)} titles for {len(arrays)} images")
    low = min(float(a.min()) for a in arrays) if same_scale else None
    high = max(float(a.max()) for a in arrays) if same_scale else None
    fig, axes = plt.subplots(1, len(arrays), figsize=(size * len(arrays), size), squeeze=False)
    for i, (ax, image) in enumerate(zip(axes[0], arrays)):
        ax.imshow(image, cmap=cmap, vmin=low, vmax=high, interpolation="nearest")
        label = titles[i] if titles is not None else f"image {i}"
        ax.set_title(f"{label}\n{list(image.shape)}", fontsize=10)
        ax.axis("off")
    fig.tight_layout()
    return fig
