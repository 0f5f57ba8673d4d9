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
"""

from __future__ import annotations

import ast
import builtins
import fnmatch
import functools
import inspect
import math
import re
import sys
import textwrap
import unicodedata
import warnings
from typing import Any, Callable, Iterable

import numpy as np


@functools.lru_cache(maxsize=256)
def _parse(source: str) -> ast.Module:
    """``ast.parse``, once per source text (the checks read the tree, never change it)."""
    return ast.parse(source)

__all__ = [
    "check_array",
    "check_form",
    "check_real_divisor",
    "check_real_divisor_backward",
    "check_value",
    "check_raises",
    "check_same_outcome",
    "STUDENT_ERRORS",
    "check_answered",
    "check_short_answer",
    "normalised_answer",
    "NeedsReview",
    "WrongValue",
    "NEGATION",
    "check_avoids",
    "runs_with_student_code",
    "random_input",
    "source_of",
]

#: Attribute the trusted grader sets on a helper that must run beside the student's code.
RUNS_WITH_STUDENT_CODE = "__runs_with_student_code__"


#: Every helper marked :func:`runs_with_student_code`, by its spec ``"module:qualname"``.
MARKED_HELPERS: dict[str, Callable] = {}

#: Set by the trusted grader (in its parent process only) while it grades one submission: an object with
#: ``wants(args, kwargs) -> bool`` (do the arguments hold stand-ins for student objects?) and
#: ``send(spec, args, kwargs)`` (run the helper in the sandboxed child, return its plain-data result) and
#: ``timed_call(function, args, kwargs)`` (call a student function, return its result and the CPU seconds
#: the child spent, read from outside the child).
#: ``None`` in a student's kernel and in the child, where marked helpers are ordinary calls.
router = None


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
        current = router
        if current is not None and current.wants(args, kwargs):
            return current.send(spec, args, kwargs)
        return helper(*args, **kwargs)

    setattr(wrapper, RUNS_WITH_STUDENT_CODE, spec)
    MARKED_HELPERS[spec] = wrapper
    return wrapper


#: Set by the trusted grader (in its parent process only) while it grades one submission: the grading
#: run's seed (an int the record keeps). With it, :func:`input_generator` and :func:`random_input` draw
#: from both it and the test's own seed, so hidden inputs change from one grading run to the next and
#: the same run seed gives the same inputs again. ``None`` in a student's kernel and in the child.
run_seed = None

#: Set by the trusted grader (parent only) while it grades one submission: ``{grade_id: passed}`` of the
#: test cells graded so far in this run, in notebook order (read with :func:`passed`). ``None`` elsewhere.
graded_so_far: dict[str, bool] | None = None


def passed(grade_id: str) -> bool | None:
    """Under the trusted grader: whether the test cell ``grade_id``, graded earlier in this run, passed.
    ``None`` in a notebook (nothing is graded there). A ``grade_id`` not graded before the asking cell is a
    fault of the test cell: ``ValueError``.

    A later cell may rely on what an earlier one established about the same submission: lesson 4's gradient
    check holds a forward that passed its own tests to the reference's values (see
    :func:`course.torch_checks.run_gradcheck`)."""
    if graded_so_far is None:
        return None
    if grade_id not in graded_so_far:
        raise ValueError(f"grade_id: no test cell {grade_id!r} was graded before this one in this run"
                         f" (graded: {sorted(graded_so_far)})")
    return graded_so_far[grade_id]


#: The kinds of input :func:`random_input` draws from under the grader, one per call (see there), and how
#: often: pooling mostly follows a ReLU, so ReLU outputs come most often.
INPUT_KINDS = {"normal": 0.15, "relu": 0.4, "integer": 0.15, "large": 0.15, "tiny": 0.15}


def input_generator(seed: int) -> np.random.Generator:
    """The generator a test draws from: seeded by ``seed`` alone in a notebook (the same on every
    machine), by ``(run_seed, seed)`` under the trusted grader (fresh every grading run, reproducible
    from the record's seed)."""
    return np.random.default_rng(seed if run_seed is None else [int(run_seed), int(seed)])


def random_input(shape: Iterable[int], dtype: Any = np.float64, seed: int = 0) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` drawn from :func:`input_generator` ``(seed)``.

    In a notebook: standard normal, the same on every machine. Under the trusted grader each call draws
    one of :data:`INPUT_KINDS`: standard normal; ReLU outputs (``max(z - 0.5, 0)``: zeros inside windows,
    sometimes whole windows of them); small integers in ``[-4, 4]`` (exact in every float dtype); large
    magnitudes (``1e3`` to ``1e4``, a third of them 0, one sign per call: a window's sum has no
    cancellation that float rounding could turn into an error above ``rtol``); tiny ones (standard
    normal ``× 1e-3``). Every value is finite in float16 too.
    """
    shape = tuple(shape)
    rng = input_generator(seed)
    if run_seed is None:
        return rng.standard_normal(shape).astype(dtype)
    kind = rng.choice(list(INPUT_KINDS), p=list(INPUT_KINDS.values()))
    if kind == "relu":
        values = np.maximum(rng.standard_normal(shape) - 0.5, 0.0)
    elif kind == "integer":
        values = rng.integers(-4, 5, shape).astype(np.float64)
    elif kind == "large":
        values = rng.choice([-1.0, 1.0]) * rng.uniform(1e3, 1e4, shape) * (rng.random(shape) < 2 / 3)
    elif kind == "tiny":
        values = rng.standard_normal(shape) * 1e-3
    else:
        values = rng.standard_normal(shape)
    return values.astype(dtype)


def _plain(value: Any) -> str:
    """``repr`` of a value with NumPy scalars shown as plain numbers (``1.0``, not ``np.float64(1.0)``)."""
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_plain(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    return repr(value)


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _as_numpy(value: Any) -> np.ndarray:
    """A plain ndarray view of an ndarray or a torch tensor (moved to the CPU)."""
    if type(value) is np.ndarray:
        return value
    return value.detach().cpu().numpy()


class WrongValue(AssertionError):
    """A check's failure whose message names the expected value (a key, when the test is hidden: a
    knowledge check's option, a prediction, a number worked out by hand). ``withheld`` says the same
    without it: which check failed, what the student gave, "not the expected value". The trusted grader
    keeps both and the graded notebook and its feedback show ``withheld`` until the instructor releases
    expected answers (``c.ExpectedAnswers.reveal`` in ``nbgrader_config.py``); in a student's own kernel
    (visible checks only) the full message shows."""

    def __init__(self, message: str, withheld: str):
        super().__init__(message)
        self.withheld = withheld


def check_form(actual: Any, expected: Any, name: str, *, check_dtype: bool = True) -> None:
    """Assert that ``actual`` has the form of ``expected`` (an ndarray or a torch tensor): the exact type (no
    subclass), the shape, then the dtype (unless ``check_dtype`` is False), each with its own message. The
    values are not looked at (:func:`check_array` checks them after this)."""
    expected_type = type(expected)
    if type(actual) is not expected_type:
        raise AssertionError(
            f"{name}: expected a {_type_name(expected)} but got {_type_name(actual)}"
            " (return the array itself, not a subclass, list or scalar)"
        )
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(
            f"{name}: expected shape {tuple(expected.shape)} but got {tuple(actual.shape)}"
        )
    if check_dtype and actual.dtype != expected.dtype:
        raise AssertionError(
            f"{name}: expected dtype {expected.dtype} but got {actual.dtype}"
            " (the output keeps the input's dtype)"
        )


def check_array(actual: Any, expected: Any, name: str, *, rtol: float = 1e-6, atol: float = 1e-6,
                check_dtype: bool = True, equal_nan: bool = False) -> None:
    """Assert that ``actual`` matches the reference ``expected`` (an ndarray or a torch tensor).

    Checks, in this order and each with its own message: the form (:func:`check_form`: the exact type, no
    subclass, the shape, the dtype), that every value is finite, then
    ``|actual - expected| <= atol + rtol * |expected|`` element-wise (:class:`WrongValue`: the graded
    feedback withholds the expected values, never the type, shape or dtype asked for).
    ``check_dtype=False`` leaves the dtype out, for a cell whose rule is the values while another cell
    of the same function grades its dtype (one bug, one penalty). ``equal_nan=True`` lets a value be
    non-finite where ``expected`` holds the same one (for comparing a function with itself).
    """
    check_form(actual, expected, name, check_dtype=check_dtype)
    got, want = _as_numpy(actual), _as_numpy(expected)
    unlike = ~np.isfinite(got)
    if equal_nan:  # non-finite on either side: the same on both
        unlike = (unlike | ~np.isfinite(want)) & ~((got == want) | (np.isnan(got) & np.isnan(want)))
    if unlike.any():
        bad = tuple(int(i) for i in np.argwhere(unlike)[0])
        if equal_nan:
            raise AssertionError(f"{name}: got {_plain(got[bad])} at index {bad}, expected {_plain(want[bad])} (a "
                                 f"non-finite value must be the same on both sides)")
        raise AssertionError(f"{name}: non-finite value {got[bad]} at index {bad}")
    with np.errstate(invalid="ignore"):  # inf - inf where equal_nan allowed the same infinity on both sides
        error = np.abs(got.astype(np.float64) - want.astype(np.float64))
    if equal_nan:
        error[~np.isfinite(got)] = 0.0  # the same non-finite value as expected (checked above)
    allowed = atol + rtol * np.abs(want.astype(np.float64))
    if (error > allowed).any():
        worst = np.unravel_index(int(np.argmax(error - allowed)), error.shape)
        where = tuple(int(i) for i in worst)
        differ = f"{name}: {int((error > allowed).sum())} of {error.size} values differ; worst at index {where}:"
        raise WrongValue(
            f"{differ} got {_plain(got[where])}, expected {_plain(want[where])} (max abs error {error.max():.3g},"
            f" tolerance atol={atol:g}, rtol={rtol:g})",
            f"{differ} got {_plain(got[where])}, not the expected value (tolerance atol={atol:g}, rtol={rtol:g})",
        )


def _same_plain(actual: Any, expected: Any) -> bool:
    if isinstance(expected, (tuple, list)):
        return (
            type(actual) is type(expected)
            and len(actual) == len(expected)
            and all(_same_plain(a, e) for a, e in zip(actual, expected))
        )
    if type(expected) is bool:
        return type(actual) in (bool, np.bool_) and bool(actual) == expected
    if type(expected) is int:
        is_int = type(actual) is int or (isinstance(actual, np.integer) and type(actual) is not np.bool_)
        return is_int and int(actual) == expected
    if type(expected) is float:
        is_real = type(actual) in (float, int) or isinstance(actual, (np.floating, np.integer))
        return is_real and math.isclose(float(actual), expected, rel_tol=1e-9, abs_tol=1e-12)
    return type(actual) is type(expected) and actual == expected


def check_value(actual: Any, expected: Any, name: str) -> None:
    """Assert that a plain value (int, float, bool, str, or a tuple/list of them) equals ``expected``.

    The type must match too (an ``int`` where an ``int`` is asked, a ``tuple`` where a tuple is asked);
    NumPy scalars count as ints and floats; floats compare with a relative tolerance of 1e-9. A mismatch
    raises :class:`WrongValue` (the graded feedback withholds the expected value and its type).
    """
    if not _same_plain(actual, expected):
        raise WrongValue(
            f"{name}: expected {_plain(expected)} ({_type_name(expected)}) but got {_plain(actual)} ({_type_name(actual)})",
            f"{name}: got {_plain(actual)} ({_type_name(actual)}), not the expected value",
        )


def check_raises(error: type[BaseException], mentions: Iterable[str], function: Callable, *args, **kwargs) -> None:
    """Assert that ``function(*args, **kwargs)`` raises ``error`` whose message names every word in ``mentions``
    (the first is the argument at fault), and that says *which* argument is at fault: within one run of a
    test cell, two errors of the same type for different arguments of ``function`` must not name the same
    three or more arguments the same number of times (:func:`_catch_all`: one message naming every argument).

    A good error names the argument and the rule it broke, e.g. ``"kernel_size must be >= 1, got 0"``.
    """
    mentions = list(mentions)
    call = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    try:
        function(*args, **kwargs)
    except error as exc:
        message = str(exc)
        missing = [word for word in mentions if word.lower() not in message.lower()]
        if missing:
            raise AssertionError(
                f"({call}) raised {type(exc).__name__}({message!r}), but the message should mention"
                f" {', '.join(repr(w) for w in missing)} so the caller knows which argument and rule"
            ) from None
        same = _catch_all(inspect.currentframe().f_back, function, error, mentions[0] if mentions else "", message)
        if same is not None:
            raise AssertionError(
                f"({call}) raised {type(exc).__name__}({message!r}), which names the same arguments as the "
                f"{error.__name__} for a bad {same[0]} did ({same[1]!r}): the caller cannot tell which argument is "
                f"wrong; say which one, and the rule it broke (e.g. \"{mentions[0]} must be ..., got ...\")"
            ) from None
        return
    except Exception as exc:  # the wrong kind of error
        raise AssertionError(
            f"({call}) should raise {error.__name__} but raised {type(exc).__name__}: {exc}"
        ) from None
    raise AssertionError(f"({call}) should raise {error.__name__}, but it returned normally")


#: The messages :func:`check_raises` has seen, per run of a test cell and function: [(error, argument at
#: fault, message)]. A run of a cell is the calling frame's file name (IPython names each cell's code, one
#: name per cell text; the grader ``<test id>``) with its globals (the grader's are new for every run of a
#: test; kept alive while listed, so their id is not reused). The last few only.
_RAISED: dict = {}


def _callee(function: Any) -> Any:
    """The same function across calls: a grader stand-in by the source it carries, a bound method by its
    object and function (``AvgPool2dFunction.apply`` is a new bound method at every access)."""
    source = getattr(function, "__student_source__", None)
    if isinstance(source, str):
        return source
    owner, inner = getattr(function, "__self__", None), getattr(function, "__func__", None)
    return (id(owner), id(inner)) if inner is not None else id(function)


def _argument_counts(message: str, families: list[str]) -> dict[str, int]:
    """How often ``message`` names each argument (``input`` covers ``input_size``), by whole words."""
    counts: dict[str, int] = {}
    for word in re.findall(r"[a-z_][a-z0-9_]*", message.lower()):
        family = next((f for f in families if word == f or word.startswith(f + "_")), None)
        if family is not None:
            counts[family] = counts.get(family, 0) + 1
    return counts


#: How many arguments a message must name to be taken for a catch-all when another argument's error names
#: them alike: one message for two rules ("input_size and kernel_size must be >= 1") is honest.
CATCH_ALL_NAMES = 3


def _catch_all(frame: Any, function: Any, error: type, argument: str, message: str) -> tuple[str, str] | None:
    """``(argument, message)`` of an earlier error of type ``error`` in this run of the calling cell, for a
    different argument of ``function``, whose message names the same :data:`CATCH_ALL_NAMES` or more arguments
    exactly as often as ``message`` does; or ``None``. Records this one. The arguments are those the cell's checks put first in ``mentions``
    (families by prefix: ``input`` and ``input_size`` are one)."""
    scope = (frame.f_code.co_filename, frame.f_globals) if frame is not None else ("", None)
    key = (scope[0], id(scope[1]), _callee(function))
    seen = _RAISED.setdefault(key, (scope[1], function, []))[2]
    while len(_RAISED) > 4:
        del _RAISED[next(iter(_RAISED))]
    argument = argument.lower()
    words = sorted({a for _, a, _ in seen} | {argument})
    families = [w for w in words if w and not any(w.startswith(o + "_") for o in words)]

    def family(word: str) -> str | None:
        return next((f for f in families if word == f or word.startswith(f + "_")), None)

    counts, found = _argument_counts(message, families), None
    for kind, other, earlier in seen:
        if kind is error and family(other) != family(argument) and len(counts) >= CATCH_ALL_NAMES and \
                _argument_counts(earlier, families) == counts:
            found = (other, earlier)
            break
    if len(seen) < 256:
        seen.append((error, argument, message))
    return found


#: The errors a check may take as a symptom of the student's code and turn into a verdict. Never a broad
#: ``Exception``: the trusted grader's own fault (``GraderFault``) is one, and must stay a grader error.
STUDENT_ERRORS = (ArithmeticError, AttributeError, LookupError, RuntimeError, TypeError, ValueError)


def check_same_outcome(actual: Callable[[], Any], expected: Callable[[], Any], name: str, *,
                       rtol: float = 1e-12, atol: float = 1e-12) -> None:
    """Assert that ``actual()`` ends as ``expected()`` does: the same array or tensor (:func:`check_array`),
    or an error of the same type (one of :data:`STUDENT_ERRORS`) when ``expected()`` raises.

    For a wrapper judged against the student's own function that it wraps, at the same arguments: a bug
    of the wrapped function, which its own test judges, is then not counted a second time.
    """
    try:
        want = expected()
    except STUDENT_ERRORS as error:
        try:
            actual()
        except STUDENT_ERRORS as raised:
            if type(raised) is not type(error):
                raise AssertionError(f"{name}: raised {type(raised).__name__}: {raised}; expected"
                                     f" {type(error).__name__}: {error}") from None
            return
        raise AssertionError(f"{name}: returned a result, expected {type(error).__name__}: {error}") from None
    check_array(actual(), want, name, rtol=rtol, atol=atol)


#: How a knowledge-check answer must be written, by form.
_FORMS = {"true/false": "True or False (Python's booleans, no quotes)",
          "short answer": 'a few words in a string, e.g. "..."',
          "2x2 numbers": "two rows of two numbers, nested lists, e.g. [[0.5, 0], [0, 0.5]]"}


def _is_number(value: Any) -> bool:
    return (type(value) in (int, float) or isinstance(value, (np.integer, np.floating))) and math.isfinite(value)


def check_answered(answer: Any, name: str, form: Any, taught_in: str) -> str:
    """Check the *form* of a knowledge-check answer; return formative feedback (to print) that never
    depends on the key: how the answer was read, and where the topic is taught.

    ``form`` is a list of letters (multiple choice), ``"true/false"``, ``"short answer"`` or ``"2x2 numbers"``
    (a prediction of a 2×2 grid: two rows, lists or tuples, of two finite numbers each).
    """
    if isinstance(form, str) and form not in _FORMS:
        raise ValueError(f"form must be a list of letters, {', '.join(repr(f) for f in _FORMS)}, got {form!r}")
    if form == "true/false":
        ok = type(answer) is bool
        read = repr(answer)
    elif form == "2x2 numbers":
        ok = (type(answer) in (list, tuple) and len(answer) == 2
              and all(type(row) in (list, tuple) and len(row) == 2 and all(_is_number(v) for v in row) for row in answer))
        read = repr([[float(v) for v in row] for row in answer]) if ok else ""
    elif form == "short answer":
        ok = type(answer) is str and len(normalised_answer(answer).replace(" ", "")) >= 3
        read = repr(normalised_answer(answer)) if ok else ""
    else:
        ok = any(type(answer) is type(option) and answer == option for option in form)
        read = repr(answer)
    if not ok:
        wanted = _FORMS.get(form) if isinstance(form, str) else f"one of {list(form)!r}"
        raise AssertionError(f"{name}: answer with {wanted}, got {answer!r}")
    return f"{name}: answered, read as {read}. Unsure? It is taught in {taught_in}."


def normalised_answer(text: str) -> str:
    """A short answer as the grader reads it: lower case, Unicode compatibility forms folded, curly
    apostrophes straight, one space between words and none around brackets, commas and ``=`` (so
    ``"(N, C, 1, 1)"`` reads ``"(n,c,1,1)"``), no surrounding spaces or final full stop."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold().replace("\u2019", "'").replace("\u2018", "'")
    folded = re.sub(r"\s+", " ", folded).strip().rstrip(".").strip()
    return re.sub(r"\s*([()\[\],=×*])\s*", r"\1", folded)


class NeedsReview(AssertionError):
    """A short answer that a keyword rule cannot settle (:func:`check_short_answer`): it names the key
    ideas but also negates or contradicts something. It fails like any ``AssertionError`` (no point); the
    trusted grader records the answer (``answer``) so that the instructor scores it by hand."""

    def __init__(self, message: str, answer: str):
        super().__init__(message)
        self.answer = answer


#: A word that negates or reverses what it is next to: ``not`` (but not ``not only``/``not just``), ``no``,
#: ``never``, ``neither``/``nor``, ``none``, ``nothing``, ``without``, ``cannot``, every ``-n't`` (with or
#: without the apostrophe), ``rather than``, ``instead of``, ``unlike``, ``far from``, ``fail(s/ed) to``,
#: ``hardly``, and the words that call a claim untrue or take it back (``false``, ``wrong``, ``myth``,
#: ``doubt``, ``disagree``, ``nope``, ``kidding``, ``misconception``, ``deprecated``, ``said nobody``,
#: ``allegedly``, ``the other way round``, ``the reverse``, ...).
NEGATION = re.compile(r"\b(?:not(?! only\b| just\b| merely\b)|no|never|neither|nor|none|nothing|without|cannot|"
                      r"hardly|rather than|instead of|unlike|far from|fail(?:s|ed)? to|false\w*|wrong\w*|untrue|"
                      r"incorrect\w*|myths?|opposite|contrary|doubt\w*|dubious|questionable|disagree\w*|nope|nah|"
                      r"kidding|joking|misconception\w*|mistaken|deprecated|nonsense|bogus|nobody|no-one|nowhere|"
                      r"allegedly|supposedly|reverse\w*|vice versa|other way (?:a)?round|as if|in your dreams|"
                      r"yeah,? right|lol|sarcas\w*|ironic\w*|pretend\w*|"
                      r"(?:is|are|was|were|do|does|did|has|have|had|wo|ca|could|would|should|must|need)n'?t)\b")
#: A word that offers another answer beside the key ("the mean or the mode"): a choice is not an answer.
ALTERNATIVE = re.compile(r"\b(?:or|either|whichever|otherwise|alternatively)\b")


def _governs(negation: re.Match, match: re.Match, text: str) -> bool:
    """Whether ``negation`` negates ``match``: the match starts after it, at most three words later, with
    no punctuation between ("not the max", "rather than the max"; not "no, the max")."""
    between = text[negation.end():match.start()]
    return (negation.end() <= match.start() and len(re.findall(r"[\w']+", between)) <= 3
            and not re.search(r"[,;:!?()]|\.(?=\s|$)", between))


def check_short_answer(answer: Any, name: str, all_of: Iterable[str], none_of: Iterable[str] = (),
                       contradicts: Iterable[str] = ()) -> None:
    """Grade a short answer by meaning, failing closed: a keyword match never gives a point to an answer
    that also negates or contradicts it. Its :func:`normalised_answer` is read with regular expressions:
    ``all_of`` the key ideas (each with its spellings and its direction: "fewer parameters", not just
    "parameters"; an idea stated as a negation holds its negation: "does not depend on where"),
    ``none_of`` wrong answers (another option: "the mean or the max"), ``contradicts`` the opposites of
    the key ideas ("more parameters"). A negation (:data:`NEGATION`) *governs* what starts at most three
    words after it with no punctuation between ("..., not the max"). Then:

    * a key idea missing, or a wrong answer that no negation governs: not the answer (``AssertionError``);
    * a question mark, a letter outside the Latin alphabet (a look-alike "о" in "nоt"), another answer offered
      (``or``, ``either``: "the mean or the mode"), an opposite that no negation governs, or any other
      negation: one that is not part of a key idea's
      own match and does not govern a wrong answer or an opposite alone, without a key idea ("it does *not*
      reduce overfitting", "..., that is false"): :class:`NeedsReview`, no point until the instructor reads it;
    * else the point ("the mean, not the max" scores: its negation governs a wrong answer only).
    """
    if type(answer) is not str:
        raise AssertionError(f"{name}: a short answer is a string, got {answer!r}")
    text = normalised_answer(answer)
    negations = list(NEGATION.finditer(text))
    keys = [list(re.finditer(pattern, text)) for pattern in all_of]
    wrong = [m for pattern in none_of for m in re.finditer(pattern, text)]
    opposite = [m for pattern in contradicts for m in re.finditer(pattern, text)]
    if not all(keys) or any(not any(_governs(n, m, text) for n in negations) for m in wrong):
        raise AssertionError(f"{name}: {answer!r} is not the answer")
    why = "it asks a question instead of stating an answer" if "?" in text else ""
    if any(char.isalpha() and not char.isascii() for char in text):
        why = "it has letters outside the Latin alphabet (a look-alike letter reads as another word)"
    matches = [m for found in keys for m in found]
    offered = [m for m in ALTERNATIVE.finditer(text) if not any(k.start() <= m.start() < k.end() for k in matches)]
    if offered and not why:
        why = f"it offers more than one answer ({offered[0].group()!r})"
    if any(not any(_governs(n, m, text) for n in negations) for m in opposite):
        why = "it also says something that contradicts the answer"
    for n in negations:
        inside = any(m.start() <= n.start() and n.end() <= m.end() for m in matches)
        allowed = any(_governs(n, m, text) for m in wrong + opposite) and \
            not any(_governs(n, m, text) for m in matches)
        if not (inside or allowed or why):
            why = f"a keyword rule cannot settle an answer that says {n.group()!r}"
    if why:
        raise NeedsReview(f"{name}: {answer!r} needs a look: {why}; your instructor reads it, and it scores 0 "
                          "until then", answer)


def source_of(function: Any) -> str:
    """The source text of a student's function or class (the grader's stand-ins carry it too)."""
    text = getattr(function, "__student_source__", None)
    if text is None:
        text = _with_helpers(function)
    return textwrap.dedent(text)


def _source_text(item: Any) -> str:
    """The source of a function, or of a class; a class defined in a notebook (whose module has no file
    for ``inspect``) is rebuilt from the sources of its methods."""
    try:
        return textwrap.dedent(inspect.getsource(item))
    except (OSError, TypeError):
        if not inspect.isclass(item):
            raise
    methods = [getattr(m, "__func__", getattr(m, "fget", m)) for m in vars(item).values()]
    bodies = [textwrap.dedent(inspect.getsource(m)) for m in methods if inspect.isfunction(m)]
    if not bodies:
        raise OSError(f"no source for class {item.__name__}")
    return f"class {item.__name__}:\n" + "\n".join(textwrap.indent(b, "    ") for b in bodies)


def _with_helpers(function: Any) -> str:
    """The source of ``function`` followed by that of every function or class of the same module (the
    notebook) it names, transitively: in the notebook, the view the grader has of a submission."""
    module = getattr(function, "__module__", None)
    namespace = getattr(function, "__globals__", None) or getattr(inspect.getmodule(function), "__dict__", {})
    wanted, seen, texts, seen_constants = [function], set(), [], set()
    owner = namespace.get(str(getattr(function, "__qualname__", "")).split(".")[0])
    if "." in str(getattr(function, "__qualname__", "")) and inspect.isclass(owner) and owner.__module__ == module:
        wanted.insert(0, owner)  # a method: its class too (what ``self.pool_size = ...`` set is its own)
    while wanted:
        current = wanted.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        try:
            text = _source_text(current)
        except (OSError, TypeError):
            if current is function:
                raise
            continue
        texts.append(text)
        for node in ast.walk(_parse(text)):
            helper = namespace.get(node.id) if isinstance(node, ast.Name) else None
            if (inspect.isfunction(helper) or inspect.isclass(helper)) and helper.__module__ == module:
                wanted.append(helper)
            elif isinstance(node, ast.Name) and node.id in namespace and _is_constant(helper) \
                    and node.id not in seen_constants:
                seen_constants.add(node.id)  # a constant of the notebook's (POOL_NDIM = 4) is its own name
                texts.append(f"{node.id} = {helper!r}")
    return "\n\n".join(texts)


def _is_constant(value: Any) -> bool:
    """A plain constant a notebook may define at the top (a number, a string, a tuple of them)."""
    if isinstance(value, tuple):
        return all(_is_constant(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


def _origin_of(value: Any, own_module: str | None) -> str | None:
    """Where an object of a namespace comes from, as a dotted path (``torch.nn.functional.avg_pool2d``),
    or ``None`` for the code's own objects and plain constants (their source is read anyway)."""
    if _is_constant(value):
        return None
    value = getattr(value, "func", value) if isinstance(value, functools.partial) else value
    if inspect.ismodule(value):
        return value.__name__
    module = getattr(value, "__module__", None) if (callable(value) or inspect.isclass(value)) else None
    if not isinstance(module, str):
        kind = type(value)
        module, name = kind.__module__, kind.__qualname__
    else:
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "")
    if module == own_module:
        return None
    return f"{module}.{name}" if name else module


def _chain(node: ast.AST) -> tuple[ast.Name | None, list[str]]:
    """``a.b.c`` (or ``getattr(a.b, "c")``) -> (the Name ``a``, ["b", "c"]); for ``f(x).b`` the base is not
    a name (None)."""
    attributes = []
    while True:
        if isinstance(node, ast.Attribute):
            attributes.insert(0, node.attr)
            node = node.value
        elif _literal_getattr(node):
            attributes.insert(0, node.args[1].value)
            node = node.args[0]
        else:
            break
    return (node if isinstance(node, ast.Name) else None), attributes


def _literal_getattr(node: ast.AST) -> bool:
    """``getattr(obj, "name")`` (or ``hasattr``), which reads an attribute as ``obj.name`` does."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))


def _is_constant_expr(node: ast.AST) -> bool:
    """A literal (``None``, ``2``, ``(1, 1)``, ``1 << 19``, ``-1``): a default value that is plain data."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_is_constant_expr(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _is_constant_expr(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_constant_expr(node.left) and _is_constant_expr(node.right)
    return False


#: Decorators that leave a ``def`` what it is (by resolved path; ``<property>.setter`` is understood too).
KNOWN_DECORATORS = {"staticmethod", "classmethod", "property", "torch.autograd.function.once_differentiable",
                    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "functools.wraps",
                    "functools.cache", "functools.lru_cache"}
#: Built-ins whose result carries none of their arguments (a number, a string, a bool, None, a range).
DATA_BUILTINS = {"isinstance", "issubclass", "len", "print", "str", "repr", "int", "float", "bool", "complex",
                 "abs", "round", "range", "hash", "id", "format", "divmod", "pow", "any", "all", "ord",
                 "chr", "hex", "bin", "oct", "callable", "ascii"}
#: Calls that look a function up from a string, as ``getattr`` with a computed name does.
NAME_LOOKUPS = {"operator.attrgetter", "operator.methodcaller", "pydoc.locate", "pkgutil.resolve_name",
                "torch._C._jit_get_operation", "torch.overrides.get_overridable_functions",
                "torch.overrides.get_testing_overrides", "torch.overrides.get_ignored_functions"}
_BUILTIN_NAMES = set(dir(builtins)) | {"display", "get_ipython", "__class__", "__name__"}
UNKNOWN = "a name that is neither defined in your solution cells, imported, nor given by the set-up"
INSTEAD = ("call functions and classes directly by their module name (torch.zeros, F.pad, x.sum, np.cumsum) "
           "or your own def by its name")


_MISSING = object()


def _may_call(value: Any) -> bool:
    """Might ``value`` be called to reach other code (a function, class, module; or unknown), or hand out
    such a thing: a library's dict, list, tuple or set that holds one (PyTorch's tables of layer classes)?"""
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        items = list(value.keys()) + list(value.values()) if isinstance(value, dict) else list(value)
        return any(callable(v) or inspect.ismodule(v) for v in items[:10_000])
    return value is _MISSING or callable(value) or inspect.ismodule(value)


def _library_object(path: str) -> Any:
    """The object at dotted ``path`` in a module already imported (``torch.float64``), read without
    running code (``inspect.getattr_static``), or ``_MISSING``."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        found = sys.modules.get(".".join(parts[:cut]))
        if found is not None:
            break
    else:
        return _MISSING
    for part in parts[cut:]:
        try:
            found = inspect.getattr_static(found, part)
        except AttributeError:
            return _MISSING
    return found


#: The expressions whose value is made of, or chosen from, these parts (what the resolver follows).
_VALUE_PARTS = {ast.Tuple: lambda node: node.elts, ast.List: lambda node: node.elts, ast.Set: lambda node: node.elts,
                ast.Dict: lambda node: node.values, ast.BoolOp: lambda node: node.values,
                ast.IfExp: lambda node: (node.body, node.orelse), ast.Starred: lambda node: (node.value,),
                ast.NamedExpr: lambda node: (node.value,)}


class _Scope:
    """One scope of the checked code (module, function or lambda, class body, comprehension)."""

    def __init__(self, kind: str, parent: "_Scope | None", depth: int = 0):
        self.kind, self.parent, self.depth = kind, parent, depth
        self.bindings: dict[str, list[tuple]] = {}   # name -> [(kind, detail, scope the detail is read in, line)]
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()

    def bind(self, name: str, kind: str, detail: Any, scope: "_Scope", line: int) -> None:
        self.bindings.setdefault(name, []).append((kind, detail, scope, line))

    def function_scope(self) -> "_Scope":
        """Where a walrus binds: the nearest scope that is not a comprehension."""
        scope = self
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope


class _Carried:
    """What a value may carry: why it cannot be traced (or None), whether it may be a function, class or
    module (``holds``), and the dotted paths it may be (an alias of ``torch.nn.functional``)."""

    __slots__ = ("taint", "holds", "paths")

    def __init__(self, taint: str | None = None, holds: bool = False, paths: frozenset = frozenset()):
        self.taint, self.holds, self.paths = taint, holds, paths

    def __or__(self, other: "_Carried") -> "_Carried":
        return _Carried(self.taint or other.taint, self.holds or other.holds, self.paths | other.paths)

    def key(self):
        return (self.taint, self.holds, self.paths)


class _Resolver:
    """Resolves every name the code reads, per scope, by Python's rules (function locals and arguments,
    comprehensions, class bodies, ``global``/``nonlocal``, walrus), to the code's own ``def``/``class``,
    an import, the set-up's ``namespace``, a built-in, or a local whose bindings it understands; and lists
    the calls it cannot trace (see :func:`untraced_uses`)."""

    def __init__(self, tree: ast.AST, namespace: dict | None, own_module: str | None):
        self.namespace = namespace or {}
        self.own_module = own_module
        self.scope_of: dict[int, _Scope] = {}
        self.problems: list[str] = []
        self.imports: list[tuple[str, list[str]]] = []
        self.pattern_attributes: list[str] = []
        self.stored_attributes: dict[str, list[tuple[ast.AST, _Scope, int]]] = {}
        self.item_stores: list[tuple[ast.Name, ast.AST, _Scope]] = []
        self.decorated: list[tuple[ast.AST, ast.AST, _Scope]] = []
        self._reading: set[str] = set()  # attributes whose stored values are being read (self.a = self.a)
        self.module = _Scope("module", None)
        self.scopes = [self.module]
        self._visit_body(getattr(tree, "body", [tree]), self.module)
        self._move_declared()
        for base, value, where in self.item_stores:  # fns[0] = F.relu: fns now holds a function
            owner = self.lookup(base.id, self.scope_of.get(id(base), where))
            if owner is not None:
                owner.bindings[base.id].append(("item", value, where, base.lineno))
        self.state: dict[tuple[int, str], _Carried] = {}
        self._settle()

    # --- building the scopes ------------------------------------------------------------------------
    def _new(self, kind: str, parent: _Scope) -> _Scope:
        scope = _Scope(kind, parent, parent.depth + 1)
        self.scopes.append(scope)
        return scope

    def _visit_body(self, body: list, scope: _Scope) -> None:
        for statement in body:
            self._visit(statement, scope)

    def _bind_target(self, target: ast.AST, kind: str, detail: Any, scope: _Scope, value_scope: _Scope) -> None:
        """Bind every name of an assignment target (tuples unpacked: each name may be any part of it)."""
        if isinstance(target, ast.Name):
            scope.bind(target.id, kind, detail, value_scope, target.lineno)
            self.scope_of[id(target)] = scope
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(element, kind, detail, scope, value_scope)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, kind, detail, scope, value_scope)
        elif isinstance(target, ast.Attribute):
            self.stored_attributes.setdefault(target.attr, []).append((detail if kind == "assign" else None,
                                                                      value_scope, target.lineno))
            self._visit(target.value, scope)
        elif isinstance(target, ast.Subscript):
            base, _ = _chain(target.value)
            if base is not None and kind == "assign":
                self.item_stores.append((base, detail, value_scope))
            self._visit(target.value, scope)
            self._visit(target.slice, scope)
        else:
            self._visit(target, scope)

    def _visit_arguments(self, args: ast.arguments, outer: _Scope, inner: _Scope) -> None:
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        pairs += [(a, None) for a in (args.vararg, args.kwarg) if a is not None]
        for arg, default in pairs:
            if default is None or _is_constant_expr(default):
                inner.bind(arg.arg, "param", None, outer, arg.lineno)
            elif _chain(default)[0] is not None:  # an alias: x=torch.float64 is torch.float64 unless given
                inner.bind(arg.arg, "assign", default, outer, arg.lineno)
            else:
                inner.bind(arg.arg, "untraced", "a default argument value that is not a constant", outer, arg.lineno)
            if default is not None:
                self._visit(default, outer)
            if arg.annotation is not None:
                self._visit(arg.annotation, outer)

    def _declarations(self, body: list, scope: _Scope) -> None:
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Global):
                scope.declared_global.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                scope.declared_nonlocal.update(node.names)
            elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(ast.iter_child_nodes(node))

    def _visit(self, node: ast.AST, scope: _Scope) -> None:
        self.scope_of[id(node)] = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                self._visit(decorator, scope)
                self.decorated.append((decorator, node, scope))
            if node.returns is not None:
                self._visit(node.returns, scope)
            inner = self._new("function", scope)
            self._visit_arguments(node.args, scope, inner)
            scope.bind(node.name, "def", node, scope, node.lineno)
            self._declarations(node.body, inner)
            self._visit_body(node.body, inner)
        elif isinstance(node, ast.Lambda):
            inner = self._new("function", scope)
            self._visit_arguments(node.args, scope, inner)
            self._visit(node.body, inner)
        elif isinstance(node, ast.ClassDef):
            for part in node.decorator_list:
                self._visit(part, scope)
                self.decorated.append((part, node, scope))
            for part in node.bases + [k.value for k in node.keywords]:
                self._visit(part, scope)
            scope.bind(node.name, "class", node, scope, node.lineno)
            inner = self._new("class", scope)
            self._visit_body(node.body, inner)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = self._new("comprehension", scope)
            for index, generator in enumerate(node.generators):
                where = scope if index == 0 else inner
                self._visit(generator.iter, where)
                self._bind_target(generator.target, "for", generator.iter, inner, where)
                for condition in generator.ifs:
                    self._visit(condition, inner)
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self._visit(part, inner)
        elif isinstance(node, ast.Assign):
            self._visit(node.value, scope)
            for target in node.targets:
                self._bind_target(target, "assign", node.value, scope, scope)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            if node.value is not None:
                self._visit(node.value, scope)
                self._bind_target(node.target, "assign", node.value, scope, scope)
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self._visit(ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target), scope)
            if isinstance(node, ast.AnnAssign):
                self._visit(node.annotation, scope)
        elif isinstance(node, ast.NamedExpr):
            self._visit(node.value, scope)
            self._bind_target(node.target, "assign", node.value, scope.function_scope(), scope)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._visit(node.iter, scope)
            self._bind_target(node.target, "for", node.iter, scope, scope)
            self._visit_body(node.body + node.orelse, scope)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self._visit(item.context_expr, scope)
                if item.optional_vars is not None:
                    self._bind_target(item.optional_vars, "assign", item.context_expr, scope, scope)
            self._visit_body(node.body, scope)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                first = alias.name.split(".")[0]
                path = alias.name if alias.asname else first
                scope.bind(alias.asname or first, "import", path, scope, node.lineno)
                self.imports.append((f"import {alias.name}", alias.name.split(".")))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module:
                self.imports.append((f"import {module}", module.split(".")))
            for alias in node.names:
                if alias.name == "*":
                    self.problems.append(f"`from {module} import *` binds names the grader cannot see: import the "
                                         f"names you use (from {module} import a, b)")
                    continue
                path = f"{module}.{alias.name}".lstrip(".")
                scope.bind(alias.asname or alias.name, "import", path, scope, node.lineno)
                self.imports.append((f"import {path}", path.split(".")))
        elif isinstance(node, ast.ExceptHandler):
            if node.type is not None:
                self._visit(node.type, scope)
            if node.name:
                scope.bind(node.name, "untraced", "an `except ... as` target", scope, node.lineno)
            self._visit_body(node.body, scope)
        elif isinstance(node, ast.Match):
            self._visit(node.subject, scope)
            for case in node.cases:
                self._visit_pattern(case.pattern, node.subject, scope)
                if case.guard is not None:
                    self._visit(case.guard, scope)
                self._visit_body(case.body, scope)
        else:
            for child in ast.iter_child_nodes(node):
                self._visit(child, scope)

    def _visit_pattern(self, pattern: ast.AST, subject: ast.AST, scope: _Scope) -> None:
        for node in ast.walk(pattern):
            name = getattr(node, "name", None) if isinstance(node, (ast.MatchAs, ast.MatchStar)) else \
                getattr(node, "rest", None) if isinstance(node, ast.MatchMapping) else None
            if name:  # a part of the subject: data when the subject is
                scope.bind(name, "match", subject, scope, node.lineno)
            if isinstance(node, ast.MatchClass):
                self.pattern_attributes += node.kwd_attrs
                self._visit(node.cls, scope)
            elif isinstance(node, ast.MatchValue):
                self._visit(node.value, scope)
            elif isinstance(node, ast.MatchMapping):
                for key in node.keys:
                    self._visit(key, scope)

    def _move_declared(self) -> None:
        """Bindings under ``global``/``nonlocal`` belong to the scope the declaration names."""
        for scope in sorted(self.scopes, key=lambda s: -s.depth):
            for name in list(scope.bindings):
                if name in scope.declared_global:
                    self.module.bindings.setdefault(name, []).extend(scope.bindings.pop(name))
                elif name in scope.declared_nonlocal:
                    target = self._enclosing(scope, name)
                    if target is not None:
                        target.bindings.setdefault(name, []).extend(scope.bindings.pop(name))

    def _enclosing(self, scope: _Scope, name: str) -> _Scope | None:
        outer = scope.parent
        while outer is not None and outer.kind != "module":
            if outer.kind != "class" and (name in outer.bindings or name in outer.declared_nonlocal):
                return outer
            outer = outer.parent
        return None

    # --- resolving ----------------------------------------------------------------------------------
    def lookup(self, name: str, scope: _Scope) -> _Scope | None:
        """The scope whose bindings ``name`` reads in ``scope`` (``None``: the set-up or the built-ins)."""
        if scope.kind != "module":
            if name in scope.declared_global:
                return self.module if name in self.module.bindings else None
            if name in scope.declared_nonlocal:
                return self._enclosing(scope, name)
            if name in scope.bindings:
                return scope
        outer = scope.parent
        while outer is not None:
            if outer.kind == "module":
                break
            if outer.kind != "class" and name in outer.bindings and name not in outer.declared_global:
                return outer
            outer = outer.parent
        return self.module if name in self.module.bindings else None

    def own(self, name: str, scope: _Scope) -> bool:
        """Is ``name`` (read in ``scope``) only ever the code's own ``def`` or ``class``?"""
        where = self.lookup(name, scope)
        return where is not None and all(b[0] in ("def", "class") for b in where.bindings[name])

    def _outside(self, name: str) -> _Carried | None:
        """What a name that the code does not bind is: the set-up's, a built-in, or ``None`` (unknown)."""
        if name in self.namespace:
            value = self.namespace[name]
            path = _origin_of(value, self.own_module)
            if path is None:
                callable_ = callable(value) and not _is_constant(value)
                return _Carried(None if not callable_ else
                                f"a name of the notebook whose source the check cannot read", callable_)
            return _Carried(None, _may_call(value), frozenset([path]))
        if name in _BUILTIN_NAMES:
            return _Carried(None, True, frozenset([name]))
        return None

    def name(self, name: str, scope: _Scope) -> _Carried:
        """What reading ``name`` in ``scope`` may give."""
        where = self.lookup(name, scope)
        if where is None:
            found = self._outside(name)
            return found if found is not None else _Carried(UNKNOWN, True, frozenset([name]))
        carried = self.state.get((id(where), name), _Carried())
        if where is self.module and name in self.namespace:
            carried = carried | (self._outside(name) or _Carried())
        return carried

    def carried(self, node: ast.AST, scope: _Scope | None = None) -> _Carried:
        """What the value of expression ``node`` may carry from the names it reads."""
        scope = self.scope_of.get(id(node), scope) or self.module
        if isinstance(node, ast.Name):
            return self.name(node.id, scope)
        if isinstance(node, ast.Attribute) or _literal_getattr(node):
            base = node.value if isinstance(node, ast.Attribute) else node.args[0]
            attribute = node.attr if isinstance(node, ast.Attribute) else node.args[1].value
            inner = self.carried(base, scope)
            if isinstance(base, ast.Name) and self.own(base.id, scope):
                return _Carried(None, True)
            paths = frozenset(f"{p}.{attribute}" for p in inner.paths if p.count(".") < 16)  # m = m.nn: finite
            holds = inner.holds and (not paths or any(_may_call(_library_object(p)) for p in paths))
            found = _Carried(inner.taint, holds, paths)
            if not inner.paths and attribute in self.stored_attributes and attribute not in self._reading:
                self._reading.add(attribute)  # self.fns = [torch.relu]: self.fns holds functions
                for value, where, _ in self.stored_attributes[attribute]:
                    stored = self.carried(value, where) if value is not None else _Carried(
                        "a value the grader cannot trace", True)
                    found = found | _Carried(stored.taint, stored.holds)
                self._reading.discard(attribute)
            if not isinstance(node, ast.Attribute) and len(node.args) > 2:  # getattr(x, "a", default)
                found = found | self.carried(node.args[2], scope)
            return found
        if isinstance(node, ast.Subscript):
            inner = self.carried(node.value, scope)
            return _Carried(inner.taint, inner.holds)
        if isinstance(node, ast.Call):
            callee = node.func
            if isinstance(callee, ast.Name) and self.lookup(callee.id, scope) is None and callee.id in DATA_BUILTINS \
                    and callee.id not in self.namespace:
                return _Carried()
            arguments = [self.carried(a, scope) for a in node.args] + \
                [self.carried(k.value, scope) for k in node.keywords]
            found = _Carried()
            for argument in arguments:
                found = found | _Carried(argument.taint)  # own code may hand an argument back
            if isinstance(callee, ast.Name) and self.lookup(callee.id, scope) is None and callee.id in _BUILTIN_NAMES:
                for argument in arguments:  # next, list, sorted, min, zip, type...: their arguments' items
                    found = found | _Carried(argument.taint, argument.holds)
            return found
        if isinstance(node, ast.Lambda):
            return _Carried(None, True)
        parts = _VALUE_PARTS.get(type(node))
        if parts is not None:  # a value made of (or chosen from) its parts carries what any part carries
            found = _Carried()
            for part in parts(node):
                found = found | self.carried(part, scope)
            return found
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.carried(node.elt)
        if isinstance(node, ast.DictComp):
            return self.carried(node.value)
        return _Carried()

    def _binding(self, binding: tuple) -> _Carried:
        kind, detail, where, _ = binding
        if kind in ("def", "class"):
            return _Carried(None, True)
        if kind == "import":
            return _Carried(None, True, frozenset([detail]))
        if kind == "untraced":
            return _Carried(detail, True)
        if kind == "assign":
            return self.carried(detail, where) if detail is not None else _Carried()
        if kind == "item":
            found = self.carried(detail, where)
            return _Carried(found.taint, found.holds)
        if kind in ("for", "match"):
            found = self.carried(detail, where)
            if found.taint or found.holds:
                return _Carried(found.taint or ("a loop or comprehension target over a container of functions, "
                                "classes or modules" if kind == "for" else "a `match` capture from a function, "
                                "class or module"), True)
        return _Carried()  # an argument: the caller's data

    def _settle(self) -> None:
        """Every local's :class:`_Carried`, to a fixed point (bindings read other locals; what a local
        carries only grows, so it ends)."""
        for _ in range(1000):
            changed = False
            for scope in self.scopes:
                for name, bindings in scope.bindings.items():
                    found = _Carried()
                    for binding in bindings:
                        found = found | self._binding(binding)
                    key = (id(scope), name)
                    if key not in self.state or self.state[key].key() != found.key():
                        self.state[key], changed = found, True
            if not changed:
                return
        self.problems.append("the code binds its names in too long a chain to be resolved: " + INSTEAD)

    # --- what the code uses, and what it calls that cannot be traced ---------------------------------
    def uses(self, tree: ast.AST) -> list[tuple[str, list[str]]]:
        """``(as written, dotted path)`` per use: ``F.conv2d`` is ``torch.nn.functional.conv2d``; the code's
        own ``def``/``class`` names are not uses; attributes of a local that holds data (``x.reshape``)
        are uses by name, except attributes the code sets itself (``self.kernel_size``)."""
        return [(written, path) for written, path, _ in self.kinded_uses(tree)]

    def kinded_uses(self, tree: ast.AST) -> list[tuple[str, list[str], str]]:
        """:meth:`uses` with the kind of each: ``"import"`` (the module an import statement names),
        ``"library"`` (a dotted path from an import, the set-up or the built-ins), ``"data"`` (attribute names of a value that holds data, ``x.reshape``) or
        ``"holding"`` (attribute names of a value that may be a function, class or module the resolver
        cannot name, ``next(iter([F])).conv2d``: the code's own attribute names do not excuse these)."""
        found = [(w, p, "import") for w, p in self.imports] + \
            [(f"case ...({a}=...)", [a], "holding") for a in self.pattern_attributes]
        consumed: set[int] = set()
        for node in ast.walk(tree):
            if id(node) in consumed:
                continue
            if isinstance(node, ast.Attribute) or _literal_getattr(node):
                inner = node
                while isinstance(inner, ast.Attribute) or _literal_getattr(inner):
                    if not isinstance(inner, ast.Attribute):
                        consumed.add(id(inner.func))
                    inner = inner.value if isinstance(inner, ast.Attribute) else inner.args[0]
                    if isinstance(inner, (ast.Attribute, ast.Name)) or _literal_getattr(inner):
                        consumed.add(id(inner))
                base, attributes = _chain(node)
                written = ast.unparse(node)
                if base is None:
                    holds = self.carried(inner).holds
                    found.append(("." + ".".join(attributes), attributes, "holding" if holds else "data"))
                    continue
                found += self._resolved(base, attributes, written)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                found += self._resolved(node, [], node.id)
        return [use for use in found if use[1]]

    def _resolved(self, base: ast.Name, attributes: list[str], written: str) -> list[tuple[str, list[str], str]]:
        scope = self.scope_of.get(id(base), self.module)
        if self.own(base.id, scope):
            return []
        carried = self.name(base.id, scope)
        if not carried.paths:  # a local holding data: its attributes, but not those the code sets itself
            if carried.holds:  # ...unless it may hold a function, class or module (m = next(iter([F])))
                return [(written, attributes, "holding")]
            return [(written, [a for a in attributes if a not in self.stored_attributes], "data")]
        uses = []
        for path in sorted(carried.paths):
            resolved = ".".join([path] + attributes)
            uses.append((written if resolved == written else f"{written} ({resolved})", resolved.split("."),
                         "library"))
        return uses

    def untraced(self, tree: ast.AST) -> list[str]:
        """One sentence per call (or use) whose target the resolver cannot trace, saying what to write."""
        problems = list(self.problems)
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for decorator, node, scope in self.decorated:
            problems += self._decorator(decorator, node, scope)
        for written, path in self.uses(tree):
            if ".".join(path) in NAME_LOOKUPS:
                problems.append(f"`{written}` hands out library functions by name, as a computed `getattr` does: "
                                f"{INSTEAD}")
        for node in ast.walk(tree):
            scope = self.scope_of.get(id(node), self.module)
            line = getattr(node, "lineno", "?")
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                carried = self.name(node.id, scope)
                if node.id.startswith("__") and node.id.endswith("__") and node.id not in ALLOWED_DUNDERS:
                    problems.append(f"`{node.id}` (line {line}) is the interpreter's machinery: {INSTEAD}")
                elif carried.taint == UNKNOWN:
                    problems.append(f"`{node.id}` (line {line}) is {UNKNOWN}: define it, or import it by name")
                parent = parents.get(id(node))
                if node.id in ("getattr", "hasattr") and self.lookup(node.id, scope) is None and not (
                        isinstance(parent, ast.Call) and parent.func is node):
                    problems.append(f"`{node.id}` (line {line}) is passed around as a value: read attributes as "
                                    "x.name")
            elif isinstance(node, ast.Call):
                problems += self._call(node, scope)
            elif isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)) and node.value is not None:
                carried = self.carried(node.value, scope)
                if carried.taint and carried.taint != UNKNOWN:
                    problems.append(f"`{ast.unparse(node)}` (line {line}) hands on a value bound by {carried.taint}:"
                                    f" {INSTEAD}")
        return list(dict.fromkeys(problems))

    def _decorator(self, decorator: ast.AST, node: ast.AST, scope: _Scope) -> list[str]:
        expression = decorator.func if isinstance(decorator, ast.Call) else decorator
        base, attributes = _chain(expression)
        if base is not None:
            if self.own(base.id, scope) and attributes and attributes[-1] in ("setter", "getter", "deleter"):
                return []
            paths = {".".join([p] + attributes) for p in self.name(base.id, scope).paths}
            if paths and paths <= KNOWN_DECORATORS:
                return []
        return [f"the decorator `@{ast.unparse(decorator)}` on `{node.name}` (line {node.lineno}) can replace "
                f"`{node.name}` with anything, so what it calls cannot be checked: remove it (understood: "
                "@staticmethod, @classmethod, @property, @once_differentiable, @torch.no_grad())"]

    def _plain(self, node: ast.AST) -> bool:
        """Is ``node`` a value the resolver can name: a name, an attribute path, a lambda, a constant, or
        made of those (a tuple, ``a or b``, ``a if c else b``)? A call's result or an item is not."""
        if isinstance(node, (ast.Name, ast.Lambda, ast.Constant)) or _chain(node)[0] is not None:
            return True
        parts = _VALUE_PARTS.get(type(node))
        return parts is not None and all(self._plain(part) for part in parts(node))

    def _computed(self, name: str, scope: _Scope) -> int | None:
        """The line where local ``name`` (read in ``scope``) is bound to a value computed at run time (the
        result of a call, an item of a container), or ``None``: calling such a local calls what no reader
        of the source can name (``Lin = np.load(pickled)``, ``Lin = string.Formatter().get_field(...)[0]``)."""
        where = self.lookup(name, scope)
        for kind, detail, _, line in (where.bindings.get(name, []) if where is not None else []):
            if kind == "assign" and detail is not None and not self._plain(detail):
                return line
        return None

    def _stored(self, attribute: str) -> tuple[int, str] | None:
        """Where the code sets ``.attribute`` to a function, class or module, or to what it cannot trace."""
        for value, where, line in self.stored_attributes.get(attribute, []):
            if value is None:
                return line, "a value the grader cannot trace"
            base, _ = _chain(value)
            if isinstance(value, ast.Lambda) or (base is not None and self.own(base.id, where)):
                continue  # one's own function or method
            carried = self.carried(value, where)
            if carried.taint or carried.holds:
                return line, "a function, class or module"
        return None

    def _call(self, node: ast.Call, scope: _Scope) -> list[str]:
        callee, line = node.func, node.lineno
        written = ast.unparse(callee)
        problems = []
        base, attributes = _chain(callee) if isinstance(callee, ast.Attribute) else (None, [])
        if isinstance(callee, ast.Name) or base is not None:
            name = callee if isinstance(callee, ast.Name) else base
            checked = attributes
            if not self.own(name.id, scope):
                carried = self.name(name.id, scope)
                if carried.taint and carried.taint != UNKNOWN:
                    what = f"`{name.id}`" if name is callee else f"an attribute of `{name.id}`, which is"
                    problems.append(f"`{written}(...)` (line {line}) calls {what} bound by {carried.taint}: "
                                    f"{INSTEAD} instead of through `{written}`")
                elif name is callee and self._computed(name.id, scope) is not None:
                    problems.append(f"`{written}(...)` (line {line}) calls `{name.id}`, a value computed at run time "
                                    f"(line {self._computed(name.id, scope)}) that no reader of the source can name: "
                                    f"{INSTEAD} instead of through `{written}`")
        elif isinstance(callee, ast.Attribute):
            checked = [callee.attr]
        elif isinstance(callee, ast.Subscript):
            problems.append(f"`{written}(...)` (line {line}) calls an item of a container: {INSTEAD}")
            checked = []
        elif isinstance(callee, (ast.Call, ast.Lambda)):
            checked = []
        else:
            problems.append(f"`{written}(...)` (line {line}) calls the value of an expression: {INSTEAD}")
            checked = []
        for attribute in checked:
            stored = self._stored(attribute)
            if stored is not None and not (base is not None and self.own(base.id, scope)):
                problems.append(f"`{written}(...)` (line {line}) calls `.{attribute}`, an attribute your code sets "
                                f"to {stored[1]} (line {stored[0]}): {INSTEAD} instead of through `{written}`")
        if isinstance(callee, ast.Name) and self.lookup(callee.id, scope) is None and callee.id not in self.namespace \
                and (callee.id in DATA_BUILTINS or isinstance(getattr(builtins, callee.id, None), type) and
                     issubclass(getattr(builtins, callee.id), BaseException)):
            return problems  # a number, a string or an exception of its arguments: nothing is called
        for argument in list(node.args) + [k.value for k in node.keywords]:
            carried = self.carried(argument, scope)
            if carried.taint and carried.taint != UNKNOWN:
                problems.append(f"`{ast.unparse(argument)}` (line {line}) is passed to `{written}`, but it is bound "
                                f"by {carried.taint}: {INSTEAD}")
        return problems


def forbidden_uses(tree: ast.AST, forbidden: Iterable[str], namespace: dict | None = None,
                   own_module: str | None = None, resolver: _Resolver | None = None) -> list[str]:
    """The uses of ``tree`` (see :meth:`_Resolver.uses`) whose resolved path has a part that ``forbidden``
    lists: an entry is a name (``torch``, ``avg_pool2d``), or a case-insensitive pattern with ``*``
    (``"*pool*"`` covers ``lp_pool2d``, ``avg_pool3d``, ``AdaptiveAvgPool2d``, ``torch.nn.modules.pooling``).
    What the code defines itself (its helper ``pool_rows``, its class ``AvgPool2dFunction``,
    ``self.pool_size``, a constant ``POOL_NDIM = 4``) is never a use: its source is part of ``tree``."""
    entries = list(forbidden)

    def matches(part: str) -> bool:
        return any(fnmatch.fnmatchcase(part.lower(), e.lower()) if "*" in e else part == e for e in entries)

    resolver = resolver or _Resolver(tree, namespace, own_module)
    found = [written for written, path in resolver.uses(tree) if any(matches(p) for p in path)]
    return sorted(set(found))


def untraced_uses(tree: ast.AST, namespace: dict | None = None, own_module: str | None = None,
                  resolver: _Resolver | None = None) -> list[str]:
    """What ``tree`` calls through a name the resolver cannot trace (a default argument value, a loop
    over functions, a ``match`` capture, an ``except`` target, an unknown decorator, a star-import, an
    attribute set to a function, an item of a container, a name defined nowhere): one sentence each,
    saying what to write instead. Empty when every call is traced (the rule fails closed)."""
    return (resolver or _Resolver(tree, namespace, own_module)).untraced(tree)


#: What an exercise's code may not do, because it would hide from a reader (and from the grader) what
#: the code calls: run code built from strings, reach into interpreter internals, or work elsewhere.
DYNAMIC_CALLS = {"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "setattr", "delattr",
                 "breakpoint", "memoryview"}
INTERNAL_MODULES = {"importlib", "ctypes", "gc", "inspect", "threading", "_thread", "multiprocessing",
                    "subprocess", "os", "signal", "builtins", "types", "marshal", "pickle", "concurrent",
                    "code", "codeop", "runpy", "pty", "socket", "asyncio", "shutil", "dis", "weakref"}
#: ``sys`` is fine for printing (``sys.stderr``); these parts of it reach the interpreter's machinery.
#: Library calls that look functions and classes up from a string, by their name (attribute or function) or
#: keyword: ``string.Formatter().get_field("0.nn.Linear", ...)``, ``logging.config``'s resolvers,
#: ``typing.get_type_hints`` of a string annotation, ``np.load``/``torch.load`` of pickled objects.
LOOKUP_NAMES = {"get_field", "get_type_hints", "ForwardRef", "BaseConfigurator", "DictConfigurator", "dictConfig",
                "fileConfig"}  # (pydoc.locate, pkgutil.resolve_name: NAME_LOOKUPS, by path: a helper may be `locate`)
LOOKUP_KEYWORDS = {"allow_pickle": False, "weights_only": True}  # keyword: the only value allowed
SYS_INTERNALS = {"modules", "settrace", "setprofile", "gettrace", "getprofile", "_getframe", "meta_path",
                 "path_hooks", "path_importer_cache", "addaudithook", "_current_frames", "setrecursionlimit"}
ALLOWED_DUNDERS = {"__name__", "__qualname__", "__init__", "__doc__", "__class__"}
ALLOWED_TENSOR_TEXT = ("strided slices and +=, F.pad, x.unfold, F.unfold/F.fold, x.cumsum, x.sum, "
                       "x.new_zeros, torch.arange, reshape/view/permute, einsum, and your own helper functions")
ALLOWED_TEXT = ("allowed: NumPy and PyTorch operations, plain attribute access (np.sum, x.shape), Python's "
                "built-ins such as range, len, min, max, isinstance, and your own helper functions")


def _patched_attributes(tree: ast.AST) -> list[str]:
    """Attributes that ``tree`` sets on what it did not make in the function at hand: a library's
    (``torch.Tensor.backward = f``), a module's, or a class's from outside its body
    (``AvgPool2dFunction.apply = f``). Attributes of a function's own arguments and locals
    (``self.kernel_size``, ``ctx.geometry``) are fine. One sentence each."""
    found: list[str] = []

    def local_names(function) -> set[str]:
        arguments = function.args
        names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                 arguments.vararg, arguments.kwarg] if a is not None}
        return names | {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def visit(node: ast.AST, scope: frozenset) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, scope | local_names(child))
                continue
            if isinstance(child, ast.Attribute) and isinstance(child.ctx, (ast.Store, ast.Del)):
                root = child.value
                while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                    root = root.func if isinstance(root, ast.Call) else root.value
                if not (isinstance(root, ast.Name) and root.id in scope):
                    found.append(f"`{ast.unparse(child)} = ...` (it changes an attribute of what the code did not make "
                                 f"there, e.g. a library's or a class's from outside its body)")
            visit(child, scope)

    visit(tree, frozenset())
    return found


#: What an exercise's code may not call because what it runs is not code the grader can read: the course's
#: own helpers (for the notebook; some compute what the exercises ask: course.network builds PyTorch's
#: pooling layers from a string), and code compiled from text or loaded from elsewhere. Path prefix -> why.
UNREADABLE_PATHS = {
    "course": "the course's own helpers are for the notebook (some compute what the exercises ask)",
    "torch.jit": "TorchScript compiles code from text", "torch.fx": "torch.fx rewrites and generates code",
    "torch.compile": "torch.compile generates code", "torch._dynamo": "torch.compile generates code",
    "torch.library": "torch.library defines operators from text", "torch.ops.load_library": "it loads compiled code",
    "torch.utils.cpp_extension": "it compiles C++ from text", "torch.hub": "it loads code from elsewhere",
}


def unreadable_uses(tree: ast.AST, resolver: _Resolver) -> list[str]:
    """The uses of ``tree`` whose resolved path falls under :data:`UNREADABLE_PATHS`: one sentence each."""
    found = []
    for written, path in resolver.uses(tree):
        dotted = ".".join(path)
        why = next((w for p, w in UNREADABLE_PATHS.items() if dotted == p or dotted.startswith(p + ".")), None)
        if why:
            found.append(f"{written} ({dotted}: {why})" if written != dotted else f"{written} ({why})")
    return list(dict.fromkeys(found))


#: Lesson 4's rule "tensor operations only" as an allow-list (``check_avoids(..., allowed=TENSOR_ARITHMETIC)``):
#: the library names its code may use, by resolved dotted path (``*`` patterns), and, as ``.name``, the
#: attributes it may read or call on its values (``x.unfold``, ``ctx.saved_tensors``; ``torch.Tensor.unfold``
#: too). Enough for every honest way to pool with shifted slices, ``F.pad``, ``x.unfold``/``F.unfold``/``F.fold``,
#: prefix sums or ``einsum``; never a pooling, convolution or resampling function. The code's own
#: functions, classes and the attributes it sets are its own; built-in exceptions are always allowed.
TENSOR_ARITHMETIC = frozenset({
    # Python's built-ins that compute plain values or iterate (not getattr/eval/open/...: see dynamic_code)
    "abs", "all", "any", "bool", "callable", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object",
    "pow", "print", "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "super",
    "tuple", "type", "zip", "staticmethod", "classmethod", "property", "NotImplemented", "Ellipsis",
    "math.*", "itertools.*", "typing.*", "numbers.Integral", "numbers.Real", "numbers.Number", "operator.index",
    "operator.add", "operator.mul", "functools.reduce", "functools.partial", "functools.wraps", "functools.cache",
    "functools.lru_cache",
    # torch: making tensors, dtypes and devices, the Function and Module machinery
    "torch.Tensor", "torch.Size", "torch.dtype", "torch.device", "torch.float16", "torch.float32",
    "torch.float64", "torch.bfloat16", "torch.half", "torch.float", "torch.double", "torch.int64",
    "torch.int32", "torch.long", "torch.int", "torch.bool", "torch.finfo", "torch.is_tensor",
    "torch.is_floating_point", "torch.get_default_dtype", "torch.zeros", "torch.ones", "torch.empty",
    "torch.full", "torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like", "torch.arange",
    "torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.no_grad", "torch.enable_grad",
    "torch.autograd.Function", "torch.autograd.function.once_differentiable", "torch.autograd.function.FunctionCtx",
    "torch.nn.Module",
    # torch: arithmetic, sums, views, padding and window views
    "torch.stack", "torch.cat", "torch.concat", "torch.clamp", "torch.clip", "torch.minimum", "torch.maximum",
    "torch.where", "torch.cumsum", "torch.sum", "torch.mean", "torch.einsum", "torch.matmul", "torch.outer",
    "torch.diff", "torch.flip", "torch.narrow", "torch.div", "torch.add", "torch.sub", "torch.mul",
    "torch.floor_divide", "torch.roll", "torch.as_strided", "torch.broadcast_to", "torch.repeat_interleave",
    "torch.eye", "torch.kron", "torch.mm", "torch.bmm", "torch.tensordot", "torch.result_type",
    "torch.promote_types", "torch.true_divide", "torch.clamp_min", "torch.clamp_max", "torch.count_nonzero",
    "torch.split", "torch.chunk", "torch.unbind", "torch.squeeze", "torch.unsqueeze", "torch.reshape",
    "torch.permute", "torch.transpose", "torch.flatten", "torch.index_select", "torch.gather", "torch.scatter_add",
    "torch.index_add", "torch.is_grad_enabled", "torch.cuda.is_available",
    "torch.nn.functional.pad", "torch.nn.functional.unfold", "torch.nn.functional.fold",
    # numpy: types and plain arithmetic (a backward may leave autograd, marked @once_differentiable)
    "numpy.integer", "numpy.floating", "numpy.bool_", "numpy.ndarray", "numpy.dtype", "numpy.issubdtype",
    "numpy.float16", "numpy.float32", "numpy.float64", "numpy.int64", "numpy.zeros", "numpy.ones",
    "numpy.empty", "numpy.zeros_like", "numpy.asarray", "numpy.array", "numpy.arange", "numpy.pad",
    "numpy.cumsum", "numpy.sum", "numpy.minimum", "numpy.maximum", "numpy.clip", "numpy.add.at", "numpy.prod",
    "numpy.floor", "numpy.ceil", "numpy.ndim", "numpy.shape", "numpy.number", "numpy.int32",
    # attributes of values: tensors (and arrays), ctx, lists, dicts and strings
    *(f".{name}" for name in (
        "shape", "ndim", "dim", "size", "dtype", "device", "type", "index", "is_floating_point", "element_size",
        "numel", "is_cuda", "requires_grad", "is_contiguous", "T", "item", "tolist", "detach", "cpu", "cuda",
        "numpy", "to", "float", "double", "half", "clone", "contiguous", "view", "view_as", "reshape",
        "reshape_as", "permute", "transpose", "flatten", "unflatten", "squeeze", "unsqueeze", "expand",
        "expand_as", "repeat", "unfold", "narrow", "select", "flip", "split", "chunk", "new_zeros", "new_ones",
        "new_empty", "new_full", "new_tensor", "zero_", "fill_", "copy_", "add", "add_", "sub", "sub_", "mul",
        "mul_", "div", "div_", "neg", "abs", "sum", "mean", "cumsum", "diff", "clamp", "clamp_", "clip",
        "clamp_min", "clamp_max", "min", "max", "minimum", "maximum", "index_add", "index_add_", "where",
        "masked_fill", "masked_fill_", "eq", "ne", "lt", "le", "gt", "ge", "any", "all", "matmul", "astype",
        "mm", "bmm", "outer", "t", "mT", "ndimension", "stride", "storage_offset", "as_strided", "roll",
        "broadcast_to", "repeat_interleave", "sum_to_size", "floor_divide", "remainder", "pow", "index_select",
        "gather", "scatter_add", "scatter_add_", "index_put_", "cumsum_", "new", "get_device", "unbind",
        "true_divide", "count_nonzero", "copy", "data", "mark_dirty", "apply",
        "saved_tensors", "save_for_backward", "needs_input_grad", "mark_non_differentiable",
        "set_materialize_grads", "append", "extend", "insert", "pop", "items", "keys", "values", "get",
        "update", "join", "format", "lower", "upper", "strip", "split", "startswith", "endswith",
        "__init__", "__name__", "__qualname__", "__class__", "__doc__")),
})


def unlisted_uses(tree: ast.AST, allowed: Iterable[str], resolver: _Resolver) -> list[str]:
    """The uses of ``tree`` (:meth:`_Resolver.kinded_uses`) that ``allowed`` does not list (library paths,
    ``*`` patterns, ``.name`` for attributes of values; see :data:`TENSOR_ARITHMETIC`): one entry each, as
    written with its resolved path. The code's own ``def``/``class`` names and the attributes it sets are
    its own (not for a value that may hold a function, class or module); built-in exceptions are allowed."""
    entries = set(allowed)
    patterns = [e for e in entries if "*" in e]
    attributes = {e[1:] for e in entries if e.startswith(".")}
    own = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                    ast.ClassDef))} | set(resolver.stored_attributes)

    def listed(dotted: str) -> bool:
        if dotted in entries or any(fnmatch.fnmatchcase(dotted, p) for p in patterns):
            return True
        if dotted.startswith("torch.Tensor.") and dotted.count(".") == 2:
            return dotted.rsplit(".", 1)[1] in attributes
        kind = getattr(builtins, dotted, None) if "." not in dotted else None
        return isinstance(kind, type) and issubclass(kind, BaseException)

    found = []
    for written, path, kind in resolver.kinded_uses(tree):
        dotted = ".".join(path)
        if kind == "import":  # importing a module some listed name lives in is fine: its uses are checked
            if not (listed(dotted) or any(e.startswith(dotted + ".") for e in entries)):
                found.append(written)
        elif kind == "library":
            if not listed(dotted):
                found.append(written)
        elif any(a not in attributes and (kind == "holding" or a not in own) for a in path):
            found.append(written)
    return list(dict.fromkeys(found))


def dynamic_code(tree: ast.AST) -> list[str]:
    """What in ``tree`` hides what it calls (see :data:`DYNAMIC_CALLS`, :data:`INTERNAL_MODULES`,
    :data:`SYS_INTERNALS`, and attributes set on a library or on a class from outside it): one
    sentence per construct found, empty when the code is plain."""
    found: list[str] = _patched_attributes(tree)
    sys_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names if alias.name == "sys"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in sys_names \
                and node.attr in SYS_INTERNALS:
            found.append(f"`sys.{node.attr}`")
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and \
                any(alias.name in SYS_INTERNALS or alias.name == "*" for alias in node.names):
            found.append("`from sys import` of the interpreter's machinery")
        elif isinstance(node, ast.Name) and node.id in DYNAMIC_CALLS:
            found.append(f"`{node.id}` runs or changes code by name")
        elif (isinstance(node, ast.Name) and node.id in LOOKUP_NAMES) or \
                (isinstance(node, ast.Attribute) and node.attr in LOOKUP_NAMES):
            found.append(f"`{getattr(node, 'id', None) or node.attr}`, which looks functions and classes up by "
                         "a name in a string")
        elif isinstance(node, ast.keyword) and node.arg in LOOKUP_KEYWORDS and not (
                isinstance(node.value, ast.Constant) and node.value.value is LOOKUP_KEYWORDS[node.arg]):
            found.append(f"`{node.arg}={ast.unparse(node.value)}`, which loads pickled objects (any function "
                         "or class)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
                found.append(f"`{node.func.id}` with a computed attribute name")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__") \
                and node.attr not in ALLOWED_DUNDERS:
            found.append(f"the interpreter internal `.{node.attr}`")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                if module.split(".")[0] in INTERNAL_MODULES:
                    found.append(f"the module `{module}`")
    return list(dict.fromkeys(found))


def check_avoids(function: Any, forbidden: Iterable[str], name: str, *, allowed: Iterable[str] | None = None) -> None:
    """Assert that the source of ``function`` (with every helper it uses) uses nothing that ``forbidden``
    lists, by what each name resolves to (modules, functions, or ``*`` patterns: :func:`forbidden_uses`;
    ``F.conv2d`` is ``torch.nn.functional.conv2d``, a helper of one's own called ``reference`` is one's
    own), calls nothing through a name the resolver cannot trace (:func:`untraced_uses`: the rule fails
    closed), and hides nothing it calls
    (:func:`dynamic_code`: no ``getattr`` with a computed name, ``eval``, ``__import__``, ``importlib``,
    ``sys``, ``gc``, threads, ``.__dict__``...). Under the
    grader that last rule covers every statement of the solution cells, not just ``function``'s source:
    top-level code that reaches the grader's helpers (e.g. through ``gc``) hides what the tests call.

    Used where an exercise forbids a library shortcut, e.g. ``torch`` or ``avg_pool2d`` in the loops
    lesson. Under the grader the source is the student's as submitted, read in the grader's process.
    Where an exercise allows only some operations ("tensor operations only", lesson 4), ``allowed`` is
    that allow-list (:data:`TENSOR_ARITHMETIC`, :func:`unlisted_uses`): anything else is refused too.
    """
    try:
        tree = _parse(source_of(function))
    except (OSError, TypeError, SyntaxError) as exc:
        raise AssertionError(f"{name}: could not read the source of {function!r} ({exc})") from None
    namespace = getattr(function, "__trusted_globals__", None)  # the grader's set-up, for its stand-ins
    own_module = None
    if namespace is None:  # the student's kernel: the function's own module (the notebook)
        own_module = getattr(function, "__module__", None)
        namespace = getattr(function, "__globals__", None) or getattr(inspect.getmodule(function), "__dict__", {})
    resolver = _Resolver(tree, namespace, own_module)
    found = forbidden_uses(tree, forbidden, resolver=resolver)
    if found:
        raise AssertionError(f"{name}: this exercise must not use {', '.join(found)}; write it yourself "
                             f"({ALLOWED_TEXT})")
    unlisted = unlisted_uses(tree, allowed, resolver) if allowed is not None else []
    if unlisted:
        raise AssertionError(f"{name}: this exercise allows only tensor operations, and {', '.join(unlisted[:4])} "
                             f"{'is' if len(unlisted) == 1 else 'are'} not among them (no pooling, convolution or "
                             f"resampling function computes the windows for you); write the window sums yourself "
                             f"with {ALLOWED_TENSOR_TEXT}")
    unreadable = unreadable_uses(tree, resolver)
    if unreadable:
        raise AssertionError(f"{name}: {'; '.join(unreadable)}: the grader cannot read what that runs, so it is not "
                             f"accepted here; write it yourself ({ALLOWED_TEXT})")
    hidden = dynamic_code(tree)
    if hidden:
        raise AssertionError(f"{name} (or a helper it uses) uses {'; '.join(hidden)}: code that hides what it "
                             f"calls cannot be checked, so it is not accepted here ({ALLOWED_TEXT})")
    untraced = untraced_uses(tree, resolver=resolver)
    if untraced:
        raise AssertionError(f"{name} (or a helper it uses) calls what the grader cannot trace, so it cannot check "
                             f"what {name} uses: {'; '.join(untraced[:3])}")
    whole = getattr(function, "__submission_source__", None)  # every solution cell, under the grader
    try:
        hidden = dynamic_code(_parse(whole)) if whole is not None else []
    except SyntaxError:
        hidden = []  # a cell that does not parse has already failed to run
    if hidden:
        raise AssertionError(f"your solution cells use {'; '.join(hidden)} outside {name}: code that reaches "
                             f"into the interpreter can change what the tests call, so no test of how you "
                             f"wrote {name} accepts it; remove it from every solution cell ({ALLOWED_TEXT})")


# --- how a function loops: lesson 3 loops only over the kernel's offsets, lesson 2 over the outputs ---------
#: The contract's arguments that fix the windows (not the data): a loop may turn as often as they say.
GEOMETRY = ("kernel_size", "stride", "padding", "count_include_pad")
#: Every entry of the geometry is read as at most GEOMETRY_BOUND (the largest kernel, stride or padding that a
#: graded test passes), and a loop nest may turn at most LOOP_LIMIT times there (a loop over a 5×5 kernel's
#: offsets, or over stride phases and taps, turns 25 to 50 times). Every bound the rule accepts only grows
#: with the geometry, so no accepted loop turns more than LOOP_LIMIT times in any graded call, and a hidden
#: case whose outputs are longer than that on both axes leaves a loop over output positions no way through.
GEOMETRY_BOUND, LOOP_LIMIT = 5, 64
NPY_MAXDIMS = 64  # the most entries ``x.shape`` can have
#: The contract's arguments that are shapes: a loop over one turns once per dimension the tests pass (4 at most).
SHAPE_ARGUMENTS = {"input_shape": 4}
#: Library calls that run Python once per element, position or item: a loop that the source does not show.
PER_ELEMENT_CALLS = {"vectorize", "frompyfunc", "apply_along_axis", "apply_over_axes", "map", "filter", "reduce",
                     "starmap", "nditer", "ndindex", "ndenumerate"}
#: Built-ins that iterate over their first argument.
CONSUMERS = {"sum", "list", "tuple", "set", "frozenset", "dict", "sorted", "min", "max", "any", "all", "enumerate",
             "zip", "reversed", "iter", "next", "fromiter"}
LOOP_INSTEAD = ("loop only over the kernel's offsets, e.g. `for di in range(kh)` with `kh, kw = as_pair(kernel_size)` "
                "(or a fixed tuple such as the two axes), and cover the outputs, channels and images with slices")
_APPENDS = {"append": 1, "insert": 1, "add": 1, "appendleft": 1, "extend": None, "update": None, "extendleft": None}


class _LoopNests:
    """How often each loop of a function turns, read from its source (with the helpers it calls by name):
    a loop's length is *bounded* when it follows from the geometry arguments (``kernel_size``, ``stride``,
    ``padding``, each entry read as :data:`GEOMETRY_BOUND`) and constants, else it grows with the data.
    ``problems``: one sentence per loop that is not bounded, per nest that turns more than
    :data:`LOOP_LIMIT` times, and per construct whose number of turns cannot be read (``while``, recursion,
    a function passed as a value, ``np.vectorize``...). ``data_depth``: the most loops that grow with the
    data around a value the function writes (``out[...] = ...``, ``+=`` into an item, a comprehension's item)."""

    def __init__(self, tree: ast.Module, resolver: _Resolver, entry: str, given: Iterable[str] = ()):
        self.r, self.problems, self.data_depth = resolver, [], 0
        # A helper the grader runs as the course's own (``given-at-grading``: output_size) is not walked, if the
        # code binds its name only by that one def.
        self.given = {n for n in given if [b[0] for b in self.r.module.bindings.get(n, [])] == ["def"]}
        # Not walked either: a helper run as the course's own, and a def that nothing can run (a later
        # definition replaces it, and its name is read nowhere else).
        loaded = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
        replaced = {id(d) for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            b[3] > d.lineno for b in self.r.module.bindings.get(d.name, []))}
        skipped = [d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            d.name in self.given or id(d) in replaced and not any(
                n.id == d.name and not (d.lineno <= n.lineno <= d.end_lineno) for n in loaded))]
        inside_given = {id(n) for d in skipped for n in ast.walk(d)}
        self.parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        self.defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.reached: set[int] = set()
        self.finished: dict[int, dict] = {}  # def -> the most it appended in one call, the lists it grew unboundedly
        self.stack: list[int] = []
        self.visits = 0
        self.augmented, self.grown, self.not_lists = set(), set(), set()  # (scope, name) of ``n += ...``; of lists that grow
        for node in ast.walk(tree):
            target = node.target if isinstance(node, ast.AugAssign) else node.func.value if isinstance(node, ast.Call) \
                and isinstance(node.func, ast.Attribute) and node.func.attr in _APPENDS else None
            if isinstance(target, ast.Name) and self._local(target, self.r.scope_of.get(id(target), self.r.module)):
                where = self.r.lookup(target.id, self.r.scope_of.get(id(target), self.r.module))
                (self.augmented if isinstance(node, ast.AugAssign) else self.grown).add((id(where), target.id))
                if isinstance(node, ast.AugAssign) and not self._list_growth(node):
                    self.not_lists.add((id(where), target.id))  # out += tap: never read as a list
        self.grown |= self.augmented
        self.escapes = self._escaping_names(tree)
        found = self._callable(ast.Name(entry, ast.Load()), self.r.module)
        if not found or not isinstance(found[-1], (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            found = defs[:1] if not self.r.lookup(entry, self.r.module) else []
        if not found:
            self.problems.append(f"`{entry}` is not a `def` the rule can read: write it as `def {entry}(...)`")
            return
        entry_def = found[-1]
        params = {name: GEOMETRY_BOUND if name in GEOMETRY else None for name in self._params(entry_def)}
        lengths = {name: SHAPE_ARGUMENTS.get(name) for name in self._params(entry_def)}
        inner = id(self._inner(entry_def))
        self._invoke(entry_def, {inner: params, ("len", inner): lengths}, 1, 0)
        for node in self.defs:
            if id(node) not in self.reached and id(node) not in inside_given and any(
                    isinstance(n, (ast.For, ast.While, ast.comprehension, ast.Call)) for n in ast.walk(node)):
                self._problem(node, f"`{node.name}` has a loop or a call (it may call itself), but the rule cannot see "
                              f"how often it runs (call it by name from {entry}, not through an object, an operator or "
                              f"a value)")

    # --- reading the code -----------------------------------------------------------------------------
    def _problem(self, node: ast.AST, text: str) -> None:
        sentence = f"line {getattr(node, 'lineno', '?')}: {text}"
        if sentence not in self.problems:
            self.problems.append(sentence)

    def _inner(self, function: ast.AST) -> _Scope:
        body = function.body if isinstance(function.body, list) else [function.body]
        return self.r.scope_of.get(id(body[0]), self.r.module)

    @staticmethod
    def _params(function: ast.AST) -> list[str]:
        a = function.args
        return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None]

    def _callable(self, callee: ast.AST, scope: _Scope, seen: frozenset = frozenset()) -> list[ast.AST] | None:
        """The code's own ``def``s (or named lambdas) that calling ``callee`` may run; None when it is not one."""
        if not isinstance(callee, ast.Name):
            return None
        where = self.r.lookup(callee.id, self.r.scope_of.get(id(callee), scope))
        if where is None or (id(where), callee.id) in seen:
            return None
        found = []
        for kind, detail, value_scope, _ in where.bindings.get(callee.id, []):
            if kind == "def":
                found.append(detail)
            elif kind == "assign" and isinstance(detail, ast.Lambda):
                found.append(detail)
            elif kind == "assign" and isinstance(detail, ast.Name):
                more = self._callable(detail, value_scope, seen | {(id(where), callee.id)})
                if more is None:
                    return None
                found += more
            else:
                return None
        return found or None

    def _call_context(self, function: ast.AST, call: ast.Call, ctx: dict, scope: _Scope) -> dict:
        """``ctx`` plus the bound of each parameter of ``function`` at this call."""
        a = function.args
        positional = a.posonlyargs + a.args
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
        starred = any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords)
        given = {} if starred else {p.arg: x for p, x in zip(positional, call.args)}
        given.update({k.arg: k.value for k in call.keywords if k.arg is not None and not starred})
        params, lengths = {}, {}
        for name in self._params(function):
            if name in given:
                params[name] = self.value(given[name], ctx, scope)
                lengths[name] = self.length(given[name], ctx, scope)
            elif name in defaults and not starred:
                params[name] = self.value(defaults[name], ctx, self.r.scope_of.get(id(defaults[name]), scope))
            else:
                params[name] = None
        inner = id(self._inner(function))
        return {**ctx, inner: params, ("len", inner): lengths}

    def value(self, node: ast.AST, ctx: dict, scope: _Scope | None = None, seen: frozenset = frozenset(),
              growing: bool = False) -> int | None:
        """An upper bound of ``|v|`` for every int ``v`` in the value of ``node``, or None (it may grow with the data).
        A name read again while its own bindings are read (``sh = sh or kh``) adds nothing where the value is only
        chosen from its parts, and is unbounded where it grows (``n = n + 1``, ``growing``)."""
        scope = self.r.scope_of.get(id(node), scope) or self.r.module
        if isinstance(node, ast.Constant):
            return abs(int(node.value)) if isinstance(node.value, (bool, int)) else None
        if isinstance(node, ast.Name):
            where = self.r.lookup(node.id, scope)
            if where is None:
                constant = self.r.namespace.get(node.id)
                return abs(int(constant)) if type(constant) in (bool, int) else None
            key = (id(where), node.id)
            if key in self.grown or (key in seen and growing):  # (a list that grows may hold anything)
                return None
            if key in seen:
                return 0
            bounds = []
            for kind, detail, value_scope, _ in where.bindings[node.id]:
                if kind == "param" or (kind in ("assign", "untraced") and value_scope is not where
                                       and where.kind == "function" and node.id in ctx.get(id(where), {})):
                    bounds.append(ctx.get(id(where), {}).get(node.id))  # an argument: its bound at this call
                elif kind == "assign" and detail is not None and not isinstance(detail, ast.Lambda):
                    bounds.append(self.value(detail, ctx, value_scope, seen | {key}, growing))
                elif kind == "for":
                    bounds.append(self.items(detail, ctx, value_scope, seen | {key}, growing))
                else:
                    bounds.append(None)
            return None if None in bounds else max(bounds, default=0)
        if isinstance(node, ast.UnaryOp):
            return 1 if isinstance(node.op, ast.Not) else self.value(node.operand, ctx, scope, seen, growing)
        if isinstance(node, ast.BinOp):
            grows = growing or not isinstance(node.op, (ast.Mod, ast.FloorDiv, ast.Div, ast.RShift, ast.BitAnd))
            a, b = self.value(node.left, ctx, scope, seen, grows), self.value(node.right, ctx, scope, seen, grows)
            if isinstance(node.op, ast.Mod):
                return b
            if a is None or b is None:
                return None
            cap = 10 ** 9
            return min(cap, {ast.Add: lambda: a + b, ast.Sub: lambda: a + b, ast.Mult: lambda: a * b,
                             ast.FloorDiv: lambda: a, ast.Div: lambda: a, ast.RShift: lambda: a,
                             ast.BitAnd: lambda: min(a, b), ast.BitOr: lambda: 2 * max(a, b),
                             ast.BitXor: lambda: 2 * max(a, b), ast.Pow: lambda: a ** min(b, 64) if a > 1 else 1,
                             ast.LShift: lambda: a << min(b, 64)}.get(type(node.op), lambda: cap)())
        if isinstance(node, ast.Compare):
            return 1
        if isinstance(node, (ast.BoolOp, ast.IfExp, ast.Tuple, ast.List)):
            parts = node.values if isinstance(node, ast.BoolOp) else (node.body, node.orelse) \
                if isinstance(node, ast.IfExp) else node.elts
            bounds = [self.value(p, ctx, scope, seen, growing) for p in parts]
            return None if None in bounds else max(bounds, default=0)
        if isinstance(node, ast.Subscript):
            return self.value(node.value, ctx, scope, seen, growing)
        if isinstance(node, ast.NamedExpr):
            return self.value(node.value, ctx, scope, seen, growing)
        if isinstance(node, ast.Call):
            name = self._builtin(node.func, scope)
            if (name in ("min", "max") and len(node.args) == 1) or (
                    name in ("tuple", "list", "sorted", "reversed", "set", "frozenset") and len(node.args) == 1):
                return self.items(node.args[0], ctx, scope, seen, growing)  # (an item of, or the items of, it)
            bounds = [self.value(x, ctx, scope, seen, growing or name not in ("min", "max", "abs", "int", "round"))
                      for x in node.args]
            if name == "min":
                known = [b for b in bounds if b is not None]
                return min(known) if known else None
            if name == "max":
                return None if None in bounds else max(bounds, default=0)
            if name in ("abs", "int", "round") and node.args:
                return bounds[0]
            if name == "len" and node.args:
                return self.length(node.args[0], ctx, scope, seen)
            functions = self._callable(node.func, scope)
            if functions and all(id(f) not in self.stack for f in functions):
                returned = []
                for function in functions:
                    inner = self._call_context(function, node, ctx, scope)
                    returned += [self.value(r.value, inner, None, seen, True) if r.value is not None else 0
                                 for r in self._returns(function)]
                return None if None in returned else max(returned, default=0)
        return None

    def items(self, node: ast.AST, ctx: dict, scope: _Scope | None = None, seen: frozenset = frozenset(),
              growing: bool = False) -> int | None:
        """A bound of the ints an iteration over ``node`` hands out (the loop target's values)."""
        scope = self.r.scope_of.get(id(node), scope) or self.r.module
        if isinstance(node, ast.Call):
            name = self._builtin(node.func, scope)
            if name == "range":
                bounds = [self.value(x, ctx, scope, seen, growing) for x in node.args[:2]]
                return None if None in bounds or not bounds else max(bounds)
            if name in ("zip", "reversed", "sorted", "list", "tuple", "iter", "set", "frozenset"):
                bounds = [self.items(x, ctx, scope, seen, growing) for x in node.args]
                return None if None in bounds else max(bounds, default=0)
            if name == "enumerate" and node.args:
                bounds = [self.length(node.args[0], ctx, scope, seen), self.items(node.args[0], ctx, scope, seen, growing)]
                return None if None in bounds else max(bounds)
            return self.value(node, ctx, scope, seen, growing)  # a helper's result: the ints in it
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return self.value(node, ctx, scope, seen, growing) if not any(isinstance(e, ast.Starred) for e in node.elts) \
                else None
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.value(node.elt, ctx, scope, seen, growing)
        return self.value(node, ctx, scope, seen, growing) if isinstance(node, ast.Name) else None

    def length(self, node: ast.AST, ctx: dict, scope: _Scope | None = None, seen: frozenset = frozenset(),
               frame: dict | None = None) -> int | None:
        """A bound of how many items an iteration over ``node`` hands out, or None (it may grow with the data)."""
        scope = self.r.scope_of.get(id(node), scope) or self.r.module
        if isinstance(node, ast.Call):
            name = self._builtin(node.func, scope)
            arguments = [x for x in node.args if not isinstance(x, ast.Starred)]
            if len(arguments) < len(node.args) or any(k.arg is None for k in node.keywords):
                return None
            if name == "range":
                if len(arguments) == 1:
                    return self.value(arguments[0], ctx, scope, seen)
                bounds = [self.value(x, ctx, scope, seen) for x in arguments[:2]]
                return None if None in bounds or not bounds else sum(bounds)
            if name in ("enumerate", "reversed", "sorted", "list", "tuple", "iter", "set", "frozenset") and arguments:
                return self.length(arguments[0], ctx, scope, seen, frame)
            if name == "zip":
                known = [n for n in (self.length(x, ctx, scope, seen, frame) for x in arguments) if n is not None]
                return min(known) if known else None
            paths = self.r.carried(node.func, scope).paths if not self._callable(node.func, scope) else frozenset()
            if paths and all(p == "itertools.product" for p in paths):
                sizes = [self.length(x, ctx, scope, seen, frame) for x in arguments]
                repeat = next((self.value(k.value, ctx, scope, seen) for k in node.keywords if k.arg == "repeat"), 1)
                return None if None in sizes or repeat is None else math.prod(sizes) ** repeat
            functions = self._callable(node.func, scope)
            if functions and all(id(f) not in self.stack for f in functions):
                sizes = []
                for function in functions:
                    inner = self._call_context(function, node, ctx, scope)
                    done = self.finished.get(id(function))  # a list it built and returns: as long as it grew
                    done = dict(done, iterated=False, measured=False) if done else None
                    sizes += [self.length(r.value, inner, None, seen, done) if r.value is not None else None
                              for r in self._returns(function)]
                return None if None in sizes or not sizes else max(sizes)
            return None
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return len(node.elts) if not any(isinstance(e, ast.Starred) for e in node.elts) else None
        if isinstance(node, (ast.IfExp, ast.BoolOp)):  # one of its parts
            sizes = [self.length(part, ctx, scope, seen, frame)
                     for part in ((node.body, node.orelse) if isinstance(node, ast.IfExp) else node.values)]
            return None if None in sizes else max(sizes)
        if isinstance(node, ast.Dict):
            return len(node.keys)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            sizes = [self.length(g.iter, ctx, None, seen, frame) for g in node.generators]
            return None if None in sizes else math.prod(sizes)
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "strides"):
            return NPY_MAXDIMS
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return self.length(node.value, ctx, scope, seen, frame)
        if isinstance(node, ast.Name):
            where = self.r.lookup(node.id, scope)
            key = (id(where), node.id)
            own = frame is not None and where is frame["scope"] and key not in frame["unbounded"] \
                and key not in self.escapes
            if where is None or key in seen or key in self.not_lists or (key in self.grown | self.escapes and not own):
                return None
            argument = node.id in ctx.get(id(where), {})
            sizes = [ctx.get(("len", id(where)), {}).get(node.id) if kind == "param" or (
                         argument and kind in ("assign", "untraced") and value_scope is not where)
                     else self.length(detail, ctx, value_scope, seen | {key}) if kind == "assign" and detail is not None
                     else None for kind, detail, value_scope, _ in where.bindings[node.id]]
            if None in sizes:
                return None
            if own:  # a list of this function's own: it grows by what this call appended so far
                frame["measured"] = True
                return max(sizes) + frame["appended"]
            return max(sizes)
        return None

    def _escaping_names(self, tree: ast.AST) -> set:
        """(scope, name) of the code's own values that leave its sight, so that a list may grow where the rule
        does not count it: passed to a call other than NumPy's or a built-in that only reads (``list.append(L,
        v)``), put in a container or an attribute, its ``.append`` taken as a value."""
        reading = {"len", "sum", "list", "tuple", "sorted", "reversed", "enumerate", "zip", "min", "max", "any",
                   "all", "iter", "set", "frozenset", "print", "isinstance", "bool", "repr", "str"}
        found = set()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                continue
            scope = self.r.scope_of.get(id(node), self.r.module)
            if not self._local(node, scope):
                continue
            parent = self.parents.get(id(node))
            grand = self.parents.get(id(parent))
            if isinstance(parent, ast.Call) and node is not parent.func:
                callee = self._builtin(parent.func, scope)
                paths = self.r.carried(parent.func, scope).paths
                escapes = callee not in reading and not (paths and all(p.split(".")[0] == "numpy" for p in paths))
            elif isinstance(parent, ast.Attribute):
                escapes = parent.attr in _APPENDS and not (isinstance(grand, ast.Call) and grand.func is parent)
            else:
                escapes = isinstance(parent, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred, ast.keyword)) or (
                    isinstance(parent, ast.Assign) and not all(isinstance(t, ast.Name) for t in parent.targets))
            if escapes:
                found.add((id(self.r.lookup(node.id, scope)), node.id))
        return found

    def _local(self, node: ast.AST, scope: _Scope) -> bool:
        """Is ``node`` a name the code binds itself to a value (a list of its own, say), not an import?"""
        if not isinstance(node, ast.Name):
            return False
        where = self.r.lookup(node.id, self.r.scope_of.get(id(node), scope))
        return where is not None and all(b[0] not in ("import", "def", "class") for b in where.bindings[node.id])

    def _builtin(self, callee: ast.AST, scope: _Scope) -> str | None:
        """``callee``'s name when it is Python's built-in of that name (not rebound by the code or the set-up)."""
        if isinstance(callee, ast.Name) and self.r.lookup(callee.id, scope) is None and callee.id not in self.r.namespace:
            return callee.id
        return None

    def _returns(self, function: ast.AST) -> list:
        if isinstance(function, ast.Lambda):
            return [ast.Return(function.body)]
        return [n for n in self._own_nodes(function.body) if isinstance(n, ast.Return)]

    @staticmethod
    def _own_nodes(body: list):
        """Every node of ``body`` outside the functions and classes it defines."""
        stack = list(reversed(body))
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(reversed(list(ast.iter_child_nodes(node))))

    # --- walking the code, with how often each part runs -----------------------------------------------
    def _invoke(self, function: ast.AST, ctx: dict, turns: int, data: int) -> int:
        """Walk one call of ``function``; the items it (and what it called) appended to lists."""
        self.reached.add(id(function))
        self.stack.append(id(function))
        frame = {"appended": 0, "iterated": False, "measured": False, "turns": turns, "unbounded": set(), "scope": self._inner(function)}
        body = function.body if isinstance(function.body, list) else [function.body]
        for statement in body:
            self._walk(statement, ctx, turns, data, frame)
        self.stack.pop()
        done = self.finished.setdefault(id(function), {"appended": 0, "unbounded": set(), "scope": frame["scope"]})
        done["appended"] = max(done["appended"], frame["appended"])
        done["unbounded"] |= frame["unbounded"]
        return frame["appended"]

    def _loop(self, node: ast.AST, size: int | None, turns: int, data: int, text: str) -> tuple[int, int]:
        """The turns and data depth inside a loop of ``size`` turns, entered ``turns`` times."""
        if size is None:
            self._problem(node, f"`{text}` turns as often as the data is long (the rule cannot trace its length "
                          f"to kernel_size, stride or padding)")
            return turns, data + 1
        if turns * size > LOOP_LIMIT:
            self._problem(node, f"`{text}` and the loops around it turn up to {turns * size} times for a "
                          f"{GEOMETRY_BOUND}×{GEOMETRY_BOUND} kernel, more than the {LOOP_LIMIT} a loop over the "
                          f"kernel's offsets needs")
        return turns * max(size, 1), data

    def _walk(self, node: ast.AST, ctx: dict, turns: int, data: int, frame: dict) -> None:
        self.visits += 1
        if self.visits > 200_000:
            self._problem(node, "the code calls its helpers too often for the rule to follow")
            return
        scope = self.r.scope_of.get(id(node), self.r.module)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):  # the body runs when called;
            arguments = node.args  # defaults and decorators run here
            for part in node.decorator_list if not isinstance(node, ast.Lambda) else []:
                self._walk(part, ctx, turns, data, frame)
            for part in arguments.defaults + [d for d in arguments.kw_defaults if d is not None]:
                self._walk(part, ctx, turns, data, frame)
            if not isinstance(node, ast.Lambda):
                return
        if isinstance(node, ast.ClassDef):  # a class body runs here, its methods when called
            for part in node.decorator_list + node.bases + [k.value for k in node.keywords] + node.body:
                self._walk(part, ctx, turns, data, frame)
            return
        if isinstance(node, ast.Lambda):
            parent = self.parents.get(id(node))
            if not (isinstance(parent, ast.Assign) and all(isinstance(t, ast.Name) for t in parent.targets)) and \
                    any(isinstance(n, (ast.comprehension, ast.Call)) for n in ast.walk(node.body)):
                self._problem(node, "a lambda that loops or calls is passed as a value, so the rule cannot count "
                              "how often it runs")
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self._walk(node.iter, ctx, turns, data, frame)
            size = self._measured(node.iter, ctx, scope, frame)
            inner_turns, inner_data = self._loop(node, size, turns, data, f"for {ast.unparse(node.target)} in "
                                                 f"{ast.unparse(node.iter)}")
            for statement in node.body:
                self._walk(statement, ctx, inner_turns, inner_data, frame)
            for statement in node.orelse:
                self._walk(statement, ctx, turns, data, frame)
            return
        if isinstance(node, ast.While):
            self._problem(node, f"`while {ast.unparse(node.test)}` turns a number of times that the source does not "
                          f"say")
            for child in [node.test] + node.body + node.orelse:
                self._walk(child, ctx, turns, data + 1, frame)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            parent = self.parents.get(id(node))
            unpacked = (isinstance(node, ast.GeneratorExp) and len(node.generators) == 1 and not node.generators[0].ifs
                        and isinstance(parent, ast.Assign) and len(parent.targets) == 1
                        and isinstance(parent.targets[0], ast.Tuple)
                        and not any(isinstance(e, ast.Starred) for e in parent.targets[0].elts))
            inner_turns, inner_data = turns, data
            for generator in node.generators:
                self._walk(generator.iter, ctx, inner_turns, inner_data, frame)
                size = len(parent.targets[0].elts) + 1 if unpacked else \
                    self._measured(generator.iter, ctx, self.r.scope_of.get(id(generator.iter), scope), frame)
                inner_turns, inner_data = self._loop(generator.iter, size, inner_turns, inner_data,
                                                     f"for {ast.unparse(generator.target)} in "
                                                     f"{ast.unparse(generator.iter)}")
                for condition in generator.ifs:
                    self._walk(condition, ctx, inner_turns, inner_data, frame)
            self.data_depth = max(self.data_depth, inner_data)
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self._walk(part, ctx, inner_turns, inner_data, frame)
            return
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Subscript) for t in targets):
                self.data_depth = max(self.data_depth, data)
            if isinstance(node, ast.AugAssign) and self._list_growth(node):
                size = self.length(node.value, ctx, scope, frame=frame) if isinstance(node.op, ast.Add) else None
                self._grows(node, node.target, size, turns, frame)
                frame["measured"] = False
        if isinstance(node, ast.Call):
            self._call(node, ctx, turns, data, frame, scope)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and self._callable(node, scope):
            self._problem(node, f"`{node.id}` is passed as a value, so the rule cannot count how often it runs: "
                          f"call your helpers by name")
        for child in ast.iter_child_nodes(node):
            self._walk(child, ctx, turns, data, frame)

    @staticmethod
    def _list_growth(node: ast.AugAssign) -> bool:
        """``taps += [t]``, ``taps += full[2:]``: a list that grows (``out += tap`` adds arrays, and the rule
        does not read ``out`` as a list at all)."""
        return isinstance(node.target, ast.Name) and isinstance(node.op, (ast.Add, ast.Mult)) and isinstance(
            node.value, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)) or (
            isinstance(node.value, ast.Subscript) and isinstance(node.value.slice, ast.Slice))

    def _measured(self, node: ast.AST, ctx: dict, scope: _Scope, frame: dict) -> int | None:
        """The length of what a loop iterates; a loop over a list of the function's own freezes its lists."""
        frame["measured"] = False
        size = self.length(node, ctx, scope, frame=frame)
        frame["iterated"] = frame["iterated"] or frame["measured"]
        return size

    def _grows(self, node: ast.AST, receiver: ast.AST, size: int | None, turns: int, frame: dict) -> None:
        """A list ``receiver`` grows by ``size`` items each time ``node`` runs (``turns`` times in all)."""
        if frame["iterated"]:
            self._problem(node, "a list grows after a loop over a list: build every list first, then loop")
        if size is None and isinstance(receiver, ast.Name):
            scope = self.r.scope_of.get(id(receiver), self.r.module)
            frame["unbounded"].add((id(self.r.lookup(receiver.id, scope)), receiver.id))
        elif size is not None:
            frame["appended"] += size * (turns // max(frame["turns"], 1))

    def _call(self, node: ast.Call, ctx: dict, turns: int, data: int, frame: dict, scope: _Scope) -> None:
        callee = node.func
        paths = self.r.carried(callee, scope).paths if not isinstance(callee, ast.Name) or \
            self.r.lookup(callee.id, scope) is None else frozenset()
        last = {p.split(".")[-1] for p in paths} | ({callee.id} if self._builtin(callee, scope) else set())
        per_element = last & PER_ELEMENT_CALLS
        if per_element:
            self._problem(node, f"`{ast.unparse(callee)}` runs Python once per item, a loop the rule cannot "
                          f"count")
        name = self._builtin(callee, scope)
        if name in CONSUMERS and node.args and not (name in ("min", "max") and len(node.args) > 1) and \
                not isinstance(node.args[0], (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            size = self._measured(node.args[0], ctx, scope, frame)
            if size is None:
                self._loop(node, None, turns, data, f"{name}({ast.unparse(node.args[0])})")
        if isinstance(callee, ast.Attribute) and callee.attr in _APPENDS and self._local(callee.value, scope):
            size = _APPENDS[callee.attr]
            if size is None:
                size = self.length(node.args[0], ctx, scope) if node.args else None
            self._grows(node, callee.value, size, turns, frame)
        functions = self._callable(callee, scope)
        if isinstance(callee, ast.Name) and callee.id in self.given and self.r.lookup(callee.id, scope) is self.r.module:
            functions = [None]  # the course's own at grading: not walked
        if functions == [None]:
            pass
        elif not functions and isinstance(callee, ast.Name) and self.r.lookup(callee.id, scope) is not None and \
                self.r.carried(callee, scope).holds and not self.r.carried(callee, scope).paths:
            self._problem(node, f"`{callee.id}(...)` calls a value the rule cannot trace to one of your defs, so it "
                          f"cannot count how often that runs: call your helpers by their own name")
        elif functions:
            for function in functions:
                if id(function) in self.stack:
                    self._problem(node, f"`{ast.unparse(callee)}` calls itself (recursion), so the rule cannot count "
                                  f"how often it runs")
                    continue
                appended = self._invoke(function, self._call_context(function, node, ctx, scope), turns, data)
                if appended and frame["iterated"]:
                    self._problem(node, "a list grows after a loop over a list: build every list first, then loop")
                frame["appended"] += appended
        else:
            self._walk(callee, ctx, turns, data, frame)
        for argument in node.args + [k.value for k in node.keywords]:
            self._walk(argument, ctx, turns, data, frame)


def long_output_case(seed: int) -> tuple[tuple[int, int, int, int], tuple[int, int], tuple[int, int], tuple[int, int]]:
    """``(shape [1, 2, H, W], kernel_size, stride, padding)`` whose outputs are longer than :data:`LOOP_LIMIT`
    on both axes (71 or more), its kernel (2 or 3 per axis), stride (1 or 2) and padding drawn from
    :func:`input_generator` ``(seed)``, so per grading run: a loop that :func:`check_kernel_loops` accepts
    cannot walk these outputs, and no one geometry can be special-cased."""
    kernel, stride, padding = random_geometry(seed)
    size = tuple((LOOP_LIMIT + 6) * s + k for k, s in zip(kernel, stride))
    return (1, 2) + size, kernel, stride, padding


def random_geometry(seed: int) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """``(kernel_size, stride, padding)`` pairs drawn from :func:`input_generator` ``(seed)``: a kernel of 2 or
    3, a stride of 1 or 2 and a padding of 0 to half the kernel, per axis; anew at each grading run, so no one
    geometry of a hidden test can be special-cased."""
    rng = input_generator(seed)
    kernel = tuple(int(k) for k in rng.integers(2, 4, 2))
    stride = tuple(int(s) for s in rng.integers(1, 3, 2))
    padding = tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel)
    return kernel, stride, padding


def _loop_nests(function: Any, name: str, given: Iterable[str] = ()) -> _LoopNests:
    """:class:`_LoopNests` of ``function``'s source (with its helpers), read as :func:`check_avoids` reads it."""
    try:
        tree = _parse(source_of(function))
    except (OSError, TypeError, SyntaxError) as exc:
        raise AssertionError(f"{name}: could not read the source of {function!r} ({exc})") from None
    namespace = getattr(function, "__trusted_globals__", None)
    own_module = None
    if namespace is None:
        own_module = getattr(function, "__module__", None)
        namespace = getattr(function, "__globals__", None) or getattr(inspect.getmodule(function), "__dict__", {})
    return _LoopNests(tree, _Resolver(tree, namespace, own_module), name, given)


def check_kernel_loops(function: Any, name: str, given: Iterable[str] = ("output_size",)) -> None:
    """Assert that every Python loop of ``function`` (``for``, ``while``, comprehensions, recursion, and the
    loops of the helpers it calls) turns only as often as the kernel says: a ``range`` bounded by
    ``kernel_size``, ``stride`` or ``padding``, or a fixed tuple, never the outputs, channels or images.
    What the rule cannot bound fails (see :class:`_LoopNests`), with what to write instead."""
    problems = _loop_nests(function, name, given).problems
    if problems:
        raise AssertionError(f"{name} (or a helper it calls) loops in Python over what is not the kernel's offsets: "
                             f"{'; '.join(problems[:3])}. Instead, {LOOP_INSTEAD}")


def check_output_loops(function: Any, name: str, given: Iterable[str] = ("output_size",)) -> None:
    """Assert that ``function`` (with the helpers it calls) computes its result inside Python loops over the
    data: at least two nested loops whose length grows with the input (output rows and columns, in any
    order, or batch and channel too) around a value it writes (``out[b, c, i, j] = ...``, ``+=`` into an
    item, a comprehension's item). Whole-array code (``sliding_window_view``, shifted slices) fails."""
    depth = _loop_nests(function, name, given).data_depth
    if depth < 2:
        raise AssertionError(f"{name} must compute each output in explicit Python loops (this lesson's exercise), "
                             f"but the rule finds {depth} loop(s) over the data around what it writes: loop over "
                             f"the output rows and columns, e.g. `for i in range(out_h):` and `for j in range(out_w):`"
                             f", and write each output (`out[b, c, i, j] = ...` or `+=` into grad_x)")


def _quiet_numbers(check: Callable) -> Callable:
    """``check`` with NumPy's numeric warnings off (a window with no real element divides 0 by 0): the judging is the
    values', and a warning on stderr would fail the cell under nbgrader's rule, a window bug paid twice."""
    @functools.wraps(check)
    def quiet(*args, **kwargs):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return check(*args, **kwargs)
    return quiet


def _real_divisor(without: Any, with_shares: Callable[[np.ndarray], Any], shares: dict[str, np.ndarray],
                  plain: Any, name: str, varied: bool, tolerance: dict) -> None:
    """Assert ``without`` (the student's count_include_pad=False result) equals ``with_shares(share)`` (the student's
    count_include_pad=True result with each window's part divided by ``share``, its real elements / (kh·kw)) for one
    of ``shares`` (``{what: share}``; a window with no real element may give the same NaN on both sides: the cells
    that judge the windows fail it); ``plain`` is the True result unscaled, which ``without`` must differ from when
    only a later share fits and a window of the first hangs over the padding; ``varied``: one value everywhere fails."""
    failures = []
    for what, share in shares.items():  # the first: the true windows; then the student's own
        try:
            check_array(without, with_shares(share), f"{name} against yours with count_include_pad=True × kh·kw / "
                        f"(real elements of {what})", check_dtype=False, equal_nan=True, **tolerance)
            break
        except AssertionError as exc:
            failures.append(exc)
    else:
        raise failures[0]
    finite = _as_numpy(without)[np.isfinite(_as_numpy(without))]
    if varied and (finite.size == 0 or np.ptp(finite) == 0):  # the relation holds for one that ignores its input
        raise AssertionError(f"{name} gives one value everywhere on a random input: it must be computed from it")
    own_only = bool(failures)  # only the student's own count fits: a crop of x, no pooling at all, fits that too
    if own_only and (next(iter(shares.values())) < 1).any() and np.array_equal(_as_numpy(without), _as_numpy(plain),
                                                                               equal_nan=True):
        raise AssertionError(f"{name} equals your count_include_pad=True result although windows hang over the "
                             f"padding: those must divide by their real elements only")


@_quiet_numbers
def check_real_divisor(pool: Callable, x: np.ndarray, kernel: Any, stride: Any, padding: Any, name: str, *,
                       varied: bool = False, **tolerance) -> Any:
    """Judge ``pool(x [B, C, H, W], kernel, stride=, padding=, count_include_pad=False)`` (the student's forward)
    against the student's own count_include_pad=True result × kh·kw / (real elements per window), window by window,
    the real elements counted in the true windows (the reference pooling ones) or in the student's own (``pool``
    pooling ones), so a mistake in the windows costs the cells that judge them only (issue 29); ``varied``: one value
    everywhere fails (the relation holds for a function that ignores ``x``: ask it of a random input whose windows
    all hold elements, the visible one); returns the result."""
    from course.reference import avg_pool2d_reference

    mine = pool(x, kernel, stride=stride, padding=padding, count_include_pad=False)
    with_padding = pool(x, kernel, stride=stride, padding=padding, count_include_pad=True)
    true_share = avg_pool2d_reference(np.ones(x.shape), kernel, stride, padding, True)
    check_form(with_padding, true_share, f"{name} with count_include_pad=True", check_dtype=False)
    own_share = _as_numpy(pool(np.ones(x.shape, x.dtype), kernel, stride=stride, padding=padding,
                               count_include_pad=True)).astype(np.float64)
    shares = {"the window": true_share, "your window": own_share}
    divided = lambda share: with_padding / share.astype(with_padding.dtype)  # noqa: E731
    _real_divisor(mine, divided, shares, with_padding, name, varied, tolerance)
    return mine


@_quiet_numbers
def check_real_divisor_backward(pool_backward: Callable, grad_out: np.ndarray, input_shape: tuple, kernel: Any,
                                stride: Any, padding: Any, name: str, *, varied: bool = False, **tolerance) -> Any:
    """Judge ``pool_backward(grad_out [B, C, H_out, W_out], input_shape, kernel, stride=, padding=,
    count_include_pad=False)`` (the student's backward) against the same at count_include_pad=True with ``grad_out``
    scaled window by window by kh·kw / (real elements): ∂/∂x of Σ g·sum/n = ∂/∂x of Σ (g·kh·kw/n)·sum/(kh·kw). The real
    elements are counted in the true windows (the reference pooling ones) or in the student's own (each window's
    count_include_pad=True gradient of a one-hot grad_out sums to its real elements / (kh·kw)); ``varied`` as
    :func:`check_real_divisor`; returns the result."""
    from course.reference import avg_pool2d_reference

    mine = pool_backward(grad_out, input_shape, kernel, stride=stride, padding=padding, count_include_pad=False)
    true_share = avg_pool2d_reference(np.ones(tuple(input_shape)), kernel, stride, padding, True)
    out_h, out_w = true_share.shape[2:]
    one_hot = np.eye(out_h * out_w, dtype=grad_out.dtype).reshape(1, out_h * out_w, out_h, out_w)
    own = _as_numpy(pool_backward(one_hot, (1, out_h * out_w) + tuple(input_shape)[2:], kernel, stride=stride,
                                  padding=padding, count_include_pad=True))
    own_share = own.astype(np.float64).sum(axis=(2, 3)).reshape(1, 1, out_h, out_w)
    shares = {"the window": true_share, "your window": own_share}

    def scaled(share):
        return pool_backward((grad_out / share).astype(grad_out.dtype), input_shape, kernel, stride=stride,
                             padding=padding, count_include_pad=True)

    plain = pool_backward(grad_out, input_shape, kernel, stride=stride, padding=padding, count_include_pad=True)
    _real_divisor(mine, scaled, shares, plain, name, varied, tolerance)
    return mine
