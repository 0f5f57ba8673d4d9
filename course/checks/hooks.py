"""The grader's hooks: the state the trusted grader (``autograder.grading.verdicts.run_tests``) sets in its
parent process while it grades one submission, and resets after; ``None`` in a student's kernel and in the
sandboxed child. This module is the one owner of that state: the checks read it here at call time (setting
``course.checks.run_seed`` and the like reaches it too, see :mod:`course.checks`).

The state belongs to one grading call, not to the process: ``router``, ``run_seed`` and ``graded_so_far``
are context variables (:data:`STATE`) read and set as this module's attributes, so two submissions graded at
once in two threads of one process (a Dask worker's threads) never see each other's (a new thread starts with
none set)."""

from __future__ import annotations

import contextvars
import functools
import sys
import types
from typing import Callable

#: The grader's state of the grading call running in this context (thread): see the module docstring.
STATE = {name: contextvars.ContextVar(f"course.checks.hooks.{name}", default=None)
         for name in ("router", "run_seed", "graded_so_far", "student")}


#: Attribute the trusted grader sets on a helper that must run beside the student's code.
RUNS_WITH_STUDENT_CODE = "__runs_with_student_code__"


#: Every helper marked :func:`runs_with_student_code`, by its spec ``"module:qualname"``.
MARKED_HELPERS: dict[str, Callable] = {}

#: ``router``: set by the trusted grader (in its parent process only) while it grades one submission: an object with
#: ``wants(args, kwargs) -> bool`` (do the arguments hold stand-ins for student objects?) and
#: ``send(spec, args, kwargs)`` (run the helper in the sandboxed child, return its plain-data result) and
#: ``timed_call(function, args, kwargs)`` (call a student function, return its result and the CPU seconds
#: the child spent, read from outside the child).
#: ``None`` in a student's kernel and in the child, where marked helpers are ordinary calls.


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
        current = STATE["router"].get()
        if current is not None and current.wants(args, kwargs):
            return current.send(spec, args, kwargs)
        return helper(*args, **kwargs)

    setattr(wrapper, RUNS_WITH_STUDENT_CODE, spec)
    MARKED_HELPERS[spec] = wrapper
    return wrapper


#: ``run_seed``: set by the trusted grader (in its parent process only) while it grades one submission: the grading
#: run's seed (an int the record keeps). With it, :func:`input_generator` and :func:`random_input` draw
#: from both it and the test's own seed, so hidden inputs change from one grading run to the next and
#: the same run seed gives the same inputs again. ``None`` in a student's kernel and in the child.

#: ``student``: set by the trusted grader (parent only) while it grades one submission: the identity the grader
#: established (the student folder ``collect`` wrote), from which :mod:`course.variants` draws the student's
#: own numbers; ``None`` when the run has none (the canary, variants off) and elsewhere.

#: ``graded_so_far``: set by the trusted grader (parent only) while it grades one submission: ``{grade_id:
#: passed}`` of the test cells graded so far in this run, in notebook order (read with :func:`passed`).
#: ``None`` elsewhere.


def passed(grade_id: str) -> bool | None:
    """Under the trusted grader: whether the test cell ``grade_id``, graded earlier in this run, passed.
    ``None`` in a notebook (nothing is graded there). A ``grade_id`` not graded before the asking cell is a
    fault of the test cell: ``ValueError``.

    A later cell may rely on what an earlier one established about the same submission: lesson 4's gradient
    check holds a forward that passed its own tests to the reference's values (see
    :func:`course.torch_checks.run_gradcheck`)."""
    graded = STATE["graded_so_far"].get()
    if graded is None:
        return None
    if grade_id not in graded:
        raise ValueError(f"grade_id: no test cell {grade_id!r} was graded before this one in this run"
                         f" (graded: {sorted(graded)})")
    return graded[grade_id]


def _state(name: str) -> property:
    variable = STATE[name]
    return property(lambda module: variable.get(), lambda module, value: variable.set(value),
                    doc=f"the grader's {name} in this context (a contextvars.ContextVar)")


class _Hooks(types.ModuleType):
    """This module, whose grader's state is read and set per context (:data:`STATE`)."""

    router = _state("router")
    run_seed = _state("run_seed")
    graded_so_far = _state("graded_so_far")
    student = _state("student")


sys.modules[__name__].__class__ = _Hooks
