"""nbgrader's exchange, end to end, as on a JupyterHub: the instructor releases lesson 1, two students
(each in a home folder of their own, as the hub's single-user servers run them: the account ``jovyan``,
the student's name in ``JUPYTERHUB_USER``) fetch it, one fills it in, both submit; the instructor collects
and grades with the trusted grader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import cli
from autograder.results import export
from autograder.sample_class import fill
from autograder.solutions import solution_cells
from workflow_fakes import LESSON, REPO, make_course
from accounts import local_account

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
HUB_ACCOUNT = "jovyan"


@pytest.fixture(scope="module")
def hub_account():
    """The uid of the single-user servers' account ``jovyan`` (created here, as root, when missing)."""
    with local_account(HUB_ACCOUNT, ("unshare",), "the exchange test runs the students' commands as jovyan") as uid:
        yield uid


def as_student(uid: int, name: str, home: Path, *argv: str) -> subprocess.CompletedProcess:
    """``argv`` in the student's home, as the hub runs it: uid ``jovyan`` (a user namespace maps this
    process onto it), ``JUPYTERHUB_USER`` the student's name, nothing of the instructor's config."""
    env = {"PATH": f"{BIN}{os.pathsep}/usr/bin:/bin", "HOME": str(home), "JUPYTERHUB_USER": name,
           "JUPYTER_CONFIG_DIR": str(home / ".jupyter"), "LANG": "C.UTF-8"}
    return subprocess.run(["unshare", "--user", f"--map-user={uid}", f"--map-group={uid}", *argv], cwd=home,
                          env=env, capture_output=True, text=True, timeout=300)


def test_release_fetch_submit_collect_and_grade_through_nbgraders_exchange(hub_account, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    root = make_course(tmp_path)
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    nbgrader = [str(BIN / "nbgrader")]
    released = subprocess.run(nbgrader + ["release_assignment", LESSON], cwd=root, capture_output=True, text=True)
    assert released.returncode == 0, released.stderr

    student_flags = ["--course=avgpool-course", f"--Exchange.root={exchange}"]
    solutions = solution_cells(REPO / "source" / LESSON / f"{LESSON}.ipynb")
    for name in ("alice", "bob"):
        home = tmp_path / "homes" / name
        home.mkdir(parents=True)
        fetched = as_student(hub_account, name, home, *nbgrader, "fetch_assignment", LESSON, *student_flags)
        assert fetched.returncode == 0, fetched.stderr
        notebook = home / LESSON / f"{LESSON}.ipynb"
        assert notebook.is_file()
        if name == "alice":  # alice does the work; bob hands in the untouched stub
            nbformat.write(fill(nbformat.read(notebook, as_version=4), solutions), str(notebook))
        submitted = as_student(hub_account, name, home, *nbgrader, "submit", LESSON, *student_flags)
        assert submitted.returncode == 0, submitted.stderr

    collected = subprocess.run(nbgrader + ["collect", LESSON], cwd=root, capture_output=True, text=True)
    assert collected.returncode == 0, collected.stderr
    for name in ("alice", "bob"):
        assert (root / "submitted" / name / LESSON / "timestamp.txt").is_file(), "collected under the hub name"
    assert cli.main(["grade", "--root", str(root), "-q"]) == 0, capsys.readouterr()
    assert export.read_grades(root).score == {("alice", LESSON): 25.0, ("bob", LESSON): 0.0}
