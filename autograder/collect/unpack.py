"""Unpacking an export (a .zip, or a folder holding students' zips) within :class:`UnpackLimits`,
checked while streaming, each refusal reported."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import unicodedata
import zipfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath


from autograder.coursedir import CourseError
from autograder.collect.names import GENERIC_FOLDERS, LINK_REASON, SKIP_PARTS, UNPACKED, describe, find_lessons, name_in, normalize


MiB = 1 << 20
@dataclass
class Skipped:
    """One file that was not placed, with the reason and what to do about it."""

    file: str
    reason: str


CHUNK = 64 * 1024  # bytes read from an archive member at a time


@dataclass(frozen=True)
class UnpackLimits:
    """What collect unpacks at most, checked while streaming (nothing is ever written past a limit):
    bytes of one member, bytes on disk for the whole export at once, a member's growth over its
    compressed size (once it is past ``ratio_from`` bytes), members on disk at once, and archives
    within archives (the export is depth 1, a student's zip in it depth 2). One hand-in through nbgrader's
    exchange (:mod:`autograder.collect.exchange`): at most ``hand_in_files`` files and folders,
    ``hand_in_bytes`` in all (each file within ``member_bytes``), ``hand_in_depth`` folders deep."""

    member_bytes: int = 64 * MiB
    total_bytes: int = 512 * MiB
    ratio: int = 200
    ratio_from: int = 1 * MiB
    members: int = 10_000
    depth: int = 3
    hand_in_files: int = 1_000
    hand_in_bytes: int = 256 * MiB
    hand_in_depth: int = 8

    def __post_init__(self):
        for name, value in asdict(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise CourseError(f"UnpackLimits.{name}={value!r}: must be a positive whole number")


LIMITS = UnpackLimits()


def size_text(n: int) -> str:
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
            raise _Refused(f"declares {size_text(info.file_size)}, over the per-file limit of {size_text(lim.member_bytes)}")
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
                            "member": f"inflates past the per-file limit of {size_text(lim.member_bytes)}",
                            "total": f"the export inflates past the total limit of {size_text(lim.total_bytes)}",
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


def unpack_export(source: Path, scratch: Path, limits: UnpackLimits = LIMITS) -> tuple[Path, list[Skipped]]:
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


def strip_common_top(relatives: list[PurePosixPath], lessons: list[str], trusted: list[int]) -> int:
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
