"""Lesson 3's cost rule measured on the grading corpus: ``python -m benchmarks.vectorized_cost [--hogs N] [--seed S]
[--cases PATTERN] [--json PATH]``.

For every lesson 3 corpus case (honest ones and loop attacks: ``tests/data/corpus/lesson3_numpy/``) whose solution
cells define the forward and backward, each function is timed on the inputs the vectorized cells draw
(:func:`course.timing.cost_cases`: one long axis at a time, batch, channels, rows, columns, and a balanced input of
the same size), beside the trusted baseline (PyTorch on one thread, :func:`course.timing.baseline_seconds`). A case's
CPU seconds are this process's (every thread) and its waited-for children's; in the grader they are the kernel's
count for every process of the sandboxed child, so a case that hides its loop in an unwaited process is measured
only there. ``--hogs N`` starts N busy loops for the whole run (a loaded machine). Prints one row per case, pass and
input: CPU seconds per result element, the ratio to the baseline, and the verdict of :func:`course.timing.is_vectorized`,
then the honest maximum and the loop minimum of the ratio and their margins to ``VECTORIZED_FACTOR``.
``--copies [CASE ...]``: instead, under the trusted grader, how much of the child's count for each case (the reference
and ``correct_sliding_window`` by default) the grader's copying of the arrays to and from the sandbox costs alone.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import multiprocessing
import os
import resource
import signal
import time
from pathlib import Path

import numpy as np

from course import timing
from course.checks import random_input
from course.reference import avg_pool2d_grad_reference, avg_pool2d_reference

ROOT = Path(__file__).resolve().parent.parent
LESSON = "lesson3_numpy"
FUNCTIONS = {"forward": "avg_pool2d_numpy", "backward": "avg_pool2d_numpy_backward"}
#: Cases left out here: they reload PyTorch's files into this process (which then crashes); the grader runs them in
#: the sandbox, where PyTorch is not reachable at all.
UNSAFE = {"cheat_unblock_torch"}
CALL_SECONDS = 60  # a call still running after this long is stopped and counted as at least this long


def _hog() -> None:
    while True:
        pass


def _namespace(case, lesson) -> dict:
    """The case's solution cells run after the lesson's set-up, as a student's kernel runs them."""
    namespace: dict = {"__name__": "__main__"}
    for cell in lesson.prelude:
        try:
            exec(compile(cell.source, f"<{cell.id}>", "exec"), namespace)
        except Exception:
            pass
    sources = case.sources(lesson)
    for grade_id in lesson.solution_ids:
        if grade_id in sources:
            exec(compile(sources[grade_id], f"<{case.name}:{grade_id}>", "exec"), namespace)
    return namespace


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow


def torch_backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
    return avg_pool2d_grad_reference(np.zeros(input_shape, grad_out.dtype), grad_out, kernel_size, stride, padding,
                                     count_include_pad)


def calls(seed: int) -> dict[str, list]:
    """``{"forward": [(axis, args, kwargs)], "backward": [...]}`` on the inputs of :func:`timing.cost_cases`."""
    result = {"forward": [], "backward": []}
    for number, case in enumerate(timing.cost_cases(seed)):
        options = {k: case[k] for k in ("stride", "padding", "count_include_pad")}
        x = random_input(case["shape"], np.float64, seed=seed + number)
        result["forward"].append((case["axis"], (x, case["kernel_size"]), options))
        out = avg_pool2d_reference(x, case["kernel_size"], case["stride"], case["padding"])
        grad = random_input(out.shape, np.float64, seed=seed + 100 + number)
        result["backward"].append((case["axis"], (grad, tuple(case["shape"]), case["kernel_size"]), options))
    return result


def measure(namespace: dict, pass_name: str, timed: list) -> list[dict]:
    function = namespace.get(FUNCTIONS[pass_name])
    baseline = avg_pool2d_reference if pass_name == "forward" else torch_backward
    rows = []
    for axis, args, kwargs in timed:
        expected, base = timing.baseline_seconds(baseline, *args, **kwargs)
        start = _cpu()
        signal.alarm(CALL_SECONDS)
        try:
            function(*args, **kwargs)
            note = ""
        except _Slow:
            note = f"stopped after {CALL_SECONDS} s"
        except Exception as error:
            note = f"raised {type(error).__name__}: {str(error)[:80]}"
        finally:
            signal.alarm(0)
        seconds = _cpu() - start
        rows.append({"axis": axis, "shape": list(np.shape(args[0])), "seconds": seconds, "baseline": base,
                     "per_element": seconds / expected.size, "ratio": seconds / base,
                     "vectorized": timing.is_vectorized(seconds, base), "note": note})
        if note.startswith("stopped"):
            break
    return rows


def _limit(row: dict) -> float:
    return timing.VECTORIZED_ALLOWANCE + timing.VECTORIZED_FACTOR * row["baseline"]


#: Honest cases (category correct or bug) whose bug is a Python loop over the data: the rule must fail them.
LOOP_BUGS = {"bug_loops_over_output"}


def summary(table: list[dict], hogs: int) -> str:
    """Per case and pass, its costliest input (the one the verdict turns on); then the honest maximum and the loops'
    minimum of the ratio to the baseline, and their margins to ``VECTORIZED_FACTOR``."""
    lines = [f"\n{'case':36} {'pass':8} {'input':9} {'ns/el':>9} {'x torch':>8} {'x limit':>8}  verdict"]
    honest, loops = [], []
    for key in dict.fromkeys((r["case"], r["pass_name"]) for r in table):
        rows = [r for r in table if (r["case"], r["pass_name"]) == key]
        worst = max(rows, key=lambda r: r["seconds"] / _limit(r))
        verdict = "vectorized" if all(r["vectorized"] for r in rows) else "fails"
        lines.append(f"{key[0]:36} {key[1]:8} {worst['axis']:9} {1e9 * worst['per_element']:9.1f} {worst['ratio']:8.1f} {worst['seconds'] / _limit(worst):8.3f}  "
                     f"{verdict} {worst['note']}")
        if worst["note"]:
            continue  # ran out of memory or was stopped: not a cost measurement
        if worst["category"] in ("correct", "bug") and key[0] not in LOOP_BUGS:
            honest.append(worst)
        elif worst["ratio"] > 50:  # a loop over a long axis (the cheats without one stay near the baseline)
            loops.append(worst)
    factor = timing.VECTORIZED_FACTOR
    lines.append(f"\nVECTORIZED_FACTOR {factor:g}, ALLOWANCE {timing.VECTORIZED_ALLOWANCE:g} s, {hogs} hogs, "
                 f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    if honest and loops:
        top = max(honest, key=lambda r: r["seconds"] / _limit(r))
        low = min(loops, key=lambda r: r["seconds"] / _limit(r))
        lines.append(f"honest: at most {max(r['ratio'] for r in honest):.1f} x the baseline, at most "
                     f"{top['seconds'] / _limit(top):.3f} of the limit ({top['case']} {top['pass_name']}: margin "
                     f"{_limit(top) / top['seconds']:.1f}); loops: at least {min(r['ratio'] for r in loops):.1f} x the "
                     f"baseline, at least {low['seconds'] / _limit(low):.1f} times the limit ({low['case']} "
                     f"{low['pass_name']})")
    return "\n".join(lines)


#: ``--copies``: a forward that only copies (its result an output-sized slice of its input), so the child's CPU count
#: for it is the grader's handing of the arrays to and from the sandbox, plus a slice.
ECHO = '''def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    return x[:, :, :out_h, :out_w].copy()
'''
#: The test cell ``--copies`` grades: each forward on the inputs of the vectorized cells (visible and hidden seeds),
#: timed as ``check_vectorized`` times it (the child's CPU read from outside, best of three), beside PyTorch.
MEASURE = '''
import json
from course.timing import timed_call, baseline_seconds, cost_cases
rows = []
for seed in (60, 70):
    for n, case in enumerate(cost_cases(seed)):
        x = random_input(case["shape"], np.float64, seed=seed + 1 + n)
        options = {key: case[key] for key in ("stride", "padding", "count_include_pad")}
        mine = min(timed_call(avg_pool2d_numpy, x, case["kernel_size"], **options)[1] for _ in range(3))
        expected, base = baseline_seconds(avg_pool2d_reference, x, case["kernel_size"], **options)
        rows.append([case["axis"], list(case["shape"]), mine, base, int(expected.size)])
print("ROWS" + json.dumps(rows))
'''


def copy_share(lesson, corpus_cases, names: list[str]) -> str:
    """Under the trusted grader (the sandboxed child, its CPU counted from outside): the forward of each case of
    ``names`` and of :data:`ECHO` on the vectorized cells' inputs, and the share of each case's count that the
    grader's copying alone (the echo) costs."""
    import dataclasses

    from autograder.grading import Limits
    from autograder.grading.lesson import Cell
    from autograder.grading.verdicts import run_tests

    graded = dataclasses.replace(lesson, tests=[Cell("measure", "test", MEASURE, points=1.0, index=10**6)])
    limits = Limits(test_seconds=300, cell_seconds=30, start_seconds=90, memory_bytes=5 << 29, output_chars=200_000)
    by_name = {c.name: c for c in corpus_cases}
    runs = [("echo", dict(by_name["reference"].sources(lesson), avg_pool2d_numpy=ECHO))]
    runs += [(name, by_name[name].sources(lesson)) for name in names]
    measured = {}
    for label, sources in runs:
        result = run_tests(graded, sources, limits, seed=1).tests[0]
        if not result.passed:
            return f"{label}: the measuring cell failed: {result.message[:300]}"
        measured[label] = json.loads(result.output.split("ROWS", 1)[1])
    lines = [f"\n{'input':36} {'torch ms':>9} " + " ".join(f"{label[:22]:>22}" for label in measured)
             + "  (child ms, x torch; the echo's share of each)"]
    for index, (axis, shape, _, base, _) in enumerate(measured["echo"]):
        echo = measured["echo"][index][2]
        cells = [f"{row[index][2] * 1e3:6.2f} {row[index][2] / base:5.1f}x" + (
            f" {echo / row[index][2]:4.0%}" if label != "echo" else "     ") for label, row in measured.items()]
        lines.append(f"{axis:9} {str(shape):26} {base * 1e3:9.2f} " + " ".join(f"{c:>22}" for c in cells))
    for label, row in measured.items():
        if label != "echo":
            shares = [measured["echo"][i][2] / r[2] for i, r in enumerate(row)]
            lines.append(f"{label}: at most {max(r[2] / r[3] for r in row):.1f} x torch; without the echo's count at "
                         f"most {max((r[2] - measured['echo'][i][2]) / r[3] for i, r in enumerate(row)):.1f} x; the "
                         f"grader's copying is {min(shares):.0%} to {max(shares):.0%} of it")
    return "\n".join(lines)


def main(argv=None) -> int:
    from autograder.grading.lesson import load_lesson
    from tests.corpus import cases

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hogs", type=int, default=0, help="busy loops running meanwhile (a loaded machine)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", default="*", help="case names to measure (a shell pattern)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--copies", nargs="*", metavar="CASE",
                        help="instead: under the trusted grader, the share of each case's count (default: reference, "
                             "correct_sliding_window) that copying the arrays to and from the sandbox costs")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)
    lesson = load_lesson(LESSON, ROOT)
    timed = calls(args.seed)
    hogs = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(args.hogs)]
    for hog in hogs:
        hog.start()
    table = []
    if args.copies is not None:
        try:
            print(copy_share(lesson, cases(LESSON), args.copies or ["reference", "correct_sliding_window"]))
            print(f"{args.hogs} hogs, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        finally:
            for hog in hogs:
                hog.kill()
        return 0
    try:
        for case in cases(LESSON):
            if case.raw is not None or case.base == "stub" or case.name in UNSAFE or not fnmatch.fnmatch(case.name, args.cases):
                continue
            try:
                namespace = _namespace(case, lesson)
            except Exception as error:
                print(f"{case.name}: its cells do not run here ({type(error).__name__}: {error})")
                continue
            for pass_name in FUNCTIONS:
                for row in measure(namespace, pass_name, timed[pass_name]):
                    row.update(case=case.name, category=case.category, pass_name=pass_name)
                    table.append(row)
                    print(f"{case.name:32} {pass_name:8} {row['axis']:8} {str(row['shape']):24} "
                          f"{1e9 * row['per_element']:10.1f} {row['ratio']:9.1f} "
                          f"{'vectorized' if row['vectorized'] else 'LOOP'} {row['note']}", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
    print(summary(table, args.hogs))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"seed": args.seed, "hogs": args.hogs, "time": time.time(), "rows": table},
                                        indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
