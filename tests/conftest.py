"""Set-up of every test run: test helpers (``nbtools``, ``corpus``, ``accounts``) import by name, and the
run is shared out between pytest-xdist workers (``make test`` passes ``-n``).

Each test file runs whole on one worker (its module fixtures, e.g. the graded corpus, are built once),
and so do the tests that read one lesson's executed notebook (``tests/lessons/test_notebooks.py``'s case for
lesson N runs beside ``tests/lessons/test_lessonN.py``, so :func:`nbtools.executed` runs that notebook once) and
the browser tests (one JupyterLab for all; the hub test is a group of its own). The groups start longest first (:data:`LONGEST_FIRST`), so
two workers end together.
"""

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: Groups that take longest, in order (from ``pytest --durations``); the rest follow in file order.
LONGEST_FIRST = ["corpus", "wheel", "chain", "dask_cluster", "lesson2", "grader_errors", "cli_workflow",
                 "no_answers_in_course", "readme_commands", "trusted", "hub", "browser", "lesson3", "lesson5", "exchange",
                 "lesson4", "cli_integration", "report", "feedback", "postgres_gradebook", "warm_sandbox",
                 "sandbox", "grader_users", "sample_class", "collect"]


def group_of(nodeid: str) -> str:
    """The group of a test (by its node id): its file's name without ``test_``; ``lessonN`` for
    ``tests/lessons/test_notebooks.py``'s case of lesson N; ``browser`` for the browser tests, ``hub`` for the hub's."""
    path = Path(nodeid.split("::")[0])
    if path.parent.name == "browser":
        return "hub" if path.name == "test_hub.py" else "browser"
    lesson = re.search(r"\[(lesson\d+)_", nodeid)
    if path.name == "test_notebooks.py" and lesson:
        return lesson.group(1)
    return path.stem.removeprefix("test_")


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


def pytest_collection_modifyitems(config, items):
    """On an xdist worker, the longest groups first (the scheduler hands out groups in this order)."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(group_of(item.nodeid), len(rank)))
