"""What must never reach a student: solution text and hidden tests of ``source/``, files of ``autograder/``.

Shared by the trusted grader's nbgrader step (which redacts hidden-test lines from the messages it writes
into feedback), ``feedback`` (which checks every page) and ``bundle`` (which refuses to ship a leak).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import nbformat

MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
MIN_LENGTH = 13  # shorter lines (``return out``, ``else:``) are too common to mean anything


def _regions(source: str, kind: str) -> tuple[list[str], list[str]]:
    """(lines inside ``### BEGIN kind``/``### END kind`` regions, lines outside them) of one cell."""
    inside, secret, visible = False, [], []
    for line in source.splitlines():
        if f"### BEGIN {kind}" in line:
            inside = True
        elif f"### END {kind}" in line:
            inside = False
        else:
            (secret if inside else visible).append(line.strip())
    return secret, visible


def secret_lines(source_notebook: Path, kinds: tuple[str, ...] = ("SOLUTION", "HIDDEN TESTS")) -> set[str]:
    """Non-trivial lines of the notebook's secret regions that are not also visible elsewhere in it.

    A line counts when it is at least 13 characters long and not a comment.
    """
    nb = nbformat.read(source_notebook, as_version=4)
    secret: set[str] = set()
    visible: set[str] = set()
    for cell in nb.cells:
        text = cell.source
        for kind in kinds:
            hidden, _ = _regions(text, kind)
            secret.update(hidden)
        outside = text
        for kind in ("SOLUTION", "HIDDEN TESTS"):
            outside = "\n".join(_regions(outside, kind)[1])
        visible.update(line.strip() for line in outside.splitlines())
    return {line for line in secret - visible if len(line) >= MIN_LENGTH and not line.startswith("#")}


WINDOW = 3        # consecutive secret lines that, found together, are a leak
LONG_LINE = 60    # a secret line this long is a leak on its own


def _meaningful(lines) -> list[str]:
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def secret_windows(source_notebook: Path) -> set[tuple[str, ...]]:
    """Runs of 3 consecutive meaningful lines of each solution or hidden-test region (40+ characters
    in all) and, as 1-tuples, single secret lines of 60+ characters that appear nowhere visible."""
    nb = nbformat.read(source_notebook, as_version=4)
    found: set[tuple[str, ...]] = set()
    for cell in nb.cells:
        for kind in ("SOLUTION", "HIDDEN TESTS"):
            lines = _meaningful(_regions(cell.source, kind)[0])
            found |= {tuple(lines[i:i + WINDOW]) for i in range(len(lines) - WINDOW + 1)
                      if sum(map(len, lines[i:i + WINDOW])) >= 40}
    found |= {(line,) for line in secret_lines(source_notebook) if len(line) >= LONG_LINE}
    return found


def course_secrets(root: Path, kinds: tuple[str, ...] = ("SOLUTION", "HIDDEN TESTS")) -> set[str]:
    """:func:`secret_lines` of every source notebook of the course."""
    found: set[str] = set()
    for notebook in sorted((Path(root) / "source").glob("*/*.ipynb")):
        found |= secret_lines(notebook, kinds)
    return found


def hidden_test_lines(root: Path, lesson: str) -> set[str]:
    """Hidden-test lines of ``lesson``'s source notebook that students cannot already read in the
    release (a line written inside a visible one is public); empty when ``source/`` is absent."""
    notebooks = sorted((Path(root) / "source" / lesson).glob("*.ipynb"))
    releases = sorted((Path(root) / "release" / lesson).glob("*.ipynb"))
    if not notebooks:
        return set()
    public = "\n".join(c.source for r in releases[:1] for c in nbformat.read(r, as_version=4).cells)
    return {line for line in secret_lines(notebooks[0], ("HIDDEN TESTS",)) if line not in public}


def redact(text: str, hidden: set[str]) -> str:
    """``text`` with every line that quotes a hidden line replaced by ``[hidden test line]``."""
    if not hidden:
        return text
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if any(h in stripped for h in hidden) or (len(stripped) >= MIN_LENGTH and stripped in hidden):
            out.append(re.match(r"\s*", line).group(0) + "[hidden test line]")
        else:
            out.append(line)
    return "\n".join(out)


def digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def scan(folder: Path, root: Path) -> list[str]:
    """Everything in ``folder`` (a student bundle, feedback...) that gives away what students must not see.

    * a file byte-identical to a file of ``root/source`` or ``root/autograder``;
    * a path with a ``source`` or ``autograder`` folder in it;
    * nbgrader's solution or hidden-test markers, or a secret line of a source notebook, in any text file.
    """
    folder, root = Path(folder), Path(root)
    forbidden = {}
    for top in ("source", "autograder"):
        for path in (root / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.stat().st_size > 0:
                forbidden[digest(path)] = f"{top}/{path.relative_to(root / top)}"
    windows: set[tuple[str, ...]] = set()
    for notebook in sorted((root / "source").glob("*/*.ipynb")):
        windows |= secret_windows(notebook)
    problems = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        name = path.relative_to(folder).as_posix()
        if {"source", "autograder"} & set(path.relative_to(folder).parts[:-1]):
            problems.append(f"{name}: a source/ or autograder/ folder")
        copy_of = forbidden.get(digest(path))
        if copy_of:
            problems.append(f"{name}: a copy of {copy_of}")
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        problems += [f"{name}: nbgrader marker {m!r}" for m in MARKERS if m in text]
        blocks = [text]
        if path.suffix == ".ipynb":  # compare cell sources line by line (JSON escapes them)
            try:
                blocks = [cell.source for cell in nbformat.reads(text, as_version=4).cells]
            except Exception:
                pass
        present: set[tuple[str, ...]] = set()
        for block in blocks:
            lines = _meaningful(block.splitlines())
            present |= {(line,) for line in lines}
            present |= {tuple(lines[i:i + WINDOW]) for i in range(len(lines) - WINDOW + 1)}
        problems += [f"{name}: solution or hidden-test text {' / '.join(w)[:90]!r}"
                     for w in sorted(present & windows)]
    return problems
