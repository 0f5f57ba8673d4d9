"""The grader's hooks: the state the trusted grader (``autograder.grading.verdicts.run_tests``) sets in its
parent process while it grades one submission, and resets after. This module is the one owner of that state:
the checks read it at call time with :func:`current`; the grader (and a test) sets it only by entering
:func:`grading`, which resets it on the way out (an exception included)::

    with hooks.grading(run_seed=11, student="ann"):
        ...                      # hooks.current().run_seed == 11 here, None again after

Outside such a block (a student's kernel, the sandboxed child, a release notebook's visible checks) every
field is ``None`` and the checks behave as in a notebook. The state belongs to one grading call, not to the
process: it is one context variable, so two submissions graded at once in two threads of one process (a Dask
worker's threads) never see each other's (a new thread starts with none set).

Module-level state kept here, and why it carries nothing of one student to another: :data:`MARKED_HELPERS`
(the course's own helpers, registered once when their modules are imported; no student code can add one,
since the child's registry is its own process's)."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
from typing import Callable, Iterator


@dataclasses.dataclass(frozen=True)
class Grading:
    """What the trusted grader set for the grading call running in this context (all ``None``: not grading).

    ``router``: an object with ``wants(args, kwargs) -> bool`` (do the arguments hold stand-ins for student
    objects?), ``send(spec, args, kwargs)`` (run a marked helper in the sandboxed child, return its plain-data
    result) and ``timed_call(function, args, kwargs)`` (call a student function, return its result and the CPU
    seconds the child spent, read from outside the child). ``run_seed``: the grading run's seed (an int the
    record keeps); with it :func:`~course.checks.values.input_generator` and
    :func:`~course.checks.values.random_input` draw from both it and the test's own seed, so hidden inputs
    change from one grading run to the next and the same run seed gives the same inputs again. ``student``: the
    identity the grader established (the student folder ``collect`` wrote), from which :mod:`course.variants`
    draws the student's own numbers (``None`` when the run has none: the canary, variants off).
    ``graded_so_far``: ``{grade_id: passed}`` of the test cells graded so far in this run, in notebook order
    (read with :func:`passed`; the grader adds to the dict it passed in)."""

    router: object = None
    run_seed: int | None = None
    student: str | None = None
    graded_so_far: dict | None = None


FIELDS = tuple(field.name for field in dataclasses.fields(Grading))
#: Not grading: every field ``None`` (frozen, so the shared default cannot be changed).
_NOT_GRADING = Grading()
_GRADING: contextvars.ContextVar[Grading] = contextvars.ContextVar("course.checks.hooks.grading",
                                                                   default=_NOT_GRADING)  # noqa: B039


def current() -> Grading:
    """The grader's state in this context (every field ``None`` outside a :func:`grading` block)."""
    return _GRADING.get()


@contextlib.contextmanager
def grading(**state) -> Iterator[Grading]:
    """Within the block, the grader's state is the current one with the fields named in ``state`` replaced
    (:class:`Grading`'s: ``router``, ``run_seed``, ``student``, ``graded_so_far``); on the way out, exception
    or not, it is what it was before. A name that is not a field is a ``TypeError`` naming it."""
    unknown = sorted(set(state) - set(FIELDS))
    if unknown:
        raise TypeError(f"grading(): unknown grader state {', '.join(unknown)} (the fields are {', '.join(FIELDS)})")
    token = _GRADING.set(dataclasses.replace(_GRADING.get(), **state))
    try:
        yield _GRADING.get()
    finally:
        _GRADING.reset(token)


#: Attribute the trusted grader sets on a helper that must run beside the student's code.
RUNS_WITH_STUDENT_CODE = "__runs_with_student_code__"


#: Every helper marked :func:`runs_with_student_code`, by its spec ``"module:qualname"``.
MARKED_HELPERS: dict[str, Callable] = {}


def runs_with_student_code(helper: Callable) -> Callable:
    """Mark ``helper`` as one that must run in the process that holds the student's objects.

    It must only *compute values* (run student code at the inputs it is given and return plain data),
    never decide a verdict: whatever runs beside student code can be faked by it. In a notebook it is
    an ordinary call. In the trusted grader's parent, a call whose arguments hold student objects (from
    a test cell, or from another helper) goes to the sandboxed child, and its result comes back as plain
    data to be judged in the parent.
    """
    spec = f"{helper.__module__}:{helper.__qualname__}"

    @functools.wraps(helper)
    def wrapper(*args, **kwargs):
        router = _GRADING.get().router
        if router is not None and router.wants(args, kwargs):
            return router.send(spec, args, kwargs)
        return helper(*args, **kwargs)

    setattr(wrapper, RUNS_WITH_STUDENT_CODE, spec)
    MARKED_HELPERS[spec] = wrapper
    return wrapper


def passed(grade_id: str) -> bool | None:
    """Under the trusted grader: whether the test cell ``grade_id``, graded earlier in this run, passed.
    ``None`` in a notebook (nothing is graded there). A ``grade_id`` not graded before the asking cell is a
    fault of the test cell: ``ValueError``.

    A later cell may rely on what an earlier one established about the same submission: lesson 4's gradient
    check holds a forward that passed its own tests to the reference's values (see
    :func:`course.torch_checks.run_gradcheck`)."""
    graded = _GRADING.get().graded_so_far
    if graded is None:
        return None
    if grade_id not in graded:
        raise ValueError(f"grade_id: no test cell {grade_id!r} was graded before this one in this run"
                         f" (graded: {sorted(graded)})")
    return graded[grade_id]
