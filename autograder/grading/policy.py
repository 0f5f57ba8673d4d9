"""The one sandbox policy: the limits of a grading child, read from ``nbgrader_config.py``.

Both ``avgpool-course grade`` (:mod:`autograder.grading.batch`) and ``nbgrader autograde``
(:class:`autograder.grading.nbgrader_plugin.TrustedExecute`) build their :class:`Limits` here, so a
value set as ``c.SandboxPolicy.<trait> = ...`` in ``nbgrader_config.py`` applies to both.

    policy = load_policy(root)        # SandboxPolicy configured from root/nbgrader_config.py
    limits = policy.limits()          # frozen Limits for Session / Sandbox / records.cache_key
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
        parse_level(self.require)
        return Limits(test_seconds=float(self.test_seconds), cell_seconds=float(self.cell_seconds),
                      start_seconds=float(self.start_seconds), memory_bytes=self.memory_mb << 20,
                      file_bytes=self.file_mb << 20, nproc=self.nproc, output_chars=self.output_chars,
                      reply_bytes=self.reply_mb << 20, warm=bool(self.warm),
                      require=str(self.require))


def load_policy(root: Path, config: Config | None = None) -> SandboxPolicy:
    """The sandbox policy of course ``root``: from ``config`` when given (nbgrader's own loaded
    configuration), else from ``root/nbgrader_config.py``."""
    return SandboxPolicy(config=course_config(root) if config is None else config)
