"""The benchmark harness (benchmarks/): it runs end to end, takes the solutions from source/ as the grader
does, reports a missing lesson as not available, and computes interleaved medians of ratios correctly.

No speed is asserted here: speed goals are what ``python -m benchmarks.run`` prints, met or missed.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import nbformat
import pytest
import torch
from nbformat.v4 import new_code_cell, new_notebook

from autograder import solutions
from benchmarks import course_runs, report
from benchmarks.pooling import NUMPY_CL
from shared import REPO

TOP_KEYS = {"meta", "lessons", "bandwidth", "rows", "speedups", "notebooks", "grading", "goals"}


def run_cli(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks.run", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def assert_sane(result: dict) -> None:
    assert TOP_KEYS <= set(result), f"missing keys {TOP_KEYS - set(result)}"
    assert result["bandwidth"]["gbytes_per_s"] > 0
    assert result["rows"], "no rows measured"
    for row in result["rows"]:
        assert row["status"] in ("ok", "not available"), f"{row['case']} {row['impl']}: {row['status']} {row['note']}"
        if row["status"] == "ok":
            for key in ("time_s", "ratio"):
                assert row[key] is not None and math.isfinite(row[key]) and row[key] > 0, (key, row)
        else:
            assert row["time_s"] is None and "not available" in row["note"]
    for value in result["speedups"].values():
        assert value is None or (math.isfinite(value) and value > 0)
    assert {g["status"] for g in result["goals"]} <= {"met", "MISSED", "not available"}


def test_quick_run_end_to_end(tmp_path):
    done = run_cli("--quick", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "cpu-quick.json").read_text())
    assert_sane(result)
    assert (tmp_path / "cpu-quick.png").stat().st_size > 1000
    assert result["meta"]["mode"] == "quick"
    # Every NumPy forward/backward row is also a ratio to F.avg_pool2d channels-last (the anchor: 1 itself).
    for row in result["rows"]:
        if row["group"] == "pooling" and row["direction"] != "forward+backward" and row["status"] == "ok":
            if row["impl"] == "NumPy (lesson 3)":
                assert row["ratio_anchor"] is not None and row["ratio_anchor"] > 0, row
            if row["impl"] == "F.avg_pool2d channels-last":
                assert row["ratio_anchor"] == 1.0, row
    assert "vs F CL" in done.stdout
    assert "Goals (CPU, one thread)" in done.stdout and "Memory-bandwidth floor" in done.stdout
    for stage, info in result["lessons"].items():  # each stage of source/ is measured, the others said missing
        lesson = solutions.lesson_of(stage)
        assert info["lesson"] == (lesson or stage) and info["available"] == (lesson is not None), (stage, info)
        rows = [r for r in result["rows"] if r["impl"].endswith(f"(lesson {lesson[6]})")] if lesson else []
        assert not lesson or rows, stage
        assert {r["status"] for r in rows} <= {"ok"}, (stage, [r["note"] for r in rows])


def test_missing_lessons_are_not_available(tmp_path):
    root = tmp_path / "course"
    (root / "source").mkdir(parents=True)
    done = run_cli("--quick", "--root", str(root), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "out" / "cpu-quick.json").read_text())
    assert_sane(result)
    for lesson, info in result["lessons"].items():
        assert not info["available"] and "no lesson in" in info["status"], (lesson, info)
    lesson_rows = [r for r in result["rows"] if "(lesson" in r["impl"]]
    assert lesson_rows and all(r["status"] == "not available" for r in lesson_rows)
    assert all(r["status"] == "ok" for r in result["rows"] if "(lesson" not in r["impl"])
    assert all(g["status"] == "not available" for g in result["goals"])
    assert "not available" in done.stdout


def test_cuda_path_skips_cleanly_without_cuda(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the GPU run is the real thing, not a skip")
    done = run_cli("--device", "cuda", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "CUDA is not available" in done.stdout and "skipping" in done.stdout
    assert not any(tmp_path.iterdir()), "a skipped GPU run must not write results"


# --- goals: both sides of each limit --------------------------------------------------------------------

def fake_result(numpy_ratio: float, function_ratio: float, floor: float, speedup: float, kernel: int,
                channels_last: float = 2.0, cl_floor: float = 4.0, cl_channels_last: float = 2.0) -> dict:
    case = f"[1,1,8,8] k{kernel} s1 p0"
    rows = []
    for direction in ("forward", "backward"):
        rows.append({"group": "pooling", "case": case, "direction": direction, "impl": "NumPy (lesson 3)",
                     "threads": 1, "ratio": numpy_ratio, "ratio_anchor": channels_last, "floor_multiple": floor,
                     "kernel": kernel})
        rows.append({"group": "pooling", "case": case, "direction": direction, "impl": NUMPY_CL, "threads": 1,
                     "ratio": numpy_ratio / 2, "ratio_anchor": cl_channels_last, "floor_multiple": cl_floor,
                     "kernel": kernel})
    rows.append({"group": "pooling", "case": case, "direction": "forward+backward", "impl": "Function (lesson 4)",
                 "threads": 1, "ratio": function_ratio, "floor_multiple": None, "kernel": kernel})
    return {"rows": rows, "speedups": {f"{case} | forward": speedup, f"{case} | backward": speedup}}


def test_goals_met_and_missed():
    met = report.goals(fake_result(0.9, 0.95, 4.9, 400.0, kernel=3, channels_last=2.4, cl_floor=4.9,
                                   cl_channels_last=2.4))
    assert [g["status"] for g in met] == ["met"] * 9
    missed = report.goals(fake_result(1.1, 1.05, 5.1, 250.0, kernel=3, channels_last=2.6, cl_floor=5.1,
                                      cl_channels_last=2.6))
    assert [g["status"] for g in missed] == ["MISSED"] * 9
    assert {g["goal"] for g in missed} >= {
        "NumPy forward <= 5x the bandwidth floor", "NumPy forward <= 2.5x F.avg_pool2d channels-last (1 thread)",
        "NumPy forward on channels-last memory <= 5x the bandwidth floor",
        "NumPy forward on channels-last memory <= 2.5x F.avg_pool2d on it (1 thread)"}
    # each goal reads its own row: channels-last memory met, NCHW memory missed
    mixed = report.goals(fake_result(0.9, 0.95, 5.1, 400.0, kernel=3, channels_last=2.6, cl_floor=4.9,
                                     cl_channels_last=2.4))
    assert {g["goal"]: g["status"] for g in mixed if "bandwidth" in g["goal"] or "F.avg_pool2d c" in g["goal"]
            or "on it" in g["goal"]} == {
        "NumPy forward <= 5x the bandwidth floor": "MISSED",
        "NumPy forward <= 2.5x F.avg_pool2d channels-last (1 thread)": "MISSED",
        "NumPy forward on channels-last memory <= 5x the bandwidth floor": "met",
        "NumPy forward on channels-last memory <= 2.5x F.avg_pool2d on it (1 thread)": "met"}
    k7 = report.goals(fake_result(0.6, 0.9, 40.0, 400.0, kernel=7, channels_last=9.0))  # k=7: NumPy must reach 0.5x
    assert [(g["direction"], g["status"]) for g in k7 if g["goal"].startswith("NumPy")] == [
        ("forward", "MISSED"), ("backward", "MISSED")]
    assert not any("bandwidth" in g["goal"] or "channels-last" in g["goal"] for g in k7)


# --- course-level timings ------------------------------------------------------------------------------

def test_time_notebook_reports_time_and_errors(tmp_path):
    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("x = sum(range(10))\nprint(x)")]), good)
    nbformat.write(new_notebook(cells=[new_code_cell("raise ValueError('boom')")]), bad)
    ok = course_runs.time_notebook(good)
    assert ok["status"] == "ok" and ok["seconds"] > 0
    failed = course_runs.time_notebook(bad)
    assert failed["status"].startswith("error") and "boom" in failed["status"]
    missing = course_runs.time_notebooks(["lesson_nowhere"], root=tmp_path)
    assert missing["lesson_nowhere"]["status"].startswith("not available")


def test_grading_throughput_without_the_trusted_grader(monkeypatch):
    def no_grader():
        return None, "autograder.grading is not importable (ModuleNotFoundError: test)"
    monkeypatch.setattr(course_runs, "trusted_grader", no_grader)
    result = course_runs.grading_throughput(["lesson1_by_hand"])
    assert result["status"] == "not available" and "autograder.grading" in result["reason"]
    text = report.table({"meta": {"device": "cpu", "mode": "quick", "torch": "", "numpy": "", "cpus": 2,
                                  "threads_all": 2, "load_start": "", "rounds": 1},
                         "lessons": {}, "rows": [], "grading": result})
    assert "not available: autograder.grading" in text


# --- each row times its own implementation ---------------------------------------------------------------

def recording_lessons(calls: list[str]) -> dict:
    """Stand-ins for lessons 2-4 that compute the right answer with torch and record which one ran."""
    import torch.nn.functional as F

    def forward(name):
        def run(x, kernel_size, stride=0, padding=0, count_include_pad=True):
            calls.append(name)
            if isinstance(x, torch.Tensor):
                return F.avg_pool2d(x, kernel_size, stride or kernel_size, padding)
            return F.avg_pool2d(torch.from_numpy(x), kernel_size, stride or kernel_size, padding).numpy()
        return run

    def backward(name):
        def run(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
            calls.append(name)
            x = torch.zeros(input_shape, requires_grad=True)
            F.avg_pool2d(x, kernel_size, stride or kernel_size, padding).backward(torch.from_numpy(grad_out))
            return x.grad.numpy()
        return run

    return {
        "loops": solutions.Solutions("lesson2_loops", {"avg_pool2d_loops": forward("loops"),
                                                       "avg_pool2d_loops_backward": backward("loops bwd")}),
        "numpy": solutions.Solutions("lesson3_numpy", {"avg_pool2d_numpy": forward("numpy"),
                                                       "avg_pool2d_numpy_backward": backward("numpy bwd")}),
        "function": solutions.Solutions("lesson4_torch", {"avg_pool2d_torch": forward("function"),
                                                          "AvgPool2dFunction": None, "AvgPool2d": None}),
    }


def test_each_row_runs_its_own_implementation():
    from benchmarks.pooling import Case, gap_entries, pool_entries

    calls: list[str] = []
    lessons = recording_lessons(calls)
    expected = {("forward", "NumPy (lesson 3)"): "numpy", ("backward", "NumPy (lesson 3)"): "numpy bwd",
                ("forward", NUMPY_CL): "numpy", ("backward", NUMPY_CL): "numpy bwd",
                ("forward", "loops (lesson 2)"): "loops", ("backward", "loops (lesson 2)"): "loops bwd",
                ("forward", "Function (lesson 4)"): "function", ("forward+backward", "Function (lesson 4)"): "function"}
    groups = pool_entries(Case((1, 2, 8, 8), 3, 2, 1), lessons, "cpu", 2, loop_shape=(1, 1, 6, 6))
    seen = set()
    for direction, entries in groups.items():
        for entry in entries:
            assert entry.fn is not None, (direction, entry.impl, entry.note)
            calls.clear()
            entry.fn()
            want = expected.get((direction, entry.impl))
            assert calls == ([want] if want else []), (direction, entry.impl, calls)
            seen.add((direction, entry.impl))
            if entry.impl.startswith("NumPy"):  # the NCHW row gets NCHW memory, the other the anchor's NHWC
                array = entry.fn.args[0]
                assert array.flags.c_contiguous is (entry.impl != NUMPY_CL), (direction, entry.impl, array.strides)
                assert (array.strides[1] == array.itemsize) is (entry.impl == NUMPY_CL)
    assert set(expected) <= seen
    for direction, entries in gap_entries((2, 3, 5, 5), lessons, "cpu").items():
        for entry in entries:
            calls.clear()
            entry.fn()
            owner = "numpy" if "NumPy" in entry.impl else "function" if "Function" in entry.impl else None
            assert calls == ([owner + (" bwd" if direction == "backward" and owner == "numpy" else "")]
                             if owner else []), (direction, entry.impl, calls)


def test_numpy_designs_agree_with_torch_and_a_wrong_one_is_refused(monkeypatch):
    """``python -m benchmarks.numpy_designs``: every design is checked against ``F.avg_pool2d`` before it is
    timed (a design that drops the row above each window is refused), and each row has its ratios."""
    import numpy as np

    from benchmarks import numpy_designs

    rows = numpy_designs.measure((2, 4, 12, 12), rounds=1, min_time=0.0001, copy_mib=1)
    names = [r["name"] for r in rows]
    assert names[:4] == ["F.avg_pool2d channels-last (anchor)", "F.avg_pool2d NCHW", "lesson 3 reference",
                         "lesson 3 reference, channels-last memory"]
    assert len(names) == 4 + 3 and len(set(names)) == len(names)  # a small input: 8 chunks only
    assert len(numpy_designs.designs(np.zeros((32, 64, 56, 56), np.float32))) == 6  # and 24 L2-sized
    assert all(r["time_s"] > 0 and r["ratio_anchor"] > 0 and r["floor_multiple"] > 0 for r in rows)
    assert next(r for r in rows if r["name"].startswith("F.avg_pool2d channels"))["ratio_anchor"] == 1.0

    def no_row_above(maps, rows):
        np.add(maps[:, 0::2], maps[:, 1::2], out=rows)

    monkeypatch.setattr(numpy_designs, "_rows_pairs", no_row_above)
    with pytest.raises(AssertionError, match="row pairs, 2-D column passes, 8 chunks disagrees"):
        numpy_designs.measure((2, 4, 12, 12), rounds=1, min_time=0.0001, copy_mib=1)
    with pytest.raises(ValueError, match="even H and W"):
        numpy_designs.measure((2, 4, 11, 12), rounds=1, min_time=0.0001, copy_mib=1)


def test_vectorized_cost_separates_honest_kernel_loops_from_a_loop_over_the_data():
    """``python -m benchmarks.vectorized_cost`` (issue 50): lesson 3's corpus cases timed on the inputs the vectorized
    cells draw; an honest kernel loop (``np.ndindex``) stays under the limit on every input, a loop over the rows behind
    a rebound parameter goes over it on the rows input, and the summary gives both sides' ratios."""
    import corpus
    from autograder.grading.lesson import load_lesson
    from benchmarks import vectorized_cost

    lesson = load_lesson(vectorized_cost.LESSON, REPO)
    cases = {case.name: case for case in corpus.cases(vectorized_cost.LESSON)}
    timed = vectorized_cost.calls(seed=3)
    table = []
    for name in ("correct_ndindex", "cheat_rebound_parameter"):
        for row in vectorized_cost.measure(vectorized_cost._namespace(cases[name], lesson), "forward", timed["forward"]):
            table.append({**row, "case": name, "category": cases[name].category, "pass_name": "forward"})
    verdicts = {(row["case"], row["axis"]): row["vectorized"] for row in table}
    assert all(verdicts["correct_ndindex", axis] for axis in ("batch", "channels", "rows", "columns", "balanced"))
    assert not verdicts["cheat_rebound_parameter", "rows"] and verdicts["cheat_rebound_parameter", "batch"]
    text = vectorized_cost.summary(table, hogs=0)
    assert "honest: at most" in text and "loops: at least" in text
    assert "bounds on x torch + self + spread: at best" in text


def test_vectorized_cost_measures_give_each_sides_extreme_and_the_best_margins():
    """``vectorized_cost.measures`` (issue 50, the search for a measure with 10 times on both sides): per measure the
    honest maximum and the loops' minimum over the cases' rows (one per input), the margin at the best bound, and for
    bounds on several measures at once the best margin a loop's dearest measure allows; a row with a note is left out."""
    from benchmarks import vectorized_cost
    from course.timing import VECTORIZED_ALLOWANCE, VECTORIZED_FACTOR

    def rows(case, category, seconds, baseline=0.001, outputs=1000, pass_name="forward", note=""):
        return [{"case": case, "category": category, "pass_name": pass_name, "axis": axis, "seconds": s,
                 "baseline": baseline, "ratio": s / baseline, "per_element": s / outputs, "note": note}
                for axis, s in zip(("rows", "columns", "balanced"), seconds)]

    table = (rows("correct_a", "correct", (0.004, 0.002, 0.002)) + rows("generator: b", "generator", (0.001, 0.001, 0.003))
             + rows("cheat_iterator_lambda", "cheat", (0.9, 0.002, 0.003))  # a loop over rows: dear on one input only
             + rows("bug_loops_over_output", "bug", (0.4, 0.4, 0.4))  # a loop over every element: dear everywhere
             + rows("cheat_error_words", "cheat", (5.0, 5.0, 5.0))  # no loop over the data: on neither side
             + rows("probe_python_lists", "probe", (9.0, 9.0, 9.0), note="stopped after 60 s"))  # not a measurement
    measured = vectorized_cost.measures(table)
    assert {(c["case"], c["side"]) for c in measured["cases"]} == {
        ("correct_a", "honest"), ("generator: b", "honest"), ("cheat_iterator_lambda", "loop"),
        ("bug_loops_over_output", "loop")}
    single = measured["single"]
    assert single["x torch"]["honest"] == pytest.approx(4) and single["x torch"]["loop"] == pytest.approx(400)
    assert single["x torch"]["margin"] == pytest.approx((10, 10))  # a gap of 100: 10 times on each side
    assert single["self"]["honest"] == pytest.approx(2) and single["self"]["loop"] == pytest.approx(1)  # the loop over
    assert single["self"]["honest_case"] == "correct_a forward"  # every element costs the same on the balanced input
    assert single["spread"]["honest"] == pytest.approx(3) and single["spread"]["loop"] == pytest.approx(1)
    limit = VECTORIZED_ALLOWANCE + VECTORIZED_FACTOR * 0.001
    assert single["x limit"]["margin"] == pytest.approx((limit / 0.004, 0.4 / limit))
    # with bounds at m times each honest maximum, the loop over rows fails by its x torch (900 / 4) or self (300 / 2),
    # the loop over every element by its x torch only (400 / 4): m = sqrt(min(225, 100)) = 10
    assert measured["combined"]["x torch + self"] == pytest.approx(10)
    assert measured["combined"]["self + spread"] == pytest.approx(math.sqrt(1 / 2))  # the loop over every element


def test_vectorized_cost_copies_measures_the_graders_copying_under_the_grader():
    """``python -m benchmarks.vectorized_cost --copies`` (issue 50, the cost margin): under the trusted grader, a forward
    that only copies (``ECHO``) is timed on every input of the vectorized cells, the child's CPU read from outside."""
    import corpus
    from autograder.grading.lesson import load_lesson
    from benchmarks import vectorized_cost

    lesson = load_lesson(vectorized_cost.LESSON, REPO)
    text = vectorized_cost.copy_share(lesson, corpus.cases(vectorized_cost.LESSON), [])
    rows = [line for line in text.splitlines() if line.split(" ")[0] in ("batch", "channels", "rows", "columns",
                                                                         "balanced")]
    assert len(rows) == 10, text  # five inputs per seed, two seeds (the visible and the hidden cell's)
    assert all(float(row.split()[-2]) > 0 for row in rows), text  # the echo's child milliseconds
