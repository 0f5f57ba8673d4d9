"""nbgrader's exchange, end to end, as on a JupyterHub with an account per student: the instructor releases
lesson 1, two students (each their own uid and home) fetch it, one fills it in, both submit with ``nbgrader
submit``; attackers, each their own uid, write into the exchange what nbgrader's own collect would believe;
the instructor runs ``nbgrader collect`` (the course's collect, through ``nbgrader_config.py``) and grades
with the trusted grader. Every victim keeps their grade, every attack is refused or timed by the OS."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from autograder import cli, coursedir
from autograder.collect.names import TIMESTAMP_FORMAT
from autograder.results import export
from autograder.sample_class import fill
from autograder.solutions import solution_cells
from workflow_fakes import LESSON, REPO, make_course
from accounts import interpreter_cover, local_account

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
COURSE = "avgpool-course"
ALICE, BOB = "xch-alice", "xch-bob"          # alice does the work; bob hands in the untouched stub
MALLORY, EVE, TRUDY, ZED, MANY = "xch-mallory", "xch-eve", "xch-trudy", "xch-zed", "xch-many"
ACCOUNTS = (ALICE, BOB, MALLORY, EVE, TRUDY, ZED, MANY)

#: A command as another account, in a mount namespace where it can reach this Python (accounts.COVER_INTERPRETER).
AS_ACCOUNT = r"""
cd "$WORKDIR"
exec setpriv --reuid="$ACCOUNT" --regid="$ACCOUNT" --clear-groups env -i PATH="$USER_PATH" HOME="$WORKDIR" \
    LANG=C.UTF-8 JUPYTER_CONFIG_DIR="$WORKDIR/.jupyter" "$@"
"""


@pytest.fixture(scope="module")
def accounts():
    """``{name: uid}`` of the students' and attackers' accounts (made here, as root, when missing)."""
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(local_account(name, ("unshare", "setpriv"),
                                                       "the exchange test runs students as accounts of their own"))
               for name in ACCOUNTS}


@pytest.fixture
def top():
    """A folder every account may traverse (pytest's own tmp_path is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="avgpool-exchange-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def as_account(name: str, home: Path, *argv: str) -> subprocess.CompletedProcess:
    """``argv`` as account ``name`` in ``home``, as a terminal of that user's server runs it."""
    with interpreter_cover() as (cover, variables):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **variables, "ACCOUNT": name,
               "WORKDIR": str(home), "USER_PATH": f"{BIN}{os.pathsep}/usr/bin:/bin"}
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               "set -e\n" + cover + AS_ACCOUNT, "sh", *argv],
                              env=env, capture_output=True, text=True, timeout=300)


def write_as(name: str, script: str, **values: str) -> None:
    """The shell ``script`` as account ``name`` (what any student may do in the exchange by hand)."""
    done = subprocess.run(["setpriv", f"--reuid={name}", f"--regid={name}", "--clear-groups", "sh", "-ec", script],
                          env={"PATH": "/usr/bin:/bin", **values}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def stamp(when: dt.datetime) -> str:
    return when.strftime(TIMESTAMP_FORMAT)


def test_collect_through_nbgraders_exchange_takes_who_and_when_from_the_os(accounts, top, capsys, monkeypatch):
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    root = make_course(top)
    exchange = top / "exchange"
    exchange.mkdir(mode=0o1777)
    exchange.chmod(0o1777)
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    nbgrader = [str(BIN / "nbgrader")]
    released = subprocess.run(nbgrader + ["release_assignment", LESSON], cwd=root, capture_output=True, text=True)
    assert released.returncode == 0, released.stderr
    inbound = exchange / COURSE / "inbound"

    # the honest students, through nbgrader's own commands
    flags = [f"--course={COURSE}", f"--Exchange.root={exchange}"]
    solutions = solution_cells(REPO / "source" / LESSON / f"{LESSON}.ipynb")
    for name in (ALICE, BOB, TRUDY):
        home = top / "homes" / name
        home.mkdir(parents=True, mode=0o700)
        os.chown(home, accounts[name], accounts[name])
        fetched = as_account(name, home, *nbgrader, "fetch_assignment", LESSON, *flags)
        assert fetched.returncode == 0, fetched.stderr
        notebook = home / LESSON / f"{LESSON}.ipynb"
        if name != BOB:
            nbformat.write(fill(nbformat.read(notebook, as_version=4), solutions), str(notebook))
        if name != TRUDY:  # trudy hands in late, below
            submitted = as_account(name, home, *nbgrader, "submit", LESSON, *flags)
            assert submitted.returncode == 0, submitted.stderr
    stub = inbound / next(e for e in os.listdir(inbound) if e.startswith(BOB)) / f"{LESSON}.ipynb"

    # the due date passes; then the attacks
    time.sleep(1.1)
    due = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    with coursedir.open_gradebook(root) as gb:
        gb.update_or_create_assignment(LESSON, duedate=due)
    time.sleep(1.1)
    early, later = stamp(due - dt.timedelta(days=1)), stamp(due + dt.timedelta(days=1))
    entry = 'd="$INBOUND/$WHO+$LESSON+$WHEN+x$$"; mkdir "$d"; cp "$STUB" "$d/$LESSON.ipynb"; echo "$WHEN" > "$d/timestamp.txt"'
    common = {"INBOUND": str(inbound), "LESSON": LESSON, "STUB": str(stub)}
    # mallory: her notebook is a symbolic link to the instructor's source notebook (the solutions)
    write_as(MALLORY, entry + '; rm "$d/$LESSON.ipynb"; ln -s "$SOURCE" "$d/$LESSON.ipynb"', **common, WHO=MALLORY,
             WHEN=early, SOURCE=str(root / "source" / LESSON / f"{LESSON}.ipynb"))
    # eve: a stub in alice's name, with a later time than alice's
    write_as(EVE, entry, **common, WHO=ALICE, WHEN=later)
    # trudy: a late hand-in of the whole work that states a time before the due date
    write_as(TRUDY, entry.replace('"$STUB"', '"$WORK"'), **common, WHO=TRUDY, WHEN=early,
             WORK=str(top / "homes" / TRUDY / LESSON / f"{LESSON}.ipynb"))
    # zed: a data file that is a link to /dev/zero (nbgrader's copy would read it forever)
    write_as(ZED, entry + '; ln -s /dev/zero "$d/data.bin"', **common, WHO=ZED, WHEN=early)
    # many: a hand-in of 10,000 files
    write_as(MANY, entry + '; mkdir "$d/many"; cd "$d/many"; seq 10000 | xargs touch', **common, WHO=MANY,
             WHEN=early)

    collected = subprocess.run(nbgrader + ["collect", LESSON], cwd=root, capture_output=True, text=True, timeout=300)
    assert collected.returncode == 0, collected.stderr
    submitted = root / "submitted"
    assert sorted(os.listdir(submitted)) == [ALICE, BOB, TRUDY], collected.stderr
    assert (submitted / BOB / LESSON / f"{LESSON}.ipynb").read_bytes() == stub.read_bytes()
    times = {name: dt.datetime.strptime((submitted / name / LESSON / "timestamp.txt").read_text(), TIMESTAMP_FORMAT)
             for name in (ALICE, BOB, TRUDY)}
    assert times[ALICE] < due and times[BOB] < due < times[TRUDY], (times, due)
    report = json.loads((root / "reports" / "exchange_collect.json").read_text())
    assert {p["student"]: p["stated_time"] for p in report["placed"]}[TRUDY] == early, "shown beside the OS's time"
    refused = {s["file"].split("+")[0] + " " + s["reason"] for s in report["skipped"]}
    for owner, claimed, why in ((MALLORY, MALLORY, "is a symbolic link"), (EVE, ALICE, f"owned by '{EVE}'"),
                                (ZED, ZED, "data.bin is a symbolic link"), (MANY, MANY, "more than 1000 files")):
        assert any(line.startswith(claimed + " ") and why in line for line in refused), (owner, refused)
        assert why in collected.stderr, "each refusal is in nbgrader's log"

    assert cli.main(["grade", "--root", str(root), "-q"]) == 0, capsys.readouterr()
    grades = export.read_grades(root)
    assert grades.score == {(ALICE, LESSON): 25.0, (BOB, LESSON): 0.0, (TRUDY, LESSON): 25.0}
    assert (grades.late[(ALICE, LESSON)], grades.late[(BOB, LESSON)], grades.late[(TRUDY, LESSON)]) == (
        False, False, True), "trudy's stated time is not her hand-in's time"
