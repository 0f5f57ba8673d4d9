"""A real Dask cluster on loopback for tests and benchmarks: ``dask scheduler`` and single-threaded
``dask worker`` processes on 127.0.0.1, each in a process group of its own.

    with loopback_cluster(folder, workers=2) as (address, workers):
        grade(root=course, cluster=address)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

DASK = Path(sys.executable).parent / "dask"


def cluster_env() -> dict:
    """The environment of the scheduler and workers (and of a client that starts nothing else)."""
    return dict(os.environ, PATH=f"{DASK.parent}{os.pathsep}{os.environ.get('PATH', '')}", MPLBACKEND="Agg",
                DASK_DISTRIBUTED__WORKER__DAEMON="False")


def start(argv: list[str], log: Path, env: dict) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen([str(DASK), *argv], stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc``'s whole process group (a worker's nanny and its worker process) and wait."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)


@contextmanager
def loopback_cluster(folder: Path, workers: int = 2, timeout: float = 120.0, threads: int = 1):
    """``(address, [worker processes])`` of a scheduler and ``workers`` workers of ``threads`` threads each
    started in ``folder`` (their logs and local directories); all of them are killed on exit."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    env = cluster_env()
    info = folder / "scheduler.json"
    scheduler = start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
                       str(info)], folder / "scheduler.log", env)
    procs: list[subprocess.Popen] = []
    try:
        deadline = time.monotonic() + timeout
        while not info.exists():
            if scheduler.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the dask scheduler did not start: {(folder / 'scheduler.log').read_text()[-500:]}")
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        for n in range(1, workers + 1):
            procs.append(start(["worker", address, "--nworkers", "1", "--nthreads", str(threads), "--no-dashboard",
                                "--name", f"w{n}", "--local-directory", str(folder / f"w{n}")],
                               folder / f"w{n}.log", env))
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=timeout)
        yield address, procs
    finally:
        for proc in procs + [scheduler]:
            stop(proc)
