"""Containment levels (:data:`LEVELS`): what this machine gives a child (:func:`containment`, detected once per
process), the floor a grader requires (:func:`check_level`) and the banner of a floor lowered on purpose."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

from autograder.grading.sandbox.bwrap import BWRAP_VIA, bwrap_command, keyring_filter, keyring_filter_file
from autograder.grading.sandbox.cgroup import CHILD_CPUS, cgroup_probe
from autograder.grading.sandbox.limits import GraderFault
from autograder.grading.sandbox.mounts import SUMMARY


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
            parts.append(f"mount+net+pid+ipc+uts+cgroup namespaces, {SUMMARY}, "
                         + ("keyring and inotify calls refused (seccomp), " if keyring_filter() else "")
                         + "instructor paths hidden")
            if self.via:
                parts.append(f"cold children and the templates of warm ones {self.via}")
        if self.drop_uid:
            parts.append("unprivileged uid")
        parts.append("rlimits AS/FSIZE/NPROC/NOFILE/MSGQUEUE/MEMLOCK/CORE")
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


@functools.lru_cache(maxsize=None)
def containment() -> Containment:
    """Detect the strongest containment this machine permits (see the package docstring)."""
    notes = []
    try:
        import psutil  # noqa: F401
    except ImportError as exc:  # the CPU and memory accounting need it: no silent, weaker sandbox
        raise GraderFault(f"the trusted grader needs psutil ({exc}); install the grader's packages: "
                          "pip install 'avgpool-course[grader]' (or make course, which installs the lock)") from None
    rss = True
    bwrap = shutil.which("bwrap") if sys.platform.startswith("linux") else None
    lacks = []
    cgroup_why, cgroup_notes = cgroup_probe()
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
