"""Placing an export's notebooks into ``submitted/<student>/<lesson>/`` (``collect``) and recording
the students in the gradebook (``record_in_gradebook``)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

import nbformat

from autograder.coursedir import CourseError
from autograder.collect.names import (COPY_NUMBER, LINK_REASON, SKIP_PARTS, TIMESTAMP_FORMAT, describe, normalize,
                                      parse_time, read_timestamp_file, time_zone, to_utc)
from autograder.collect.roster import Person, Roster, Candidate, identify, known_students, read_roster
from autograder.collect.unpack import LIMITS, Skipped, UnpackLimits, strip_common_top, unpack_export, unpacked


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
    time_from: str | None = None      # "name", "timestamp.txt", "zip" or "ctime" (nbgrader's exchange)
    marked_late: bool = False         # the LMS wrote LATE in the name
    seconds_late: float | None = None  # after the due date (None: no due date or no time known)
    stated_time: str | None = None    # the exchange: what the student's timestamp.txt says (shown only)


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
          due: dict[str, dt.datetime] | None = None, zone: dt.tzinfo = dt.UTC,
          roster: Roster | None = None, known: list[Person] = ()) -> dict[tuple[str, str], Candidate]:
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
    drop = strip_common_top(relatives, lessons, own) if files else 0
    candidates: list[Candidate] = []
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
        candidates.append(Candidate(str(relative), path, name, lesson_name, stamp, source,
                                     "late" in normalize(named_by_export).split("_"),
                                     int(next(g for g in copy.groups() if g)) if copy else 0))
    problems = identify(candidates, roster, list(known))
    chosen: dict[tuple[str, str], Candidate] = {}
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
        base, refused = unpack_export(source, Path(scratch), limits)
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
        coursedir.ensure_assignment(root, lesson)
