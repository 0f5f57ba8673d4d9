"""Stopping a command: SIGTERM, SIGINT or SIGHUP (a scheduler, a JupyterHub culling the server, Ctrl-C, a
closed terminal) first end every process the command started, then the command says it stopped.

What ends what: the grading processes register their reapers here (:func:`on_stop`; the trusted
sandbox registers :func:`autograder.grading.sandbox.reap_all`, which asks every open grading run's resources
to end its children, templates, whatever student code started, and their cgroups); worker processes started with ``multiprocessing``
get SIGTERM and end their own (:func:`serve_as_worker`). A SIGKILL, which no handler sees, is covered
by parent-death signals down the whole tree instead (:func:`die_with_parent`).

Module-level state, and why it carries nothing of one student to another: ``_REAPERS`` (the functions to call on a
stop, registered once at import by the modules that start processes) and ``_STATE`` (the stop of the current
command, cleared when its :func:`stoppable` block ends): neither holds a submission or a grading run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

#: The signals that stop a command.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: How long a stopping process waits for its worker processes to end their own children.
WORKER_STOP_SECONDS = 5.0
#: How long the unwinding after a stop may take before the process exits anyway.
UNWIND_SECONDS = 10.0

_REAPERS: list = []
_STATE: dict = {}


class Stopped(KeyboardInterrupt):
    """The command was stopped by signal ``signum``, after every process it started had ended. A
    ``KeyboardInterrupt``, so no ``except Exception`` (nor the trusted grader's test runner, which lets
    Ctrl-C through) turns it into a result. ``exit_status``: 128 + ``signum``, as a shell reports it."""

    def __init__(self, signum: int):
        self.signum = int(signum)
        self.exit_status = 128 + self.signum
        super().__init__(f"stopped by {signal.Signals(self.signum).name}: every process it started has ended; run "
                         "the same command again to finish (grading resumes: finished submissions keep their "
                         "records, only what is missing is graded, with the same seed)")


def on_stop(reaper) -> None:
    """Call ``reaper()`` (no arguments, no locks taken, quick) when this process is stopped."""
    if reaper not in _REAPERS:
        _REAPERS.append(reaper)


def end_started() -> None:
    """End what this process started: SIGTERM to its ``multiprocessing`` workers (each ends its own
    children) and a wait of up to :data:`WORKER_STOP_SECONDS` for them, SIGKILL to any left, then every
    reaper of :func:`on_stop`."""
    import multiprocessing

    workers = multiprocessing.active_children()
    for worker in workers:
        try:
            worker.terminate()
        except (OSError, ValueError):
            pass
    end = time.monotonic() + WORKER_STOP_SECONDS
    for worker in workers:
        try:
            worker.join(max(0.0, end - time.monotonic()))
            if worker.is_alive():
                worker.kill()
                worker.join(1.0)
        except (OSError, ValueError, AssertionError):
            pass
    _reap()


def _reap() -> None:
    for reaper in list(_REAPERS):
        try:
            reaper()
        except Exception:  # one reaper's failure must not keep the others from running
            pass


def _exit_now(stop: Stopped) -> None:
    print(f"error: {stop}", file=sys.stderr, flush=True)
    os._exit(stop.exit_status)


def _stop(signum, frame) -> None:
    """The handler :func:`stoppable` installs."""
    for sig in STOP_SIGNALS:  # a second Ctrl-C does not interrupt the clean-up
        signal.signal(sig, signal.SIG_IGN)
    stop = Stopped(signum)
    _STATE["stopped"] = stop
    end_started()
    if _STATE.get("exit"):
        _exit_now(stop)
    watchdog = threading.Timer(UNWIND_SECONDS, _exit_now, (stop,))  # the processes are gone: never hang here
    watchdog.daemon = True
    watchdog.start()
    _STATE["watchdog"] = watchdog
    raise stop


def check() -> None:
    """Raise the :class:`Stopped` of a stop that came in again: after a call into a host that swallows
    every exception (nbgrader's API catches ``KeyboardInterrupt`` too), so the command still stops."""
    if _STATE.get("stopped") is not None:
        raise _STATE["stopped"]


def _host_defaults() -> bool:
    """Whether no host application took a stop signal: each has Python's default handling or is ignored
    (``nohup`` ignores SIGHUP, a shell's background job SIGINT)."""
    defaults = (signal.SIG_DFL, signal.SIG_IGN, signal.default_int_handler, None)
    return all(signal.getsignal(sig) in defaults for sig in STOP_SIGNALS)


@contextlib.contextmanager
def stoppable(exit: bool = False):
    """While inside (in the main thread; elsewhere, or inside another ``stoppable``, it does nothing):
    SIGTERM, SIGINT or SIGHUP end every process this process started (:func:`end_started`), then raise
    :class:`Stopped` where the main thread was (a record being written is not: records are written
    atomically), for the caller to say so and exit non-zero. ``exit``: print the line and exit at once
    instead (inside a host application, such as ``nbgrader autograde``, that would print a traceback), and
    only where the host left the signals alone (a Jupyter server that handles them keeps its own way).
    A signal ignored when it starts (``nohup`` ignores SIGHUP) stays ignored."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) is _stop \
            or (exit and not _host_defaults()):
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    _STATE.clear()
    _STATE["exit"] = exit
    for sig in STOP_SIGNALS:
        if previous[sig] is not signal.SIG_IGN:  # what the user chose to ignore (nohup) stays ignored
            signal.signal(sig, _stop)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        watchdog = _STATE.pop("watchdog", None)
        if watchdog is not None:
            watchdog.cancel()
        _STATE.clear()  # a stop belongs to this command only


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Have the kernel send this process ``signum`` when its parent ends (Linux's parent-death signal;
    elsewhere nothing). Run in a child between fork and exec (``preexec_fn``) or first thing in a worker.
    A change of uid clears it: a child that drops its uid sets it again (``_child.setup_sandbox``)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, int(signum), 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:
            pass


def _end_worker(signum, frame) -> None:
    _reap()
    os._exit(128 + signum)


def serve_as_worker(parent: int, then: str, *args) -> None:
    """The initializer of a worker process started by process ``parent`` (``ProcessPoolExecutor``): end
    with it, then call ``then(*args)`` (``"module:function"``, imported only now, so the worker is tied to
    its parent before the seconds its imports take). Its parent's death, even by SIGKILL, sends it SIGTERM
    (Linux's parent-death signal); SIGTERM or SIGHUP run this process's reapers (:func:`on_stop`) and
    exit; SIGINT (a Ctrl-C reaches the whole process group) is the parent's to handle, which then stops
    its workers (:func:`end_started`)."""
    import importlib

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _end_worker)
    die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the line above
        _end_worker(signal.SIGTERM, None)
    module, _, name = then.partition(":")
    getattr(importlib.import_module(module), name)(*args)
