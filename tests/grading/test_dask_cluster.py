"""Grading on a Dask cluster: a real ``dask scheduler`` and two ``dask worker`` processes on loopback,
started here. The grades equal local grading's; killing one worker mid-batch loses nothing (its
submissions run again on the other) and the gradebook equals a clean local run's."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

import corpus
from autograder import cli
from autograder.results import export
from autograder.grading import batch
from autograder.grading.sandbox import Limits
from benchmarks.loopback import DASK, loopback_cluster, stop
from workflow_fakes import LESSON, make_course

pytestmark = pytest.mark.slow
CASES = ("reference", "partial", "bug_ceil_mode", "fault_os_exit")
LIMITS = Limits(test_seconds=20, cell_seconds=20, start_seconds=90)


@pytest.fixture
def cluster(tmp_path):
    """``(address, [worker processes])``: a scheduler and two single-threaded workers on 127.0.0.1."""
    with loopback_cluster(tmp_path / "cluster", workers=2) as running:
        yield running


def _course(tmp_path: Path, name: str) -> Path:
    root = make_course(tmp_path / name)
    cases = {c.name: c for c in corpus.cases(LESSON)}
    for case in CASES:
        corpus.build(cases[case], root, case)
    return root


def test_a_cluster_grades_as_local_grading_does_even_when_a_worker_dies(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{DASK.parent}{os.pathsep}{os.environ['PATH']}")
    address, workers = cluster
    local = _course(tmp_path, "local")
    seed = 31337  # one run seed on both sides: the same hidden inputs
    batch.grade(root=local, jobs=2, progress=False, limits=LIMITS, check_reference=False, seed=seed)  # canary: tested elsewhere
    expected = export.read_grades(local).score

    remote = _course(tmp_path, "remote")
    killed = threading.Event()

    def kill_a_worker_after_the_first_record():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not list((remote / "records" / LESSON).glob("*.json")):
            time.sleep(0.1)
        stop(workers[0])
        killed.set()

    killer = threading.Thread(target=kill_a_worker_after_the_first_record, daemon=True)
    killer.start()
    records = batch.grade(root=remote, progress=False, limits=LIMITS, cluster=address, check_reference=False,
                          seed=seed)
    assert killed.is_set(), "the worker was killed while the batch ran"
    assert {r.seed for r in records} == {seed}, "the workers drew the run's hidden inputs"
    assert workers[0].poll() is not None
    assert sorted((r.student, r.status) for r in records) == \
        sorted((r["student"], r["status"]) for r in map(json.loads, (
            p.read_text() for p in (local / "records" / LESSON).glob("*.json"))))
    assert export.read_grades(remote).score == expected, "the same gradebook as a clean local run"
    assert len(expected) == len(CASES)


#: A class for the threads test: every case of :data:`CASES` twice, so a worker of 4 threads grades 4 at once.
THREADED = {f"{case}_{n}": case for case in CASES for n in (1, 2)}


THREADED_SEED = 2024


def _threaded_class(root: Path) -> Path:
    root = make_course(root)
    cases = {c.name: c for c in corpus.cases(LESSON)}
    for student, case in THREADED.items():
        corpus.build(cases[case], root, student)
    return root


@pytest.fixture(scope="module")
def graded_locally(tmp_path_factory):
    """The records of :data:`THREADED` graded locally (``--jobs 2``) with :data:`THREADED_SEED`."""
    root = _threaded_class(tmp_path_factory.mktemp("threaded") / "local")
    return batch.grade(root=root, jobs=2, progress=False, limits=LIMITS, check_reference=False, seed=THREADED_SEED,
                       gradebook=False)


@pytest.mark.parametrize("threads", [1, 4])
def test_a_worker_with_several_threads_grades_every_cell_as_local_grading_does(tmp_path, monkeypatch, threads,
                                                                              graded_locally):
    """Dask's default is a thread per core: submissions graded at once in one worker process keep their own
    sandbox uid, grader state and captured output, so every cell equals local grading's (issue 45)."""
    monkeypatch.setenv("PATH", f"{DASK.parent}{os.pathsep}{os.environ['PATH']}")
    local = graded_locally
    remote_root = _threaded_class(tmp_path / "remote")
    with loopback_cluster(tmp_path / "cluster", workers=1, threads=threads) as (address, _):
        remote = batch.grade(root=remote_root, progress=False, limits=LIMITS, cluster=address,
                             check_reference=False, seed=THREADED_SEED, gradebook=False)

    def cells(records):
        return {(r.student, t["grade_id"]): (r.status, t["points"], t["passed"], t["message"], t["output"])
                for r in records for t in r.tests}

    expected, got = cells(local), cells(remote)
    same = sum(got.get(key) == value for key, value in expected.items())
    print(f"\n{threads} thread(s) per worker: {same} of {len(expected)} cells equal to local grading")
    assert got == expected, [(key, expected[key], got.get(key)) for key in expected if got.get(key) != expected[key]][:3]
    assert not any(r.status == "grader-error" for r in remote)


def test_the_cli_sends_grading_to_the_cluster_and_says_where_it_ran(cluster, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", f"{DASK.parent}{os.pathsep}{os.environ['PATH']}")
    address, _ = cluster
    root = make_course(tmp_path / "cli")
    corpus.build(next(c for c in corpus.cases(LESSON) if c.name == "reference"), root, "ada")
    status = cli.main(["grade", "--root", str(root), "--cluster", address, "-q", "--seed", "77"])
    out = capsys.readouterr().out
    assert status == 0 and f"on the Dask cluster at {address}" in out and "run seed 77" in out
    assert export.read_grades(root).score == {("ada", LESSON): 25.0}


def test_no_scheduler_at_the_address_is_one_sentence(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(batch, "CLUSTER_CONNECT_SECONDS", 2)
    root = make_course(tmp_path / "none")
    corpus.build(next(c for c in corpus.cases(LESSON) if c.name == "reference"), root, "ada")
    status = cli.main(["grade", "--root", str(root), "--cluster", "tcp://127.0.0.1:9", "-q"])
    err = capsys.readouterr().err
    assert status == 2 and "no Dask scheduler answers at tcp://127.0.0.1:9" in err and "Traceback" not in err
