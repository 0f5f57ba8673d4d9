"""autograder.solutions: the one way to take a lesson's reference solutions from source/.

Only solution cells run (with the setup cell's imports), each load in a fresh namespace; a missing or
broken lesson is reported, not raised; a stage's lesson is found by what its solution cells define.
"""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder import solutions


def solution(grade_id: str, source: str):
    return new_code_cell(source, metadata={"nbgrader": {"solution": True, "grade": False, "locked": False,
                                                        "grade_id": grade_id, "schema_version": 3}})


def graded_cell(grade_id: str, source: str):
    return new_code_cell(source, metadata={"nbgrader": {"solution": False, "grade": True, "locked": True,
                                                        "points": 1, "grade_id": grade_id, "schema_version": 3}})


def write_lesson(root: Path, lesson: str, cells) -> Path:
    folder = root / "source" / lesson
    folder.mkdir(parents=True)
    path = folder / f"{lesson}.ipynb"
    nbformat.write(new_notebook(cells=cells), path)
    return path


def test_only_solution_cells_run_with_the_setup_imports(tmp_path):
    path = write_lesson(tmp_path, "lesson9_demo", [
        new_code_cell("import math\nfrom collections import Counter as Tally\nprint('setup ran')\n"
                      "raise RuntimeError('the setup cell itself must not run')"),
        solution("helper", "### BEGIN SOLUTION\ndef twice(v):\n    return 2 * v\n### END SOLUTION"),
        new_code_cell("raise RuntimeError('a demo cell must not run')"),
        graded_cell("helper_tests", "raise RuntimeError('a test cell must not run')"),
        solution("main", "def area(r):\n    return twice(math.pi * r * r) / 2\n\ncounted = Tally('aab')"),
    ])
    found = solutions.load("lesson9_demo", tmp_path, required=("area", "twice", "counted"))
    assert found.available, found.reason
    assert found["area"](1.0) == pytest.approx(math.pi)
    assert found["counted"]["a"] == 2
    assert found["twice"].__code__.co_filename == "<lesson9_demo:helper>"
    cells = solutions.solution_cells(path)
    assert list(cells) == ["helper", "main"]
    assert cells["helper"] == "def twice(v):\n    return 2 * v", "the delimiter lines are not a student's answer"
    # a fresh namespace per load: nothing leaks from one load into the next
    again = solutions.load("lesson9_demo", tmp_path, required=("area",))
    assert again["area"] is not found["area"]


def test_the_course_delimiters_are_stripped_not_nbgraders_defaults(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text('c = get_config()\n'
                                                 'c.ClearSolutions.begin_solution_delimeter = "START ANSWER"\n'
                                                 'c.ClearSolutions.end_solution_delimeter = "STOP ANSWER"\n')
    path = write_lesson(tmp_path, "lesson9_demo", [solution("a", "# START ANSWER\nx = 1\n# STOP ANSWER")])
    assert solutions.solution_cells(path) == {"a": "x = 1"}


def test_missing_or_broken_lessons_are_reported_not_raised(tmp_path):
    missing = solutions.load("lesson3_numpy", tmp_path)
    assert not missing.available and "no notebook in source/lesson3_numpy" in missing.status()
    write_lesson(tmp_path, "lesson_broken", [solution("a", "def f():\n    return 1\n1 / 0")])
    broken = solutions.load("lesson_broken", tmp_path, required=("f",))
    assert not broken.available and "ZeroDivisionError" in broken.reason
    write_lesson(tmp_path, "lesson_partial", [solution("a", "def f():\n    return 1")])
    partial = solutions.load("lesson_partial", tmp_path, required=("f", "g"))
    assert not partial.available and "do not define g" in partial.reason
    write_lesson(tmp_path, "lesson_nosolution", [new_code_cell("x = 1")])
    assert "no solution cells" in solutions.load("lesson_nosolution", tmp_path, required=()).reason


def test_a_stage_is_found_by_what_its_lesson_defines(tmp_path):
    loops = solutions.STAGES["loops"]
    body = "\n".join(f"def {name}(*args):\n    return {i}" for i, name in enumerate(loops))
    write_lesson(tmp_path, "a_intro", [solution("s", "def output_size(n):\n    return n")])
    write_lesson(tmp_path, "b_loops", [solution("s", body)])
    write_lesson(tmp_path, "c_later", [solution("s", body + "\nextra = 1")])  # defines them again: not chosen
    assert solutions.lesson_of("loops", tmp_path) == "b_loops"
    found = solutions.load_stage("loops", tmp_path)
    assert found.available and found.lesson == "b_loops" and set(found.names) == set(loops)
    # a name only mentioned (called, or defined inside a function) does not count as defined
    write_lesson(tmp_path, "a_mentions", [solution("s", f"def helper():\n    def {loops[0]}():\n        pass\n"
                                                        f"{loops[1]}_result = helper()")])
    assert solutions.lesson_of("loops", tmp_path) == "b_loops"
    none = solutions.load_stage("numpy", tmp_path)
    assert not none.available and "defines avg_pool2d_numpy" in none.reason
    assert not solutions.load_stage("loops", tmp_path / "nowhere").available


@pytest.mark.parametrize("stage", sorted(solutions.STAGES))
def test_every_stage_of_the_course_loads(stage):
    found = solutions.load_stage(stage)
    assert found.available, found.reason
    assert set(found.names) == set(solutions.STAGES[stage])
    assert found.lesson in solutions.lessons(solutions.REPO)
