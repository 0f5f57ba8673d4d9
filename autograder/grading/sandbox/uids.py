"""Unprivileged uids for children, leased machine-wide per grading thread and run (:func:`~.resources.sandbox_uid`, from
:func:`lease_folder`), and the processes of a uid (:func:`sweep_uid` ends them)."""

from __future__ import annotations

import os
import signal
import stat
import tempfile
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


def sweep_uid(uid: int, seconds: float = 10.0) -> None:
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
