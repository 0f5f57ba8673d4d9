"""Lesson 1's ``pool_both_tests``, run in-process as the trusted grader's parent runs a test cell: its hidden
inputs are drawn per grading run (the checks' ``run_seed``), the reference passes at every run seed and
plausible bugs fail at every one. (The whole notebook runs in tests/lessons/test_notebooks.py; the corpus grades
the lesson with the real grader in tests/grading/test_corpus.py.)"""

import nbformat
import numpy as np
import pytest
import torch
from torch import nn

import course.checks
from course.data import sample_image
from nbtools import cell_by_id, failing_cells, solution_source, source_notebook

LESSON = "lesson1_by_hand"
REFERENCE = solution_source(LESSON, "pool_both")
TEST = cell_by_id(nbformat.read(source_notebook(LESSON), as_version=4), "pool_both_tests").source
RUN_SEEDS = [None, *range(30)]  # None: the notebook's own inputs (100 seeds checked once, by hand: all pass)


def both(old: str, new: str) -> str:
    """The reference with ``old`` replaced by ``new`` in both pooling layers (``{}``: the layer's name)."""
    source = REFERENCE
    for layer in ("AvgPool2d", "MaxPool2d"):
        assert old.format(layer) in source
        source = source.replace(old.format(layer), new.format(layer))
    return source


WRONG = {
    "swapped": REFERENCE.replace("return average, maximum", "return maximum, average"),
    "ceil_mode": both("nn.{}(kernel_size)", "nn.{}(kernel_size, ceil_mode=True)"),
    "stride_one": both("nn.{}(kernel_size)", "nn.{}(kernel_size, stride=1)"),
    "first_kernel_side_only": both("nn.{}(kernel_size)",
                                   "nn.{}(kernel_size if isinstance(kernel_size, int) else kernel_size[0])"),
    "average_of_relu": REFERENCE.replace("nn.AvgPool2d(kernel_size)(batch)", "nn.AvgPool2d(kernel_size)(batch.clamp(min=0))"),
    "transposed": REFERENCE.replace("np.ascontiguousarray(image)", "np.ascontiguousarray(image.T)")
                           .replace("[0, 0].numpy()", "[0, 0].numpy().T"),
}


def run_test(solution: str, run_seed, spy=None) -> bool:
    """pool_both_tests (hidden part included) on ``solution`` with the hidden inputs of grading run
    ``run_seed``; ``spy(image, kernel_size)`` sees every call. True if it passes."""
    namespace = {"np": np, "torch": torch, "nn": nn, "sample_image": sample_image,
                 **{name: getattr(course.checks, name)
                    for name in ("check_array", "check_value", "random_input", "input_generator")}}
    exec(compile(solution, "pool_both", "exec"), namespace)
    if spy is not None:
        student = namespace["pool_both"]
        namespace["pool_both"] = lambda image, kernel_size: (spy(image.copy(), kernel_size), student(image, kernel_size))[1]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny maps: a pool of threads only waits for a busy machine's cores
    try:
        with course.checks.grading(run_seed=run_seed):
            exec(compile(TEST, "pool_both_tests", "exec"), namespace)
        return True
    except AssertionError:
        return False
    finally:
        torch.set_num_threads(threads)


def test_reference_passes_at_every_run_seed():
    assert [seed for seed in RUN_SEEDS if not run_test(REFERENCE, seed)] == []


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_bug_fails_at_every_run_seed(name):
    assert WRONG[name] != REFERENCE
    assert [seed for seed in RUN_SEEDS[:10] if run_test(WRONG[name], seed)] == []


def test_hidden_inputs_are_drawn_per_run_and_reproduced_by_its_seed():
    def inputs(run_seed) -> list:
        seen = []
        assert run_test(REFERENCE, run_seed, spy=lambda image, k: seen.append((image, k)))
        return seen

    first, again, other = inputs(7), inputs(7), inputs(8)
    assert len(first) == 8  # the visible portrait, then the hidden cases
    assert all(np.array_equal(a, b) and k == j for (a, k), (b, j) in zip(first, again))
    assert any(a.shape != b.shape or not np.array_equal(a, b) for (a, _), (b, _) in zip(first[1:], other[1:]))
    hidden = first[1:]
    assert any(not image.any() for image, _ in hidden), "an all-zero map"
    assert any(np.array_equal(image, np.round(image)) and (image < 0).any() for image, _ in hidden), "a signed integer map"
    assert any(image.shape[0] != image.shape[1] for image, _ in hidden), "a non-square map"
    assert any(isinstance(k, tuple) and k[0] != k[1] for _, k in hidden), "a non-square kernel"
    assert any(image.shape[0] % (k if isinstance(k, int) else k[0]) for image, k in hidden), "a trailing row dropped"


# --- one rule, one cell: Exercises 1.1 and 1.3 (issue 29) --------------------------------------------------

NOTEBOOK = nbformat.read(source_notebook(LESSON), as_version=4)
ANSWER_CELLS = {"worked_example_tests": 1, "worked_example_max_tests": 1, "card_shapes_tests": 1,
                "card_shapes_example2": 1, "card_shapes_example3": 1}
ANSWERS = {"by_hand_avg": "[[3.75, 5.25], [4.5, 1.0]]", "by_hand_max": "[[6.0, 8.0], [9.0, 2.0]]",
           "example1_shape": "(6, 12, 12)", "example2_shape": "(64, 1, 1)", "example3_shape": "(3, 9, 9)"}


def typed(**answers) -> dict[str, str]:
    """The two typed-answer solution cells with ``answers`` (name: source of its value) in place of the reference's."""
    values = {**ANSWERS, **answers}
    return {"worked_example": "".join(f"{n} = np.array({values[n]})\n" for n in ("by_hand_avg", "by_hand_max")),
            "card_shapes": "".join(f"{n} = {values[n]}\n" for n in ("example1_shape", "example2_shape", "example3_shape"))}


def test_each_typed_answer_is_its_own_cell_with_its_own_point():
    assert {g: cell_by_id(NOTEBOOK, g).metadata["nbgrader"]["points"] for g in ANSWER_CELLS} == ANSWER_CELLS
    assert failing_cells(LESSON, ANSWER_CELLS, typed()) == set()
    slips = {"by_hand_avg": ("worked_example_tests", "[[3.75, 5.25], [4.5, 1.5]]"),
             "by_hand_max": ("worked_example_max_tests", "[[6.0, 8.0], [9.0, 1.0]]"),
             "example1_shape": ("card_shapes_tests", "(6, 24, 24)"),       # the pooling forgotten
             "example2_shape": ("card_shapes_example2", "(1, 1, 1)"),      # the channels averaged too
             "example3_shape": ("card_shapes_example3", "(3, 8, 8)")}      # the padding forgotten
    for name, (cell, wrong) in slips.items():
        assert failing_cells(LESSON, ANSWER_CELLS, typed(**{name: wrong})) == {cell}, name


def test_the_card_shapes_answer_does_not_call_output_size():
    """Exercise 1.3 is typed: a bug in output_size is graded once, in Exercise 1.2's cells."""
    assert "output_size" not in solution_source(LESSON, "card_shapes").split("### BEGIN SOLUTION")[1]
    assert failing_cells(LESSON, ANSWER_CELLS) == set()


@pytest.mark.parametrize("cell, old, new", [
    ("output_size_errors", "if min(size) < 1:", "if False:"),                                   # an empty input
    ("output_size_types", "and not isinstance(v, (bool, np.bool_))", ""),                        # True taken as 1
    ("output_size_basic", "step = tuple(k if s == 0 else s", "step = tuple(k if step == (0, 0) else s"),  # a pair's 0
    ("output_size_basic", "if size[axis] + 2 * pad[axis] < kernel[axis]:", "if size[axis] < kernel[axis]:"),
])
def test_a_rule_the_hidden_part_checks_has_a_visible_twin(cell, old, new):
    """The visible part of the cell catches the bug, not only the hidden part; the reference passes it."""
    reference = solution_source(LESSON, "output_size")
    assert reference.count(old) == 1
    assert failing_cells(LESSON, {cell}, hidden=False) == set()
    assert failing_cells(LESSON, {cell}, {"output_size": reference.replace(old, new)}, hidden=False) == {cell}


def test_a_numpy_int_result_costs_the_types_cell_only():
    """The result's type is output_size_types' rule, its values output_size_basic's (one bug, one penalty)."""
    reference = solution_source(LESSON, "output_size")
    old = "return tuple((size[a] + 2 * pad[a] - kernel[a]) // step[a] + 1 for a in range(2))"
    assert reference.count(old) == 1
    numpy_ints = reference.replace(old, "return tuple(np.int64((size[a] + 2 * pad[a] - kernel[a]) // step[a] + 1) for a in range(2))")
    cells = {"output_size_basic", "output_size_errors", "output_size_types"}
    assert failing_cells(LESSON, cells, {"output_size": numpy_ints}) == {"output_size_types"}
