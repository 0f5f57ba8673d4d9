"""Issue 41 item 5: loop rules that judge work, not syntax (``course.checks._LoopNests``).

Lesson 2's "explicit loops" (``check_output_loops``) is met only where the loops over the data compute what
they write: a sum (or mean) of a window of the input taken inside the nest, or ``+=`` of the data into an
item; a nest that copies a result computed on the whole array is refused, with what to write instead.
Lesson 3's rule (``check_kernel_loops``) accepts the honest bounded forms it can trace: ``map(int, shape)``
over a 4-tuple, and kernel offsets from the student's own helper that reads ``kernel_size``."""

from __future__ import annotations

import numpy as np
import pytest

from course.checks import NeedsReview, check_kernel_loops, check_output_loops

SETUP = {"np": np}


class _Graded:
    def __init__(self, text, namespace=SETUP):
        self.__student_source__ = text
        self.__trusted_globals__ = namespace


FORWARD = "def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
_PREAMBLE = '''
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    sh, sw = (stride or kh, stride or kw) if isinstance(stride, int) else (stride[0] or kh, stride[1] or kw)
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out_h, out_w = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
    out = np.zeros(x.shape[:2] + (out_h, out_w), x.dtype)
'''
LESSON2_HONEST = {
    "window_sum_per_position": '''
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
                    out[b, c, i, j] = xp[b, c, i * sh:i * sh + kh, j * sw:j * sw + kw].sum() / (kh * kw)
    return out
''',
    "accumulated_over_the_kernel_offsets": '''
    for i in range(out_h):
        for j in range(out_w):
            total = np.zeros(x.shape[:2], x.dtype)
            for di in range(kh):
                for dj in range(kw):
                    total += xp[:, :, i * sh + di, j * sw + dj]
            out[:, :, i, j] = total / (kh * kw)
    return out
''',
    "generator_sum_in_the_nest": '''
    for i in range(out_h):
        for j in range(out_w):
            out[..., i, j] = sum(xp[..., i * sh + di, j * sw + dj] for di in range(kh) for dj in range(kw)) / (kh * kw)
    return out
''',
    "a_window_variable_and_np_mean": '''
    for j in range(out_w):
        for i in range(out_h):
            window = xp[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            out[:, :, i, j] = np.mean(window, axis=(2, 3))
    return out
''',
    "a_helper_that_sums_a_window": '''
    def window_mean(data, i, j):
        return data[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw].mean(axis=(2, 3))

    for i in range(out_h):
        for j in range(out_w):
            out[:, :, i, j] = window_mean(xp, i, j)
    return out
''',
    "comprehensions": '''
    return np.array([[[[xp[b, c, i * sh:i * sh + kh, j * sw:j * sw + kw].mean() for j in range(out_w)]
                       for i in range(out_h)] for c in range(x.shape[1])] for b in range(x.shape[0])], x.dtype)
''',
}
LESSON2_COPIES = {
    "sliding_window_view_then_a_copying_nest": '''
    whole = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw].mean(axis=(-2, -1))
    for i in range(out_h):
        for j in range(out_w):
            out[:, :, i, j] = whole[:, :, i, j]
    return out
''',
    "prefix_sums_then_a_nest_of_differences": '''
    t = np.pad(xp, ((0, 0), (0, 0), (1, 0), (1, 0))).cumsum(2).cumsum(3)
    for i in range(out_h):
        for j in range(out_w):
            r, s = i * sh, j * sw
            out[:, :, i, j] = (t[:, :, r + kh, s + kw] - t[:, :, r, s + kw] - t[:, :, r + kh, s] + t[:, :, r, s]) / (kh * kw)
    return out
''',
    "shifted_slices_summed_outside_then_copied_by_plus_equals": '''
    total = np.zeros_like(out)
    for di in range(kh):
        for dj in range(kw):
            total += xp[:, :, di:di + sh * (out_h - 1) + 1:sh, dj:dj + sw * (out_w - 1) + 1:sw]
    for i in range(out_h):
        for j in range(out_w):
            out[:, :, i, j] += total[:, :, i, j] / (kh * kw)
    return out
''',
    "whole_maps_reduced_per_image_and_channel": '''
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            out[b, c] = xp[b, c, :out_h * kh, :out_w * kw].reshape(out_h, kh, out_w, kw).mean(axis=(1, 3))
    return out
''',
    "a_helper_that_returns_the_whole_result": '''
    def everything(data):
        return np.lib.stride_tricks.sliding_window_view(data, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw].mean(axis=(-2, -1))

    for i in range(out_h):
        for j in range(out_w):
            out[:, :, i, j] = everything(xp)[:, :, i, j]
    return out
''',
    "a_one_element_sum_of_the_whole_result": '''
    whole = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw].mean(axis=(-2, -1))
    for i in range(out_h):
        for j in range(out_w):
            out[:, :, i, j] = whole[:, :, i:i + 1, j:j + 1].sum(axis=(2, 3))
    return out
''',
}
# Issue 50 item 5: lesson 2 asks for the window values computed in the loop nest. These honest forms lost
# points (a helper computing the window's mean, a float64 sum) or must keep them (any order, accumulators).
LESSON2_HONEST_MORE = {
    "a_top_level_helper_computing_the_window_mean": ("""
def window_mean(x, b, c, r0, r1, c0, c1):
    return x[b, c, r0:r1, c0:c1].mean()

""", """
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
                    out[b, c, i, j] = window_mean(xp, b, c, i * sh, i * sh + kh, j * sw, j * sw + kw)
    return out
"""),
    "a_float64_window_sum": ("", """
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
                    out[b, c, i, j] = xp[b, c, i * sh:i * sh + kh, j * sw:j * sw + kw].astype(np.float64).sum() / (kh * kw)
    return out
"""),
    "an_accumulator_acc_equals_acc_plus": ("", """
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
                    acc = 0.0
                    for di in range(kh):
                        for dj in range(kw):
                            acc = acc + xp[b, c, i * sh + di, j * sw + dj]
                    out[b, c, i, j] = acc / (kh * kw)
    return out
"""),
    "columns_outside_rows_with_plus_equals": ("", """
    for j in range(out_w):
        for i in range(out_h):
            s = 0.0
            for di in range(kh):
                for dj in range(kw):
                    s += xp[:, :, i * sh + di, j * sw + dj]
            out[:, :, i, j] = s / (kh * kw)
    return out
"""),
}
# The tester's copy nests (2 points each): pooling computed on whole arrays, then copied item by item.
SHIFT_AND_ADD = """
    acc = np.zeros((x.shape[0], x.shape[1], xp.shape[2] - kh + 1, xp.shape[3] - kw + 1))
    for di in range(kh):
        for dj in range(kw):
            acc = acc + xp[:, :, di:di + acc.shape[2], dj:dj + acc.shape[3]]
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
                    out[b, c, i, j] = acc[b, c, i * sh, j * sw] / (kh * kw)
    return out
"""
BAND_MATRICES = """
    rows = np.zeros((out_h, xp.shape[2]))
    cols = np.zeros((out_w, xp.shape[3]))
    for i in range(out_h):
        rows[i, i * sh:i * sh + kh] = 1.0 / kh
    for j in range(out_w):
        cols[j, j * sw:j * sw + kw] = 1.0 / kw
    pooled = rows @ xp @ cols.T
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(out_h):
                for j in range(out_w):
                    out[b, c, i, j] = pooled[b, c, i, j]
    return out
"""


def _really_pools(source: str) -> None:
    import torch

    namespace = {"np": np}
    exec(compile(source, "<case>", "exec"), namespace)
    x = np.random.default_rng(3).random((2, 3, 7, 8))
    assert np.allclose(namespace["avg_pool2d_loops"](x, 2), torch.nn.functional.avg_pool2d(torch.tensor(x), 2).numpy())


@pytest.mark.parametrize("case", LESSON2_HONEST_MORE.values(), ids=LESSON2_HONEST_MORE.keys())
def test_honest_loop_forms_are_proved(case):
    source = case[0] + FORWARD + _PREAMBLE + case[1]
    _really_pools(source)
    check_output_loops(_Graded(source), "avg_pool2d_loops")


def test_a_shift_and_add_copy_is_proved_forbidden_with_its_line_in_the_cell():
    source = FORWARD + _PREAMBLE + SHIFT_AND_ADD
    _really_pools(source)
    graded = _Graded(source)
    graded.__student_cells__ = ["# my loops\n\n" + source]
    with pytest.raises(AssertionError, match="only write values computed elsewhere") as caught:
        check_output_loops(graded, "avg_pool2d_loops")
    assert not isinstance(caught.value, NeedsReview)
    assert "line 20 of its cell, `out[b, c, i, j] = acc[b, c, i * sh, j * sw] / (kh * kw)`" in str(caught.value)


def test_band_matrices_copied_are_never_allowed():
    source = FORWARD + _PREAMBLE + BAND_MATRICES
    _really_pools(source)
    with pytest.raises(AssertionError, match="only write values computed elsewhere"):
        check_output_loops(_Graded(source), "avg_pool2d_loops")


def test_no_loops_is_forbidden_and_unreadable_loops_go_to_review():
    """Three verdicts: no loop over the data, every loop read, is proved forbidden (0); loops the rule cannot read as a nest over the
    outputs (a ``while``) are unproved: the instructor reads them (NeedsReview, the construct's line quoted)."""
    for body in ("    return out\n", "    n, c = (int(v) for v in x.shape[:2])\n    return xp[:n, :c, ::sh, ::sw] * 0\n"):
        with pytest.raises(AssertionError) as caught:  # (every loop read, none over the data)
            check_output_loops(_Graded(FORWARD + _PREAMBLE + body), "avg_pool2d_loops")
        assert not isinstance(caught.value, NeedsReview)
    looped = FORWARD + _PREAMBLE + """
    i = 0
    while i < out_h:
        for j in range(out_w):
            out[:, :, i, j] = xp[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw].mean(axis=(2, 3))
        i += 1
    return out
"""
    _really_pools(looped)
    with pytest.raises(NeedsReview) as caught:
        check_output_loops(_Graded(looped), "avg_pool2d_loops")
    assert "`while i < out_h:`" in caught.value.answer, caught.value.answer


BACKWARD = "def avg_pool2d_loops_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):\n"
_BACKWARD_PREAMBLE = '''
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    sh, sw = (stride or kh, stride or kw) if isinstance(stride, int) else (stride[0] or kh, stride[1] or kw)
    b_, c_, h, w = (int(n) for n in input_shape)
    grad_x = np.zeros((b_, c_, h, w), grad_out.dtype)
'''
BACKWARD_HONEST = '''
    for i in range(grad_out.shape[2]):
        for j in range(grad_out.shape[3]):
            grad_x[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw] += grad_out[:, :, i:i + 1, j:j + 1] / (kh * kw)
    return grad_x
'''
BACKWARD_COPY = '''
    spread = np.repeat(np.repeat(grad_out, kh, axis=2), kw, axis=3) / (kh * kw)
    for i in range(h):
        for j in range(w):
            grad_x[:, :, i, j] += spread[:, :, i, j]
    return grad_x
'''


@pytest.mark.parametrize("body", LESSON2_HONEST.values(), ids=LESSON2_HONEST.keys())
def test_output_loops_that_sum_windows_pass(body):
    check_output_loops(_Graded(FORWARD + _PREAMBLE + body), "avg_pool2d_loops")


@pytest.mark.parametrize("body", LESSON2_COPIES.values(), ids=LESSON2_COPIES.keys())
def test_output_loops_that_copy_a_whole_array_result_are_refused(body):
    """Before issue 41 every one of these passed: the rule counted loops around a write, not their work."""
    with pytest.raises(AssertionError, match=r"only write values computed elsewhere.*sum each window"):
        check_output_loops(_Graded(FORWARD + _PREAMBLE + body), "avg_pool2d_loops")


def test_backward_loops_that_scatter_pass_and_a_copied_whole_array_result_is_refused():
    check_output_loops(_Graded(BACKWARD + _BACKWARD_PREAMBLE + BACKWARD_HONEST), "avg_pool2d_loops_backward")
    with pytest.raises(AssertionError, match="only write values computed elsewhere"):
        check_output_loops(_Graded(BACKWARD + _BACKWARD_PREAMBLE + BACKWARD_COPY), "avg_pool2d_loops_backward")


NUMPY_BACKWARD = ("def avg_pool2d_numpy_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, "
                  "count_include_pad=True):\n")
_TAIL = '''
    out = np.zeros(tuple(input_shape))
    for a in range(kh):
        for b in range(kw):
            out[:, :, a:a + 1, b:b + 1] += grad_out[:, :, :1, :1]
    return out
'''
LESSON3_HONEST = {
    # issue 43: both refused a correct solution
    "map_int_over_input_shape": (NUMPY_BACKWARD + '''
    n, c, h, w = map(int, input_shape)
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
''' + _TAIL),
    "offsets_from_a_helper_that_reads_kernel_size": ('''
def _geometry(kernel_size, stride, padding):
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    sh, sw = (stride, stride) if isinstance(stride, int) else tuple(stride)
    return kh, kw, sh or kh, sw or kw

''' + NUMPY_BACKWARD + '''
    kh, kw, sh, sw = _geometry(kernel_size, stride, padding)
''' + _TAIL),
    "a_pair_helper_unpacking_a_generator": ('''
def _pair(v, name):
    if isinstance(v, int):
        return v, v
    a, b = (int(t) for t in v)
    return a, b

''' + NUMPY_BACKWARD + '''
    kh, kw = _pair(kernel_size, "kernel_size")
''' + _TAIL),
    "a_pair_helper_building_a_list": ('''
def _pair(v):
    if np.ndim(v) == 0:
        return [int(v)] * 2
    return [int(t) for t in v]

''' + NUMPY_BACKWARD + '''
    kh, kw = _pair(kernel_size)
''' + _TAIL),
    "a_helper_returning_a_dict": ('''
def _geometry(kernel_size):
    k = (kernel_size,) * 2 if isinstance(kernel_size, int) else tuple(kernel_size)
    return {"kh": k[0], "kw": k[1]}

''' + NUMPY_BACKWARD + '''
    g = _geometry(kernel_size)
    kh, kw = g["kh"], g["kw"]
''' + _TAIL),
    # issue 50: the same kernel loop as itertools.product, refused as "a loop the rule cannot count" before
    "ndindex_over_the_kernel": (NUMPY_BACKWARD + '''
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = np.zeros(tuple(input_shape))
    for a, b in np.ndindex(kh, kw):
        out[:, :, a:a + 1, b:b + 1] += grad_out[:, :, :1, :1]
    return out
'''),
    "ndindex_of_the_kernel_tuple": (NUMPY_BACKWARD + '''
    kernel = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    out = np.zeros(tuple(input_shape))
    for a, b in np.ndindex((kernel[0], kernel[1])):
        out[:, :, a:a + 1, b:b + 1] += grad_out[:, :, :1, :1]
    return out
'''),
    "itertools_product_of_the_kernel": ("import itertools\n\n\n" + NUMPY_BACKWARD + '''
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = np.zeros(tuple(input_shape))
    for a, b in itertools.product(range(kh), range(kw)):
        out[:, :, a:a + 1, b:b + 1] += grad_out[:, :, :1, :1]
    return out
'''),
}
LESSON3_REFUSED = {
    "ndindex_over_the_output": (NUMPY_BACKWARD + '''
    out = np.zeros(tuple(input_shape))
    for i, j in np.ndindex(grad_out.shape[2], grad_out.shape[3]):
        out[:, :, i, j] += grad_out[:, :, i, j]
    return out
''', "np.ndindex"),
    "ndindex_of_the_whole_shape": (NUMPY_BACKWARD + '''
    out = np.zeros(tuple(input_shape))
    for index in np.ndindex(grad_out.shape):
        out[index] += grad_out[index]
    return out
''', "np.ndindex"),
    "rows_after_map_int": (NUMPY_BACKWARD + '''
    n, c, h, w = map(int, input_shape)
    out = np.zeros((n, c, h, w))
    for a in range(h):
        out[:, :, a] += 1
    return out
''', "for a in range(h)"),
    "map_over_the_data": (NUMPY_BACKWARD + '''
    return np.array(list(map(float, grad_out.ravel())))
''', "map(float, grad_out.ravel())"),
    "map_of_a_lambda": (NUMPY_BACKWARD + '''
    return np.array(list(map(lambda v: v * 2, input_shape)))
''', "map"),
    "offsets_from_a_helper_that_reads_the_data": ('''
def _geometry(grad_out):
    return grad_out.shape[2], grad_out.shape[3]

''' + NUMPY_BACKWARD + '''
    kh, kw = _geometry(grad_out)
''' + _TAIL, "for a in range(kh)"),
}


@pytest.mark.parametrize("source", LESSON3_HONEST.values(), ids=LESSON3_HONEST.keys())
def test_kernel_loops_accept_honest_bounded_forms(source):
    check_kernel_loops(_Graded(source), "avg_pool2d_numpy_backward")


@pytest.mark.parametrize("case", LESSON3_REFUSED.values(), ids=LESSON3_REFUSED.keys())
def test_kernel_loops_still_refuse_what_they_cannot_bound(case):
    source, words = case
    with pytest.raises(AssertionError, match="for di in range") as refused:
        check_kernel_loops(_Graded(source), "avg_pool2d_numpy_backward")
    assert words in str(refused.value)


def test_parameters_are_read_by_their_position_not_their_name():
    """Issue 50 item 3: the tests call ``avg_pool2d_numpy(x, kernel_size, ...)`` by position, so a loop over the
    images reads as bounded only when the bound comes from the argument in the kernel_size position; a data
    argument renamed ``kernel_size`` (and the kernel renamed ``x``) is data."""
    honest = "def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):" + '''
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = np.zeros(x.shape)
    for a in range(kh):
        out += x
    return out
'''
    check_kernel_loops(_Graded(honest), "avg_pool2d_numpy")
    renamed = '''def avg_pool2d_numpy(kernel_size, x, stride=0, padding=0, count_include_pad=True):
    out = np.zeros(kernel_size.shape)
    for b in range(len(kernel_size)):
        out[b] = kernel_size[b]
    return out
'''
    with pytest.raises(AssertionError, match="for b in range"):
        check_kernel_loops(_Graded(renamed), "avg_pool2d_numpy")
