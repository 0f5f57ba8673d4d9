"""Fixtures of the browser tests: the machine's Chromium, a screenshot folder, a loud skip policy.

Without Chromium the tests are skipped with a reason that says how to install it, and the terminal
summary repeats it in a warning block; with ``CI`` set (``CI=true``), a missing Chromium fails them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import labdriver

_NO_CHROMIUM = "browser test needs Chromium"
_SCREENSHOTS: list[Path] = []  # every screenshot taken this session, in order


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of the machine's Chromium; skips loudly without it (fails under CI)."""
    path = labdriver.find_chromium()
    if path is None:
        where = (f"$BROWSER_CHROMIUM={os.environ['BROWSER_CHROMIUM']} is not an executable"
                 if os.environ.get("BROWSER_CHROMIUM") else "none at /usr/bin/chromium or on PATH")
        reason = f"{_NO_CHROMIUM}, {where}: {labdriver.INSTALL_HINT}"
        if labdriver.in_ci():
            pytest.fail(f"CI is set and {reason}", pytrace=False)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="module")
def browser(chromium):
    """One headless Chromium per test module; each test opens its pages in fresh contexts of it
    (``labdriver.chromium_page``). Module scope: Playwright's sync API holds an event loop while it runs."""
    with labdriver.chromium_browser(chromium) as running:
        yield running


@pytest.fixture(scope="session")
def screenshot_root() -> Path:
    """``$BROWSER_SCREENSHOTS`` or ``screenshots/browser/`` at the repository root (gitignored)."""
    root = Path(os.environ.get("BROWSER_SCREENSHOTS") or labdriver.REPO / "screenshots" / "browser").resolve()
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture
def screenshots(screenshot_root: Path, request) -> tuple[Path, list[Path]]:
    """A fresh folder for this test's screenshots (``<root>/<test name>/``) and the list they go into."""
    folder = screenshot_root / request.node.name.replace("[", "-").replace("]", "")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shots: list[Path] = []
    yield folder, shots
    _SCREENSHOTS.extend(shots)


def pytest_terminal_summary(terminalreporter):
    skipped = [report for report in terminalreporter.stats.get("skipped", [])
               if _NO_CHROMIUM in str(getattr(report, "longrepr", ""))]
    if skipped:
        terminalreporter.section("BROWSER TESTS SKIPPED", sep="!", red=True, bold=True)
        terminalreporter.write_line(
            f"{len(skipped)} browser test(s) did NOT run: no Chromium on this machine. "
            "The student's JupyterLab was not checked.", red=True, bold=True)
        terminalreporter.write_line(f"To run them: {labdriver.INSTALL_HINT}", red=True)
    if _SCREENSHOTS:
        terminalreporter.section("browser screenshots")
        for path in _SCREENSHOTS:
            terminalreporter.write_line(str(path))
