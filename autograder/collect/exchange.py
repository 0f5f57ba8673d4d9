"""nbgrader's exchange collected with the LMS path's guards (``nbgrader collect`` and formgrader's
*Collect*, through ``c.ExchangeFactory.collect`` in ``nbgrader_config.py``).

A hand-in is an entry ``inbound/<student>+<lesson>+<time>+<random>`` that the student's own account
wrote. nbgrader's own collect believes the name (student and time) and follows links; this one:

* **who**: the account that owns the entry (its uid's name), never the name written in it. An entry
  whose name and owner disagree is refused and reported with both; the named student's work is left as
  it is. An entry owned by the collecting account, or by a uid with no account, is refused; where every
  entry of several names has one owner (a shared account, as when every server runs as ``jovyan``) the
  whole collect is refused: the exchange cannot tell students apart there.
* **when**: the latest change time (ctime) of the entry and everything in it, which the kernel sets and
  no owner can set back; the student's ``timestamp.txt`` (and the time in the entry's name) are only
  shown beside it. Written to ``submitted/<student>/<lesson>/timestamp.txt``, so ``nbgrader autograde``
  computes lateness from it.
* **what**: plain files and folders only, all owned by the entry's owner, each file with one link;
  a symbolic or hard link, a device, FIFO or socket refuses the entry (opened with ``O_NOFOLLOW`` under
  the folder's descriptor, checked again on the open file, so nothing swapped in meanwhile is followed).
  Files, bytes and depth are bounded by :data:`autograder.collect.unpack.LIMITS` (``hand_in_*``,
  ``member_bytes``), checked while copying.

A refused entry leaves the student's latest acceptable one (or nothing) to be collected; it is copied
beside ``submitted/<student>/<lesson>/`` and moved there only once whole. What was placed and refused:
the log and ``reports/exchange_collect.json``.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import os
import pwd
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect

from autograder.collect.names import TIMESTAMP_FORMAT
from autograder.collect.place import CollectReport, Placed
from autograder.collect.unpack import CHUNK, LIMITS, Skipped, UnpackLimits, size_text

_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}
STAMP = "timestamp.txt"


class Refused(Exception):
    """A hand-in that is not collected; the message says why."""


@dataclass
class HandIn:
    """One entry of ``inbound/`` for the lesson: its name, the student it names, its owner's account."""

    entry: str
    claimed: str
    owner: str
    uid: int
    handed_in: dt.datetime | None = None  # naive UTC: the latest change time (filled by :func:`read_hand_in`)
    stated: str | None = None             # what its timestamp.txt says, shown only


class _Walk:
    """Walks one entry under descriptors (never by path), checking every item, optionally copying it."""

    def __init__(self, hand_in: HandIn, limits: UnpackLimits, ignore: list[str]):
        self.hand_in, self.limits, self.ignore = hand_in, limits, ignore
        self.files = self.bytes = 0
        self.ctime_ns = 0
        self.stated: str | None = None

    def _check(self, st: os.stat_result, shown: str) -> None:
        kind = stat.S_IFMT(st.st_mode)
        if kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise Refused(f"{shown} is {_KINDS.get(kind, 'not a plain file')}; links, devices and FIFOs are "
                          "never followed or read: hand in the files themselves")
        if st.st_uid != self.hand_in.uid:
            raise Refused(f"{shown} is owned by uid {st.st_uid}, not by {self.hand_in.owner} who owns the hand-in")
        if kind == stat.S_IFREG and st.st_nlink != 1:
            raise Refused(f"{shown} is a hard link ({st.st_nlink} names for one file); hand in the file itself")
        self.ctime_ns = max(self.ctime_ns, st.st_ctime_ns)

    def folder(self, fd: int, shown: str, into: Path | None, depth: int = 0) -> None:
        """Check (and copy into ``into``) the folder open at ``fd``."""
        self._check(os.fstat(fd), shown)
        if depth > self.limits.hand_in_depth:
            raise Refused(f"{shown} is more than {self.limits.hand_in_depth} folders deep (the depth limit)")
        if into is not None:
            into.mkdir()
        for name in sorted(os.listdir(fd)):
            self.files += 1
            if self.files > self.limits.hand_in_files:
                raise Refused(f"more than {self.limits.hand_in_files} files and folders (the limit of one hand-in)")
            if any(fnmatch.fnmatch(name, pattern) for pattern in self.ignore):
                continue  # nbgrader's CourseDirectory.ignore: never read, never copied
            path = f"{shown}/{name}"
            before = os.stat(name, dir_fd=fd, follow_symlinks=False)
            self._check(before, path)  # links, devices and FIFOs refused before they are opened
            try:
                child = os.open(name, _OPEN | (os.O_DIRECTORY if stat.S_ISDIR(before.st_mode) else 0), dir_fd=fd)
            except OSError as exc:
                raise Refused(f"{path} cannot be opened ({exc.strerror}); links are never followed") from None
            try:
                if (os.fstat(child).st_ino, os.fstat(child).st_dev) != (before.st_ino, before.st_dev):
                    raise Refused(f"{path} changed while it was read; hand it in again")
                if stat.S_ISDIR(before.st_mode):
                    self.folder(child, path, into / name if into is not None else None, depth + 1)
                else:
                    self.file(child, path, into / name if into is not None else None, top=depth == 0)
            finally:
                os.close(child)

    def file(self, fd: int, shown: str, into: Path | None, top: bool) -> None:
        """Check (and copy into ``into``) the plain file open at ``fd``, within the byte limits."""
        self._check(os.fstat(fd), shown)
        room = min(self.limits.member_bytes, self.limits.hand_in_bytes - self.bytes)
        read_stamp = top and os.path.basename(shown) == STAMP
        out = open(into, "xb") if into is not None and not read_stamp else None
        size = 0
        try:
            while chunk := os.read(fd, min(CHUNK, room - size + 1)):
                size += len(chunk)
                if size > room:
                    limit = ("per-file limit", self.limits.member_bytes) if room == self.limits.member_bytes else (
                        "limit of one hand-in", self.limits.hand_in_bytes)
                    raise Refused(f"{shown} grows past the {limit[0]} of {size_text(limit[1])}")
                if read_stamp:
                    self.stated = ((self.stated or "") + chunk.decode("utf-8", "replace"))[:100].strip()
                elif out is not None:
                    out.write(chunk)
        finally:
            if out is not None:
                out.close()
        self.bytes += size


def hand_ins(inbound: Path, lesson: str, collector_uid: int) -> tuple[list[HandIn], list[Skipped]]:
    """The entries of ``inbound`` for ``lesson`` whose owner is the student they name, and the refused
    ones. Raises :class:`Refused` where the exchange cannot tell students apart (one owner, several names)."""
    found: list[HandIn] = []
    skipped: list[Skipped] = []
    marker = f"+{lesson}+"
    for entry in sorted(os.listdir(inbound)):
        if marker not in entry or entry.startswith("."):
            continue
        st = os.lstat(inbound / entry)
        claimed = entry.split(marker)[0]
        try:
            owner = pwd.getpwuid(st.st_uid).pw_name
        except KeyError:
            owner = ""
        found.append(HandIn(entry, claimed, owner, st.st_uid))
        if not stat.S_ISDIR(st.st_mode):
            skipped.append(Skipped(entry, f"{_KINDS.get(stat.S_IFMT(st.st_mode), 'not a folder')}, not a "
                                   "hand-in folder; never followed"))
    names = {h.claimed for h in found}
    if len(names) > 1 and len({h.uid for h in found}) == 1:
        only = found[0]
        raise Refused(f"every hand-in of {lesson} in {inbound} is owned by one account ({only.owner or only.uid}, "
                      f"uid {only.uid}) under {len(names)} student names, so the exchange cannot tell who handed "
                      "in what (a shared account): give each student an account of their own, or collect "
                      "their notebooks through the LMS path (avgpool-course collect)")
    refused = {s.file for s in skipped}
    kept = []
    for h in found:
        if h.entry in refused:
            continue
        if h.uid == collector_uid:
            skipped.append(Skipped(h.entry, f"owned by the account that collects ({h.owner or h.uid}), so the "
                                   "exchange cannot tell which student handed it in; not collected"))
        elif not h.owner:
            skipped.append(Skipped(h.entry, f"owned by uid {h.uid}, which has no account here; not collected"))
        elif h.claimed != h.owner:
            skipped.append(Skipped(h.entry, f"handed in under the name {h.claimed!r} but owned by {h.owner!r} "
                                   f"(uid {h.uid}); not collected, and {h.claimed}'s own work is left as it is"))
        else:
            kept.append(h)
    return kept, skipped


def read_hand_in(inbound: Path, hand_in: HandIn, limits: UnpackLimits = LIMITS, ignore: tuple[str, ...] = (),
                 into: Path | None = None) -> HandIn:
    """Check the entry (and copy it into ``into``, a folder that must not exist; its ``timestamp.txt`` is
    then the change time): ``hand_in`` with its time and stated time filled. Raises :class:`Refused`."""
    walk = _Walk(hand_in, limits, list(ignore))
    try:
        fd = os.open(inbound / hand_in.entry, _OPEN | os.O_DIRECTORY)
    except OSError as exc:
        raise Refused(f"cannot be opened as a folder ({exc.strerror}); links are never followed") from None
    try:
        walk.folder(fd, hand_in.entry, into)
    except OSError as exc:
        raise Refused(f"cannot be read ({type(exc).__name__}: {exc.strerror or exc})") from None
    finally:
        os.close(fd)
    latest = dt.datetime.fromtimestamp(walk.ctime_ns / 1e9, dt.UTC).replace(tzinfo=None)
    hand_in.handed_in = max(hand_in.handed_in or latest, latest)
    hand_in.stated = walk.stated
    if into is not None:
        (into / STAMP).write_text(hand_in.handed_in.strftime(TIMESTAMP_FORMAT))
    return hand_in


class CourseExchangeCollect(ExchangeCollect):
    """nbgrader's exchange collect with identity from the entry's owner, time from its change time, no
    links followed and sizes bounded (see the module). nbgrader's options keep their meaning
    (``--update``, ``--before-duedate``, ``--student``), with the change time as the hand-in's time."""

    limits: UnpackLimits = LIMITS

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.inbound_path = Path(self.root) / self.coursedir.course_id / "inbound"
        if not self.inbound_path.is_dir():
            self.fail(f"Course not found: {self.inbound_path}")
        if not os.access(self.inbound_path, os.R_OK | os.X_OK):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        lesson = self.coursedir.assignment_id
        self.report = CollectReport(source=str(self.inbound_path))
        try:
            found, self.report.skipped = hand_ins(self.inbound_path, lesson, os.geteuid())
        except Refused as exc:
            self.fail(f"collect refused: {exc}")
        student = self.coursedir.student_id
        ignore = tuple(self.coursedir.ignore)
        readable = []
        for hand_in in found:
            if student not in ("", "*") and hand_in.owner != student:
                continue
            try:
                readable.append(read_hand_in(self.inbound_path, hand_in, self.limits, ignore))
            except Refused as exc:
                self.report.skipped.append(Skipped(hand_in.entry, f"refused: {exc}"))
        self.duedate = None
        if self.before_duedate:
            from nbgrader.api import Gradebook, MissingEntry

            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
                try:
                    self.duedate = gb.find_assignment(lesson).duedate
                except MissingEntry:
                    pass
        self.chosen: dict[str, list[HandIn]] = {}
        for hand_in in sorted(readable, key=lambda h: h.handed_in, reverse=True):
            self.chosen.setdefault(hand_in.owner, []).append(hand_in)
        if self.duedate is not None:  # latest first; before the due date first when asked
            due = self.duedate.replace(tzinfo=None)
            for ranked in self.chosen.values():
                ranked.sort(key=lambda h: h.handed_in > due)

    def copy_files(self):
        lesson = self.coursedir.assignment_id
        if not self.chosen:
            self.log.warning(f"No submissions of '{lesson}' for course '{self.coursedir.course_id}' to collect")
        for _, ranked in sorted(self.chosen.items()):
            for hand_in in ranked:
                try:
                    if self._place(hand_in):
                        break
                except Refused as exc:
                    self.report.skipped.append(Skipped(hand_in.entry, f"refused while copying: {exc}"))
        for refused in self.report.skipped:
            self.log.error(f"Not collected: {refused.file}: {refused.reason}")
        log = Path(self.coursedir.root) / "reports" / "exchange_collect.json"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(self.report.to_json())

    def _place(self, hand_in: HandIn) -> bool:
        """Copy ``hand_in`` to ``submitted/<owner>/<lesson>/`` (whole, or nothing changes); False where an
        existing submission is kept."""
        lesson = self.coursedir.assignment_id
        dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, hand_in.owner, lesson))
        if dest.is_dir():
            existing = self.coursedir.get_existing_timestamp(str(dest))
            existing = existing.replace(tzinfo=None) if existing else None
            if not self.update and not self.before_duedate:
                self.log.info(f"Submission already exists, use --update to update: {hand_in.owner} {lesson}")
                return True
            if existing is not None and existing >= hand_in.handed_in and not self.before_duedate:
                self.log.info(f"No newer submission to collect: {hand_in.owner} {lesson}")
                return True
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".collecting-{lesson}-", dir=dest.parent))
        try:
            read_hand_in(self.inbound_path, hand_in, self.limits, tuple(self.coursedir.ignore), staging / lesson)
            if dest.exists():
                shutil.rmtree(dest)
            (staging / lesson).rename(dest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        when = hand_in.handed_in.strftime(TIMESTAMP_FORMAT)
        self.log.info(f"Collecting submission: {hand_in.owner} {lesson} handed in {when} (the exchange's change "
                      f"time; its timestamp.txt says {hand_in.stated or 'nothing'})")
        self.report.placed.append(Placed(hand_in.entry, hand_in.owner, lesson, when, time_from="ctime",
                                         stated_time=hand_in.stated))
        return True
