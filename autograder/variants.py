"""The instructor's side of per-student variants (:mod:`course.variants` draws the numbers).

* ``c.Variants.enabled`` in ``nbgrader_config.py`` (default True): off, every student gets the lecture's
  numbers; ``avgpool-course release`` writes it into the shipped :mod:`course.term` (what the notebooks read).
* :func:`graded_identity`: whose numbers a submission is graded on: the student folder ``collect`` wrote
  (never anything the notebook says); ``None`` for a lesson without variants or with variants off.
* :func:`typed_id`: the id typed in a submitted notebook's id cell, read (never run), for the mismatch note.
* :func:`answers`: a student's numbers and the answers they give (office hours, the sample class); the
  graded key is computed by each lesson's own hidden test, never from here.
* :func:`new_term`: a new salt in :mod:`course.term`, refused once a lesson has graded submissions.
"""

from __future__ import annotations

import ast
import json
import re
import secrets
from functools import lru_cache
from pathlib import Path

from traitlets import Bool
from traitlets.config import Configurable

from autograder import coursedir
from course import term, variants

#: The cell tag of a lesson's id cell (the one that calls ``student_id("...")``).
ID_TAG = "student-id"
#: How a record's note about a notebook id that is not the graded identity begins (the report lists them).
MISMATCH = "variant id mismatch"


class Variants(Configurable):
    """Per-student variants of the exercises worked out by hand (``c.Variants.*`` in ``nbgrader_config.py``)."""

    enabled = Bool(True, help="Draw each student's own numbers for the exercises worked out by hand (lesson 1's "
                   "worked example, card shapes and knowledge check, lesson 2's predictions) from their identity and the term's salt, "
                   "and grade them on those; False: everyone gets the lecture's numbers").tag(config=True)


@lru_cache(maxsize=8)
def _enabled(root: str, stamp: float) -> bool:
    return bool(Variants(config=coursedir.course_config(Path(root))).enabled)


def enabled(root: Path) -> bool:
    """``c.Variants.enabled`` of course ``root`` (read again when ``nbgrader_config.py`` changes)."""
    config = Path(root) / "nbgrader_config.py"
    return _enabled(str(Path(root).resolve()), config.stat().st_mtime if config.exists() else 0.0)


def lessons() -> set[str]:
    """The lessons with exercises drawn per student."""
    return {lesson for lesson, _ in variants.DRAWS}


def graded_identity(root: Path, student: str, lesson: str) -> str | None:
    """The identity ``lesson`` of ``student`` (the folder name under ``submitted/``) is graded as: the
    student, or ``None`` (the lecture's numbers) when the lesson has no variants or they are off."""
    return student if lesson in lessons() and enabled(root) else None


def typed_id(sources: list[str]) -> str | None:
    """The id typed in a notebook's id cell: the string literal of its ``student_id("...")`` call, read
    from the cells' ``sources`` without running anything; ``None`` when there is none (or it is empty)."""
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "student_id" \
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                return node.args[0].value.strip() or None
    return None


def mismatch_note(notebook_cells: list, student: str, lesson: str) -> str | None:
    """The note a record keeps when the id typed in the notebook (cells of ``notebook_cells`` tagged
    :data:`ID_TAG`) is not the graded identity ``student`` (who is graded on their own numbers all the same)."""
    if lesson not in lessons():
        return None
    tagged = [c.get("source", "") for c in notebook_cells if isinstance(c, dict) and isinstance(c.get("metadata"), dict)
              and ID_TAG in (c["metadata"].get("tags") or [])]
    typed = typed_id(["".join(s) if isinstance(s, list) else str(s) for s in tagged])
    if typed is None or variants.normalized(typed) == variants.normalized(student):
        return None
    return (f"{MISMATCH}: the notebook's id cell says {typed[:80]!r}, graded as {student!r} "
            f"(on {student!r}'s own numbers)")


# ---------------------------------------------------------------------------------------------------
# Answers, for the instructor (the graded key is the hidden tests' own computation)

def _pool(matrix, kernel: int, stride: int, how: str) -> list[list[float]]:
    import torch
    import torch.nn.functional as F

    x = torch.tensor(matrix, dtype=torch.float64)[None, None]
    out = (F.avg_pool2d if how == "avg" else F.max_pool2d)(x, kernel, stride)
    return [[float(v) for v in row] for row in out[0, 0].tolist()]


def _side(size: int, kernel: int, stride: int, padding: int = 0) -> int:
    return (size + 2 * padding - kernel) // stride + 1


#: The lecture's correct option (its index before shuffling) of each multiple-choice question of lesson 1.
LESSON1_CORRECT = {"q3": 2, "q6": 0, "q10": 1}


def answers(student: str | None, lesson: str = "lesson1_by_hand", *, salt: str | None = None,
            enabled: bool | None = None) -> dict[str, dict]:
    """``{exercise: {"numbers": ..., "answers": {name: value}}}`` of ``student`` in ``lesson`` (the
    answers a complete student types by hand)."""
    if lesson not in lessons():
        raise ValueError(f"lesson: {lesson!r} has no per-student exercises (those with: {', '.join(sorted(lessons()))})")
    out: dict[str, dict] = {}
    for (name, exercise) in variants.DRAWS:
        if name != lesson:
            continue
        numbers = variants.draw(lesson, exercise, student, salt=salt, enabled=enabled)
        out[exercise] = {"numbers": numbers, "answers": _ANSWERS[(lesson, exercise)](numbers)}
    return out


def _worked(numbers: dict) -> dict:
    k, s = numbers["kernel_size"], numbers["stride"]
    return {"by_hand_avg": _pool(numbers["matrix"], k, s, "avg"), "by_hand_max": _pool(numbers["matrix"], k, s, "max")}


def _shapes(numbers: dict) -> dict:
    n1, n2, n3 = numbers["net1"], numbers["net2"], numbers["net3"]
    h1 = _side(_side(n1["input"][1], n1["conv_kernel"], 1), n1["pool"], n1["pool"])
    h3 = _side(n3["input"][1], n3["kernel_size"], n3["stride"], n3["padding"])
    return {"example1_shape": (n1["channels"], h1, h1), "example2_shape": (n2["input"][0], 1, 1),
            "example3_shape": (n3["input"][0], h3, h3)}


def _letters(numbers: dict) -> dict:
    return {q: "abc"[numbers[f"{q}_order"].index(correct)] for q, correct in LESSON1_CORRECT.items()}


def _predicted(numbers: dict) -> dict:
    from course import bugs

    checks = variants.lesson2_checks(numbers)
    return {name: bugs.first_failure(bug, checks) for name, bug in
            (("prediction_divisor", bugs.divisor_always_full), ("prediction_stride", bugs.stride_zero_ignored),
             ("prediction_padding", bugs.padding_one_side))}


#: The answers a complete student gives, per ``(lesson, exercise)``, from its numbers.
_ANSWERS = {("lesson1_by_hand", "worked_example"): _worked, ("lesson1_by_hand", "card_shapes"): _shapes,
            ("lesson1_by_hand", "knowledge_check"): _letters, ("lesson2_loops", "predictions"): _predicted}


def _matrix(name: str, rows: list[list[float]], digits: int) -> str:
    lines = [", ".join(f"{v:.{digits}f}" for v in row) for row in rows]
    indent = " " * len(f"{name} = np.array([")
    return f"{name} = np.array([[{lines[0]}],\n{indent}[{lines[1]}]])"


def hand_sources(student: str | None, sources: dict[str, str], lesson: str = "lesson1_by_hand", *,
                 enabled: bool | None = None) -> dict[str, str]:
    """``sources`` (solution sources by grade_id, e.g. the reference's) with the cells worked out by hand
    holding ``student``'s own answers typed as numbers and letters: what a complete student hands in."""
    own = answers(student, lesson, enabled=enabled)
    out = dict(sources)
    if lesson == "lesson2_loops":
        if "predictions" in out:
            text = out["predictions"]
            for name, value in own["predictions"]["answers"].items():
                text = re.sub(rf"(?m)^{name} = .*$", f"{name} = {value!r}", text)
            out["predictions"] = text
        return out
    worked, shapes, letters = (own[e]["answers"] for e in ("worked_example", "card_shapes", "knowledge_check"))
    out["worked_example"] = (_matrix("by_hand_avg", worked["by_hand_avg"], 2) + "\n"
                             + _matrix("by_hand_max", worked["by_hand_max"], 1))
    out["card_shapes"] = "\n".join(f"{name} = {tuple(value)}" for name, value in shapes.items())
    if "knowledge_check" in out:
        text = out["knowledge_check"]
        for q, letter in letters.items():
            text = re.sub(rf"(?m)^{q} = .*$", f"{q} = {json.dumps(letter)}", text)
        out["knowledge_check"] = text
    return out


# ---------------------------------------------------------------------------------------------------
# A new term

def graded_lessons(root: Path) -> list[str]:
    """The lessons with variants that have graded submissions in course ``root`` (records under ``records/``)."""
    return sorted(lesson for lesson in lessons() if any((Path(root) / "records" / lesson).glob("*.json")))


def term_file(root: Path) -> Path:
    """The term file of course ``root``: its own ``course/term.py`` (what its bundle ships to students). A course
    folder without one (a scratch copy, the sample class's) has no term of its own to change."""
    return Path(root) / "course" / "term.py"


def read_term(path: Path) -> tuple[str, bool]:
    """``(SALT, ENABLED)`` of a term file, read (never run)."""
    values = {}
    for node in ast.parse(Path(path).read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return str(values["SALT"]), bool(values["ENABLED"])


def write_term(root: Path, salt: str, enabled_: bool) -> Path:
    """Rewrite course ``root``'s term file (:func:`term_file`) with ``salt`` and ``enabled_`` (the rest kept);
    this process's :mod:`course.term` too when it is that file. Returns the file."""
    path = term_file(root)
    if not path.is_file():
        raise coursedir.CourseError(f"{path} does not exist: run this in the course folder whose course/ package "
                                    "students receive (--root)")
    if not re.fullmatch(r"[A-Za-z0-9._-]{4,64}", salt):
        raise coursedir.CourseError(f"--salt must be 4-64 letters, digits, '.', '_' or '-', got {salt!r}")
    text = path.read_text()
    text = re.sub(r"(?m)^SALT = .*$", f"SALT = {json.dumps(salt)}", text)
    text = re.sub(r"(?m)^ENABLED = .*$", f"ENABLED = {bool(enabled_)}", text)
    path.write_text(text)
    if path.resolve() == Path(term.__file__).resolve():
        term.SALT, term.ENABLED = salt, bool(enabled_)
    return path


def new_term(root: Path, salt: str | None = None, force: bool = False) -> str:
    """A new salt (``salt``, else a fresh one) in course ``root``'s term file: every student's numbers change.
    Refused while a lesson with variants has graded submissions (their grades were given on the old numbers)
    unless ``force``. Returns the new salt."""
    graded = graded_lessons(root)
    if graded and not force:
        raise coursedir.CourseError(f"a new salt changes every student's numbers, and {', '.join(graded)} already "
                                    "has graded submissions (records/) given on the current ones; start the new term "
                                    "in a fresh course folder, or pass --force to change it anyway")
    salt = salt or f"term-{secrets.token_hex(6)}"
    write_term(root, salt, read_term(term_file(root))[1] if term_file(root).is_file() else True)
    return salt


def sync_enabled(root: Path) -> bool:
    """Write ``c.Variants.enabled`` of course ``root`` into its own term file when they differ (the release
    step: the notebooks then show what grading uses); a course folder without a term file of its own is left
    alone. Returns whether the file changed."""
    path = term_file(root)
    if not path.is_file():
        return False
    salt, shipped = read_term(path)
    if enabled(root) == shipped:
        return False
    write_term(root, salt, enabled(root))
    return True


# ---------------------------------------------------------------------------------------------------
# What the instructor reads

def describe(student: str, lesson: str | None = None, root: Path | None = None) -> str:
    """A student's numbers and the answers they give, per exercise (``lesson``: one lesson, default every
    lesson with variants); says so when variants are off in course ``root``."""
    chosen = [lesson] if lesson else sorted(lessons())
    unknown = [name for name in chosen if name not in lessons()]
    if unknown:
        raise coursedir.CourseError(f"--lesson: {unknown[0]!r} has no per-student exercises (those with: "
                                    f"{', '.join(sorted(lessons()))})")
    on = enabled(root) if root is not None else term.ENABLED
    lines = [f"student {student!r} (graded as the folder submitted/{student}/), term salt {term.SALT!r}"
             + ("" if on else "; variants are OFF (c.Variants.enabled = False): everyone has the lecture's numbers")]
    for name in chosen:
        for exercise, both in answers(student if on else None, name).items():
            lines.append(f"{name} / {exercise}")
            lines.append(f"  numbers: {json.dumps(both['numbers'])}")
            for answer, value in both["answers"].items():
                lines.append(f"  {answer} = {value!r}")
    return "\n".join(lines)


def class_summary(root: Path, graded: dict[str, list[str]]) -> list[str]:
    """One line per lesson with variants: how many distinct variants the students ``graded`` (``{lesson:
    [student, ...]}``) received, per exercise, of how many students."""
    lines = []
    for lesson in sorted(set(graded) & lessons()):
        students = sorted(set(graded[lesson]))
        if not enabled(root):
            lines.append(f"{lesson}: variants off (c.Variants.enabled = False): {len(students)} students, one set "
                         "of numbers")
            continue
        counts = [f"{exercise} {len({json.dumps(variants.draw(lesson, exercise, s)) for s in students})}"
                  for (name, exercise) in variants.DRAWS if name == lesson]
        lines.append(f"{lesson}: {len(students)} students received distinct variants: {', '.join(counts)}")
    return lines
