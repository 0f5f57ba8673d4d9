"""The checks that graded test cells call: one test, two places.

In a student's notebook these helpers run on the student's own objects and fail with a message that
teaches. In the trusted grader (``autograder.grading``) the *same* test-cell code runs again in a clean
parent process where every name that the student's solution cells defined is a stand-in
(:class:`StudentCall`-like proxy): calling it runs the student's code in a sandboxed child process and
hands back plain data only (arrays, tensors rebuilt from arrays, numbers, strings, tuples, or the
student's exception as the matching built-in type). The comparison itself then runs in the parent,
which never ran student code.

The rules for writing a graded test cell, so that both places work:

* get the student's results only by calling student names (functions, classes, ``Cls.apply``) or by
  reading student variables; pass them inputs made in the test cell (seeded);
* judge with the ``check_*`` helpers below (plain ``assert`` is fine too, with a message that names no
  expected answer: the graded feedback shows it as it is);
* a helper that must run *next to* the student's code (because it calls ``.backward()`` on a tensor,
  say) is marked :func:`runs_with_student_code`; the grader ships the whole call to the child;
* end the cell with a statement (``print(...)``), never a bare expression.

The helpers live by job: :mod:`course.checks.values` (value checks, random inputs),
:mod:`course.checks.answers` (knowledge-check answers: parsed, or matched whole against a grammar), :mod:`course.checks.analysis` (the source analysis: the
resolver, the loop reader, the allow-lists) and :mod:`course.checks.hooks` (the state the grader sets while
it grades). This package re-exports the names notebooks and tests import (``from course.checks import
check_array``); the grader's state (``router``, ``run_seed``, ``graded_so_far``, ``student``) is owned by
:mod:`course.checks.hooks`: read with ``hooks.current()``, set only inside ``with hooks.grading(run_seed=11):``
(re-exported here as :func:`grading`), which resets it on the way out.
"""

from __future__ import annotations

from course.checks.analysis.avoids import (check_avoids, dynamic_code, forbidden_uses, identity_uses, unlisted_uses,
                                           unreadable_uses, untraced_uses)
from course.checks.analysis.identity import (TEXT_EVALUATORS, evaluates_text, forbidden_identities,
                                             forbidden_objects, judged, own_attribute, part_matches, walk)
from course.checks.analysis.lists import (ALLOWED_DUNDERS, ALLOWED_TENSOR_TEXT, ALLOWED_TEXT, DATA_BUILTINS,
                                          DYNAMIC_CALLS, INSTEAD, INTERNAL_MODULES, KNOWN_DECORATORS,
                                          LOOKUP_KEYWORDS, LOOKUP_NAMES, NAME_LOOKUPS, SYS_INTERNALS,
                                          TENSOR_ARITHMETIC, UNKNOWN, UNREADABLE_PATHS)
from course.checks.analysis.lists import (CONSUMERS, GEOMETRY, GEOMETRY_BOUND, LOOP_INSTEAD, LOOP_LIMIT, NPY_MAXDIMS,
                                          PER_ELEMENT_CALLS, SHAPE_ARGUMENTS)
from course.checks.analysis.loop_rules import (LoopReading, check_kernel_loops, check_output_loops, long_output_case,
                                               loop_nests)
from course.checks.analysis.loops import _LoopNests
from course.checks.analysis.objects import SetUp, data_methods, returns_data
from course.checks.analysis.resolver import _Resolver, resolver_for
from course.checks.analysis.text import cells_of, compile_tree, in_cells, line_of, parse, parsed, source_of, walked
from course.checks.answers import (Answered, NeedsReview, check_answered, check_layer, check_shape, check_words, read_layer,
                                   matches, read_shape, read_words)
from course.checks.hooks import (MARKED_HELPERS, RUNS_WITH_STUDENT_CODE, Grading, current, grading, passed,
                                 runs_with_student_code)
from course.checks.values import (CATCH_ALL_NAMES, INPUT_KINDS, LAYOUTS, STUDENT_ERRORS, WrongValue, call_on_layout,
                                  check_array, check_form,
                                  check_raises, check_real_divisor, check_real_divisor_backward, check_same_outcome,
                                  check_value, input_generator, random_geometry, random_input)


__all__ = [
    "call_on_layout",
    "check_array",
    "check_form",
    "check_real_divisor",
    "check_real_divisor_backward",
    "check_value",
    "check_raises",
    "check_same_outcome",
    "STUDENT_ERRORS",
    "check_answered",
    "check_words",
    "check_shape",
    "check_layer",
    "read_words",
    "NeedsReview",
    "WrongValue",
    "check_avoids",
    "runs_with_student_code",
    "random_input",
    "source_of",
]

