"""Who is who: the class roster (Canvas gradebook or Moodle participants CSV) and the students the
gradebook already knows, matched to the names an export gives."""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.coursedir import CourseError
from autograder.collect.names import Name, normalize, split_name


@dataclass
class Person:
    """A student as the roster or the gradebook knows them (``student``: nbgrader's id, '' if none)."""

    student: str
    first_name: str = ""
    last_name: str = ""
    lms_id: str | None = None
    from_roster: bool = False


@dataclass
class Candidate:
    """A notebook of an export that may be placed: its file, parsed name, lesson, time, and the person matched."""

    file: str
    path: Path
    name: Name
    lesson: str
    timestamp: dt.datetime | None
    time_from: str | None
    late_marker: bool
    copy: int
    person: Person | None = None


@dataclass
class Roster:
    """``--roster``: people by LMS user id and by the slug of their full name."""

    source: str
    by_lms_id: dict[str, Person] = field(default_factory=dict)
    by_name: dict[str, list[Person]] = field(default_factory=dict)


def check_student_id(value: str, where: str) -> str:
    """``value`` if nbgrader can use it as a student id (a folder name it globs), else CourseError."""
    bad = (not value or value != value.strip() or value.startswith(".") or len(value) > 128
           or any(c in value for c in "/\\*?[]") or any(c.isspace() for c in value))
    if bad:
        raise CourseError(f"{where}: {value!r} cannot be an nbgrader student id (it becomes a folder name: no "
                          "spaces, '/', '\\', '*', '?', '[', ']', no leading '.', at most 128 characters); fix "
                          "that cell, or empty it to derive the id from the name")
    return value


def _column(header: dict[str, str], *names: str) -> str | None:
    """The roster column named one of ``names`` (any case), or None."""
    return next((header[n.lower()] for n in names if n.lower() in header), None)


def read_roster(path: str | Path) -> Roster:
    """``--roster``: a Canvas gradebook CSV (Student, ID, SIS User ID, SIS Login ID...) or a Moodle
    participants / grading worksheet CSV (First name, Last name or Surname, or Full name; ID, Identifier,
    ID number, Username...), told apart by the header."""
    path = Path(path)
    try:
        rows = list(csv.reader(path.read_text(encoding="utf-8-sig").splitlines()))
    except (OSError, UnicodeDecodeError) as exc:
        raise CourseError(f"--roster {path}: cannot be read ({exc}); export the roster from the LMS as a "
                          "UTF-8 CSV file and pass its path") from None
    header = {h.strip().lower(): h.strip() for h in rows[0]} if rows else {}
    index = {h.strip(): i for i, h in enumerate(rows[0])} if rows else {}
    canvas = _column(header, "Student") and _column(header, "SIS Login ID", "SIS User ID") and _column(header, "ID")
    moodle = _column(header, "First name", "Full name")
    if not (canvas or moodle):
        raise CourseError(f"--roster {path}: the header ({', '.join(list(header.values())[:6])}) is neither a "
                          "Canvas gradebook export (Student, ID, SIS User ID, SIS Login ID) nor a Moodle "
                          "participants export (First name, Last name, ID number...); export it again from the LMS")
    if canvas:
        id_col, student_cols = _column(header, "ID"), ("SIS Login ID", "SIS User ID")
    else:
        id_col, student_cols = _column(header, "Identifier", "ID", "User ID", "Participant"), ("ID number", "Username")
    roster = Roster(str(path))
    for line, row in enumerate(rows[1:], start=2):
        cell = {name: row[i].strip() for name, i in index.items() if i < len(row)}
        lms_id = re.sub(r"\D", "", cell.get(id_col, "")) if id_col else ""
        if canvas:
            full = cell.get(_column(header, "Student"), "")
            last, _, first = full.partition(",")  # Canvas writes "Last, First"
            first, last = (first.strip(), last.strip()) if "," in full else split_name(full)
            if not lms_id or not (first or last):  # "Points Possible" and other non-student rows
                continue
        else:
            first = cell.get(_column(header, "First name") or "", "")
            last = cell.get(_column(header, "Last name", "Surname") or "", "")
            if not (first or last):
                first, last = split_name(cell.get(_column(header, "Full name") or "", ""))
            if not (first or last):
                continue
        column = next((c for c in (_column(header, n) for n in student_cols) if c and cell.get(c)), None)
        student = check_student_id(cell[column], f"--roster {path}, line {line}, {column}") if column else ""
        person = Person(student, first, last, lms_id or None, from_roster=True)
        if lms_id:
            roster.by_lms_id[lms_id] = person
        roster.by_name.setdefault(normalize(f"{first} {last}"), []).append(person)
    if not roster.by_lms_id and not roster.by_name:
        raise CourseError(f"--roster {path}: no student in it; export the class's roster (with the students' "
                          "names and ids) from the LMS")
    return roster


def known_students(root: Path) -> list[Person]:
    """The students already in the course's gradebook (none when there is no gradebook yet)."""
    from autograder import coursedir

    if not coursedir.gradebook_exists(root):
        return []
    coursedir.check_gradebook(root)
    with coursedir.open_gradebook(root) as gb:
        return [Person(s.id, s.first_name or "", s.last_name or "", s.lms_user_id) for s in gb.students]


def identify(cands: list[Candidate], roster: Roster | None, known: list[Person]) -> dict[int, str]:
    """Give each candidate its student id and person; ``{index: problem}`` for those who cannot have one.

    The LMS id is the identity: two ids never share a student id (the second gets ``<name>_<id>``); the
    roster, then the gradebook (an LMS id it has seen), pin an id; a file without an id joins the one
    student of that name who has one."""
    ids: dict[str, set[str]] = {}
    for cand in cands:
        if cand.name.lms_id:
            ids.setdefault(cand.name.slug, set()).add(cand.name.lms_id)
    problems: dict[int, str] = {}
    keys: dict[int, tuple[str, str]] = {}
    for i, cand in enumerate(cands):
        owners = ids.get(cand.name.slug, set())
        if cand.name.lms_id:
            keys[i] = ("lms", cand.name.lms_id)
        elif len(owners) > 1:
            problems[i] = (f"names {cand.name.display!r}, but {len(owners)} students of that name have LMS ids "
                           f"({', '.join(sorted(owners))}); rename the file as the LMS does, with the id "
                           "(<name>_<id>_...), or pass --roster")
        else:
            keys[i] = ("lms", next(iter(owners))) if owners else ("name", cand.name.slug)
    by_lms = {p.lms_id: p for p in known if p.lms_id}
    by_id = {p.student: p for p in known}
    people: dict[tuple[str, str], Person] = {}
    pinned: set[tuple[str, str]] = set()
    for i in sorted(keys):
        key, name = keys[i], cands[i].name
        if key in people:
            continue
        lms_id = key[1] if key[0] == "lms" else None
        person = roster.by_lms_id.get(lms_id) if roster and lms_id else None
        if roster and person is None:  # by name: one person of that name, without another LMS id
            matches = [p for p in roster.by_name.get(name.slug, []) if p.lms_id in (None, lms_id)]
            person = matches[0] if len(matches) == 1 else None
        if person is None:
            first, last = name.first_last()
            person = Person("", first, last, lms_id)
        person = Person(**asdict(person))
        person.lms_id = person.lms_id or lms_id
        if not person.student and lms_id in by_lms:
            person.student = by_lms[lms_id].student
        if person.student:
            pinned.add(key)
        else:
            person.student = name.slug
        people[key] = person
    claims: dict[str, set[tuple[str, str]]] = {}
    for key, person in people.items():
        claims.setdefault(person.student, set()).add(key)
    for key, person in people.items():
        if key in pinned or key[0] != "lms":
            continue
        holder = by_id.get(person.student)
        if len(claims[person.student]) > 1 or (holder and holder.lms_id and holder.lms_id != key[1]):
            person.student = f"{person.student}_{key[1]}"
    for i, key in keys.items():
        cands[i].person = people[key]
    return problems
