"""The child's cgroup on both hierarchies (issue 28): where this process's cgroups are (parsed from
``/proc/self/cgroup`` and ``/proc/self/mountinfo``, v1, hybrid, v2 only, a container's deeper mount),
when a user may make one (a delegated v2 subtree) and why not, the v2 limits, and a child's CPU seconds
read from a real cgroup v2 hierarchy, cold and warm, where this machine can mount one."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import tempfile

import pytest

from autograder.grading import sandbox
from autograder.grading.sandbox import Cgroup, Limits, Sandbox, cgroup_places, containment, hidden_paths, sandbox_uid
import shared
from shared import REPO

FAST = dataclasses.replace(shared.FAST, test_seconds=10, cell_seconds=10)

#: ``/proc/self/cgroup`` and ``/proc/self/mountinfo`` of a root grader on a hybrid machine (CI's).
HYBRID = ("4:memory:/process_api/53cf\n2:cpuacct:/\n1:cpu:/\n0::/\n",
          "30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n"
          "31 25 0:27 / /sys/fs/cgroup/cpuacct rw,nosuid - cgroup cgroup rw,cpuacct\n"
          "32 25 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
          "33 25 0:29 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu\n")
#: A user's grader on a v2-only distribution (systemd's user manager delegates its subtree).
SCOPE = "/user.slice/user-1000.slice/user@1000.service/app.slice/grade.scope"
UNIFIED = (f"0::{SCOPE}\n", "25 1 0:22 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n")


def test_a_hybrid_machine_gives_both_hierarchies():
    v1, v2 = cgroup_places(*HYBRID)
    assert v1 == {"memory": "/sys/fs/cgroup/memory/process_api/53cf", "cpuacct": "/sys/fs/cgroup/cpuacct",
                  "cpu": "/sys/fs/cgroup/cpu"}
    assert v2 == "/sys/fs/cgroup/unified"


def test_a_v2_only_machine_gives_the_users_own_cgroup_and_no_v1():
    assert cgroup_places(*UNIFIED) == ({}, f"/sys/fs/cgroup{SCOPE}")


def test_a_container_mount_that_starts_deeper_is_followed_and_one_outside_it_is_not():
    inside = ("0::/kubepods/pod1/grader/work\n",
              "40 30 0:30 /kubepods/pod1/grader /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
    assert cgroup_places(*inside) == ({}, "/sys/fs/cgroup/work")
    outside = ("0::/elsewhere\n", inside[1])
    assert cgroup_places(*outside) == ({}, None)
    assert cgroup_places("", "") == ({}, None)


def test_a_user_without_a_delegated_subtree_gets_none_and_the_reason(tmp_path, monkeypatch):
    folder = tmp_path / "grade.scope"
    folder.mkdir()  # no cgroup.procs it may write: not a cgroup delegated to this user
    monkeypatch.setattr(sandbox.cgroup, "_this_process_places", lambda: ({}, str(folder)))
    with pytest.raises(OSError, match=f"may not write its cgroup {folder} \\(no cgroup v2 subtree delegated"):
        Cgroup.make(1 << 30)
    assert Cgroup.create(1 << 30) is None
    monkeypatch.setattr(sandbox.cgroup, "_this_process_places", lambda: ({}, None))
    with pytest.raises(OSError, match="no cgroup hierarchy is mounted"):
        Cgroup.make(1 << 30)


def test_the_v2_limits_are_written_where_the_controllers_are_and_nowhere_else(tmp_path):
    given, bare = tmp_path / "given", tmp_path / "bare"
    for folder in (given, bare):
        folder.mkdir()
    for name in ("memory.max", "memory.swap.max", "pids.max"):
        (given / name).write_text("max\n")
    Cgroup({"unified": str(given)}).limit(512 << 20, 64)
    Cgroup({"unified": str(bare)}).limit(512 << 20, 64)
    assert [(given / n).read_text() for n in ("memory.max", "memory.swap.max", "pids.max")] == \
        [str(512 << 20), "0", "64"]
    assert os.listdir(bare) == []  # no memory or pids controller: nothing made up
    assert Cgroup({"unified": str(given)}).memory_capped() and not Cgroup({"unified": str(bare)}).memory_capped()


@pytest.mark.parametrize("files, killer", [
    ({"memory.events": "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n"}, "cap"),
    ({"memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\n"}, "machine"),
    ({"memory.events": "low 0\nhigh 0\nmax 12\noom 0\noom_kill 0\n"}, None),
    ({"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "memory.failcnt": "0",
      "memory.max_usage_in_bytes": "268435456", "memory.limit_in_bytes": "268435456"}, "cap"),
    ({"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "memory.failcnt": "3",
      "memory.max_usage_in_bytes": "1000", "memory.limit_in_bytes": "268435456"}, "cap"),
    ({"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "memory.failcnt": "0",
      "memory.max_usage_in_bytes": "1000", "memory.limit_in_bytes": "268435456"}, "machine"),
    ({"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", "memory.failcnt": "0",
      "memory.max_usage_in_bytes": "268435456", "memory.limit_in_bytes": "268435456"}, None),
    ({"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\n", "memory.failcnt": "2",
      "memory.max_usage_in_bytes": "1000", "memory.limit_in_bytes": "268435456"}, "cap"),  # a kernel that counts no kill
], ids=["v2-cap", "v2-machine", "v2-none", "v1-peak", "v1-failcnt", "v1-machine", "v1-none", "v1-no-count"])
def test_whose_out_of_memory_killer_acted_is_read_from_the_cgroups_own_counters(tmp_path, files, killer):
    """A kill the cgroup counted is its own cap's killer's where it reached its cap, else the machine's; the
    counters are the kernel's for that cgroup alone (v2 ``memory.events``; v1 ``memory.oom_control`` and the peak
    or ``failcnt``), never the machine's ``/proc/vmstat``, which any process can watch."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    v2 = "memory.events" in files
    assert Cgroup({"unified": str(tmp_path)} if v2 else {"memory": str(tmp_path)}).killed_by() == killer


@pytest.fixture
def cgroup2(monkeypatch):
    """A cgroup v2 hierarchy mounted here (as root), which this process's cgroups are taken from."""
    if os.geteuid() != 0 or not containment().cgroup:
        reason = "mounting a cgroup2 hierarchy needs root (and a machine where the grader makes cgroups)"
        if os.environ.get("CI"):
            print(f"LOUD SKIP under CI: {reason}")
        pytest.skip(reason)
    point = tempfile.mkdtemp(prefix="cgroup2-")
    mounted = subprocess.run(["mount", "-t", "cgroup2", "none", point], capture_output=True, text=True)
    if mounted.returncode != 0:
        os.rmdir(point)
        reason = f"this machine cannot mount a cgroup2 hierarchy: {mounted.stderr.strip()}"
        if os.environ.get("CI"):
            print(f"LOUD SKIP under CI: {reason}")
        pytest.skip(reason)
    own = open("/proc/self/cgroup").read()
    places = cgroup_places(own, f"1 1 0:1 / {point} rw - cgroup2 none rw\n")
    assert places[1] is not None, own
    monkeypatch.setattr(sandbox.cgroup, "_this_process_places", lambda: places)  # a v2-only machine
    try:
        yield places[1]
    finally:
        subprocess.run(["umount", point], check=False)
        os.rmdir(point)


BURN = """
import os, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
pid = os.fork()
if pid == 0:
    burn(0.3)
    os._exit(0)
burn(0.2)
os.waitpid(pid, 0)
"""


@pytest.mark.parametrize("limits", [Limits(**{**FAST.as_dict(), "warm": False}), FAST], ids=["cold", "warm"])
def test_a_childs_cpu_seconds_come_from_its_cgroup_v2_and_it_is_removed_after(cgroup2, limits):
    if limits.warm and not sandbox.warm_here():
        pytest.skip(f"no warm children in {containment().mode} mode")
    box = Sandbox([{"id": "setup", "kind": "prelude", "source": "import os"},
                   {"id": "answer", "kind": "solution", "source": BURN}],
                  limits=limits, hide=hidden_paths(REPO), uid=sandbox_uid(907), imports=["os"])
    try:
        box.start()
        assert all(o.ok for o in box.outcomes), box.outcomes
        assert box.cgroup is not None and box.cgroup.v2
        folder = box.cgroup.paths["unified"]
        assert os.path.dirname(folder) == cgroup2.rstrip("/") and os.path.isdir(folder)
        members = open(f"{folder}/cgroup.procs").read().split()
        assert members, "the child runs in its cgroup"
        used = box.cpu_seconds()
        assert 0.5 <= used < 5, used  # both processes: 0.2 + 0.3 s and the start
    finally:
        box.close()
    assert not os.path.exists(folder)
    assert not any(sandbox.process_running(int(pid)) for pid in members)
