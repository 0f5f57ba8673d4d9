"""Scale figures for grading a class: every contender of :data:`course_runs.SCALE_CONTENDERS` (plain
``nbgrader autograde``; the trusted grader with ``--jobs 1`` and ``2``, cold and warm; a loopback Dask
cluster of two workers) grades the same submissions in one run: the honest corpus of each lesson plus
``--students`` generated reference submissions per lesson. Prints submissions per minute, each rate
against nbgrader's, whether any submission's points differ between the trusted contenders, the median seconds by phase of a
submission's grading per contender (its records' phases), and what a class of ``--class-size`` submissions
costs on N workers at the measured rate.

    python -m benchmarks.scale --students 2          # make scale (about 10-15 min on 2 cores)
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time

from . import course_runs, report
from autograder.coursedir import lessons as course_lessons

from autograder.coursedir import REPO
from autograder.solutions import lesson_notebook

LESSONS = tuple(course_lessons(REPO))


def same_points(result: dict) -> list[str]:
    """Submissions whose points differ between the trusted contenders (empty: every outcome agrees)."""
    runs = [run["by_submission"] for label, run in result["runs"].items()
            if label.startswith("trusted") and run.get("by_submission")]
    if len(runs) < 2:
        return ["fewer than two trusted contenders finished"]
    keys = sorted(set().union(*runs))
    return [f"{key}: {[run.get(key) for run in runs]}" for key in keys if len({run.get(key) for run in runs}) > 1]


def class_cost(run: dict, submissions: int, jobs: int, class_size: int, workers=(2, 8, 32, 128)) -> list[str]:
    """What ``class_size`` submissions cost on N workers, from one trusted run: each submission's sandbox
    time (its record's seconds, measured while ``jobs`` workers shared this machine) plus the batch's
    fixed cost (the canaries, starting the workers and templates, the gradebook), the rest of the run."""
    per = run["sandbox_seconds"] / submissions
    fixed = max(0.0, run["seconds"] - run["sandbox_seconds"] / jobs)
    lines = [f"  per submission {per:.2f} s of one worker (with {jobs} workers on this machine), fixed cost of "
             f"the batch {fixed:.0f} s (the gradebook's share grows with the class: not extrapolated)"]
    for n in workers:
        hours = (class_size * per / n + fixed) / 3600
        lines.append(f"  {class_size} submissions on {n:>3} workers ({max(1, n // jobs):>2} machines like this one): "
                     f"{hours:6.2f} h")
    return lines


def phase_lines(result: dict) -> list[str]:
    """Median seconds per submission by phase (``Record.phases``) of each trusted contender, one row each."""
    runs = {label: run["phases"] for label, run in result["runs"].items() if run.get("phases")}
    if not runs:
        return []
    names = list(dict.fromkeys(name for phases in runs.values() for name in phases))
    width = max(len(label) for label in runs)
    lines = ["", "Median seconds per submission by phase (records' phases; _wall waits, _cpu CPU seconds):"]
    for name in names:
        lines.append(f"  {name:<28}" + "".join(f"  {label[:width]}: {phases.get(name, 0.0):.3f}"
                                             for label, phases in runs.items()))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=2, help="generated reference submissions per lesson")
    parser.add_argument("--lessons", nargs="*", default=list(LESSONS))
    parser.add_argument("--no-corpus", action="store_true", help="only the generated submissions")
    parser.add_argument("--class-size", type=int, default=10_000)
    args = parser.parse_args(argv)
    lessons = [name for name in args.lessons if lesson_notebook(name, REPO)]
    started = time.perf_counter()
    print(f"scale benchmark, {dt.datetime.now().isoformat(timespec='seconds')}, {os.cpu_count()} CPUs, "
          f"load {' '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
    result = course_runs.grading_throughput(lessons, args.students, REPO, lambda m: print(m, flush=True),
                                            contenders=course_runs.SCALE_CONTENDERS,
                                            honest_corpus=not args.no_corpus)
    print("\n".join(report.grading_lines(result) + phase_lines(result)))
    if result.get("status") != "ok":
        return 1
    differ = same_points(result)
    print("\nPoints per submission, trusted contenders: " + ("identical on every submission" if not differ
                                                             else f"{len(differ)} differ"))
    for line in differ[:20]:
        print(f"  {line}")
    best = result["runs"].get("trusted --jobs 2 warm", {})
    if best.get("seconds") and best.get("sandbox_seconds"):
        print(f"\nA class of {args.class_size} at the rate of 'trusted --jobs 2 warm':")
        for line in class_cost(best, result["submissions"], 2, args.class_size):
            print(line)
    print(f"\ndone in {time.perf_counter() - started:.0f} s, load {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
