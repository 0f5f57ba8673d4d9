"""Grades out of nbgrader's gradebook: a table per student and lesson, and CSV files.

Read through ``nbgrader.api.Gradebook`` (final scores, as ``nbgrader export`` gives them: manual grades,
where an instructor gave one in formgrader, win over automatic ones, and nbgrader's late penalty, from
``c.LateSubmissionPlugin.penalty_method`` when ``nbgrader autograde`` ran, is taken off), after checking
that the gradebook belongs to this course.

* ``grades.csv``: one row per student: the score of each lesson (empty when not handed in, and when the
  trusted grader's record of that submission says ``grader-error``: whatever score nbgrader left in the
  gradebook then is a placeholder 0 or an earlier run's, never the student's grade), the total (empty
  while a score is withheld) and the maximum, then for each lesson the hours it was late (``<lesson>_hours_late``: after the due
  date in the gradebook, by ``timestamp.txt``) and nbgrader's late penalty (``<lesson>_penalty``);
* ``grades_by_cell.csv``: one row per student, lesson and graded cell: score, maximum, and whether the
  submission was late.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from autograder import coursedir


@dataclass
class Grades:
    """Scores read from the gradebook."""

    lessons: list[str]
    max_score: dict[str, float]                        # lesson -> points
    students: list[str]
    score: dict[tuple[str, str], float] = field(default_factory=dict)   # (student, lesson) -> score
    late: dict[tuple[str, str], bool] = field(default_factory=dict)
    seconds_late: dict[tuple[str, str], float] = field(default_factory=dict)  # nbgrader's total_seconds_late
    penalty: dict[tuple[str, str], float] = field(default_factory=dict)       # taken off the score
    cells: list[tuple[str, str, str, float, float]] = field(default_factory=list)  # student, lesson, cell, score, max
    withheld: dict[tuple[str, str], str] = field(default_factory=dict)  # (student, lesson) -> the grader's fault
    to_read: set[tuple[str, str, str]] = field(default_factory=set)  # (student, lesson, cell): needs manual grade

    def total(self, student: str) -> float | None:
        """The sum of the student's lessons (0 for one not handed in); None while a score is withheld."""
        if any((student, lesson) in self.withheld for lesson in self.lessons):
            return None
        return sum(self.score.get((student, lesson), 0.0) for lesson in self.lessons)

    def max_total(self) -> float:
        return sum(self.max_score.values())


def _submissions(gb, lesson: str) -> dict:
    """``{student: nbgrader's SubmittedAssignment}`` of ``lesson``, read in four queries: with their scores, late
    penalties, due dates, notebooks and grades (each grade's cell and maximum), which nbgrader's objects would
    otherwise load one at a time (a query per attribute of each submission and grade)."""
    from nbgrader.api import Assignment, Grade, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy.orm import joinedload, selectinload, undefer

    grades = selectinload(SubmittedAssignment.notebooks).selectinload(SubmittedNotebook.grades)
    query = (gb.db.query(SubmittedAssignment).join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
             .filter(Assignment.name == lesson)
             .options(undefer(SubmittedAssignment.score), undefer(SubmittedAssignment.late_submission_penalty),
                      joinedload(SubmittedAssignment.assignment), grades.joinedload(Grade.cell),
                      grades.undefer(Grade.max_score)))
    return {sub.student_id: sub for sub in query}


def read_grades(root: Path, lessons: list[str] | None = None) -> Grades:
    """Every submission's score and every graded cell's score in ``root/gradebook.db``."""
    root = Path(root)
    chosen = coursedir.check_lessons(lessons, root)
    coursedir.check_gradebook(root, must_exist=True)
    with coursedir.open_gradebook(root) as gb:
        graded = [a.name for a in gb.assignments if a.name in chosen]
        grades = Grades(lessons=graded, max_score={}, students=sorted(s.id for s in gb.students))
        for lesson in graded:
            assignment = gb.find_assignment(lesson)
            grades.max_score[lesson] = float(assignment.max_score)
            order = cell_order(root, lesson)
            submissions = _submissions(gb, lesson)
            for student in grades.students:
                sub = submissions.get(student)
                if sub is None:
                    continue
                penalty = float(sub.late_submission_penalty or 0.0)
                grades.score[(student, lesson)] = max(0.0, float(sub.score) - penalty)  # as nbgrader export
                grades.penalty[(student, lesson)] = penalty
                grades.seconds_late[(student, lesson)] = float(sub.total_seconds_late)
                grades.late[(student, lesson)] = bool(sub.total_seconds_late > 0)
                for notebook in sub.notebooks:
                    for grade in sorted(notebook.grades, key=lambda g: (order.get(g.cell.name, 10**6), g.cell.name)):
                        if grade.cell.type != "GradeCell":  # task cells have no automatic score
                            continue
                        grades.cells.append((student, lesson, grade.cell.name, float(grade.score or 0.0),
                                             float(grade.max_score)))
                        if grade.needs_manual_grade:  # a review verdict not yet scored by hand in formgrader
                            grades.to_read.add((student, lesson, grade.cell.name))
        withhold_grader_errors(root, grades)
        grades.students = sorted({s for s, _ in grades.score} | {s for s, _ in grades.withheld})
        for key in late_from_collect(root):
            if key in grades.score:
                grades.late[key] = True
    return grades


def withhold_grader_errors(root: Path, grades: Grades) -> None:
    """Take out of ``grades`` every submission whose trusted-grader record says ``grader-error``: nbgrader
    writes a row (every cell 0, "needs manual grade") for a notebook it failed on, or keeps an earlier
    run's scores, and neither is the student's grade. ``grades.withheld`` keeps the reason."""
    from autograder.records import record_dicts

    for record in record_dicts(root):
        key = (record["student"], record["lesson"])
        if record["status"] != "grader-error" or record["lesson"] not in grades.lessons:
            continue
        grades.withheld[key] = record.get("reason") or "grader error"
        for table in (grades.score, grades.late, grades.seconds_late, grades.penalty):
            table.pop(key, None)
        grades.cells = [c for c in grades.cells if (c[0], c[1]) != key]
        grades.to_read = {c for c in grades.to_read if (c[0], c[1]) != key}


def cell_order(root: Path, lesson: str) -> dict[str, int]:
    """``{grade_id: position}`` of the graded cells in the lesson's release notebook (the notebook's order)."""
    import nbformat

    cells = nbformat.read(coursedir.notebook(root, "release", lesson), as_version=4).cells
    return {c.metadata["nbgrader"]["grade_id"]: i for i, c in enumerate(cells)
            if c.metadata.get("nbgrader", {}).get("grade_id")}


def late_from_collect(root: Path) -> set[tuple[str, str]]:
    """(student, lesson) that ``collect`` found late (LMS LATE mark, or after ``--due``)."""
    import json

    log = Path(root) / "reports" / "collect.json"
    if not log.exists():
        return set()
    return {(p["student"], p["lesson"]) for p in json.loads(log.read_text()).get("placed", []) if p.get("late")}


def fmt(value: float | None) -> str:
    """A score as the CSV and the table print it: ``7`` or ``7.5``; empty for None (withheld)."""
    return "" if value is None else f"{value:g}"


def write_csv(grades: Grades, folder: Path) -> tuple[Path, Path]:
    """``folder/grades.csv`` and ``folder/grades_by_cell.csv``; returns both paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    per_student = folder / "grades.csv"
    with per_student.open("w", newline="") as handle:
        writer = csv.writer(handle)
        late_heads = [f"{lesson}_{what}" for lesson in grades.lessons for what in ("hours_late", "penalty")]
        writer.writerow(["student", *grades.lessons, "total", "max_total", *late_heads])
        for student in grades.students:
            row = [fmt(grades.score[(student, lesson)]) if (student, lesson) in grades.score else ""
                   for lesson in grades.lessons]
            late = [value for lesson in grades.lessons for value in
                    ((fmt(round(grades.seconds_late.get((student, lesson), 0.0) / 3600, 2)),
                      fmt(grades.penalty.get((student, lesson), 0.0)))
                     if (student, lesson) in grades.score else ("", ""))]
            writer.writerow([student, *row, fmt(grades.total(student)), fmt(grades.max_total()), *late])
    per_cell = folder / "grades_by_cell.csv"
    with per_cell.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "lesson", "graded_cell", "score", "max_score", "late"])
        for student, lesson, cell, score, max_score in grades.cells:
            writer.writerow([student, lesson, cell, fmt(score), fmt(max_score),
                             int(grades.late.get((student, lesson), False))])
    return per_student, per_cell


def short_name(lesson: str) -> str:
    """``lesson2_loops`` -> ``lesson2`` (the table's column header)."""
    return lesson.split("_")[0]


def table(grades: Grades, marks: dict[tuple[str, str], str] | None = None) -> str:
    """A compact text table: one row per student, one column per lesson (``-``: not handed in, ``error``: the
    grader failed on it, no score; the total then reads ``?``).

    ``marks``: a suffix per (student, lesson), e.g. ``L`` for late or ``!`` for a non-OK record.
    """
    marks = marks or {}
    width = max([7] + [len(s) for s in grades.students])
    heads = [f"{short_name(l)}/{fmt(grades.max_score[l])}" for l in grades.lessons]
    cols = [max(9, len(h)) for h in heads]
    lines = [f"{'student':<{width}}  " + "  ".join(f"{h:>{c}}" for h, c in zip(heads, cols))
             + f"  {'total/' + fmt(grades.max_total()):>10}"]
    for student in grades.students:
        cells = []
        for lesson, c in zip(grades.lessons, cols):
            if (student, lesson) in grades.score:
                text = fmt(grades.score[(student, lesson)]) + marks.get((student, lesson), "")
            else:
                text = "error" if (student, lesson) in grades.withheld else "-"
            cells.append(f"{text:>{c}}")
        total = grades.total(student)
        lines.append(f"{student:<{width}}  " + "  ".join(cells) + f"  {'?' if total is None else fmt(total):>10}")
    return "\n".join(lines)


def parse_table(text: str) -> dict[tuple[str, str], float]:
    """Read back a table printed by :func:`table` (lesson short names as keys); for tests and tools."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    heads = [h.split("/")[0] for h in lines[0].split()[1:-1]]
    found = {}
    for line in lines[1:]:
        parts = line.split()
        for head, value in zip(heads, parts[1:-1]):
            if value not in ("-", "error"):
                found[(parts[0], head)] = float(value.rstrip("L!*"))
        if parts[-1] != "?":
            found[(parts[0], "total")] = float(parts[-1])
    return found
