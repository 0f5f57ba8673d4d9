"""The outputs of a benchmark run: the terminal table, the goals with met/missed, the JSON file, the plot."""

from __future__ import annotations

import json
import math
from pathlib import Path

from benchmarks.pooling import NUMPY_CL

#: The goals of the benchmarks issue (CPU, one thread): (id, text, direction, implementation, metric, limit).
GOAL_TEXT = {
    "loops_speedup": "loops -> NumPy speed-up per output element >= 300x",
    "numpy_vs_torch": "NumPy <= {limit}x F.avg_pool2d NCHW (1 thread)",
    "function_vs_torch": "Function forward+backward <= 1.0x F.avg_pool2d NCHW (1 thread)",
    "numpy_floor": "NumPy forward <= {limit}x the bandwidth floor",
    "numpy_vs_channels_last": "NumPy forward <= {limit}x F.avg_pool2d channels-last (1 thread)",
    "numpy_cl_floor": "NumPy forward on channels-last memory <= {limit}x the bandwidth floor",
    "numpy_cl_vs_channels_last": "NumPy forward on channels-last memory <= {limit}x F.avg_pool2d on it (1 thread)",
}

#: The limits of the goals that hold at small kernels (k <= 3) only.
FLOOR_LIMIT, CHANNELS_LAST_LIMIT = 5.0, 2.5


def fmt_time(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_ratio(value: float | None, suffix: str = "x") -> str:
    if value is None:
        return "-"
    return f"{value:.3g}{suffix}" if value < 1000 else f"{value:,.0f}{suffix}"


def find_row(rows: list[dict], case: str, direction: str, impl: str, threads=1) -> dict | None:
    for row in rows:
        if row["case"] == case and row["direction"] == direction and row["impl"] == impl and row["threads"] == threads:
            return row
    return None


def goals(result: dict) -> list[dict]:
    """Every goal of the issue, per case and direction, with the measured value and met / missed."""
    out = []
    rows = [r for r in result["rows"] if r["group"] == "pooling"]
    cases = list(dict.fromkeys(r["case"] for r in rows))
    kernels = {r["case"]: r.get("kernel") for r in result["rows"] if r.get("kernel")}

    def add(goal, case, direction, value, limit, better="lower", why=""):
        if value is None:
            met = None
        else:
            met = value <= limit if better == "lower" else value >= limit
        out.append({"goal": goal, "case": case, "direction": direction, "value": value, "limit": limit,
                    "met": met, "status": {True: "met", False: "MISSED", None: "not available"}[met],
                    "note": why})

    for case in cases:
        k = kernels.get(case)
        for direction in ("forward", "backward"):
            speedup = result["speedups"].get(f"{case} | {direction}")
            add(GOAL_TEXT["loops_speedup"], case, direction, speedup, 300.0, better="higher")
        limit = 0.5 if k is not None and k >= 7 else 1.0
        for direction in ("forward", "backward"):
            row = find_row(rows, case, direction, "NumPy (lesson 3)")
            add(GOAL_TEXT["numpy_vs_torch"].format(limit=limit), case, direction,
                row["ratio"] if row else None, limit)
        row = find_row(rows, case, "forward+backward", "Function (lesson 4)")
        add(GOAL_TEXT["function_vs_torch"], case, "forward+backward", row["ratio"] if row else None, 1.0)
        if k is not None and k <= 3:  # lesson 3 on NCHW memory, and on the anchor's own channels-last memory
            for impl, floor, anchor in (("NumPy (lesson 3)", "numpy_floor", "numpy_vs_channels_last"),
                                        (NUMPY_CL, "numpy_cl_floor", "numpy_cl_vs_channels_last")):
                row = find_row(rows, case, "forward", impl)
                add(GOAL_TEXT[floor].format(limit=f"{FLOOR_LIMIT:g}"), case, "forward",
                    row["floor_multiple"] if row else None, FLOOR_LIMIT)
                add(GOAL_TEXT[anchor].format(limit=f"{CHANNELS_LAST_LIMIT:g}"), case, "forward",
                    row.get("ratio_anchor") if row else None, CHANNELS_LAST_LIMIT)
    return out


def table(result: dict) -> str:
    """The whole result as text for the terminal (what ``python -m benchmarks.run`` prints)."""
    meta = result["meta"]
    lines = [f"avgpool-course benchmarks on {meta['device']}  ({meta['mode']} run; torch {meta['torch']}, "
             f"numpy {meta['numpy']}, {meta['cpus']} CPUs, torch threads 1 and {meta['threads_all']})",
             f"load average at start {meta['load_start']}, at end {meta.get('load_end', '-')}; "
             f"{meta['rounds']} interleaved rounds; figures are medians of per-round ratios "
             f"against F.avg_pool2d NCHW with the same thread count", ""]
    lines.append("Reference solutions (solution cells of source/):")
    for stage, info in result["lessons"].items():
        lines.append(f"  {stage:<9} {info.get('lesson', ''):<16} {info['status']}")
    bw = result.get("bandwidth")
    if bw:
        lines += ["", f"Memory-bandwidth floor: {bw['method']}, best of {bw['repeats']} spread over the run: "
                      f"{fmt_time(bw['best_s'])} -> {bw['gbytes_per_s']:.2f} GB/s (bytes read + written; "
                      f"best per sample: {', '.join(map(str, bw.get('samples_gbytes_per_s', [])))} GB/s)"]
    peak = result.get("peak_bandwidth")
    if peak:
        lines += ["", f"Device peak bandwidth: {peak['method']}, best of {peak['repeats']}: "
                      f"{peak['gbytes_per_s']:.1f} GB/s (bytes read + written)"]
    extra = "frac of peak" if peak else "x floor"
    header = (f"  {'direction':<17}{'implementation':<32}{'thr':>4}  {'median time':>12}  {'vs F NCHW':>11}"
              f"  {'vs F CL':>9}  {extra:>12}  note")
    last = None
    for row in result["rows"]:
        title = f"{row['group']}: {row['case']}"
        if title != last:
            lines += ["", title, header]
            last = title
        threads = "-" if row["threads"] is None else str(row["threads"])
        if row["status"] != "ok":
            lines.append(f"  {row['direction']:<17}{row['impl']:<32}{threads:>4}  {'not available' if row['status'] == 'not available' else 'error':>12}"
                         f"  {'-':>11}  {'-':>9}  {'-':>12}  {row['note']}")
            continue
        shown = row["time_per_output_s"] if "per output element" in row["note"] else row["time_s"]
        ratio = "1 (base)" if row["baseline"] else fmt_ratio(row["ratio"])
        if peak:
            last_col = "-" if row.get("fraction_of_peak") is None else f"{100 * row['fraction_of_peak']:.0f}%"
        else:
            last_col = fmt_ratio(row.get("floor_multiple"))
        lines.append(f"  {row['direction']:<17}{row['impl']:<32}{threads:>4}  {fmt_time(shown):>12}  {ratio:>11}"
                     f"  {fmt_ratio(row.get('ratio_anchor')):>9}  {last_col:>12}  {row['note']}")
    if result.get("speedups"):
        lines += ["", "loops -> NumPy speed-up per output element (median of per-round ratios):"]
        for key, value in result["speedups"].items():
            lines.append(f"  {key:<44} {fmt_ratio(value) if value is not None else 'not available'}")
    notebooks = result.get("notebooks")
    if notebooks is not None:
        lines += ["", "Lesson notebooks, execution time with nbclient (kernel start included, one run each):"]
        if isinstance(notebooks, str):
            lines.append(f"  {notebooks}")
        else:
            for lesson, info in notebooks.items():
                shown = fmt_time(info["seconds"]) if info["seconds"] is not None else "-"
                lines.append(f"  {lesson:<16} {shown:>10}  {info['status']}")
    if result.get("grading") is not None:
        lines += grading_lines(result["grading"])
    if result.get("goals"):
        lines += ["", "Goals (CPU, one thread)" + ("  [quick run: tiny shapes, figures not meaningful]"
                                                    if meta["mode"] == "quick" else "") + ":"]
        for goal in result["goals"]:
            value = "-" if goal["value"] is None else fmt_ratio(goal["value"])
            lines.append(f"  {goal['status']:<14} {goal['goal']:<62} {goal['case']:<26} {goal['direction']:<17} {value}")
    return "\n".join(lines)


def grading_lines(grading: dict) -> list[str]:
    """The grading-throughput section of :func:`table` (also printed by ``benchmarks.scale``)."""
    lines = ["", "Grading throughput (submissions per minute, the same submissions for each):"]
    if grading.get("status") != "ok":
        lines.append(f"  not available: {grading.get('reason', grading.get('status'))}")
    else:
        lines.append(f"  {grading['submissions']} submissions of {', '.join(grading['lessons'])}; {grading['note']}")
        for label, run in grading["runs"].items():
            if run.get("per_minute") is None:
                lines.append(f"  {label:<24} {run['status']}")
            else:
                lines.append(f"  {label:<24} {run['per_minute']:7.2f} per minute  ({fmt_time(run['seconds'])}, "
                             f"{fmt_ratio(run['vs_nbgrader'])} nbgrader's rate)  points {run.get('score', 0):g}"
                             f"/{run.get('max_score', 0):g}"
                             + (f", records {run['records']} {run.get('record_statuses')}" if "records" in run else "")
                             + ("  WRONG: the reference solutions did not get full marks"
                                if run.get("score", 0) < run.get("max_score", 0) and not grading.get("honest_corpus")
                                else ""))
                lines += [f"    {problem}" for problem in run.get("problems", [])]
    return lines


def write_json(result: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=str) + "\n")
    return path


def plot(result: dict, path: Path) -> Path:
    """Horizontal bars of every ratio against F.avg_pool2d NCHW (log scale), one panel per direction."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directions = ["forward", "backward", "forward+backward"]
    rows = {d: [r for r in result["rows"] if r["direction"] == d and r["ratio"] is not None and not r["baseline"]]
            for d in directions}
    heights = [max(1, len(rows[d])) for d in directions]
    fig, axes = plt.subplots(3, 1, figsize=(11, 1.5 + 0.19 * sum(heights)), gridspec_kw={"height_ratios": heights})
    for ax, direction in zip(axes, directions):
        data = rows[direction]
        labels = [f"{r['case']} | {r['impl']}" + (f" @{r['threads']}" if r["threads"] else "") for r in data]
        values = [r["ratio"] for r in data]
        colors = ["tab:red" if r["ratio"] > 1 else "tab:green" for r in data]
        ax.barh(range(len(data)), values, color=colors)
        ax.set_yticks(range(len(data)), labels, fontsize=7)
        ax.set_ylim(len(data) - 0.5, -0.5)
        ax.axvline(1.0, color="black", linewidth=0.8)
        if values:
            ax.set_xscale("log")
        ax.set_title(f"{direction}: median time ratio to F.avg_pool2d NCHW with the same threads "
                     "(line at 1; green faster, red slower)", fontsize=9)
    fig.suptitle(f"avgpool-course benchmarks, {result['meta']['device']} ({result['meta']['mode']} run)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)
    return path
