"""Two users grade on one machine (issue 28): the sandbox-uid leases are each user's own, so an instructor
or TA who is not root grades after root did; a lease folder the grader cannot use is a grader error in
one sentence, never a traceback and never a student's zero."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import corpus
from autograder.grading import sandbox
from autograder.grading.sandbox import GraderFault, lease_folder, sandbox_uid
from autograder.grading.submission import GradingRun, Submission, grade_one
from workflow_fakes import make_course
from accounts import local_account, run_as
from shared import REPO

ACCOUNT = "avgpool-ta"
LESSON = "lesson1_by_hand"

@pytest.fixture(scope="module")
def account():
    """The uid of a second, unprivileged grading account (made here, as root, when missing)."""
    with local_account(ACCOUNT, ("unshare", "setpriv"), "the second-user test", system=True) as uid:
        yield uid


def as_account(code: str, tmpdir: str = "/tmp", cgroup: str = "") -> subprocess.CompletedProcess:
    """``python -I -c code`` in the repository as the TA (see :func:`accounts.run_as`)."""
    return run_as(ACCOUNT, code, REPO, tmpdir=tmpdir, cgroup=cgroup)


def test_a_second_user_grades_on_a_machine_where_root_graded_first_and_both_grade_at_once(account):
    """Root leased a uid first; then the TA grades lesson 1's reference while root grades it too, at the
    same time on the same machine: both get every test cell (their leases and children are their own)."""
    from concurrent.futures import ThreadPoolExecutor

    from autograder.grading import load_lesson
    from autograder.grading.sandbox import Limits
    from autograder.grading.verdicts import run_tests

    root_folder = lease_folder()  # root's leases (made when this process first leased a uid)
    assert root_folder.stat().st_uid == 0 and sandbox_uid(906)
    theirs = root_folder.with_name(f"trusted-grader-uids-{account}")
    existed = theirs.exists()
    code = """
from pathlib import Path
from autograder.grading import load_lesson
from autograder.grading.sandbox import Limits, containment, lease_folder, sandbox_uid
from autograder.grading.verdicts import run_tests
lesson = load_lesson("lesson1_by_hand", Path("."))
verdicts = run_tests(lesson, lesson.reference_sources(), Limits(start_seconds=90), uid=sandbox_uid(0))
print("passed", sum(t.passed for t in verdicts.tests), "of", len(verdicts.tests))
print("mode", containment().mode)
print("leases", lease_folder())
"""
    lesson = load_lesson(LESSON, REPO)
    try:
        with ThreadPoolExecutor(1) as pool:
            roots = pool.submit(run_tests, lesson, lesson.reference_sources(), Limits(start_seconds=90),
                                uid=sandbox_uid(1))
            result = as_account(code)
            root_verdicts = roots.result()
        assert root_verdicts.tests and all(t.passed for t in root_verdicts.tests), root_verdicts
        assert result.returncode == 0, result.stderr[-3000:]
        lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
        passed, _, total = lines["passed"].split()
        assert passed == total and int(total) > 0, result.stdout
        assert lines["mode"] == "user-namespace"  # not root: bubblewrap's --unshare-all, the child keeps the TA's uid
        assert lines["leases"] == str(theirs)
        info = theirs.stat()
        assert info.st_uid == account and info.st_mode & 0o777 == 0o700
    finally:
        if not existed:
            shutil.rmtree(theirs, ignore_errors=True)


def test_a_lease_folder_another_user_made_is_a_one_sentence_grader_error(account):
    shared = Path(tempfile.mkdtemp(prefix="ta-tmp-"))
    try:
        shared.chmod(0o1777)
        (shared / f"trusted-grader-uids-{account}").mkdir(mode=0o700)  # root's, under the TA's name
        result = as_account("""
from autograder.grading.sandbox import GraderFault, sandbox_uid
try:
    sandbox_uid(0)
except GraderFault as fault:
    print("GraderFault:", fault.message)
""", tmpdir=str(shared))
    finally:
        shutil.rmtree(shared)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stdout.startswith("GraderFault: ") and result.stdout.count("\n") == 1, result.stdout
    assert f"trusted-grader-uids-{account}" in result.stdout and "not a private folder" in result.stdout


@pytest.mark.parametrize("make", ["a file", "nothing"], ids=["not-a-folder", "no-temp-folder"])
def test_a_lease_that_cannot_be_made_is_a_grader_error_record_not_a_score(make, tmp_path, monkeypatch):
    root = make_course(tmp_path / "course", (LESSON,))
    case = {c.name: c for c in corpus.cases(LESSON)}["reference"]
    corpus.build(case, root, "alice")
    temp = tmp_path / "temp"
    if make == "a file":
        temp.mkdir()
        (temp / "trusted-grader-uids").write_text("")
        (temp / f"trusted-grader-uids-{os.geteuid()}").write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    with GradingRun.open(root, seed=1, use_cache=False) as run:  # a run of its own leases anew
        with pytest.raises(GraderFault) as raised:
            sandbox_uid(0, run.resources)
        assert "\n" not in raised.value.message and str(temp) in raised.value.message
        record = grade_one(Submission.read(root, "alice", LESSON), run)
    assert record.status == "grader-error", record
    assert "lease" in record.reason


def delegate(folder: Path, uid: int) -> None:
    """What systemd does for a unit with ``Delegate=yes``: the folder and its ``cgroup.procs``,
    ``cgroup.subtree_control`` and ``cgroup.threads`` belong to ``uid``."""
    for path in (folder, *(folder / name for name in ("cgroup.procs", "cgroup.subtree_control", "cgroup.threads"))):
        if path.exists():
            os.chown(path, uid, -1)


def test_a_user_with_a_delegated_cgroup_v2_subtree_grades_with_cgroup_containment(account):
    """The TA's grader runs in a cgroup v2 folder delegated to the TA (as systemd's user manager or a hub
    spawner gives one): it reaches user-namespace+cgroup, each child's CPU seconds come from a cgroup it
    made below that folder (a process it forked included), and the child's cgroup is
    gone after. The same TA without the delegation stays at user-namespace (the other side)."""
    v2 = sandbox.cgroup_places(open("/proc/self/cgroup").read(), open("/proc/self/mountinfo").read())[1]
    if v2 is None or not os.access(f"{v2}/cgroup.procs", os.W_OK):
        reason = f"no cgroup v2 hierarchy this root process may write (found {v2})"
        if os.environ.get("CI"):
            print(f"LOUD SKIP under CI: {reason}")
        pytest.skip(reason)
    folder = Path(v2) / f"avgpool-delegated-{os.getpid()}"
    folder.mkdir()
    code = """
import os
from pathlib import Path
from autograder.grading.sandbox import Limits, Sandbox, containment, hidden_paths, sandbox_uid
print("level", containment().level)
burn = ("import os, time\\ndef burn(seconds):\\n    end = time.process_time() + seconds\\n"
        "    while time.process_time() < end: pass\\npid = os.fork()\\nif pid == 0:\\n    burn(0.3)\\n"
        "    os._exit(0)\\nburn(0.2)\\nos.waitpid(pid, 0)\\n")
box = Sandbox([{"id": "setup", "kind": "prelude", "source": "import os"},
               {"id": "answer", "kind": "solution", "source": burn}],
              limits=Limits(start_seconds=60, warm=False), hide=hidden_paths(Path(".")), uid=sandbox_uid(0),
              imports=["os"])
made = None
try:
    box.start()
    assert all(o.ok for o in box.outcomes), box.outcomes
    made = box.cgroup.paths["unified"] if box.cgroup else None
    print("cgroup", made)
    print("seconds", box.cpu_seconds())
finally:
    box.close()
print("removed", made is not None and not os.path.exists(made))
"""
    try:
        delegate(folder, account)
        given = as_account(code, cgroup=str(folder))
        withheld = as_account('from autograder.grading.sandbox import containment; print("level", containment().level)')
    finally:
        for child in folder.iterdir() if folder.exists() else ():
            if child.is_dir():
                child.rmdir()
        folder.rmdir()
    assert given.returncode == 0, given.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in given.stdout.splitlines())
    assert lines["level"] == "user-namespace+cgroup", given.stdout
    assert os.path.dirname(lines["cgroup"]) == str(folder), given.stdout
    assert 0.5 <= float(lines["seconds"]) < 5, given.stdout  # both processes: 0.2 + 0.3 s and the start
    assert lines["removed"] == "True", given.stdout
    assert withheld.returncode == 0 and withheld.stdout.strip() == "level user-namespace", withheld


def test_without_a_cgroup_the_cpu_seconds_count_orphans_and_children_never_waited_for(account):
    """The TA's level without a cgroup is user-namespace: CPU seconds are read with psutil over the child's
    process tree; the child is PID 1 of its namespace, so an orphan is reparented to it and stays in its tree
    (a zombie keeps its times until reaped into the child's children times). A
    solution that burns CPU in an orphan (a double fork) and in a child it never waits for (a zombie while
    it lives) is charged for both: the same solution without those burns costs about 1.1 s less."""
    code = """
import os
from pathlib import Path
from autograder.grading.sandbox import Limits, Sandbox, containment, hidden_paths, sandbox_uid
print("level", containment().level)
solution = '''import os, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end: pass
a = os.fork()
if a == 0:  # starts the orphan and leaves at once: no code of the student's ever waits for the orphan
    if os.fork() == 0:
        burn(ORPHAN)
        os._exit(0)
    os._exit(0)
os.waitpid(a, 0)
if os.fork() == 0:  # a child never waited for
    burn(ZOMBIE)
    os._exit(0)
burn(0.2)
time.sleep(1.5)  # both burns end, unwaited for, before the cell does
'''
for name, orphan, zombie in (("hidden", 0.6, 0.5), ("none", 0.0, 0.0)):
    box = Sandbox([{"id": "setup", "kind": "prelude", "source": "import os"},
                   {"id": "answer", "kind": "solution",
                    "source": solution.replace("ORPHAN", str(orphan)).replace("ZOMBIE", str(zombie))}],
                  limits=Limits(start_seconds=60, warm=False), hide=hidden_paths(Path(".")), uid=sandbox_uid(0),
                  imports=["os"])
    try:
        box.start()
        assert all(o.ok for o in box.outcomes), box.outcomes
        print(name, box.cpu_seconds())
    finally:
        box.close()
"""
    result = as_account(code)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["level"] == "user-namespace", result.stdout
    assert float(lines["hidden"]) - float(lines["none"]) >= 0.9, result.stdout  # 0.6 + 0.5 s, timer rounding
