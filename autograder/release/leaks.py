"""What must never reach a student: solution text and hidden tests of ``source/``, files of ``autograder/``.

Used by ``release`` (a release that shows solution text fails its build) and ``bundle`` (which refuses to ship
a leak); the secret regions themselves are read by :mod:`autograder.lessontext`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import nbformat

from autograder.lessontext import (KINDS, Delimiters, cells_of, delimiters, markers, nbgrader_defaults, regions, visible_lines,
                                   secret_lines)


def release_leaks(source_nb, release_nb, delims: Delimiters | None = None) -> list[str]:
    """Solution or hidden-test text of ``source_nb`` that appears in ``release_nb`` (paths or nodes): a
    delimiter, or a secret line (:func:`secret_lines`) that stands in the release."""
    delims = delims or nbgrader_defaults()
    release_text = "\n".join(cell.source for cell in cells_of(release_nb))
    release_lines = {line.strip() for line in release_text.splitlines()}
    problems = [f"marker {m!r} in release" for m in markers(delims) if m in release_text]
    return problems + [f"secret line in release: {line[:70]!r}"
                       for line in sorted(secret_lines(source_nb, delims=delims) & release_lines)]


WINDOW = 3        # consecutive secret lines that, found together, are a leak
LONG_LINE = 60    # a secret line this long is a leak on its own


def _meaningful(lines) -> list[str]:
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


#: What a test cell calls to read the student's own numbers (:mod:`course.variants`): its hidden lines compute the key.
VARIANT_CALL = "variant("


def variant_key_lines(source_notebook, delims: Delimiters | None = None) -> set[str]:
    """The secret lines (:func:`secret_lines`: 13+ characters, no comment, nowhere visible) of the hidden tests
    of every test cell that draws a per-student variant: the only code that turns a student's numbers into the
    key, so each one found anywhere a student can read (``course/`` included) is a leak on its own."""
    delims = delims or nbgrader_defaults()
    secret = secret_lines(source_notebook, kinds=("HIDDEN TESTS",), delims=delims)
    lines: set[str] = set()
    for cell in cells_of(source_notebook):
        if VARIANT_CALL in cell.source:
            lines |= {line.strip() for line in regions(cell.source, *delims["HIDDEN TESTS"])[0]} & secret
    return lines


def secret_windows(source_notebook, delims: Delimiters | None = None) -> set[tuple[str, ...]]:
    """Runs of 3 consecutive meaningful lines of each solution or hidden-test region (40+ characters
    in all) and, as 1-tuples, single secret lines of 60+ characters that appear nowhere visible and every
    line that computes a variant's key (:func:`variant_key_lines`)."""
    delims = delims or nbgrader_defaults()
    found: set[tuple[str, ...]] = set()
    for cell in cells_of(source_notebook):
        for kind in KINDS:
            lines = _meaningful(regions(cell.source, *delims[kind])[0])
            found |= {tuple(lines[i:i + WINDOW]) for i in range(len(lines) - WINDOW + 1)
                      if sum(map(len, lines[i:i + WINDOW])) >= 40}
    found |= {(line,) for line in secret_lines(source_notebook, delims=delims) if len(line) >= LONG_LINE}
    found |= {(line,) for line in variant_key_lines(source_notebook, delims)}
    return found


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
    shown: set[str] = set()  # lines some lesson's release shows (lesson 1's output_size stub in lesson 2's key)
    for notebook in sorted((root / "source").glob("*/*.ipynb")):
        windows |= secret_windows(notebook, delims)
        shown |= visible_lines(notebook, delims)
    windows = {w for w in windows if len(w) > 1 or w[0] not in shown}
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
