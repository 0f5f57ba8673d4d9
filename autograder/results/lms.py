"""Grades back into the LMS: the gradebook's scores as the LMS's own grade import file.

* Canvas (Grades > Import): its gradebook CSV: ``Student, ID, SIS User ID, SIS Login ID, Section``, one
  column per assignment (the roster's own ``name (id)`` header when it has one, so Canvas updates that
  assignment; else the lesson's name, which Canvas offers to create), a ``Points Possible`` row, then
  one row per student of the roster, with its identity cells copied from the roster;
* Moodle (Grades > Import > CSV file): one row per student keyed by the identifiers the roster gives
  (``ID number``, ``Username``, ``Email address``: map one to the user field of the same name), names,
  then one column per lesson (map it to the lesson's grade item).

Scores are the gradebook's final ones (:func:`export.read_grades`: manual grades win, the late penalty is
taken off). A lesson the student did not hand in, and a score withheld for a grader error, is an empty
cell, which both LMSs leave ungraded: never a 0. Every graded student must be one roster row: one the
roster lacks, one the roster gives two LMS ids, or two students on one roster row, is refused
(``CourseError``) and nothing is written.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from autograder import coursedir
from autograder.coursedir import CourseError
from autograder.results import export

LMS = ("canvas", "moodle")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_KEYS = ("ID number", "Username", "Email address")
MOODLE_NAMES = ("First name", "Last name", "Surname", "Full name")
#: Roster columns holding the LMS's user id (digits), and those holding the student's own identifier.
_LMS_ID = {"canvas": ("ID",), "moodle": ("Identifier", "ID", "User ID", "Participant")}
_STUDENT = {"canvas": ("SIS Login ID", "SIS User ID"), "moodle": ("ID number", "Username")}


@dataclass
class Written:
    """What :func:`write` wrote: the file, roster rows with a score, rows left empty, scores withheld."""

    path: Path
    graded: int
    empty: int
    withheld: list[str]


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The roster's header and its rows (``{header: cell}``), as the LMS exported them."""
    text = Path(path).read_text(encoding="utf-8-sig")
    reader = csv.DictReader(text.splitlines())
    return [h.strip() for h in reader.fieldnames or []], [
        {(k or "").strip(): (v or "").strip() for k, v in row.items() if isinstance(v, str)} for row in reader]


def _cell(row: dict[str, str], names: tuple[str, ...]) -> str:
    lower = {k.lower(): v for k, v in row.items()}
    return next((lower[n.lower()] for n in names if lower.get(n.lower())), "")


def _match(grades: export.Grades, root: Path, lms: str, rows: list[dict[str, str]], roster: Path) -> dict[int, str]:
    """``{roster row index: student id}`` for every graded student; CourseError for one the roster lacks,
    one it gives two LMS ids, or two on one row."""
    with coursedir.open_gradebook(root) as gb:
        lms_ids = {s.id: s.lms_user_id for s in gb.students}  # collect wrote them (from file names or --roster)
    found: dict[int, str] = {}
    for student in grades.students:
        lms_id = lms_ids.get(student)
        matches = [i for i, row in enumerate(rows)
                   if (lms_id and re.sub(r"\D", "", _cell(row, _LMS_ID[lms])) == lms_id)
                   or _cell(row, _STUDENT[lms]) == student]
        if not matches:
            raise CourseError(f"--roster {roster}: no row for the graded student {student!r}"
                              + (f" (LMS id {lms_id})" if lms_id else "") + "; export the roster again from the "
                              "LMS (the student may have enrolled late), or pass the roster collect used")
        ids = sorted({re.sub(r"\D", "", _cell(rows[i], _LMS_ID[lms])) for i in matches} - {""})
        if len(ids) > 1 or len(matches) > 1:
            raise CourseError(f"--roster {roster}: the graded student {student!r} is {len(matches)} roster rows "
                              f"with {len(ids)} LMS ids ({', '.join(ids) or 'none'}); one student must be one LMS "
                              "account: merge them in the LMS or remove the extra row, then export again")
        if matches[0] in found:
            raise CourseError(f"--roster {roster}: the graded students {found[matches[0]]!r} and {student!r} are "
                              f"one roster row (line {matches[0] + 2}); give each their own LMS id")
        found[matches[0]] = student
    return found


def write(root: Path, lms: str, roster: Path, out: Path | None = None, lessons: list[str] | None = None) -> Written:
    """Write ``lms``'s grade import file for the roster ``roster`` (default ``reports/<lms>_grades.csv``)."""
    if lms not in LMS:
        raise CourseError(f"--lms {lms!r}: must be one of {', '.join(LMS)}")
    root, roster = Path(root), Path(roster)
    try:
        header, rows = _rows(roster)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CourseError(f"--roster {roster}: cannot be read ({exc}); export the roster from the LMS as a "
                          "UTF-8 CSV file and pass its path") from None
    grades = export.read_grades(root, lessons)
    if lms == "moodle" and not any(k.lower() in map(str.lower, header) for k in MOODLE_KEYS):
        raise CourseError(f"--roster {roster}: a Moodle grade import needs a column that names each user "
                          f"({', '.join(MOODLE_KEYS)}); export the participants with one of them")
    if lms == "canvas" and not all(h in header for h in ("Student", "ID")):
        raise CourseError(f"--roster {roster}: a Canvas grade import needs the gradebook export's columns "
                          f"({', '.join(CANVAS_IDENTITY)}): export the roster with Grades > Export, not a Moodle file")
    owners = _match(grades, root, lms, rows, roster)
    heads = {lesson: next((h for h in header if re.fullmatch(rf"{re.escape(lesson)}\s*\(\d+\)", h)), lesson)
             for lesson in grades.lessons}
    identity = list(CANVAS_IDENTITY) if lms == "canvas" else [
        h for h in header if h.lower() in {n.lower() for n in MOODLE_NAMES + MOODLE_KEYS}]
    out = Path(out) if out else root / "reports" / f"{lms}_grades.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    graded = empty = 0
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(identity + [heads[lesson] for lesson in grades.lessons])
        if lms == "canvas":
            writer.writerow(["    Points Possible"] + [""] * (len(identity) - 1)
                            + [export.fmt(grades.max_score[lesson]) for lesson in grades.lessons])
        for i, row in enumerate(rows):
            if not (_cell(row, _LMS_ID[lms]) or _cell(row, _STUDENT[lms])) or "points possible" in \
                    row.get("Student", "").lower():
                continue  # the roster's own Points Possible row, and rows that name nobody
            student = owners.get(i)
            scores = [export.fmt(grades.score[(student, lesson)]) if (student, lesson) in grades.score else ""
                      for lesson in grades.lessons]
            graded += any(scores)
            empty += not any(scores)
            writer.writerow([row.get(h, "") for h in identity] + scores)
    withheld = sorted(f"{student} ({lesson})" for student, lesson in grades.withheld)
    return Written(out, graded, empty, withheld)


def describe(written: Written, lms: str) -> str:
    """The CLI's lines about a written file."""
    lines = [f"wrote {written.path}: {written.graded} students with a score, {written.empty} without (empty "
             f"cells: {lms.capitalize()} leaves them ungraded); import it in {lms.capitalize()} with "
             + ("Grades > Import" if lms == "canvas" else "Grades > Import > CSV file, mapping the identifier "
                "column to the user field of the same name")]
    if written.withheld:
        lines.append(f"left empty, grader error (grade them again first): {', '.join(written.withheld)}")
    return "\n".join(lines)

