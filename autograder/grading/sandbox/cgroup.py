"""A cgroup of the child's own (v1 or v2): the kernel counts its CPU seconds and caps its memory, tasks and CPU."""

from __future__ import annotations

import functools
import itertools
import os
import signal
import sys
import time

from autograder.grading.sandbox.uids import process_running


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


def read_text(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _this_process_places() -> tuple[dict[str, str], str | None]:
    """:func:`cgroup_places` of this process."""
    return cgroup_places(read_text("/proc/self/cgroup"), read_text("/proc/self/mountinfo"))


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
                    if pid.isdigit() and not process_running(int(pid)) and time.time() - os.stat(path).st_mtime > age_seconds:
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
                wanted = set(read_text(f"{v2}/cgroup.controllers").split()) & {"memory", "pids", "cpu"}
                for controller in wanted - set(read_text(f"{v2}/cgroup.subtree_control").split()):
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
            stat = dict(line.split() for line in read_text(f"{self.paths['unified']}/cpu.stat").splitlines()
                        if len(line.split()) == 2)
            return int(stat["usage_usec"]) / 1e6
        with open(f"{self.paths['cpuacct']}/cpuacct.usage") as handle:
            return int(handle.read()) / 1e9

    def _memory(self, v1: str, v2: str) -> str:
        return read_text(f"{self.paths['unified']}/{v2}" if self.v2 else f"{self.paths['memory']}/{v1}")

    def memory_events(self) -> tuple[int | None, bool]:
        """``(out-of-memory kills, whether it reached its cap)`` as the kernel counts them for this cgroup alone,
        which its processes can neither write nor, with ``/sys/fs/cgroup`` covered, read: the processes in it that
        an out-of-memory killer ended, its own or the machine's (v2 ``memory.events`` ``oom_kill``, v1
        ``memory.oom_control`` ``oom_kill``; None where the kernel does not count them), and whether its memory
        ever reached its cap (v2 ``memory.events`` ``max`` or ``oom``; v1 ``memory.failcnt``, or its peak
        ``memory.max_usage_in_bytes`` at ``memory.limit_in_bytes``: kernel 6.18 left failcnt at 0 at the cap)."""
        try:
            if self.v2:
                events = {k: int(v) for k, v in (line.split() for line in self._memory("", "memory.events").splitlines())}
                return events.get("oom_kill"), events.get("max", 0) + events.get("oom", 0) > 0
            control = dict(line.split() for line in self._memory("memory.oom_control", "").splitlines())
            kills = None if control.get("oom_kill") is None else int(control["oom_kill"])
            failed, peak, cap = (int(self._memory(name, "").strip() or 0) for name in
                                 ("memory.failcnt", "memory.max_usage_in_bytes", "memory.limit_in_bytes"))
            return kills, failed > 0 or 0 < cap <= peak
        except ValueError:
            return None, False

    def killed_by(self) -> str | None:
        """Whose out-of-memory killer ended a process of this cgroup, from :meth:`memory_events`: ``"cap"`` (its
        own: it reached its cap, and a kill was counted, or the kernel counts none), ``"machine"`` (a kill was
        counted while it never reached its cap: only the machine's killer, for the host's memory, does that),
        or None (no kill counted)."""
        kills, at_cap = self.memory_events()
        if at_cap and kills != 0:
            return "cap"
        return "machine" if kills else None

    def deep_in_memory(self) -> bool:
        """Peak usage past half the cap (the out-of-memory killer acted, or the CPU went into reclaim)."""
        try:
            peak = self._memory("memory.max_usage_in_bytes", "memory.peak") or self._memory("", "memory.current")
            cap = self._memory("memory.limit_in_bytes", "memory.max").strip()
            return self.killed_by() == "cap" or (cap.isdigit() and int(peak) >= 0.5 * int(cap))
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
def cgroup_probe() -> tuple[str, tuple[tuple[str, str], ...]]:
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
    return not cgroup_probe()[0]
