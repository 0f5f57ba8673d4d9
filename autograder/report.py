"""The class report: one self-contained HTML page (inline CSS, plots as base64 PNG, no network needed).

Shows, for the graded class: a summary (students, submissions, late ones, files collect could not
place), the score distribution per lesson, the pass rate per graded cell, the slowest tests, every
submission whose record is not OK with its reason, and the grade table.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path

from autograder import coursedir, export
from autograder import records as recs

CSS = """body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse} td,th{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left}
td.num{text-align:right} img{max-width:100%} h2{margin-top:2rem} .bad{color:#a11}"""


def _png(fig) -> str:
    """A matplotlib figure as an inline ``<img>`` (base64 PNG), then closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f"<img alt='plot' src='data:image/png;base64,{data}'>"


def _table(head: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td class='num'>{html.escape(str(v))}</td>" if i in numeric
                                    else f"<td>{html.escape(str(v))}</td>" for i, v in enumerate(row)) + "</tr>")
    return "".join(out) + "</table>"


def score_distribution(grades: export.Grades) -> str:
    """One histogram per lesson of the submissions' scores (in % of the lesson's points)."""
    import matplotlib.pyplot as plt

    n = len(grades.lessons)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n, 2.6), squeeze=False, sharey=True)
    for ax, lesson in zip(axes[0], grades.lessons):
        top = grades.max_score[lesson] or 1.0
        values = [100 * grades.score[(s, lesson)] / top for s in grades.students if (s, lesson) in grades.score]
        ax.hist(values, bins=[0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100.01], color="#4878a8", edgecolor="white")
        ax.set_title(f"{lesson}\n{len(values)} submissions", fontsize=9)
        ax.set_xlabel("score (%)")
    axes[0][0].set_ylabel("submissions")
    fig.suptitle("Score distribution per lesson", fontsize=10)
    return _png(fig)


def pass_rates(grades: export.Grades) -> list[tuple[str, str, float, int]]:
    """``[(lesson, graded cell, pass rate, submissions)]``: full marks on the cell, from the gradebook."""
    counts: dict[tuple[str, str], list[int]] = {}
    for _, lesson, cell, score, max_score in grades.cells:
        entry = counts.setdefault((lesson, cell), [0, 0])
        entry[0] += score >= max_score - 1e-9
        entry[1] += 1
    return [(lesson, cell, passed / total, total) for (lesson, cell), (passed, total) in sorted(counts.items())]


def pass_rate_plot(rates: list[tuple[str, str, float, int]]) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.22 * len(rates) + 1))
    labels = [f"{export.short_name(lesson)}: {cell}" for lesson, cell, _, _ in rates]
    values = [100 * rate for _, _, rate, _ in rates]
    colors = ["#c0504d" if v < 50 else "#e6a33e" if v < 80 else "#59a14f" for v in values]
    ax.barh(range(len(rates)), values, color=colors)
    ax.set_yticks(range(len(rates)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("submissions with full marks on the cell (%)")
    ax.set_title("Pass rate per graded cell", fontsize=10)
    return _png(fig)


def slowest(records: list[dict], count: int = 15) -> list[tuple[float, str, str, str, bool]]:
    """The ``count`` slowest tests: ``(seconds, student, lesson, graded cell, passed)``."""
    rows = [(float(t.get("seconds") or 0.0), r["student"], r["lesson"], t["grade_id"], bool(t.get("passed")))
            for r in records for t in r["tests"]]
    return sorted(rows, key=lambda row: (-row[0], row[1], row[2], row[3]))[:count]


def slowest_plot(records: list[dict]) -> str:
    import matplotlib.pyplot as plt

    by_cell: dict[str, list[float]] = {}
    for record in records:
        for test in record["tests"]:
            key = f"{export.short_name(record['lesson'])}: {test['grade_id']}"
            by_cell.setdefault(key, []).append(float(test.get("seconds") or 0.0))
    keys = sorted(by_cell, key=lambda k: -max(by_cell[k]))[:15]
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(keys) + 1))
    ax.boxplot([by_cell[k] for k in keys], orientation="horizontal", tick_labels=keys)
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=7)
    ax.set_xlabel("seconds per test (all submissions)")
    ax.set_title("The slowest graded cells", fontsize=10)
    return _png(fig)


def build(root: Path, lessons: list[str] | None = None) -> str:
    """The report's HTML text."""
    import matplotlib

    matplotlib.use("Agg")
    root = Path(root)
    grades = export.read_grades(root, lessons)
    records = [r for r in recs.load(root) if r["lesson"] in grades.lessons]
    if not grades.score:
        raise coursedir.CourseError("the gradebook holds no graded submission: grade first with "
                                    "`avgpool-course grade`")
    collect_log = root / "reports" / "collect.json"
    skipped = json.loads(collect_log.read_text()).get("skipped", []) if collect_log.exists() else []
    late = sorted(key for key, value in grades.late.items() if value)
    bad = [r for r in records if r["status"] != "ok"]
    parts = [f"<h1>Class report: {html.escape(coursedir.course_id(root))}</h1>",
             f"<p>{len(grades.students)} students, {len(grades.score)} graded submissions in "
             f"{len(grades.lessons)} lessons; {len(late)} late; {len(bad)} not OK; "
             f"{len(skipped)} files collect could not place.</p>"]
    summary = []
    for lesson in grades.lessons:
        values = [grades.score[(s, lesson)] for s in grades.students if (s, lesson) in grades.score]
        full = sum(v >= grades.max_score[lesson] - 1e-9 for v in values)
        summary.append([lesson, len(values), f"{sum(values) / len(values):.1f}" if values else "-",
                        export.fmt(grades.max_score[lesson]), full])
    parts.append(_table(["lesson", "submissions", "mean score", "points", "full marks"], summary, {1, 2, 3, 4}))
    parts.append("<h2>Score distribution per lesson</h2>" + score_distribution(grades))
    rates = pass_rates(grades)
    parts.append("<h2>Pass rate per graded cell</h2>" + pass_rate_plot(rates))
    parts.append(_table(["lesson", "graded cell", "pass rate", "submissions"],
                        [[l, c, f"{100 * r:.0f}%", n] for l, c, r, n in rates], {2, 3}))
    parts.append("<h2>Slowest tests</h2>")
    if records:
        parts.append(slowest_plot(records))
        parts.append(_table(["seconds", "student", "lesson", "graded cell", "passed"],
                            [[f"{s:.2f}", st, l, c, "yes" if p else "no"] for s, st, l, c, p in slowest(records)],
                            {0}))
    else:
        parts.append("<p>No grading records found under records/ (timings come from the trusted grader).</p>")
    parts.append(f"<h2>Submissions that are not OK ({len(bad)})</h2>")
    parts.append(_table(["student", "lesson", "status", "score", "reason"],
                        [[r["student"], r["lesson"], r["status"], f"{(r.get('score') or 0):g}",
                          str(r.get("reason", ""))[:300]] for r in bad]) if bad else "<p>None.</p>")
    if late:
        parts.append(f"<h2>Late submissions ({len(late)})</h2>" + _table(
            ["student", "lesson"], [list(key) for key in late]))
    if skipped:
        parts.append(f"<h2>Files collect could not place ({len(skipped)})</h2>" + _table(
            ["file", "reason"], [[s["file"], s["reason"]] for s in skipped]))
    parts.append("<h2>Grades</h2><pre>" + html.escape(export.table(grades)) + "</pre>")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Class report</title>"
            f"<style>{CSS}</style></head><body>{''.join(parts)}</body></html>\n")


def write_report(root: Path, out: Path | None = None, lessons: list[str] | None = None) -> Path:
    """Write the report (default ``root/reports/report.html``); returns its path."""
    out = Path(out) if out else Path(root) / "reports" / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build(root, lessons))
    return out
