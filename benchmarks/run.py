"""Run the benchmarks: ``python -m benchmarks.run [--quick] [--device cpu|cuda] [--out DIR]``.

Prints the table, writes ``<out>/<device>[-quick].json`` and ``.png`` (default out: benchmarks/results).
The default CPU run takes a few minutes on 2 cores; ``--quick`` (CI) uses tiny shapes and 2 rounds and
checks only that the harness works. ``--device cuda`` runs the GPU table and exits 0 with a message
when there is no CUDA device.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

from . import course_runs, pooling, report
from autograder import coursedir, solutions
from autograder.coursedir import CourseError
from .pooling import Case
from course.timing import bandwidth_floor, best_of, median_ratio

RESULTS = Path(__file__).resolve().parent / "results"

CPU_CASES = [Case((32, 64, 56, 56), 3, 2, 1), Case((32, 64, 56, 56), 2, 2, 0), Case((32, 64, 56, 56), 7, 1, 3),
             Case((8, 16, 224, 224), 3, 2, 1)]
CUDA_CASES = CPU_CASES + [Case((128, 256, 56, 56), 3, 2, 1), Case((128, 256, 56, 56), 7, 1, 3)]
QUICK_CASES = [Case((2, 3, 12, 12), 3, 2, 1), Case((2, 3, 12, 12), 2, 2, 0), Case((2, 3, 14, 14), 7, 1, 3),
               Case((1, 2, 24, 24), 3, 2, 1)]

#: Settings per mode: rounds, seconds per measurement, loop-input shape, GAP shape, copy size (MiB), repeats.
SETTINGS = {
    "full": dict(cases=CPU_CASES, rounds=7, target=0.02, loop_shape=(1, 2, 16, 16), gap_shape=(32, 512, 7, 7),
                 copy_mib=256, copy_repeats=7),
    "quick": dict(cases=QUICK_CASES, rounds=2, target=0.0005, loop_shape=(1, 1, 8, 8), gap_shape=(2, 8, 7, 7),
                  copy_mib=16, copy_repeats=3),
    "cuda": dict(cases=CUDA_CASES, rounds=9, target=0.02, loop_shape=None, gap_shape=(128, 512, 7, 7),
                 copy_mib=1024, copy_repeats=10),
    "cuda-quick": dict(cases=QUICK_CASES, rounds=2, target=0.0005, loop_shape=None, gap_shape=(2, 8, 7, 7),
                       copy_mib=16, copy_repeats=3),
}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes, 2 rounds: checks the harness (CI)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda / cuda:N for the GPU table")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the JSON and PNG (default: %(default)s)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds per group (default: by mode)")
    parser.add_argument("--root", type=Path, default=coursedir.REPO, help="course root holding source/")
    parser.add_argument("--no-notebooks", action="store_true", help="skip timing the lesson notebooks")
    parser.add_argument("--no-grading", action="store_true", help="skip the grading throughput")
    parser.add_argument("--grading-lessons", nargs="*", metavar="LESSON",
                        help="lessons of the grading batch (default: every lesson of source/)")
    parser.add_argument("--grading-students", type=int, default=1,
                        help="reference submissions per lesson in the grading batch (default: %(default)s)")
    return parser.parse_args(argv)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def device_peak(device: str, mib: int, repeats: int) -> dict:
    """The device's peak bandwidth, measured: the best ``dst.copy_(src)`` of ``mib`` MiB on the device."""
    src = torch.ones(mib * 2**20 // 4, device=device)
    dst = torch.empty_like(src)
    best = best_of(partial(dst.copy_, src), repeats, sync=partial(torch.cuda.synchronize, device))
    moved = 2 * src.numel() * 4
    return {"method": f"tensor.copy_ of {mib} MiB on {device}", "repeats": repeats, "bytes_moved": moved,
            "best_s": best, "gbytes_per_s": moved / best / 1e9}


def measure_pooling(settings: dict, lessons: dict, device: str, rounds: int,
                    refresh_floor=lambda: None) -> tuple[list[dict], dict]:
    """Every pooling and GAP group; returns the rows (dicts) and the loops -> NumPy speed-ups.

    ``refresh_floor()`` runs before each case: the bandwidth floor is measured again between cases and the
    best copy of the whole run is used (a copy slowed by another process's load would flatter everyone).
    """
    sync = partial(torch.cuda.synchronize, device) if device.startswith("cuda") else None
    all_threads = torch.get_num_threads()
    rows, speedups = [], {}
    for case in settings["cases"]:
        refresh_floor()
        groups = pooling.pool_entries(case, lessons, device, all_threads, settings["loop_shape"])
        for direction, entries in groups.items():
            log(f"  {case.name} {direction} ...")
            measured, timings = pooling.measure_group("pooling", case.name, direction, entries, rounds,
                                                      target=settings["target"], bandwidth=None, sync=sync)
            for row in measured:
                rows.append(dict(row.as_dict(), shape=list(case.shape), kernel=case.kernel, stride=case.stride,
                                 padding=case.padding))
            if device == "cpu" and direction in ("forward", "backward"):
                loops = next(e for e in entries if e.impl == "loops (lesson 2)")
                numpy_entry = next(e for e in entries if e.impl == "NumPy (lesson 3)")
                value = None
                if loops.fn is not None and numpy_entry.fn is not None:
                    value = median_ratio(timings["times"][loops.key], timings["times"][numpy_entry.key],
                                         scale=numpy_entry.outputs / loops.outputs)
                speedups[f"{case.name} | {direction}"] = value
        del groups
    refresh_floor()
    shape = settings["gap_shape"]
    gap_name = f"[{','.join(map(str, shape))}] GAP"
    for direction, entries in pooling.gap_entries(shape, lessons, device).items():
        log(f"  {gap_name} {direction} ...")
        measured, _ = pooling.measure_group("GAP", gap_name, direction, entries, rounds, target=settings["target"],
                                            bandwidth=None, sync=sync)
        rows += [dict(r.as_dict(), shape=list(shape)) for r in measured]
    refresh_floor()
    return rows, speedups


def best_floor(samples: list[dict]) -> dict:
    """The fastest copy of the run (the floor), with every sample's GB/s kept for the record."""
    best = dict(max(samples, key=lambda sample: sample["gbytes_per_s"]))
    best["samples_gbytes_per_s"] = [round(sample["gbytes_per_s"], 2) for sample in samples]
    best["repeats"] = sum(sample["repeats"] for sample in samples)
    return best


def apply_floor(rows: list[dict], bytes_per_s: float, cuda: bool) -> None:
    """Each row's time as a multiple of moving its bytes at the floor (CPU) or its fraction of peak (CUDA)."""
    for row in rows:
        if row.get("bytes_moved") and row.get("time_s"):
            if cuda:
                row["fraction_of_peak"] = row["bytes_moved"] / row["time_s"] / bytes_per_s
            else:
                row["floor_multiple"] = row["time_s"] / (row["bytes_moved"] / bytes_per_s)


def run(args: argparse.Namespace) -> int:
    cuda = args.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        print(f"CUDA is not available here (torch {torch.__version__}, "
              f"cuda build: {torch.version.cuda or 'none'}): skipping the GPU benchmarks. "
              "Run `python -m benchmarks.run --device cuda` on a machine with a CUDA GPU.")
        return 0
    if not cuda and args.device != "cpu":
        print(f"--device must be cpu, cuda or cuda:N, got {args.device!r}", file=sys.stderr)
        return 2
    mode = ("cuda" if cuda else "full") if not args.quick else ("cuda-quick" if cuda else "quick")
    settings = SETTINGS[mode]
    rounds = args.rounds or settings["rounds"]
    started = time.perf_counter()
    torch.manual_seed(0)
    device_name = torch.cuda.get_device_name(args.device) if cuda else f"CPU ({platform.processor() or platform.machine()})"
    result = {"meta": {"device": device_name, "torch_device": args.device, "mode": "quick" if args.quick else "full",
                       "rounds": rounds, "torch": torch.__version__, "numpy": np.__version__,
                       "python": platform.python_version(), "cpus": os.cpu_count(),
                       "threads_all": torch.get_num_threads(),
                       "load_start": " ".join(f"{v:.2f}" for v in os.getloadavg()),
                       "started": dt.datetime.now().isoformat(timespec="seconds"),
                       "cases": [c.name for c in settings["cases"]]}}
    lessons = {stage: solutions.load_stage(stage, args.root) for stage in solutions.STAGES}
    result["lessons"] = {stage: {"lesson": s.lesson, "available": s.available, "status": s.status(),
                                 "reason": s.reason, "names": sorted(s.names)} for stage, s in lessons.items()}
    log(f"benchmarks ({mode}) on {device_name}: " + ", ".join(f"{n} {s.status()}" for n, s in lessons.items()))
    samples: list[dict] = []
    if cuda:
        refresh = lambda: samples.append(device_peak(args.device, settings["copy_mib"], settings["copy_repeats"]))  # noqa: E731
    else:
        refresh = lambda: samples.append(bandwidth_floor(settings["copy_mib"], settings["copy_repeats"]))  # noqa: E731
    result["rows"], result["speedups"] = measure_pooling(settings, lessons, args.device, rounds, refresh)
    floor = best_floor(samples)
    result["peak_bandwidth" if cuda else "bandwidth"] = floor
    result["bandwidth" if cuda else "peak_bandwidth"] = None
    apply_floor(result["rows"], floor["bytes_moved"] / floor["best_s"], cuda)
    if cuda:
        result["notebooks"] = "not measured in the GPU run (see the CPU run)"
        result["grading"] = {"status": "skipped", "reason": "not measured in the GPU run (see the CPU run)"}
    elif args.quick or args.no_notebooks:
        result["notebooks"] = "skipped (--quick)" if args.quick else "skipped (--no-notebooks)"
    else:
        log("lesson notebooks:")
        result["notebooks"] = course_runs.time_notebooks(coursedir.lessons(args.root), args.root, progress=log)
    if not cuda:
        if args.quick or args.no_grading:
            result["grading"] = {"status": "skipped", "reason": "--quick" if args.quick else "--no-grading"}
        else:
            log("grading throughput:")
            chosen = coursedir.check_lessons(args.grading_lessons, args.root)
            available = [name for name in chosen if solutions.lesson_notebook(name, args.root)]
            result["grading"] = course_runs.grading_throughput(available, args.grading_students, args.root, log)
        result["goals"] = report.goals(result)
    result["meta"]["load_end"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    result["meta"]["duration_s"] = time.perf_counter() - started
    stem = args.device.replace(":", "") + ("-quick" if args.quick else "")
    result["meta"]["json"] = str(report.write_json(result, args.out / f"{stem}.json"))
    result["meta"]["plot"] = str(report.plot(result, args.out / f"{stem}.png"))
    report.write_json(result, args.out / f"{stem}.json")
    print(report.table(result))
    print(f"\nwrote {result['meta']['json']} and {result['meta']['plot']} in {result['meta']['duration_s']:.0f} s")
    return 0


def main(argv=None) -> int:
    try:
        return run(parse_args(argv))
    except CourseError as exc:  # a --root or --grading-lessons that is not the course's
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
