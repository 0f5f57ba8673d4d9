"""The sandboxed child process seen from the parent: start it, talk to it under deadlines, kill it.

Containment is detected at run time and recorded (:func:`containment`); why each part is there:
``THREAT_MODEL.md``.

* ``namespaces`` (root on Linux, as in CI): a cold child starts under bubblewrap (:func:`bwrap_command`) in
  new mount, network, PID, IPC, UTS and cgroup namespaces, with the mounts of :func:`mount_plan` (the host
  read-only, a minimal ``/dev``, its own ``/proc``, instructor paths hidden, a fresh tmpfs on every folder
  anyone may write), under a seccomp filter that refuses the kernel's keyrings (:func:`keyring_filter`), and
  drops to an unprivileged uid of its own before any student code. A warm template runs under bubblewrap
  with the same mounts and filter; a child forked from it makes its own namespaces, ``/proc`` and fresh
  folders after the fork (:func:`own_mounts`, ``_child._forked``);
* ``user-namespace`` (Linux, not root, where unprivileged user namespaces are allowed): bubblewrap's
  ``--unshare-all`` (a user namespace too) and the same mounts, but the child keeps the caller's uid
  (no warm template: its children would need uid maps written from outside);
* ``rlimits-only`` (macOS, or Linux without ``bwrap``, which the level's reason says): a fresh interpreter
  in an empty scratch folder with a clean environment and resource limits; instructor files stay
  readable by the child.

In every mode: a CPU-second budget per test cell and per solution cell (read from outside the child: its
cgroup's where this process may make cgroups, else psutil's over its process tree), a wall-clock cap only
for hangs, ``SIGKILL`` of the whole process group (and PID namespace), ``RLIMIT_AS``/``RLIMIT_FSIZE``/
``RLIMIT_NPROC``/``RLIMIT_CORE``, a memory cap in the cgroup (else a parent-side RSS watch), capped captured
output, capped replies.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import inspect
import itertools
import json
import os
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, asdict
from pathlib import Path

from autograder import stopping
from autograder.grading import _child
from autograder.grading._child import Channel, ChannelClosed, ChannelTimeout, ProtocolError
from autograder.grading.untrusted import checked

RUNNER_SOURCE = inspect.getsource(_child)
SANDBOX_UID_BASE = 61000


@dataclass(frozen=True)
class Limits:
    """Limits for one submission's child process. ``test_seconds`` and ``cell_seconds`` are CPU seconds
    of the child's whole process tree, as the kernel accounts them (a busy machine does not use them
    up); a wall-clock cap of :func:`hang_seconds` of them stops code that hangs without computing."""

    test_seconds: float = 60.0  #: CPU seconds of student code run by one test cell, in total
    cell_seconds: float = 60.0  #: CPU seconds of each solution cell
    start_seconds: float = 120.0  #: wall clock: interpreter start and the lesson's set-up imports
    memory_bytes: int = 4 << 30  #: address space of the child (RLIMIT_AS) and its RSS (watched)
    file_bytes: int = 16 << 20  #: largest file the child may write (RLIMIT_FSIZE)
    nproc: int = 64  #: processes and threads of the sandbox uid (RLIMIT_NPROC; a cgroup's pids.max): honest work needs <= 3
    output_chars: int = 20_000  #: stored stdout/stderr per cell
    reply_bytes: int = 256 << 20  #: largest reply the parent reads
    warm: bool = True  #: fork children from a warm template (Linux, namespaces or rlimits-only): not a limit
    #: the lowest containment level to grade at (one of LEVELS, or PLATFORM: the strongest the platform
    #: offers, :func:`platform_level`): not a limit
    require: str = "platform"

    def as_dict(self) -> dict:
        """The limits a verdict depends on (``warm`` changes how fast a child starts, never a verdict;
        ``require`` only whether grading happens at all, and every record states its level)."""
        limits = asdict(self)
        limits.pop("warm")
        limits.pop("require")
        return limits


#: The wall-clock cap of a CPU budget: ``HANG_FACTOR`` × the budget + ``HANG_SECONDS`` (sleeping or
#: blocked code uses no CPU; a machine at load 4 on 2 cores still finishes honest work well inside it).
HANG_FACTOR, HANG_SECONDS = 4.0, 10.0


def hang_seconds(cpu_seconds: float) -> float:
    return HANG_FACTOR * cpu_seconds + HANG_SECONDS


def cgroup_places(proc_cgroup: str, mountinfo: str) -> tuple[dict[str, str], str | None]:
    """Where this process's cgroups are, from the text of ``/proc/self/cgroup`` and ``/proc/self/mountinfo``:
    ``({v1 controller: folder}, the cgroup v2 folder or None)``. A folder is the hierarchy's mount point
    plus the process's cgroup path below the mount's root (a container's mount may start deeper)."""
    own_v1: dict[str, str] = {}
    own_v2 = None
    for line in proc_cgroup.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if not number.isdigit() or not path.startswith("/"):
            continue
        if number == "0" and controllers == "":
            own_v2 = path
        for controller in controllers.split(","):
            if controller:
                own_v1[controller] = path
    v1: dict[str, str] = {}
    v2 = None
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        dash = fields.index("-")
        if dash < 5 or len(fields) < dash + 3:
            continue
        root, point, fstype = fields[3], fields[4].replace("\\040", " "), fields[dash + 1]
        options = fields[dash + 3].split(",") if len(fields) > dash + 3 else []

        def below(path: str) -> str | None:
            if root == "/" or path == root or path.startswith(root.rstrip("/") + "/"):
                return os.path.normpath(point + "/" + path[len(root.rstrip("/")):])
            return None

        if fstype == "cgroup2" and own_v2 is not None and v2 is None:
            v2 = below(own_v2)
        elif fstype == "cgroup":
            for controller in options:
                if controller in own_v1 and controller not in v1:
                    folder = below(own_v1[controller])
                    if folder is not None:
                        v1[controller] = folder
    return v1, v2


def _read_text(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _this_process_places() -> tuple[dict[str, str], str | None]:
    """:func:`cgroup_places` of this process."""
    return cgroup_places(_read_text("/proc/self/cgroup"), _read_text("/proc/self/mountinfo"))


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


#: A child's CPU in its cgroup: a quota of ``CHILD_CPUS`` CPUs per ``CPU_PERIOD_US`` (however many processes it
#: starts), at half the weight of a grading process (v1 ``cpu.shares``: 1024 per process of the grader; v2
#: ``cpu.weight``: 100), so a child that starts hundreds of busy processes neither starves its neighbours nor the
#: grader that enforces its budget. Where no cgroup can be made, the child runs at nice 19 (``_child``).
CPU_PERIOD_US, CHILD_CPUS, CHILD_SHARES, CHILD_WEIGHT = 100_000, 1.0, 512, 50


class Cgroup:
    """A cgroup for one child: the kernel counts the CPU time of every task that ever ran in it, exited
    and auto-reaped ones included, and caps its memory (the out-of-memory killer acts inside it only).
    Cgroup v1 (its ``cpuacct`` and ``memory`` hierarchies, root) or v2 (the unified hierarchy: a folder
    in this process's own cgroup, which root may write, or a user to whom it is delegated; CPU seconds
    from ``cpu.stat``, ``memory.max`` and ``pids.max`` where those controllers are enabled for it).
    ``paths``: ``{"cpuacct": ..., "memory": ...}`` (v1) or ``{"unified": ...}`` (v2).
    :meth:`create` returns ``None`` where this process cannot make one (:meth:`make` says why)."""

    _serial = itertools.count(1)  # next() is atomic: threads of one process never share a name
    _swept = 0  # the process that removed the stale cgroups next to its own
    #: Extra v1 hierarchies a child joins where this process may write them: ``cpu`` for its CPU quota and
    #: weight, ``pids`` for its task limit (a co-mounted ``cpu,cpuacct`` is one folder).
    EXTRA_V1 = ("cpu", "pids")

    def __init__(self, paths: dict[str, str]):
        self.paths = paths
        self.v2 = "unified" in paths

    @staticmethod
    def _remove_stale(parents: list[str], age_seconds: float = 60.0) -> None:
        """Remove the empty cgroups in ``parents`` that grading processes now gone left (one killed with
        SIGKILL cannot remove its own; nothing is left in them: their children die with it), once they
        are ``age_seconds`` old (never one a grader this process cannot see has just made)."""
        for parent in parents:
            try:
                names = os.listdir(parent)
            except OSError:
                continue
            for name in names:
                pid = name.split("-")[2] if name.startswith("avgpool-trusted-") and name.count("-") == 3 else ""
                path = os.path.join(parent, name)
                try:
                    if pid.isdigit() and not _running(int(pid)) and time.time() - os.stat(path).st_mtime > age_seconds:
                        os.rmdir(path)  # fails, and it stays, while anything is in it
                except OSError:
                    pass

    @classmethod
    def create(cls, memory_bytes: int, nproc: int | None = None) -> "Cgroup | None":
        """A new cgroup capped at ``memory_bytes`` (and ``nproc`` tasks on v2), or ``None`` where this
        process may make none."""
        try:
            return cls.make(memory_bytes, nproc)
        except OSError:
            return None

    @classmethod
    def make(cls, memory_bytes: int, nproc: int | None = None) -> "Cgroup":
        """A new cgroup (v1 where this process may write both its ``cpuacct`` and ``memory`` folders, else
        v2); raises ``OSError`` saying why this process may make none."""
        if not sys.platform.startswith("linux"):
            raise OSError("not Linux")
        v1, v2 = _this_process_places()
        name = f"avgpool-trusted-{os.getpid()}-{next(cls._serial)}"
        use_v1 = all(c in v1 and os.access(v1[c], os.W_OK | os.X_OK) for c in ("cpuacct", "memory"))
        if not use_v1 and v2 is None:
            raise OSError("no cgroup v1 cpuacct and memory hierarchies this user may write, and no cgroup v2"
                          if v1 else "no cgroup hierarchy is mounted")
        if not use_v1 and not (os.access(v2, os.W_OK | os.X_OK) and os.access(f"{v2}/cgroup.procs", os.W_OK)):
            raise OSError(f"this user (uid {os.geteuid()}) may not write its cgroup {v2} (no cgroup v2 subtree "
                          "delegated to it)")
        controllers = ["cpuacct", "memory"] + [c for c in cls.EXTRA_V1 if c in v1 and os.access(v1[c], os.W_OK | os.X_OK)]
        parents = list(dict.fromkeys(v1[c] for c in controllers)) if use_v1 else [v2]
        if cls._swept != os.getpid():
            cls._swept = os.getpid()
            cls._remove_stale(parents)
        made = cls({c: f"{v1[c]}/{name}" for c in controllers} if use_v1 else {"unified": f"{v2}/{name}"})
        try:
            if not use_v1:  # the memory, pids and cpu controllers for the children, where the parent may give them
                wanted = set(_read_text(f"{v2}/cgroup.controllers").split()) & {"memory", "pids", "cpu"}
                for controller in wanted - set(_read_text(f"{v2}/cgroup.subtree_control").split()):
                    try:
                        _write(f"{v2}/cgroup.subtree_control", f"+{controller}")
                    except OSError:  # EBUSY: processes in a non-root parent; RLIMIT_AS and the RSS watch remain
                        pass
            for path in made.folders():
                os.mkdir(path)
            made.limit(memory_bytes, nproc)
        except OSError as exc:
            made.remove()
            raise OSError(f"{exc.filename or 'a cgroup'}: {exc.strerror}" if exc.strerror else str(exc)) from None
        return made

    def folders(self) -> list[str]:
        """Each folder of this cgroup once (co-mounted v1 controllers share one)."""
        return list(dict.fromkeys(self.paths.values()))

    def _set(self, file: str, value) -> bool:
        """Write ``value`` to ``file`` in the folder that has it; False where none has (no such controller)."""
        for folder in self.folders():
            if os.path.exists(f"{folder}/{file}"):
                _write(f"{folder}/{file}", str(value))
                return True
        return False

    def limit(self, memory_bytes: int, nproc: int | None) -> None:
        """Cap memory (no escape into swap), the number of tasks, and the CPU: at most :data:`CHILD_CPUS` CPUs
        at a low weight (the grader's own processes, and so its budget checks, come first), where the
        controllers allow."""
        if self.v2:
            self._set("memory.max", int(memory_bytes))
            self._set("memory.swap.max", 0)
            self._set("cpu.max", f"{int(CHILD_CPUS * CPU_PERIOD_US)} {CPU_PERIOD_US}")
            self._set("cpu.weight", CHILD_WEIGHT)
        else:
            self._set("memory.limit_in_bytes", int(memory_bytes))
            try:
                self._set("memory.memsw.limit_in_bytes", int(memory_bytes))
            except OSError:
                pass
            self._set("cpu.cfs_period_us", CPU_PERIOD_US)
            self._set("cpu.cfs_quota_us", int(CHILD_CPUS * CPU_PERIOD_US))
            self._set("cpu.shares", CHILD_SHARES)
        if nproc is not None:
            self._set("pids.max", int(nproc))

    def cpu_capped(self) -> bool:
        """Whether this cgroup caps its CPU (a quota and a weight)."""
        return any(os.path.exists(f"{folder}/{file}") for folder in self.folders()
                   for file in ("cpu.max", "cpu.cfs_quota_us"))

    def memory_capped(self) -> bool:
        return os.path.exists(f"{self.paths['unified']}/memory.max") if self.v2 else True

    def cpu_seconds(self) -> float:
        if self.v2:
            stat = dict(line.split() for line in _read_text(f"{self.paths['unified']}/cpu.stat").splitlines()
                        if len(line.split()) == 2)
            return int(stat["usage_usec"]) / 1e6
        with open(f"{self.paths['cpuacct']}/cpuacct.usage") as handle:
            return int(handle.read()) / 1e9

    def _memory(self, v1: str, v2: str) -> str:
        return _read_text(f"{self.paths['unified']}/{v2}" if self.v2 else f"{self.paths['memory']}/{v1}")

    def oom_killed(self) -> bool:
        try:
            if self.v2:
                events = dict(line.split() for line in self._memory("", "memory.events").splitlines())
                return int(events.get("oom_kill", 0)) > 0 or int(events.get("max", 0)) > 0
            failed = int(self._memory("memory.failcnt", "")) > 0
            killed = any(line.startswith("oom_kill ") and int(line.split()[1]) > 0
                         for line in self._memory("memory.oom_control", "").splitlines())
            return killed or failed
        except ValueError:
            return False

    def deep_in_memory(self) -> bool:
        """Peak usage past half the cap (the out-of-memory killer acted, or the CPU went into reclaim)."""
        try:
            peak = self._memory("memory.max_usage_in_bytes", "memory.peak") or self._memory("", "memory.current")
            cap = self._memory("memory.limit_in_bytes", "memory.max").strip()
            return self.oom_killed() or (cap.isdigit() and int(peak) >= 0.5 * int(cap))
        except ValueError:
            return False

    def remove(self) -> None:
        for path in self.folders():
            if os.path.exists(f"{path}/cgroup.kill"):  # v2: every task in it, at once
                try:
                    _write(f"{path}/cgroup.kill", "1")
                except OSError:
                    pass
            for _ in range(50):
                try:
                    with open(f"{path}/cgroup.procs") as handle:
                        for pid in handle.read().split():
                            try:
                                os.kill(int(pid), signal.SIGKILL)
                            except (ProcessLookupError, PermissionError, ValueError):
                                pass
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


@functools.lru_cache(maxsize=None)
def _cgroup_probe() -> tuple[str, tuple[tuple[str, str], ...]]:
    """``(why this process may make no cgroup for a child, or "", ((controller, what its lack means), ...))``:
    a probe is made and removed."""
    try:
        probe = Cgroup.make(1 << 30)
    except OSError as exc:
        return str(exc), ()
    memory, cpu = probe.memory_capped(), probe.cpu_capped()
    probe.remove()
    notes = []
    if not memory:
        notes.append(("memory controller", "cgroup v2 without the memory controller for the grader's cgroup: memory "
                      "is capped by RLIMIT_AS and the RSS watch only"))
    if not cpu:
        notes.append(("cpu controller", "no cpu controller for the grader's cgroups: a child's share of the CPU is "
                      "not capped (it runs at nice 19)"))
    return "", tuple(notes)


def cgroups_available() -> bool:
    return not _cgroup_probe()[0]


#: Containment modes, weakest first (see the module docstring). A *level* is a mode, with ``+cgroup``
#: where the kernel counts the child's CPU seconds and caps its memory in a cgroup of its own:
#: ``namespaces+cgroup`` is what root gets on CI's machines.
MODES = ("rlimits-only", "user-namespace", "namespaces")
LEVELS = tuple(mode + extra for mode in MODES for extra in ("", "+cgroup"))
#: What each mode needs beyond the one below it (the keys of :attr:`Containment.lacks`).
_NEEDS = {"user-namespace": ("namespaces",), "namespaces": ("namespaces", "uid")}


#: The default floor: the strongest containment the platform offers (:func:`platform_level`).
PLATFORM = "platform"

#: What to install or set where the machine gives less than the floor (the refusal's second half).
INSTALL_HINT = ("install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) "
                "and grade on Linux (on macOS or Windows: on the course's JupyterHub, or a Linux machine or VM), "
                "or lower the floor on purpose with c.SandboxPolicy.require = 'rlimits-only' in nbgrader_config.py")


def platform_level() -> str:
    """The strongest level a grader on Linux gets without extra set-up: ``namespaces`` as root (bubblewrap and
    an unprivileged uid), ``user-namespace`` for anyone else (bubblewrap in a user namespace)."""
    return "namespaces" if os.geteuid() == 0 else "user-namespace"


def required_level(require: str) -> str:
    """The level that ``require`` (a level, or :data:`PLATFORM`) asks for on this machine."""
    return platform_level() if require == PLATFORM else require


def parse_level(level: str, name: str = "SandboxPolicy.require") -> tuple[int, bool]:
    """``(rank of the mode in MODES, cgroup)`` of a level such as ``"user-namespace+cgroup"`` (or
    :data:`PLATFORM`, the platform's level); a ``ValueError`` naming ``name`` for anything else."""
    mode, plus, extra = str(required_level(level)).partition("+")
    if mode not in MODES or (plus and extra != "cgroup"):
        raise ValueError(f"{name} must be {PLATFORM!r} or one of {', '.join(LEVELS)}, got {level!r}")
    return MODES.index(mode), bool(plus)


def level_meets(level: str, require: str) -> bool:
    """Whether containment ``level`` (as a record states it) is at least ``require`` (an unknown level,
    e.g. of a record older than levels, meets only the lowest)."""
    rank, cgroup = parse_level(require)
    try:
        have, has_cgroup = parse_level(level, "level")
    except ValueError:
        return rank == 0 and not cgroup
    return have >= rank and (has_cgroup or not cgroup)


def floor_banner(level: str, require: str) -> str:
    """One line for every output of a run graded at ``level`` below the platform's own, which only a floor
    lowered on purpose (``require``) allows; "" otherwise."""
    if level_meets(level, platform_level()):
        return ""
    return (f"WARNING: graded at {level} containment, below this platform's {platform_level()}, because "
            f"c.SandboxPolicy.require = {required_level(require)!r} lowers the floor: student code was not contained "
            "as the trusted grader requires by default (other submissions' temporary files and the instructor's "
            "files may have been readable)")


@dataclass(frozen=True)
class Containment:
    """Which containment this machine permits (detected once per process)."""

    mode: str
    namespaces: bool
    user_namespace: bool
    drop_uid: bool
    rss_watch: bool
    notes: tuple[str, ...] = field(default_factory=tuple)
    cgroup: bool = False
    #: ``(what, why)`` for each thing this machine does not give: ``namespaces``, ``uid`` (an
    #: unprivileged uid for the child), ``cgroup``.
    lacks: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    #: What makes the namespaces of a cold child (:data:`BWRAP_VIA`), "" without namespaces.
    via: str = ""

    @property
    def level(self) -> str:
        """The containment level (one of :data:`LEVELS`), as every record states it."""
        return self.mode + ("+cgroup" if self.cgroup else "")

    def shortfall(self, require: str) -> str:
        """"" when this containment is at least level ``require``, else one sentence saying what the
        machine lacks (the grader's refusal to grade)."""
        if level_meets(self.level, require):
            return ""
        rank, cgroup = parse_level(require)
        why = dict(self.lacks)
        needed = list(dict.fromkeys(_NEEDS.get(MODES[rank], ()) + (("cgroup",) if cgroup else ())))
        names = {"namespaces": "mount, network, PID, IPC and UTS namespaces",
                 "uid": "an unprivileged uid for the child", "cgroup": "a cgroup of the child's own"}
        missing = [f"{names[k]} ({why[k]})" for k in needed if k in why] or ["(not recorded what)"]
        asked = (f"the {require} that c.SandboxPolicy.require asks for" if require != PLATFORM else
                 f"the {required_level(require)} it requires by default on this platform")
        hint = f"; {INSTALL_HINT}" if "namespaces" in needed and "namespaces" in why else ""
        return (f"this machine gives the trusted grader {self.level} containment, below {asked}: it lacks "
                f"{' and '.join(missing)}{hint}")

    def describe(self) -> str:
        parts = [self.mode]
        if self.namespaces:
            parts.append("mount+net+pid+ipc+uts+cgroup namespaces, fresh tmpfs for every writable folder, "
                         + ("keyring calls refused (seccomp), " if keyring_filter() else "")
                         + "instructor paths hidden")
            if self.via:
                parts.append(f"cold children and the templates of warm ones {self.via}")
        if self.drop_uid:
            parts.append("unprivileged uid")
        parts.append("rlimits AS/FSIZE/NPROC/CORE")
        if self.cgroup:
            parts.append("cgroup: CPU seconds" + ("" if "memory controller" in dict(self.lacks) else ", memory cap")
                         + ("" if "cpu controller" in dict(self.lacks) else f", CPU quota of {CHILD_CPUS:g} CPU at a low weight"))
        if self.rss_watch:
            parts.append("RSS watch")
        parts.append("SIGKILL of the process group on deadline")
        return "; ".join(parts)


def check_level(require: str) -> None:
    """Refuse to grade (:class:`GraderFault`, one sentence) where this machine's containment is below
    level ``require`` (``c.SandboxPolicy.require``)."""
    missing = containment().shortfall(require)
    if missing:
        raise GraderFault(missing)


class Fault(BaseException):
    """Student code broke a limit. A ``BaseException``, so a test's ``except Exception`` cannot swallow it."""

    kind = "crash"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class TimeoutFault(Fault):
    kind = "timeout"


class MemoryFault(Fault):
    kind = "memory"


class CrashFault(Fault):
    kind = "crash"


class GraderFault(Exception):
    """The grader itself failed (the sandbox would not start, the lesson's packages would not import in
    it, the child stopped speaking the protocol before any student code ran). Never a student's score:
    the submission gets status ``grader-error`` with this message and no score is written."""

    kind = "grader-error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _probe(command: list[str], fds: tuple[int, ...] = ()) -> str:
    """"" when ``command`` succeeds (given the open files ``fds``), else why not (its last line of error output)."""
    try:
        result = subprocess.run(command, capture_output=True, timeout=20, pass_fds=fds)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if result.returncode == 0:
        return ""
    lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else f"exit status {result.returncode}"


#: How a cold child and a warm template are contained where there are namespaces (every record says it).
BWRAP_VIA = "under bubblewrap (bwrap: its namespaces and mounts, a read-only root, a minimal /dev, capabilities dropped)"

#: A cold child's namespaces (a warm child makes the same, ``_child.CHILD_NAMESPACES``): mount, network, PID, IPC,
#: UTS, cgroup, so nothing one child leaves (System V IPC, message queues, abstract unix sockets) reaches the next
#: and the host's cgroup paths stay unseen. ``root``: no user namespace (bubblewrap's would make the child the
#: host's uid 0, owner of root's files and free of RLIMIT_NPROC), and of the capabilities only CAP_SETUID and
#: CAP_SETGID, to drop to its leased uid; bubblewrap's own init is the namespace's PID 1 (no ``--as-pid-1``): it
#: keeps uid 0, so the parent-death SIGKILL that outer bubblewrap (uid 0 without CAP_KILL) sends when the grader
#: dies reaches it, and its end ends every process in the namespace, whereas the child, once it dropped its
#: uid, would miss that signal and outlive the grader. ``user``: ``--unshare-all`` adds one, and the child,
#: which keeps the caller's uid, is PID 1 itself (``--as-pid-1``).
#: ``template`` (root only; it never runs student code): CAP_SYS_ADMIN for its children's namespaces and fresh
#: folders, CAP_KILL (else a child's parent-death SIGKILL, sent as from root, misses it once it dropped its uid),
#: no PID namespace (the grader kills each child's process group by its host pid) and no cgroup namespace (each
#: child makes its own once it joined its cgroup).
BWRAP_NAMESPACES = {"root": ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                             "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"],
                    "user": ["--unshare-all", "--as-pid-1", "--cap-drop", "ALL"],
                    "template": ["--unshare-ipc", "--unshare-net", "--unshare-uts", "--cap-drop", "ALL",
                                 "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_KILL", "--cap-add", "CAP_SETUID",
                                 "--cap-add", "CAP_SETGID"]}
#: The rest of every bubblewrap line: it dies with the grader, has no terminal, and sees the host's files
#: read-only, a minimal ``/dev`` and its own ``/proc``.
BWRAP_BASE = ["--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def mount_plan(*, fresh: list[list], keep: list[str], expose: list[list], hide: list[str],
               cover: list[list] = ()) -> tuple[list[list], dict]:
    """``(the mounts of a child's mount namespace, in order; what they make)``: a fresh tmpfs of mode 1777 on
    each ``fresh`` folder (``[[path, size]]``: folders any user may write), an empty tmpfs of mode 0755 (root's:
    the child's uid writes nothing there) on each ``cover`` folder (same form: where others' files live), its
    own ``/dev/mqueue``, an empty tmpfs on each ``expose`` ancestor (``[[ancestor, [paths]]]``: folders the
    child's uid cannot traverse), the ``keep`` paths bound back read-only (source: the host's view), ``hide``
    covered (a folder by an empty tmpfs, a file by ``/dev/null``). Operations: ``["tmpfs", path, bytes,
    mode]``, ``["mqueue", path]``, ``["dir", path]`` (mode 0755, for the child's uid to traverse), ``["bind",
    path]``, ``["null", path]``. Bubblewrap makes them (:func:`bwrap_command`), a warm child its
    :func:`own_mounts` again; all or the child does not start. ``made`` is reported as the child's ``active``."""
    ops: list[list] = []
    made: dict = {"hidden": []}
    emptied = [*fresh, *cover]
    covered = [path for path, _ in emptied]
    modes = {path: mode for (path, _), mode in zip(emptied, [0o1777] * len(fresh) + [0o755] * len(cover))}
    for path, size in sorted(emptied, key=lambda folder: len(Path(folder[0]).parts)):  # /run before /run/lock
        ops.append(["tmpfs", path, size, modes[path]])
        made["hidden"].append(path)
    if os.path.isdir("/dev/mqueue"):  # the POSIX message queues of this child's own IPC namespace
        ops.append(["mqueue", "/dev/mqueue"])
        made["hidden"].append("/dev/mqueue")
    for ancestor, paths in expose:  # only what the child needs comes back
        if not any(_inside(ancestor, c) for c in covered):
            ops.append(["tmpfs", ancestor, 64 << 10, 0o755])
            covered.append(ancestor)
        made.setdefault("exposed", []).extend(paths)
    bound: list[str] = []
    for path in sorted(keep, key=lambda p: (len(Path(p).parts), p)):  # a folder before what lies inside it
        if not os.path.exists(path) or any(_inside(path, b) for b in bound):
            continue  # inside a folder already bound back: there already, and read-only (no "dir" may go there)
        bound.append(path)
        under = [c for c in covered if _inside(path, c) and c != path]
        parent, between = os.path.dirname(path), []
        while under and parent != under[0] and _inside(parent, under[0]):
            between.insert(0, parent)
            parent = os.path.dirname(parent)
        ops += [["dir", folder] for folder in between] + [["bind", path]]
        if not any(_inside(path, f) for f in covered) and path not in made.get("exposed", []) and os.path.isdir(path):
            made.setdefault("read_only", []).append(path)
    kept = [path for folder, _ in emptied for path in keep if _inside(path, folder) and os.path.exists(path)]
    if kept:
        made["kept"] = kept
    hidden_folders = [path for path in hide if os.path.isdir(path) and not os.path.islink(path)]
    for path in hide:
        inside = [c for c in covered if _inside(path, c)] + [h for h in hidden_folders if _inside(path, h) and h != path]
        if (inside and not any(_inside(path, k) for k in keep)) or not os.path.lexists(path):
            continue  # covered already (inside a fresh or hidden folder: the child has no such path to mount on)
        ops.append(["tmpfs", path, 64 << 10, 0o755] if os.path.isdir(path) else ["null", path])
        made["hidden"].append(path)
    return ops, made


#: Each operation of :func:`mount_plan` as bubblewrap's arguments.
_BWRAP_OPS = {"tmpfs": lambda path, size, mode: ["--perms", f"{mode:o}", "--size", str(size), "--tmpfs", path],
              "mqueue": lambda path: ["--mqueue", path], "dir": lambda path: ["--dir", path],
              "bind": lambda path: ["--ro-bind", path, path], "null": lambda path: ["--ro-bind", "/dev/null", path]}


def bwrap_command(runner: list[str], *, root: bool, plan: list[list], template: bool = False,
                  seccomp: int | None = None) -> list[str]:
    """The bubblewrap command line that runs ``runner`` in :data:`BWRAP_NAMESPACES` (a cold child, ``root`` or
    not, or the warm ``template``), on :data:`BWRAP_BASE`, with the mounts of ``plan`` (:func:`mount_plan`) and
    the seccomp program in open file ``seccomp`` (:func:`keyring_filter_file`)."""
    args = ["bwrap", *BWRAP_NAMESPACES["template" if template else "root" if root else "user"], *BWRAP_BASE]
    for kind, *rest in plan:
        args += _BWRAP_OPS[kind](*rest)
    if seccomp is not None:
        args += ["--seccomp", str(seccomp)]
    return args + ["--", *runner]


#: ``(AUDIT_ARCH_*, the numbers of add_key, request_key and keyctl)`` by machine.
_KEYRING_CALLS = {"x86_64": (0xC000003E, (248, 249, 250)), "aarch64": (0xC00000B7, (217, 218, 219))}


def keyring_filter(machine: str | None = None) -> bytes | None:
    """The seccomp program (classic BPF, ``struct sock_filter[]``) every child under bubblewrap runs under, None
    where there is none (not Linux, another machine). No namespace separates the kernel's keyrings: a key a
    child adds to its uid's keyring outlives it, and the next child of that uid reads it. So add_key,
    request_key and keyctl fail with EPERM (as in Docker's default profile), any call through the x32 ABI too,
    and a call of another architecture (i386's ``int 0x80``) kills the process. A warm template's children
    inherit it."""
    if not sys.platform.startswith("linux"):
        return None
    arch, calls = _KEYRING_CALLS.get(machine or os.uname().machine, (None, ()))
    if arch is None:
        return None

    def op(code: int, k: int, jump: int = 0) -> bytes:  # jump: instructions skipped when the test holds
        return struct.pack("=HBBI", code, jump, 0, k)

    load, equal, at_least, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    program = [op(load, 4), op(equal, arch, 1), op(ret, 0x80000000),  # seccomp_data.arch; else KILL_PROCESS
               op(load, 0), op(at_least, 0x40000000, len(calls) + 1),  # seccomp_data.nr; x32: refused
               *[op(equal, nr, len(calls) - i) for i, nr in enumerate(calls)],
               op(ret, 0x7FFF0000), op(ret, 0x00050000 | errno.EPERM)]  # ALLOW; ERRNO(EPERM)
    return b"".join(program)


@contextlib.contextmanager
def keyring_filter_file():
    """An open file (its descriptor) holding :func:`keyring_filter`'s program for one bubblewrap ``--seccomp``
    (which reads it to the end), or None where there is no program."""
    program = keyring_filter()
    if program is None:
        yield None
        return
    fd = os.memfd_create("keyring-filter")
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


def own_mounts(plan: list[list], fresh: list[list] | None = None) -> list[list]:
    """The part of ``plan`` a warm child makes again in its own mount namespace (``_child.make_mounts``): the
    tmpfs on each ``fresh`` folder (default :func:`fresh_folders`), whatever the plan puts inside one (a warm
    child is made only where that is nothing), and its IPC namespace's ``/dev/mqueue``."""
    fresh = fresh_folders() if fresh is None else fresh
    return [op for op in plan if op[0] == "mqueue" or any(_inside(op[1], folder) for folder, _ in fresh)]


@functools.lru_cache(maxsize=None)
def containment() -> Containment:
    """Detect the strongest containment this machine permits (see the module docstring)."""
    notes = []
    try:
        import psutil  # noqa: F401
    except ImportError as exc:  # the CPU and memory accounting need it: no silent, weaker sandbox
        raise GraderFault(f"the trusted grader needs psutil ({exc}); install the grader's packages: "
                          "pip install 'avgpool-course[grader]' (or make course, which installs the lock)") from None
    rss = True
    bwrap = shutil.which("bwrap") if sys.platform.startswith("linux") else None
    lacks = []
    cgroup_why, cgroup_notes = _cgroup_probe()
    lacks.extend(cgroup_notes)
    if cgroup_why:
        lacks.append(("cgroup", cgroup_why))
        notes.append("no cgroup: CPU seconds read with psutil over the child's process tree (orphans counted only "
                     "in a PID namespace, where they are reparented to the child), memory capped by RLIMIT_AS and the RSS watch only")
    cgroup = not cgroup_why
    root = os.geteuid() == 0
    failed = ("not Linux" if not sys.platform.startswith("linux")
              else "no bwrap command on PATH")
    if bwrap:
        with keyring_filter_file() as fd:
            fds = () if fd is None else (fd,)
            failed = _probe(bwrap_command(["true"], root=root, plan=[], seccomp=fd), fds)
        if keyring_filter() is None:
            notes.append(f"the kernel's keyrings are not filtered (no seccomp program for {os.uname().machine})")
        if not failed and root:
            return Containment("namespaces", True, False, True, rss, tuple(notes), cgroup, tuple(lacks), BWRAP_VIA)
        if not failed:
            lacks.append(("uid", "the grader does not run as root"))
            notes.append("not root: the child keeps the caller's uid")
            return Containment("user-namespace", True, True, False, rss, tuple(notes), cgroup, tuple(lacks),
                               BWRAP_VIA)
        failed = f"bwrap {'as root' if root else '--unshare-all'} failed: {failed}"
    lacks.append(("uid", "the grader does not run as root" if not root else "it needs the namespaces"))
    lacks.insert(0, ("namespaces", failed))
    notes.append("no namespaces: instructor files stay readable by student code; no network isolation")
    return Containment("rlimits-only", False, False, False, rss, tuple(notes), cgroup, tuple(lacks))


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


def machine_oom_kills() -> int | None:
    """How many processes the machine's out-of-memory killer has ended since boot (``/proc/vmstat``), None
    where the kernel does not say."""
    for line in _read_text("/proc/vmstat").splitlines():
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return None


def _running(pid: int) -> bool:
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


def _uid_processes(uid: int) -> list[int]:
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
        left = _uid_processes(uid)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)


@dataclass
class CellOutcome:
    """What one solution cell did in the child."""

    id: str
    ok: bool
    error: dict | None = None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    fault: str | None = None  # "timeout", "memory", "crash" when the cell broke a limit


class Sandbox:
    """One child process holding one student's objects."""

    def __init__(self, cells: list[dict], *, limits: Limits, hide: list[str] = (), uid: int | None = None,
                 block: list[str] = (), helpers: list[str] = (), imports: list[str] = ()):
        self.cells, self.limits = cells, limits
        self.hide, self.uid, self.block, self.helpers = list(hide), uid, list(block), list(helpers)
        self.imports = list(imports)  # what a warm template imports first (Lesson.preload_modules)
        self.mode = containment()
        self.plan, self.mounted = child_plan(self.mode, self.hide + package_paths(self.block))
        self.warm = limits.warm and forks_warm(self.mode, self.plan)
        self.proc: "subprocess.Popen | ForkedChild | None" = None
        self.channel: Channel | None = None
        self.log = None
        self.scratch: str | None = None
        self.active: dict = {}
        self.names: list[str] = []
        self.outcomes: list[CellOutcome] = []
        self.dead = False
        self.student_ran = False
        self.fault: Fault | None = None
        self._last_rss_check = 0.0
        self.cgroup: Cgroup | None = None
        self.cpu_limit: float | None = None  # kill when cpu_seconds() passes this (set per test / cell)
        self.cpu_budget = 0.0
        self.oom_kills: int | None = None  # the machine's out-of-memory kills when the child started

    # -- lifetime ---------------------------------------------------------------------------------
    def start(self) -> list[CellOutcome]:
        """Start the child and run the cells; a cell that breaks a limit is reported, the rest still run
        only if the child survived (the caller restarts without that cell).

        A child that dies before its first solution cell never ran student code: that is the machine's
        fault (e.g. a transient failure under memory pressure), so it is started again, up to three times."""
        for attempt in range(3):
            outcomes = self._start_once()
            if self.student_ran or not any(o.fault for o in outcomes) or attempt == 2:
                return outcomes
            self.kill()
            self.dead, self.fault = False, None
            time.sleep(0.2 * (attempt + 1))
        return outcomes

    def _start_once(self) -> list[CellOutcome]:
        self.active = {}
        self.student_ran = False  # becomes True when the first non-set-up cell starts
        self.log = tempfile.TemporaryFile(prefix="trusted-child-")
        self.cgroup = Cgroup.create(self.limits.memory_bytes, self.limits.nproc) if self.mode.cgroup else None
        self.cpu_limit = None
        self.oom_kills = machine_oom_kills()
        # The child joins its cgroup by writing to these (a warm child's template sees the host read-only).
        procs = [os.open(f"{path}/cgroup.procs", os.O_WRONLY) for path in self.cgroup.folders()] \
            if self.cgroup is not None else []
        parent_read, child_write = os.pipe()
        child_read, parent_write = os.pipe()

        def before_exec():  # killed when the grader dies: bwrap --die-with-parent then ends the namespace
            stopping.die_with_parent()
            for fd in procs:
                os.write(fd, b"0")

        if self.mode.namespaces:
            self.scratch, cwd = "/tmp/work", "/"
        else:
            self.scratch = cwd = tempfile.mkdtemp(prefix="trusted-scratch-")
        try:
            if self.warm:
                self.proc = spawn_warm(self.block, self.imports, self.limits.start_seconds,
                                       [child_read, child_write, self.log.fileno(), *procs],
                                       self.plan if self.mode.namespaces else None)
            else:
                runner = [sys.executable, "-I", "-c", RUNNER_SOURCE, str(child_read), str(child_write)]
                with keyring_filter_file() as seccomp:
                    self.proc = subprocess.Popen(
                        bwrap_command(runner, root=not self.mode.user_namespace, plan=self.plan, seccomp=seccomp)
                        if self.mode.namespaces else runner,
                        stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=clean_env(), cwd=cwd,
                        pass_fds=(child_read, child_write) + (() if seccomp is None else (seccomp,)),
                        start_new_session=True, preexec_fn=before_exec,
                    )
        finally:
            for fd in (child_read, child_write, *procs):
                os.close(fd)
        _LIVE.add(self)
        self.channel = Channel(parent_read, parent_write, limit=self.limits.reply_bytes)
        os.set_blocking(parent_write, False)
        config = {
            "scratch": self.scratch,
            "namespaces": self.mode.namespaces,
            "mounted": self.mounted,
            "uid": self.uid if self.mode.drop_uid else None,
            "memory_bytes": self.limits.memory_bytes,
            "file_bytes": self.limits.file_bytes,
            "nproc": self.limits.nproc if (self.mode.drop_uid or os.geteuid() != 0) else None,
            "output_chars": self.limits.output_chars,
            "reply_bytes": self.limits.reply_bytes,
            "env": clean_env(),
            "block": self.block,
            "helpers": self.helpers,
            "cells": self.cells,
        }
        deadline = time.monotonic() + self.limits.start_seconds
        self.outcomes = []
        current = last = None  # the cell running now, the last cell that started
        cell_started = time.monotonic()
        try:
            self._send(config, [], deadline)
            hello, _ = self._recv(deadline, ("hello",))
            self.active = hello["active"]
            self.active["warm"] = self.warm
            while True:
                expected = ("cell_done",) if current is not None else ("cell_start", "ready")
                message, _ = self._recv(deadline, expected, cells=len(self.cells), cell=current,
                                        first=0 if last is None else last + 1)
                op = message["op"]
                if op == "cell_start":
                    current = last = message["index"]
                    cell_started = time.monotonic()
                    self.student_ran = True
                    deadline = time.monotonic() + hang_seconds(self.limits.cell_seconds)
                    self.budget(self.limits.cell_seconds)
                elif op == "cell_done":
                    error = message.get("raise")
                    outcome = CellOutcome(self.cells[current].get("id", "?"), error is None, error,
                                          _text(message["stdout"]), _text(message["stderr"]), message["seconds"])
                    if error and error.get("memory"):
                        outcome.fault = "memory"
                    self.outcomes.append(outcome)
                    current = None
                    self.cpu_limit = None
                    deadline = time.monotonic() + self.limits.start_seconds
                else:  # ready
                    self.names = message["names"]
                    self.cpu_limit = None
                    break
        except Fault as fault:
            if current is None and last is not None:
                current = last  # between cells (a message out of turn, say): what the last cell started did it
            error = {"type": type(fault).__name__, "builtin": "Exception", "message": fault.message}
            if current is not None and current < len(self.cells):  # seconds: wall clock until it was stopped
                self.outcomes.append(CellOutcome(self.cells[current].get("id", "?"), False, error, fault=fault.kind,
                                                 seconds=time.monotonic() - cell_started))
            elif not self.outcomes or self.outcomes[-1].fault is None:
                self.outcomes.append(CellOutcome("<start>", False, error, fault=fault.kind))
        return self.outcomes

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None and not self.dead:
            try:
                self._send({"op": "exit"}, [], time.monotonic() + 1)
            except Fault:
                pass
        self.kill()

    def kill(self) -> None:
        """SIGKILL the child's process group (and with it its PID namespace), then wait for it and for every
        process of its tree (a PID namespace's members end just after its init)."""
        self.dead = True
        if self.proc is not None:
            tree = self._tree()
            _end(self.proc)
            import psutil

            psutil.wait_procs(tree, timeout=2)
        if self.uid is not None and self.mode.drop_uid:
            _sweep_uid(self.uid)
        if self.cgroup is not None:
            self.cgroup.remove()  # kills anything of the child's still in it first
            self.cgroup = None
        if self.channel is not None:
            for fd in (self.channel.read_fd, self.channel.write_fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.channel = None
        if self.log is not None:
            self.log.close()
            self.log = None
        if self.scratch and not self.mode.namespaces and os.path.isdir(self.scratch):
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
        _LIVE.discard(self)

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system, as the kernel accounts them) used so far by every process and
        thread of this child, those already ended included (threads count in their process, reaped
        processes in their parent's children times), read from outside: student code cannot change it.
        0.0 before start."""
        if self.proc is None:
            return 0.0
        if self.cgroup is not None:
            try:
                return self.cgroup.cpu_seconds()
            except (OSError, ValueError):
                pass
        import psutil

        total = 0.0
        for proc in self._tree():
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system + times.children_user + times.children_system
        return total

    def _tree(self) -> list:
        """The child's processes as psutil sees them (none once it is gone)."""
        import psutil

        try:
            root = psutil.Process(self.proc.pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def log_tail(self, size: int = 2000) -> str:
        return _tail(self.log, size)

    def budget(self, cpu_seconds: float) -> None:
        """From now on the child may use ``cpu_seconds`` more CPU seconds, then it is stopped."""
        self.cpu_budget = cpu_seconds
        self.cpu_limit = self.cpu_seconds() + cpu_seconds

    # -- talking ----------------------------------------------------------------------------------
    def _watch(self) -> None:
        """Called while waiting for the child: its CPU budget, then (every quarter second) its memory."""
        if self.cpu_limit is not None and self.cpu_seconds() > self.cpu_limit:
            if self.cgroup is not None and self.cgroup.deep_in_memory():  # the time went into memory
                raise MemoryFault(f"student code used more than the memory limit of "
                                  f"{self.limits.memory_bytes / 2**20:.0f} MiB and was stopped")
            raise TimeoutFault(f"student code used more than {self.cpu_budget:g} CPU seconds and was stopped ("
                               + ("counted by the kernel in the child's cgroup" if self.cgroup is not None else
                                  "summed over the child's process tree as the kernel accounts them") + ")")
        now = time.monotonic()
        if not self.mode.rss_watch or self.proc is None or now - self._last_rss_check < 0.25:
            return
        if self.cgroup is not None and self.cgroup.memory_capped():
            return  # the cgroup caps the memory, counting pages that forked processes share once (RSS counts
            # them in every process: a child of 60 forks would read as 60 interpreters)
        self._last_rss_check = now
        import psutil

        try:
            total = sum(p.memory_info().rss for p in self._tree())
        except psutil.Error:
            return
        if total > self.limits.memory_bytes:
            raise MemoryFault(f"student code used {total / 2**20:.0f} MiB of memory, over the limit of "
                              f"{self.limits.memory_bytes / 2**20:.0f} MiB")

    def _died(self) -> "Fault | GraderFault":
        """Why the child's process ended, and whose fault that is, with how the grader knows: a memory fault
        where its own cgroup's out-of-memory count rose; the machine's (:class:`GraderFault`) where the
        machine's out-of-memory killer ended it (``/proc/vmstat``'s count rose, its cgroup's did not); else
        what its exit status says the student's code did."""
        status = None
        if self.proc is not None:
            try:
                status = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
        log = self.log_tail(600)
        tail = log.strip().splitlines()[-3:]
        detail = (" (last output: " + " | ".join(tail) + ")") if tail else ""
        if self.cgroup is not None and self.cgroup.oom_killed():
            return MemoryFault(f"student code used more than the memory limit of {self.limits.memory_bytes / 2**20:.0f} "
                               f"MiB and was stopped (the out-of-memory count of the child's own cgroup rose){detail}")
        if status == -signal.SIGKILL or status == 128 + signal.SIGKILL:
            now = machine_oom_kills()
            if now is not None and self.oom_kills is not None and now > self.oom_kills:
                return GraderFault(f"the machine ran out of memory and its out-of-memory killer ended the student's "
                                   f"process (the machine's count rose from {self.oom_kills} to {now}"
                                   + (", the child's own cgroup stayed under its cap" if self.cgroup is not None else "")
                                   + "): not the student's fault; grade again with memory to spare (fewer --jobs, or "
                                   "a lower c.SandboxPolicy.memory_mb)")
            return CrashFault("the student's process was ended by SIGKILL, not by an out-of-memory killer (neither "
                              + ("its cgroup's count nor " if self.cgroup is not None else "")
                              + f"the machine's rose){detail}")
        if status is not None and status < 0:
            name = signal.Signals(-status).name if -status in signal.Signals._value2member_map_ else str(-status)
            return CrashFault(f"the student's process crashed with signal {name}{detail}")
        if status is not None and status > 128 and status - 128 in signal.Signals._value2member_map_:
            return CrashFault(f"the student's process crashed with signal {signal.Signals(status - 128).name}{detail}")
        if not self.student_ran:  # e.g. a warm child whose own mounts failed: the grader's, not the student's
            return CrashFault(f"the grading process ended before any student code ran (exit status {status}){detail}")
        return CrashFault(f"the student's code ended its process (exit status {status}){detail}")

    def _fail(self, fault: "Fault | GraderFault") -> Fault:
        """Kill the child for ``fault``; a :class:`GraderFault` (the machine's doing) is raised, never returned
        as the student's."""
        if isinstance(fault, GraderFault):
            self.kill()
            raise fault
        self.fault = fault
        self.kill()
        return fault

    def _send(self, message: dict, blobs: list[bytes], deadline: float) -> None:
        if self.dead or self.channel is None:
            raise self.fault or CrashFault("the student's process is gone")
        view = memoryview(_child.frame(message, blobs))
        fd = self.channel.write_fd
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(TimeoutFault("student code did not take its input before the time limit"))
            _, ready, _ = select.select([], [fd], [], min(remaining, 0.2))
            if not ready:
                continue
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise self._fail(self._died()) from None
            view = view[written:]

    def _recv(self, deadline: float, expected: tuple[str, ...], **bounds) -> tuple[dict, list[bytes]]:
        """The next message, one of the ``expected`` kinds, every field checked (:func:`untrusted.checked`
        with ``bounds``); anything malformed kills the child as a crash (the grader's error only where no
        student code ran yet: see ``student_ran``)."""
        if self.dead or self.channel is None:
            raise self.fault or CrashFault("the student's process is gone")
        try:
            message, blobs = self.channel.recv(deadline, tick=self._watch)
            return checked(message, expected, output_chars=self.limits.output_chars, **bounds), blobs
        except ChannelTimeout:
            raise self._fail(TimeoutFault("student code ran past the time limit and was stopped")) from None
        except ChannelClosed:
            raise self._fail(self._died()) from None
        except (MemoryFault, TimeoutFault) as fault:
            raise self._fail(fault) from None
        except (ProtocolError, ValueError, OSError) as exc:
            raise self._fail(CrashFault(f"the student's process sent the grader a malformed message ({exc}); "
                                        "student code must not write to the grader's pipes")) from None

    def request(self, message: dict, blobs: list[bytes], deadline: float) -> tuple[dict, list[bytes]]:
        """Send one request and wait for its reply until ``deadline`` (``time.monotonic()``)."""
        self._send(message, blobs, deadline)
        reply, out = self._recv(deadline, ("reply",))
        error = reply.get("raise")
        if isinstance(error, dict) and error.get("memory"):
            raise self._fail(MemoryFault("student code ran out of memory (MemoryError: "
                                         f"{error['message'][:200]})"))
        return reply, out


# -- the warm template ---------------------------------------------------------------------------------

def warm_available(mode: Containment) -> bool:
    """Warm children on Linux in ``namespaces`` and ``rlimits-only`` mode (a user namespace would have to
    be entered after the fork with its uid maps written from outside: those children stay cold)."""
    return sys.platform.startswith("linux") and mode.mode in ("namespaces", "rlimits-only")


def child_plan(mode: Containment, hide: list[str] = ()) -> tuple[list[list], dict | None]:
    """``(the mounts, what they hide)`` of a child in ``mode`` that must not see ``hide`` (none without namespaces)."""
    if not mode.namespaces:
        return [], None
    return mount_plan(fresh=fresh_folders(), cover=fresh_folders(COVERED_FOLDERS), keep=needed_paths(),
                      hide=list(hide), expose=exposed_paths() if mode.drop_uid else [])


def forks_warm(mode: Containment, plan: list[list]) -> bool:
    """Whether a child of ``plan`` is forked from a warm template: a warm child makes only fresh folders
    itself, so a needed path inside one (a checkout or venv under ``/tmp``) starts cold."""
    return warm_available(mode) and all(op[0] in ("tmpfs", "mqueue") for op in own_mounts(plan))


def warm_here() -> bool:
    """Whether this machine and checkout grade with warm children (what tests of warm children skip by)."""
    mode = containment()
    return forks_warm(mode, child_plan(mode)[0])


class ForkedChild:
    """A child forked by a :class:`Template`, with the part of ``subprocess.Popen`` the sandbox uses."""

    def __init__(self, template: "Template", pid: int):
        self.template, self.pid, self.returncode = template, pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.template.status(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout)
            time.sleep(0.005)
        return self.returncode


class Template:
    """A warm interpreter (``_child.py --template``) that has imported a lesson's set-up modules, with
    ``block`` blocked first, and forks a fresh child per submission (:func:`_child.template_main`).
    Start-up and imports are paid once per grading process and lesson instead of once per child."""

    def __init__(self, block: list[str], imports: list[str], start_seconds: float, plan: list[list] | None = None):
        self.lock = threading.Lock()
        # Under bubblewrap (``plan``: the cold child's mounts) its home is its own fresh /tmp, else a folder of ours.
        self.home = "/tmp" if plan is not None else tempfile.mkdtemp(prefix="trusted-template-")
        self.own_home = plan is None
        self.log = tempfile.TemporaryFile(prefix="trusted-template-")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {**clean_env(), "HOME": self.home, "TMPDIR": self.home,
               "MPLCONFIGDIR": os.path.join(self.home, ".matplotlib")}
        runner = [sys.executable, "-I", "-c", RUNNER_SOURCE, "--template", str(theirs.fileno())]
        try:
            with keyring_filter_file() as seccomp:  # inherited by every child it forks
                self.proc = subprocess.Popen(
                    bwrap_command(runner, root=True, plan=plan, template=True, seccomp=seccomp)
                    if plan is not None else runner,
                    stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=env,
                    pass_fds=(theirs.fileno(),) + (() if seccomp is None or plan is None else (seccomp,)),
                    cwd="/" if plan is not None else self.home, start_new_session=True,
                    preexec_fn=stopping.die_with_parent)
        except OSError as exc:
            raise GraderFault(f"the warm sandbox template would not start: {exc}") from None
        finally:
            theirs.close()
        self.sock = ours
        self.sock.settimeout(start_seconds)
        try:
            self.sock.send(json.dumps({"block": list(block), "imports": list(imports),
                                       "mounts": None if plan is None else own_mounts(plan)}).encode())
            ready = json.loads(self.sock.recv(1 << 16) or b"null")
        except (OSError, ValueError):
            ready = None
        if not isinstance(ready, dict):
            self.close()
            raise GraderFault("the warm sandbox template did not start: "
                              + (_tail(self.log, 600).strip() or "(no output)"))
        self.sock.settimeout(30)

    def alive(self) -> bool:
        return self.proc.poll() is None and self.sock is not None

    def _ask(self, request: dict, fds: list[int] = ()) -> dict:
        with self.lock:
            if not self.alive():
                raise OSError("the template has ended")
            socket.send_fds(self.sock, [json.dumps(request).encode()], list(fds))
            data = self.sock.recv(1 << 16)
        if not data:
            raise OSError("the template has ended")
        return json.loads(data)

    def spawn(self, fds: list[int]) -> ForkedChild:
        """Fork a child that serves the sandbox protocol on ``fds`` = [read, write, log, the ``cgroup.procs``
        files of its cgroup opened for writing...]; it has joined that cgroup (through the descriptors: the
        template's host is read-only) and leads its own process group when this returns."""
        reply = self._ask({"op": "fork"}, fds)
        if "pid" not in reply:
            raise GraderFault(f"the warm sandbox template could not fork a child: {reply.get('error')}")
        return ForkedChild(self, int(reply["pid"]))

    def status(self, pid: int) -> int | None:
        """The exit status of forked child ``pid`` (``Popen.returncode`` style), ``None`` while it runs."""
        try:
            return self._ask({"op": "wait", "pid": pid}).get("status")
        except (OSError, ValueError):  # the template is gone, and PR_SET_PDEATHSIG took its children
            return None if _running(pid) else -signal.SIGKILL

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        _end(self.proc)
        self.log.close()
        if self.own_home:
            shutil.rmtree(self.home, ignore_errors=True)


#: Warm templates of this process by (pid, blocked modules, imports, mount plan), least recently used first.
_TEMPLATES: dict[tuple, Template] = {}
_TEMPLATES_LOCK = threading.Lock()
MAX_TEMPLATES = 3


def spawn_warm(block: list[str], imports: list[str], start_seconds: float, fds: list[int],
               plan: list[list] | None) -> ForkedChild:
    """Fork a child from this process's template for ``(block, imports, plan)`` (``plan``: the mounts the
    template's bubblewrap makes, ``None`` without namespaces), starting (or restarting) the template when
    needed; at most :data:`MAX_TEMPLATES` templates stay warm per process."""
    key = (os.getpid(), tuple(block), tuple(imports), json.dumps(plan))
    for attempt in range(2):
        with _TEMPLATES_LOCK:
            for other in [k for k in _TEMPLATES if k[0] != key[0]]:  # a forked copy of a grading process
                _TEMPLATES.pop(other)
            template = _TEMPLATES.pop(key, None)
            if template is None or not template.alive():
                if template is not None:
                    template.close()
                template = Template(block, imports, start_seconds, plan)
            _TEMPLATES[key] = template
            while len(_TEMPLATES) > MAX_TEMPLATES:
                _TEMPLATES.pop(next(iter(_TEMPLATES))).close()
        try:
            return template.spawn(fds)
        except (OSError, ValueError) as exc:  # the template died under us: start it once more
            template.close()
            _TEMPLATES.pop(key, None)
            if attempt:
                raise GraderFault(f"the warm sandbox template stopped answering: {exc}") from None
    raise AssertionError("unreachable")


def close_templates() -> None:
    """Stop this process's warm templates (at exit, and in tests)."""
    for key in [k for k in _TEMPLATES if k[0] == os.getpid()]:
        _TEMPLATES.pop(key).close()


atexit.register(close_templates)


# -- stopping: what a grading process started ends with it ------------------------------------------------

#: Sandboxes of this process whose child may be running (added at start, removed by ``kill``).
_LIVE: "set[Sandbox]" = set()


def reap_all() -> None:
    """End every process this process's sandboxes started, now, taking no lock (a signal handler may have
    interrupted a sandbox that holds one): each child's process group (with it its PID namespace, whose
    init's end ends every process in it), the warm templates (their children die with them), every
    process of this process's sandbox uids (daemons that left the group), and the children's cgroups
    (anything left in them). :mod:`autograder.stopping` calls it when the grader is stopped."""
    pid = os.getpid()
    boxes = list(_LIVE)
    groups = [box.proc.pid for box in boxes if box.proc is not None]
    groups += [template.proc.pid for key, template in list(_TEMPLATES.items()) if key[0] == pid]
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if containment.cache_info().currsize and containment().drop_uid:  # never probe from a signal handler
        for uid, (owner, *_) in list(_LEASES.items()):
            if owner == pid:
                _sweep_uid(uid, 5.0)
    for box in boxes:
        cgroup, box.cgroup = box.cgroup, None
        if cgroup is not None:
            cgroup.remove()


stopping.on_stop(reap_all)


def _end(proc) -> None:
    """SIGKILL the process group that ``proc`` leads (and with it its PID namespace), then wait for ``proc``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _tail(log, size: int) -> str:
    """The last ``size`` bytes written to the file ``log`` ("" where there is none)."""
    try:
        log.seek(0, os.SEEK_END)
        log.seek(max(0, log.tell() - size))
        return log.read().decode("utf-8", "replace")
    except (AttributeError, OSError, ValueError):
        return ""


def _text(captured: dict) -> str:
    """A checked capture (``{"text", "dropped"}``): the text kept, and a line saying how much was dropped."""
    dropped = captured["dropped"]
    return captured["text"] + (f"\n... {dropped} more characters of output dropped ..." if dropped else "")


@functools.lru_cache(maxsize=None)
def _package_paths(modules: tuple[str, ...]) -> tuple[str, ...]:
    import importlib.metadata
    import importlib.util

    owners = importlib.metadata.packages_distributions()
    found: list[str] = []
    for module in modules:
        tops: set[Path] = set()
        for dist_name in owners.get(module, []):
            try:
                dist = importlib.metadata.distribution(dist_name)
            except importlib.metadata.PackageNotFoundError:
                continue
            base = Path(dist.locate_file("")).resolve()
            for file in dist.files or []:
                parts = Path(file).parts
                if parts and parts[0] != "..":  # scripts in bin/ stay: they cannot run without the package
                    tops.add(base / parts[0])
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:  # a package (its folders) or a single module (its file)
            locations = list(spec.submodule_search_locations or []) or ([spec.origin] if spec.origin else [])
            tops.update(Path(location).resolve() for location in locations if location != "built-in")
        found.extend(str(p) for p in sorted(tops) if p.exists())
    return tuple(dict.fromkeys(found))


def package_paths(modules) -> list[str]:
    """Every file and folder of the distributions that provide ``modules`` (e.g. ``torch``: ``torch/``,
    ``torchgen/``, ``functorch/``, its ``.dist-info``): what the child must not see for a lesson that
    forbids them, so that no spelling of an import can load them. Found without importing them."""
    return list(_package_paths(tuple(sorted(modules))))


def hidden_paths(*roots: Path) -> list[str]:
    """Paths under course roots that the child must not see (those that exist)."""
    keep = [Path(p) for p in needed_paths()]
    names = ["source", "autograder", "tests", "submitted", "autograded", "feedback", "records", ".git",
             "gradebook.db", "gradebook.db-journal", "nbgrader_config.py", "sample_class", "reports", "grades.csv",
             "benchmarks", ".ci"]
    found: list[str] = []
    for root in roots:
        root = Path(root).resolve()
        for name in names:
            path = root / name
            if not path.exists() or str(path) in found:
                continue
            if any(k == path or path in k.parents for k in keep):
                continue  # never hide the interpreter or the course helpers
            found.append(str(path))
    return found


#: Folders the child gets empty and writable (a fresh tmpfs of mode 1777, its own, gone with it; a warm child makes
#: them again, :func:`own_mounts`): every folder anyone may write (``/run/lock`` is ``/var/lock``; ``/run/user``
#: holds the users' runtime folders). Sizes in bytes.
FRESH_FOLDERS = (("/tmp", 64 << 20), ("/var/tmp", 16 << 20), ("/dev/shm", 16 << 20), ("/run/lock", 1 << 20),
                 ("/run/user", 1 << 20))
#: Folders the child gets empty and read-only to its uid (tmpfs of mode 0755, root's), with only
#: :func:`needed_paths` bound back inside them: where other checkouts, homes and instructors' files live, and
#: ``/run`` (``/var/run``), where the host's daemons listen on unix sockets, which a read-only bind does not
#: close and a network namespace does not separate (journald, D-Bus, a PostgreSQL gradebook's server).
COVERED_FOLDERS = tuple((path, 1 << 20) for path in ("/work", "/home", "/root", "/srv", "/mnt", "/media", "/opt",
                                                      "/run"))


def fresh_folders(folders=FRESH_FOLDERS) -> list[list]:
    """``folders`` (:data:`FRESH_FOLDERS`, or :data:`COVERED_FOLDERS`) that exist on this machine."""
    return [[path, size] for path, size in folders if os.path.isdir(path) and not os.path.islink(path)]


def needed_paths() -> list[str]:
    """What the child must read: the interpreter's prefixes, the virtual environment, ``course/``."""
    needed = [str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve())]
    try:
        import course

        needed.append(str(Path(course.__file__).resolve().parent))
    except (ImportError, TypeError):
        pass
    return list(dict.fromkeys(needed))


@functools.lru_cache(maxsize=None)
def exposed_paths() -> list[list]:
    """``[[ancestor, [paths]]]``: the first folder others cannot traverse above each of :func:`needed_paths`
    (e.g. ``/root``, mode 700, holding the interpreter), with the needed paths below it."""
    groups: dict[str, list[str]] = {}
    for path in map(Path, needed_paths()):
        for ancestor in list(reversed(path.parents))[1:]:
            try:
                if not os.stat(ancestor).st_mode & 0o001:
                    groups.setdefault(str(ancestor), []).append(str(path))
                    break
            except OSError:
                break
    return [[ancestor, paths] for ancestor, paths in groups.items()]


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
