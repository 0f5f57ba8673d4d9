"""NumPy designs for lesson 3's forward at kernel 3, stride 2, padding 1, timed side by side.

``python -m benchmarks.numpy_designs`` (add ``--quick`` for a small shape) times, in interleaved rounds on
one thread, lesson 3's reference (on NCHW memory and on the anchor's channels-last memory), ``F.avg_pool2d``
on NCHW and on channels-last (the anchor), and other ways to write the same forward in NumPy on NCHW
memory: the row pairs (even rows + odd rows, then the odd row above) in chunks of maps, with the column
passes on 2-D views or on 1-D stride-2 views of the flat row sums, and the three rows of every window
summed by ``np.einsum`` over a window view. Each runs with the chunk count the lesson's loop rule allows
(8) and with chunks small enough for a core's L2 cache (1 MiB of input each), which the loop rule does
not allow. It prints each one's time, its ratio to the anchor and its multiple of the memory-bandwidth
floor (the input read once and the output written once at ``np.copyto``'s speed): the figures behind
lesson 3's goals at kernel <= 3 in ``make bench``'s table.

The designs here are for measuring only (kernel 3, stride 2, padding 1, even H and W); none is a lesson's.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from numpy.lib.stride_tricks import as_strided

from autograder import solutions
from course.timing import bandwidth_floor, compare

SHAPES = {"full": (32, 64, 56, 56), "quick": (2, 8, 12, 12)}


def _rows_pairs(maps: np.ndarray, rows: np.ndarray) -> None:
    """rows [m, H/2, W] = rows 2i-1, 2i, 2i+1 of maps [m, H, W] summed (zero row above row 0)."""
    even, odd = maps[:, 0::2], maps[:, 1::2]
    np.add(even, odd, out=rows)
    np.add(rows[:, 1:], odd[:, :-1], out=rows[:, 1:])


def _rows_einsum(maps: np.ndarray, rows: np.ndarray) -> None:
    """As :func:`_rows_pairs`, the three rows of windows 1.. summed by ``np.einsum`` over a window view."""
    m, height, width = maps.shape
    s0, s1, s2 = maps.strides
    windows = as_strided(maps[:, 1:], shape=(m, height // 2 - 1, 3, width), strides=(s0, 2 * s1, s1, s2))
    np.einsum("miky->miy", windows, out=rows[:, 1:])
    np.add(maps[:, 0], maps[:, 1], out=rows[:, 0])


def _columns_2d(rows: np.ndarray, out: np.ndarray) -> None:
    """out [m, H/2, W/2] = columns 2j-1, 2j, 2j+1 of rows [m, H/2, W] summed, on 2-D strided views."""
    np.add(rows[..., 0::2], rows[..., 1::2], out=out)
    np.add(out[..., 1:], rows[..., 1:-1:2], out=out[..., 1:])


def _columns_flat(rows: np.ndarray, out: np.ndarray) -> None:
    """As :func:`_columns_2d`, on 1-D stride-2 views of the flat row sums (no loop per row); the shift by
    one column crosses into the row before at column 0, which is kept aside and put back."""
    flat, sums = rows.reshape(-1), out.reshape(-1)
    np.add(flat[0::2], flat[1::2], out=sums)
    first = out[..., 0].copy()
    np.add(sums[1:], flat[1::2][:-1], out=sums[1:])
    out[..., 0] = first


def design(rows_pass: Callable, columns_pass: Callable, chunks: int) -> Callable[[np.ndarray], np.ndarray]:
    """A forward x [B, C, H, W] -> [B, C, H/2, W/2] (kernel 3, stride 2, padding 1) in ``chunks`` chunks of maps."""
    def forward(x: np.ndarray) -> np.ndarray:
        batch, channels, height, width = x.shape
        maps = x.reshape(-1, height, width)
        out = np.empty((len(maps), height // 2, width // 2), x.dtype)
        size = -(-len(maps) // chunks)
        rows = np.empty((size, height // 2, width), x.dtype)
        for start in range(0, len(maps), size):
            part = slice(start, start + size)
            m = len(out[part])
            rows_pass(maps[part], rows[:m])
            columns_pass(rows[:m], out[part])
            out[part] *= x.dtype.type(1 / 9)
        return out.reshape(batch, channels, height // 2, width // 2)
    return forward


def designs(x: np.ndarray) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """Every design, by name, with 8 chunks (the loop rule's) and, where that is more, with 1 MiB of input per
    chunk."""
    l2 = x.nbytes // 2**20
    counts = {8: "8 chunks", **({l2: f"{l2} chunks of at most 1 MiB"} if l2 > 8 else {})}
    found = {}
    for chunks, label in counts.items():
        found[f"row pairs, 2-D column passes, {label}"] = design(_rows_pairs, _columns_2d, chunks)
        found[f"row pairs, flat column passes, {label}"] = design(_rows_pairs, _columns_flat, chunks)
        found[f"einsum rows, flat column passes, {label}"] = design(_rows_einsum, _columns_flat, chunks)
    return found


def measure(shape: tuple[int, int, int, int], rounds: int, min_time: float, copy_mib: int) -> list[dict]:
    """Rows ``{"name", "time_s", "ratio_anchor", "floor_multiple"}``: every design, lesson 3's reference and
    ``F.avg_pool2d``, checked against ``F.avg_pool2d`` first, then timed in interleaved rounds on one thread."""
    if shape[2] % 2 or shape[3] % 2:
        raise ValueError(f"shape must have even H and W, got {shape}")
    x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
    xt = torch.from_numpy(x)
    x_cl = xt.contiguous(memory_format=torch.channels_last)
    expected = F.avg_pool2d(xt, 3, 2, 1).numpy()
    functions: dict[str, Callable[[], object]] = {
        "F.avg_pool2d channels-last (anchor)": lambda: F.avg_pool2d(x_cl, 3, 2, 1),
        "F.avg_pool2d NCHW": lambda: F.avg_pool2d(xt, 3, 2, 1)}
    lesson = solutions.load_stage("numpy")
    if lesson.available:
        x_last = x_cl.numpy()  # the anchor's own memory: shape [B, C, H, W], NHWC strides
        functions["lesson 3 reference"] = lambda: lesson["avg_pool2d_numpy"](x, 3, 2, 1)
        functions["lesson 3 reference, channels-last memory"] = lambda: lesson["avg_pool2d_numpy"](x_last, 3, 2, 1)
    else:
        print(f"lesson 3 reference: {lesson.status()}", file=sys.stderr)
    for name, forward in designs(x).items():
        functions[name] = lambda forward=forward: forward(x)
    for name, function in functions.items():
        got = np.asarray(function())
        if not np.allclose(got, expected, rtol=1e-5, atol=1e-5):
            raise AssertionError(f"{name} disagrees with F.avg_pool2d: max error {np.abs(got - expected).max()}")
    floor = bandwidth_floor(copy_mib)
    floor_s = (x.nbytes + expected.nbytes) / (floor["gbytes_per_s"] * 1e9)
    timings = compare(functions, rounds=rounds, min_time=min_time, baseline="F.avg_pool2d channels-last (anchor)",
                      threads={name: 1 for name in functions})
    return [{"name": name, "time_s": timings["median"][name], "ratio_anchor": timings["ratio"][name],
             "floor_multiple": timings["median"][name] / floor_s} for name in functions]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"a small shape {SHAPES['quick']} (a smoke run)")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    args = parser.parse_args(argv)
    shape = SHAPES["quick" if args.quick else "full"]
    rows = measure(shape, args.rounds, 0.0005 if args.quick else 0.02, 16 if args.quick else 256)
    print(f"lesson 3 forward designs, float32 {list(shape)}, kernel 3, stride 2, padding 1, one thread, "
          f"{args.rounds} interleaved rounds (median):")
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        print(f"  {r['name']:<{width}}  {r['time_s'] * 1e3:8.3f} ms  {r['ratio_anchor']:5.2f}x anchor  "
              f"{r['floor_multiple']:5.2f}x the floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
