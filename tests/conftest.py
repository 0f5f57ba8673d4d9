"""Set-up of every test run: which tests are slow, and how a run is shared out between pytest-xdist workers.

Tests are laid out like the code (README, "Where a new test goes"): ``course/``, ``release/``, ``collect/``,
``grading/`` and ``results/`` test that part of the code, ``lessons/`` the lessons' notebooks, ``e2e/`` whole
chains and the repository as a whole, ``browser/`` JupyterLab and the hub in Chromium. The helpers (``shared``:
the repository's root and quick sandbox limits; ``nbtools``, ``corpus``, ``accounts``, ``workflow_fakes``,
``daemon``) lie in this folder and import by name.

A test is a group's: its file (``grading/test_corpus.py`` is ``corpus``), except that the tests that read one
lesson's executed notebook are that lesson's (``lessons/test_notebooks.py``'s case of lesson N runs beside
``lessons/test_lessonN.py``, so :func:`nbtools.executed` runs that notebook once) and the browser tests are
one group (one JupyterLab for all; the hub's test is a group of its own). Each group has a rough time
(:data:`SECONDS`, by group or else by folder), and that time decides two things:

* the ``slow`` marker: every test of a group of :data:`SLOW_SECONDS` or more is ``slow``, left out of
  ``make check`` (``pytest -m "not slow"``); a slow test in a quick group is marked by hand;
* under ``make test`` (``-n 2 --dist loadscope``) each group runs whole on one worker (its module fixtures,
  e.g. the graded corpus, are built once), and the groups start longest first, so two workers end together.
"""

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: Rough seconds of each group on one worker (measured 2026-12-07 with ``--durations`` on the shared 2-core
#: machine, rounded; the quick groups alone, the slow ones in ``make test`` runs), by group, else by the
#: folder of its file (a new file there starts as slow as its folder); a group named nowhere takes a few.
SECONDS = {
    # folders: a notebook run, a whole chain, sandboxed children, a class graded (browser: its group)
    "lessons": 60, "e2e": 60, "grading": 60, "results": 60, "collect": 60,
    # slow groups, longest first
    "corpus": 700, "cli_workflow": 270, "trusted": 260, "dask_cluster": 240, "wheel": 200, "chain": 195,
    "stopping": 140, "lesson2": 140, "cli_integration": 130, "lesson5": 120, "grader_errors": 120, "warm_sandbox": 115,
    "hub": 150, "readme_commands": 90, "floor": 85, "variants": 80, "hog": 75, "benchmarks": 70, "feedback": 70,
    "lesson3": 70, "browser": 70, "sandbox": 65, "grader_users": 50, "untrusted": 50,
    "exchange": 75, "lesson4": 40, "postgres_gradebook": 40, "report": 40,
    # quick groups (``make check``): course/ and release/ by default, and these
    "no_answers_in_course": 35, "attacks": 25, "given_cells": 25, "sandbox_channels": 20, "device_check": 7,
    "cgroups": 7, "sample_class": 2, "layout": 2, "lint": 1,
}

#: A group that takes this long (seconds) or longer is slow.
SLOW_SECONDS = 40

#: A group named nowhere in :data:`SECONDS`.
FEW_SECONDS = 3


def group_of(nodeid: str) -> str:
    """The group of a test (by its node id): its file's name without ``test_``; ``lessonN`` for
    ``lessons/test_notebooks.py``'s case of lesson N; ``browser`` for the browser tests, ``hub`` for the hub's."""
    path = Path(nodeid.split("::")[0])
    if path.parent.name == "browser":
        return "hub" if path.name == "test_hub.py" else "browser"
    lesson = re.search(r"\[(lesson\d+)_", nodeid)
    if path.name == "test_notebooks.py" and lesson:
        return lesson.group(1)
    return path.stem.removeprefix("test_")


def seconds_of(nodeid: str) -> int:
    """The rough time of a test's group (:data:`SECONDS`: the group's, else its folder's)."""
    group = group_of(nodeid)
    folder = Path(nodeid.split("::")[0]).parent.name
    return SECONDS.get(group, SECONDS.get(folder, FEW_SECONDS))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``--dist loadscope``, a scope is a group of :func:`group_of` (xdist's own ``loadgroup`` does
    not group under pytest 9: the group it appends to a node id is not what the scheduler reads)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByGroup(config, log)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Every test of a slow group is ``slow``; on an xdist worker, the longest groups first (the scheduler
    hands out groups in this order)."""
    for item in items:
        if seconds_of(item.nodeid) >= SLOW_SECONDS:
            item.add_marker(pytest.mark.slow)
    if "PYTEST_XDIST_WORKER" in os.environ:
        items.sort(key=lambda item: -seconds_of(item.nodeid))


@pytest.fixture
def grader_state():
    """``grader_state(run_seed=7, student="ann")``: the checks' grader state (:func:`course.checks.hooks.grading`)
    for the rest of the test, as the trusted grader sets it while it grades; each call enters one more
    ``grading`` block, and all are left (the state reset) when the test ends."""
    import contextlib

    from course.checks import hooks

    with contextlib.ExitStack() as stack:
        yield lambda **state: stack.enter_context(hooks.grading(**state))
