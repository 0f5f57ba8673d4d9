"""What a child process runs (the text of ``_child.py``), its environment, and the ending and output of a
process the sandbox started (a cold child or a warm template)."""

from __future__ import annotations

import inspect
import os
import signal
import subprocess

from autograder.grading import _child


RUNNER_SOURCE = inspect.getsource(_child)


def clean_env() -> dict:
    """The child's whole environment: no grading variables, no instructor paths, one thread per library."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def end_group(proc) -> None:
    """SIGKILL the process group that ``proc`` leads (and with it its PID namespace), then wait for ``proc``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def log_tail(log, size: int) -> str:
    """The last ``size`` bytes written to the file ``log`` ("" where there is none)."""
    try:
        log.seek(0, os.SEEK_END)
        log.seek(max(0, log.tell() - size))
        return log.read().decode("utf-8", "replace")
    except (AttributeError, OSError, ValueError):
        return ""


def captured_text(captured: dict) -> str:
    """A checked capture (``{"text", "dropped"}``): the text kept, and a line saying how much was dropped."""
    dropped = captured["dropped"]
    return captured["text"] + (f"\n... {dropped} more characters of output dropped ..." if dropped else "")
