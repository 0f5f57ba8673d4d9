"""The nbgrader course directory the instructor commands work in, and the checks that catch their mistakes.

Every instructor command takes a course root (``--root``, default: the current directory when it holds
``nbgrader_config.py``, else this repository). A mistake raises :class:`CourseError` whose message says
what to do next.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from autograder import release as rel

REPO = rel.REPO


class CourseError(RuntimeError):
    """An instructor's mistake (unknown lesson, nothing to grade, wrong gradebook...); says what to do."""


def find_root(root: str | Path | None = None) -> Path:
    """The course root: ``root`` if given, else the current directory if it is a course, else the repo."""
    if root is not None:
        path = Path(root).resolve()
        if not (path / "nbgrader_config.py").is_file():
            raise CourseError(f"{path} is not a course directory (no nbgrader_config.py there); "
                              "pass --root with the folder that holds nbgrader_config.py and source/")
        return path
    here = Path.cwd()
    return here if (here / "nbgrader_config.py").is_file() else REPO


def course_id(root: Path) -> str:
    """``CourseDirectory.course_id`` of ``root/nbgrader_config.py`` (nbgrader's ``default_course`` if unset)."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    value = config.get("CourseDirectory", {}).get("course_id", "")
    return str(value) if value else "default_course"


def lessons(root: Path) -> list[str]:
    """The lessons (nbgrader assignments) of the course: the folders of ``source/`` that hold a notebook.

    A copy of the course without ``source/`` (the instructor's grading machine may hold only
    ``release/``) falls back to the folders of ``release/``.
    """
    for folder in ("source", "release"):
        base = Path(root) / folder
        if base.is_dir():
            found = sorted(p.name for p in base.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))
            if found:
                return found
    raise CourseError(f"no lessons in {root}/source or {root}/release: is --root the course directory?")


def check_lessons(names: list[str] | None, root: Path) -> list[str]:
    """``names`` if every one is a lesson of the course (all lessons when empty/None), else CourseError."""
    known = lessons(root)
    if not names:
        return known
    unknown = [name for name in names if name not in known]
    if unknown:
        raise CourseError(f"unknown lesson {', '.join(map(repr, unknown))}; the lessons of this course are: "
                          f"{', '.join(known)} (spell it as the folder name in source/)")
    return list(names)


def submitted(root: Path) -> dict[str, list[str]]:
    """``{student: [lessons]}`` found in ``root/submitted/<student>/<lesson>/*.ipynb``."""
    found: dict[str, list[str]] = {}
    base = Path(root) / "submitted"
    if base.is_dir():
        for notebook in sorted(base.glob("*/*/*.ipynb")):
            student, lesson = notebook.parent.parent.name, notebook.parent.name
            if lesson not in found.setdefault(student, []):
                found[student].append(lesson)
    return found


def check_submissions(root: Path, lessons_: list[str] | None = None,
                      students: list[str] | None = None) -> dict[str, list[str]]:
    """The submissions to grade; CourseError when there are none (or none for the chosen lessons/students)."""
    found = submitted(root)
    if not found:
        raise CourseError(f"no submissions in {Path(root) / 'submitted'}: collect them first with "
                          "`avgpool-course collect ARCHIVE_OR_FOLDER` (it places each notebook in "
                          "submitted/<student>/<lesson>/)")
    if students:
        missing = [s for s in students if s not in found]
        if missing:
            raise CourseError(f"no submissions from student {', '.join(map(repr, missing))} in submitted/; "
                              f"students there: {', '.join(sorted(found)[:20])}"
                              f"{' ...' if len(found) > 20 else ''}")
    chosen = {s: [l for l in ls if not lessons_ or l in lessons_] for s, ls in found.items()
              if not students or s in students}
    if not any(chosen.values()):
        raise CourseError(f"no submissions for lesson {', '.join(lessons_ or [])} in submitted/: collect them "
                          "first with `avgpool-course collect ARCHIVE_OR_FOLDER`")
    return {s: ls for s, ls in chosen.items() if ls}


def gradebook_path(root: Path) -> Path:
    return Path(root) / "gradebook.db"


def db_url(root: Path) -> str:
    return f"sqlite:///{gradebook_path(root)}"


def check_gradebook(root: Path, must_exist: bool = False) -> None:
    """Refuse a ``gradebook.db`` that belongs to another course.

    Its assignments' names and course ids are read without writing (SQLite read-only) and compared with
    this course's ``course_id`` (``nbgrader_config.py``) and lessons. ``must_exist``: a missing
    gradebook is an error too (nothing has been graded yet).
    """
    path = gradebook_path(root)
    if not path.exists():
        if must_exist:
            raise CourseError(f"no gradebook at {path}: grade the submissions first with `avgpool-course grade`")
        return
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            assignments = {row[0]: row[1] for row in db.execute("SELECT name, course_id FROM assignment")}
    except sqlite3.DatabaseError as exc:
        raise CourseError(f"{path} is not an nbgrader gradebook ({exc}); move it away "
                          f"(e.g. `mv {path.name} {path.name}.bak`) and grade again") from exc
    ours, known = course_id(root), set(lessons(root))
    # Assignments carry the course id. (The ``course`` table is no guide: nbgrader itself adds a
    # ``default_course`` row whenever one of its tools opens the gradebook without a course id.)
    foreign_courses = sorted({c for c in assignments.values() if c != ours})
    foreign_lessons = sorted(a for a in assignments if a not in known)
    if foreign_courses or foreign_lessons:
        what = []
        if foreign_courses:
            what.append(f"course id {', '.join(map(repr, foreign_courses))}")
        if foreign_lessons:
            what.append(f"assignment {', '.join(map(repr, foreign_lessons))}")
        raise CourseError(
            f"{path} belongs to another course ({' and '.join(what)}), but this course is {ours!r} with "
            f"lessons {', '.join(sorted(known))}. Move it away (e.g. `mv {path} {path.stem}-other.db`) "
            "or run the command in that course's folder (--root).")


def open_gradebook(root: Path):
    """``nbgrader.api.Gradebook`` on ``root/gradebook.db`` for this course (call :func:`check_gradebook` first).

    nbgrader runs the ``alembic`` command by name, so this interpreter's ``bin`` goes first on ``PATH``.
    """
    import os
    import sys

    from nbgrader.api import Gradebook

    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    return Gradebook(db_url(root), course_id=course_id(root))
