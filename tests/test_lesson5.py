"""Lesson 5 (GAP heads): the reference passes every graded cell; each wrong solution fails its own cells only.

Graded cells never depend on the ungraded demonstration cells (training, plots), so the notebook runs
with those blanked (``skip_ungraded=True``).
"""

import nbformat
import pytest

from nbtools import executed, graded_results, run_graded, run_graded_all, solution_source, source_notebook

LESSON = "lesson5_gap"

POINTS = {
    "gap_head_forward": 3, "gap_head_any_size": 2, "head_parameters_counts": 3, "head_parameters_errors": 1,
    "cam_values": 3, "cam_errors": 1,
    **{f"choice_q{n}": 1 for n in range(1, 10)},
}


def graded_points():
    nb = nbformat.read(source_notebook(LESSON), as_version=4)
    return {cell.metadata["nbgrader"]["grade_id"]: cell.metadata["nbgrader"]["points"]
            for cell in nb.cells
            if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"].get("solution")}


def test_graded_cells_and_points():
    assert graded_points() == POINTS
    assert sum(POINTS.values()) == 22


def variant(grade_id: str, old: str, new: str) -> dict:
    """The reference solution of ``grade_id`` with ``old`` replaced by ``new`` (which must be there)."""
    source = solution_source(LESSON, grade_id)
    assert old in source, f"{old!r} is not in the reference solution of {grade_id}"
    return {grade_id: source.replace(old, new)}


CHECKS = (
    "    for name, value in [(\"channels\", channels), (\"height\", height), (\"width\", width),\n"
    "                        (\"num_classes\", num_classes)]:\n"
    "        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):\n"
    "            raise TypeError(f\"{name} must be an int, got {value!r}\")\n"
    "        if value < 1:\n"
    "            raise ValueError(f\"{name} must be >= 1, got {value}\")\n"
)

WRONG = {
    # a "GAP" head that flattens the maps instead of averaging them
    "gap_head_flattens": (lambda: variant("gap_head", "return self.fc(self.pool(x).flatten(1))",
                                          "return self.fc(x.flatten(1))"),
                          {"gap_head_forward", "gap_head_any_size"}),
    # sums the maps: right for 1x1 maps only
    "gap_head_sums": (lambda: variant("gap_head", "return self.fc(self.pool(x).flatten(1))",
                                      "return self.fc(x.sum((2, 3)))"),
                      {"gap_head_forward", "gap_head_any_size"}),
    # forgets the dense layer's bias in both counts
    "head_parameters_without_bias": (
        lambda: variant("head_parameters", "num_classes + num_classes\n    gap_head = channels * num_classes + num_classes",
                        "num_classes\n    gap_head = channels * num_classes"),
        {"head_parameters_counts"}),
    # right counts, no argument checks
    "head_parameters_without_checks": (lambda: variant("head_parameters", CHECKS, ""), {"head_parameters_errors"}),
    # a CAM without the class weights: the plain mean of the feature maps
    "cam_without_class_weights": (
        lambda: variant("class_activation_map",
                        'torch.einsum("c,chw->hw", weight[class_index].to(features.dtype), features)',
                        "features.mean(0)"),
        {"cam_values"}),
    # a CAM that adds every class's weights, whatever class_index says
    "cam_all_classes": (
        lambda: variant("class_activation_map", "weight[class_index].to(features.dtype)",
                        "weight.sum(0).to(features.dtype)"),
        {"cam_values"}),
    # no argument checks (an index past the end raises IndexError, not ValueError)
    "cam_without_checks": (
        lambda: variant("class_activation_map", "    if not 0 <= class_index < weight.shape[0]:\n",
                        "    if False:\n"),
        {"cam_errors"}),
    "choice_average_for_a_spot": (lambda: variant("choices", 'q1, q2, q3, q4 = "a", "c", "b", "a"',
                                                  'q1, q2, q3, q4 = "a", "c", "a", "a"'),
                                  {"choice_q3"}),
}


def test_reference_passes_every_graded_cell():
    results = graded_results(executed(LESSON))  # the one whole run of the notebook (nbtools.executed)
    assert results == {grade_id: True for grade_id in POINTS}


@pytest.fixture(scope="module")
def verdicts() -> dict:
    """The graded-cell verdicts of every wrong solution, two notebooks at a time."""
    return run_graded_all(LESSON, {name: make() for name, (make, _) in WRONG.items()})


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_solution_fails_its_own_cells_only(verdicts, name):
    _, failing = WRONG[name]
    results = verdicts[name]
    assert set(results) == set(POINTS)
    assert {grade_id for grade_id, passed in results.items() if not passed} == failing


def test_head_parameters_must_not_build_layers():
    """The hidden test rejects counting with torch (the formula is the exercise)."""
    source = solution_source(LESSON, "head_parameters")
    cheat = source.replace(
        "    flatten_head = channels * height * width * num_classes + num_classes\n"
        "    gap_head = channels * num_classes + num_classes\n",
        "    import math\n"
        "    def count(n_in):\n"
        "        layer = torch.nn.Linear(1, 1)\n"
        "        return n_in * num_classes + num_classes if n_in > 10**5 else n_in * num_classes + num_classes\n"
        "    flatten_head, gap_head = count(channels * height * width), count(channels)\n")
    assert cheat != source
    results = run_graded(source_notebook(LESSON), replace={"head_parameters": cheat}, skip_ungraded=True)
    assert not results["head_parameters_counts"] and results["head_parameters_errors"]


def test_no_test_forbids_a_module_the_lesson_needs():
    """The trusted grader blocks every module named in a ``check_avoids`` list for the whole lesson's
    child process; GAPHead needs torch, so no graded test of lesson 5 may name it."""
    lesson = pytest.importorskip("autograder.trusted.lesson")
    nb = nbformat.read(source_notebook(LESSON), as_version=4)
    tests = [lesson.Cell(c.metadata["nbgrader"]["grade_id"], "test", c.source) for c in nb.cells
             if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")]
    assert "check_avoids" in "".join(c.source for c in tests)
    assert lesson.forbidden_modules(tests) == []
