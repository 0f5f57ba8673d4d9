"""course.earlier.own_work (issue 53 item 8, ask once): a later lesson reads the student's own earlier work from
their notebook of that lesson; where it is missing or unfinished, a stand-in says so when called, never an answer."""

import shutil

import nbformat
import numpy as np
import pytest

from course.earlier import MissingWork, own_work
from tests.shared import REPO


def lesson_folder(tmp_path, lesson, cells):
    """``tmp_path/<lesson>/<lesson>.ipynb`` with ``cells``: (nbgrader grade_id or None, source)."""
    nb = nbformat.v4.new_notebook()
    for grade_id, source in cells:
        meta = {"nbgrader": {"grade_id": grade_id, "solution": grade_id != "setup", "grade": False}} if grade_id else {}
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata=meta))
    (tmp_path / lesson).mkdir()
    nbformat.write(nb, tmp_path / lesson / f"{lesson}.ipynb")
    return tmp_path


def test_a_finished_function_is_read_from_the_students_own_notebook_with_its_helpers_and_imports(tmp_path):
    folder = lesson_folder(tmp_path, "lesson1_by_hand", [
        ("setup", "import numpy as np\nprint('set-up ran')\nraise SystemExit"),
        ("output_size", "SCALE = 1\n\n\ndef half(n):\n    return np.int64(n) // 2\n\n\n"
                        "def output_size(input_size, kernel_size, stride=0, padding=0):\n"
                        "    return (int(half(input_size * SCALE * 2)), 7)\n\n\nprint(output_size(4, 2))"),
        ("other", "def other():\n    # YOUR CODE HERE\n    raise NotImplementedError()"),
        (None, "output_size = None  # an ungraded cell is not the student's answer"),
    ])
    output_size = own_work("lesson1_by_hand", "output_size", folder=folder)
    assert output_size(6, 2) == (6, 7)
    other, size = own_work("lesson1_by_hand", "other", "output_size", folder=folder)
    assert size(4, 2) == (4, 7)
    with pytest.raises(MissingWork, match="other comes from your lesson1_by_hand notebook"):
        other()  # still the released stub


def test_a_missing_notebook_or_an_unfinished_function_is_a_stand_in_that_says_where_it_looked(tmp_path):
    missing = own_work("lesson1_by_hand", "output_size", folder=tmp_path)
    with pytest.raises(NotImplementedError, match=r"not written there yet or that notebook is not at .*lesson1_by_hand"):
        missing((4, 4), 2)
    release = tmp_path / "release"
    shutil.copytree(REPO / "release" / "lesson1_by_hand", release / "lesson1_by_hand")
    stub = own_work("lesson1_by_hand", "output_size", folder=release)  # the course's release holds no answer
    with pytest.raises(MissingWork, match="Finish output_size in lesson1_by_hand"):
        stub((4, 4), 2)


def test_the_lesson_2_loops_are_read_with_the_output_size_they_call():
    """What lesson 3 reads: lesson 2's loops from the instructor's source (the reference), which call the
    output_size and as_pair of their own notebook."""
    forward, backward = own_work("lesson2_loops", "avg_pool2d_loops", "avg_pool2d_loops_backward",
                                 folder=REPO / "source")
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    assert forward(x, 2).tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]
    assert backward(np.ones((1, 1, 2, 2)), (1, 1, 4, 4), 2).sum() == 4.0


def test_own_work_needs_a_name():
    with pytest.raises(ValueError, match="at least one name"):
        own_work("lesson1_by_hand")


def test_what_an_earlier_lesson_read_from_a_still_earlier_one_comes_along(tmp_path, monkeypatch):
    """Lesson 3 reads the student's lesson 2 loops, which call the output_size lesson 2 read from lesson 1 (a
    plain cell ``output_size = own_work(...)``, as the released lesson 2 has it): the student's own, both."""
    lesson_folder(tmp_path, "lesson1_by_hand", [
        (None, "import numpy as np"),
        ("output_size", "def output_size(input_size, kernel_size, stride=0, padding=0):\n    return (99, 99)"),
    ])
    lesson_folder(tmp_path, "lesson2_loops", [
        (None, "import numpy as np"),
        (None, 'from course.earlier import own_work\n\noutput_size = own_work("lesson1_by_hand", "output_size")'),
        ("output_size", "# YOUR CODE HERE (optional: leave this empty if you need no helpers)"),
        ("avg_pool2d_loops", "def avg_pool2d_loops(x, kernel_size):\n    return np.zeros(output_size(x.shape[2:], kernel_size))"),
        (None, "raise RuntimeError('a demonstration cell of lesson 2 is never run')"),
    ])
    (tmp_path / "lesson3_numpy").mkdir()
    monkeypatch.chdir(tmp_path / "lesson3_numpy")
    loops = own_work("lesson2_loops", "avg_pool2d_loops")
    assert loops(np.zeros((1, 1, 4, 4)), 2).shape == (99, 99)
