"""The course's collect from nbgrader's exchange (autograder/collect/exchange.py), on an inbound folder
whose entries belong to real accounts (made here; as root the test gives each entry to its account):
who handed in is the owner, the time is the change time, links, devices and FIFOs are never followed,
sizes are bounded, and a refused entry never touches anyone's work. The same through real ``nbgrader
submit`` runs: tests/e2e/test_exchange.py."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeError

from accounts import local_account
from shared import REPO
from autograder.collect.exchange import CourseExchangeCollect
from autograder.collect.names import TIMESTAMP_FORMAT
from autograder.collect.unpack import UnpackLimits

LESSON = "lesson1_by_hand"
COURSE = "avgpool-course"
ALICE, BOB = "xcu-alice", "xcu-bob"
HONEST = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "who": "the owner"}'


@pytest.fixture(scope="module")
def uids():
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(local_account(name, (), "the exchange's collect reads real owners"))
               for name in (ALICE, BOB)}


@pytest.fixture
def course(tmp_path):
    """(the course folder, the exchange's inbound folder)."""
    inbound = tmp_path / "exchange" / COURSE / "inbound"
    inbound.mkdir(parents=True)
    (tmp_path / "course").mkdir()
    return tmp_path / "course", inbound


def hand_in(inbound: Path, uid: int, name: str, files: dict[str, bytes], stated="2020-01-01 00:00:00.000000 UTC",
            tag="r1") -> Path:
    """An entry as ``nbgrader submit`` writes it, named ``name`` and owned by ``uid``."""
    entry = inbound / f"{name}+{LESSON}+{stated}+{tag}"
    entry.mkdir()
    for rel, data in {f"{LESSON}.ipynb": HONEST, "timestamp.txt": stated.encode(), **files}.items():
        (entry / rel).parent.mkdir(parents=True, exist_ok=True)
        (entry / rel).write_bytes(data)
    give(entry, uid)
    return entry


def give(path: Path, uid: int) -> None:
    for item in [path, *path.rglob("*")]:
        os.lchown(item, uid, uid)


def collect(course: Path, inbound: Path, limits: UnpackLimits | None = None, **options) -> dict:
    """nbgrader's collect of LESSON with the course's class, as ``nbgrader collect`` runs it; its report."""
    coursedir = CourseDirectory(root=str(course), course_id=COURSE, assignment_id=LESSON)
    app = CourseExchangeCollect(coursedir=coursedir, authenticator=Authenticator(), root=str(inbound.parent.parent),
                                **options)
    if limits:
        app.limits = limits
    app.start()
    return json.loads((course / "reports" / "exchange_collect.json").read_text())


def submitted(course: Path, student: str) -> Path:
    return course / "submitted" / student / LESSON


def test_the_owner_is_the_student_and_the_change_time_is_the_hand_ins_time(uids, course):
    root, inbound = course
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    hand_in(inbound, uids[ALICE], ALICE, {"data/extra.txt": b"x", "submission_secret.txt": b"s3"})
    report = collect(root, inbound)
    folder = submitted(root, ALICE)
    assert (folder / f"{LESSON}.ipynb").read_bytes() == HONEST
    assert (folder / "data" / "extra.txt").read_bytes() == b"x" and (folder / "submission_secret.txt").is_file()
    when = dt.datetime.strptime((folder / "timestamp.txt").read_text(), TIMESTAMP_FORMAT)
    assert started - dt.timedelta(seconds=2) <= when <= dt.datetime.now(dt.UTC).replace(tzinfo=None)
    placed = report["placed"][0]
    assert (placed["student"], placed["time_from"], placed["stated_time"]) == (
        ALICE, "ctime", "2020-01-01 00:00:00.000000 UTC"), "the stated time is shown beside the change time"
    assert report["skipped"] == []


def test_a_hand_in_in_another_students_name_is_refused_and_theirs_kept(uids, course):
    root, inbound = course
    hand_in(inbound, uids[ALICE], ALICE, {})
    collect(root, inbound)
    # bob writes in alice's name, with a later time in the name and in timestamp.txt, and hands in his own
    hand_in(inbound, uids[BOB], ALICE, {f"{LESSON}.ipynb": b"bob's stub"}, stated="2030-01-01 00:00:00.000000 UTC")
    hand_in(inbound, uids[BOB], BOB, {f"{LESSON}.ipynb": b"bob's own"}, tag="r2")
    report = collect(root, inbound, update=True)
    assert (submitted(root, ALICE) / f"{LESSON}.ipynb").read_bytes() == HONEST
    assert (submitted(root, BOB) / f"{LESSON}.ipynb").read_bytes() == b"bob's own"
    [refused] = report["skipped"]
    assert f"under the name '{ALICE}' but owned by '{BOB}'" in refused["reason"], refused


def test_a_later_hand_in_replaces_the_earlier_with_update(uids, course):
    root, inbound = course
    hand_in(inbound, uids[ALICE], ALICE, {})
    collect(root, inbound)
    time.sleep(0.05)
    # the later hand-in states the earlier time: the change time still ranks it later
    hand_in(inbound, uids[ALICE], ALICE, {f"{LESSON}.ipynb": b"second"}, stated="2019-01-01 00:00:00.000000 UTC",
            tag="r2")
    collect(root, inbound)
    assert (submitted(root, ALICE) / f"{LESSON}.ipynb").read_bytes() == HONEST, "kept without --update"
    collect(root, inbound, update=True)
    assert (submitted(root, ALICE) / f"{LESSON}.ipynb").read_bytes() == b"second"


def _symlink(entry: Path, target: str) -> None:
    (entry / f"{LESSON}.ipynb").unlink()
    (entry / f"{LESSON}.ipynb").symlink_to(target)


def _hard_link(entry: Path, _target: str) -> None:
    (entry / f"{LESSON}.ipynb").unlink()
    own = entry.parent.parent / "alice-elsewhere.ipynb"
    own.write_bytes(b"linked")
    os.chown(own, entry.stat().st_uid, entry.stat().st_gid)
    os.link(own, entry / f"{LESSON}.ipynb")


def _fifo(entry: Path, _target: str) -> None:
    os.mkfifo(entry / "pipe")


def _foreign_file(entry: Path, _target: str) -> None:
    (entry / "planted.txt").write_bytes(b"someone else's")  # stays root's: not the entry owner's


def _entry_is_a_link(entry: Path, target: str) -> None:
    real = entry.parent.parent / "elsewhere"
    entry.rename(real)
    entry.symlink_to(real, target_is_directory=True)


@pytest.mark.parametrize("attack, reason", [
    (lambda e, t: _symlink(e, t), "is a symbolic link"),
    (lambda e, t: _symlink(e, "/dev/zero"), "is a symbolic link"),
    (lambda e, t: (e / "data").symlink_to("/dev/zero"), "is a symbolic link"),
    (_hard_link, "is a hard link"),
    (_fifo, "is a FIFO"),
    (_foreign_file, "is owned by uid 0"),
    (_entry_is_a_link, "a symbolic link, not a hand-in folder"),
], ids=["link-to-source", "notebook-link-to-dev-zero", "link-to-dev-zero", "hard-link", "fifo", "foreign-file",
        "entry-is-a-link"])
def test_links_devices_fifos_and_foreign_files_refuse_the_hand_in(uids, course, attack, reason):
    root, inbound = course
    source = root / "source" / LESSON / f"{LESSON}.ipynb"
    source.parent.mkdir(parents=True)
    source.write_bytes(b"SOLUTIONS")
    hand_in(inbound, uids[ALICE], ALICE, {}, tag="early")
    collect(root, inbound)
    time.sleep(0.05)
    entry = hand_in(inbound, uids[ALICE], ALICE, {f"{LESSON}.ipynb": b"later"}, tag="late")
    attack(entry, str(source))
    for item in [entry, *entry.rglob("*")]:  # what the attack made is alice's, but the planted file
        if item.name != "planted.txt":
            os.lchown(item, uids[ALICE], uids[ALICE])
    report = collect(root, inbound, update=True)
    assert (submitted(root, ALICE) / f"{LESSON}.ipynb").read_bytes() == HONEST, "the earlier hand-in stays"
    assert not any(b"SOLUTIONS" in p.read_bytes() for p in submitted(root, ALICE).rglob("*") if p.is_file())
    assert [s for s in report["skipped"] if reason in s["reason"]], report["skipped"]


@pytest.mark.parametrize("files, limits, reason", [
    ({f"f{i}.txt": b"" for i in range(12)}, UnpackLimits(hand_in_files=10), "more than 10 files and folders"),
    ({"big.bin": bytes(5000)}, UnpackLimits(member_bytes=4096), "per-file limit"),
    ({"a.bin": bytes(3000), "b.bin": bytes(3000)}, UnpackLimits(hand_in_bytes=5000), "limit of one hand-in"),
    ({"/".join("d" * 4) + "/deep.txt": b"x"}, UnpackLimits(hand_in_depth=3), "more than 3 folders deep"),
], ids=["files", "file-bytes", "hand-in-bytes", "depth"])
def test_files_bytes_and_depth_are_bounded(uids, course, files, limits, reason):
    root, inbound = course
    hand_in(inbound, uids[ALICE], ALICE, files)
    report = collect(root, inbound, limits=limits)
    assert not submitted(root, ALICE).exists()
    assert [s for s in report["skipped"] if reason in s["reason"]], report["skipped"]
    hand_in(inbound, uids[BOB], BOB, {})  # within the same limits: collected
    collect(root, inbound, limits=UnpackLimits())
    assert (submitted(root, BOB) / f"{LESSON}.ipynb").read_bytes() == HONEST


def test_a_shared_account_is_refused_in_one_sentence(uids, course):
    root, inbound = course
    hand_in(inbound, uids[BOB], ALICE, {})
    hand_in(inbound, uids[BOB], "carol", {}, tag="r2")
    with pytest.raises(ExchangeError, match=r"owned by one account \(xcu-bob.*\) under 2 student names.*shared"):
        collect(root, inbound)
    assert not (root / "submitted").exists()


def test_a_hand_in_owned_by_the_collecting_account_is_refused(uids, course):
    root, inbound = course
    hand_in(inbound, os.geteuid(), "root", {})
    hand_in(inbound, uids[ALICE], ALICE, {}, tag="r2")
    report = collect(root, inbound)
    assert [p["student"] for p in report["placed"]] == [ALICE]
    assert "owned by the account that collects" in report["skipped"][0]["reason"]


def test_before_duedate_ranks_hand_ins_by_their_change_time(uids, course, monkeypatch):
    import sys

    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # alembic
    root, inbound = course
    hand_in(inbound, uids[ALICE], ALICE, {}, stated="2030-01-01 00:00:00.000000 UTC", tag="r1")
    time.sleep(0.05)
    due = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    time.sleep(0.05)
    # the late one states an earlier time than the on-time one, in its name and its timestamp.txt
    hand_in(inbound, uids[ALICE], ALICE, {f"{LESSON}.ipynb": b"late"}, stated="2019-01-01 00:00:00.000000 UTC",
            tag="r2")
    db = f"sqlite:///{root / 'gradebook.db'}"
    with Gradebook(db, COURSE) as gb:
        gb.update_or_create_assignment(LESSON, duedate=due)
    collect(root, inbound, before_duedate=True)
    assert (submitted(root, ALICE) / f"{LESSON}.ipynb").read_bytes() == HONEST, "the one handed in before the due date"
    collect(root, inbound, update=True)
    assert (submitted(root, ALICE) / f"{LESSON}.ipynb").read_bytes() == b"late", "the latest, with --update"


# --- make course's exchange attack (autograder/collect/exchange_attack.py), on a scratch course folder ---

def attack_course(tmp_path: Path, student: str) -> Path:
    """lesson LESSON's source and the course's nbgrader_config.py, and ``student``'s LMS hand-in of it."""
    from autograder import coursedir

    root = coursedir.copy_course(REPO, tmp_path / "demo", [LESSON], ("source",))
    lms = submitted(root, student)
    lms.mkdir(parents=True)
    (lms / f"{LESSON}.ipynb").write_bytes(HONEST)
    return root


def test_make_courses_exchange_attack_is_refused_and_the_named_students_hand_in_kept(tmp_path, capsys):
    from autograder.cli import exchange_attack_report
    from autograder.collect import exchange_attack
    from autograder.results.export import Grades

    root = attack_course(tmp_path, "alice")
    entry = exchange_attack.plant(root, "alice", LESSON)
    assert (entry / f"{LESSON}.ipynb").is_symlink() and entry.parent.stat().st_mode & 0o7777 == 0o2733
    outcome = exchange_attack.collect(root, entry)
    assert outcome.stopped and outcome.placed == [] and outcome.untouched, outcome
    [reason] = outcome.refused
    assert "owned by the account that collects" in reason, "one account wrote it: the collect says so first"
    assert f"{LESSON}.ipynb is a symbolic link" in outcome.link_alone, outcome.link_alone
    assert sorted(p.relative_to(root / "submitted").as_posix() for p in (root / "submitted").rglob("*")) == [
        "alice", f"alice/{LESSON}", f"alice/{LESSON}/{LESSON}.ipynb"], "nothing placed for the attack"
    assert (submitted(root, "alice") / f"{LESSON}.ipynb").read_bytes() == HONEST
    grades = Grades([LESSON], {LESSON: 25.0}, ["alice"], score={("alice", LESSON): 12.0})
    assert exchange_attack_report(outcome, grades) == 0
    printed = capsys.readouterr().out
    assert f"exchange: 1 hand-in refused (named alice, written by account {exchange_attack.account()}" in printed
    assert "holds the LMS hand-in byte for byte, so the grade is that hand-in's: 12/25" in printed


def test_the_exchange_attack_as_the_named_students_own_account(uids, tmp_path, capsys):
    """The other side, with the entry given to the account it names: the link alone refuses it; the same
    entry with a plain notebook is collected, and make course's report then fails."""
    from autograder.cli import exchange_attack_report
    from autograder.collect import exchange_attack
    from autograder.results.export import Grades

    root = attack_course(tmp_path, ALICE)
    entry = exchange_attack.plant(root, ALICE, LESSON)
    give(entry, uids[ALICE])
    outcome = exchange_attack.collect(root, entry)
    assert outcome.stopped and outcome.writer == ALICE, outcome
    assert [r for r in outcome.refused if f"{LESSON}.ipynb is a symbolic link" in r], outcome.refused
    (entry / f"{LESSON}.ipynb").unlink()
    (entry / f"{LESSON}.ipynb").write_bytes(b"a plain notebook")
    give(entry, uids[ALICE])
    outcome = exchange_attack.collect(root, entry)
    assert not outcome.stopped and outcome.placed == [ALICE] and not outcome.untouched, outcome
    assert (submitted(root, ALICE) / f"{LESSON}.ipynb").read_bytes() == b"a plain notebook"
    assert exchange_attack_report(outcome, Grades([LESSON], {LESSON: 25.0}, [ALICE])) == 1
    assert "exchange: NOT STOPPED: placed xcu-alice" in capsys.readouterr().out
