"""Three wrong average poolings for lesson 2's *predict, then run* exercise, and the runner that shows
where each first goes wrong.

Each one calls the course's reference the wrong way (PyTorch, which no exercise may use, so none of them
is an exercise's answer). NumPy ``x [B, C, H, W]`` in, ``[B, C, H_out, W_out]`` out; int arguments.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from course.checks.answers import Answered
from course.reference import avg_pool2d_reference

__all__ = ["CHECKS", "PRACTICE", "divisor_always_full", "stride_zero_ignored", "padding_one_side", "always_float64",
           "padding_ignored", "first_failure", "check_prediction", "cases_as_checks"]

#: The exercise's checks, run in this order: label -> (x [1, 1, H, W], kernel_size, stride, padding,
#: count_include_pad).
CHECKS = {
    "A": (np.array([[1, 3, 2, 4], [5, 6, 7, 8], [9, 2, 1, 0], [4, 3, 2, 1]], dtype=np.float64)[None, None], 2, 0, 0,
          True),  # the lecture's worked example, default stride
    "B": (np.ones((1, 1, 5, 5)), 3, 2, 1, False),  # all ones, padding not counted
    "C": (np.arange(25.0).reshape(1, 1, 5, 5), 3, 2, 1, True),  # a ramp, padding counted
}
#: Three other checks, of other sizes and in another order, that the notebook runs the bugs on after the
#: predictions (issue 53: it never runs :data:`CHECKS`, whose results are the graded predictions' keys; each
#: bug is caught first elsewhere here).
PRACTICE = {
    "D": (np.ones((1, 1, 7, 7)), 3, 2, 1, False),  # all ones, padding not counted
    "E": (np.arange(36.0).reshape(1, 1, 6, 6), 3, 0, 0, True),  # a ramp, default stride
    "F": (np.arange(49.0).reshape(1, 1, 7, 7), 3, 2, 1, True),  # a ramp, padding counted
}


def divisor_always_full(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Every window divided by ``kernel_size ** 2``, even with ``count_include_pad=False``."""
    return avg_pool2d_reference(x, kernel_size, stride, padding, True)


def stride_zero_ignored(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """``stride=0`` read as 1 (windows one step apart) instead of ``kernel_size``."""
    return avg_pool2d_reference(x, kernel_size, stride or 1, padding, count_include_pad)


def padding_one_side(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """All the padding at the bottom and the right (``2 * padding`` there, none at the top or the left),
    and the padded zeros then counted as input."""
    padded = np.pad(x, ((0, 0), (0, 0), (0, 2 * padding), (0, 2 * padding)))
    return avg_pool2d_reference(padded, kernel_size, stride, 0, count_include_pad)


def always_float64(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Computes in float64 and returns float64 whatever the input's dtype."""
    return avg_pool2d_reference(np.asarray(x, dtype=np.float64), kernel_size, stride, padding, count_include_pad)


def padding_ignored(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Pools as if ``padding`` were 0."""
    return avg_pool2d_reference(x, kernel_size, stride, 0, count_include_pad)


def first_failure(function: Callable, checks: dict) -> tuple | None:
    """Run ``function`` and the reference on each check ``{label: (x, kernel_size, stride, padding,
    count_include_pad)}`` in order; for the first where they differ, ``(label, "shape")`` when the output
    shapes differ, ``(label, "dtype")`` when the dtypes do, else ``(label, (row, col))`` of the first wrong
    output value in reading order (of the first map). ``None`` when every check agrees."""
    for label, (x, *arguments) in checks.items():
        got, want = function(x, *arguments), avg_pool2d_reference(x, *arguments)
        if got.shape != want.shape:
            return (label, "shape")
        if got.dtype != want.dtype:
            return (label, "dtype")
        wrong = np.argwhere(~np.isclose(got, want, rtol=1e-9, atol=1e-12))
        if len(wrong):
            return (label, (int(wrong[0][2]), int(wrong[0][3])))
    return None


#: Where lesson 2 teaches what the predictions need (a wrong prediction's feedback points there).
TAUGHT_IN = "section 1 (the window of output (i, j), the padding, the divisor) and lesson 1's output-size rule"


def check_prediction(prediction: Any, name: str, checks: dict, taught_in: str = TAUGHT_IN) -> Answered:
    """Check the form of a prediction, ``(label, (row, col))`` or ``(label, "shape")`` with a label of
    ``checks``; return how it was read (the same words whether it is right or not), an
    :class:`course.checks.answers.Answered` whose ``graded()`` points a wrong prediction to ``taught_in``."""
    ok = (type(prediction) is tuple and len(prediction) == 2 and prediction[0] in checks
          and (prediction[1] == "shape" or (type(prediction[1]) is tuple and len(prediction[1]) == 2
                                            and all(type(i) is int and i >= 0 for i in prediction[1]))))
    if not ok:
        raise AssertionError(f"{name}: write a tuple (check, where): check one of {sorted(checks)!r}, where "
                             f"(row, col) of the first wrong value or \"shape\"; got {prediction!r}")
    label, where = prediction
    spot = "the output shape is wrong" if where == "shape" else f"the first wrong value is at {where}"
    return Answered(f"{name}: read as: check {label} fails first, and {spot}.", taught_in)


def _against_the_card(shape: tuple, kernel_size: int, stride: int, padding: int) -> str | None:
    """The spec card's rule a case breaks, in the card's words (never PyTorch's), or None."""
    height, width = shape[2:]
    if kernel_size < 1:
        return f"kernel_size must be >= 1, got {kernel_size}"
    if stride < 0:
        return f"stride must be >= 0 (0 means kernel_size), got {stride}"
    if not 0 <= padding <= kernel_size // 2:
        return f"padding must be >= 0 and at most kernel_size // 2 = {kernel_size // 2}, got {padding}"
    if min(height, width) + 2 * padding < kernel_size:
        return (f"the input ({height}, {width}) with padding {padding} on each side is smaller than kernel_size "
                f"{kernel_size}: no window fits")
    return None


#: Limits on the cases of the *write the test* exercise: a few small, valid inputs.
MAX_CASES, MAX_SIZE = 6, 16


def cases_as_checks(cases: Any, name: str = "my_cases") -> dict:
    """The student's test cases ``[(shape, dtype, kernel_size, stride, padding, count_include_pad), ...]``
    as checks for :func:`first_failure`, ``{"case 1": (x, kernel_size, ...), ...}``, with ``x`` a seeded
    random array of that shape and dtype. Refuses (AssertionError, saying why) a case of the wrong form,
    one too large, or one the spec card does not allow (the card's rule, in its words)."""
    if type(cases) is not list or not 1 <= len(cases) <= MAX_CASES:
        raise AssertionError(f"{name} must be a list of 1 to {MAX_CASES} cases, got {cases!r}"[:300])
    checks = {}
    for number, case in enumerate(cases, start=1):
        where = f"{name}[{number - 1}]"
        if type(case) is not tuple or len(case) != 6:
            raise AssertionError(f"{where} must be a tuple (shape, dtype, kernel_size, stride, padding, "
                                 f"count_include_pad), got {case!r}"[:300])
        shape, dtype, kernel_size, stride, padding, count_include_pad = case
        if (type(shape) is not tuple or len(shape) != 4
                or not all(type(n) is int and 1 <= n <= MAX_SIZE for n in shape)):
            raise AssertionError(f"{where}: shape must be 4 ints from 1 to {MAX_SIZE}, got {shape!r}")
        if dtype not in ("float32", "float64"):
            raise AssertionError(f"{where}: dtype must be \"float32\" or \"float64\", got {dtype!r}")
        if not all(type(v) is int for v in (kernel_size, stride, padding)) or type(count_include_pad) is not bool:
            raise AssertionError(f"{where}: kernel_size, stride and padding are ints here, count_include_pad "
                                 f"a bool; got {case[2:]!r}")
        broken = _against_the_card(shape, kernel_size, stride, padding)
        if broken:
            raise AssertionError(f"{where}: not a valid average pooling: {broken}; got {case!r}")
        x = np.random.default_rng(number).standard_normal(shape).astype(dtype)
        checks[f"case {number}"] = (x, kernel_size, stride, padding, count_include_pad)
    return checks
