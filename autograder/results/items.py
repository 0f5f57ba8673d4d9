"""Item analysis: for each graded cell of each lesson, how hard it is, whether it tells the stronger
students from the weaker ones, and which failures students meet most.

Scores come from the gradebook (``export.Grades.cells``: manual grades and withheld grader errors as
everywhere else), failure messages from the trusted grader's records. Statistics are pandas':

* ``full`` / ``partial`` / ``zero``: shares of the cell's scored submissions;
* ``difficulty``: mean score ÷ the cell's points (1.0: everyone got it, 0.0: nobody did);
* ``discrimination``: the point-biserial (Pearson) correlation of the cell's score with the rest of the
  lesson's total (the total minus this cell), over ``discrimination_n`` students; empty when either side
  is the same for everyone (no correlation exists);
* failures grouped by :func:`normalise` (numbers, quoted names and line numbers made alike), each with its
  count and one example student; a short answer waiting for a person (``review``) is counted apart from
  a lost point, a grader error apart from both.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.results import export

#: A cell at or above this difficulty is one nearly everyone passes; at or below ``1 - EASY``, nearly everyone fails.
EASY = 0.95
#: Failure groups kept per cell (the rest are counted in ``lost``).
TOP_FAILURES = 3
GRADER_ERROR = "grader-error"


@dataclass
class Failure:
    """One group of alike failure messages of a cell: its normalised text, how many, one example."""

    pattern: str
    count: int
    student: str
    message: str
    grader_error: bool = False


@dataclass
class Item:
    """The figures of one graded cell (shares and difficulty in 0..1; discrimination None where undefined)."""

    lesson: str
    cell: str
    points: float
    n: int
    full: float
    partial: float
    zero: float
    difficulty: float
    discrimination: float | None
    discrimination_n: int
    lost: int = 0             # failed tests that are the student's (no review, no grader error)
    review: int = 0           # short answers waiting for a person (0 until scored by hand)
    grader_errors: int = 0    # failures of the grader, not the student
    failures: list[Failure] = field(default_factory=list)

    @property
    def flags(self) -> list[str]:
        """What an instructor should look at in this cell, in words."""
        flags = []
        if self.n and self.difficulty >= EASY:
            flags.append("nearly everyone passes")
        if self.n and self.difficulty <= 1 - EASY:
            flags.append("nearly everyone fails")
        if self.discrimination is not None and self.discrimination < 0:
            flags.append("negative discrimination")
        if self.failures and self.failures[0].grader_error:
            flags.append("top failure is a grader error")
        return flags


_NAMED = re.compile(r"\b(name|attribute|argument|variable|function|module|object|key|parameter)\s+"
                    r"(['\"`])[^'\"`\n]{1,80}\2", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w])")  # not inside a name (float32)


def normalise(message: str, limit: int = 200) -> str:
    """A failure message with what differs between students made alike: quoted names after ``name``,
    ``attribute``... become ``'…'``, every number (line numbers, values, shapes; not a digit inside a name such
    as ``float32``) ``#``, runs of numbers
    ``#, …``, whitespace one space; cut at ``limit`` characters."""
    text = _NAMED.sub(lambda m: f"{m.group(1)} '…'", str(message))
    text = _NUMBER.sub("#", text)
    text = re.sub(r"#(?:[\s,]+#)+", "#, …", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _failures(records: list[dict]) -> dict[tuple[str, str], dict]:
    """``{(lesson, cell): {"groups": {pattern: Failure}, "lost", "review", "grader_errors"}}`` from the records."""
    found: dict[tuple[str, str], dict] = {}
    for record in sorted(records, key=lambda r: r["student"]):
        for test in record["tests"]:
            if test.get("passed"):
                continue
            entry = found.setdefault((record["lesson"], test["grade_id"]),
                                     {"groups": {}, "lost": 0, "review": 0, "grader_errors": 0})
            if test.get("review") is not None:
                entry["review"] += 1
                continue
            grader = record["status"] == GRADER_ERROR or test.get("fault") == GRADER_ERROR
            entry["grader_errors" if grader else "lost"] += 1
            message = str(test.get("message") or record.get("reason") or "failed")
            pattern = normalise(message)
            group = entry["groups"].get((pattern, grader))
            if group is None:
                entry["groups"][(pattern, grader)] = Failure(pattern, 1, record["student"],
                                                             " ".join(message.split())[:300], grader)
            else:
                group.count += 1
    return found


def analyse(grades: export.Grades, records: list[dict], orders: dict[str, dict[str, int]]) -> list[Item]:
    """One :class:`Item` per graded cell with a score, lessons in ``grades.lessons`` order, cells in notebook order."""
    import pandas as pd

    items: list[Item] = []
    if not grades.cells:
        return items
    scores = pd.DataFrame(grades.cells, columns=["student", "lesson", "cell", "score", "points"])
    failures = _failures(records)
    for lesson in grades.lessons:
        part = scores[scores["lesson"] == lesson]
        if part.empty:
            continue
        table = part.pivot_table(index="student", columns="cell", values="score", aggfunc="sum")
        total = table.sum(axis=1, min_count=1)
        order = orders.get(lesson, {})
        for cell in sorted(table.columns, key=lambda c: (order.get(c, 10**6), c)):
            points = float(part.loc[part["cell"] == cell, "points"].max())
            column = table[cell].dropna()
            rest = (total - table[cell]).loc[column.index]
            eps = 1e-9
            both = column.notna() & rest.notna()
            varies = column[both].nunique() > 1 and rest[both].nunique() > 1
            r = float(column[both].corr(rest[both])) if varies else None
            failed = failures.get((lesson, cell), {"groups": {}, "lost": 0, "review": 0, "grader_errors": 0})
            groups = sorted(failed["groups"].values(), key=lambda f: (-f.count, f.pattern))
            items.append(Item(
                lesson, cell, points, int(column.size),
                full=float((column >= points - eps).mean()),
                zero=float((column <= eps).mean()) if points > 0 else 0.0,
                partial=float(((column > eps) & (column < points - eps)).mean()),
                difficulty=float(column.mean() / points) if points > 0 else 1.0,
                discrimination=r, discrimination_n=int(both.sum()),
                lost=failed["lost"], review=failed["review"], grader_errors=failed["grader_errors"],
                failures=groups[:TOP_FAILURES]))
    return items


def per_lesson(items: list[Item]) -> dict[str, tuple[Item, Item | None]]:
    """``{lesson: (hardest cell, least discriminating cell or None)}``: lowest difficulty, lowest discrimination."""
    found = {}
    for lesson in dict.fromkeys(item.lesson for item in items):
        cells = [item for item in items if item.lesson == lesson]
        rated = [item for item in cells if item.discrimination is not None]
        found[lesson] = (min(cells, key=lambda i: i.difficulty),
                         min(rated, key=lambda i: i.discrimination) if rated else None)
    return found


def summary_lines(items: list[Item]) -> list[str]:
    """One line per lesson for the main job: its hardest and its least discriminating cell."""
    lines = []
    for lesson, (hardest, flat) in per_lesson(items).items():
        line = f"{lesson}: hardest {hardest.cell} (difficulty {hardest.difficulty:.2f})"
        line += (f", least discriminating {flat.cell} (r = {flat.discrimination:+.2f}, n = {flat.discrimination_n})"
                 if flat else ", discrimination: no cell's scores vary")
        lines.append(line)
    return lines


def figure(items: list[Item]):
    """Difficulty (x) against discrimination (y), one labelled point per graded cell, one panel per lesson
    (cells with the same figures share a point and a label: ``a, b +3``); cells with no discrimination
    (everyone the same) sit on the x axis as hollow points; flagged cells are red."""
    import matplotlib.pyplot as plt

    lessons = list(dict.fromkeys(item.lesson for item in items))
    columns = min(2, len(lessons))
    rows = -(-len(lessons) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.4 * rows), squeeze=False, layout="constrained")
    for ax, lesson in zip(axes.flat, lessons):
        cells = [item for item in items if item.lesson == lesson]
        places: dict[tuple[float, float], list[Item]] = {}  # cells on one spot share one label
        for item in cells:
            y = item.discrimination if item.discrimination is not None else 0.0
            places.setdefault((round(item.difficulty, 2), round(y, 2)), []).append(item)
        for (x, y), here in places.items():
            rated, bad = here[0].discrimination is not None, any(item.flags for item in here)
            color = "#c0504d" if bad else "#4878a8"
            ax.scatter([x], [y], s=22 + 6 * (len(here) - 1), facecolors=color if rated else "none", edgecolors=color)
            label = ", ".join(item.cell for item in here[:2]) + (f" +{len(here) - 2}" if len(here) > 2 else "")
            ax.annotate(label, (x, y), xytext=(3, 2), textcoords="offset points", fontsize=6)
        ax.axhline(0, color="#999", linewidth=0.6)
        ax.set_xlim(-0.05, 1.12)
        ax.set_ylim(-1.05, 1.05)
        ax.set_title(f"{export.short_name(lesson)} ({len(cells)} graded cells)", fontsize=9)
        ax.set_xlabel("difficulty (mean score ÷ points; 1 = everyone)")
        ax.set_ylabel("discrimination (r with the rest)")
    for ax in list(axes.flat)[len(lessons):]:
        ax.set_visible(False)
    return fig


def _pct(share: float) -> str:
    return f"{100 * share:.0f}%"


def rows(items: list[Item]) -> list[dict]:
    """The report's and the CSV's rows, one per cell, as text."""
    return [{"lesson": i.lesson, "graded_cell": i.cell, "points": export.fmt(i.points), "n": i.n,
             "full": _pct(i.full), "partial": _pct(i.partial), "zero": _pct(i.zero),
             "difficulty": f"{i.difficulty:.2f}",
             "discrimination": "" if i.discrimination is None else f"{i.discrimination:+.2f}",
             "discrimination_n": i.discrimination_n, "lost": i.lost, "review": i.review,
             "grader_errors": i.grader_errors, "flags": "; ".join(i.flags),
             "top_failure": i.failures[0].pattern if i.failures else "",
             "top_failure_count": i.failures[0].count if i.failures else "",
             "top_failure_student": i.failures[0].student if i.failures else ""} for i in items]


def write_csv(items: list[Item], path: Path) -> Path:
    """``path`` (``reports/items.csv``): :func:`rows` with shares as fractions, not percentages."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = rows(items)
    for row, item in zip(table, items):
        row.update(full=f"{item.full:.3f}", partial=f"{item.partial:.3f}", zero=f"{item.zero:.3f}",
                   difficulty=f"{item.difficulty:.3f}",
                   discrimination="" if item.discrimination is None else f"{item.discrimination:.3f}")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]) if table else ["lesson", "graded_cell"])
        writer.writeheader()
        writer.writerows(table)
    return path
