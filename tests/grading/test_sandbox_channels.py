"""Nothing one child leaves is visible to the next (issue 28): for every channel the kernel or a shared
folder offers (System V shared memory and message queues, POSIX message queues, a POSIX shared-memory
file in ``/dev/shm``, files in ``/tmp``, ``/var/tmp`` and ``/run/lock``, an abstract unix socket, a key in
the kernel's keyrings of the child's uid, which no namespace separates), child A leaves something and
stays alive while child B, graded after it (cold and warm), looks for it; nothing A left outlives A on
the host. The same two snippets run as two plain processes on the host first, which shows each probe
does see its channel where it is open."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autograder.grading import _child, sandbox
from autograder.grading.sandbox import Limits, Sandbox, containment, hidden_paths, sandbox_uid
import shared
from shared import REPO

FAST = dataclasses.replace(shared.FAST, test_seconds=10, cell_seconds=10)
COLD = Limits(**{**FAST.as_dict(), "warm": False})

pytestmark = pytest.mark.skipif(not containment().namespaces, reason="needs Linux namespaces")

#: Shared by both snippets: the names of what A leaves, from ``TOKEN`` (set before this source runs).
COMMON = r"""
import ctypes, os, socket
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
KEY = int(TOKEN[:7], 16) | 0x10000000
IPC_CREAT, O_CREAT, O_RDWR = 0o1000, 0o100, 0o2
NAME = "avgpool-left-" + TOKEN
FILES = {folder: os.path.join(folder, NAME) for folder in ("/tmp", "/var/tmp", "/run/lock", "/dev/shm")}
MQ = ("/" + NAME).encode()
ABSTRACT = "\0" + NAME
libc.syscall.restype = ctypes.c_long
# add_key, keyctl (x86_64 or aarch64); 0x40000000 + nr: the same call through the x32 ABI
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
RINGS = (-4, -5)  # KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING: the uid's, outliving its processes
"""

#: Child A (or a plain host process): leave one thing in every channel, keep the socket listening.
LEAVE = COMMON + r"""
left = {}
shmid = libc.shmget(KEY, 4096, IPC_CREAT | 0o666)
if shmid >= 0:
    address = libc.shmat(shmid, None, 0)
    ctypes.memmove(address, b"answers of the student before", 29)
    libc.shmdt(ctypes.c_void_p(address))
left["sysv_shm"] = shmid >= 0
left["sysv_msg"] = libc.msgget(KEY, IPC_CREAT | 0o666) >= 0
left["sysv_sem"] = libc.semget(KEY, 1, IPC_CREAT | 0o666) >= 0
mq = libc.mq_open(MQ, O_CREAT | O_RDWR, 0o666, None)
left["posix_mq"] = mq >= 0
for folder, path in FILES.items():
    try:
        with open(path, "w") as handle:
            handle.write("answers of the student before")
        left[folder] = True
    except OSError as exc:
        left[folder] = str(exc)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(ABSTRACT)
listener.listen(1)
left["abstract_socket"] = True
keys, errors = 0, set()
for ring in RINGS:
    for nr in (ADD_KEY, ADD_KEY | 0x40000000):
        if libc.syscall(nr, b"user", NAME.encode(), b"answers", 7, ring) > 0:
            keys += 1
        else:
            errors.add(os.strerror(ctypes.get_errno()))
left["keyring"] = True if keys else "refused: " + ", ".join(sorted(errors))
"""

#: Child B (or a second host process): what of A's does it see?
PROBE = COMMON + r"""
seen = {}
shmid = libc.shmget(KEY, 0, 0)
text = b""
if shmid >= 0:
    address = libc.shmat(shmid, None, 0o10000)  # SHM_RDONLY
    text = ctypes.string_at(address, 29) if address not in (None, ctypes.c_void_p(-1).value) else b""
seen["sysv_shm"] = shmid >= 0
seen["sysv_msg"] = libc.msgget(KEY, 0) >= 0
seen["sysv_sem"] = libc.semget(KEY, 0, 0) >= 0
mq = libc.mq_open(MQ, O_RDWR, 0, None)
seen["posix_mq"] = mq >= 0
for folder, path in FILES.items():
    seen[folder] = os.path.exists(path)
probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    probe.connect(ABSTRACT)
    seen["abstract_socket"] = True
except OSError:
    seen["abstract_socket"] = False
probe.close()
seen["keyring"] = any(libc.syscall(KEYCTL, 10, ring, b"user", NAME.encode(), 0) > 0 for ring in RINGS)  # SEARCH
"""

CHANNELS = ["sysv_shm", "sysv_msg", "sysv_sem", "posix_mq", "/tmp", "/var/tmp", "/run/lock", "/dev/shm",
            "abstract_socket", "keyring"]
KEYCTL = {"x86_64": 250, "aarch64": 219}[os.uname().machine]


def keyctl(*args) -> int:
    """The keyctl(2) system call, or -1."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(KEYCTL, *args)


def key_count(uid: int | None) -> int:
    """How many keys the kernel holds for ``uid`` (``/proc/key-users``), 0 for None."""
    with open("/proc/key-users") as handle:
        counts = {int(line.split(":")[0]): int(line.split()[2].split("/")[0]) for line in handle}
    return counts.get(uid, 0) if uid is not None else 0


def host_state(token: str) -> dict:
    """What of ``token``'s channels the host (this process's namespaces) holds now."""
    name = "avgpool-left-" + token
    key = int(token[:7], 16) | 0x10000000

    def keys(table: str) -> set[int]:
        with open(f"/proc/sysvipc/{table}") as handle:
            return {int(line.split()[0]) for line in handle.readlines()[1:]}

    import ctypes

    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int]
    queue = libc.mq_open(f"/{name}".encode(), 0)  # O_RDONLY
    if queue >= 0:
        os.close(queue)
    with open("/proc/net/unix") as handle:
        sockets = handle.read()
    return {
        "posix_mq": queue >= 0,
        "sysv_shm": key in keys("shm"),
        "sysv_msg": key in keys("msg"),
        "sysv_sem": key in keys("sem"),
        "/tmp": os.path.exists(f"/tmp/{name}"), "/var/tmp": os.path.exists(f"/var/tmp/{name}"),
        "/run/lock": os.path.exists(f"/run/lock/{name}"), "/dev/shm": os.path.exists(f"/dev/shm/{name}"),
        "abstract_socket": f"@{name}" in sockets,
        "keyring": any(keyctl(10, ring, b"user", name.encode(), 0) > 0 for ring in (-4, -5)),  # this uid's
    }


def host_cleanup(token: str) -> None:
    import ctypes

    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    key = int(token[:7], 16) | 0x10000000
    name = "avgpool-left-" + token
    ident = libc.shmget(key, 0, 0)
    if ident >= 0:
        libc.shmctl(ident, 0, None)  # IPC_RMID
    ident = libc.msgget(key, 0)
    if ident >= 0:
        libc.msgctl(ident, 0, None)
    ident = libc.semget(key, 0, 0)
    if ident >= 0:
        libc.semctl(ident, 0, 0)
    libc.mq_unlink(f"/{name}".encode())
    for folder in ("/tmp", "/var/tmp", "/run/lock", "/dev/shm"):
        Path(folder, name).unlink(missing_ok=True)
    for ring in (-4, -5):
        while (key := keyctl(10, ring, b"user", name.encode(), 0)) > 0:  # KEYCTL_SEARCH
            keyctl(21, key)  # KEYCTL_INVALIDATE


UID = sandbox_uid(905)


def start(source: str, limits: Limits, uid: int = UID) -> Sandbox:
    box = Sandbox([{"id": "setup", "kind": "prelude", "source": "import numpy as np"},
                   {"id": "answer", "kind": "solution", "source": source}],
                  limits=limits, hide=hidden_paths(REPO), uid=uid, imports=["numpy"])
    box.start()
    assert all(o.ok for o in box.outcomes), box.outcomes
    return box


def fetch(box: Sandbox, name: str):
    reply, blobs = box.request({"op": "get", "name": name}, [], time.monotonic() + 30)
    assert "ok" in reply, reply
    return _child.decode(reply["ok"], blobs, None)


def child_value(source: str, limits: Limits, name: str, uid: int = UID):
    """The value of ``name`` after ``source`` ran in a fresh child, which is closed before this returns."""
    box = start(source, limits, uid)
    try:
        return fetch(box, name)
    finally:
        box.close()


def test_every_channel_is_open_between_two_plain_processes_on_the_host():
    """The probe sees each channel where nothing separates two processes (what a child had before)."""
    token = uuid.uuid4().hex
    leaver = subprocess.Popen([sys.executable, "-I", "-c", f"TOKEN = {token!r}\n" + LEAVE +
                               "print(left, flush=True)\nimport sys; sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        left = eval(leaver.stdout.readline())  # noqa: S307 (our own process's dict)
        assert all(v is True for v in left.values()), left
        probe = subprocess.run([sys.executable, "-I", "-c", f"TOKEN = {token!r}\n" + PROBE + "print(seen)"],
                               capture_output=True, text=True, timeout=60)
        seen = eval(probe.stdout)  # noqa: S307
        assert seen == dict.fromkeys(CHANNELS, True), seen
        held = host_state(token)  # and the host-side check sees what a process left
        assert held == dict.fromkeys(held, True) and set(held) == set(CHANNELS), held
    finally:
        leaver.stdin.close()
        leaver.wait(timeout=30)
        host_cleanup(token)
    assert not any(host_state(token).values())


@pytest.mark.parametrize("limits", [COLD, FAST], ids=["cold", "warm"])
def test_nothing_one_child_leaves_reaches_the_next_or_outlives_it(limits):
    if limits.warm and not sandbox.warm_here():
        pytest.skip(f"the grader forks no warm children here ({containment().mode} mode, venv {sys.prefix})")
    token = uuid.uuid4().hex
    before = host_state(token)
    assert not any(before.values()), before
    keys = key_count(UID)  # the keys of the children's uid that earlier runs left (a kernel never frees them)
    first = start(f"TOKEN = {token!r}\n" + LEAVE, limits)
    try:
        left = fetch(first, "left")
        # A could leave every one (its own copies), but a key: the kernel's keyrings are the uid's, so the
        # keyring calls are refused (a seccomp filter), through the x32 ABI too
        assert left.pop("keyring") == "refused: Operation not permitted", left
        assert all(v is True for v in left.values()), left
        assert first.active["warm"] is limits.warm
        during = host_state(token)  # A is alive and holds its socket: still nothing on the host
        seen = child_value(f"TOKEN = {token!r}\n" + PROBE, limits, "seen")
    finally:
        first.close()
        after = host_state(token)
        host_cleanup(token)
    assert seen == dict.fromkeys(CHANNELS, False), seen
    assert not any(during.values()), during
    assert not any(after.values()), after
    assert key_count(UID) == keys


def test_the_containment_names_every_namespace():
    described = containment().describe()
    assert "mount+net+pid+ipc+uts+cgroup namespaces" in described and "fresh tmpfs" in described
    assert containment().via.startswith("under bubblewrap") and "the templates of warm ones under bubblewrap" in described
    command = sandbox.bwrap_command(["true"], root=True, plan=[])
    assert {"--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-pid", "--die-with-parent"} <= set(command)
    assert "--unshare-all" in sandbox.bwrap_command(["true"], root=False, plan=[])
    assert "keyring and inotify calls refused (seccomp)" in described  # the program: tested by the channel tests
    assert sandbox.bwrap_command(["true"], root=True, plan=[], seccomp=9)[-4:] == ["--seccomp", "9", "--", "true"]
    assert (len(sandbox.keyring_filter("aarch64")), len(sandbox.keyring_filter("x86_64"))) == (11 * 8, 12 * 8)
    assert sandbox.keyring_filter("riscv64") is None  # no program there (the containment notes it)
    assert _child.CHILD_NAMESPACES == (_child.CLONE_NEWNS | _child.CLONE_NEWPID | _child.CLONE_NEWNET
                                       | _child.CLONE_NEWIPC | _child.CLONE_NEWUTS | _child.CLONE_NEWCGROUP)


@pytest.mark.parametrize("limits", [COLD, FAST], ids=["cold", "warm"])
def test_a_child_that_may_rename_its_machine_renames_only_its_own_uts_namespace(limits):
    """A child that keeps root (``uid=None``, as only tests ask) changes at most the name of its own UTS
    namespace, never the host's (restored here should that ever fail): a warm child (root with its
    capabilities until its uid drop) renames its own; a cold one under bubblewrap has no CAP_SYS_ADMIN
    and is refused."""
    import socket

    if os.geteuid() != 0:
        pytest.skip("only a child that keeps root may rename its machine")
    if limits.warm and not sandbox.warm_here():
        pytest.skip(f"the grader forks no warm children here ({containment().mode} mode, venv {sys.prefix})")
    host = socket.gethostname()
    box = Sandbox([{"id": "setup", "kind": "prelude", "source": "import socket"},
                   {"id": "answer", "kind": "solution",
                    "source": "try:\n    socket.sethostname('avgpool-child')\nexcept PermissionError:\n    pass\n"
                              "name = socket.gethostname()"}],
                  limits=limits, hide=hidden_paths(REPO), uid=None, imports=["socket"])
    try:
        box.start()
        assert all(o.ok for o in box.outcomes), box.outcomes
        name = fetch(box, "name")
    finally:
        box.close()
        after = socket.gethostname()
        if after != host:
            socket.sethostname(host)
    assert name == ("avgpool-child" if limits.warm else host) and after == host


@pytest.mark.parametrize("limits", [COLD, FAST], ids=["cold", "warm"])
def test_a_child_reaches_no_unix_socket_the_host_listens_on_in_run(limits):
    """A read-only bind still lets a process connect to a unix socket in it, and a network namespace does
    not separate sockets that have a path: a daemon of the host listening in ``/run`` (journald, D-Bus, a
    PostgreSQL gradebook's ``/run/postgresql``) would answer a child, and what the child left there could
    outlive it. ``/run`` is covered (an empty tmpfs, fresh ``/run/lock`` and ``/run/user`` in it): the
    child finds no socket there, while a plain process on the host connects (the probe works)."""
    import socket

    if os.geteuid() != 0:
        pytest.skip("only root may listen in /run")
    if limits.warm and not sandbox.warm_here():
        pytest.skip(f"the grader forks no warm children here ({containment().mode} mode, venv {sys.prefix})")
    path = f"/run/avgpool-{uuid.uuid4().hex}.sock"
    probe = (f"import socket\nprobe = socket.socket(socket.AF_UNIX)\ntry:\n    probe.connect({path!r})\n"
             "    reached = True\nexcept OSError as exc:\n    reached = type(exc).__name__\nprobe.close()\n")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        os.chmod(path, 0o777)  # anyone may connect: only the mounts stand between the child and it
        listener.listen(4)
        host = subprocess.run([sys.executable, "-I", "-c", probe + "print(reached)"], capture_output=True,
                              text=True, timeout=60)
        assert host.stdout.strip() == "True", host
        reached = child_value(probe, limits, "reached")
    finally:
        listener.close()
        Path(path).unlink(missing_ok=True)
    assert reached == "FileNotFoundError", reached


# --- a child sees no other child (issue 51) ---------------------------------------------------------------

#: What a process can read under /sys (names), /proc and /run (names, and the text of each file outside /sys and
#: the other processes' folders, but under /sys/fs/cgroup): ``found`` (paths) and ``texts`` ({path: text}).
VIEW = r"""
import os
found, texts = [], {}
for top in ("/sys", "/proc", "/run"):
    for folder, dirs, files in os.walk(top):
        parts = folder.split("/")
        if top == "/proc" and len(parts) > 2 and parts[2].isdigit() and parts[2] != str(os.getpid()):
            dirs[:] = []  # another process's folder: its name is what tells, its files are its own
        found.extend(os.path.join(folder, name) for name in dirs + files)
        if folder.startswith("/sys") and not folder.startswith("/sys/fs/cgroup"):
            continue
        for name in files:
            path = os.path.join(folder, name)
            if path in ("/proc/kmsg", "/proc/kcore") or path.endswith("/pagemap"):
                continue
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                try:
                    texts[path] = os.read(fd, 1 << 16).decode("latin-1")
                finally:
                    os.close(fd)
            except OSError:
                pass
"""


def named(view: tuple[list[str], dict], names: list[str], pids: list[int]) -> list[str]:
    """Where ``view`` (VIEW's ``found`` and ``texts``) names one of ``names`` (anywhere in a path or a text) or
    shows one of ``pids`` as a process folder (``/proc/PID``)."""
    found, texts = view
    hits = [path for path in found if any(name in path for name in names)]
    hits += [path for path, text in texts.items() if any(name in text for name in names)]
    return hits + [f"/proc/{pid}" for pid in pids if f"/proc/{pid}" in found]


def marks(box: Sandbox) -> tuple[list[str], list[int]]:
    """What names a live child on the host (its cgroup's folder names, its processes' pids) and the grader (the
    folders of its own cgroups, its pid)."""
    import psutil

    names = [os.path.basename(folder) for folder in box.cgroup.folders()] if box.cgroup is not None else []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        names += [os.path.basename(line.split(":", 2)[2])] if line.split(":", 2)[2] != "/" else []
    root = psutil.Process(box.proc.pid)
    return sorted(set(names)), [os.getpid()] + [p.pid for p in [root, *root.children(recursive=True)]]


@pytest.mark.parametrize("limits", [COLD, FAST], ids=["cold", "warm"])
def test_a_child_sees_no_other_child_and_not_the_grader(limits):
    """While child A is alive, child B lists what it can read under ``/sys``, ``/proc`` and ``/run`` and finds no
    name, pid or cgroup of A or of the grader (a host cgroup tree bound read-only listed every live child's
    cgroup, its processes, memory and CPU, until ``/sys/fs/cgroup`` was covered). A plain process on the host
    running the same listing finds them (the probe works)."""
    if limits.warm and not sandbox.warm_here():
        pytest.skip(f"the grader forks no warm children here ({containment().mode} mode, venv {sys.prefix})")
    first = start("x = 1", limits)
    try:
        names, pids = marks(first)
        own = first.cgroup.folders() if first.cgroup is not None else []
        host = subprocess.run([sys.executable, "-I", "-c", VIEW + "import json; print(json.dumps([found, texts]))"],
                              capture_output=True, text=True, timeout=120)
        on_host = named(json.loads(host.stdout), names, pids)
        box = start(VIEW, limits)
        try:
            seen = named((fetch(box, "found"), fetch(box, "texts")), names, pids)
        finally:
            box.close()
    finally:
        first.close()
    assert f"/proc/{pids[1]}" in on_host and all(folder in on_host for folder in own), on_host[:20]
    assert seen == [], (names, pids, seen[:20])


# --- every resource the kernel shares has a per-child limit (issue 51) ----------------------------------------

#: Take ``WANT`` of each resource the kernel counts per user or machine-wide (set before this source runs:
#: ``None`` for all there is), holding them: POSIX message queues, locked memory, inotify instances, terminals,
#: then descriptors (pipes). ``held``: {resource: [how many, the error that stopped it or None]}.
TAKE = r"""
import ctypes, mmap, os
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
held, kept = {}, []
def take(name, one, most=4000):
    count, error = 0, None
    while count < (WANT or most):
        try:
            kept.append(one(count))
        except OSError as exc:
            error = exc.strerror
            break
        count += 1
    held[name] = [count, error]
def checked(result):
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result
def queue(i):  # held by its descriptor, unlinked at once: gone when that closes
    name = f"/avgpool-{os.getpid()}-{i}".encode()
    descriptor = checked(libc.mq_open(name, 0o300, 0o600, None))  # O_CREAT | O_EXCL | O_RDONLY
    libc.mq_unlink(name)
    return descriptor
take("mqueue", queue)
memory = mmap.mmap(-1, 4000 * 4096)
base = ctypes.addressof(ctypes.c_char.from_buffer(memory))
take("memlock", lambda i: checked(libc.mlock(base + i * 4096, 4096)))
take("inotify", lambda i: checked(libc.inotify_init1(0)), 200)
take("pty", lambda i: os.openpty())
take("descriptors", lambda i: os.pipe(), 100_000)
"""


@pytest.mark.parametrize("limits", [COLD, FAST], ids=["cold", "warm"])
def test_a_child_that_takes_all_it_may_leaves_its_neighbour_and_the_machine_theirs(limits):
    """Child A takes all it may of every resource the kernel counts per user or for the whole machine and is
    refused at its own limit (:class:`Limits`: ``nofile``, ``msgqueue_bytes``, ``memlock_bytes``; inotify refused
    by the seccomp filter, terminals absent: ``/dev/pts`` covered); meanwhile child B takes a little of each it
    may have and gets it (its own uid's and namespaces' share), and so does a plain process of the grader's
    (an inotify instance and a terminal too)."""
    if limits.warm and not sandbox.warm_here():
        pytest.skip(f"the grader forks no warm children here ({containment().mode} mode, venv {sys.prefix})")
    hog = start("WANT = None\n" + TAKE, limits)
    try:
        took = fetch(hog, "held")
        with concurrent.futures.ThreadPoolExecutor(1) as other:  # another grading thread: a uid of its own
            neighbour = other.submit(lambda: child_value("WANT = 1\n" + TAKE, limits, "held", sandbox_uid(906))).result()
        host = subprocess.run([sys.executable, "-I", "-c", "WANT = 1\n" + TAKE + "print(held)"], capture_output=True,
                              text=True, timeout=60)
    finally:
        hog.close()
    assert took["mqueue"] == [1, "Too many open files"], took  # one default queue (80 KiB) in 128 KiB
    assert took["memlock"] == [limits.memlock_bytes // 4096, "Cannot allocate memory"], took
    assert took["inotify"] == [0, "Operation not permitted"] and took["pty"] == [0, "No such file or directory"], took
    count, error = took["descriptors"]
    assert error == "Too many open files" and limits.nofile - 16 < 2 * count <= limits.nofile, took
    assert neighbour == {"mqueue": [1, None], "memlock": [1, None], "inotify": [0, "Operation not permitted"],
                         "pty": [0, "No such file or directory"], "descriptors": [1, None]}, neighbour
    assert eval(host.stdout) == dict.fromkeys(["mqueue", "memlock", "inotify", "pty", "descriptors"], [1, None]), host  # noqa: S307
