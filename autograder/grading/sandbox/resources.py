"""What one grading run holds in this process (:class:`Resources`): its warm templates, its sandbox-uid leases
and its live children. A :class:`~autograder.grading.submission.GradingRun` opens its own lazily and closes them
with it (``run.close()``, or ``with GradingRun.open(...) as run:``): closing ends every child of that run and
nothing of another run's. :func:`reap_all` (what :mod:`autograder.stopping` calls on SIGTERM, SIGINT or SIGHUP)
asks every open one.

Module-level state, and why it carries nothing of one student to another: :data:`_OPEN` (the open resources of
this process: what a stop must end; each holds only its own run's processes and leases), and the
resources of :func:`process_default` (for a child started outside any run: a test's own ``Sandbox``, a Dask
task, ``run_tests`` called directly; its templates hold a lesson's set-up modules only, never a student's code,
as every run's do: each child is forked fresh from them)."""

from __future__ import annotations

import atexit
import os
import signal
import threading

from autograder.grading.sandbox import levels, uids
from autograder.grading.sandbox.limits import GraderFault
from autograder.grading.sandbox.uids import SANDBOX_UID_BASE, lease_folder

#: Every :class:`Resources` of this process not closed yet (what :func:`reap_all` ends, :func:`close_all` closes).
_OPEN: "set[Resources]" = set()
#: The resources of :func:`process_default`, by the process id that made them.
_DEFAULT: dict = {}
#: How many warm templates one run keeps (least recently used ones are closed first): one per lesson of the
#: course, so that a worker grading every lesson starts each template once (with PyTorch one holds about 260 MB,
#: 170 MB of it its own).
MAX_TEMPLATES = 5


class Resources:
    """One grading run's processes and leases in this process: ``templates`` (warm templates by (blocked modules,
    imports, mount plan), least recently used first), ``leases`` (``{uid: (thread ident, the locked lease
    file)}``: a sandbox uid per grading thread, :func:`sandbox_uid`), ``live`` (the
    :class:`~.process.Sandbox` es whose child may be running). Made lazily by the run; :meth:`close` ends them."""

    def __init__(self):
        self.pid = os.getpid()
        self.lock = threading.Lock()  # over templates (held while one starts)
        self.leases_lock = threading.Lock()
        self.templates: dict = {}
        self.leases: dict[int, tuple] = {}
        self.live: set = set()
        self.closed = False
        _OPEN.add(self)

    def groups(self) -> list[int]:
        """The process groups of this run's children and templates (a forked copy of the process has none)."""
        if os.getpid() != self.pid:
            return []
        boxes = list(self.live)
        return [box.proc.pid for box in boxes if box.proc is not None] + \
               [template.proc.pid for template in list(self.templates.values())]

    def reap(self) -> None:
        """End every process of this run now, taking no lock (a signal handler may have interrupted a
        sandbox that holds one): each child's process group (with it its PID namespace), the warm templates
        (their children die with them), every process of this run's sandbox uids (daemons that left the
        group), and the children's cgroups."""
        if os.getpid() != self.pid:
            return
        for group in self.groups():
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if levels.containment.cache_info().currsize and levels.containment().drop_uid:  # never probe from a handler
            for uid in list(self.leases):
                uids.sweep_uid(uid, 5.0)
        for box in list(self.live):
            cgroup, box.cgroup = box.cgroup, None
            if cgroup is not None:
                cgroup.remove()

    def close(self) -> None:
        """End this run's children (each killed and waited for), close its templates, release its uid leases.
        Idempotent; a forked copy of the process closes nothing of its parent's."""
        if self.closed:
            return
        self.closed = True
        _OPEN.discard(self)
        if os.getpid() != self.pid:
            return
        for box in list(self.live):
            box.kill()
        with self.lock:
            templates, self.templates = list(self.templates.values()), {}
        with self.leases_lock:
            leases, self.leases = list(self.leases.values()), {}
        for template in templates:
            template.close()
        for _, handle in leases:
            handle.close()


def process_default() -> Resources:
    """The resources of children started outside any grading run in this process (a test's ``Sandbox``, a
    Dask task, ``run_tests`` called without a run), made on first use, closed at exit."""
    resources = _DEFAULT.get(os.getpid())
    if resources is None or resources.closed:
        _DEFAULT.clear()  # a forked copy's parent's default is not its own
        resources = _DEFAULT[os.getpid()] = Resources()
    return resources


def sandbox_uid(slot: int = 0, resources=None) -> int:
    """An unprivileged uid for the sandboxes of this thread's grading calls in one grading run (``resources``:
    the run's :class:`Resources`; default: those of children started outside any run), leased
    machine-wide: one uid per grading thread of every run of every process (so per-uid limits and the clean-up
    that kills every process of the uid never touch the children of another thread, run, worker or grader on
    the same machine: a Dask worker with several threads grades as several single-threaded workers do). The
    lease is a lock on ``<lease_folder()>/<uid>.lock``, released when the run closes or its thread ends.
    ``slot`` is where the search starts. A lease that cannot be taken is a :class:`GraderFault`, never a
    traceback."""
    resources = resources if resources is not None else process_default()
    leases = resources.leases
    thread = threading.get_ident()
    alive = {t.ident for t in threading.enumerate()}
    with resources.leases_lock:
        if resources.closed:
            raise GraderFault("the grading run was closed while it still graded")
        for uid, (owner_thread, handle) in list(leases.items()):
            if owner_thread not in alive:  # a dead thread's lease is free
                leases.pop(uid)
                handle.close()
            elif owner_thread == thread:
                return uid
        import fcntl

        folder = lease_folder()
        for offset in range(1000):
            uid = SANDBOX_UID_BASE + (slot + offset) % 1000
            if uid in leases:
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
            leases[uid] = (thread, handle)
            return uid
    raise GraderFault("no free sandbox uid (1000 grading threads at once?)")


def reap_all() -> None:
    """End every process of every open run of this process now (:meth:`Resources.reap`; no lock taken).
    :mod:`autograder.stopping` calls it when the grader is stopped."""
    for resources in list(_OPEN):
        resources.reap()


def close_all() -> None:
    """Close every open run's resources of this process (at exit)."""
    for resources in list(_OPEN):
        resources.close()


atexit.register(close_all)
