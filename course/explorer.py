"""An interactive explorer for lesson 1: move the sliders, watch the pooling windows and the output shape."""

from __future__ import annotations

import numpy as np

from course.plotting import show_grid, window_corners


def pooling_explorer(size: tuple[int, int] = (6, 6), seed: int = 0):
    """Sliders for ``kernel_size``, ``stride`` and ``padding`` over a small ``[H, W] = size`` input.

    Each move redraws the input with its pooling windows (and the zero border) and states the output
    shape, counted from the windows drawn. Returns the ipywidgets box to display. The picture is an
    ``Image`` (PNG bytes), not an ``Output`` widget, whose stand-in in nbclient (``nbgrader validate``, the
    tests) can lose a cell's reply and make the cell wait out its whole timeout (nbclient issue 312).
    """
    import io

    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    height, width = size
    values = np.random.default_rng(seed).integers(0, 10, size=size).astype(float)
    kernel = widgets.IntSlider(value=2, min=1, max=min(height, width), description="kernel_size")
    stride = widgets.IntSlider(value=0, min=0, max=min(height, width), description="stride")
    padding = widgets.IntSlider(value=0, min=0, max=1, description="padding")
    shape = widgets.HTML()
    shape.add_class("pooling-explorer-shape")
    picture = widgets.Image(format="png")

    def redraw(_change=None):
        padding.max = kernel.value // 2  # the spec card: padding <= kernel_size // 2
        corners = window_corners(size, kernel.value, stride.value, padding.value)
        rows, cols = len({r for r, _ in corners}), len({c for _, c in corners})
        step = stride.value or kernel.value
        count = f"{rows * cols} window{'s' if rows * cols != 1 else ''}"
        shape.value = (f"input [{height}, {width}], kernel {kernel.value}, stride {step}"
                       f"{' (0 means kernel_size)' if stride.value == 0 else ''}, padding {padding.value}"
                       f" &rarr; <b>output shape [{rows}, {cols}]</b> ({count})")
        fig, ax = plt.subplots(figsize=(0.5 * (width + 2 * padding.value) + 1.5,
                                        0.5 * (height + 2 * padding.value) + 1.0))
        show_grid(values, title=count, kernel_size=kernel.value, stride=stride.value, padding=padding.value, ax=ax)
        png = io.BytesIO()
        fig.savefig(png, format="png", bbox_inches="tight")
        plt.close(fig)
        picture.value = png.getvalue()

    for slider in (kernel, stride, padding):
        slider.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([kernel, stride, padding]), shape, picture])
