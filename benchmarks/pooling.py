"""The pooling measurements: each course stage against ``torch.nn.functional.avg_pool2d``.

A *group* is one direction (forward, backward, forward+backward) of one case (input shape and kernel,
stride, padding). Its entries are timed together in interleaved rounds; every entry's ratio is the
median of per-round ratios against ``F.avg_pool2d`` NCHW with the same torch thread count (the
baseline) and, the same way, against ``F.avg_pool2d`` on channels-last (the anchor: the fastest layout);
its time is also shown as a multiple of the time the bytes it must move take at the measured bandwidth
floor.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import partial
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from autograder.solutions import Solutions
from course.timing import compare, median_ratio


@dataclass(frozen=True)
class Case:
    """One input shape with one pooling configuration (float32, count_include_pad=True)."""

    shape: tuple[int, int, int, int]
    kernel: int
    stride: int
    padding: int

    @property
    def name(self) -> str:
        return f"[{','.join(map(str, self.shape))}] k{self.kernel} s{self.stride} p{self.padding}"

    def out_shape(self, shape=None) -> tuple[int, int, int, int]:
        b, c, h, w = shape or self.shape
        size = lambda n: (n + 2 * self.padding - self.kernel) // self.stride + 1  # noqa: E731
        return b, c, size(h), size(w)


@dataclass
class Entry:
    """One row of a group before timing. ``fn`` None means not available (``note`` says why)."""

    impl: str
    threads: int | None
    fn: Callable[[], object] | None
    note: str = ""
    bytes_moved: int | None = None
    outputs: int = 1
    per_element: bool = False
    baseline: bool = False
    anchor: bool = False

    @property
    def key(self) -> str:
        return f"{self.impl} @{self.threads}" if self.threads is not None else self.impl


@dataclass
class Row:
    """One measured (or not available) line of the table."""

    group: str
    case: str
    direction: str
    impl: str
    threads: int | None
    status: str  # "ok", "not available", "error"
    time_s: float | None = None
    time_per_output_s: float | None = None
    ratio: float | None = None
    ratio_anchor: float | None = None  # against the anchor (F.avg_pool2d channels-last) with the same threads
    floor_multiple: float | None = None
    fraction_of_peak: float | None = None
    bytes_moved: int | None = None
    baseline: bool = False
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


#: Lesson 3's functions given the anchor's channels-last memory.
NUMPY_CL = "NumPy (lesson 3) channels-last"


def nbytes(shape, itemsize: int = 4) -> int:
    return math.prod(shape) * itemsize


def agrees(actual, expected, rtol: float = 1e-4, atol: float = 1e-5) -> str:
    """``""`` when ``actual`` matches ``expected`` (shape and values), else a short reason."""
    actual = actual.detach().cpu().numpy() if isinstance(actual, torch.Tensor) else np.asarray(actual)
    expected = expected.detach().cpu().numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    if actual.shape != expected.shape:
        return f"WRONG shape {actual.shape}, expected {expected.shape}"
    if not np.allclose(actual, expected, rtol=rtol, atol=atol):
        return f"WRONG values (max abs error {np.max(np.abs(actual.astype(np.float64) - expected)):.2g})"
    return ""


def checked(impl: str, threads, run: Callable[[], object], expected, **kw) -> Entry:
    """An entry for ``run`` after one checked call: a wrong or failing implementation is not timed."""
    try:
        problem = agrees(run(), expected)
    except Exception as error:  # noqa: BLE001 - reported in the table
        problem = f"error: {type(error).__name__}: {error}"
    if problem:
        return Entry(impl, threads, None, note=problem, **kw)
    return Entry(impl, threads, run, **kw)


def unavailable(impl: str, threads, lesson: Solutions, note: str = "", **kw) -> Entry:
    """An entry for a lesson that is not available: its row says so, with the reason."""
    reason = f"not available: {lesson.lesson}: {lesson.reason}"
    return Entry(impl, threads, None, note=f"{reason}; {note}" if note else reason, **kw)


class Pool:
    """``Pool(fn, *args)(x)`` is ``fn(x, *args)``: pooling arguments bound now, the input given later.

    Every timed callable holds its own function and arrays (``Pool`` or :func:`functools.partial`): a
    lambda would see a later rebinding of a shared name and time the wrong thing.
    """

    def __init__(self, fn: Callable, *args):
        self.fn, self.args = fn, args

    def __call__(self, x):
        return self.fn(x, *self.args)


def as_map(pool: Callable, x: torch.Tensor) -> torch.Tensor:
    """``pool(x)`` reshaped to ``[B, C, 1, 1]`` (``x.mean((2, 3))`` returns ``[B, C]``)."""
    return pool(x).reshape(x.shape[0], x.shape[1], 1, 1)


def thread_counts(all_threads: int) -> list[int]:
    """The thread counts to measure torch at: one, and all (once when they are the same)."""
    return [1] if all_threads == 1 else [1, all_threads]


def pool_entries(case: Case, lessons: dict[str, Solutions], device: str, all_threads: int,
                 loop_shape: tuple[int, int, int, int] | None, seed: int = 0) -> dict[str, list[Entry]]:
    """``{direction: [Entry]}`` for one case: forward, backward and forward+backward. ``lessons`` maps each
    stage of :data:`autograder.solutions.STAGES` to its reference solutions."""
    k, s, p = case.kernel, case.stride, case.padding
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(case.shape, generator=gen).to(device)
    out_shape = case.out_shape()
    g = torch.randn(out_shape, generator=gen).to(device)
    x_cl, g_cl = x.contiguous(memory_format=torch.channels_last), g.contiguous(memory_format=torch.channels_last)
    cpu = device == "cpu"
    threads = thread_counts(all_threads) if cpu else [None]
    fwd_bytes = nbytes(case.shape) + nbytes(out_shape)
    outputs = math.prod(out_shape)
    expected = F.avg_pool2d(x, k, s, p)
    expected_grad = torch.ops.aten.avg_pool2d_backward(g, x, [k, k], [s, s], [p, p], False, True, None)

    def aten_backward(grad, inp):
        return partial(torch.ops.aten.avg_pool2d_backward, grad, inp, [k, k], [s, s], [p, p], False, True, None)

    def autograd_step(pool, inp):
        leaf = inp.detach().clone().requires_grad_(True)

        def step():
            leaf.grad = None
            pool(leaf).backward(g)
            return leaf.grad
        return step

    forward, backward, both = [], [], []
    for t in threads:
        forward.append(Entry("F.avg_pool2d NCHW", t, partial(F.avg_pool2d, x, k, s, p), baseline=True,
                             bytes_moved=fwd_bytes, outputs=outputs))
        backward.append(Entry("F.avg_pool2d NCHW", t, aten_backward(g, x), baseline=True, bytes_moved=fwd_bytes,
                              outputs=outputs, note="aten avg_pool2d_backward"))
        both.append(Entry("F.avg_pool2d NCHW", t, autograd_step(Pool(F.avg_pool2d, k, s, p), x),
                          baseline=True, bytes_moved=2 * fwd_bytes, outputs=outputs, note="autograd"))
    for t in threads:
        forward.append(checked("F.avg_pool2d channels-last", t, partial(F.avg_pool2d, x_cl, k, s, p), expected,
                               bytes_moved=fwd_bytes, outputs=outputs, anchor=True))
        backward.append(checked("F.avg_pool2d channels-last", t, aten_backward(g_cl, x_cl), expected_grad,
                                bytes_moved=fwd_bytes, outputs=outputs, anchor=True))

    one = 1 if cpu else None
    numpy_lesson, torch_lesson, loops_lesson = lessons["numpy"], lessons["function"], lessons["loops"]
    if cpu:
        xn, gn = x.numpy(), g.numpy()
        kw = dict(bytes_moved=fwd_bytes, outputs=outputs)
        # On NCHW memory (against F NCHW) and on the anchor's own channels-last memory (x_cl as NumPy sees it:
        # shape [B, C, H, W], strides of [B, H, W, C]), so each comparison is on the same bytes.
        for impl, xs_, gs_ in (("NumPy (lesson 3)", xn, gn), (NUMPY_CL, x_cl.numpy(), g_cl.numpy())):
            if numpy_lesson.available:
                forward.append(checked(impl, one, partial(numpy_lesson["avg_pool2d_numpy"], xs_, k, s, p),
                                       expected, **kw))
                backward.append(checked(impl, one, partial(numpy_lesson["avg_pool2d_numpy_backward"], gs_,
                                                           xs_.shape, k, s, p), expected_grad, **kw))
            else:
                forward.append(unavailable(impl, one, numpy_lesson, **kw))
                backward.append(unavailable(impl, one, numpy_lesson, **kw))
    if torch_lesson.available:
        student_pool = torch_lesson["avg_pool2d_torch"]
        forward.append(checked("Function (lesson 4)", one, partial(student_pool, x, k, s, p), expected,
                               bytes_moved=fwd_bytes, outputs=outputs))
        step = autograd_step(Pool(student_pool, k, s, p), x)
        both.append(checked("Function (lesson 4)", one, step, expected_grad, bytes_moved=2 * fwd_bytes,
                            outputs=outputs))
    else:
        forward.append(unavailable("Function (lesson 4)", one, torch_lesson))
        both.append(unavailable("Function (lesson 4)", one, torch_lesson))
    if cpu and loop_shape is not None:
        small_gen = torch.Generator().manual_seed(seed + 1)
        xs = torch.randn(loop_shape, generator=small_gen)
        small_out = case.out_shape(loop_shape)
        gs = torch.randn(small_out, generator=small_gen)
        note = f"input {list(loop_shape)}, per output element"
        kw = dict(outputs=math.prod(small_out), per_element=True, note=note)
        if loops_lesson.available:
            xsn, gsn = xs.numpy(), gs.numpy()
            small_expected = F.avg_pool2d(xs, k, s, p)
            small_grad = torch.ops.aten.avg_pool2d_backward(gs, xs, [k, k], [s, s], [p, p], False, True, None)
            forward.append(checked("loops (lesson 2)", one, partial(loops_lesson["avg_pool2d_loops"], xsn, k, s, p),
                                   small_expected, **kw))
            backward.append(checked("loops (lesson 2)", one, partial(loops_lesson["avg_pool2d_loops_backward"], gsn,
                                                                     xsn.shape, k, s, p), small_grad, **kw))
            for entry in (forward[-1], backward[-1]):
                entry.note = entry.note or note
        else:
            forward.append(unavailable("loops (lesson 2)", one, loops_lesson, **kw))
            backward.append(unavailable("loops (lesson 2)", one, loops_lesson, **kw))
    return {"forward": forward, "backward": backward, "forward+backward": both}


def gap_entries(shape, lessons: dict[str, Solutions], device: str, seed: int = 0) -> dict[str, list[Entry]]:
    """Global average pooling three ways (plus the lessons' whole-map pooling), one thread on the CPU."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=gen).to(device)
    b, c, h, w = shape
    g = torch.randn((b, c, 1, 1), generator=gen).to(device)
    t = 1 if device == "cpu" else None
    out = F.avg_pool2d(x, (h, w))
    grad = torch.ops.aten.avg_pool2d_backward(g, x, [h, w], [h, w], [0, 0], False, True, None)
    fwd_bytes = nbytes(shape) + nbytes(out.shape)
    kw = dict(bytes_moved=fwd_bytes, outputs=b * c)
    adaptive = torch.nn.AdaptiveAvgPool2d(1)

    def autograd_step(pool):
        leaf = x.detach().clone().requires_grad_(True)

        def step():
            leaf.grad = None
            pool(leaf).reshape(b, c, 1, 1).backward(g)
            return leaf.grad
        return step

    ways = {
        "F.avg_pool2d whole map": Pool(F.avg_pool2d, (h, w)),
        "x.mean((2, 3))": lambda v: v.mean((2, 3)),
        "AdaptiveAvgPool2d(1)": adaptive,
    }
    forward, backward, both = [], [], []
    for i, (name, pool) in enumerate(ways.items()):
        forward.append(checked(name, t, partial(as_map, pool, x), out, baseline=i == 0, **kw))
        both.append(checked(name, t, autograd_step(pool), grad, baseline=i == 0, note="autograd",
                            bytes_moved=2 * fwd_bytes, outputs=b * c))
    backward.append(Entry("F.avg_pool2d whole map", t, partial(torch.ops.aten.avg_pool2d_backward,
                          g, x, [h, w], [h, w], [0, 0], False, True, None), baseline=True,
                          note="aten avg_pool2d_backward", **kw))
    torch_lesson, numpy_lesson = lessons["function"], lessons["numpy"]
    if torch_lesson.available:
        student_pool = torch_lesson["avg_pool2d_torch"]
        forward.append(checked("Function (lesson 4) whole map", t, partial(student_pool, x, (h, w)), out, **kw))
        both.append(checked("Function (lesson 4) whole map", t, autograd_step(Pool(student_pool, (h, w))),
                            grad,
                            bytes_moved=2 * fwd_bytes, outputs=b * c))
    else:
        forward.append(unavailable("Function (lesson 4) whole map", t, torch_lesson, **kw))
        both.append(unavailable("Function (lesson 4) whole map", t, torch_lesson, **kw))
    if device == "cpu":
        xn, gn = x.numpy(), g.numpy()
        if numpy_lesson.available:
            forward.append(checked("NumPy (lesson 3) whole map", t, partial(numpy_lesson["avg_pool2d_numpy"], xn, (h, w)),
                                   out, **kw))
            backward.append(checked("NumPy (lesson 3) whole map", t, partial(numpy_lesson["avg_pool2d_numpy_backward"],
                                                                               gn, xn.shape, (h, w)), grad, **kw))
        else:
            forward.append(unavailable("NumPy (lesson 3) whole map", t, numpy_lesson, **kw))
            backward.append(unavailable("NumPy (lesson 3) whole map", t, numpy_lesson, **kw))
    return {"forward": forward, "backward": backward, "forward+backward": both}


def measure_group(group: str, case: str, direction: str, entries: list[Entry], rounds: int, *, target: float,
                  bandwidth: float | None, peak: float | None = None, sync=None, timer=None) -> tuple[list[Row], object]:
    """Time the available entries of one group in interleaved rounds and turn them into rows."""
    live = [e for e in entries if e.fn is not None]
    keys = [e.key for e in live]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate entries in {group} {case} {direction}: {keys}")
    kwargs = dict(rounds=rounds, min_time=target, sync=sync, threads={e.key: e.threads for e in live})
    if timer is not None:
        kwargs["clock"] = timer
    timings = compare({e.key: e.fn for e in live}, **kwargs) if live else None
    baselines = {e.threads: e for e in live if e.baseline}
    anchors = {e.threads: e for e in live if e.anchor}
    rows = []
    for e in entries:
        row = Row(group, case, direction, e.impl, e.threads, "ok", baseline=e.baseline, note=e.note)
        if e.fn is None:
            row.status = "not available" if e.note.startswith("not available") else "error"
            rows.append(row)
            continue
        row.time_s = timings["median"][e.key]
        row.time_per_output_s = row.time_s / e.outputs
        base = baselines.get(e.threads)
        if base is not None:
            row.ratio = median_ratio(timings["times"][e.key], timings["times"][base.key],
                                     scale=base.outputs / e.outputs)
        anchor = anchors.get(e.threads)
        if anchor is not None:
            row.ratio_anchor = median_ratio(timings["times"][e.key], timings["times"][anchor.key],
                                            scale=anchor.outputs / e.outputs)
        if e.bytes_moved and not e.per_element:
            row.bytes_moved = e.bytes_moved
            if bandwidth:
                row.floor_multiple = row.time_s / (e.bytes_moved / bandwidth)
            if peak:
                row.fraction_of_peak = e.bytes_moved / row.time_s / peak
        rows.append(row)
    return rows, timings
