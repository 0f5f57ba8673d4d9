"""The sandboxed child process seen from the parent: start it, talk to it under deadlines, kill it.

One job per module: :mod:`.limits` (what a child may use, and faults), :mod:`.levels` (containment levels,
detected at run time and recorded, the floor), :mod:`.cgroup`, :mod:`.mounts` (:data:`~.mounts.MOUNTS`, the one
list of a child's mounts), :mod:`.bwrap` (bubblewrap's command line, the seccomp filter), :mod:`.uids` (uid
leases), :mod:`.runner` (what a child runs), :mod:`.process` (the :class:`Sandbox`), :mod:`.warm` (templates),
:mod:`.resources` (what one grading run holds: its templates, uid leases and live children; closed with the run).
Why each part is there: ``THREAT_MODEL.md``.

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
``RLIMIT_NPROC``/``RLIMIT_NOFILE``/``RLIMIT_MSGQUEUE``/``RLIMIT_MEMLOCK``/``RLIMIT_CORE``, a memory cap in the
cgroup (else a parent-side RSS watch), capped captured output, capped replies.

A test that replaces a function patches the module that reads it (``sandbox.levels.containment``,
``sandbox.mounts.needed_paths``, ``sandbox.mounts.own_mounts``, ``sandbox.process.machine_oom_kills``,
``sandbox.cgroup._this_process_places``), never this package's
re-export. What other packages may use is the list below (``__all__``); the rest is each module's own.
"""

from autograder.grading.sandbox.limits import (HANG_FACTOR, HANG_SECONDS, CrashFault, Fault, GraderFault, Limits,
                                               MemoryFault, TimeoutFault, hang_seconds)
from autograder.grading.sandbox.uids import SANDBOX_UID_BASE, lease_folder, process_running, uid_processes
from autograder.grading.sandbox.cgroup import (CHILD_CPUS, CHILD_SHARES, CHILD_WEIGHT, CPU_PERIOD_US, Cgroup,
                                               cgroup_places, cgroups_available)
from autograder.grading.sandbox.mounts import (MOUNTS, base_mounts, child_plan, exposed_paths,
                                               fresh_folders, hidden_paths, mount_plan, needed_paths, own_mounts,
                                               package_paths)
from autograder.grading.sandbox.bwrap import (BWRAP_BASE, BWRAP_NAMESPACES, BWRAP_VIA, bwrap_command, keyring_filter,
                                              keyring_filter_file)
from autograder.grading.sandbox.levels import (INSTALL_HINT, LEVELS, MODES, PLATFORM, Containment, check_level,
                                               containment, floor_banner, level_meets, parse_level, platform_level,
                                               required_level)
from autograder.grading.sandbox.runner import RUNNER_SOURCE, clean_env
from autograder.grading.sandbox.resources import (MAX_TEMPLATES, Resources, close_all, process_default, reap_all,
                                                   sandbox_uid)
from autograder.grading.sandbox.warm import (ForkedChild, Template, close_templates, forks_warm, spawn_warm,
                                             warm_available, warm_here)
from autograder.grading.sandbox.process import CellOutcome, Sandbox, machine_oom_kills

__all__ = [
    "HANG_FACTOR", "HANG_SECONDS", "CrashFault", "Fault", "GraderFault", "Limits", "MemoryFault", "TimeoutFault",
    "hang_seconds",
    "SANDBOX_UID_BASE", "lease_folder", "process_running", "sandbox_uid", "uid_processes",
    "CHILD_CPUS", "CHILD_SHARES", "CHILD_WEIGHT", "CPU_PERIOD_US", "Cgroup", "cgroup_places", "cgroups_available",
    "MOUNTS", "base_mounts", "child_plan", "exposed_paths", "fresh_folders", "hidden_paths", "mount_plan",
    "needed_paths", "own_mounts", "package_paths",
    "BWRAP_BASE", "BWRAP_NAMESPACES", "BWRAP_VIA", "bwrap_command", "keyring_filter", "keyring_filter_file",
    "INSTALL_HINT", "LEVELS", "MODES", "PLATFORM", "Containment", "check_level", "containment", "floor_banner",
    "level_meets", "parse_level", "platform_level", "required_level",
    "RUNNER_SOURCE", "clean_env",
    "MAX_TEMPLATES", "ForkedChild", "Template", "close_templates", "forks_warm", "spawn_warm", "warm_available",
    "warm_here",
    "CellOutcome", "Sandbox", "machine_oom_kills", "reap_all", "Resources", "close_all", "process_default",
]
