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
then the honest maximum and the loop minimum of the ratio and their margins to ``VECTORIZED_FACTOR``, and the same for
the other measures issue 50 asked to try (:func:`measures`: the call's own cost on each long input over its cost on the
balanced one; the spread of its cost per result element across the inputs; the best pair of bounds on two of them).
Beside the corpus: the honest generator's lesson 3 forms (``benchmarks.attacks.HONEST_FORMS``, forward only) and
:data:`PROBES`, the cheapest Python loop over the data written on purpose (a loop over the output elements in plain
Python on lists). ``--shapes thin``: the same on another family of inputs (:func:`thin_cases`: one long axis, nothing
across it, a 1-D kernel along it), to see whether other shapes widen the gap.
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


def thin_cases(seed: int) -> list[dict]:
    """Another family of inputs, as :func:`timing.cost_cases` gives them (the same draws): each long input has nothing
    across its long axis (``[N, 1, 1, k]``, ``[1, N, k, 1]``, ``[1, 1, N, 1]``, ``[1, 1, 1, N]``) and a 1-D kernel along
    it (for the batch and channels, one window of the drawn kernel's width or height), so every result element is one
    short window of contiguous memory; the balanced input as there."""
    cases = []
    for case in timing.cost_cases(seed):
        (kh, kw), (sh, sw), (ph, pw) = case["kernel_size"], case["stride"], case["padding"]
        long = max(case["shape"])
        shape, kernel, stride, padding = {
            "batch": ((long, 1, 1, kw), (1, kw), (1, sw), (0, 0)),
            "channels": ((1, long, kh, 1), (kh, 1), (sh, 1), (0, 0)),
            "rows": ((1, 1, long, 1), (kh, 1), (sh, 1), (ph, 0)),
            "columns": ((1, 1, 1, long), (1, kw), (1, sw), (0, pw)),
        }.get(case["axis"], (case["shape"], case["kernel_size"], case["stride"], case["padding"]))
        cases.append(dict(case, shape=shape, kernel_size=kernel, stride=stride, padding=padding))
    return cases


SHAPES = {"grading": timing.cost_cases, "thin": thin_cases}


def calls(seed: int, shapes: str = "grading") -> dict[str, list]:
    """``{"forward": [(axis, args, kwargs)], "backward": [...]}`` on the inputs of :func:`timing.cost_cases` (``shapes``
    "thin": of :func:`thin_cases`)."""
    result = {"forward": [], "backward": []}
    for number, case in enumerate(SHAPES[shapes](seed)):
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


#: The (case, pass) pairs that loop in Python over a data axis that the timed inputs make long: the rule must fail
#: them. Left out of both sides: cheats without such a loop, and loops over the shorter axis only
#: (``cheat_loop_short_axis``, ``cheat_loop_rows_bounded``: one turn on the long inputs; the cost cannot see them, the
#: loop reading sends them to review).
DATA_LOOPS = {("bug_loops_over_output", "forward"), ("cheat_loop_elsewhere", "forward"), ("cheat_trace_off", "forward"),
              ("cheat_iterator_lambda", "forward"), ("cheat_iterator_lambda", "backward"),
              ("cheat_loop_in_string", "forward"), ("cheat_rebound_parameter", "forward"),
              ("cheat_rebound_parameter", "backward"), ("cheat_named_bounded_images", "forward"),
              ("cheat_named_bounded_images", "backward"), ("probe_python_lists", "forward")}
#: Categories whose functions are honest work (the rule must pass them) unless they are in :data:`DATA_LOOPS`.
HONEST = ("correct", "bug", "generator")

#: Loops written here on purpose (category "probe", forward only): ``probe_python_lists`` is the cheapest Python loop
#: over the data found, one plain-Python pass per result element over the input as a list (no NumPy call per turn).
PROBES = {"probe_python_lists": '''
def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    out_h, out_w = output_size(x.shape[2:], kernel_size, stride, padding)
    (kh, kw), (sh, sw), (ph, pw) = as_pair(kernel_size), as_pair(stride), as_pair(padding)
    sh, sw = sh or kh, sw or kw
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    height, width = padded.shape[2:]
    flat = padded.ravel().tolist()
    taps = [a * width + b for a in range(kh) for b in range(kw)]
    sums = [sum([flat[start + t] for t in taps])
            for image in range(x.shape[0] * x.shape[1])
            for i in range(out_h) for start in range(image * height * width + i * sh * width,
                                                     image * height * width + i * sh * width + out_w * sw, sw)]
    out = np.array(sums, x.dtype).reshape(x.shape[:2] + (out_h, out_w))
    if count_include_pad:
        return out / (kh * kw)
    ones = np.pad(np.ones(x.shape[2:]), ((ph, ph), (pw, pw)))
    counts = sum(ones[a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw] for a in range(kh) for b in range(kw))
    return (out / counts).astype(x.dtype)
'''}


def side(row: dict) -> str | None:
    """"honest", "loop" or None (on neither side) for a row of the table."""
    if (row["case"], row["pass_name"]) in DATA_LOOPS:
        return "loop"
    return "honest" if row["category"] in HONEST else None


#: The measures :func:`measures` computes per case and pass from its rows (one per input), higher meaning dearer:
#: "x torch": the most CPU seconds over the baseline's; "x limit": the most over the limit of ``is_vectorized`` (the
#: rule); "self": the most over its own seconds on the balanced input of the same size (idea (a) of issue 50: a loop
#: over an axis turns far more often along a long axis than on a square map); "spread": its dearest over its cheapest
#: CPU seconds per result element across the inputs (a loop over one axis is cheap where that axis is short).
MEASURES = ("x torch", "x limit", "self", "spread")


def _values(rows: list[dict]) -> dict[str, float]:
    balanced = [r["seconds"] for r in rows if r["axis"] == "balanced"]
    per_element = [r["per_element"] for r in rows]
    return {"x torch": max(r["ratio"] for r in rows), "x limit": max(r["seconds"] / _limit(r) for r in rows),
            "self": max((r["seconds"] / balanced[0] for r in rows if r["axis"] != "balanced"), default=float("nan"))
            if balanced and balanced[0] > 0 else float("nan"),
            "spread": max(per_element) / min(per_element) if min(per_element) > 0 else float("inf")}


def measures(table: list[dict]) -> dict:
    """Per measure of :data:`MEASURES`, and for the pairs and the three that a student's call could be bounded by at
    once: the honest maximum and the loops' minimum, and the margin on each side at the best bounds::

        {"cases": [{"case", "pass_name", "side", **{measure: value}}],
         "single": {measure: {"honest", "honest_case", "loop", "loop_case", "gap", "margin"}},
         "combined": {"x torch + self": margin, ...}}

    ``gap`` is the loop minimum over the honest maximum; with one bound the best margin on both sides is its square
    root (the bound at the geometric middle); for "x limit" the bound is the rule's own (1): ``margin`` is then
    ``(1 / honest maximum, loop minimum)``. Combined (fail where any of the measures is over its bound): with each bound
    at ``m`` times its honest maximum, a loop fails by ``m`` where one of its measures is ``m**2`` times that maximum,
    so ``m = sqrt(min over loops of max over measures of value / honest maximum)``. Cases with a call stopped or raised
    (``note``) are left out."""
    import itertools
    import math

    cases = []
    for key in dict.fromkeys((r["case"], r["pass_name"]) for r in table):
        rows = [r for r in table if (r["case"], r["pass_name"]) == key]
        if any(r["note"] for r in rows) or side(rows[0]) is None:
            continue
        cases.append({"case": key[0], "pass_name": key[1], "side": side(rows[0]), **_values(rows)})
    honest = [c for c in cases if c["side"] == "honest"]
    loops = [c for c in cases if c["side"] == "loop"]
    single, combined = {}, {}
    if not honest or not loops:
        return {"cases": cases, "single": single, "combined": combined}
    have = [m for m in MEASURES if any(not math.isnan(c[m]) for c in honest) and any(not math.isnan(c[m]) for c in loops)]
    top = {m: max((c for c in honest if not math.isnan(c[m])), key=lambda c: c[m]) for m in have}
    for m in have:
        low = min((c for c in loops if not math.isnan(c[m])), key=lambda c: c[m])
        gap = low[m] / top[m][m]
        single[m] = {"honest": top[m][m], "honest_case": f"{top[m]['case']} {top[m]['pass_name']}", "loop": low[m],
                     "loop_case": f"{low['case']} {low['pass_name']}", "gap": gap,
                     "margin": (1 / top[m][m], low[m]) if m == "x limit" else (math.sqrt(gap),) * 2}
    for size in (2, 3):
        for chosen in itertools.combinations([m for m in have if m != "x limit"], size):
            worst = min(max(c[m] / top[m][m] for m in chosen if not math.isnan(c[m])) for c in loops)
            combined[" + ".join(chosen)] = math.sqrt(worst)
    return {"cases": cases, "single": single, "combined": combined}


def summary(table: list[dict], hogs: int) -> str:
    """Per case and pass, its costliest input (the one the verdict turns on) and its value of every measure of
    :data:`MEASURES`; then the honest maximum and the loops' minimum of the ratio to the baseline, and their margins to
    ``VECTORIZED_FACTOR``; then the same for every measure (:func:`measures`)."""
    measured = measures(table)
    without_probes = measures([r for r in table if r["category"] != "probe"])
    values = {(c["case"], c["pass_name"]): c for c in measured["cases"]}
    lines = [f"\n{'case':36} {'pass':8} {'input':9} {'ns/el':>9} {'x torch':>8} {'x limit':>8} {'self':>7} "
             f"{'spread':>7} {'side':6}  verdict"]
    for key in dict.fromkeys((r["case"], r["pass_name"]) for r in table):
        rows = [r for r in table if (r["case"], r["pass_name"]) == key]
        worst = max(rows, key=lambda r: r["seconds"] / _limit(r))
        verdict = "vectorized" if all(r["vectorized"] for r in rows) else "fails"
        mine = values.get(key) or _values(rows)
        lines.append(f"{key[0]:36} {key[1]:8} {worst['axis']:9} {1e9 * worst['per_element']:9.1f} {worst['ratio']:8.1f} "
                     f"{worst['seconds'] / _limit(worst):8.3f} {mine['self']:7.1f} {mine['spread']:7.1f} "
                     f"{side(worst) or '-':6}  {verdict} {worst['note']}")
    lines.append(f"\nVECTORIZED_FACTOR {timing.VECTORIZED_FACTOR:g}, ALLOWANCE {timing.VECTORIZED_ALLOWANCE:g} s, {hogs} "
                 f"hogs, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for title, result in (("the corpus, the honest generator's forms and the probes", measured),
                          ("without the probes (the corpus and the generator only)", without_probes)):
        single = result["single"]
        if not single:
            continue
        rule = single["x limit"]
        lines.append(f"\n{title}:\nhonest: at most {single['x torch']['honest']:.1f} x the baseline, at most "
                     f"{rule['honest']:.3f} of the limit ({rule['honest_case']}: margin {1 / rule['honest']:.1f}); loops: "
                     f"at least {single['x torch']['loop']:.1f} x the baseline, at least {rule['loop']:.1f} times the "
                     f"limit ({rule['loop_case']})")
        lines.append(f"{'measure':8} {'honest max':>10} {'(case)':42} {'loop min':>9} {'(case)':38} {'gap':>7} "
                     f"{'margins (honest, loops)':>24}")
        for m, row in single.items():
            lines.append(f"{m:8} {row['honest']:10.2f} {row['honest_case'][:42]:42} {row['loop']:9.2f} "
                         f"{row['loop_case'][:38]:38} {row['gap']:7.1f} {row['margin'][0]:11.1f} {row['margin'][1]:11.1f}")
        for name, margin in result["combined"].items():
            lines.append(f"bounds on {name}: at best {margin:.1f} times on each side")
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


def subjects(lesson, pattern: str = "*"):
    """``(name, category, namespace, passes)`` of every function measured whose name matches ``pattern``: the corpus
    cases that define the lesson's functions (both passes), then the honest generator's lesson 3 forms (category
    "generator") and :data:`PROBES` (category "probe"), each a forward run on the reference case's cells."""
    from benchmarks.attacks import HONEST_FORMS
    from tests.corpus import cases

    chosen = [case for case in cases(LESSON) if case.raw is None and case.base != "stub" and case.name not in UNSAFE]
    reference = _namespace(next(case for case in chosen if case.name == "reference"), lesson)
    for case in chosen:
        if fnmatch.fnmatch(case.name, pattern):
            try:
                yield case.name, case.category, _namespace(case, lesson), tuple(FUNCTIONS)
            except Exception as error:
                print(f"{case.name}: its cells do not run here ({type(error).__name__}: {error})")
    written = {f"generator: {way}": ("generator", program) for way, (_, program) in HONEST_FORMS[LESSON].items()}
    written.update({name: ("probe", program) for name, program in PROBES.items()})
    for name, (category, program) in written.items():
        if fnmatch.fnmatch(name, pattern):
            namespace = dict(reference)
            exec(compile(program, f"<{name}>", "exec"), namespace)
            yield name, category, namespace, ("forward",)


def main(argv=None) -> int:
    from autograder.grading.lesson import load_lesson
    from tests.corpus import cases

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hogs", type=int, default=0, help="busy loops running meanwhile (a loaded machine)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", default="*", help="case names to measure (a shell pattern)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--shapes", choices=sorted(SHAPES), default="grading",
                        help="the inputs: the vectorized cells' (grading) or thin_cases' (thin)")
    parser.add_argument("--copies", nargs="*", metavar="CASE",
                        help="instead: under the trusted grader, the share of each case's count (default: reference, "
                             "correct_sliding_window) that copying the arrays to and from the sandbox costs")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)
    lesson = load_lesson(LESSON, ROOT)
    timed = calls(args.seed, args.shapes)
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
        for name, category, namespace, passes in subjects(lesson, args.cases):
            for pass_name in passes:
                for row in measure(namespace, pass_name, timed[pass_name]):
                    row.update(case=name, category=category, pass_name=pass_name)
                    table.append(row)
                    print(f"{name:32} {pass_name:8} {row['axis']:8} {str(row['shape']):24} "
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
