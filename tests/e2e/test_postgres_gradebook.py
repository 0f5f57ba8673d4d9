"""The whole cycle with the gradebook on a real PostgreSQL server (Debian's ``postgresql``, started here
on loopback in a scratch folder): collect, trusted grading through nbgrader, manual grades and comments
kept through a regrade (one given while the regrade runs), feedback, export and report. SQLite stays
the default; this is ``c.CourseDirectory.db_url`` set in the course's ``nbgrader_config.py``."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from autograder import cli, coursedir
from autograder.results import export, report
from workflow_fakes import LESSON, make_course

pytestmark = pytest.mark.slow


def _binary(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))[-1:]), None)
    if not found:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL's {name} is missing: .ci/run installs Debian's postgresql package")
        pytest.skip(f"PostgreSQL's {name} is not installed")
    return found


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server on 127.0.0.1 with an empty database ``gradebook``; its SQLAlchemy URL."""
    initdb, pg_ctl, psql = _binary("initdb"), _binary("pg_ctl"), _binary("psql")
    # not under pytest's folder: that one is readable by its owner only, and the server runs as postgres
    home = Path(tempfile.mkdtemp(prefix="avgpool-postgres-"))
    data, sockets = home / "data", home / "sockets"
    sockets.mkdir()
    as_server = []
    if os.geteuid() == 0:  # the server refuses to run as root: Debian's package made the postgres user
        shutil.chown(home, "postgres")
        shutil.chown(sockets, "postgres")
        as_server = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run = lambda *argv: subprocess.run([*as_server, *argv], capture_output=True, text=True, timeout=120)  # noqa: E731
    made = run(initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
    assert made.returncode == 0, made.stdout + made.stderr
    started = run(pg_ctl, "-D", str(data), "-l", str(home / "server.log"), "-w", "-o",
                  f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        created = run(psql, "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c", "CREATE DATABASE gradebook")
        assert created.returncode == 0, created.stderr
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/gradebook"
    finally:
        run(pg_ctl, "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(home, ignore_errors=True)


def _run(capsys, *argv) -> tuple[int, str]:
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out + err


def test_the_whole_cycle_on_a_postgresql_gradebook(postgres, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    root = make_course(tmp_path)
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.CourseDirectory.db_url = {postgres!r}\n")
    assert coursedir.db_url(root) == postgres and not coursedir.gradebook_exists(root)
    from test_readme_commands import lms_export

    status, shown = _run(capsys, "collect", lms_export(tmp_path), "--root", root)
    assert status == 0, shown
    status, shown = _run(capsys, "grade", "--root", root)
    assert status == 0, shown
    assert not coursedir.gradebook_path(root).exists(), "nothing went to SQLite"
    assert export.read_grades(root).score == {("alice", LESSON): 25.0, ("bob", LESSON): 0.0}

    # a manual grade and a comment, as formgrader writes them, one of them while a regrade runs
    with coursedir.open_gradebook(root) as gb:
        gb.find_grade("kc_q1", LESSON, LESSON, "alice").manual_score = 0.25
        gb.db.commit()
    regrade = threading.Thread(target=cli.main, args=(["grade", "--root", str(root)],))
    regrade.start()
    time.sleep(1.0)
    with coursedir.open_gradebook(root) as gb:
        gb.find_comment("knowledge_check", LESSON, LESSON, "bob").manual_comment = "See section 3 again."
        gb.db.commit()
    regrade.join(timeout=600)
    capsys.readouterr()
    with coursedir.open_gradebook(root) as gb:
        assert gb.find_grade("kc_q1", LESSON, LESSON, "alice").manual_score == 0.25
        assert gb.find_comment("knowledge_check", LESSON, LESSON, "bob").manual_comment == "See section 3 again."
        alice = gb.find_submission(LESSON, "alice").score
    assert alice < 25.0

    status, shown = _run(capsys, "feedback", "--root", root)
    assert status == 0, shown
    assert "See section 3 again." in (root / "feedback" / "bob" / LESSON / f"{LESSON}.html").read_text()
    assert f"Score: {round(alice, 2)} / 25" in (root / "feedback" / "alice" / LESSON / f"{LESSON}.html").read_text()
    assert export.read_grades(root).score[("alice", LESSON)] == alice
    assert export.fmt(alice) in report.build(root)


def test_a_database_that_cannot_be_reached_is_one_clear_sentence(tmp_path, capsys):
    root = make_course(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.CourseDirectory.db_url = 'postgresql+psycopg://postgres@127.0.0.1:{port}/gradebook'\n")
    status, shown = _run(capsys, "export", "--root", root)
    assert status == 2 and "cannot be read" in shown and "db_url" in shown and "Traceback" not in shown
