"""The one sandbox policy: the limits of a grading child, read from ``nbgrader_config.py``.

Both ``avgpool-course grade`` (:mod:`autograder.grading.batch`) and ``nbgrader autograde``
(:class:`autograder.grading.nbgrader_plugin.TrustedExecute`) build their :class:`Limits` here, so a
value set as ``c.SandboxPolicy.<trait> = ...`` in ``nbgrader_config.py`` applies to both. A value that
would not hold is refused with its name and the rule (:meth:`SandboxPolicy.limits`): a budget or size that is
not positive, a containment level that is not one, or a child's rlimit (``nofile``, ``msgqueue_kb``,
``memlock_kb``) below its lowest or above the grading process's own hard limit.

    policy = load_policy(root)        # SandboxPolicy configured from root/nbgrader_config.py
    limits = policy.limits()          # frozen Limits for Session / Sandbox / submission.verdict_key
"""

from __future__ import annotations

from pathlib import Path

from traitlets import Bool, Float, Integer, Unicode
from traitlets.config import Config, Configurable

from autograder.coursedir import course_config
from autograder.grading.sandbox import LEVELS, PLATFORM, Limits, parse_level
from autograder.outputs import OUTPUT_CHARS


class SandboxPolicy(Configurable):
    """Limits of one submission's sandboxed child (``c.SandboxPolicy.*`` in ``nbgrader_config.py``)."""

    test_seconds = Float(60.0, help="Seconds for the student code one test cell runs, all its requests together"
                         ).tag(config=True)
    cell_seconds = Float(60.0, help="Seconds for each solution cell").tag(config=True)
    start_seconds = Float(120.0, help="Seconds for interpreter start and the lesson's set-up imports, "
                          "before any student code runs").tag(config=True)
    memory_mb = Integer(4096, help="Memory of the child (address space and watched RSS), MiB").tag(config=True)
    file_mb = Integer(16, help="Largest file the child may write, MiB").tag(config=True)
    nproc = Integer(64, help="Processes and threads of the child (RLIMIT_NPROC of its uid, and its cgroup's pids.max "
                    "where there is one); every lesson's reference solution needs at most 3").tag(config=True)
    nofile = Integer(256, help="Descriptors of each process of the child (RLIMIT_NOFILE; the machine's file table "
                     "is shared, and pipes, sockets and epoll watches are descriptors too); every lesson's reference "
                     "holds at most 5 and gets full marks at 16. From 16 to the grading process's own hard limit"
                     ).tag(config=True)
    msgqueue_kb = Integer(128, help="POSIX message queues of the child, KiB (RLIMIT_MSGQUEUE, counted per uid): one "
                          "queue of the default size; honest work needs none. From 0 to the grading process's own "
                          "hard limit").tag(config=True)
    memlock_kb = Integer(64, help="Locked memory of each process of the child, KiB (RLIMIT_MEMLOCK: mlock, io_uring "
                         "buffers, memory no reclaim takes back); honest work locks none. From 0 to the grading "
                         "process's own hard limit").tag(config=True)
    output_chars = Integer(OUTPUT_CHARS, help="Stored stdout/stderr per cell, characters").tag(config=True)
    reply_mb = Integer(256, help="Largest reply the parent reads from the child, MiB").tag(config=True)
    warm = Bool(True, help="Fork each child from a warm template that imported the lesson's set-up modules "
                "once (Linux; every limit and namespace is applied after the fork). False: a fresh interpreter "
                "per child").tag(config=True)
    require = Unicode(PLATFORM, help=f"The lowest containment level to grade at: {PLATFORM!r} (the default: the "
                      "strongest the platform offers, namespaces as root and user-namespace for anyone else, both "
                      f"through bubblewrap) or one of, weakest first, {', '.join(LEVELS)}. Below it the grader "
                      "refuses to grade (a grader error, no score) with one sentence saying what the machine lacks "
                      "and what to install; a floor lowered on purpose below the platform's is printed in the "
                      "summary, and every record and the report state the level each submission had"
                      ).tag(config=True)

    def limits(self) -> Limits:
        """The frozen :class:`Limits` this policy gives."""
        for name in ("test_seconds", "cell_seconds", "start_seconds", "memory_mb", "file_mb", "nproc",
                     "output_chars", "reply_mb"):
            if getattr(self, name) <= 0:
                raise ValueError(f"SandboxPolicy.{name} must be positive, got {getattr(self, name)!r}")
        for name, resource_name, lowest, unit in _RLIMITS:
            check_rlimit(name, resource_name, getattr(self, name), lowest, unit)
        parse_level(self.require)
        return Limits(test_seconds=float(self.test_seconds), cell_seconds=float(self.cell_seconds),
                      start_seconds=float(self.start_seconds), memory_bytes=self.memory_mb << 20,
                      file_bytes=self.file_mb << 20, nproc=self.nproc, output_chars=self.output_chars,
                      nofile=self.nofile, msgqueue_bytes=self.msgqueue_kb << 10, memlock_bytes=self.memlock_kb << 10,
                      reply_bytes=self.reply_mb << 20, warm=bool(self.warm),
                      require=str(self.require))


#: The settings that are a child's rlimit: (trait, resource's name, lowest value, bytes per unit).
_RLIMITS = (("nofile", "RLIMIT_NOFILE", 16, 1), ("msgqueue_kb", "RLIMIT_MSGQUEUE", 0, 1 << 10),
            ("memlock_kb", "RLIMIT_MEMLOCK", 0, 1 << 10))


def check_rlimit(name: str, resource_name: str, value: int, lowest: int, unit: int) -> None:
    """Refuse ``SandboxPolicy.<name>`` (``value`` units of ``unit`` bytes) below ``lowest`` or above the
    grading process's own hard limit of ``resource_name``: a child made without privileges cannot be given
    more than its grader has (the kernel keeps the grader's limit then), so more would not apply."""
    import resource

    top = None
    if hasattr(resource, resource_name):
        hard = resource.getrlimit(getattr(resource, resource_name))[1]
        top = None if hard == resource.RLIM_INFINITY else hard // unit
    if value < lowest or (top is not None and value > top):
        rule = (f"from {lowest} to {top}, this grading process's own hard {resource_name} (a child made without "
                "privileges cannot get more)") if top is not None else f"at least {lowest}"
        raise ValueError(f"SandboxPolicy.{name} must be {rule}, got {value!r}")


def load_policy(root: Path, config: Config | None = None) -> SandboxPolicy:
    """The sandbox policy of course ``root``: from ``config`` when given (nbgrader's own loaded
    configuration), else from ``root/nbgrader_config.py``."""
    return SandboxPolicy(config=course_config(root) if config is None else config)
