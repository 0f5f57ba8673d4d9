"""The warm sandbox: children forked from a template that has imported the lesson's set-up modules are
contained exactly as a fresh interpreter is (namespaces, hidden paths, limits, uid), see nothing of the
student before them, never hold a blocked module, and give the same verdicts as cold children."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from daemon import START_DAEMON

from autograder.grading import _child, load_lesson, sandbox
from autograder.grading.policy import load_policy
from autograder.grading.submission import verdict_key
from autograder.grading.sandbox import ForkedChild, Limits, Sandbox, containment, hidden_paths, sandbox_uid
from autograder.grading.verdicts import run_tests
from shared import FAST, REPO

COLD = Limits(**{**FAST.as_dict(), "warm": False})
#: Skipped where the grader itself chooses cold children (its own condition: ``sandbox.warm_here``): no
#: warm template in this containment mode, or a checkout or venv under a fresh folder such as ``/tmp``.
warm_only = pytest.mark.skipif(not sandbox.warm_here(), reason=f"the grader forks no warm children here "
                               f"({containment().mode} mode on {sys.platform}, venv {sys.prefix})")

#: What a student cell can find out about its own process (plain data).
FACTS = r"""
import gc, os, resource, sys
facts = {
    "pid": os.getpid(),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "uid": os.getuid(),
    "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0],
    "address_space": resource.getrlimit(resource.RLIMIT_AS)[0],
    "networks": sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]),
    "cwd": os.getcwd(),
    "scratch": sorted(os.listdir(".")),
    "tmp": sorted(os.listdir("/tmp")),
    "repo_visible": os.path.isdir(REPO_SOURCE) and bool(os.listdir(REPO_SOURCE)),  # absent, or an empty tmpfs
    "torch_in_modules": repr(sys.modules.get("torch", "absent")),
    "torch_objects": sum(1 for o in gc.get_objects() if type(o).__module__.split(".")[0] == "torch"),
    "leak": getattr(sys.modules.get("json"), "left_by_the_last_student", None),
    "numpy_loaded": "numpy" in sys.modules,
    "cgroups": sorted(line.rpartition(":")[2] for line in open("/proc/self/cgroup").read().split()),
    "dev": sorted(os.listdir("/dev")),
    "host_read_only": all(os.statvfs(p).f_flag & os.ST_RDONLY for p in ("/etc", "/usr", "/var")),
    "work_writable": os.access("/work", os.W_OK) if os.path.isdir("/work") else None,
}
"""

PLANT = """
import json
json.left_by_the_last_student = "secret of the student before"
open("left.txt", "w").write("the student before was here")
open("/tmp/left.txt", "w").write("the student before was here")
"""


def start(source: str, *, limits: Limits = FAST, block=(), imports=("numpy",), prelude="import numpy as np"):
    cells = [{"id": "setup", "kind": "prelude", "source": prelude},
             {"id": "answer", "kind": "solution",
              "source": f"REPO_SOURCE = {str(REPO / 'source')!r}\n" + source}]
    box = Sandbox(cells, limits=limits, hide=hidden_paths(REPO), uid=sandbox_uid(903), block=list(block),
                  imports=list(imports))
    box.start()
    return box


def fetch(box: Sandbox, name: str):
    reply, blobs = box.request({"op": "get", "name": name}, [], time.monotonic() + 30)
    assert "ok" in reply, reply
    return _child.decode(reply["ok"], blobs, None)


def facts_of(limits: Limits, **kwargs) -> dict:
    box = start(FACTS, limits=limits, **kwargs)
    try:
        assert all(o.ok for o in box.outcomes), box.outcomes
        facts = fetch(box, "facts")
        facts["warm"] = isinstance(box.proc, ForkedChild)
        facts["active"] = dict(box.active)
        return facts
    finally:
        box.close()


@warm_only
def test_a_warm_child_is_contained_as_a_cold_one():
    cold, warm = facts_of(COLD), facts_of(FAST)
    assert (cold["warm"], warm["warm"]) == (False, True)
    same = ("uid", "nproc", "address_space", "networks", "cwd", "tmp", "repo_visible", "torch_objects", "dev",
            "host_read_only", "work_writable")
    assert {k: warm[k] for k in same} == {k: cold[k] for k in same}
    for key in ("namespaces", "hidden", "rlimits", "uid", "kept", "exposed", "read_only"):
        assert warm["active"].get(key) == cold["active"].get(key), key
    if containment().namespaces:
        # a PID namespace of its own: PID 1, or as root PID 2 under bubblewrap's init, which keeps uid 0 so
        # that the parent-death signal of a killed grader reaches it (and its end ends the namespace)
        assert warm["pid"] == 1 and cold["pid"] == (2 if containment().drop_uid else 1)
        assert len(warm["processes"]) <= 2 and warm["networks"] == ["lo"]
        assert warm["repo_visible"] is False
        assert warm["host_read_only"] is True and "kmsg" not in warm["dev"], "the template's bubblewrap: host " \
            "read-only, a minimal /dev"
        assert set(warm["cgroups"]) == set(cold["cgroups"]) == {"/"}, "a cgroup namespace: no host cgroup path"
    if containment().drop_uid:
        assert warm["uid"] != 0 and not warm["work_writable"], "a covered folder is the template's, no child's to write"


@warm_only
def test_nothing_of_one_student_reaches_the_next():
    first = start(PLANT)
    try:
        assert all(o.ok for o in first.outcomes), first.outcomes
    finally:
        first.close()
    facts = facts_of(FAST)
    assert facts["warm"] and facts["leak"] is None
    assert "left.txt" not in facts["scratch"] and "left.txt" not in facts["tmp"]
    assert facts["tmp"] == facts_of(COLD)["tmp"]


@warm_only
def test_a_blocked_module_is_never_in_the_template():
    lesson = load_lesson("lesson3_numpy", REPO)
    assert "torch" in lesson.block
    preload = lesson.preload_modules()
    assert "numpy" in preload and not any(m.split(".")[0] in lesson.block for m in preload)
    facts = facts_of(FAST, block=["torch"], imports=["numpy", "torch"], prelude="import numpy as np\nimport torch")
    assert facts["warm"] and facts["torch_in_modules"] == "None" and facts["torch_objects"] == 0
    allowed = facts_of(FAST, imports=["numpy", "torch"], prelude="import numpy as np\nimport torch")
    assert allowed["torch_objects"] > 0, "the same probe sees torch where the lesson allows it"


@warm_only
def test_children_of_one_lesson_share_one_template_and_a_dead_template_is_replaced():
    sandbox.close_templates()
    first = start("x = 1")
    second = start("x = 2")
    try:
        assert first.proc.template is second.proc.template
        assert fetch(first, "x") == 1 and fetch(second, "x") == 2, "one student's objects each"
    finally:
        first.close()
        second.close()
    template = next(iter(sandbox.process_default().templates.values()))
    os.killpg(template.proc.pid, signal.SIGKILL)
    template.proc.wait(timeout=10)
    third = start("x = 3")
    try:
        assert third.proc.template is not template and fetch(third, "x") == 3
    finally:
        third.close()


@warm_only
@pytest.mark.parametrize("source, kind", [
    ("import os\nos._exit(7)", "crash"),
    ("import ctypes\nctypes.string_at(0)", "crash"),
    ("while True:\n    pass", "timeout"),
])
def test_a_fault_is_the_same_fault_warm_and_cold(source, kind):
    outcomes = {}
    for limits in (COLD, FAST):
        box = start(source, limits=Limits(**{**limits.as_dict(), "cell_seconds": 2, "warm": limits.warm}))
        try:
            outcomes[limits.warm] = [(o.id, o.fault) for o in box.outcomes]
        finally:
            box.kill()
    assert outcomes[True] == outcomes[False] == [("answer", kind)]


def test_warm_is_a_policy_setting_and_no_part_of_a_verdicts_cache_key(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.SandboxPolicy.warm = False\n")
    limits = load_policy(tmp_path).limits()
    assert limits.warm is False and load_policy(REPO).limits().warm is True
    assert verdict_key("content", limits, 1, "namespaces") == verdict_key("content", Limits(), 1, "namespaces")
    assert verdict_key("content", limits, 1, "namespaces") != verdict_key("content", Limits(test_seconds=1), 1,
                                                                          "namespaces")


@warm_only
def test_a_lesson_graded_warm_gets_the_cold_verdicts():
    lesson = load_lesson("lesson2_loops", REPO)
    sources = lesson.reference_sources()
    broken = {**sources, next(i for i in lesson.code_solution_ids if i not in lesson.given):
              "def avg_pool2d_loops(*args, **kwargs):\n    raise ValueError('not yet')\n"}
    for submission in (sources, broken):
        cold = run_tests(lesson, submission, COLD, root=REPO)
        warm = run_tests(lesson, submission, FAST, root=REPO)
        assert [(t.grade_id, t.passed) for t in warm.tests] == [(t.grade_id, t.passed) for t in cold.tests]
        assert "warm template" in warm.containment and "warm template" not in cold.containment
    assert all(t.passed for t in run_tests(lesson, sources, FAST, root=REPO).tests)


#: A solution cell that starts a daemon (double fork, its own session, out of the child's process group)
#: writing to a file, then waits.
DAEMON_CELL = "import os, time\n" + START_DAEMON + "time.sleep(300)\n"


@pytest.mark.skipif(not containment().namespaces, reason="a daemon leaves the grader's reach without a PID namespace")
@pytest.mark.parametrize("warm", [False, pytest.param(True, marks=warm_only)], ids=["cold", "warm"])
def test_a_grading_process_that_dies_takes_its_template_and_children_with_it(warm):
    """SIGKILL of the grading process (no handler runs): its warm template, the child (whose uid drop
    clears the parent-death signal set before it: it arms it again; a cold child's parent, ``unshare``,
    is tied to the grader the same way) and a daemon the student's code started all end, and no process
    of the sandbox uid is left."""
    import psutil

    code = ("import os, sys, threading, time\nfrom autograder.grading.sandbox import Sandbox, Limits, sandbox_uid\n"
            f"box = Sandbox([{{'id': 'a', 'kind': 'solution', 'source': {DAEMON_CELL!r}}}], "
            f"limits=Limits(cell_seconds=300, warm={warm}), imports=['json'], uid=sandbox_uid(905))\n"
            "threading.Thread(target=box.start, daemon=True).start()\n"
            "print(box.uid, flush=True)\ntime.sleep(300)\n")
    grader = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    seen: dict = {}
    try:
        uid = int(grader.stdout.readline())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(c.startswith("sh -c ") for _, c in seen.values()):
            for process in psutil.Process(grader.pid).children(recursive=True):
                try:
                    seen[process.pid] = (process.create_time(), " ".join(process.cmdline()))
                except psutil.Error:
                    pass
            time.sleep(0.01)
        assert any(c.startswith("sh -c ") for _, c in seen.values()), "the student's daemon never started"
        grader.kill()
        grader.wait(timeout=10)

        def same(pid: int, started: float) -> bool:
            try:
                return psutil.Process(pid).create_time() == started
            except psutil.Error:  # ended since _alive looked
                return False

        def left() -> list[int]:
            running = [p for p, (t, _) in seen.items() if _alive(p) and same(p, t)]
            return running + (sandbox.uid_processes(uid) if containment().drop_uid else [])

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and left():
            time.sleep(0.02)
        assert not left(), [str(seen.get(p, (0, p))[1])[:80] for p in left()]
    finally:
        if grader.poll() is None:
            os.killpg(grader.pid, signal.SIGKILL)
        for pid in [p for p, (t, _) in seen.items() if _alive(p)]:  # today's survivors, after a failure
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in handle)
    except OSError:
        return False


def test_a_child_of_the_template_imports_nothing_more_for_its_set_up():
    """What the set-up imports, and what PyTorch's ``backward`` with a given gradient imports on first use (sympy,
    0.35 s of every lesson 4 child), is in the template, not paid again by every child; and ``setup_notebook`` makes
    PyTorch deterministic without importing ``torch._inductor`` (1.3 s, which ``torch.use_deterministic_algorithms``
    would import in every child and every notebook)."""
    lesson = load_lesson("lesson4_torch", REPO)
    preload = lesson.preload_modules()
    assert "torch" in preload
    assert "torch" not in load_lesson("lesson3_numpy", REPO).preload_modules(), "torch is blocked"
    probe = ("import importlib, sys\n"
             f"for name in {preload!r}:\n    importlib.import_module(name)\n"
             "before = set(sys.modules)\nimport course\ncourse.setup_notebook(seed=0)\n"
             "import torch\nassert torch.are_deterministic_algorithms_enabled()\n"
             "assert torch.is_deterministic_algorithms_warn_only_enabled()\n"
             "assert 'torch._inductor' not in sys.modules, 'setup_notebook imported torch._inductor'\n"
             "x = torch.ones(2, requires_grad=True)\n(x * 2).backward(torch.ones(2))  # lesson 4's backward tests\n"
             "print(sorted(set(sys.modules) - before))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]", "the set-up or a backward imported more than the template holds"
