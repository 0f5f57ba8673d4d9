"""The :class:`Sandbox`: one child process holding one student's objects, started cold or forked warm, spoken
to under CPU budgets and deadlines, killed with everything it started (:func:`~.resources.reap_all` when the grader
stops). Each child belongs to one grading run's :class:`~.resources.Resources` (``Sandbox(resources=...)``)."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from autograder import stopping
from autograder.grading import _child
from autograder.grading._child import Channel, ChannelClosed, ChannelTimeout, ProtocolError
from autograder.grading.sandbox import levels, uids, warm
from autograder.grading.sandbox.bwrap import bwrap_command, keyring_filter_file
from autograder.grading.sandbox.cgroup import Cgroup, read_text
from autograder.grading.sandbox.limits import (CrashFault, Fault, GraderFault, Limits, MemoryFault, TimeoutFault,
                                               hang_seconds)
from autograder.grading.sandbox.mounts import child_plan, package_paths
from autograder.grading.sandbox.resources import Resources, process_default, reap_all
from autograder.grading.sandbox.runner import RUNNER_SOURCE, end_group, log_tail, captured_text, clean_env
from autograder.grading.untrusted import checked


def machine_oom_kills() -> int | None:
    """How many processes the machine's out-of-memory killer has ended since boot (``/proc/vmstat``), None
    where the kernel does not say. Any process can read it, so it decides nothing: a crash's message names it
    where the child has no cgroup of its own (``Sandbox._died``)."""
    for line in read_text("/proc/vmstat").splitlines():
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return None


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
                 block: list[str] = (), helpers: list[str] = (), imports: list[str] = (), wall: list[str] = (),
                 resources: Resources | None = None):
        self.cells, self.limits = cells, limits
        # the grading run's processes and leases this child joins (default: those of no run, process_default)
        self.resources = resources if resources is not None else process_default()
        self.hide, self.uid, self.block, self.helpers = list(hide), uid, list(block), list(helpers)
        self.wall = list(wall)  # PyTorch operators overridden before student code runs (Lesson.wall, _child.raise_wall)
        self.imports = list(imports)  # what a warm template imports first (Lesson.preload_modules)
        self.mode = levels.containment()
        self.plan, self.mounted = child_plan(self.mode.namespaces, self.mode.drop_uid, self.hide + package_paths(self.block))
        self.warm = limits.warm and warm.forks_warm(self.mode, self.plan)
        self.proc: "subprocess.Popen | warm.ForkedChild | None" = None
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
        self.oom_kills: int | None = None  # the machine's out-of-memory kills when the child started (a note only)
        #: when (time.monotonic) the last start reached each step: spawn, hello (contained), cells (set-up
        #: done), ready; and the CPU seconds by phase the child reported with ``ready`` (untrusted, shown only)
        self.marks: dict[str, float] = {}
        self.child_phases: dict[str, float] = {}

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
        self.marks, self.child_phases = {"spawn": time.monotonic()}, {}
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
                self.proc = warm.spawn_warm(self.resources, self.block, self.imports, self.limits.start_seconds,
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
        self.resources.live.add(self)
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
            "nofile": self.limits.nofile,
            "msgqueue_bytes": self.limits.msgqueue_bytes,
            "memlock_bytes": self.limits.memlock_bytes,
            "output_chars": self.limits.output_chars,
            "reply_bytes": self.limits.reply_bytes,
            "env": clean_env(),
            "block": self.block,
            "helpers": self.helpers,
            "wall": self.wall,
            "cells": self.cells,
        }
        deadline = time.monotonic() + self.limits.start_seconds
        self.outcomes = []
        current = last = None  # the cell running now, the last cell that started
        cell_started = time.monotonic()
        try:
            self._send(config, [], deadline)
            hello, _ = self._recv(deadline, ("hello",))
            self.marks["hello"] = time.monotonic()
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
                    self.marks.setdefault("cells", cell_started)
                    self.student_ran = True
                    deadline = time.monotonic() + hang_seconds(self.limits.cell_seconds)
                    self.budget(self.limits.cell_seconds)
                elif op == "cell_done":
                    error = message.get("raise")
                    outcome = CellOutcome(self.cells[current].get("id", "?"), error is None, error,
                                          captured_text(message["stdout"]), captured_text(message["stderr"]), message["seconds"])
                    if error and error.get("memory"):
                        outcome.fault = "memory"
                    self.outcomes.append(outcome)
                    current = None
                    self.cpu_limit = None
                    deadline = time.monotonic() + self.limits.start_seconds
                else:  # ready
                    self.names = message["names"]
                    self.marks["ready"] = time.monotonic()
                    self.child_phases = message.get("phases", {})
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
            end_group(self.proc)
            _wait_ended(tree, timeout=2)
        if self.uid is not None and self.mode.drop_uid:
            uids.sweep_uid(self.uid)
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
        self.resources.live.discard(self)

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

    def cpu_uncounted(self) -> str:
        """"" where :meth:`cpu_seconds` counts every process the child ever started: it has a cgroup, or a PID
        namespace of its own (whose first process becomes the parent of every orphan, so an orphan stays in the
        tree and its times reach it when reaped). Else why not (a rule that judges CPU seconds cannot be judged)."""
        if self.cgroup is not None or self.mode.namespaces:
            return ""
        return (f"this grader's {self.mode.level} containment has neither a cgroup nor a PID namespace for the "
                f"child, so a process the student's code starts and leaves would not be counted")

    def _tree(self) -> list:
        """The child's processes as psutil sees them (none once it is gone)."""
        import psutil

        try:
            root = psutil.Process(self.proc.pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def log_tail(self, size: int = 2000) -> str:
        return log_tail(self.log, size)

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
        """Why the child's process ended, and whose fault that is, with how the grader knows. Where the child has a
        cgroup, from that cgroup's own counters (:meth:`Cgroup.killed_by`), which nothing in it can write or read: a
        memory fault where its own out-of-memory killer ended it at its cap; the machine's (:class:`GraderFault`)
        where an out-of-memory kill was counted in it while it never reached its cap; else what its exit status
        says the student's code did. Without a cgroup no counter is the child's own (the machine's, in
        ``/proc/vmstat``, any process can watch and time its own SIGKILL to), so a SIGKILL the grader did not send
        is the student's crash; its message names the machine's count when that rose."""
        status = None
        if self.proc is not None:
            try:
                status = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
        log = self.log_tail(600)
        tail = log.strip().splitlines()[-3:]
        detail = (" (last output: " + " | ".join(tail) + ")") if tail else ""
        killer = self.cgroup.killed_by() if self.cgroup is not None else None
        if killer == "cap":
            return MemoryFault(f"student code used more than the memory limit of {self.limits.memory_bytes / 2**20:.0f} "
                               f"MiB and was stopped (the out-of-memory count of the child's own cgroup rose){detail}")
        if killer == "machine":
            return GraderFault("the machine ran out of memory and its out-of-memory killer ended the student's process "
                               "(the child's own cgroup counted the kill and never reached its cap): not the student's "
                               "fault; grade again with memory to spare (fewer --jobs, or a lower "
                               "c.SandboxPolicy.memory_mb)")
        if status == -signal.SIGKILL or status == 128 + signal.SIGKILL:
            if self.cgroup is not None:
                return CrashFault("the student's process was ended by SIGKILL, not by an out-of-memory killer (its "
                                  f"own cgroup counted none){detail}")
            now = machine_oom_kills()
            rose = (f"; the machine's out-of-memory count rose from {self.oom_kills} to {now} meanwhile: if the "
                    "machine ran out of memory, grade again with memory to spare"
                    if now is not None and self.oom_kills is not None and now > self.oom_kills else "")
            return CrashFault("the student's process was ended by SIGKILL, which its own code may send: with no cgroup "
                              f"of its own, no counter tells an out-of-memory kill apart{rose}{detail}")
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


def _wait_ended(tree: list, timeout: float) -> None:
    """Wait (at most ``timeout`` seconds) until every process of ``tree`` (psutil) has ended: gone, or a zombie,
    which runs nothing and holds no memory (a PID namespace's first process is one only once every other
    process of it is reaped). An orphan's parent may be the host's init, which reaps when it likes (1 to 2 s on
    these machines, a cold child's inner bubblewrap: issue 56), so waiting until it is reaped is not waited for."""
    import psutil

    end = time.monotonic() + timeout
    left = list(tree)
    while left:
        still = []
        for proc in left:
            try:
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    still.append(proc)
            except psutil.Error:
                pass
        left = still
        if not left or time.monotonic() > end:
            return
        time.sleep(0.005)


stopping.on_stop(reap_all)
