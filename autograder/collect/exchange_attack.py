"""The sample class's exchange attack (``make course``): a hand-in planted in a scratch nbgrader exchange of
the course folder, in a student's name, whose notebook is a symbolic link to the instructor's ``source/``
notebook of the lesson, then collected with the collect ``nbgrader_config.py`` gives nbgrader
(``c.ExchangeFactory.collect``, as ``nbgrader collect`` runs it, with ``--update``).

``make course`` runs as one account, which cannot write hand-ins as other students: the entry is written
by that account, the one that collects. So the demo shows what one account can: the collect refuses the
entry, places nothing, and the named student's hand-in in ``submitted/`` (from the LMS) keeps its exact
bytes. The same attacks with students as real uids: ``tests/e2e/test_exchange.py``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import pwd
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder import coursedir
from autograder.collect.exchange import HandIn, Refused, read_hand_in

#: Where the scratch exchange goes, under the course folder.
EXCHANGE = "exchange"
#: The modes nbgrader's release gives the exchange's course folder (0755) and its inbound folder (2733).
COURSE_MODE = 0o755
INBOUND_MODE = stat.S_ISGID | 0o733


@dataclass
class ExchangeAttack:
    """What the collect did with the planted entry: ``refused`` (its reasons, in the collect's words),
    ``placed`` (students it placed: must be none), ``untouched`` (the named student's ``submitted/``
    folder for the lesson has the same files and bytes as before, or is still absent) and ``link_alone``
    (what reading the entry says of its notebook, whoever owned it)."""

    student: str
    lesson: str
    writer: str
    entry: str
    refused: list[str] = field(default_factory=list)
    placed: list[str] = field(default_factory=list)
    untouched: bool = False
    link_alone: str = ""

    @property
    def stopped(self) -> bool:
        return bool(self.refused) and not self.placed and self.untouched


def account() -> str:
    """The running account's name (its uid where it has none)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def inbound(course: Path) -> Path:
    """The scratch exchange's inbound folder of ``course`` (made with nbgrader's modes where missing)."""
    course_id = coursedir.course_config(course).get("CourseDirectory", {}).get("course_id", "")
    if not course_id:
        raise ValueError(f"{course / 'nbgrader_config.py'} sets no CourseDirectory.course_id; the exchange "
                         "is per course")
    folder = Path(course) / EXCHANGE / course_id / "inbound"
    for path, mode in ((folder.parent, COURSE_MODE), (folder, INBOUND_MODE)):
        if not path.is_dir():
            path.mkdir(parents=True)
            os.chmod(path, mode)  # mkdir's mode is masked by the umask, as nbgrader notes too
    return folder


def plant(course: Path, student: str, lesson: str) -> Path:
    """Write the attack entry, ``inbound/<student>+<lesson>+<time>+<random>`` as ``nbgrader submit`` names
    it, with a ``timestamp.txt`` and ``<lesson>.ipynb``: a symbolic link to ``source/<lesson>/<lesson>.ipynb``."""
    target = (Path(course) / "source" / lesson / f"{lesson}.ipynb").resolve()
    if not target.is_file():
        raise ValueError(f"lesson {lesson!r} has no source notebook at {target}: the attack links to it")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    entry = inbound(course) / f"{student}+{lesson}+{stamp}+attack"
    entry.mkdir()
    (entry / "timestamp.txt").write_text(stamp)
    (entry / f"{lesson}.ipynb").symlink_to(target)
    return entry


def _files(folder: Path) -> dict[str, str]:
    """Each file under ``folder`` (relative path) -> its SHA-256; empty where there is no folder."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()} if folder.is_dir() else {}


def collect(course: Path, entry: Path) -> ExchangeAttack:
    """Collect ``entry``'s lesson from the scratch exchange with the collect the course's configuration
    names (``--update``: a collected entry would replace the student's hand-in) and say what it did."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeError, ExchangeFactory

    course = Path(course)
    student, lesson = entry.name.split("+")[:2]
    owner = os.lstat(entry).st_uid
    try:
        writer = pwd.getpwuid(owner).pw_name
    except KeyError:
        writer = str(owner)
    outcome = ExchangeAttack(student, lesson, writer, entry.name)
    theirs = course / "submitted" / student / lesson
    before = _files(theirs)
    config = coursedir.course_config(course)
    where = CourseDirectory(config=config, root=str(course), assignment_id=lesson)
    app = ExchangeFactory(config=config).Collect(coursedir=where, authenticator=Authenticator(config=config),
                                                 root=str(entry.parent.parent.parent), update=True, config=config)
    try:
        app.start()
    except ExchangeError as exc:
        outcome.refused.append(f"the whole collect stopped: {exc}")
    log = getattr(app, "report", None)  # the course's collect keeps what it placed and refused
    if log is None:
        outcome.placed.append(f"{type(app).__name__} (not the course's collect) ran and keeps no report")
    else:
        outcome.placed += [p.student for p in log.placed]
        outcome.refused += [s.reason for s in log.skipped if s.file == entry.name]
    outcome.untouched = _files(theirs) == before
    try:
        read_hand_in(entry.parent, HandIn(entry.name, student, writer, owner))
        outcome.link_alone = "read alone, the entry passes"
    except Refused as exc:
        why = str(exc).replace(entry.name + "/", "").split(";")[0]
        outcome.link_alone = f"read alone (whoever owned it), it is refused too: {why}"
    return outcome
