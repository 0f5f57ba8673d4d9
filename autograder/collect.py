"""Collect student notebooks from an LMS export (a .zip or a folder) into nbgrader's ``submitted/`` layout.

Learning platforms name files in many ways; all of these land in ``submitted/<student>/<lesson>/``::

    alice_12345_lesson2_loops.ipynb                 Canvas: login, user id, file id, then the file name
    alice_LATE_12345_67890_lesson2_loops-1.ipynb    Canvas marks late work in the name
    Wei Zhang_6666_assignsubmission_file_/my homework (final).ipynb   Moodle: full name, participant id
    Bob Smith - lesson1_by_hand (2).ipynb           full name, re-uploads numbered
    lesson3_numpy/carol/anything.ipynb              one folder per lesson, then per student
    carol/lesson3_numpy/lesson3_numpy.ipynb         nbgrader's own layout (with timestamp.txt)
    submissions/dave_lesson4_torch_LATE.ipynb       generic folders are ignored
    lesson1_by_hand_erin_attempt_2025-03-02-14-05-00.ipynb   Blackboard, with the upload time

The placing rules, in one place (``avgpool-course collect`` and ``nbgrader zip_collect``, through
:class:`LMSCollector`, use the same ones):

* lesson: the lesson name (or its ``lessonN`` prefix) found in the path, else ``--lesson``;
* student: only from the names the export itself gives (never from inside a zip a student uploaded:
  there any name may be anyone's): the first folder that names someone (or else the file name) once
  lesson names, copy numbers, dates and LMS words are removed: the words before the first number are
  the name, that number is the LMS's user id. Names keep their letters in any script (``José Núñez``
  -> ``jose_nunez``, ``李明`` -> ``李明``). The student id is the name, or ``<name>_<LMS id>`` when two
  LMS ids share a name (in this export or in the gradebook), or what ``--roster`` (a Canvas gradebook
  or Moodle participants CSV) says; the gradebook keeps each student's LMS id, so an id once given
  stays that student's;
* time: a date in the export's part of the name, else nbgrader's ``timestamp.txt`` beside the notebook
  (not inside a student's zip), else the export's zip entry time (a student's zip: that zip's time);
  times without a zone are the LMS's local time (``--timezone``, default UTC). Written to
  ``timestamp.txt`` in nbgrader's format, so that ``nbgrader autograde`` knows how late it is;
* late: marked LATE by the LMS, or after ``--due``; when one student handed in a lesson twice, the
  latest copy wins (by time, then copy number).

Every file that cannot be placed is reported with the reason and what to do; one bad file never stops
the others. Links, ``..`` and absolute paths are never followed; archives (an export zip, and a
student's zip in a zip or folder export alike) are unpacked within :class:`UnpackLimits`, checked while
streaming, each refusal reported.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import re
import shutil
import tempfile
import unicodedata
import zipfile
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

import nbformat

from autograder.coursedir import CourseError

#: Folder names an LMS or an instructor wraps submissions in; never a student.
GENERIC_FOLDERS = {"submissions", "submission", "submitted", "export", "exports", "downloads", "download",
                   "files", "file", "attachments", "assignments", "assignment", "notebooks", "notebook",
                   "uploads", "upload", "late", "students", "student", "work", "homework"}
#: Words an LMS adds to file names; never part of a student's name.
NOISE_WORDS = {"late", "attempt", "assignsubmission", "file", "onlinetext", "submission", "submitted",
               "ipynb", "copy", "final", "version", "v", "resubmission", "resubmit", "checkpoint"}
SKIP_PARTS = {"__MACOSX", ".ipynb_checkpoints"}
LINK_REASON = ("a symbolic link (it could point at another student's file or outside the export); not placed: "
               "put the file itself in the export")
UNPACKED = ".collect_unpacked.json"  # what collect unpacked: times, students' zips (hidden: never a submission)

DATE = re.compile(r"(?<!\d)(?P<y>20\d\d)[-_.]?(?P<mo>[01]\d)[-_.]?(?P<d>[0-3]\d)(?:[-_T ]?(?P<h>[0-2]\d)[-_:.]?"
                  r"(?P<mi>[0-5]\d)(?:[-_:.]?(?P<s>[0-5]\d))?)?(?!\d)")
COPY_NUMBER = re.compile(r"(?:\((\d+)\)|-(\d{1,2}))$")
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # what nbgrader writes and reads in timestamp.txt
#: Latin letters that Unicode does not decompose into a base letter and marks.
_LATIN = str.maketrans({"ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ø": "o", "Ø": "o",
                        "ł": "l", "Ł": "l", "đ": "d", "Đ": "d", "ð": "d", "Ð": "d", "þ": "th", "Þ": "th",
                        "ı": "i", "ŋ": "ng", "Ŋ": "ng"})
MAX_ID = 100  # nbgrader keeps student ids in 128 characters; room is left for ``_<LMS id>``


# --- names -----------------------------------------------------------------------------------------

def _word_char(char: str) -> bool:
    return unicodedata.category(char)[0] in "LMN"  # letters, marks (Devanagari vowels...), digits


def _slug_word(word: str) -> str:
    """One word, lower case: Latin letters without accents (``é`` -> ``e``), other scripts kept."""
    out = []
    for char in unicodedata.normalize("NFC", word).translate(_LATIN):
        parts = unicodedata.normalize("NFKD", char)
        out.append("".join(c for c in parts if c.isascii()) if parts[0].isascii() else char)
    return "".join(out).lower()


def _words(text: str) -> list[tuple[str, int, int]]:
    """``(slug, start, end)`` of every word of ``text`` (NFC): runs of letters, marks and digits."""
    found, start = [], None
    for index, char in enumerate(text + " "):
        if _word_char(char) and char != "_":
            start = index if start is None else start
        elif start is not None:
            slug = _slug_word(text[start:index])
            if slug:
                found.append((slug, start, index))
            start = None
    return found


def normalize(text: str) -> str:
    """Lower-case words joined by ``_`` (accents off Latin letters, other scripts kept), e.g.
    ``José Núñez`` -> ``jose_nunez``, ``Дмитрий Иванов`` -> ``дмитрий_иванов``."""
    return "_".join(slug for slug, _, _ in _words(unicodedata.normalize("NFC", text)))


@dataclass(frozen=True)
class Name:
    """A student as one path part names them: ``slug`` (the student id unless two share it), the LMS's
    user id when the name carries one, and the name as written (for the gradebook)."""

    slug: str
    lms_id: str | None
    display: str

    def first_last(self) -> tuple[str, str]:
        return split_name(self.display)


def split_name(display: str) -> tuple[str, str]:
    """(first name, last name) of a full name: the last word is the last name; one word is a first name."""
    first, _, last = " ".join(display.split()).rpartition(" ")
    return (first, last) if first else (last, "")


def name_in(text: str, lessons: list[str]) -> Name | None:
    """The student named by one path part (``None`` when no name is left once lessons, copy numbers,
    dates and LMS words are removed). The words before the first number are the name and that number
    is the LMS's user id (Canvas ``login_userid_...``, Moodle ``Full Name_id_assignsubmission_...``)."""
    stem = DATE.sub(" ", COPY_NUMBER.sub("", unicodedata.normalize("NFC", text).strip()))
    words = _words(stem)
    slugs = [w[0] for w in words]
    keep = [True] * len(words)
    for lesson in sorted(lessons, key=len, reverse=True):
        parts = lesson.split("_")
        for i in range(len(slugs) - len(parts) + 1):
            if all(keep[i:i + len(parts)]) and slugs[i:i + len(parts)] == parts:
                keep[i:i + len(parts)] = [False] * len(parts)
    prefixes = {lesson.split("_")[0] for lesson in lessons}
    name, lms_id = [], None
    for (slug, start, end), kept in zip(words, keep):
        if not kept or slug in prefixes or slug in NOISE_WORDS:
            continue
        if slug.isdigit():
            if name and slug.isascii():
                lms_id = slug
                break
            continue
        name.append((slug, start, end))
    if not name:
        return None
    display = stem[name[0][1]:name[0][2]]
    for (_, _, end), (_, start, stop) in zip(name, name[1:]):
        between = stem[end:start].strip()
        display += (between if between in ("'", "’", "-") else " ") + stem[start:stop]
    return Name("_".join(slug for slug, _, _ in name)[:MAX_ID].strip("_"), lms_id, display)


def find_lessons(text: str, lessons: list[str]) -> set[str]:
    """Lessons named in ``text`` (one path part): the full name, else a unique ``lessonN`` prefix."""
    flat = normalize(text)
    padded = f"_{flat}_"
    full = {lesson for lesson in lessons if f"_{lesson}_" in padded}
    if full:
        return full
    by_prefix: dict[str, list[str]] = {}
    for lesson in lessons:
        by_prefix.setdefault(lesson.split("_")[0], []).append(lesson)
    found = set()
    for prefix, owners in by_prefix.items():
        if len(owners) == 1 and re.search(rf"(?:^|_){re.escape(prefix)}(?:_|$)", flat):
            found.add(owners[0])
    return found


def describe(relative: PurePosixPath, lessons: list[str], default_lesson: str | None = None,
             trusted: int | None = None) -> tuple[Name | None, str | None, str]:
    """(student's name, lesson, problem) for one file path relative to the export's root.

    ``default_lesson`` (``--lesson``) is the lesson of a file whose path names none. The name comes only
    from the first ``trusted`` parts (default: all), the ones the export itself names; below them lies a
    student's own upload (a zip they handed in), whose names may be anyone's. The first of those parts
    that names someone (a per-student folder, else the file name) is the student."""
    folders, stem = list(relative.parts[:-1]), relative.stem
    per_part = [find_lessons(part, lessons) for part in folders + [stem]]
    named = set().union(*per_part) if per_part else set()
    if not named and default_lesson:
        named = {default_lesson}
    if not named:
        return None, None, (f"no lesson name in the path (lessons: {', '.join(lessons)}); rename the file "
                            "to contain its lesson, e.g. <student>_<lesson>.ipynb, or pass --lesson LESSON "
                            "for every file of this export that names none")
    if len(named) > 1:
        deepest = next((found for found in reversed(per_part) if found), set())
        if len(deepest) != 1:
            return None, None, (f"names several lessons ({', '.join(sorted(named))}); rename it to "
                                "name exactly one")
        named = deepest
    lesson = next(iter(named))
    trusted = len(relative.parts) if trusted is None else trusted
    name = None
    for part in folders[:trusted]:
        if normalize(part) not in GENERIC_FOLDERS:
            name = name_in(part, lessons)
            if name:
                break
    if name is None and trusted >= len(relative.parts):
        name = name_in(stem, lessons)
    if name is None and trusted < len(relative.parts):
        return None, lesson, (f"inside an uploaded archive ({'/'.join(relative.parts[:trusted])}) whose own "
                              "name, and the folders above it, name no student; names inside a student's "
                              "upload are never used: place it by hand, or have the student upload the "
                              "notebook itself")
    if name is None:
        return None, lesson, ("no student name in the path; put the file in a folder named after the "
                              "student, or name it <student>_<lesson>.ipynb")
    return name, lesson, ""


# --- times -----------------------------------------------------------------------------------------

def parse_time(text: str) -> dt.datetime | None:
    """The first date-time written in ``text`` (``2025-03-02 14:05:00``, ``20250302T140500``...), naive."""
    match = DATE.search(text)
    if not match:
        return None
    parts = {k: int(v) if v else 0 for k, v in match.groupdict().items()}
    try:
        return dt.datetime(parts["y"], parts["mo"], parts["d"], parts["h"], parts["mi"], parts["s"])
    except ValueError:
        return None


def read_timestamp_file(path: Path) -> dt.datetime | None:
    """The time in an nbgrader ``timestamp.txt`` (any format nbgrader accepts), naive UTC."""
    try:
        from nbgrader.utils import parse_utc

        stamp = parse_utc(path.read_text().strip())
        return stamp.replace(tzinfo=None)
    except Exception:  # an unreadable stamp is reported as no stamp, never a crash
        return None


def time_zone(name: str | None) -> dt.tzinfo:
    """``--timezone``: an IANA zone (``Europe/Berlin``); UTC when not given."""
    if not name:
        return dt.timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CourseError(f"--timezone {name!r}: unknown time zone; give an IANA name such as Europe/Berlin, "
                          "America/New_York or UTC") from None


def to_utc(when: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    """Naive UTC (what the gradebook and timestamp.txt hold) of ``when``; a naive ``when`` is in ``zone``."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    return when.astimezone(dt.timezone.utc).replace(tzinfo=None)


def parse_when(text: str, zone: dt.tzinfo) -> dt.datetime | None:
    """A due date as naive UTC: ISO 8601 with or without a zone (``2026-12-03T17:00+01:00``, ``... UTC``),
    naive ones in ``zone``; a date alone means the end of that day (23:59:59.999999)."""
    text = re.sub(r"\s*(?:UTC|Z)$", "+00:00", text.strip(), flags=re.IGNORECASE)
    date_only = re.fullmatch(r"20\d\d-?[01]\d-?[0-3]\d", text) is not None
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        when = parse_time(text) if DATE.fullmatch(text) else None
    if when is None:
        return None
    if date_only:
        when = dt.datetime.combine(when.date(), dt.time.max)
    return to_utc(when, zone)


def parse_due(values: list[str], lessons: list[str], timezone: str | None = None) -> dict[str, dt.datetime]:
    """``--due`` values: ``DATE`` (every lesson) or ``LESSON=DATE``; ``{lesson: due date, naive UTC}``."""
    zone = time_zone(timezone)
    due: dict[str, dt.datetime] = {}
    for value in values or []:
        lesson, _, text = value.rpartition("=") if "=" in value else ("", "", value)
        when = parse_when(text, zone)
        if when is None:
            raise CourseError(f"--due {value!r}: write the date as YYYY-MM-DD (the end of that day), "
                              "YYYY-MM-DD HH:MM (in --timezone, default UTC) or with its zone "
                              "(2026-12-03T17:00+01:00), optionally prefixed by LESSON=")
        if lesson and lesson not in lessons:
            raise CourseError(f"--due {value!r}: unknown lesson {lesson!r}; the lessons are: {', '.join(lessons)}")
        for name in [lesson] if lesson else lessons:
            due[name] = when
    return due


# --- who is who: the roster and the gradebook ------------------------------------------------------

@dataclass
class Person:
    """A student as the roster or the gradebook knows them (``student``: nbgrader's id, '' if none)."""

    student: str
    first_name: str = ""
    last_name: str = ""
    lms_id: str | None = None
    from_roster: bool = False


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


def _identify(cands: list[_Candidate], roster: Roster | None, known: list[Person]) -> dict[int, str]:
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


# --- unpacking ---------------------------------------------------------------------------------------

MiB = 1 << 20
CHUNK = 64 * 1024  # bytes read from an archive member at a time


@dataclass(frozen=True)
class UnpackLimits:
    """What collect unpacks at most, checked while streaming (nothing is ever written past a limit):
    bytes of one member, bytes on disk for the whole export at once, a member's growth over its
    compressed size (once it is past ``ratio_from`` bytes), members on disk at once, and archives
    within archives (the export is depth 1, a student's zip in it depth 2)."""

    member_bytes: int = 64 * MiB
    total_bytes: int = 512 * MiB
    ratio: int = 200
    ratio_from: int = 1 * MiB
    members: int = 10_000
    depth: int = 3

    def __post_init__(self):
        for name, value in asdict(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise CourseError(f"UnpackLimits.{name}={value!r}: must be a positive whole number")


LIMITS = UnpackLimits()


def _size(n: int) -> str:
    return f"{n / MiB:g} MiB" if n >= MiB else f"{n} bytes"


class _Refused(Exception):
    """A limit broken or a member refused while unpacking; ``stop``: nothing more of this archive fits."""

    def __init__(self, reason: str, stop: bool = False):
        super().__init__(reason)
        self.stop = stop


def _member_name(info: zipfile.ZipInfo) -> tuple[str, str]:
    """(the member's path as the LMS wrote it, NFC, '/'-separated; why it is refused or '').

    Names are UTF-8 when flagged, else the cp437 bytes re-read as UTF-8 when they are. Refused: absolute
    paths, ``..``, links and anything that is not a plain file or folder, encrypted members."""
    name = info.filename
    if not info.flag_bits & 0x800:
        try:
            name = name.encode("cp437").decode("utf-8")
        except UnicodeError:
            pass  # really cp437 (or another code page): kept as read
    name = unicodedata.normalize("NFC", name).replace("\\", "/")
    kind = (info.external_attr >> 16) & 0o170000
    if kind == 0o120000:
        return name, "a symbolic link inside an archive (it could point at another student's file); not unpacked"
    if kind not in (0, 0o100000, 0o040000):
        return name, "not a plain file (a device, pipe or socket entry); not unpacked"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return name, "an absolute path inside an archive (it could name a file outside it); not unpacked"
    if ".." in name.split("/"):
        return name, "a '..' path inside an archive (it could name a file outside it); not unpacked"
    if info.flag_bits & 0x1:
        return name, "encrypted; ask the student to upload the notebook without a password"
    return "/".join(part for part in name.split("/") if part not in ("", ".")), ""


class _Unpacker:
    """Unpacks an export zip, and the zips inside it (each a student's upload), within ``limits``.

    Collects the refusals (``skipped``), each file's time in the export (``times``: a file from a
    student's zip has the time of that zip in the export) and the folders a student's zip became
    (``uploads``: names below them are the student's, never an identity); paths relative to ``root``."""

    def __init__(self, root: Path, limits: UnpackLimits):
        self.root, self.limits = root, limits
        self.held = 0   # bytes on disk now
        self.count = 0  # members on disk now
        self.skipped: list[Skipped] = []
        self.times: dict[str, str] = {}
        self.uploads: list[str] = []

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _members(self, zf: zipfile.ZipFile, shown: str) -> list[tuple[zipfile.ZipInfo, str]]:
        """The members to unpack: (info, safe name); refused ones reported. Of names equal up to case or
        Unicode form, the latest by the archive's time is kept and the others reported."""
        chosen: dict[str, tuple[zipfile.ZipInfo, str]] = {}
        dropped: list[tuple[str, str]] = []
        for info in zf.infolist():
            name, problem = _member_name(info)
            parts = name.split("/")
            if problem:
                self.skipped.append(Skipped(f"{shown}: {name}", problem))
            elif info.is_dir() or not name or SKIP_PARTS & set(parts) or any(p.startswith(".") for p in parts):
                continue  # folders are made as needed; hidden files are never submissions
            else:
                key = name.casefold()
                old = chosen.get(key)
                if old is not None and old[0].date_time > info.date_time:
                    dropped.append((name, key))
                    continue
                if old is not None:
                    dropped.append((old[1], key))
                chosen[key] = (info, name)
        for name, key in dropped:
            self.skipped.append(Skipped(f"{shown}: {name}", f"the archive holds it twice (names equal up to case "
                                        f"or Unicode form); kept the later one, {chosen[key][1]}"))
        return list(chosen.values())

    def _write(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> int:
        """Stream one member into ``target`` (a new file); its size. At a limit: the partial file is
        deleted and :class:`_Refused` says which limit (no byte past it is written)."""
        lim = self.limits
        if self.count >= lim.members:
            raise _Refused(f"more than {lim.members} files (the member-count limit)", stop=True)
        if info.file_size > lim.member_bytes:  # the declared size: an early refusal only, never trusted
            raise _Refused(f"declares {_size(info.file_size)}, over the per-file limit of {_size(lim.member_bytes)}")
        target.parent.mkdir(parents=True, exist_ok=True)
        size, self.count = 0, self.count + 1
        try:
            with zf.open(info) as src, open(target, "xb") as dst:
                while True:
                    rooms = {"member": lim.member_bytes - size, "total": lim.total_bytes - self.held,
                             "ratio": max(lim.ratio * info.compress_size, lim.ratio_from) - size}
                    room = min(rooms.values())
                    chunk = src.read(min(CHUNK, room + 1))
                    if not chunk:
                        return size
                    if len(chunk) > room:
                        broke = min(rooms, key=rooms.get)
                        raise _Refused({
                            "member": f"inflates past the per-file limit of {_size(lim.member_bytes)}",
                            "total": f"the export inflates past the total limit of {_size(lim.total_bytes)}",
                            "ratio": f"inflates more than {lim.ratio} times its compressed size (the ratio limit)",
                        }[broke], stop=broke == "total")
                    dst.write(chunk)
                    size += len(chunk)
                    self.held += len(chunk)
        except BaseException:
            target.unlink(missing_ok=True)
            self.held -= size
            self.count -= 1
            raise

    def _drop(self, path: Path, size: int) -> None:
        path.unlink(missing_ok=True)
        self.held -= size
        self.count -= 1

    def unpack(self, archive: Path, into: Path, shown: str, depth: int = 1, when: str | None = None) -> None:
        """Unpack ``archive`` (shown as ``shown``) into ``into``, then the zips in it. Depth 1 (the export):
        a refused member is left out; deeper (a student's zip): any refusal leaves out the whole zip."""
        written: list[tuple[Path, int]] = []
        try:
            with zipfile.ZipFile(archive) as zf:
                for info, name in self._members(zf, shown):
                    target = into / name
                    try:
                        written.append((target, self._write(zf, info, target)))
                    except (_Refused, OSError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError,
                            RuntimeError, ValueError) as exc:
                        reason = str(exc) if isinstance(exc, _Refused) else (
                            f"cannot be unpacked ({type(exc).__name__}: {str(exc)[:120]})")
                        if depth > 1:
                            raise _Refused(f"{name}: {reason}") from None
                        self.skipped.append(Skipped(f"{shown}: {name}", reason))
                        if getattr(exc, "stop", False):
                            self.skipped.append(Skipped(shown, "unpacking stopped there: the rest of the export "
                                                        "is not placed; collect it in parts"))
                            break
                        continue
                    stamp = when if depth > 1 else (  # a student's zip: its time in the export, or none
                        dt.datetime(*info.date_time).isoformat() if info.date_time > (1980, 1, 1, 0, 0, 0)
                        else None)  # 1980-01-01: no time given
                    if stamp:
                        self.times[self._rel(target)] = stamp
        except (_Refused, zipfile.BadZipFile, OSError) as exc:
            for path, size in written:
                self._drop(path, size)
            self.skipped.append(Skipped(shown, f"refused, nothing of it is placed: {exc}"))
            return
        for path, size in written:
            if _is_zip(path):
                self.upload(path, path.with_suffix(""), self._rel(path), depth + 1, self.times.get(self._rel(path)))
                self._drop(path, size)
                self.times.pop(self._rel(path), None)

    def upload(self, archive: Path, folder: Path, shown: str, depth: int, when: str | None = None) -> None:
        """Unpack a student's zip ``archive`` (shown as ``shown``, at ``depth``) into ``folder`` (which must
        not exist), recorded as an upload: the names inside it are the student's, never an identity."""
        if depth > self.limits.depth:
            self.skipped.append(Skipped(shown, f"refused, nothing of it is placed: archives nested deeper "
                                        f"than {self.limits.depth} (the depth limit)"))
        elif folder.exists():
            self.skipped.append(Skipped(shown, f"refused: {folder.name} is also a folder of the export; "
                                        "ask the student to upload the notebook itself"))
        else:
            self.uploads.append(self._rel(folder))
            self.unpack(archive, folder, shown, depth, when)

    def sidecar(self) -> None:
        """Write the times and uploads to ``root/.collect_unpacked.json`` (read by :func:`unpacked`)."""
        (self.root / UNPACKED).write_text(json.dumps({"times": self.times, "uploads": self.uploads},
                                                     indent=0, ensure_ascii=False))


def _is_zip(path: Path) -> bool:
    """Whether ``path`` is a zip that collect unpacks (a ``.zip`` name and a zip inside)."""
    return path.suffix.lower() == ".zip" and zipfile.is_zipfile(path)


def unpack_zip(archive: Path, into: Path, limits: UnpackLimits = LIMITS) -> list[Skipped]:
    """Unpack ``archive`` (and the zips in it) into ``into`` within ``limits``; what was refused. The
    files' times in the export and the folders students' zips became go to ``into/.collect_unpacked.json``."""
    into.mkdir(parents=True, exist_ok=True)
    unpacker = _Unpacker(into, limits)
    unpacker.unpack(archive, into, archive.name)
    unpacker.sidecar()
    return unpacker.skipped


def unpack_folder(source: Path, into: Path, limits: UnpackLimits = LIMITS, exports_at_top: bool = False
                  ) -> list[Skipped]:
    """Copy a folder export ``source`` into ``into`` (hard links where the file system allows) with every
    zip in it unpacked as the zips inside an export zip are (:func:`unpack_zip`): a student's upload,
    within ``limits``, in a folder of its name whose place in the export names the student (the names
    inside never do). ``exports_at_top``: a zip directly in ``source`` is an export itself (``nbgrader
    zip_collect``'s archive folder), unpacked into ``into`` as :func:`unpack_zip` does (its name is the
    LMS's name for the download, never a student's). Hidden files and checkpoints are
    left out; links are reported, never followed. What was refused; times and uploads go to
    ``into/.collect_unpacked.json``."""
    into.mkdir(parents=True, exist_ok=True)
    unpacker, zips = _Unpacker(into, limits), []
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if SKIP_PARTS & set(relative.parts) or any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_symlink():
            unpacker.skipped.append(Skipped(relative.as_posix(), LINK_REASON))
        elif path.is_file() and _is_zip(path):
            zips.append(relative)  # after the plain files: a folder of the zip's name is then seen
        elif path.is_file():
            (into / relative).parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, into / relative)
            except OSError:  # another file system, or links to others' files not allowed
                shutil.copyfile(path, into / relative)
    for relative in zips:
        if exports_at_top and len(relative.parts) == 1:
            unpacker.unpack(source / relative, into, relative.as_posix())
        else:
            unpacker.upload(source / relative, into / relative.with_suffix(""), relative.as_posix(), 2)
    unpacker.sidecar()
    return unpacker.skipped


def _unpack(source: Path, scratch: Path, limits: UnpackLimits = LIMITS) -> tuple[Path, list[Skipped]]:
    """(the folder to scan, what was refused): the export, a folder or a zip, unpacked into ``scratch``."""
    if source.is_dir():
        return scratch, unpack_folder(source, scratch, limits)
    if not zipfile.is_zipfile(source):
        raise CourseError(f"{source} is neither a folder nor a .zip archive; pass the LMS export "
                          "(a .zip or the folder it unpacks to)")
    return scratch, unpack_zip(source, scratch, limits)


def unpacked(base: Path) -> tuple[dict[Path, dt.datetime], set[Path]]:
    """(each unpacked file's time in the export (naive, the LMS's local time), the folders that students'
    zips became), from the ``.collect_unpacked.json`` files under ``base``."""
    times, uploads = {}, set()
    for sidecar in Path(base).rglob(UNPACKED):
        try:
            found = json.loads(sidecar.read_text())
            times.update({sidecar.parent / rel: dt.datetime.fromisoformat(when)
                          for rel, when in found["times"].items()})
            uploads.update(sidecar.parent / rel for rel in found["uploads"])
        except (OSError, ValueError, TypeError, AttributeError, KeyError):
            continue  # a damaged sidecar loses the times (and the files below uploads are reported)
    return times, uploads


def _strip_common_top(relatives: list[PurePosixPath], lessons: list[str], trusted: list[int]) -> int:
    """1 when one top folder holds every file and is only the archive's wrapper (``CS101 export/``): it
    names no lesson, is no student's upload, and names no student or holds several students' files;
    else 0. (A lone student's folder is kept: without it only names the student chose would be left.)"""
    tops = {rel.parts[0] for rel in relatives if len(rel.parts) > 1}
    if len(tops) != 1 or not all(len(rel.parts) > 1 for rel in relatives):
        return 0
    top = next(iter(tops))
    if find_lessons(top, lessons) or min(trusted) < 2:
        return 0
    if normalize(top) in GENERIC_FOLDERS or name_in(top, lessons) is None:
        return 1
    below = {describe(PurePosixPath(*rel.parts[1:]), lessons, lessons[0], n - 1)[0] for rel, n in
             zip(relatives, trusted)}
    return 1 if len({name.slug for name in below if name}) > 1 else 0


# --- placing ---------------------------------------------------------------------------------------

@dataclass
class Placed:
    """One notebook placed in ``submitted/``."""

    file: str
    student: str
    lesson: str
    timestamp: str | None = None
    late: bool = False
    lms_id: str | None = None
    first_name: str = ""
    last_name: str = ""
    name_from: str = "file"           # "roster" or "file": where the display name comes from
    time_from: str | None = None      # "name", "timestamp.txt" or "zip"
    marked_late: bool = False         # the LMS wrote LATE in the name
    seconds_late: float | None = None  # after the due date (None: no due date or no time known)


@dataclass
class Skipped:
    """One file that was not placed, with the reason and what to do about it."""

    file: str
    reason: str


@dataclass
class CollectReport:
    source: str
    placed: list[Placed] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, ensure_ascii=False)

    def summary(self) -> str:
        students = {p.student for p in self.placed}
        lines = [f"collected {len(self.placed)} notebooks from {len(students)} students "
                 f"({sum(p.late for p in self.placed)} late) from {self.source}"]
        unknown = [p for p in self.placed if p.marked_late and p.seconds_late is None]
        if unknown:
            lines.append(f"note: {len(unknown)} notebooks are marked LATE by the LMS, but without a due date "
                         "(--due) or a submission time nbgrader cannot compute how late they are, nor a penalty")
        if self.skipped:
            lines.append(f"could not place {len(self.skipped)} files:")
            lines += [f"  ! {s.file}: {s.reason}" for s in self.skipped]
        return "\n".join(lines)


@dataclass
class _Candidate:
    file: str
    path: Path
    name: Name
    lesson: str
    timestamp: dt.datetime | None
    time_from: str | None
    late_marker: bool
    copy: int
    person: Person | None = None


def _check_notebook(path: Path) -> str:
    """'' when ``path`` reads as a Jupyter notebook, else why not and what to do."""
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # JSON errors, wrong schema, binary files: all reported, none fatal
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        return (f"not a Jupyter notebook ({type(exc).__name__}: {first}); ask the student to download "
                "the .ipynb from JupyterLab (File > Download) and submit it again")
    return ""


def _submission_time(relative: PurePosixPath, path: Path, zipped: dict[Path, dt.datetime], zone: dt.tzinfo,
                     trusted: int) -> tuple[dt.datetime | None, str | None]:
    """(naive UTC time, where it came from): a date in the export's own part of the name, else
    timestamp.txt (not inside a student's upload), else the export's zip entry."""
    own = trusted >= len(relative.parts)
    named = parse_time(relative.as_posix() if own else "/".join(relative.parts[:trusted]))
    if named:
        return to_utc(named, zone), "name"
    stamp_file = path.parent / "timestamp.txt"
    stamp = read_timestamp_file(stamp_file) if own and stamp_file.exists() else None
    if stamp:
        return stamp, "timestamp.txt"
    if path in zipped:
        return to_utc(zipped[path], zone), "zip"
    return None, None


def _trusted_parts(path: Path, base: Path, uploads: set[Path]) -> int:
    """How many leading parts of ``path`` (under ``base``) the export names: up to the first folder a
    student's zip became, else all of them."""
    parts = path.relative_to(base).parts
    return next((k for k in range(1, len(parts)) if base.joinpath(*parts[:k]) in uploads), len(parts))


def place(base: Path, lessons: list[str], report: CollectReport, *, lesson: str | None = None,
          due: dict[str, dt.datetime] | None = None, zone: dt.tzinfo = dt.timezone.utc,
          roster: Roster | None = None, known: list[Person] = ()) -> dict[tuple[str, str], _Candidate]:
    """Decide where every file under ``base`` (what :func:`unpack_zip` or :func:`unpack_folder` made)
    goes: ``{(student, lesson): chosen file}``; every file left out is added to ``report.skipped`` and
    every chosen one to ``report.placed``. Writes nothing."""
    entries = sorted(p for p in base.rglob("*") if not SKIP_PARTS & set(p.relative_to(base).parts)
                     and not any(part.startswith(".") for part in p.relative_to(base).parts))
    for link in (p for p in entries if p.is_symlink()):
        report.skipped.append(Skipped(link.relative_to(base).as_posix(), LINK_REASON))
    files = [p for p in entries if p.is_file() and not p.is_symlink()]
    zipped, uploads = unpacked(base)
    own = [_trusted_parts(p, base, uploads) for p in files]
    relatives = [PurePosixPath(p.relative_to(base).as_posix()) for p in files]
    drop = _strip_common_top(relatives, lessons, own) if files else 0
    candidates: list[_Candidate] = []
    for path, whole, trusted in zip(files, relatives, own):
        relative, trusted = PurePosixPath(*whole.parts[drop:]), trusted - drop
        if path.name == "timestamp.txt":
            continue
        if path.suffix.lower() != ".ipynb":
            report.skipped.append(Skipped(str(relative), "not a notebook file (.ipynb expected); ask the "
                                          "student to submit the .ipynb file itself"))
            continue
        name, lesson_name, problem = describe(relative, lessons, lesson, trusted)
        problem = problem or _check_notebook(path)
        if problem:
            report.skipped.append(Skipped(str(relative), problem))
            continue
        stamp, source = _submission_time(relative, path, zipped, zone, trusted)
        named_by_export = "/".join(relative.parts[:trusted])
        copy = COPY_NUMBER.search(relative.stem) if trusted >= len(relative.parts) else None
        candidates.append(_Candidate(str(relative), path, name, lesson_name, stamp, source,
                                     "late" in normalize(named_by_export).split("_"),
                                     int(next(g for g in copy.groups() if g)) if copy else 0))
    problems = _identify(candidates, roster, list(known))
    chosen: dict[tuple[str, str], _Candidate] = {}
    for i, cand in enumerate(candidates):
        if i in problems:
            report.skipped.append(Skipped(cand.file, problems[i]))
            continue
        key = (cand.person.student, cand.lesson)
        old = chosen.get(key)
        rank = (cand.timestamp or dt.datetime.min, cand.copy)
        if old is None or rank > (old.timestamp or dt.datetime.min, old.copy):
            if old is not None:
                report.skipped.append(Skipped(old.file, f"older copy of {key[0]}/{key[1]}; kept {cand.file}"))
            chosen[key] = cand
        else:
            report.skipped.append(Skipped(cand.file, f"older copy of {key[0]}/{key[1]}; kept {old.file}"))
    for (student, lesson_name), cand in sorted(chosen.items()):
        deadline = (due or {}).get(lesson_name)
        seconds = max(0.0, (cand.timestamp - deadline).total_seconds()) if deadline and cand.timestamp else None
        person = cand.person
        report.placed.append(Placed(
            cand.file, student, lesson_name, cand.timestamp.strftime(TIMESTAMP_FORMAT) if cand.timestamp else None,
            cand.late_marker or bool(seconds), person.lms_id, person.first_name, person.last_name,
            "roster" if person.from_roster else "file", cand.time_from, cand.late_marker, seconds))
    return chosen


def collect(source: str | Path, root: Path, lessons: list[str], due: dict[str, dt.datetime] | None = None,
            dry_run: bool = False, *, lesson: str | None = None, timezone: str | None = None,
            roster: str | Path | Roster | None = None, limits: UnpackLimits = LIMITS) -> CollectReport:
    """Place every notebook of ``source`` (folder or .zip) into ``root/submitted/<student>/<lesson>/``.

    ``due``: ``{lesson: due date (naive UTC)}`` (see :func:`parse_due`); a submission after it (or marked
    LATE by the LMS) is reported late. ``lesson``: the lesson of files whose path names none.
    ``timezone``: the LMS's zone, for times in names and zip entries. ``roster``: a CSV path (see
    :func:`read_roster`). ``limits``: what a .zip may unpack to (:class:`UnpackLimits`; each refusal
    is reported, the rest placed). Writes ``root/reports/collect.json``; the gradebook is written by
    :func:`record_in_gradebook`. Raises :class:`CourseError` only when there is nothing to collect.
    """
    source = Path(source)
    if not source.exists():
        raise CourseError(f"{source} does not exist; pass the LMS export (a .zip or a folder of notebooks)")
    if lesson is not None and lesson not in lessons:
        raise CourseError(f"--lesson {lesson!r}: unknown lesson; the lessons are: {', '.join(lessons)}")
    zone = time_zone(timezone)
    people = read_roster(roster) if isinstance(roster, (str, Path)) else roster
    report = CollectReport(source=str(source))
    with tempfile.TemporaryDirectory(prefix="collect-") as scratch:
        base, refused = _unpack(source, Path(scratch), limits)
        report.skipped += refused
        if not any(p.is_file() and not p.name.startswith(".") for p in base.rglob("*")):
            raise CourseError(f"{source} holds no files: is it the right export? Download the class's "
                              "submissions from the LMS as a .zip and pass that" +
                              "".join(f"\n  ! {s.file}: {s.reason}" for s in refused))
        chosen = place(base, lessons, report, lesson=lesson, due=due, zone=zone, roster=people,
                       known=known_students(root))
        if not chosen:
            raise CourseError(f"no student notebook could be placed from {source}:\n" +
                              "\n".join(f"  ! {s.file}: {s.reason}" for s in report.skipped))
        for placed in report.placed if not dry_run else []:
            target = Path(root) / "submitted" / placed.student / placed.lesson
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
            shutil.copyfile(chosen[(placed.student, placed.lesson)].path, target / f"{placed.lesson}.ipynb")
            if placed.timestamp:
                (target / "timestamp.txt").write_text(placed.timestamp)
    if not dry_run:
        log = Path(root) / "reports" / "collect.json"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(report.to_json())
    return report


def record_in_gradebook(root: Path, due: dict[str, dt.datetime] | None = None,
                        report: CollectReport | None = None) -> None:
    """Store what collect learned in the gradebook, as ``nbgrader db assignment add --duedate`` and
    ``nbgrader db student add --first-name --last-name --lms-user-id`` would: due dates (so that
    ``nbgrader autograde`` computes lateness and the late penalty) and each placed student's name and
    LMS id (``report``; default: the last collect's ``reports/collect.json``). Names from a roster
    replace the gradebook's; names from file names only fill empty ones. Every lesson placed is
    registered with its cells, so nbgrader's own ``autograde`` works next. Done before grading."""
    from nbgrader.api import MissingEntry

    from autograder import coursedir
    from autograder.trusted.batch import ensure_assignment

    if report is None:
        log = Path(root) / "reports" / "collect.json"
        placed = [Placed(**p) for p in json.loads(log.read_text()).get("placed", [])] if log.exists() else []
    else:
        placed = report.placed
    if not due and not placed:
        return
    coursedir.check_gradebook(root)
    with coursedir.open_gradebook(root) as gb:
        for lesson, when in sorted((due or {}).items()):
            gb.update_or_create_assignment(lesson, duedate=when)
        for entry in placed:
            try:
                student = gb.find_student(entry.student)
            except MissingEntry:
                student = None
            fields = {}
            if entry.name_from == "roster" or student is None or not (student.first_name or student.last_name):
                fields.update(first_name=entry.first_name or None, last_name=entry.last_name or None)
            if entry.lms_id and (entry.name_from == "roster" or student is None or not student.lms_user_id):
                fields["lms_user_id"] = entry.lms_id
            gb.update_or_create_student(entry.student, **fields)
    for lesson in sorted({entry.lesson for entry in placed}):
        ensure_assignment(root, lesson)


# --- nbgrader zip_collect with the same rules --------------------------------------------------------

try:
    from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
    from traitlets import Unicode
except ImportError:  # pragma: no cover - nbgrader is a dependency of the grading side only
    ExtractorPlugin = FileNameCollectorPlugin = None

if FileNameCollectorPlugin is not None:
    class LMSExtractor(ExtractorPlugin):
        """``nbgrader zip_collect``'s extractor, unpacking as collect does: names decoded as the LMS
        wrote them, within :data:`LIMITS` (each refusal logged), the export's times and the students'
        zips kept (``.collect_unpacked.json``) for :class:`LMSCollector`."""

        def extract(self, archive_path: str, extracted_path: str) -> None:
            for refused in unpack_folder(Path(archive_path), Path(extracted_path), exports_at_top=True):
                self.log.warning("Not collected: %s: %s", refused.file, refused.reason)

    class LMSCollector(FileNameCollectorPlugin):
        """``nbgrader zip_collect``'s collector with ``avgpool-course collect``'s placing rules
        (:func:`place`): files that name no lesson belong to the assignment being collected, files
        of another lesson are skipped, and of two copies the latest is the one returned."""

        timezone = Unicode("", help="The LMS's time zone (IANA name) for times in names and zip entries"
                           ).tag(config=True)
        roster = Unicode("", help="A Canvas gradebook or Moodle participants CSV (see collect.read_roster)"
                         ).tag(config=True)

        _plan: dict | None = None

        def _placed(self) -> dict[str, dict]:
            app = self.parent
            from autograder import coursedir

            lesson = app.coursedir.assignment_id
            root = Path(app.coursedir.root)
            base = Path(app._format_collect_path(app.extracted_directory))
            report = CollectReport(str(base))
            chosen = place(base, coursedir.lessons(root), report, lesson=lesson, zone=time_zone(self.timezone),
                           roster=read_roster(self.roster) if self.roster else None, known=known_students(root))
            for skipped in report.skipped:
                self.log.warning("Not collected: %s: %s", skipped.file, skipped.reason)
            plan = {}
            for entry in report.placed:
                if entry.lesson == lesson:
                    info = {"student_id": entry.student, "file_id": f"{lesson}.ipynb",
                            "first_name": entry.first_name, "last_name": entry.last_name}
                    if entry.timestamp:
                        info["timestamp"] = entry.timestamp
                    plan[str(chosen[(entry.student, entry.lesson)].path)] = info
            return plan

        def collect(self, submitted_file: str) -> dict | None:
            if self._plan is None:
                self._plan = self._placed()
            return self._plan.get(str(Path(submitted_file)))
