"""Without Chromium the browser tests never pass silently: a loud skip here, a failure under CI.

Not marked ``browser``: it runs everywhere (``$BROWSER_CHROMIUM`` pointed at a missing file stands for
a machine without Chromium), in a child pytest that stops at the Chromium fixture.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_without_chromium(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(BROWSER_CHROMIUM=str(tmp_path / "no-chromium-here"), BROWSER_SCREENSHOTS=str(tmp_path / "shots"))
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", str(HERE / "test_student_lab.py"), "-m", "browser",
                           "-k", "walkthrough", "-p", "no:cacheprovider", "-q"],
                          cwd=HERE.parents[1], env=env, capture_output=True, text=True, timeout=120)


def test_missing_chromium_skips_loudly(tmp_path):
    done = run_without_chromium(tmp_path, ci=None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout and "passed" not in done.stdout, done.stdout
    assert "BROWSER TESTS SKIPPED" in done.stdout, "no warning block in the terminal summary:\n" + done.stdout
    assert "apt-get install" in done.stdout, "the skip does not say how to install Chromium:\n" + done.stdout


def test_missing_chromium_fails_under_ci(tmp_path):
    done = run_without_chromium(tmp_path, ci="true")
    assert done.returncode != 0, done.stdout
    assert "skipped" not in done.stdout.splitlines()[-1], done.stdout
    assert "CI is set and browser test needs Chromium" in done.stdout, done.stdout
