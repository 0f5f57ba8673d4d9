"""The bubblewrap command line of a cold child or a warm template (its namespaces, capabilities and mounts), and
the seccomp filter every child under bubblewrap runs under (packed by hand: libseccomp's Python bindings do not
install from this project's package registry)."""

from __future__ import annotations

import contextlib
import errno
import os
import struct
import sys

from autograder.grading.sandbox.mounts import base_mounts


#: How a cold child and a warm template are contained where there are namespaces (every record says it).
BWRAP_VIA = "under bubblewrap (bwrap: its namespaces and mounts, a read-only root, a minimal /dev, capabilities dropped)"

#: A cold child's namespaces (a warm child makes the same, ``_child.CHILD_NAMESPACES``): mount, network, PID, IPC, UTS,
#: cgroup, so nothing one child leaves (System V IPC, message queues, abstract unix sockets) reaches the next and
#: ``/proc/self/cgroup`` names no host cgroup (the host's cgroup tree is hidden by a mount, ``mounts.MOUNTS``: the
#: cgroup namespace does not change the host's ``/sys/fs/cgroup`` bound read-only). ``root``: no user namespace
#: (bubblewrap's would make the child the host's uid 0, owner of root's files and free of RLIMIT_NPROC), and of the
#: capabilities only CAP_SETUID and CAP_SETGID, to drop to its leased uid; bubblewrap's own init is the namespace's PID
#: 1 (no ``--as-pid-1``): it keeps uid 0, so the parent-death SIGKILL that outer bubblewrap (uid 0 without CAP_KILL)
#: sends when the grader dies reaches it, and its end ends every process in the namespace, whereas the child, once it
#: dropped its uid, would miss that signal and outlive the grader. ``user``: ``--unshare-all`` adds one, and the child,
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

#: Each operation of a plan (``mounts.mount_plan``, ``mounts.base_mounts``) as bubblewrap's arguments.
_BWRAP_OPS = {"tmpfs": lambda path, size, mode: ["--perms", f"{mode:o}", "--size", str(size), "--tmpfs", path],
              "mqueue": lambda path: ["--mqueue", path], "dir": lambda path: ["--dir", path],
              "bind": lambda path: ["--ro-bind", path, path], "null": lambda path: ["--ro-bind", "/dev/null", path],
              "dev": lambda path: ["--dev", path], "proc": lambda path: ["--proc", path]}


def _mount_args(plan: list[list]) -> list[str]:
    return [arg for kind, *rest in plan for arg in _BWRAP_OPS[kind](*rest)]


#: The rest of every bubblewrap line: it dies with the grader and has no terminal (its first mounts:
#: ``mounts.base_mounts``).
BWRAP_BASE = ["--die-with-parent", "--new-session"]


def bwrap_command(runner: list[str], *, root: bool, plan: list[list], template: bool = False,
                  seccomp: int | None = None) -> list[str]:
    """The bubblewrap command line that runs ``runner`` in :data:`BWRAP_NAMESPACES` (a cold child, ``root`` or
    not, or the warm ``template``), on :data:`BWRAP_BASE`, with the mounts of ``mounts.base_mounts`` (the host
    read-only, a minimal ``/dev``, its own ``/proc``) and of ``plan`` (``mounts.mount_plan``), under the seccomp
    program in open file ``seccomp`` (:func:`keyring_filter_file`)."""
    args = ["bwrap", *BWRAP_NAMESPACES["template" if template else "root" if root else "user"], *BWRAP_BASE]
    args += _mount_args(base_mounts() + plan)
    if seccomp is not None:
        args += ["--seccomp", str(seccomp)]
    return args + ["--", *runner]


#: ``(AUDIT_ARCH_*, the numbers of add_key, request_key, keyctl, then inotify_init and inotify_init1)`` by machine.
_KEYRING_CALLS = {"x86_64": (0xC000003E, (248, 249, 250, 253, 294)), "aarch64": (0xC00000B7, (217, 218, 219, 26))}


def keyring_filter(machine: str | None = None) -> bytes | None:
    """The seccomp program (classic BPF, ``struct sock_filter[]``) every child under bubblewrap runs under, None
    where there is none (not Linux, another machine). No namespace separates the kernel's keyrings: a key a
    child adds to its uid's keyring outlives it, and the next child of that uid reads it. So add_key,
    request_key and keyctl fail with EPERM (as in Docker's default profile); so do inotify_init and
    inotify_init1, whose instances the kernel counts per user (``fs.inotify.max_user_instances``, 128: children
    of one grading user in ``user-namespace`` mode would share them, and honest work watches no file); any
    call through the x32 ABI too, and a call of another architecture (i386's ``int 0x80``) kills the process.
    A warm template's children inherit it."""
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
