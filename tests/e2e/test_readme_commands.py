"""The README's instructor section, run as a new instructor would: every command of its code blocks, as
written and in order, on a course folder copied from the repository (what a fresh clone holds), with
the LMS export of a small class. Each must succeed and print no warning."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.sample_class import fill
from autograder.solutions import solution_cells
from shared import REPO

pytestmark = pytest.mark.slow
LESSON = "lesson1_by_hand"
NOISE = re.compile(r"warning|traceback", re.I)


def instructor_commands(readme: str) -> list[str]:
    """The command lines of the ```bash blocks in the README's "For instructors" section."""
    section = readme.split("## For instructors", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        lines += [line.split("  #", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def fresh_course(tmp: Path) -> Path:
    """What a clone holds (tracked files; lesson 1 only, to keep the run short). The packages
    ``course`` and ``autograder`` come from the environment, as ``make`` installs them: copies here would
    shadow them in ``python -m nbgrader``."""
    root = tmp / "clone"
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True).stdout.split()
    for name in listed:
        if name.startswith(("source/", "release/")) and f"/{LESSON}/" not in f"/{name}":
            continue
        if name.startswith(("course/", "autograder/", "tests/", "benchmarks/")):
            continue
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    return root


def lms_export(tmp: Path) -> Path:
    """A Canvas-style export: one complete and one untouched notebook."""
    release = nbformat.read(REPO / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    solved = fill(release, solution_cells(REPO / "source" / LESSON / f"{LESSON}.ipynb"))
    archive = tmp / "EXPORT.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"alice_1234_{LESSON}.ipynb", nbformat.writes(solved))
        zf.writestr(f"bob_5678_{LESSON}.ipynb", nbformat.writes(release))
    return archive


def lms_roster(tmp: Path) -> Path:
    """The class's Canvas roster (its gradebook export), for ``export --lms canvas --roster ROSTER.csv``."""
    roster = tmp / "ROSTER.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
                      "alice,1234,,alice,A\nbob,5678,,bob,A\n", encoding="utf-8")
    return roster


def test_every_instructor_command_of_the_readme_runs_as_written_without_a_warning(tmp_path):
    commands = instructor_commands((REPO / "README.md").read_text())
    assert any(c.startswith("avgpool-course grade") for c in commands)
    assert any(c.startswith("nbgrader autograde") for c in commands)
    root = fresh_course(tmp_path)
    export, roster = lms_export(tmp_path), lms_roster(tmp_path)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # the venv, activated
    env.pop("PYTHONWARNINGS", None)
    for command in commands:
        argv = [{"EXPORT.zip": str(export), "ROSTER.csv": str(roster)}.get(word, word) for word in shlex.split(command)]
        if argv[0] == "make":
            continue  # make's targets are run by the tests of release and bundle
        result = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=600)
        shown = result.stdout + result.stderr
        assert result.returncode == 0, f"{command}:\n{shown[-3000:]}"
        noise = [line for line in shown.splitlines() if NOISE.search(line)]
        assert not noise, f"{command} printed:\n" + "\n".join(noise[:10])
    assert (root / "feedback" / "alice" / LESSON / f"{LESSON}.html").is_file()
    assert (root / "reports" / "report.html").is_file() and (root / "grades.csv").is_file()
    assert (root / "reports" / "items.csv").is_file() and (root / "reports" / "canvas_grades.csv").is_file()
