"""The secret regions of a lesson's source notebook, as nbgrader marks them: the delimiters (nbgrader's, or the
course's ``nbgrader_config.py``), the solution and hidden-test lines, a solution cell without its markers, and
hidden-test lines redacted from a message. Read by ``release`` (:mod:`autograder.release.leaks`), the grader's
nbgrader step and ``feedback`` alike.
"""

from __future__ import annotations

import functools
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


def regions(source: str, begin: str, end: str) -> tuple[list[str], list[str]]:
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


def cells_of(notebook) -> list:
    """The cells of ``notebook`` (a path or a NotebookNode)."""
    return notebook.cells if hasattr(notebook, "cells") else nbformat.read(notebook, as_version=4).cells


def secret_lines(notebook, kinds: tuple[str, ...] = tuple(KINDS), delims: Delimiters | None = None) -> set[str]:
    """Non-trivial lines of the ``kinds`` regions of ``notebook`` (a source notebook: path or node) that
    are not also visible outside every secret region in it.

    A line counts when it is at least 13 characters long and not a comment.
    """
    delims = delims or nbgrader_defaults()
    secret: set[str] = set()
    for cell in cells_of(notebook):
        for kind in kinds:
            secret.update(regions(cell.source, *delims[kind])[0])
    visible = visible_lines(notebook, delims)
    return {line for line in secret - visible if len(line) >= MIN_LENGTH and not line.startswith("#")}


def visible_lines(notebook, delims: Delimiters | None = None) -> set[str]:
    """The lines of ``notebook`` (a source notebook) outside every secret region: what its release shows."""
    delims = delims or nbgrader_defaults()
    visible: set[str] = set()
    for cell in cells_of(notebook):
        outside = cell.source
        for kind in KINDS:
            outside = "\n".join(regions(outside, *delims[kind])[1])
        visible.update(line.strip() for line in outside.splitlines())
    return visible


def strip_markers(source: str, delims: Delimiters | None = None) -> str:
    """A solution cell as a student would write it: ``source`` without its delimiter lines."""
    found = markers(delims or nbgrader_defaults())
    return "\n".join(line for line in source.splitlines() if not any(m in line for m in found))


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
    public = "\n".join(c.source for c in cells_of(coursedir.notebook(root, "release", lesson)))
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
