"""The lesson-1 explorer (``course.explorer``): its output shape agrees with PyTorch as the sliders move.

Not marked ``browser``: the widgets are driven here through their Python API, without a page.
"""

from __future__ import annotations

import re

import matplotlib
import torch

matplotlib.use("Agg")

from course.explorer import pooling_explorer  # noqa: E402


def sliders_and_shape(box):
    row, shape, _picture = box.children
    kernel, stride, padding = row.children
    return kernel, stride, padding, shape


def shown_shape(shape) -> tuple[int, int]:
    found = re.search(r"output shape \[(\d+), (\d+)\]", shape.value)
    assert found, f"no output shape in {shape.value!r}"
    return int(found.group(1)), int(found.group(2))


def test_explorer_shape_follows_the_sliders():
    box = pooling_explorer(size=(6, 7))
    kernel, stride, padding, shape = sliders_and_shape(box)
    assert shown_shape(shape) == (3, 3)  # kernel 2, stride 0 = 2, no padding over 6×7: floor drops a column
    for k, s, p in [(1, 0, 0), (3, 1, 1), (3, 2, 0), (4, 3, 2), (5, 2, 2), (6, 1, 3), (2, 3, 1)]:
        kernel.value = k
        assert padding.max == k // 2, "padding is capped at kernel_size // 2 (the spec card's rule)"
        stride.value, padding.value = s, p
        expected = torch.nn.AvgPool2d(k, s or k, p)(torch.zeros(1, 1, 6, 7)).shape[2:]
        assert shown_shape(shape) == tuple(expected), (k, s, p, shape.value)


def test_explorer_does_not_expose_an_output_size_function():
    import course.explorer as explorer

    public = {name for name in dir(explorer) if not name.startswith("_")}
    assert public <= {"annotations", "np", "show_grid", "window_corners", "pooling_explorer"}, public


def test_explorer_draws_each_position_as_a_png_image():
    """The picture is an Image of PNG bytes, redrawn on every move; no Output widget, whose stand-in in nbclient
    loses cell replies (tests/nbtools.without_output_widgets): nbgrader validate runs this cell too."""
    import ipywidgets as widgets

    box = pooling_explorer(size=(6, 7))
    kernel, _stride, padding, _shape = sliders_and_shape(box)
    picture = box.children[2]
    assert isinstance(picture, widgets.Image) and picture.format == "png"
    first = bytes(picture.value)
    assert first.startswith(b"\x89PNG"), first[:8]
    kernel.value, padding.value = 3, 1
    assert bytes(picture.value).startswith(b"\x89PNG") and bytes(picture.value) != first, "the picture did not change"

    def outputs(widget) -> list:
        found = [widget] if isinstance(widget, widgets.Output) else []
        for child in getattr(widget, "children", ()):
            found += outputs(child)
        return found

    assert outputs(box) == []

