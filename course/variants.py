"""Every student's own numbers: the exercises done by hand draw their numbers from the student's identity.

A *variant* is the numbers of one exercise for one student (a matrix, the networks' sizes, the order of a
question's options): drawn from ``(term salt, lesson, exercise, student id)`` (:mod:`course.term`), so the
same student always gets the same numbers, on every machine, in every grading run. Only numbers live here,
never an answer: a lesson's hidden test computes the expected answer from them.

Whose numbers (:func:`identity`):

* under the trusted grader, the identity the grader established (``course.checks.hooks.current().student``: the
  student folder ``collect`` wrote from the LMS export or the exchange owner), never anything the
  submission says; a run without one (the canary, ``c.Variants.enabled = False``) gets the lecture's numbers;
* on the course's JupyterHub, the logged-in user (``JUPYTERHUB_USER``);
* elsewhere, the LMS login the student types once in the notebook's id cell (:func:`student_id`);
* nobody (no id typed) or variants off (:data:`course.term.ENABLED`): the lecture's own numbers (:data:`FIXED`).

    draw("lesson1_by_hand", "worked_example", "alice")  # -> {"matrix": [[...4 ints] * 4], "kernel_size": 2, ...}
    variant("lesson1_by_hand", "worked_example")        # the same for whoever :func:`identity` says
"""

from __future__ import annotations

import hashlib
import os
from typing import Callable

import numpy as np

from course import term
from course.checks import hooks

#: The lecture's own numbers, per ``(lesson, exercise)``: what everyone sees with variants off or no id.
FIXED: dict[tuple[str, str], dict] = {
    ("lesson1_by_hand", "worked_example"): {
        "matrix": [[1, 3, 2, 4], [5, 6, 7, 8], [9, 2, 1, 0], [4, 3, 2, 1]], "kernel_size": 2, "stride": 2},
    ("lesson1_by_hand", "card_shapes"): {
        "net1": {"input": [1, 28, 28], "channels": 6, "conv_kernel": 5, "pool": 2},
        "net2": {"input": [64, 5, 5]},
        "net3": {"input": [3, 17, 17], "kernel_size": 3, "stride": 2, "padding": 1}},
    ("lesson1_by_hand", "knowledge_check"): {
        "q3_values": [2, 3, 6, 9], "q3_order": [0, 1, 2], "q6_order": [0, 1, 2], "q10_order": [0, 1, 2]},
    ("lesson2_loops", "predictions"): {"order": ["worked", "ones", "ramp"], "ones_size": 5, "ramp_size": 5},
}

#: The one id this process's notebook typed (:func:`student_id`); ``None`` until then.
_typed: dict[str, str | None] = {"id": None}


def normalized(student: str) -> str:
    """The id as variants read it: surrounding spaces dropped, case folded (``" Alice "`` is ``alice``)."""
    if not isinstance(student, str):
        raise TypeError(f"student must be a str (an LMS login), got {type(student).__name__}")
    return student.strip().casefold()


def rng_for(lesson: str, exercise: str, student: str, salt: str | None = None) -> np.random.Generator:
    """The generator of one student's variant of one exercise: seeded by a hash of (salt, lesson, exercise, id)."""
    text = "\0".join([term.SALT if salt is None else salt, lesson, exercise, normalized(student)])
    return np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "little"))


def _worked_example(rng: np.random.Generator) -> dict:
    """A 4×4 matrix of digits 0-9 pooled by 2×2 windows, stride 2, as hard as the lecture's: in every window
    at least three different values (the max is one value, not a tie of all); the given window [0, 0] and at
    least two of the other three have a mean that is not a whole number; the four means all differ."""
    while True:
        matrix = rng.integers(0, 10, size=(4, 4))
        windows = [matrix[2 * i:2 * i + 2, 2 * j:2 * j + 2] for i in range(2) for j in range(2)]
        fractional = [int(w.sum()) % 4 != 0 for w in windows]
        if (all(len(set(w.ravel().tolist())) >= 3 for w in windows) and fractional[0] and sum(fractional[1:]) >= 2
                and len({int(w.sum()) for w in windows}) == 4):
            return {"matrix": matrix.tolist(), "kernel_size": 2, "stride": 2}


def _card_shapes(rng: np.random.Generator) -> dict:
    """Three networks of the spec card's kinds: conv (no padding, stride 1) + relu + avg_pool whose input
    the pooling tiles exactly; a global pool over a whole map; an overlapping pool with padding
    ``kernel // 2``, stride 2, on an odd side (so floor and padding both matter)."""
    while True:
        k, p = int(rng.choice([3, 5])), int(rng.choice([2, 3]))
        size = int(rng.integers(18, 41))
        if (size - k + 1) % p == 0 and (size - k + 1) // p not in (size, k, p):
            break
    net1 = {"input": [int(rng.choice([1, 3])), size, size], "channels": int(rng.choice([4, 6, 8, 10, 12, 16])),
            "conv_kernel": k, "pool": p}
    side = int(rng.integers(3, 9))
    net2 = {"input": [int(rng.choice([32, 48, 64, 96, 128, 256])), side, side]}
    kernel = int(rng.choice([3, 5]))
    side3 = int(rng.integers(6, 17)) * 2 + 1
    net3 = {"input": [int(rng.integers(3, 17)), side3, side3], "kernel_size": kernel, "stride": 2,
            "padding": kernel // 2}
    return {"net1": net1, "net2": net2, "net3": net3}


def _knowledge_check(rng: np.random.Generator) -> dict:
    """Question 3's four numbers (distinct, 1-15, a whole mean that is none of them and differs from the
    largest and the sum) and the order of the three options of questions 3, 6 and 10 (each a permutation:
    option j shown is the lecture's option ``order[j]``)."""
    while True:
        values = sorted(int(v) for v in rng.choice(np.arange(1, 16), size=4, replace=False))
        total = sum(values)
        if total % 4 == 0 and total // 4 not in values and len({total, max(values), total // 4}) == 3:
            break
    return {"q3_values": values, **{f"{q}_order": [int(v) for v in rng.permutation(3)]
                                    for q in ("q3", "q6", "q10")}}


def _predictions(rng: np.random.Generator) -> dict:
    """Lesson 2's three checks A, B, C: the lecture's worked example (default stride), a map of ones
    (kernel 3, stride 2, padding 1, padding not counted) and a ramp (the same, padding counted), in an order
    of their own, the ones and the ramp of odd sizes 5-9 (each bug is caught, and where, by the same reasoning;
    never the 7×7 ones of the practice check D, which would show where a bug first fails on them)."""
    return {"order": [str(v) for v in rng.permutation(["worked", "ones", "ramp"])],
            "ones_size": int(rng.choice([5, 9])), "ramp_size": int(rng.choice([5, 7, 9]))}


def lesson2_checks(numbers: dict) -> dict:
    """Lesson 2's checks from its variant's ``numbers``: ``{"A" | "B" | "C": (x [1, 1, H, W], kernel_size, stride,
    padding, count_include_pad)}`` in run order (the lecture's numbers give ``course.bugs.CHECKS``)."""
    ones, ramp = numbers["ones_size"], numbers["ramp_size"]
    made = {"worked": (np.array(FIXED[("lesson1_by_hand", "worked_example")]["matrix"], dtype=np.float64)[None, None],
                       2, 0, 0, True),
            "ones": (np.ones((1, 1, ones, ones)), 3, 2, 1, False),
            "ramp": (np.arange(float(ramp * ramp)).reshape(1, 1, ramp, ramp), 3, 2, 1, True)}
    return {label: made[kind] for label, kind in zip("ABC", numbers["order"])}


#: How each ``(lesson, exercise)`` draws its numbers from a generator.
DRAWS: dict[tuple[str, str], Callable[[np.random.Generator], dict]] = {
    ("lesson1_by_hand", "worked_example"): _worked_example,
    ("lesson1_by_hand", "card_shapes"): _card_shapes,
    ("lesson1_by_hand", "knowledge_check"): _knowledge_check,
    ("lesson2_loops", "predictions"): _predictions,
}


def draw(lesson: str, exercise: str, student: str | None, *, salt: str | None = None,
         enabled: bool | None = None) -> dict:
    """The numbers of ``exercise`` of ``lesson`` for ``student`` (the lecture's own, :data:`FIXED`, when
    ``student`` is ``None`` or empty, or variants are off: ``enabled``, default :data:`course.term.ENABLED`)."""
    if (lesson, exercise) not in DRAWS:
        known = ", ".join(f"{a}/{b}" for a, b in DRAWS)
        raise ValueError(f"lesson/exercise: no variant for {lesson}/{exercise} (known: {known})")
    enabled = term.ENABLED if enabled is None else enabled
    if not enabled or student is None or not normalized(student):
        return FIXED[(lesson, exercise)]
    return DRAWS[(lesson, exercise)](rng_for(lesson, exercise, student, salt))


def under_grader() -> bool:
    """Whether the trusted grader is grading in this context (it sets the run's seed while it grades)."""
    return hooks.current().run_seed is not None


def identity() -> str | None:
    """Whose numbers this context shows: the graded identity under the grader (``None`` when it has none),
    else ``JUPYTERHUB_USER``, else the id typed in the notebook's id cell, else ``None``."""
    if under_grader():
        return hooks.current().student
    hub = os.environ.get("JUPYTERHUB_USER", "").strip()
    return hub or _typed["id"] or None


def variant(lesson: str, exercise: str) -> dict:
    """The numbers of ``exercise`` of ``lesson`` for :func:`identity`."""
    return draw(lesson, exercise, identity())


def student_id(typed: str = "") -> str | None:
    """The notebook's id cell: record the LMS login the student ``typed`` (used where there is no hub
    login) and say whose numbers this notebook shows. Returns that id, ``None`` when there is none."""
    if not isinstance(typed, str):
        raise TypeError(f"student_id: type your LMS login between quotes, e.g. student_id(\"jdoe\"), got {typed!r}")
    _typed["id"] = typed.strip() or None
    hub = os.environ.get("JUPYTERHUB_USER", "").strip()
    if not term.ENABLED:
        print("This course gives everyone the same numbers: no id is needed.")
        return None
    if hub:
        extra = f" (the id typed here, {typed.strip()!r}, is not used on the hub)" if typed.strip() and \
            normalized(typed) != normalized(hub) else ""
        print(f"Your numbers are drawn for your hub login {hub!r}{extra}.")
        return hub
    if _typed["id"]:
        print(f"Your numbers are drawn for {_typed['id']!r}. It must be your LMS login: you are graded on the "
              "numbers of the login your work is handed in under, whatever is typed here.")
        return _typed["id"]
    print("NO ID YET: type your LMS login (the name you sign in to the course website with) between the quotes "
          "in this cell, e.g. student_id(\"jdoe\"), and run the notebook again from the top. Until then you see "
          "the lecture's example numbers, which are NOT yours: answers worked out on them are graded wrong.")
    return None
