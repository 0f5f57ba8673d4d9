"""The class report: one self-contained HTML page (inline CSS and script, plots as base64 PNG, no network).

Shows, for the graded class: a summary (students, submissions, late ones, files collect could not
place), the submissions that need a look (refused, suspicious, crashed or timed out, grader errors) with
what to do, the score distribution per lesson, the pass rate per graded cell, the slowest tests and a
sortable grade table. Graded cells are always in the release notebook's order.
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
td.num,th.num{text-align:right} img{max-width:100%} h2{margin-top:2rem}
.mark{font-size:.75em;border-radius:.3em;padding:0 .3em;margin-left:.3em;background:#eee}
.mark.late{background:#fde9c8} .mark.look{background:#f7d4d4;color:#a11}
table.sortable th{cursor:pointer} th[aria-sort=ascending]::after{content:" \\25B2"}
th[aria-sort=descending]::after{content:" \\25BC"} .ok{color:#2a7a2a}"""

#: Sorts a ``table.sortable`` by the clicked column (``data-sort`` of each cell: a number or text).
SCRIPT = """document.querySelectorAll("table.sortable th").forEach(function (th, column) {
  th.title = "click to sort";
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var up = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", up ? "ascending" : "descending");
    Array.from(body.rows).sort(function (a, b) {
      var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
      var order = isNaN(x) || isNaN(y) ? x.localeCompare(y) : x - y;
      return up ? order : -order;
    }).forEach(function (row) { body.appendChild(row); });
  });
});"""

#: Phrases of the grader's integrity refusals in a failed test's message: ``course.checks.check_avoids``
#: (a forbidden library, or code that hides what it calls) and ``StudentObject`` (a result that is not
#: plain data, e.g. an object with its own ``==``). A submission with one of them is "suspicious".
INTEGRITY = ("this exercise must not use", "code that hides what it calls", "code that reaches into the interpreter",
             "is not plain data")

#: What the instructor does about each kind of submission under "Needs a look".
TODO = {
    "invalid submission": "the file is not a notebook the grader can read: ask the student to download the .ipynb "
                          "from JupyterLab (File > Download) and submit it again",
    "no solution cells": "none of the lesson's solution cells are in the file: ask the student to resubmit the "
                         "release notebook with their answers in it",
    "timeout": "a cell ran past its time limit (an endless or very slow loop): run the notebook by hand and tell "
               "the student which cell; the tests after it scored 0",
    "memory": "a cell went over the memory limit (an array far too large?): run the notebook by hand and tell "
              "the student which cell",
    "crash": "the student's process died (os._exit, a segfault, a killed child): read the solution cell named in "
             "the reason",
    "grader-error": "not the student's fault and no score was written: fix the cause in the reason, then run "
                    "`avgpool-course grade --student {student} --lesson {lesson}` again",
    "suspicious": "the grader refused how the code works (a forbidden library, or code that hides what it "
                  "calls): read the solution cells before the score stands; talk to the student if deliberate",
}
KINDS = {"invalid submission": "refused", "no solution cells": "refused", "timeout": "timed out",
         "memory": "out of memory", "crash": "crashed", "grader-error": "grader error", "suspicious": "suspicious"}


def cell_orders(root: Path, lessons: list[str]) -> dict[str, dict[str, int]]:
    """``{lesson: {grade_id: position}}`` from each lesson's release notebook."""
    return {lesson: export.cell_order(root, lesson) for lesson in lessons}


def _cell_key(orders: dict[str, dict[str, int]], lesson: str, cell: str) -> tuple:
    """Sort key of a graded cell: its lesson's place, then the cell's place in the release notebook."""
    lessons = list(orders)
    return (lessons.index(lesson) if lesson in orders else len(lessons), orders.get(lesson, {}).get(cell, 10**6), cell)


def _png(fig) -> str:
    """A matplotlib figure as an inline ``<img>`` (base64 PNG), then closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f"<img alt='plot' src='data:image/png;base64,{data}'>"


def _cell(value, numeric: bool = False, sort=None, extra: str = "") -> str:
    """One escaped ``<td>``; ``sort`` becomes its ``data-sort`` (what the table sorts by), ``extra`` is HTML."""
    attrs = (" class='num'" if numeric else "") + (f" data-sort='{html.escape(str(sort))}'" if sort is not None else "")
    return f"<td{attrs}>{html.escape(str(value))}{extra}</td>"


def _table(head: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(_cell(v, i in numeric) for i, v in enumerate(row)) + "</tr>")
    return "".join(out) + "</tbody></table>"


def score_distribution_figure(grades: export.Grades):
    """One histogram per lesson of the submissions' scores (in % of the lesson's points); one title per panel."""
    import matplotlib.pyplot as plt

    n = len(grades.lessons)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n, 2.6), squeeze=False, sharey=True, layout="constrained")
    for ax, lesson in zip(axes[0], grades.lessons):
        top = grades.max_score[lesson] or 1.0
        values = [100 * grades.score[(s, lesson)] / top for s in grades.students if (s, lesson) in grades.score]
        ax.hist(values, bins=[0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100.01], color="#4878a8", edgecolor="white")
        ax.set_title(f"{export.short_name(lesson)} ({len(values)} submissions)", fontsize=9)
        ax.set_xlabel("score (%)")
    axes[0][0].set_ylabel("submissions")
    return fig


def pass_rates(grades: export.Grades, orders: dict[str, dict[str, int]]) -> list[tuple[str, str, float, int]]:
    """``[(lesson, graded cell, pass rate, submissions)]`` in notebook order: full marks on the cell."""
    counts: dict[tuple[str, str], list[int]] = {}
    for _, lesson, cell, score, max_score in grades.cells:
        entry = counts.setdefault((lesson, cell), [0, 0])
        entry[0] += score >= max_score - 1e-9
        entry[1] += 1
    return [(lesson, cell, passed / total, total) for (lesson, cell), (passed, total)
            in sorted(counts.items(), key=lambda item: _cell_key(orders, *item[0]))]


def pass_rate_figure(rates: list[tuple[str, str, float, int]]):
    """Horizontal bars, one per graded cell, top to bottom in the order of ``rates``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.22 * len(rates) + 1), layout="constrained")
    labels = [f"{export.short_name(lesson)}: {cell}" for lesson, cell, _, _ in rates]
    values = [100 * rate for _, _, rate, _ in rates]
    colors = ["#c0504d" if v < 50 else "#e6a33e" if v < 80 else "#59a14f" for v in values]
    ax.barh(range(len(rates)), values, color=colors)
    ax.set_yticks(range(len(rates)), labels, fontsize=7)
    ax.set_ylim(len(rates) - 0.5, -0.5)  # the first cell on top, no empty band
    ax.set_xlim(0, 100)
    ax.set_xlabel("submissions with full marks on the cell (%)")
    return fig


def slowest(records: list[dict], orders: dict[str, dict[str, int]], count: int = 15) -> list[tuple]:
    """The ``count`` slowest tests, slowest first (ties in notebook order): ``(seconds, student, lesson, cell, passed)``."""
    rows = [(float(t.get("seconds") or 0.0), r["student"], r["lesson"], t["grade_id"], bool(t.get("passed")))
            for r in records for t in r["tests"]]
    return sorted(rows, key=lambda row: (-row[0], _cell_key(orders, row[2], row[3]), row[1]))[:count]


def slowest_figure(records: list[dict], orders: dict[str, dict[str, int]], count: int = 15):
    """Box plots of the seconds per test of the ``count`` slowest graded cells, shown in notebook order."""
    import matplotlib.pyplot as plt

    by_cell: dict[tuple[str, str], list[float]] = {}
    for record in records:
        for test in record["tests"]:
            by_cell.setdefault((record["lesson"], test["grade_id"]), []).append(float(test.get("seconds") or 0.0))
    chosen = sorted(by_cell, key=lambda k: (-max(by_cell[k]), _cell_key(orders, *k)))[:count]
    keys = sorted(chosen, key=lambda k: _cell_key(orders, *k))
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(keys) + 1), layout="constrained")
    ax.boxplot([by_cell[k] for k in keys], orientation="horizontal",
               tick_labels=[f"{export.short_name(lesson)}: {cell}" for lesson, cell in keys])
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=7)
    ax.set_xlabel("seconds per test (all submissions)")
    return fig


def _one_line(text: str, limit: int = 240) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def needs_a_look(records: list[dict]) -> list[dict]:
    """Records an instructor must look at: ``{student, lesson, status, kind, reason, todo}``, one line each.

    Not OK (refused, timed out, out of memory, crashed, grader error), or OK but with a test the grader
    failed for integrity (:data:`INTEGRITY`: cheating caught, or at least a rule broken on purpose).
    """
    found = []
    for record in records:
        status = record["status"]
        reason = record.get("reason") or ""
        if status == "ok":
            caught = [f"{t['grade_id']}: {t.get('message', '')}" for t in record["tests"]
                      if not t.get("passed") and any(p in str(t.get("message", "")) for p in INTEGRITY)]
            if not caught:
                continue
            status = "suspicious"
            reason = caught[0] + (f" (and {len(caught) - 1} more tests)" if len(caught) > 1 else "")
        todo = TODO.get(status, "read the record under records/ and the submitted notebook")
        found.append({"student": record["student"], "lesson": record["lesson"], "status": record["status"],
                      "kind": KINDS.get(status, status), "reason": _one_line(reason or status),
                      "todo": todo.format(student=record["student"], lesson=record["lesson"])})
    return found


def _anchor(student: str, lesson: str) -> str:
    return html.escape(f"look-{student}-{lesson}".replace(" ", "_"))


def needs_a_look_html(looks: list[dict]) -> str:
    """The "Needs a look" section: one row per submission, with an anchor the grade table links to."""
    head = f"<h2>Needs a look ({len(looks)})</h2>"
    if not looks:
        return head + ("<p class='ok'>Nothing: no submission was refused, caught breaking the rules, crashed, "
                       "timed out or hit a grader error.</p>")
    rows = "".join(f"<tr id='{_anchor(l['student'], l['lesson'])}'>" + _cell(l["student"]) + _cell(l["lesson"])
                   + _cell(l["kind"]) + _cell(l["reason"]) + _cell(l["todo"]) + "</tr>" for l in looks)
    return (head + "<table><thead><tr><th>student</th><th>lesson</th><th>what</th><th>reason</th>"
            "<th>what to do</th></tr></thead><tbody>" + rows + "</tbody></table>")


def grade_table(grades: export.Grades, looks: list[dict], extra_students: list[str] = ()) -> str:
    """The grade table: one row per student, a column per lesson and the total; late and needs-a-look
    marks on the scores; sortable by a click on a header (inline script; without it, sorted by student)."""
    flagged = {(l["student"], l["lesson"]): l["kind"] for l in looks}
    heads = ["<th>student</th>"] + [f"<th class='num'>{html.escape(export.short_name(l))} / "
                                    f"{html.escape(export.fmt(grades.max_score[l]))}</th>" for l in grades.lessons]
    heads.append(f"<th class='num'>total / {html.escape(export.fmt(grades.max_total()))}</th>")
    rows = []
    for student in sorted(set(grades.students) | set(extra_students)):
        cells = [_cell(student, sort=student)]
        for lesson in grades.lessons:
            key = (student, lesson)
            marks = late_mark(grades, key)
            if key in flagged:
                marks += (f"<a class='mark look' href='#{_anchor(student, lesson)}' title='see Needs a look'>"
                          f"{html.escape(flagged[key])}</a>")
            score = grades.score.get(key)
            cells.append(_cell("-" if score is None else export.fmt(score), True, -1 if score is None else score,
                               marks))
        cells.append(_cell(export.fmt(grades.total(student)), True, grades.total(student)))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ("<table class='sortable grades'><thead><tr>" + "".join(heads) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table><p>- not handed in (or no score written); <span class='mark late'>"
            "late</span> handed in late (with the hours and nbgrader's late penalty, already taken off the "
            "score); a red mark: see Needs a look. Click a header to sort.</p>")


def late_mark(grades: export.Grades, key: tuple[str, str]) -> str:
    """``late``, ``late 34 h`` or ``late 34 h −25`` (the penalty nbgrader took off), as a mark on the score."""
    if not grades.late.get(key):
        return ""
    hours = grades.seconds_late.get(key, 0.0) / 3600
    penalty = grades.penalty.get(key, 0.0)
    text = "late" + (f" {hours:.0f} h" if hours else "") + (f" −{export.fmt(penalty)}" if penalty else "")
    title = "handed in late" + (f", {hours:.1f} hours after the due date" if hours else "") + (
        f"; nbgrader's late penalty of {export.fmt(penalty)} points is taken off the score" if penalty else "")
    return f"<span class='mark late' title='{html.escape(title)}'>{html.escape(text)}</span>"


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
    orders = cell_orders(root, grades.lessons)
    collect_log = root / "reports" / "collect.json"
    skipped = json.loads(collect_log.read_text()).get("skipped", []) if collect_log.exists() else []
    late = sum(bool(value) for key, value in grades.late.items() if key in grades.score)
    looks = needs_a_look(records)
    parts = [f"<h1>Class report: {html.escape(coursedir.course_id(root))}</h1>",
             f"<p>{len(grades.students)} students, {len(grades.score)} graded submissions in "
             f"{len(grades.lessons)} lessons; {late} late; {len(looks)} need a look; "
             f"{len(skipped)} files collect could not place.</p>", needs_a_look_html(looks)]
    summary = []
    for lesson in grades.lessons:
        values = [grades.score[(s, lesson)] for s in grades.students if (s, lesson) in grades.score]
        full = sum(v >= grades.max_score[lesson] - 1e-9 for v in values)
        summary.append([lesson, len(values), f"{sum(values) / len(values):.1f}" if values else "-",
                        export.fmt(grades.max_score[lesson]), full])
    parts.append("<h2>Lessons</h2>" + _table(["lesson", "submissions", "mean score", "points", "full marks"],
                                             summary, {1, 2, 3, 4}))
    parts.append("<h2>Score distribution per lesson</h2>" + _png(score_distribution_figure(grades)))
    rates = pass_rates(grades, orders)
    parts.append("<h2>Pass rate per graded cell</h2><p>In notebook order; red under 50 %, orange under 80 %.</p>"
                 + _png(pass_rate_figure(rates)))
    parts.append(_table(["lesson", "graded cell", "pass rate", "submissions"],
                        [[l, c, f"{100 * r:.0f}%", n] for l, c, r, n in rates], {2, 3}))
    parts.append("<h2>Slowest tests</h2>")
    if records:
        parts.append("<p>The slowest graded cells, in notebook order (seconds per test over all submissions), "
                     "then the slowest single tests.</p>" + _png(slowest_figure(records, orders)))
        parts.append(_table(["seconds", "student", "lesson", "graded cell", "passed"],
                            [[f"{s:.2f}", st, l, c, "yes" if p else "no"]
                             for s, st, l, c, p in slowest(records, orders)], {0}))
    else:
        parts.append("<p>No grading records found under records/ (timings come from the trusted grader).</p>")
    if skipped:
        parts.append(f"<h2>Files collect could not place ({len(skipped)})</h2>" + _table(
            ["file", "reason"], [[s["file"], s["reason"]] for s in skipped]))
    parts.append("<h2>Grades</h2>" + grade_table(grades, looks, [r["student"] for r in records]))
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Class report</title>"
            f"<style>{CSS}</style></head><body>{''.join(parts)}<script>{SCRIPT}</script></body></html>\n")


def write_report(root: Path, out: Path | None = None, lessons: list[str] | None = None) -> Path:
    """Write the report (default ``root/reports/report.html``); returns its path."""
    out = Path(out) if out else Path(root) / "reports" / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build(root, lessons))
    return out
