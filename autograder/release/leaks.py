"""What must never reach a student: solution text and hidden tests of ``source/``, files of ``autograder/``.

Shared by the trusted grader's nbgrader step (which redacts hidden-test lines from the messages it writes
into feedback), ``feedback`` (which checks every page) and ``bundle`` (which refuses to ship a leak).
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

import nbformat

from autograder import coursedir

#: nbgrader's two kinds of secret region: the preprocessor and the traits that set their delimiters.
KINDS = {"SOLUTION": ("ClearSolutions", "begin_solution_delimeter", "end_solution_delimeter"),
         "HIDDEN TESTS": ("ClearHiddenTests", "begin_test_delimeter", "end_test_delimeter")}
MIN_LENGTH = 13  # shorter lines (``return out``, ``else:``) are too common to mean anything

Delimiters = dict  # {kind: (begin, end)}, kind one of KINDS


def nbgrader_defaults() -> Delimiters:
    """nbgrader's own delimiters (``BEGIN SOLUTION`` ... ``END HIDDEN TESTS``)."""
    from nbgrader import preprocessors

    found = {}
    for kind, (cls, begin, end) in KINDS.items():
        traits = getattr(preprocessors, cls).class_traits()
        found[kind] = (traits[begin].default_value, traits[end].default_value)
    return found


@functools.lru_cache(maxsize=16)
def _configured(root: str, stamp: tuple) -> tuple:
    found = nbgrader_defaults()
    if stamp:
        config = coursedir.course_config(root)
        for kind, (cls, begin, end) in KINDS.items():
            section = config.get(cls, {})
            found[kind] = (str(section.get(begin, found[kind][0])), str(section.get(end, found[kind][1])))
    return tuple(found.items())


def delimiters(root: Path | None = None) -> Delimiters:
    """The delimiters of the secret regions as course ``root``'s ``nbgrader_config.py`` sets them
    (``c.ClearSolutions.begin_solution_delimeter`` ...), nbgrader's defaults where it does not."""
    config = Path(root) / "nbgrader_config.py" if root is not None else None
    stamp = (config.stat().st_mtime_ns, config.stat().st_size) if config is not None and config.is_file() else ()
    return dict(_configured(str(Path(root).resolve()) if root is not None else "", stamp))


def markers(delims: Delimiters) -> list[str]:
    """Every delimiter, begin and end."""
    return [marker for pair in delims.values() for marker in pair]


def _regions(source: str, begin: str, end: str) -> tuple[list[str], list[str]]:
    """(lines inside ``begin``/``end`` regions, lines outside them) of one cell; marker lines are neither."""
    inside, secret, visible = False, [], []
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        else:
            (secret if inside else visible).append(line.strip())
    return secret, visible


def _cells(notebook) -> list:
    """The cells of ``notebook`` (a path or a NotebookNode)."""
    return notebook.cells if hasattr(notebook, "cells") else nbformat.read(notebook, as_version=4).cells


def secret_lines(notebook, kinds: tuple[str, ...] = tuple(KINDS), delims: Delimiters | None = None) -> set[str]:
    """Non-trivial lines of the ``kinds`` regions of ``notebook`` (a source notebook: path or node) that
    are not also visible outside every secret region in it.

    A line counts when it is at least 13 characters long and not a comment.
    """
    delims = delims or nbgrader_defaults()
    secret: set[str] = set()
    visible: set[str] = set()
    for cell in _cells(notebook):
        text = cell.source
        for kind in kinds:
            secret.update(_regions(text, *delims[kind])[0])
        outside = text
        for kind in KINDS:
            outside = "\n".join(_regions(outside, *delims[kind])[1])
        visible.update(line.strip() for line in outside.splitlines())
    return {line for line in secret - visible if len(line) >= MIN_LENGTH and not line.startswith("#")}


def release_leaks(source_nb, release_nb, delims: Delimiters | None = None) -> list[str]:
    """Solution or hidden-test text of ``source_nb`` that appears in ``release_nb`` (paths or nodes): a
    delimiter, or a secret line (:func:`secret_lines`) that stands in the release."""
    delims = delims or nbgrader_defaults()
    release_text = "\n".join(cell.source for cell in _cells(release_nb))
    release_lines = {line.strip() for line in release_text.splitlines()}
    problems = [f"marker {m!r} in release" for m in markers(delims) if m in release_text]
    return problems + [f"secret line in release: {line[:70]!r}"
                       for line in sorted(secret_lines(source_nb, delims=delims) & release_lines)]


def strip_markers(source: str, delims: Delimiters | None = None) -> str:
    """A solution cell as a student would write it: ``source`` without its delimiter lines."""
    found = markers(delims or nbgrader_defaults())
    return "\n".join(line for line in source.splitlines() if not any(m in line for m in found))


WINDOW = 3        # consecutive secret lines that, found together, are a leak
LONG_LINE = 60    # a secret line this long is a leak on its own


def _meaningful(lines) -> list[str]:
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def secret_windows(source_notebook, delims: Delimiters | None = None) -> set[tuple[str, ...]]:
    """Runs of 3 consecutive meaningful lines of each solution or hidden-test region (40+ characters
    in all) and, as 1-tuples, single secret lines of 60+ characters that appear nowhere visible."""
    delims = delims or nbgrader_defaults()
    found: set[tuple[str, ...]] = set()
    for cell in _cells(source_notebook):
        for kind in KINDS:
            lines = _meaningful(_regions(cell.source, *delims[kind])[0])
            found |= {tuple(lines[i:i + WINDOW]) for i in range(len(lines) - WINDOW + 1)
                      if sum(map(len, lines[i:i + WINDOW])) >= 40}
    found |= {(line,) for line in secret_lines(source_notebook, delims=delims) if len(line) >= LONG_LINE}
    return found


def course_secrets(root: Path, kinds: tuple[str, ...] = tuple(KINDS)) -> set[str]:
    """:func:`secret_lines` of every source notebook of the course."""
    found: set[str] = set()
    for notebook in sorted((Path(root) / "source").glob("*/*.ipynb")):
        found |= secret_lines(notebook, kinds, delimiters(root))
    return found


def hidden_test_lines(root: Path, lesson: str) -> set[str]:
    """Hidden-test lines of ``lesson``'s source notebook that students cannot already read in the
    release (a line written inside a visible one is public); empty when ``source/`` is absent."""
    if not (Path(root) / "source" / lesson).is_dir():
        return set()
    public = "\n".join(c.source for c in _cells(coursedir.notebook(root, "release", lesson)))
    hidden = secret_lines(coursedir.notebook(root, "source", lesson), ("HIDDEN TESTS",), delimiters(root))
    return {line for line in hidden if line not in public}


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
    delims = delimiters(root)
    windows: set[tuple[str, ...]] = set()
    for notebook in sorted((root / "source").glob("*/*.ipynb")):
        windows |= secret_windows(notebook, delims)
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
        problems += [f"{name}: nbgrader marker {m!r}" for m in markers(delims) if m in text]
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
