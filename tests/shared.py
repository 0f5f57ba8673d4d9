"""What the tests share, defined once: the repository's root, the limits of a quick sandboxed child and an
honest answer whose source rule is unproved (the review path).
Imported by name (``from shared import REPO, FAST``: ``tests/conftest.py`` puts this folder on the path)."""

from pathlib import Path

from autograder.grading.sandbox import Limits

#: The repository's root (this file is ``tests/shared.py``).
REPO = Path(__file__).resolve().parents[1]

#: A test's child: a few CPU seconds per cell, a minute to start (a busy machine), 1 GiB, short output.
#: A test that needs more says what it changes: ``dataclasses.replace(FAST, test_seconds=10, ...)``.
FAST = Limits(test_seconds=5, cell_seconds=5, start_seconds=60, memory_bytes=1 << 30, output_chars=2000)

#: Lesson 2's forward (cell ``avg_pool2d_loops``) written with a `while` over the rows: honest, but the loop rule cannot read a `while`
#: as a nest over the outputs, so its verdict is unproved (issue 50 item 2): the cell goes to the instructor.
WHILE_FORWARD = '''def as_pair(value):
    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a NumPy array [B, C, H, W], got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D [B, C, H, W], got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x must have a float dtype (float32 or float64), got {x.dtype}")
    height, width = x.shape[2], x.shape[3]
    out_h, out_w = output_size((height, width), kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    out = np.zeros(x.shape[:2] + (out_h, out_w), dtype=x.dtype)
    i = 0
    while i < out_h:
        for j in range(out_w):
            top, left = i * sh - ph, j * sw - pw
            r0, r1, c0, c1 = max(top, 0), min(top + kh, height), max(left, 0), min(left + kw, width)
            divisor = kh * kw if count_include_pad else (r1 - r0) * (c1 - c0)
            out[:, :, i, j] = x[:, :, r0:r1, c0:c1].sum(axis=(2, 3)) / divisor
        i += 1
    return out
'''
