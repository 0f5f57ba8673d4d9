"""What the tests share, defined once: the repository's root and the limits of a quick sandboxed child.
Imported by name (``from shared import REPO, FAST``: ``tests/conftest.py`` puts this folder on the path)."""

from pathlib import Path

from autograder.grading.sandbox import Limits

#: The repository's root (this file is ``tests/shared.py``).
REPO = Path(__file__).resolve().parents[1]

#: A test's child: a few CPU seconds per cell, a minute to start (a busy machine), 1 GiB, short output.
#: A test that needs more says what it changes: ``dataclasses.replace(FAST, test_seconds=10, ...)``.
FAST = Limits(test_seconds=5, cell_seconds=5, start_seconds=60, memory_bytes=1 << 30, output_chars=2000)
