"""The containment floor (issue 45): by default the trusted grader grades only at the strongest level the
platform offers (``namespaces`` as root, ``user-namespace`` for anyone else, both through bubblewrap);
below it nothing is graded and one sentence says what to install. An instructor may lower the floor on
purpose (``c.SandboxPolicy.require``); then the summary, every record and the report say so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import corpus
from autograder.grading import sandbox
from autograder.grading.policy import SandboxPolicy
from autograder.grading.sandbox import (PLATFORM, Containment, GraderFault, Limits, check_level, floor_banner,
                                        platform_level)
from workflow_fakes import make_course

NO_BWRAP = Containment("rlimits-only", False, False, False, True, cgroup=True, lacks=(
    ("namespaces", "no bwrap command on PATH"),
    ("uid", "it needs the namespaces")))


def test_the_default_floor_is_the_platforms_strongest_level():
    assert Limits().require == SandboxPolicy().limits().require == PLATFORM
    assert platform_level() == ("namespaces" if os.geteuid() == 0 else "user-namespace")
    assert floor_banner(platform_level(), "rlimits-only") == ""  # a lowered floor that was not needed: no banner
    assert floor_banner("rlimits-only", "rlimits-only").startswith("WARNING: graded at rlimits-only containment")


def test_without_bubblewrap_the_default_refuses_in_one_sentence_saying_what_to_install(monkeypatch):
    monkeypatch.setattr(sandbox.levels, "containment", lambda: NO_BWRAP)
    with pytest.raises(GraderFault) as refused:
        check_level(PLATFORM)
    said = refused.value.message
    assert said.startswith(f"this machine gives the trusted grader rlimits-only+cgroup containment, below the "
                           f"{platform_level()} it requires by default on this platform: it lacks mount, network")
    assert "apt-get install bubblewrap" in said and "c.SandboxPolicy.require = 'rlimits-only'" in said
    assert "JupyterHub" in said and "\n" not in said
    check_level("rlimits-only")  # lowered on purpose: it grades...
    assert floor_banner(NO_BWRAP.level, "rlimits-only").startswith("WARNING: graded at rlimits-only+cgroup")
    assert floor_banner(platform_level(), PLATFORM) == ""  # ...and only a run below the platform's level is flagged


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH like this machine's with every folder's programs but ``bwrap`` (links in a folder of ours)."""
    shown = tmp_path / "bin"
    shown.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name != "bwrap" and not (shown / name).exists():
                os.symlink(os.path.join(folder, name), shown / name)
    return os.pathsep.join([str(Path(sys.executable).parent), str(shown)])


@pytest.mark.slow
def test_a_machine_without_bwrap_grades_nothing_by_default_and_says_so_when_lowered(tmp_path):
    if not sys.platform.startswith("linux"):
        pytest.skip("bubblewrap is Linux's")
    root = make_course(tmp_path / "course", ("lesson1_by_hand",))
    case = {c.name: c for c in corpus.cases("lesson1_by_hand")}["reference"]
    corpus.build(case, root, "alice")
    env = {**os.environ, "PATH": _path_without_bwrap(tmp_path)}
    command = [sys.executable, "-m", "autograder", "grade", "--root", str(root), "--lesson", "lesson1_by_hand"]
    refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    error = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "nothing was graded" in error[0] and "no bwrap command" in error[0], refused.stderr
    assert "apt-get install bubblewrap" in error[0]
    assert not (root / "records" / "lesson1_by_hand" / "alice.json").exists()

    with open(root / "nbgrader_config.py", "a") as config:
        config.write('\nc.SandboxPolicy.require = "rlimits-only"\n')
    graded = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert "WARNING: graded at rlimits-only" in graded.stderr
    record = json.loads((root / "records" / "lesson1_by_hand" / "alice.json").read_text())
    assert record["level"].startswith("rlimits-only") and record["score"] == record["max_score"]
    assert "WARNING: graded at rlimits-only" in record["containment"]
    report = subprocess.run([sys.executable, "-m", "autograder", "report", "--root", str(root)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stdout + report.stderr
    page = (root / "reports" / "report.html").read_text()
    assert "WARNING: graded at rlimits-only" in page and "Containment the student code ran in: rlimits-only" in page
