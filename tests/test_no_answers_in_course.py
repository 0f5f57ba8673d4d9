"""Nothing a student imports solves an exercise: no function or class of ``course/`` (public or private)
passes a graded cell when it is handed in as the student's answer.

Each graded cell runs here in-process, as in a notebook, on the reference solution with one student
name replaced by a ``course`` object; a cell the reference itself does not pass in this harness is left
out, and the test says which and why.
"""

import contextlib
import importlib
import inspect
import io
import linecache
import pkgutil
import signal
import warnings

import pytest

import course
from autograder.coursedir import lessons
from autograder.grading.lesson import load_lesson, names_read
from tests.nbtools import REPO

SECONDS_PER_RUN = 20


def course_objects() -> dict[str, object]:
    """Every function and class that ``course``'s modules define, by ``module.name``."""
    found = {}
    for info in pkgutil.iter_modules(course.__path__, "course."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    found.update({f"course.{n}": v for n, v in vars(course).items()
                  if (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == "course"})
    return found


class _TooLong(Exception):
    pass


def _on_alarm(signum, frame):
    raise _TooLong()


def _passes(source: str, namespace: dict, why: list | None = None) -> bool:
    """Run a graded cell in a copy of ``namespace``; True iff it runs to the end."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(SECONDS_PER_RUN)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source, "<graded cell>", "exec"), dict(namespace))
        return True
    except BaseException as exc:  # noqa: BLE001 - any failure, a timeout included, is a failing cell
        if why is not None:
            why.append(f"{type(exc).__name__}: {str(exc)[:300]}")
        return False
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def reference_namespace(lesson) -> dict:
    """The set-up and the reference solution cells, run in notebook order (the lesson's context cells
    are left out: they train networks and draw figures)."""
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in sorted(lesson.prelude + [c for c in lesson.solutions if c.cell_type == "code"],
                           key=lambda c: c.index):
            filename = f"<cell {cell.id}>"  # registered like IPython's cells, so inspect reads the source
            linecache.cache[filename] = (len(cell.source), None, cell.source.splitlines(True), filename)
            exec(compile(cell.source, filename, "exec"), namespace)
    return namespace


def answers_found(lesson, objects: dict[str, object]) -> tuple[list[str], list[str], int]:
    """(``"cell: name = course object"`` for every course object that passes a graded cell as the
    student's ``name``; why each cell that calls a student's function could not run on the reference;
    the number of cells that call a student's function)."""
    namespace = reference_namespace(lesson)
    student_names = {n for n in lesson.solution_names if callable(namespace.get(n))}
    found, skipped, calling = [], [], 0
    for cell in lesson.tests:
        names = sorted(names_read(cell.source) & student_names)
        calling += bool(names)
        why: list = []
        if not names or not _passes(cell.source, namespace, why):
            skipped.extend(f"{cell.id}: {reason}" for reason in why)
            continue
        for name in names:
            for label, value in objects.items():
                if _passes(cell.source, {**namespace, name: value}):
                    found.append(f"{cell.id}: {name} = {label}")
    return found, skipped, calling


@pytest.mark.parametrize("lesson_name", lessons(REPO))
def test_no_course_function_or_class_passes_a_graded_cell_on_its_own(lesson_name):
    lesson = load_lesson(lesson_name, REPO)
    found, skipped, calling = answers_found(lesson, course_objects())
    assert calling and not skipped, f"cells that call the student's code did not run on the reference: {skipped}"
    assert not found, "course/ gives away answers:\n" + "\n".join(found)


def test_the_scan_finds_an_answer_planted_in_course():
    """The lesson-1 answer to output_size, planted back as a course helper, is found."""
    lesson = load_lesson("lesson1_by_hand", REPO)
    planted = reference_namespace(lesson)["output_size"]
    found, _, _ = answers_found(lesson, {"course.network._pair_and_rules": planted})
    assert "output_size_basic: output_size = course.network._pair_and_rules" in found
