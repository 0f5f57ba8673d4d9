"""The chain source/ -> nbgrader -> release/ holds for every lesson, and each rule can fail.

Each rule is a function in autograder.release.build; the ``*_detects_*`` tests plant a violation and show
that the rule reports it, so a green run means something.
"""

import copy
import subprocess

import nbformat
import pytest

from autograder import coursedir
from autograder import lessontext
from autograder.release import leaks, build as rel
from shared import REPO

LESSONS = coursedir.lessons(REPO)


def read(path):
    return nbformat.read(path, as_version=4)


def test_there_are_lessons():
    assert "lesson1_by_hand" in LESSONS


@pytest.mark.parametrize("lesson", LESSONS)
def test_release_is_what_nbgrader_generates_now(lesson, tmp_path):
    fresh = rel.generate_copy(lesson, tmp_path)
    committed = REPO / "release" / lesson
    fresh_files = sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
    committed_files = sorted(p.relative_to(committed).as_posix() for p in committed.rglob("*") if p.is_file())
    assert committed_files == fresh_files, "release/ holds other files than nbgrader generates: run `make release`"
    for name in fresh_files:
        if name.endswith(".ipynb"):
            problems = rel.release_differences(read(fresh / name), read(committed / name))
            assert not problems, f"release/{lesson}/{name} is out of date ({problems[:3]}): run `make release`"
        else:
            assert (fresh / name).read_bytes() == (committed / name).read_bytes(), name


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_solution_or_hidden_test_reaches_release(lesson):
    problems = leaks.release_leaks(read(coursedir.notebook(REPO, "source", lesson)),
                              read(coursedir.notebook(REPO, "release", lesson)))
    assert not problems, problems


@pytest.mark.parametrize("lesson", LESSONS)
def test_graded_cells_have_points_and_unique_ids(lesson):
    for folder in ("source", "release"):
        problems = rel.graded_cell_problems(read(coursedir.notebook(REPO, folder, lesson)))
        assert not problems, f"{folder}/{lesson}: {problems}"
    tests = [c for c in rel.graded_cells(coursedir.notebook(REPO, "source", lesson)) if c["test"]]
    assert tests, f"{lesson} has no graded test cell"


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_test_cell_ends_in_a_bare_expression(lesson):
    problems = rel.bare_expression_cells(read(coursedir.notebook(REPO, "source", lesson)))
    assert not problems, problems


def test_committed_notebooks_carry_no_outputs():
    tracked = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=REPO, capture_output=True, text=True).stdout.split()
    paths = [REPO / p for p in tracked] or list((REPO / "source").rglob("*.ipynb"))
    assert paths
    dirty = {str(p): rel.find_outputs(read(p)) for p in paths if rel.find_outputs(read(p))}
    assert not dirty, f"clear the outputs before committing: {sorted(dirty)}"


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_stubs_fail_nbgrader_validate(lesson):
    """Every test cell of the released stubs fails (``nbgrader validate --invert``). That the solutions pass
    every test cell is checked on the one run of each source notebook (``tests/lessons/test_notebooks.py``)."""
    stub = rel.validate(coursedir.notebook(REPO, "release", lesson), invert=True)
    assert stub.passed, f"these test cells of release/{lesson} pass without any work: {stub.failed_cells}"


# --- each rule detects its violation -----------------------------------------------------------------

LESSON1 = "lesson1_by_hand"


def test_leak_rule_detects_a_solution_line_and_a_marker():
    source = read(coursedir.notebook(REPO, "source", LESSON1))
    release = read(coursedir.notebook(REPO, "release", LESSON1))
    assert leaks.release_leaks(source, release) == []
    leaked = copy.deepcopy(release)
    leaked.cells[-1].source += "\n    step = tuple(k if s == 0 else s for k, s in zip(kernel, step))"
    assert any("secret line" in p for p in leaks.release_leaks(source, leaked))
    marked = copy.deepcopy(release)
    marked.cells[-1].source += "\n### BEGIN HIDDEN TESTS"
    assert any("marker" in p for p in leaks.release_leaks(source, marked))


def test_the_leak_rules_read_the_delimiters_the_course_configures(tmp_path):
    """A course that renames nbgrader's delimiters: the leak checks, the bundle scan and the sample class
    follow its config, and what was a marker under the defaults is ordinary text there."""
    root = coursedir.copy_course(REPO, tmp_path / "renamed", [LESSON1])
    with open(root / "nbgrader_config.py", "a") as config:
        config.write('\nc.ClearSolutions.begin_solution_delimeter = "START ANSWER"\n'
                     'c.ClearSolutions.end_solution_delimeter = "STOP ANSWER"\n')
    assert lessontext.delimiters(root)["SOLUTION"] == ("START ANSWER", "STOP ANSWER")
    assert lessontext.delimiters(root)["HIDDEN TESTS"] == lessontext.nbgrader_defaults()["HIDDEN TESTS"]
    secret = "    answer_nobody_may_see = 42  # from the solution"
    cell = nbformat.v4.new_code_cell(f"def f():\n    ### START ANSWER\n{secret}\n    ### STOP ANSWER\n")
    source, release = nbformat.v4.new_notebook(cells=[cell]), nbformat.v4.new_notebook(cells=[cell.copy()])
    release.cells[0].source = f"def f():\n{secret}\n"
    renamed = lessontext.delimiters(root)
    assert any("secret line" in p for p in leaks.release_leaks(source, release, renamed))
    assert leaks.release_leaks(source, release) == [], "under nbgrader's defaults the line is not secret"
    release.cells[0].source = "### START ANSWER\n"
    assert any("START ANSWER" in p for p in leaks.release_leaks(source, release, renamed))
    assert lessontext.strip_markers(cell.source, renamed) == f"def f():\n{secret}"
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "notes.txt").write_text("a line with STOP ANSWER in it\n")
    assert any("STOP ANSWER" in p for p in leaks.scan(tmp_path / "bundle", root))
    assert not leaks.scan(tmp_path / "bundle", REPO), "not a marker where the defaults hold"


def test_output_rule_detects_outputs():
    nb = read(coursedir.notebook(REPO, "source", LESSON1))
    assert rel.find_outputs(nb) == []
    code_cell = next(c for c in nb.cells if c.cell_type == "code")
    code_cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi")]
    assert rel.find_outputs(nb)


def test_graded_cell_rule_detects_missing_points_and_duplicates():
    nb = read(coursedir.notebook(REPO, "source", LESSON1))
    assert rel.graded_cell_problems(nb) == []
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    graded[0].metadata["nbgrader"]["points"] = 0
    graded[1].metadata["nbgrader"]["grade_id"] = graded[2].metadata["nbgrader"]["grade_id"]
    problems = rel.graded_cell_problems(nb)
    assert any("no points" in p for p in problems) and any("used twice" in p for p in problems)


def test_bare_expression_rule_detects_a_trailing_expression():
    nb = read(coursedir.notebook(REPO, "source", LESSON1))
    assert rel.bare_expression_cells(nb) == []
    graded = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))
    graded.source += "\n1 + 1"
    assert rel.bare_expression_cells(nb)


def test_release_comparison_detects_a_stale_release():
    release = read(coursedir.notebook(REPO, "release", LESSON1))
    stale = copy.deepcopy(release)
    stale.cells[3].source += " (edited by hand)"
    assert rel.release_differences(release, release) == []
    assert rel.release_differences(release, stale) == ["cell 3: source differs"]


@pytest.mark.slow
def test_validate_rule_detects_a_passing_stub_and_a_failing_solution(tmp_path):
    nb = read(coursedir.notebook(REPO, "source", LESSON1))
    broken = copy.deepcopy(nb)
    cell = next(c for c in broken.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "worked_example")
    cell.source = "by_hand_avg = np.zeros((2, 2)); by_hand_max = np.zeros((2, 2))"
    path = tmp_path / "broken.ipynb"
    nbformat.write(broken, path)
    result = rel.validate(path)
    assert not result.passed and len(result.failed_cells) == 2  # the average's cell and the maximum's
    # The same wrong answer passes the visible shape checks only, so an inverted run flags no pass:
    # whereas the full solution passes every test cell, which --invert reports.
    solved = tmp_path / "solved.ipynb"
    nbformat.write(nb, solved)
    assert not rel.validate(solved, invert=True).passed


def test_unknown_lesson_is_a_clear_error():
    with pytest.raises(coursedir.CourseError, match="unknown lesson 'lesson9'.*lesson1_by_hand"):
        rel.build_and_check("lesson9")
