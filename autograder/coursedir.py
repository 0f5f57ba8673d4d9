"""The nbgrader course directory the instructor commands work in, and the checks that catch their mistakes.

Every instructor command takes a course root (``--root``, default: the current directory when it holds
``nbgrader_config.py``, else this repository). A mistake raises :class:`CourseError` whose message says
what to do next.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class CourseError(RuntimeError):
    """An instructor's mistake (unknown lesson, nothing to grade, wrong gradebook...); says what to do.
    Every error the instructor commands raise on purpose is one (release, lesson, grading, bundle), and the
    command line prints its message and exits 2."""


def copy_course(root: Path, destination: Path, lessons_: list[str] | None = None,
                folders: tuple[str, ...] = ("source", "release")) -> Path:
    """A course folder at ``destination``: ``folders`` of ``lessons_`` (default: every lesson) and the
    ``nbgrader_config.py`` of course ``root``, without checkpoints or caches. Returns ``destination``."""
    import shutil

    root, destination = Path(root), Path(destination)
    for lesson in lessons_ or lessons(root):
        for folder in folders:
            if (root / folder / lesson).is_dir():
                shutil.copytree(root / folder / lesson, destination / folder / lesson,
                                ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    destination.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / "nbgrader_config.py", destination / "nbgrader_config.py")
    return destination


def find_root(root: str | Path | None = None) -> Path:
    """The course root: ``root`` if given, else the current directory if it is a course, else the repo."""
    if root is not None:
        path = Path(root).resolve()
        if not (path / "nbgrader_config.py").is_file():
            raise CourseError(f"{path} is not a course directory (no nbgrader_config.py there); "
                              "pass --root with the folder that holds nbgrader_config.py and source/")
    else:
        path = Path.cwd() if (Path.cwd() / "nbgrader_config.py").is_file() else REPO
    check_config(path)
    return path


def check_config(root: Path = REPO) -> None:
    """Raise :class:`CourseError` (one sentence) if ``root/nbgrader_config.py`` fails to load: nbgrader
    only logs such an error and goes on with its defaults (stubs that raise at the top level, no trusted
    grading), so no command goes on with it."""
    try:
        course_config(root)
    except Exception as exc:  # noqa: BLE001 - any error: nbgrader would ignore the whole file
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise CourseError(f"{Path(root) / 'nbgrader_config.py'} does not load ({detail}); nbgrader would silently "
                          "ignore it, so nothing is done: fix the file and run the command again") from exc


def course_config(root: Path):
    """The traitlets ``Config`` of course ``root``: its ``nbgrader_config.py``, loaded afresh (empty if it
    has none); errors in the file propagate."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    if not (Path(root) / "nbgrader_config.py").is_file():
        return Config()
    return PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()


def _course_setting(root: Path, name: str) -> str:
    """``CourseDirectory.<name>`` of ``root/nbgrader_config.py`` ("" if unset, or if there is no such file)."""
    return str(course_config(root).get("CourseDirectory", {}).get(name, "") or "")


def course_id(root: Path) -> str:
    """``CourseDirectory.course_id`` of ``root/nbgrader_config.py`` (nbgrader's ``default_course`` if unset)."""
    return _course_setting(root, "course_id") or "default_course"


def lessons(root: Path = REPO, *, released: bool = False) -> list[str]:
    """The lessons (nbgrader assignments) of the course: the folders of ``source/`` that hold a notebook
    (with ``released``: only those that also have one in ``release/``), sorted.

    A copy of the course without ``source/`` (the instructor's grading machine may hold only
    ``release/``) falls back to the folders of ``release/``.
    """
    def holds_notebook(folder: Path) -> bool:
        return folder.is_dir() and any(folder.glob("*.ipynb"))

    for folder in ("source", "release"):
        base = Path(root) / folder
        if base.is_dir():
            found = sorted(p.name for p in base.iterdir() if holds_notebook(p)
                           and (not released or holds_notebook(Path(root) / "release" / p.name)))
            if found:
                return found
    raise CourseError(f"no lessons in {root}/source or {root}/release: is --root the course directory?")


def notebook(root: Path, folder: str, lesson: str) -> Path:
    """The one notebook of ``lesson`` in ``folder`` (``source``, ``release``...) of course ``root``."""
    found = sorted((Path(root) / folder / lesson).glob("*.ipynb"))
    if len(found) != 1:
        raise CourseError(f"{folder}/{lesson} must hold exactly one notebook, found {len(found)}")
    return found[0]


def check_lessons(names: list[str] | None, root: Path, *, released: bool = False) -> list[str]:
    """``names`` if every one is a lesson of the course (all lessons when empty/None), else CourseError."""
    known = lessons(root, released=released)
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
    """Where the default SQLite gradebook lives (see :func:`db_url` for the one in use)."""
    return Path(root) / "gradebook.db"


def db_url(root: Path) -> str:
    """The gradebook's SQLAlchemy URL: ``CourseDirectory.db_url`` of the course's configuration (e.g.
    ``postgresql+psycopg://grader@db.example/course``), else ``sqlite:///<root>/gradebook.db``."""
    return _course_setting(root, "db_url") or f"sqlite:///{gradebook_path(root)}"


def gradebook_name(root: Path) -> str:
    """The gradebook as an instructor would name it: the SQLite file, or the URL without its password."""
    url = db_url(root)
    if url.startswith("sqlite:///"):
        return url[len("sqlite:///"):]
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _assignments(url: str) -> dict[str, str] | None:
    """``{assignment: course id}`` of the gradebook at ``url``, read without creating or changing
    anything; ``None`` when there is no gradebook there yet."""
    import sqlalchemy

    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///"):])
        if not path.exists():
            return None
        url = f"sqlite:///file:{path}?mode=ro&uri=true"
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as connection:
            if not sqlalchemy.inspect(connection).has_table("assignment"):
                return None
            return {row[0]: row[1] for row in connection.execute(sqlalchemy.text(
                "SELECT name, course_id FROM assignment"))}
    finally:
        engine.dispose()


def gradebook_exists(root: Path) -> bool:
    """Whether the course's gradebook holds nbgrader's tables (a graded course)."""
    return _assignments(db_url(root)) is not None


def check_gradebook(root: Path, must_exist: bool = False) -> None:
    """Refuse a gradebook that belongs to another course (SQLite file or database server alike).

    Its assignments' names and course ids are read without writing and compared with this course's
    ``course_id`` (``nbgrader_config.py``) and lessons. ``must_exist``: a missing gradebook is an error
    too (nothing has been graded yet).
    """
    import sqlalchemy.exc

    name = gradebook_name(root)
    try:
        assignments = _assignments(db_url(root))
    except sqlalchemy.exc.ArgumentError as exc:
        raise CourseError(f"CourseDirectory.db_url in {Path(root) / 'nbgrader_config.py'} is not a database URL "
                          f"({exc}); write it as sqlite:///PATH or postgresql+psycopg://USER@HOST/DATABASE") from exc
    except sqlalchemy.exc.DBAPIError as exc:
        first = str(exc.orig or exc).strip().splitlines()[0]
        if url_is_sqlite(root):
            raise CourseError(f"{name} is not an nbgrader gradebook ({first}); move it away "
                              f"(e.g. `mv {name} {name}.bak`) and grade again") from exc
        raise CourseError(f"the gradebook {name} cannot be read ({first}); check that the database server "
                          "runs and that CourseDirectory.db_url in nbgrader_config.py is right") from exc
    except ModuleNotFoundError as exc:
        raise CourseError(f"the gradebook {name} needs the database driver {exc.name}; install it with "
                          "pip install '.[postgres]'") from exc
    if assignments is None:
        if must_exist:
            raise CourseError(f"no gradebook at {name}: grade the submissions first with `avgpool-course grade`")
        return
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
        hint = (f"Move it away (e.g. `mv {name} {Path(name).stem}-other.db`)" if url_is_sqlite(root)
                else "Point CourseDirectory.db_url at this course's own database")
        raise CourseError(
            f"{name} belongs to another course ({' and '.join(what)}), but this course is {ours!r} with "
            f"lessons {', '.join(sorted(known))}. {hint} or run the command in that course's folder (--root).")


def url_is_sqlite(root: Path) -> bool:
    return db_url(root).startswith("sqlite:")


def open_gradebook(root: Path, course: str | None = None):
    """``nbgrader.api.Gradebook`` on the course's gradebook (:func:`db_url`; call :func:`check_gradebook` first),
    which adds the row of ``course`` (default: the course's own id, :func:`course_id`) where it is missing.

    nbgrader runs the ``alembic`` command by name, so this interpreter's ``bin`` goes first on ``PATH``.
    """
    from nbgrader.api import Gradebook

    put_bin_on_path()
    return Gradebook(db_url(root), course_id=course or course_id(root))


def ensure_assignment(root: Path, lesson: str) -> None:
    """Make sure the gradebook knows ``lesson`` (nbgrader needs its cells): ``nbgrader generate_assignment``, in
    this process, into a scratch folder; ``release/`` is left alone."""
    from nbgrader.api import MissingEntry

    if gradebook_exists(root):
        with open_gradebook(root) as gb:
            try:
                if gb.find_assignment(lesson).notebooks:
                    return
            except MissingEntry:
                pass
    config = course_config(root)
    with tempfile.TemporaryDirectory(prefix="release-scratch-") as scratch:
        config.CourseDirectory.release_directory = scratch
        result = nbgrader_api(root, config,
                              lambda api: api.generate_assignment(lesson, force=True, create=True))
    if not result.get("success"):
        raise CourseError(f"nbgrader could not add {lesson} to the gradebook:\n{result.get('log', '')[-2000:]}"
                          f"\n{result.get('error', '')[-2000:]}")


def put_bin_on_path() -> None:
    """This interpreter's ``bin`` on this process's ``PATH`` (nbgrader runs ``alembic`` by name)."""
    if _bin_dir() not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = _with_bin_first(os.environ)


def _bin_dir() -> str:
    return str(Path(sys.executable).parent)


def _with_bin_first(env) -> str:
    return _bin_dir() + os.pathsep + env.get("PATH", "")


def tool_env(**more: str) -> dict:
    """The environment of nbgrader's (and the grader's) child processes: this interpreter's ``bin`` first on
    ``PATH`` (nbgrader runs ``alembic`` and ``jupyter`` by name), library warnings off, plots off-screen."""
    return dict(os.environ, PATH=_with_bin_first(os.environ), PYTHONWARNINGS="ignore", MPLBACKEND="Agg", **more)


class SchemaCheckedOnce:
    """``jsonschema`` as nbgrader's cell-metadata validator calls it (``jsonschema.validate(metadata, schema)``),
    with each schema checked once: ``jsonschema.validate`` checks the schema itself again on every call, a fifth
    of ``autograde``'s time. The result and the error raised (``best_match``) are ``jsonschema.validate``'s."""

    def __init__(self):
        self._validators: dict[int, tuple] = {}

    def validate(self, instance, schema) -> None:
        import jsonschema

        entry = self._validators.get(id(schema))
        if entry is None or entry[0] is not schema:
            kind = jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)
            entry = self._validators[id(schema)] = (schema, kind(schema))
        error = jsonschema.exceptions.best_match(entry[1].iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name: str):  # the rest of jsonschema, unchanged
        import jsonschema

        return getattr(jsonschema, name)


def nbgrader_api(root: Path, config, call):
    """``call(api)`` with nbgrader's API on course ``root`` in this process (``config``: the course's, see
    :func:`autograder.coursedir.course_config`, with any settings of the caller's), warnings silenced as the
    command runs (PYTHONWARNINGS=ignore), cell metadata validated against schemas checked once
    (:class:`SchemaCheckedOnce`, for this call only)."""
    import warnings

    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.nbgraderformat import common as metadata_format

    config.CourseDirectory.root = str(root)
    put_bin_on_path()
    original = metadata_format.jsonschema
    metadata_format.jsonschema = SchemaCheckedOnce()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(NbGraderAPI(coursedir=CourseDirectory(config=config), config=config))
    finally:
        metadata_format.jsonschema = original


#: ``python -m nbgrader`` (nbgrader's ``__main__``), this package imported first (see ``autograder/__init__.py``).
NBGRADER_MAIN = "import autograder; from nbgrader.apps.nbgraderapp import main; main()"


def run_nbgrader(root: Path, *args: str, db_url: str | None = None) -> subprocess.CompletedProcess:
    """One ``nbgrader`` command in course ``root`` (on the course's gradebook, or on ``db_url``), output captured.
    It ends with this process, even one killed by SIGKILL (a parent-death signal; a stop signal ends it
    through ``subprocess.run``)."""
    from autograder.stopping import die_with_parent

    command = [sys.executable, "-c", NBGRADER_MAIN, *args, f"--CourseDirectory.root={Path(root).resolve()}"]
    if db_url is not None:
        command.append(f"--CourseDirectory.db_url={db_url}")
    return subprocess.run(command, cwd=root, capture_output=True, text=True, env=tool_env(), preexec_fn=die_with_parent)
