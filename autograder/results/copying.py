"""Copying leads: pairs of students whose solution cells are much more alike than the class's usual.

A lead for a person, never a grade: nothing here changes a score. Each student's solution cells (in the
release notebook's order) are made alike where copying changes them: :func:`canonical` drops comments and
docstrings, writes constants one way and puts runs of independent statements in one order (Python's
``ast``); copydetect's winnowing over tokens (names as ``V``/``F``, strings as ``S``) then fingerprints the
result, with the release's own code of those cells (the stubs and what they give) as boilerplate, so a
class that starts from the same template is not alike for that. A pair's score is the mean of the shares
of each side's code found in the other; a pair is flagged when its score is at least :data:`FLOOR` and
far above the class's usual (:func:`threshold`: the median of all pairs plus six median absolute deviations),
or at least :data:`CEILING` whatever the class.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

#: copydetect's noise threshold (tokens per k-gram) and window: solution cells are short, so smaller than
#: its defaults (25 and 6); a match shorter than K tokens is never counted.
K, WINDOW = 12, 4
#: No pair scoring under this is flagged, however unlike the rest of the class is.
FLOOR = 0.6
#: How many median absolute deviations above the class's median score a flagged pair lies at least.
SPREAD = 6
#: A pair scoring this or more is flagged however spread out the class's scores are (in a class of varied
#: work six median absolute deviations can reach past 1, and then not even a copy word for word would be).
CEILING = 0.9

_MOVABLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom, ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef)


def _reads_writes(node: ast.stmt) -> tuple[set[str], set[str]]:
    """(names read, names written) by a movable statement; a definition reads nothing until called."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return set(), {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return set(), {(a.asname or a.name).split(".")[0] for a in node.names}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    written = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return read | (written if isinstance(node, ast.AugAssign) else set()), written


def _shape(node: ast.stmt) -> str:
    """A statement's text with every name alike: the sort key that renaming cannot change."""
    return re.sub(r"\b[A-Za-z_]\w*\b", "V", ast.unparse(node))


def _ordered(statements: list[ast.stmt]) -> list[ast.stmt]:
    """``statements`` with each run of consecutive independent assignments, imports and definitions
    (none writes a name another of the run reads or writes) sorted by :func:`_shape`; a statement that
    depends on one of the run starts the next run."""
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []
    read: set[str] = set()
    written: set[str] = set()

    def flush() -> None:
        out.extend(sorted(run, key=_shape))
        run.clear()
        read.clear()
        written.clear()

    for statement in statements:
        if not isinstance(statement, _MOVABLE):
            flush()
            out.append(statement)
            continue
        reads, writes = _reads_writes(statement)
        if writes & (read | written) or reads & written:
            flush()
        run.append(statement)
        read.update(reads)
        written.update(writes)
    flush()
    return out


def canonical(source: str) -> str:
    """``source`` as :mod:`ast` writes it back: no comments, docstrings or blank lines, one spelling per
    constant, independent statements in one order. Text that is not Python loses only its comment lines."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "\n".join(line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                setattr(node, name, _ordered(statements))
    return ast.unparse(tree)


@dataclass
class Pair:
    """Two students' code (canonical), its score (0..1) and the matched character ranges in each."""

    a: str
    b: str
    score: float
    code_a: str
    code_b: str
    spans_a: list[tuple[int, int]]
    spans_b: list[tuple[int, int]]


def _fingerprint(code: str, boilerplate: list):
    import copydetect

    return copydetect.CodeFingerprint("cells.py", K, WINDOW, boilerplate=boilerplate, language="python",
                                      fp=io.StringIO(code))


def _stable_kgrams(string: str, k: int):
    """copydetect's ``hashed_kgrams`` with a hash that is the same in every process: its own uses Python's
    ``hash``, salted per process (PYTHONHASHSEED), so winnowing kept other k-grams on each run and a pair's
    score moved by up to 0.08 between two runs on the same class."""
    import numpy as np

    return np.array([int.from_bytes(hashlib.blake2b(string[i:i + k].encode(), digest_size=8).digest(), "little",
                                    signed=True) for i in range(len(string) - k + 1)], dtype=np.int64)


@contextlib.contextmanager
def _stable_hashes():
    """copydetect fingerprints with :func:`_stable_kgrams` while the block runs (its own function restored)."""
    from copydetect import utils

    own = utils.hashed_kgrams
    utils.hashed_kgrams = _stable_kgrams
    try:
        yield
    finally:
        utils.hashed_kgrams = own


def compare(codes: dict[str, str], template: str = "") -> list[Pair]:
    """Every pair of ``codes`` (``{student: code}``, each made :func:`canonical` here), highest score
    first; ``template``: the release's own code of the same cells, never counted as alike. The scores are
    the same in every run (:func:`_stable_kgrams`)."""
    import copydetect

    canon = {student: canonical(code) for student, code in codes.items()}
    with _stable_hashes():
        boilerplate = list(_fingerprint(canonical(template), []).hashes) if template.strip() else []
        prints = {student: _fingerprint(code, boilerplate) for student, code in canon.items()}
    students = sorted(prints)
    pairs = []
    for i, a in enumerate(students):
        for b in students[i + 1:]:
            _, (share_a, share_b), (spans_a, spans_b) = copydetect.compare_files(prints[a], prints[b])
            pairs.append(Pair(a, b, float(share_a + share_b) / 2, canon[a], canon[b],
                              [tuple(map(int, s)) for s in zip(*spans_a)] if len(spans_a) else [],
                              [tuple(map(int, s)) for s in zip(*spans_b)] if len(spans_b) else []))
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def threshold(pairs: list[Pair]) -> float:
    """The score above which a pair is far above the class's usual: the median of all pairs plus
    :data:`SPREAD` median absolute deviations (robust: copies, a few pairs, do not move it), at least
    :data:`FLOOR` and at most :data:`CEILING`."""
    import pandas as pd

    if not pairs:
        return FLOOR
    scores = pd.Series([p.score for p in pairs])
    median = scores.median()
    return max(FLOOR, min(CEILING, float(median + SPREAD * (scores - median).abs().median())))


def flagged(pairs: list[Pair]) -> list[Pair]:
    """The pairs at or above :func:`threshold`, highest first."""
    limit = threshold(pairs)
    return [p for p in pairs if p.score >= limit]


def _solution_cells(path: Path, ids: list[str] | None = None) -> dict[str, str]:
    """``{grade_id: source}`` of a notebook's code solution cells (only ``ids``, in their order, when given);
    empty when the file is no notebook."""
    import nbformat

    try:
        cells = nbformat.read(path, as_version=4).cells
    except Exception:  # a broken hand-in: the grader reports it; here it has no code to compare
        return {}
    found = {}
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("solution") and meta.get("grade_id"):
            found.setdefault(str(meta["grade_id"]), str(cell.get("source", "")))
    return {i: found[i] for i in ids if i in found} if ids is not None else found


@dataclass
class Lesson:
    """One lesson's pairs (highest first), its threshold and the flagged pairs."""

    lesson: str
    pairs: list[Pair]
    threshold: float
    flagged: list[Pair]


def lesson_pairs(root: Path, lesson: str) -> Lesson:
    """Compare every two hand-ins of ``lesson`` under ``root/submitted`` (their code solution cells that
    differ from the release's, in the release notebook's order), the release's code of those cells as the
    template; a hand-in with no such cell is left out."""
    from autograder import coursedir

    template = _solution_cells(coursedir.notebook(root, "release", lesson))
    ids = list(template)
    codes = {}
    for path in sorted((Path(root) / "submitted").glob(f"*/{lesson}/*.ipynb")):
        written = [text for grade_id, text in _solution_cells(path, ids).items()  # a cell left as the stub says nothing
                   if text.strip() and text.strip() != template[grade_id].strip()]
        if written:
            codes[path.parent.parent.name] = "\n\n".join(written)
    pairs = compare(codes, "\n\n".join(template.values()))
    return Lesson(lesson, pairs, threshold(pairs), flagged(pairs))


def marked(code: str, spans: list[tuple[int, int]]) -> str:
    """``code`` as HTML (escaped) with each span in ``<mark>``."""
    from markupsafe import escape

    out, at = [], 0
    for start, end in sorted(spans):
        start = max(start, at)
        out += [str(escape(code[at:start])), f"<mark>{escape(code[start:end])}</mark>"]
        at = max(at, end)
    return "".join(out) + str(escape(code[at:]))


def figure(lessons: list[Lesson]):
    """One histogram per lesson of its pairs' scores, with the flagging threshold as a red line."""
    import matplotlib.pyplot as plt

    shown = [lesson for lesson in lessons if lesson.pairs]
    fig, axes = plt.subplots(1, max(1, len(shown)), figsize=(3.2 * max(1, len(shown)), 2.6), squeeze=False,
                             sharey=True, layout="constrained")
    for ax, lesson in zip(axes[0], shown):
        ax.hist([p.score for p in lesson.pairs], bins=[i / 20 for i in range(21)], color="#4878a8")
        ax.axvline(lesson.threshold, color="#c0504d")
        ax.set_title(f"{lesson.lesson.split('_')[0]} ({len(lesson.pairs)} pairs)", fontsize=9)
        ax.set_xlabel("score (share alike)")
    axes[0][0].set_ylabel("pairs of students")
    return fig


def page(root: Path, lessons: list[str], shown: int = 5) -> tuple[str, list[Lesson]]:
    """The copying page's HTML and each lesson's pairs: the class's distribution, the top pairs and, for the
    flagged ones (at most ``shown`` per lesson), both students' code side by side with the alike parts marked."""
    from autograder.results import report, templates

    found = [lesson_pairs(root, lesson) for lesson in lessons]
    picture = report._png(figure(found)) if any(lesson.pairs for lesson in found) else ""
    views = [{"lesson": lesson.lesson, "threshold": f"{lesson.threshold:.2f}", "pairs": len(lesson.pairs),
              "top": [[f"{p.score:.2f}", p.a, p.b, "flagged" if p in lesson.flagged else ""] for p in lesson.pairs[:10]],
              "sides": [{"a": p.a, "b": p.b, "score": f"{p.score:.2f}", "code_a": marked(p.code_a, p.spans_a),
                         "code_b": marked(p.code_b, p.spans_b)} for p in lesson.flagged[:shown]]}
             for lesson in found]
    return templates.render("copying.html.j2", lessons=views, picture=picture, floor=FLOOR, spread=SPREAD,
                            ceiling=CEILING), found


def write_page(root: Path, out: Path, lessons: list[str]) -> tuple[Path, list[Lesson]]:
    """Write :func:`page` to ``out`` (``reports/copying.html``); returns it and each lesson's pairs."""
    html, found = page(root, lessons)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out, found


def top_pair(lesson: Lesson) -> str:
    """The lesson's top pair, its score and whether it is flagged, in words."""
    if not lesson.pairs:
        return "top copy pair: none (fewer than two hand-ins with code)"
    top = lesson.pairs[0]
    return (f"top copy pair {top.a} and {top.b}: {top.score:.2f} "
            f"({'flagged' if top in lesson.flagged else 'not flagged'}, line at {lesson.threshold:.2f}; "
            f"{len(lesson.flagged)} of {len(lesson.pairs)} pairs flagged)")


def summary_lines(found: list[Lesson]) -> list[str]:
    """One line per lesson: how many pairs are flagged and the top pair's score."""
    return [f"{lesson.lesson}: {len(lesson.flagged)} of {len(lesson.pairs)} pairs flagged (line at "
            f"{lesson.threshold:.2f})" + (f"; top pair {lesson.pairs[0].a} and {lesson.pairs[0].b}: "
                                          f"{lesson.pairs[0].score:.2f}" if lesson.pairs else "")
            for lesson in found]
