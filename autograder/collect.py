"""Collect student notebooks from an LMS export (a .zip or a folder) into nbgrader's ``submitted/`` layout.

Learning platforms name files in many ways; all of these land in ``submitted/<student>/<lesson>/``::

    alice_12345_lesson2_loops.ipynb                 Canvas-style: login, ids, then the file name
    alice_LATE_12345_67890_lesson2_loops-1.ipynb    Canvas marks late work in the name
    Bob Smith - lesson1_by_hand (2).ipynb           Moodle-style: full name, re-uploads numbered
    lesson3_numpy/carol/anything.ipynb              one folder per lesson, then per student
    carol/lesson3_numpy/lesson3_numpy.ipynb         nbgrader's own layout (with timestamp.txt)
    submissions/dave_lesson4_torch_LATE.ipynb       generic folders are ignored
    lesson1_by_hand_erin_attempt_2025-03-02-14-05-00.ipynb   Blackboard-style, with the upload time

The lesson is the lesson name (or its ``lessonN`` prefix) found in the path; the student is what is
left of the deepest folder (or else the file name) once lesson names, numeric ids, copy numbers, dates
and LMS words are removed, lower-cased with ``_`` between words. The submission time comes from a date
in the name or a ``timestamp.txt`` beside the notebook, and is written to ``timestamp.txt`` in
nbgrader's format. When one student handed in a lesson twice, the latest copy wins (by time, then copy
number). Every file that cannot be placed is reported with the reason and what to do; one bad file
never stops the others.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import tempfile
import zipfile
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

DATE = re.compile(r"(?P<y>20\d\d)[-_.]?(?P<mo>[01]\d)[-_.]?(?P<d>[0-3]\d)(?:[-_T ]?(?P<h>[0-2]\d)[-_:.]?"
                  r"(?P<mi>[0-5]\d)(?:[-_:.]?(?P<s>[0-5]\d))?)?")
COPY_NUMBER = re.compile(r"(?:\((\d+)\)|-(\d{1,2}))$")
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # what nbgrader writes and reads in timestamp.txt


@dataclass
class Placed:
    """One notebook placed in ``submitted/``."""

    file: str
    student: str
    lesson: str
    timestamp: str | None = None
    late: bool = False


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
        return json.dumps(asdict(self), indent=1)

    def summary(self) -> str:
        students = {p.student for p in self.placed}
        lines = [f"collected {len(self.placed)} notebooks from {len(students)} students "
                 f"({sum(p.late for p in self.placed)} late) from {self.source}"]
        if self.skipped:
            lines.append(f"could not place {len(self.skipped)} files:")
            lines += [f"  ! {s.file}: {s.reason}" for s in self.skipped]
        return "\n".join(lines)


def normalize(text: str) -> str:
    """Lower case, every run of non-alphanumerics one ``_``, no ``_`` at the ends."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


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


def parse_time(text: str) -> dt.datetime | None:
    """The first date-time written in ``text`` (``2025-03-02 14:05:00``, ``20250302T140500``...), UTC."""
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


def student_from(text: str, lessons: list[str]) -> str:
    """What is left of one path part once lessons, ids, copy numbers, dates and LMS words are removed."""
    stem = COPY_NUMBER.sub("", text.strip())
    stem = DATE.sub(" ", stem)
    flat = f"_{normalize(stem)}_"
    for lesson in sorted(lessons, key=len, reverse=True):
        flat = flat.replace(f"_{lesson}_", "_")
    for prefix in {lesson.split("_")[0] for lesson in lessons}:
        flat = re.sub(rf"_{re.escape(prefix)}(?=_)", "", flat)
    words = [w for w in flat.split("_") if w and not w.isdigit() and w not in NOISE_WORDS]
    return "_".join(words)


@dataclass
class _Candidate:
    file: str
    path: Path
    student: str
    lesson: str
    timestamp: dt.datetime | None
    late_marker: bool
    copy: int


def _describe(relative: PurePosixPath, lessons: list[str]) -> tuple[str | None, str | None, str]:
    """(student, lesson, problem) for one file path relative to the export's root."""
    folders, stem = list(relative.parts[:-1]), relative.stem
    per_part = [find_lessons(part, lessons) for part in folders + [stem]]
    named = set().union(*per_part) if per_part else set()
    if not named:
        return None, None, (f"no lesson name in the path (lessons: {', '.join(lessons)}); rename the file "
                            "to contain its lesson, e.g. <student>_<lesson>.ipynb")
    if len(named) > 1:
        deepest = next((found for found in reversed(per_part) if found), set())
        if len(deepest) != 1:
            return None, None, (f"names several lessons ({', '.join(sorted(named))}); rename it to "
                                "name exactly one")
        named = deepest
    lesson = next(iter(named))
    student = ""
    for part in reversed(folders):
        if normalize(part) in GENERIC_FOLDERS:
            continue
        student = student_from(part, lessons)
        if student:
            break
    if not student:
        student = student_from(stem, lessons)
    if not student:
        return None, lesson, ("no student name in the path; put the file in a folder named after the "
                              "student, or name it <student>_<lesson>.ipynb")
    return student, lesson, ""


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


def _unpack(source: Path, scratch: Path) -> Path:
    """The folder to scan: ``source`` itself, or a zip (possibly holding zips) unpacked into ``scratch``."""
    if source.is_dir():
        return source
    if not zipfile.is_zipfile(source):
        raise CourseError(f"{source} is neither a folder nor a .zip archive; pass the LMS export "
                          "(a .zip or the folder it unpacks to)")
    with zipfile.ZipFile(source) as archive:
        archive.extractall(scratch)
    for inner in sorted(scratch.rglob("*.zip")):  # some LMS zip each student's files separately
        if zipfile.is_zipfile(inner):
            with zipfile.ZipFile(inner) as archive:
                archive.extractall(inner.with_suffix(""))
            inner.unlink()
    return scratch


def _strip_common_top(relatives: list[PurePosixPath], lessons: list[str]) -> list[PurePosixPath]:
    """Drop one top folder shared by every file (the archive's own name), unless it names a lesson."""
    tops = {rel.parts[0] for rel in relatives if len(rel.parts) > 1}
    if len(tops) == 1 and all(len(rel.parts) > 1 for rel in relatives):
        top = next(iter(tops))
        if not find_lessons(top, lessons):
            return [PurePosixPath(*rel.parts[1:]) for rel in relatives]
    return relatives


def collect(source: str | Path, root: Path, lessons: list[str], due: dict[str, dt.datetime] | None = None,
            dry_run: bool = False) -> CollectReport:
    """Place every notebook of ``source`` (folder or .zip) into ``root/submitted/<student>/<lesson>/``.

    ``due``: ``{lesson: due date (naive UTC)}``; a submission after it (or marked LATE by the LMS) is
    reported late. Raises :class:`CourseError` only when there is nothing to collect at all.
    """
    source = Path(source)
    if not source.exists():
        raise CourseError(f"{source} does not exist; pass the LMS export (a .zip or a folder of notebooks)")
    report = CollectReport(source=str(source))
    with tempfile.TemporaryDirectory(prefix="collect-") as scratch:
        base = _unpack(source, Path(scratch))
        files = sorted(p for p in base.rglob("*") if p.is_file()
                       and not SKIP_PARTS & set(p.relative_to(base).parts)
                       and not any(part.startswith(".") for part in p.relative_to(base).parts))
        notebooks = [p for p in files if p.suffix.lower() == ".ipynb"]
        others = [p for p in files if p.suffix.lower() != ".ipynb" and p.name != "timestamp.txt"]
        if not notebooks and not others:
            raise CourseError(f"{source} holds no files: is it the right export? Download the class's "
                              "submissions from the LMS as a .zip and pass that")
        relatives = _strip_common_top([PurePosixPath(p.relative_to(base).as_posix()) for p in files], lessons)
        shown = dict(zip(files, relatives))
        for path in others:
            report.skipped.append(Skipped(str(shown[path]), "not a notebook file (.ipynb expected); ask the "
                                          "student to submit the .ipynb file itself"))
        candidates: list[_Candidate] = []
        for path in notebooks:
            relative = shown[path]
            student, lesson, problem = _describe(relative, lessons)
            if not problem:
                problem = _check_notebook(path)
            if problem:
                report.skipped.append(Skipped(str(relative), problem))
                continue
            stamp = parse_time(relative.as_posix()) or (read_timestamp_file(path.parent / "timestamp.txt")
                                                         if (path.parent / "timestamp.txt").exists() else None)
            copy = COPY_NUMBER.search(relative.stem)
            candidates.append(_Candidate(str(relative), path, student, lesson, stamp,
                                         "late" in normalize(relative.as_posix()).split("_"),
                                         int(next(g for g in copy.groups() if g)) if copy else 0))
        if not candidates:
            raise CourseError(f"no student notebook could be placed from {source}:\n" +
                              "\n".join(f"  ! {s.file}: {s.reason}" for s in report.skipped))
        chosen: dict[tuple[str, str], _Candidate] = {}
        for cand in candidates:
            key = (cand.student, cand.lesson)
            old = chosen.get(key)
            rank = (cand.timestamp or dt.datetime.min, cand.copy)
            if old is None or rank > (old.timestamp or dt.datetime.min, old.copy):
                if old is not None:
                    report.skipped.append(Skipped(old.file, f"older copy of {cand.student}/{cand.lesson}; "
                                                  f"kept {cand.file}"))
                chosen[key] = cand
            else:
                report.skipped.append(Skipped(cand.file, f"older copy of {cand.student}/{cand.lesson}; "
                                              f"kept {old.file}"))
        for (student, lesson), cand in sorted(chosen.items()):
            deadline = (due or {}).get(lesson)
            late = cand.late_marker or bool(deadline and cand.timestamp and cand.timestamp > deadline)
            stamp = cand.timestamp.strftime(TIMESTAMP_FORMAT) if cand.timestamp else None
            report.placed.append(Placed(cand.file, student, lesson, stamp, late))
            if dry_run:
                continue
            target = Path(root) / "submitted" / student / lesson
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
            shutil.copyfile(cand.path, target / f"{lesson}.ipynb")
            if stamp:
                (target / "timestamp.txt").write_text(stamp)
    if not dry_run:
        log = Path(root) / "reports" / "collect.json"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(report.to_json())
    return report


def parse_due(values: list[str], lessons: list[str]) -> dict[str, dt.datetime]:
    """``--due`` values: ``DATE`` (every lesson) or ``LESSON=DATE``; dates as ``2025-03-02 23:59``, UTC."""
    due: dict[str, dt.datetime] = {}
    for value in values or []:
        lesson, _, text = value.rpartition("=") if "=" in value else ("", "", value)
        when = parse_time(text)
        if when is None:
            raise CourseError(f"--due {value!r}: write the date as YYYY-MM-DD HH:MM (UTC), optionally "
                              "prefixed by LESSON=")
        if lesson and lesson not in lessons:
            raise CourseError(f"--due {value!r}: unknown lesson {lesson!r}; the lessons are: {', '.join(lessons)}")
        for name in [lesson] if lesson else lessons:
            due[name] = when
    return due


def record_due_dates(root: Path, due: dict[str, dt.datetime]) -> None:
    """Store due dates in the gradebook, as ``nbgrader db assignment add LESSON --duedate`` would, so
    that nbgrader (formgrader, the gradebook's lateness) knows them. Done before grading."""
    if not due:
        return
    from autograder import coursedir
    coursedir.check_gradebook(root)
    with coursedir.open_gradebook(root) as gb:
        for lesson, when in sorted(due.items()):
            gb.update_or_create_assignment(lesson, duedate=when)
