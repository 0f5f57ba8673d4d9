"""Reading an LMS export's paths: who, which lesson, when (names and times, no file access beyond
``timestamp.txt``)."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


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
        return dt.UTC
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
    return when.astimezone(dt.UTC).replace(tzinfo=None)


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
