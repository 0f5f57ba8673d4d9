"""Set-up of every test run: test helpers (``nbtools``, ``corpus``, ``accounts``) import by name, and the
run is shared out between pytest-xdist workers (``make test`` passes ``-n``).

Each test file runs whole on one worker (its module fixtures, e.g. the graded corpus, are built once),
and so do the tests that read one lesson's executed notebook (``tests/test_notebooks.py``'s case for
lesson N runs beside ``tests/test_lessonN.py``, so :func:`nbtools.executed` runs that notebook once) and
the browser tests (one JupyterLab for all). The groups start longest first (:data:`LONGEST_FIRST`), so
two workers end together.
"""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: Groups that take longest, in order (from ``pytest --durations``); the rest follow in file order.
LONGEST_FIRST = ["corpus", "wheel", "chain", "dask_cluster", "lesson2", "grader_errors", "cli_workflow",
                 "no_answers_in_course", "readme_commands", "trusted", "browser", "lesson3", "lesson5", "exchange",
                 "lesson4", "cli_integration", "report", "feedback", "postgres_gradebook", "warm_sandbox",
                 "sandbox", "grader_users", "sample_class", "collect"]


def group_of(item: pytest.Item) -> str:
    """The xdist group of a test: its file's name without ``test_`` (``lessonN`` for a lesson's
    notebook run, ``browser`` for the browser tests)."""
    path = Path(str(item.fspath))
    if path.parent.name == "browser":
        return "browser"
    lesson = getattr(item, "callspec", None) and item.callspec.params.get("lesson")
    if path.name == "test_notebooks.py" and isinstance(lesson, str):
        return lesson.split("_")[0]
    return path.stem.removeprefix("test_")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    if "PYTEST_XDIST_WORKER" not in os.environ:  # only xdist's workers collect under -n
        return
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group_of(item)))
    items.sort(key=lambda item: rank.get(group_of(item), len(rank)))
