"""Lesson 4's run-time wall (issue 50 item 4): in the child, before student code runs, PyTorch's own pooling,
convolution and resampling operators are overridden at its dispatcher (``_child.raise_wall``); a test cell whose
student code calls one is proved forbidden (0, never a grader error), while the parent's own comparisons keep them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from autograder.grading import _child, load_lesson
from autograder.grading.lesson import NATIVE_OPERATORS, Cell, Lesson
from autograder.grading.sandbox import GraderFault, sandbox_uid
from autograder.grading.verdicts import run_tests
from shared import FAST, REPO

WALL = sorted(NATIVE_OPERATORS.values())
PRELUDE = "import torch\nimport torch.nn.functional as F\nfrom course.checks import check_array\n"


def walled_lesson(solution: str, tests: dict[str, str], *, wall=WALL, block=()) -> Lesson:
    return Lesson("lesson4_tiny", "tiny.ipynb", Path("/nonexistent"), Path("/nonexistent"),
                  [Cell("setup", "prelude", PRELUDE)], [], [Cell("answer", "solution", solution, index=1)],
                  {"answer": ""}, {"answer": "code"},
                  [Cell(name, "test", source, points=1.0, index=2 + i) for i, (name, source) in enumerate(tests.items())],
                  list(block), list(wall))


def graded(lesson: Lesson, solution: str, limits=FAST) -> dict:
    return {t.grade_id: t for t in run_tests(lesson, {"answer": solution}, limits, uid=sandbox_uid(907), seed=1).tests}


SOLUTION = '''
def honest(x):
    """2x2 average pooling, stride 2, from strided slices."""
    return (x[..., 0::2, 0::2] + x[..., 1::2, 0::2] + x[..., 0::2, 1::2] + x[..., 1::2, 1::2]) / 4


def by_name(x):
    operator = getattr(getattr(torch.ops, "at" + "en"), "avg_" + "pool2d")
    try:
        return operator(x, [2, 2])
    except Exception:  # caught: the wall's verdict stands all the same
        return honest(x)


def convolved(x):
    return torch.nn.functional.conv2d(x, torch.full((1, 1, 2, 2), 0.25, dtype=x.dtype), stride=2)


def gradient(x):
    point = x.clone().requires_grad_(True)
    torch.nn.functional.adaptive_avg_pool2d(point, 1).sum().backward()
    return point.grad
'''
# The parent computes the expected values with PyTorch's own pooling: the wall is in the child only.
CHECK = "x = torch.arange(16.0).reshape(1, 1, 4, 4)\ncheck_array({}(x), F.avg_pool2d(x, 2), '{}')\nprint('ok')"


def test_student_calls_of_walled_operators_are_proved_forbidden_and_the_parents_are_not():
    tests = {name: CHECK.format(name, name) for name in ("honest", "by_name", "convolved")}
    tests["gradient"] = "x = torch.ones(1, 1, 4, 4)\ngradient(x)\nprint('ok')"
    verdicts = graded(walled_lesson(SOLUTION, tests), SOLUTION)
    assert verdicts["honest"].passed, verdicts["honest"].message
    for name, operator in [("by_name", "aten::avg_pool2d"), ("convolved", "aten::conv2d"),
                           ("gradient", "aten::adaptive_avg_pool2d")]:
        result = verdicts[name]
        assert not result.passed and result.points == 0 and result.fault is None and result.review is None, name
        assert result.message.startswith(f"proved forbidden: `{operator}` is not allowed in lesson 4"), result.message
    # A cold child (started, not forked from a warm template) raises the same wall.
    cold = graded(walled_lesson(SOLUTION, {"by_name": tests["by_name"]}), SOLUTION, dataclasses.replace(FAST, warm=False))
    assert cold["by_name"].message.startswith("proved forbidden: `aten::avg_pool2d`"), cold["by_name"].message
    # Without the wall the same calls run: it is the wall that stops them.
    open_verdicts = graded(walled_lesson(SOLUTION, tests, wall=[]), SOLUTION)
    assert all(open_verdicts[name].passed for name in ("honest", "by_name", "convolved", "gradient"))


def test_a_wall_that_cannot_be_raised_is_a_grader_error():
    lesson = walled_lesson("one = 1", {"t": "print(one)"}, block=["torch"])  # no PyTorch in the child to wall
    with pytest.raises(GraderFault, match="could not wall off"):
        run_tests(lesson, {"answer": "one = 1"}, FAST, uid=sandbox_uid(907), seed=1)


def test_lesson_4_alone_walls_pytorchs_pooling_convolution_and_resampling():
    walls = {name: load_lesson(name, REPO).wall for name in
             ("lesson1_by_hand", "lesson2_loops", "lesson3_numpy", "lesson4_torch", "lesson5_gap")}
    assert walls.pop("lesson4_torch") == WALL
    assert not any(walls.values()), walls  # lessons 2-3 have no PyTorch at all; 1 and 5 forbid none of it


def test_raise_wall_reaches_every_route_to_an_operator():
    """In a process of its own (the wall cannot be undone): autograd, inference mode, ``out=``, a backend's kernel,
    MKL-DNN tensors, modules and ``torch.ops`` all stop; slices, ``x.unfold`` and ``F.unfold`` do not."""
    import subprocess
    import sys

    script = f"""
import torch, torch.nn.functional as F
from autograder.grading import _child
keep = _child.raise_wall({WALL!r})
x = torch.randn(1, 2, 6, 6)
routes = {{
    "F.avg_pool2d": lambda: F.avg_pool2d(x.requires_grad_(True), 2),
    "nn.AvgPool2d": lambda: torch.nn.AvgPool2d(2)(x),
    "out=": lambda: torch.ops.aten.avg_pool2d.out(x.detach(), [2, 2], out=torch.empty(1, 2, 3, 3)),
    "inference mode": lambda: [torch.inference_mode().__enter__(), F.avg_pool2d(x.detach(), 2)],
    "backend kernel": lambda: torch.ops.aten._slow_conv2d_forward(x.detach(), torch.ones(1, 2, 2, 2), [2, 2], None,
                                                                   [1, 1], [0, 0]),
    "MKL-DNN tensor": lambda: F.avg_pool2d(x.detach().to_mkldnn(), 2),
    "area interpolation": lambda: F.interpolate(x, size=(3, 3), mode="area"),
    "nearest interpolation": lambda: F.interpolate(x, scale_factor=2),
    "max pooling": lambda: F.max_pool2d(x, 2),
    "transposed convolution": lambda: F.conv_transpose2d(x, torch.ones(2, 1, 2, 2)),
}}
for name, route in routes.items():
    try:
        route()
        print("OPEN", name)
    except _child.WalledOperator:
        pass
y = x.detach()
assert torch.allclose(y.unfold(2, 2, 2).unfold(3, 2, 2).mean((-1, -2)), F.unfold(y, 2, stride=2).view(1, 2, 4, 9).mean(2).view(1, 2, 3, 3))
print("hits", len(_child.WALL_HITS))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "OPEN" not in done.stdout, done.stdout
    assert "hits" in done.stdout
    assert _child.WALL_HITS == [] and torch.nn.functional.avg_pool2d(torch.ones(1, 1, 2, 2), 2).item() == 1.0
