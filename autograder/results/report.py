"""The class report: one self-contained HTML page (inline CSS and script, plots as base64 PNG, no network).

Shows, for the graded class: a summary (students, submissions, late ones, files collect could not
place), the submissions that need a look (refused, suspicious, crashed or timed out, grader errors, short
answers to score by hand) with what to do, the score distribution per lesson, the pass rate per graded
cell, the item analysis of every graded cell (``items.py``: difficulty, discrimination, common failures,
flags; the same figures in ``items.csv`` beside the page), the slowest tests, where a submission's grading time
goes (median seconds by phase per lesson, from the records' phases) and a sortable grade table. Graded cells are always in the release notebook's order.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from autograder import coursedir
from autograder.results import export, items as item_analysis, templates
from autograder.records import PHASES, record_dicts
from autograder.variants import MISMATCH

#: Phrases of the grader's integrity refusals in a failed test's message: ``course.checks.check_avoids``'s
#: proved-forbidden verdict (a forbidden library reached by identity, or code the grader cannot read) and
#: ``StudentObject`` (a result that is not plain data, e.g. an object with its own ``==``). A submission with
#: one of them is "suspicious". What a rule could not prove (reflection, untraced calls) is a review verdict
#: instead, listed as a cell to read (issue 50 item 2).
INTEGRITY = ("this exercise must not use", "so it is not accepted here", "is not plain data")

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
    "variant id": "the notebook's id cell names someone else; the student was graded on the numbers of the "
                  "folder their work was collected under, as always: if the hand-worked answers lost points, they "
                  "may have worked on a classmate's numbers (`avgpool-course variants --student {student}` prints "
                  "theirs)",
    "review": "an answer in words the grader could not be sure of (it is none of the question's accepted forms, or "
              "it has hidden or foreign characters, a question or a quotation), or code a source rule could neither "
              "prove allowed nor forbidden (the construct, its line in the cell and the code are shown): it counts 0 "
              "until you score it by hand in formgrader (Manual Grading > {lesson} > {student}: the cell {cell} "
              "is flagged as needing a manual grade)",
}
KINDS = {"invalid submission": "refused", "no solution cells": "refused", "timeout": "timed out",
         "memory": "out of memory", "crash": "crashed", "grader-error": "grader error", "suspicious": "suspicious",
         "review": "answer to read", "variant id": "another student's id"}


def cell_orders(root: Path, lessons: list[str]) -> dict[str, dict[str, int]]:
    """``{lesson: {grade_id: position}}`` from each lesson's release notebook."""
    return {lesson: export.cell_order(root, lesson) for lesson in lessons}


def _cell_key(orders: dict[str, dict[str, int]], lesson: str, cell: str) -> tuple:
    """Sort key of a graded cell: its lesson's place, then the cell's place in the release notebook."""
    lessons = list(orders)
    return (lessons.index(lesson) if lesson in orders else len(lessons), orders.get(lesson, {}).get(cell, 10**6), cell)


def _png(fig) -> str:
    """A matplotlib figure as base64 PNG (the template inlines it as an ``<img>``), then closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


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


def pass_rates(grades: export.Grades, orders: dict[str, dict[str, int]]) -> list[tuple[str, str, float, int, int, int]]:
    """``[(lesson, graded cell, pass rate, submissions, lost, to read)]`` in notebook order. The pass rate is
    full marks on the cell; a submission short of them is *to read* while the gradebook flags the cell "needs
    manual grade" (a review verdict: an answer or code waiting for the instructor), else *lost*."""
    counts: dict[tuple[str, str], list[int]] = {}
    for student, lesson, cell, score, max_score in grades.cells:
        entry = counts.setdefault((lesson, cell), [0, 0, 0, 0])
        full = score >= max_score - 1e-9
        waiting = not full and (student, lesson, cell) in grades.to_read
        entry[0] += full
        entry[1] += 1
        entry[2] += not full and not waiting
        entry[3] += waiting
    return [(lesson, cell, passed / total, total, lost, waiting) for (lesson, cell), (passed, total, lost, waiting)
            in sorted(counts.items(), key=lambda item: _cell_key(orders, *item[0]))]


def pass_rate_figure(rates: list[tuple[str, str, float, int]]):
    """Horizontal bars, one per graded cell, top to bottom in the order of ``rates``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.22 * len(rates) + 1), layout="constrained")
    labels = [f"{export.short_name(lesson)}: {cell}" for lesson, cell, *_ in rates]
    values = [100 * rate for _, _, rate, *_ in rates]
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


#: The parts of a grading's time that follow one another (a stacked bar adds up to about its total_wall):
#: ``(label, phase, phase subtracted)``; the child's share of the tests, and the waits (for the child, for a core on a
#: busy machine), is tests_wall less the parent's CPU.
STACKED = (("child start", "child_start_wall", None), ("set-up in the child", "child_setup_wall", None),
           ("solution cells", "child_cells_wall", None), ("set-up in the parent", "parent_setup_cpu", None),
           ("tests: the parent", "tests_parent_cpu", None), ("tests: the child and waits", "tests_wall",
                                                             "tests_parent_cpu"),
           ("child stop", "child_stop_wall", None), ("record", "record_wall", None))


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def phase_medians(records: list[dict], lessons: list[str]) -> list[dict]:
    """Per lesson with timed records: ``{lesson, submissions, reused, median: {phase: seconds}}``, the median
    over its records that carry phases (``Record.phases``; a reused verdict's are those of the grading that
    computed it), for every phase of :data:`~autograder.records.PHASES` and the child's own ``child_reported_*``."""
    rows = []
    for lesson in lessons:
        timed = [r["phases"] for r in records if r["lesson"] == lesson and r.get("phases")]
        if not timed:
            continue
        names = list(PHASES) + sorted({k for p in timed for k in p if k.startswith("child_reported_")})
        median = {name: _median([float(p.get(name) or 0.0) for p in timed]) for name in names}
        rows.append({"lesson": lesson, "submissions": len(timed), "reused": sum(bool(p.get("reused")) for p in timed),
                     "median": median})
    return rows


def phase_figure(medians: list[dict]):
    """One stacked horizontal bar per lesson: the median seconds of each part of a submission's grading
    (:data:`STACKED`), first lesson on top."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.45 * len(medians) + 1.6), layout="constrained")
    left = [0.0] * len(medians)
    colors = plt.get_cmap("tab10").colors
    for index, (label, phase, less) in enumerate(STACKED):
        widths = [max(0.0, row["median"][phase] - (row["median"][less] if less else 0.0)) for row in medians]
        ax.barh(range(len(medians)), widths, left=left, color=colors[index % len(colors)], label=label)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_yticks(range(len(medians)), [export.short_name(row["lesson"]) for row in medians], fontsize=8)
    ax.set_ylim(len(medians) - 0.5, -0.5)
    ax.set_xlabel("median seconds per submission, by phase (records' phases)")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    return fig


def _one_line(text: str, limit: int = 240) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def needs_a_look(records: list[dict]) -> list[dict]:
    """What an instructor must look at: ``{student, lesson, status, kind, reason, todo}``, one line each.

    A record that is not OK (refused, timed out, out of memory, crashed, grader error), or OK but with a
    test the grader failed for integrity (:data:`INTEGRITY`: cheating caught, or at least a rule broken on
    purpose); and every cell to score by hand (a test whose verdict has a ``review``: a short answer, or
    code a source rule could not prove allowed or forbidden, with the construct, its line and the code).
    """
    found = []
    for record in records:
        status = record["status"]
        reason = record.get("reason") or ""
        student, lesson = record["student"], record["lesson"]
        if status == "ok":
            caught = [f"{t['grade_id']}: {t.get('message', '')}" for t in record["tests"]
                      if not t.get("passed") and any(p in str(t.get("message", "")) for p in INTEGRITY)]
            status = "suspicious" if caught else ""
            reason = caught[0] + (f" (and {len(caught) - 1} more tests)" if len(caught) > 1 else "") if caught else ""
        if status:
            todo = TODO.get(status, "read the record under records/ and the submitted notebook")
            found.append({"student": student, "lesson": lesson, "status": record["status"],
                          "kind": KINDS.get(status, status), "reason": _one_line(reason or status),
                          "todo": todo.format(student=student, lesson=lesson)})
        for note in record.get("notes") or []:
            if note.startswith(MISMATCH):
                found.append({"student": student, "lesson": lesson, "status": record["status"],
                              "kind": KINDS["variant id"], "reason": _one_line(note),
                              "todo": TODO["variant id"].format(student=student, lesson=lesson)})
        for test in record["tests"]:
            if test.get("review") is not None and not test.get("passed"):
                found.append({"student": student, "lesson": lesson, "status": record["status"],
                              "kind": KINDS["review"],
                              "reason": _one_line(f"{test['grade_id']}: {test['review']!r}", 600),
                              "todo": TODO["review"].format(student=student, lesson=lesson, cell=test["grade_id"])})
    return found


def _anchor(student: str, lesson: str) -> str:
    return f"look-{student}-{lesson}".replace(" ", "_")


def grade_rows(grades: export.Grades, looks: list[dict], extra_students: list[str] = ()) -> list[dict]:
    """The grade table's rows, one per student: ``{student, cells, total, total_sort}``, each cell
    ``{text, sort, late, look}`` (late: :func:`late_mark`; look: the Needs-a-look row it links to)."""
    flagged: dict = {}
    for look in looks:  # a submission's first row (its most serious kind) is the one the mark names
        flagged.setdefault((look["student"], look["lesson"]), look["kind"])
    rows = []
    for student in sorted(set(grades.students) | set(extra_students)):
        cells = []
        for lesson in grades.lessons:
            key = (student, lesson)
            score = grades.score.get(key)
            look = {"kind": flagged[key], "anchor": _anchor(student, lesson)} if key in flagged else None
            # a withheld score (grader error) shows only its Needs-a-look mark, which names the reason
            text = "" if key in grades.withheld else "-" if score is None else export.fmt(score)
            cells.append({"text": text, "sort": -1 if score is None else score,
                          "late": late_mark(grades, key), "look": look})
        total = grades.total(student)
        rows.append({"student": student, "cells": cells, "total": "?" if total is None else export.fmt(total),
                     "total_sort": -1 if total is None else total})
    return rows


def late_mark(grades: export.Grades, key: tuple[str, str]) -> dict | None:
    """``{text, title}`` of the late mark on a score (``late``, ``late 34 h`` or ``late 34 h −25``: the
    hours and the penalty nbgrader took off), None when it was on time."""
    if not grades.late.get(key):
        return None
    hours = grades.seconds_late.get(key, 0.0) / 3600
    penalty = grades.penalty.get(key, 0.0)
    text = "late" + (f" {hours:.0f} h" if hours else "") + (f" −{export.fmt(penalty)}" if penalty else "")
    title = "handed in late" + (f", {hours:.1f} hours after the due date" if hours else "") + (
        f"; nbgrader's late penalty of {export.fmt(penalty)} points is taken off the score" if penalty else "")
    return {"text": text, "title": title}


def _inputs(root: Path, lessons: list[str] | None) -> tuple[export.Grades, list[dict], dict[str, dict[str, int]]]:
    """The gradebook's grades, the records of its lessons and each lesson's cell order; CourseError when
    nothing is graded."""
    grades = export.read_grades(root, lessons)
    if not grades.score:
        raise coursedir.CourseError("the gradebook holds no graded submission: grade first with "
                                    "`avgpool-course grade`")
    records = [r for r in record_dicts(root) if r["lesson"] in grades.lessons]
    return grades, records, cell_orders(root, grades.lessons)


def items(root: Path, lessons: list[str] | None = None) -> list[item_analysis.Item]:
    """The item analysis of the graded class (one :class:`items.Item` per graded cell)."""
    return item_analysis.analyse(*_inputs(Path(root), lessons))


def build(root: Path, lessons: list[str] | None = None) -> str:
    """The report's HTML text."""
    return _build(root, lessons)[0]


def _build(root: Path, lessons: list[str] | None) -> tuple[str, list[item_analysis.Item]]:
    """The report's HTML text and its item analysis (one read of the gradebook for both)."""
    import matplotlib

    matplotlib.use("Agg")
    root = Path(root)
    grades, records, orders = _inputs(root, lessons)
    analysed = item_analysis.analyse(grades, records, orders)
    collect_log = root / "reports" / "collect.json"
    skipped = json.loads(collect_log.read_text()).get("skipped", []) if collect_log.exists() else []
    late = sum(bool(value) for key, value in grades.late.items() if key in grades.score)
    looks, anchors = [], set()
    for look in needs_a_look(records):  # the first of a submission's rows is the one its grade-table mark links to
        anchor = _anchor(look["student"], look["lesson"])
        anchor = anchor if anchor not in anchors else f"{anchor}-{len(anchors)}"
        anchors.add(anchor)
        looks.append(dict(look, anchor=anchor))
    summary = []
    for lesson in grades.lessons:
        values = [grades.score[(s, lesson)] for s in grades.students if (s, lesson) in grades.score]
        full = sum(v >= grades.max_score[lesson] - 1e-9 for v in values)
        summary.append([lesson, len(values), f"{sum(values) / len(values):.1f}" if values else "-",
                        export.fmt(grades.max_score[lesson]), full])
    rates = pass_rates(grades, orders)
    levels: dict[str, int] = {}
    for record in records:
        levels[record.get("level") or "unknown"] = levels.get(record.get("level") or "unknown", 0) + 1
    banners = sorted({part for r in records for part in str(r.get("containment", "")).split("; ")
                      if part.startswith("WARNING: graded at")})
    heads = [f"{export.short_name(l)} / {export.fmt(grades.max_score[l])}" for l in grades.lessons]
    medians = phase_medians(records, grades.lessons)
    phase_names = list(dict.fromkeys(name for row in medians for name in row["median"]))
    return templates.render(
        "report.html.j2", course_id=coursedir.course_id(root), students=len(grades.students),
        graded=len(grades.score), lessons=grades.lessons, late=late, looks=looks, banners=banners,
        levels=", ".join(f"{level} ({count})" for level, count in sorted(levels.items())), skipped=[
            [s["file"], s["reason"]] for s in skipped], summary=summary,
        score_png=_png(score_distribution_figure(grades)), pass_png=_png(pass_rate_figure(rates)),
        rates=[[l, c, f"{100 * r:.0f}%", n, lost, waiting] for l, c, r, n, lost, waiting in rates],
        items=item_analysis.rows(analysed), failures=[item for item in analysed if item.failures],
        items_png=_png(item_analysis.figure(analysed)) if analysed else "", easy=item_analysis.EASY,
        slow_png=_png(slowest_figure(records, orders)) if records else "",
        slowest=[[f"{s:.2f}", st, l, c, "yes" if p else "no"] for s, st, l, c, p in slowest(records, orders)],
        phases_png=_png(phase_figure(medians)) if medians else "", phase_heads=["lesson", "submissions"] + phase_names,
        phases=[[row["lesson"], f"{row['submissions']}" + (f" ({row['reused']} reused)" if row["reused"] else "")]
                + [f"{row['median'].get(name, 0.0):.3f}" for name in phase_names] for row in medians],
        grade_heads=heads + [f"total / {export.fmt(grades.max_total())}"],
        grade_rows=grade_rows(grades, looks, [r["student"] for r in records])), analysed


def write_report(root: Path, out: Path | None = None, lessons: list[str] | None = None) -> Path:
    """Write the report (default ``root/reports/report.html``) and its item analysis as ``items.csv`` in
    the same folder; returns the report's path."""
    out = Path(out) if out else Path(root) / "reports" / "report.html"
    page, analysed = _build(root, lessons)  # every mistake is raised here, before anything is written
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page)
    item_analysis.write_csv(analysed, out.parent / "items.csv")
    return out
