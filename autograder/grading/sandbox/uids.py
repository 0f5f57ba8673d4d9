"""Unprivileged uids for children, leased machine-wide per grading thread (:func:`sandbox_uid`), and the
processes of a uid (:func:`_sweep_uid` ends them)."""

from __future__ import annotations

import os
import signal
import stat
import tempfile
import threading
import time
from pathlib import Path

from autograder.grading.sandbox.limits import GraderFault


SANDBOX_UID_BASE = 61000


def process_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (an orphan whose reaper has not waited yet)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def uid_processes(uid: int) -> list[int]:
    """Live processes of ``uid`` (zombies, which run nothing and wait for their reaper, left out)."""
    pids = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as handle:
                for line in handle:
                    if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                        break
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry))
                        break
        except OSError:
            continue
    return pids


def _sweep_uid(uid: int, seconds: float = 10.0) -> None:
    """SIGKILL every process of sandbox uid ``uid`` (what student code started, daemons that left the
    process group included) until none is left, for at most ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        left = uid_processes(uid)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)


#: This process's sandbox-uid leases: ``{uid: (pid, thread ident, the locked lease file)}``.
_LEASES: dict[int, tuple] = {}
_LEASES_LOCK = threading.Lock()


def lease_folder() -> Path:
    """Where this user's sandbox-uid leases live: a folder of the grading user's own (mode 0700), so a
    second instructor or a TA on the machine never meets a folder another user made. Root keeps the
    folder name of earlier versions (``trusted-grader-uids``), so graders of both versions that run as
    root on one machine still lease distinct uids; any other user gets ``trusted-grader-uids-<euid>``.
    Raises :class:`GraderFault` (one sentence) where the folder cannot be made or is not the user's."""
    euid = os.geteuid()
    folder = Path(tempfile.gettempdir()) / ("trusted-grader-uids" if euid == 0 else f"trusted-grader-uids-{euid}")
    try:
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
        info = os.lstat(folder)
    except OSError as exc:
        raise GraderFault(f"the trusted grader cannot make its lease folder {folder} ({exc.strerror or exc}); "
                          "set TMPDIR to a folder you own and grade again") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != euid or info.st_mode & 0o077:
        raise GraderFault(f"the trusted grader's lease folder {folder} is not a private folder of uid {euid} "
                          "(another user made it, or it is a link); remove it or set TMPDIR to a folder you own "
                          "and grade again")
    return folder


def sandbox_uid(slot: int = 0) -> int:
    """An unprivileged uid for the sandboxes of this thread's grading calls, leased machine-wide: one uid per
    grading thread of every process (so per-uid limits and the clean-up that kills every process of the uid
    never touch the children of another thread, worker or grader run on the same machine: a Dask worker
    with several threads grades as several single-threaded workers do). The lease is a lock on
    ``<lease_folder()>/<uid>.lock``, released when its thread or process ends. ``slot`` is where the search
    starts. A lease that cannot be taken is a :class:`GraderFault`, never a traceback."""
    pid, thread = os.getpid(), threading.get_ident()
    alive = {t.ident for t in threading.enumerate()}
    with _LEASES_LOCK:
        for uid, (owner, owner_thread, handle) in list(_LEASES.items()):
            if owner != pid or owner_thread not in alive:  # a forked copy holds none; a dead thread's is free
                _LEASES.pop(uid)
                if owner == pid:
                    handle.close()
            elif owner_thread == thread:
                return uid
        import fcntl

        folder = lease_folder()
        for offset in range(1000):
            uid = SANDBOX_UID_BASE + (slot + offset) % 1000
            if uid in _LEASES:
                continue
            try:
                handle = open(folder / f"{uid}.lock", "a+")
            except OSError as exc:
                raise GraderFault(f"the trusted grader cannot write its lease {folder / f'{uid}.lock'} "
                                  f"({exc.strerror or exc}); set TMPDIR to a folder you own and grade again") from None
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            _LEASES[uid] = (pid, thread, handle)
            return uid
    raise GraderFault("no free sandbox uid (1000 grading threads at once?)")
