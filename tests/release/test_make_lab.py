"""``make lab`` starts JupyterLab, also as root (as in most containers), in the repository and in the
student bundle: the README's student command, run as written, with options only to stay headless."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from shared import REPO


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_lab(folder: Path, home: Path, make_options: tuple[str, ...] = ()) -> tuple[bool, str]:
    """Run ``make lab`` in ``folder`` (headless, a random port and token) until JupyterLab answers on
    /api/status or exits; then stop it. Returns (answered, its log)."""
    port, token = _free_port(), secrets.token_hex(8)
    for name in ("config", "data", "runtime"):
        (home / name).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"),
               LAB_ARGS=f"--no-browser --port={port} --port-retries=0 --ServerApp.ip=127.0.0.1 "
                        f"--ServerApp.token={token} --LabApp.news_url=None")
    log = home / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(["make", "--no-print-directory", *make_options, "lab"], cwd=folder, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    answered = False
    try:
        deadline = time.monotonic() + 90
        while proc.poll() is None and time.monotonic() < deadline and not answered:
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/api/status",
                                                 headers={"Authorization": f"token {token}"})
                with urllib.request.urlopen(request, timeout=5):
                    answered = True
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
    return answered, log.read_text(errors="replace")


@pytest.mark.slow
def test_make_lab_starts_jupyterlab_in_the_repository(tmp_path):
    """As root this is the case the README's ``make lab`` used to fail ("Running as root is not
    recommended. Use --allow-root"); the Makefile adds --allow-root for root only."""
    dry = subprocess.run(["make", "--no-print-directory", "-n", "-o", ".venv/.installed", "lab"], cwd=REPO, capture_output=True, text=True)
    assert ("--allow-root" in dry.stdout) == (os.geteuid() == 0), dry.stdout
    answered, log = start_lab(REPO, tmp_path, ("-o", ".venv/.installed"))  # the venv as `make test` left it
    assert answered, log[-3000:]
