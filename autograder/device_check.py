"""A maintainer's one-command check of lesson 4's reference Function on a GPU.

    python -m autograder.device_check                     # on cuda: gradcheck, equality, timing
    python -m autograder.device_check --device cpu        # the same on the CPU ([32, 64, 56, 56])
    python -m autograder.device_check --device cpu --threads 1
    python -m autograder.device_check --device cpu --small   # a quick run of the whole logic

The reference ``AvgPool2dFunction`` comes from the solution cells of the lesson of ``source/`` that
defines it (``autograder.solutions``, never a second copy). On the device it runs ``torch.autograd.gradcheck`` in
float64 over the argument sweep, compares forward and backward with ``F.avg_pool2d`` in float32
(<= 1e-5), then times forward and forward+backward against ``F.avg_pool2d`` (synchronised,
interleaved rounds, median of ratios) on a large input. Without CUDA, ``--device cuda`` (the default)
prints ``skipped: no CUDA device`` and exits 0. Exit status 1 when a correctness check fails.
"""

from __future__ import annotations

import argparse
import sys
import time

from autograder.coursedir import CourseError
from autograder.solutions import Solutions, load_stage

#: (input shape, kernel_size, stride, padding); each runs with count_include_pad True and False.
SWEEP = [
    ((2, 3, 7, 9), 3, 2, 1),
    ((1, 2, 8, 6), 3, 1, 1),
    ((2, 2, 9, 10), (3, 2), (2, 3), (1, 0)),
    ((1, 1, 6, 6), 4, 2, 2),
    ((2, 3, 4, 7), (4, 3), (1, 2), (0, 1)),
    ((2, 4, 5, 5), 5, 0, 0),
    ((1, 3, 10, 7), 2, 3, 0),
    ((2, 2, 7, 7), (1, 3), (1, 1), (0, 1)),
    ((1, 2, 1, 9), (1, 3), (1, 2), (0, 1)),
    ((1, 3, 5, 7), (2, 3), 0, (1, 1)),
]

#: Timing configurations: kernel_size, stride, padding (count_include_pad True).
TIMING_CONFIGS = [(3, 2, 1), (2, 2, 0)]
LARGE = {"cuda": (128, 256, 56, 56), "cpu": (32, 64, 56, 56)}
SMALL = (2, 4, 12, 12)


def load_reference() -> Solutions:
    """The reference ``AvgPool2dFunction``, ``avg_pool2d_torch`` and ``AvgPool2d``: the solution cells of the
    lesson of ``source/`` that defines them (:func:`autograder.solutions.load_stage`)."""
    reference = load_stage("function")
    if not reference.available:
        raise CourseError(f"no reference Function to check: {reference.reason}")
    return reference


def torch_args(kernel_size, stride, padding) -> tuple:
    """F.avg_pool2d's arguments for the spec card's (stride 0 = kernel_size)."""
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    kernel = pair(kernel_size)
    return kernel, tuple(k if s == 0 else s for k, s in zip(kernel, pair(stride))), pair(padding)


def check_correctness(function, device: str, log=print) -> list[str]:
    """gradcheck (float64) and equality with F.avg_pool2d (float32, forward and backward) over SWEEP on
    ``device``; returns the failures (empty when all pass)."""
    import torch
    import torch.nn.functional as F

    from course.torch_checks import run_gradcheck

    failures = []
    generator = torch.Generator().manual_seed(0)
    worst_forward = worst_backward = 0.0
    for shape, k, s, p in SWEEP:
        for cip in (True, False):
            args = (k, s, p, cip)
            ok, message = run_gradcheck(function, shape, args, seed=1, device=device)
            if not ok:
                failures.append(message)
            x = torch.randn(shape, generator=generator).to(device).requires_grad_(True)
            ours = function(x, *args)
            theirs = F.avg_pool2d(x, *torch_args(k, s, p), count_include_pad=cip)
            upstream = torch.randn(theirs.shape, generator=generator).to(device)
            (grad_ours,) = torch.autograd.grad(ours, x, upstream)
            (grad_theirs,) = torch.autograd.grad(theirs, x, upstream)
            if ours.shape != theirs.shape or ours.device != theirs.device:
                failures.append(f"args {args} on {shape}: output {tuple(ours.shape)} on {ours.device},"
                                f" expected {tuple(theirs.shape)} on {theirs.device}")
                continue
            forward_error = (ours - theirs).abs().max().item()
            backward_error = (grad_ours - grad_theirs).abs().max().item()
            worst_forward, worst_backward = max(worst_forward, forward_error), max(worst_backward, backward_error)
            if forward_error > 1e-5 or backward_error > 1e-5:
                failures.append(f"args {args} on {shape}: max error forward {forward_error:.2e},"
                                f" backward {backward_error:.2e} (allowed 1e-5)")
    log(f"correctness on {device}: gradcheck (float64) and F.avg_pool2d equality (float32) over"
        f" {2 * len(SWEEP)} cases: {'OK' if not failures else f'{len(failures)} FAILED'};"
        f" worst float32 error forward {worst_forward:.2e}, backward {worst_backward:.2e}")
    return failures


def time_against_torch(function, device: str, shape, rounds: int, log=print) -> list[dict]:
    """Forward and forward+backward of ``function`` against F.avg_pool2d on ``device``; one row per
    configuration: ``{"config", "forward_ratio", "both_ratio", ...seconds}``."""
    import torch
    import torch.nn.functional as F

    from course.torch_checks import compare_times

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=generator).to(device)
    x_grad = x.clone().requires_grad_(True)
    rows = []
    for k, s, p in TIMING_CONFIGS:
        args = torch_args(k, s, p)
        upstream = torch.randn(F.avg_pool2d(x, *args).shape, generator=generator).to(device)
        forward = compare_times({"ours": lambda: function(x, k, s, p, True),
                                 "torch": lambda: F.avg_pool2d(x, *args)},
                                baseline="torch", device=device, rounds=rounds)
        both = compare_times(
            {"ours": lambda: torch.autograd.grad(function(x_grad, k, s, p, True), x_grad, upstream),
             "torch": lambda: torch.autograd.grad(F.avg_pool2d(x_grad, *args), x_grad, upstream)},
            baseline="torch", device=device, rounds=rounds)
        rows.append({"config": f"k={k} s={s} p={p}",
                     "forward_ours_ms": 1e3 * forward["ours"]["seconds"],
                     "forward_torch_ms": 1e3 * forward["torch"]["seconds"],
                     "forward_ratio": forward["ours"]["ratio"],
                     "both_ours_ms": 1e3 * both["ours"]["seconds"],
                     "both_torch_ms": 1e3 * both["torch"]["seconds"],
                     "both_ratio": both["ours"]["ratio"]})
    log(f"timing on {device}, float32 {list(shape)}, {rounds} interleaved rounds, median of ratios"
        + (f", {torch.get_num_threads()} CPU thread(s)" if device == "cpu" else ""))
    log(f"{'config':<14} {'fwd ours ms':>11} {'fwd torch ms':>12} {'fwd ratio':>9}"
        f" {'f+b ours ms':>11} {'f+b torch ms':>12} {'f+b ratio':>9}")
    for row in rows:
        log(f"{row['config']:<14} {row['forward_ours_ms']:>11.2f} {row['forward_torch_ms']:>12.2f}"
            f" {row['forward_ratio']:>9.2f} {row['both_ours_ms']:>11.2f} {row['both_torch_ms']:>12.2f}"
            f" {row['both_ratio']:>9.2f}")
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder.device_check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    parser.add_argument("--small", action="store_true", help=f"time a tiny input {list(SMALL)} (a quick run)")
    parser.add_argument("--rounds", type=int, default=None, help="timing rounds (default 15, 3 with --small)")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: torch's)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import torch

    device = args.device
    if device not in ("cuda", "cpu") and not device.startswith("cuda:"):
        print(f"error: --device must be cuda or cpu, got {device!r}", file=sys.stderr)
        return 2
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("skipped: no CUDA device (torch.cuda.is_available() is False); "
              "run with --device cpu to check the logic on the CPU")
        return 0
    if args.threads is not None:
        if args.threads < 1:
            print(f"error: --threads must be >= 1, got {args.threads}", file=sys.stderr)
            return 2
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else "CPU"
    try:
        reference = load_reference()
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"device check of {reference.lesson}'s AvgPool2dFunction on {device} ({name}), torch {torch.__version__}")
    function = reference["AvgPool2dFunction"].apply
    failures = check_correctness(function, device)
    for failure in failures:
        print(f"  FAILED: {failure}")
    shape = SMALL if args.small else LARGE["cuda" if device.startswith("cuda") else "cpu"]
    rounds = args.rounds if args.rounds is not None else (3 if args.small else 15)
    time_against_torch(function, device, shape, rounds)
    print(f"done in {time.perf_counter() - started:.1f} s: {'all checks passed' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
