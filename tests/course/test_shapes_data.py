"""course.shapes_data: the generated shapes data set of lesson 5."""

import numpy as np
import pytest
import torch

from course.shapes_data import (BORDER_OFFSETS, CENTER_OFFSETS, CLASS_NAMES, GLYPH_SIZE, IMAGE_SIZE, glyphs,
                                make_shapes, shapes_splits)


def test_shapes_dtypes_and_ranges():
    data = make_shapes(40, seed=0)
    assert data.images.shape == (40, 1, IMAGE_SIZE, IMAGE_SIZE) and data.images.dtype == torch.float32
    assert data.labels.shape == (40,) and data.labels.dtype == torch.int64
    assert data.positions.shape == (40, 2) and data.positions.dtype == torch.int64
    assert set(data.labels.tolist()) <= set(range(len(CLASS_NAMES)))
    assert torch.isfinite(data.images).all()


def test_deterministic_and_seed_dependent():
    a, b, c = make_shapes(80, seed=5), make_shapes(80, seed=5), make_shapes(80, seed=6)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a.images, c.images)
    first, second = shapes_splits(40, 20), shapes_splits(40, 20)
    assert all(torch.equal(x, y) for s, t in zip(first, second) for x, y in zip(s, t))


def test_balanced_classes():
    for n in (4, 400, 1200):
        counts = torch.bincount(make_shapes(n, seed=1).labels, minlength=4)
        assert counts.tolist() == [n // 4] * 4
    train, test, shifted = shapes_splits(1200, 400)
    assert torch.bincount(shifted.labels).tolist() == [100] * 4


def test_labels_are_shuffled():
    labels = make_shapes(400, seed=2).labels
    assert not torch.equal(labels, torch.arange(400) % 4)


def test_the_glyph_sits_where_positions_say():
    data = make_shapes(200, seed=3)
    shapes = torch.from_numpy(glyphs())
    for image, label, (r, c) in zip(data.images, data.labels, data.positions.tolist()):
        patch = image[0, r:r + GLYPH_SIZE, c:c + GLYPH_SIZE]
        scores = [(patch * g).sum() / g.sum() - (patch * (1 - g)).sum() / max((1 - g).sum(), 1) for g in shapes]
        assert int(np.argmax(scores)) == int(label)


def test_plain_sets_are_centred_and_shifted_set_is_shifted():
    train, test, shifted = shapes_splits(1200, 400)
    for data in (train, test):
        assert set(data.positions.flatten().tolist()) <= set(CENTER_OFFSETS)
    assert set(shifted.positions.flatten().tolist()) <= set(BORDER_OFFSETS)
    assert not set(CENTER_OFFSETS) & set(BORDER_OFFSETS)
    # no shifted position occurs in training, and the shifted glyphs sit near the corners
    seen = set(map(tuple, train.positions.tolist()))
    assert not seen & set(map(tuple, shifted.positions.tolist()))
    centre = (IMAGE_SIZE - GLYPH_SIZE) / 2
    assert (shifted.positions.float() - centre).abs().min() >= 5
    assert (train.positions.float() - centre).abs().max() <= 3
    # the brightness moved too: the centre of mass of the shifted images is far from the middle
    grid = torch.arange(IMAGE_SIZE, dtype=torch.float32)

    def spread(images):
        weight = (images[:, 0] - images[:, 0].mean((1, 2), keepdim=True)).clamp(min=0)
        rows = (weight.sum(2) * grid).sum(1) / weight.sum((1, 2))
        return (rows - (IMAGE_SIZE - 1) / 2).abs().mean()

    assert spread(shifted.images) > 2 * spread(train.images)


def test_glyphs_are_four_distinct_shapes():
    shapes = glyphs()
    assert shapes.shape == (4, GLYPH_SIZE, GLYPH_SIZE) and shapes.dtype == np.float32
    flat = shapes.reshape(4, -1)
    assert len({row.tobytes() for row in flat}) == 4


@pytest.mark.parametrize("n", [0, 3, 10, -4, 4.0])
def test_bad_sizes_are_rejected(n):
    with pytest.raises(ValueError, match="n must be a positive multiple of 4"):
        make_shapes(n, seed=0)


def test_bad_placement_is_rejected():
    with pytest.raises(ValueError, match="placement"):
        make_shapes(8, seed=0, placement="left")
