"""Value checks: the ``check_*`` helpers that compare a result with the expected one (arrays, plain values,
forms, errors, outcomes, the count_include_pad=False divisor) and the random inputs the test cells draw
(:func:`random_input`, :func:`input_generator`, :func:`random_geometry`), seeded per grading run through
the grader's ``run_seed`` (:func:`course.checks.hooks.current`)."""

from __future__ import annotations

import contextvars
import functools
import inspect
import math
import warnings
from typing import Any, Callable, Iterable

import numpy as np

from course import words
from course.checks import hooks
from course.checks.hooks import runs_with_student_code


#: The kinds of input :func:`random_input` draws from under the grader, one per call (see there), and how
#: often: pooling mostly follows a ReLU, so ReLU outputs come most often.
INPUT_KINDS = {"normal": 0.15, "relu": 0.4, "integer": 0.15, "large": 0.15, "tiny": 0.15}


def input_generator(seed: int) -> np.random.Generator:
    """The generator a test draws from: seeded by ``seed`` alone in a notebook (the same on every
    machine), by ``(run_seed, seed)`` under the trusted grader (fresh every grading run, reproducible
    from the record's seed)."""
    run_seed = hooks.current().run_seed
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
    if hooks.current().run_seed is None:
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
            raise AssertionError(f"{name}: got {_plain(got[bad])} at index {bad}, expected {_plain(want[bad])} (an "
                                 f"inf or NaN on one side only: a division by 0 there?)")
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
    call = _name_of(function, inspect.currentframe().f_back) + "(" + ", ".join(
        [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]) + ")"  # as written: f(0, 7, 7, 1000)
    try:
        function(*args, **kwargs)
    except error as exc:
        message = str(exc)
        missing = [word for word in mentions if not words.mentions(message, word)]
        if missing:
            raise AssertionError(
                f"{call} raised {type(exc).__name__}({message!r}), but the message should mention"
                f" {', '.join(repr(w) for w in missing)} so the caller knows which argument and rule"
            ) from None
        same = _catch_all(inspect.currentframe().f_back, function, error, mentions[0] if mentions else "", message)
        if same is not None:
            raise AssertionError(
                f"{call} raised {type(exc).__name__}({message!r}), which names the same arguments as the "
                f"{error.__name__} for a bad {same[0]} did ({same[1]!r}): the caller cannot tell which argument is "
                f"wrong; say which one, and the rule it broke (e.g. \"{mentions[0]} must be ..., got ...\")"
            ) from None
        return
    except Exception as exc:  # the wrong kind of error
        raise AssertionError(
            f"{call} should raise {error.__name__} but raised {type(exc).__name__}: {exc}"
        ) from None
    raise AssertionError(f"{call} should raise {error.__name__}, but it returned normally")


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)``, or for a long one (an array written out) its type and shape: "a list of shape (1, 1, 4, 4)"."""
    text = repr(value)
    if len(text) <= limit:
        return text
    try:
        return f"a {type(value).__name__} of shape {tuple(np.shape(value))}"
    except (ValueError, TypeError, RuntimeError):  # a ragged list
        return text[:limit] + " ..."


def _name_of(function: Any, frame: Any) -> str:
    """The name the calling cell knows ``function`` by (its global bound to this very object: a grader stand-in has no
    ``__name__``), else its ``__name__``, else ""."""
    for name, value in list(frame.f_globals.items()) if frame is not None else ():
        if value is function and name.isidentifier() and not name.startswith("_"):
            return name
    named = getattr(function, "__name__", "")
    return named if isinstance(named, str) and named.isidentifier() else ""


#: The messages :func:`check_raises` has seen, per run of a test cell and function: [(error, argument at
#: fault, message)]. A run of a cell is the calling frame's file name (IPython names each cell's code, one
#: name per cell text; the grader ``<test id>``) with its globals (the grader's are new for every run of a
#: test; kept alive while listed, so their id is not reused). The last few only.
_RAISED: contextvars.ContextVar = contextvars.ContextVar("course.checks.values.raised", default=None)


def _raised() -> dict:
    """This context's (one grading call's, or a notebook's) record of messages seen: never another thread's."""
    seen = _RAISED.get()
    if seen is None:
        seen = {}
        _RAISED.set(seen)
    return seen


def _callee(function: Any) -> Any:
    """The same function across calls: a grader stand-in by the source it carries, a bound method by its
    object and function (``AvgPool2dFunction.apply`` is a new bound method at every access)."""
    source = getattr(function, "__student_source__", None)
    if isinstance(source, str):
        return source
    owner, inner = getattr(function, "__self__", None), getattr(function, "__func__", None)
    return (id(owner), id(inner)) if inner is not None else id(function)


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
    raised = _raised()
    seen = raised.setdefault(key, (scope[1], function, []))[2]
    while len(raised) > 4:
        del raised[next(iter(raised))]
    roots = words.families({a for _, a, _ in seen} | {argument})
    mine, counts, found = words.family_of(argument, roots), words.name_counts(message, roots), None
    for kind, other, earlier in seen:
        theirs = words.family_of(other, roots)
        if kind is not error or theirs == mine or len(counts) < CATCH_ALL_NAMES or \
                words.name_counts(earlier, roots) != counts:
            continue
        # alike, unless each message names its own argument first ("kernel_size does not fit stride and
        # padding" beside "stride does not fit kernel_size and padding")
        if not (words.first_named(message, roots) == mine and words.first_named(earlier, roots) == theirs):
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
    of the wrapped function, which its own test judges, is then not counted a second time (a non-finite
    value where the wrapped function gives the same one included; ``None`` where it gives ``None``, e.g. a
    gradient that never reached the input).
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
        raise AssertionError(f"{name}: returned a result where the function it wraps raised {type(error).__name__}: "
                             f"{error} (that function's own test judges the error; pass the arguments on as given)") from None
    got = actual()
    if want is None or got is None:
        if got is not want:
            raise AssertionError(f"{name}: got {'None' if got is None else 'a result'}, expected"
                                 f" {'None' if want is None else 'a result'}")
        return
    check_array(got, want, name, rtol=rtol, atol=atol, equal_nan=True)




def random_geometry(seed: int) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """``(kernel_size, stride, padding)`` pairs drawn from :func:`input_generator` ``(seed)``: a kernel of 2 or
    3, a stride of 1 or 2 and a padding of 0 to half the kernel, per axis; anew at each grading run, so no one
    geometry of a hidden test can be special-cased."""
    rng = input_generator(seed)
    kernel = tuple(int(k) for k in rng.integers(2, 4, 2))
    stride = tuple(int(s) for s in rng.integers(1, 3, 2))
    padding = tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel)
    return kernel, stride, padding


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
                  name: str, varied: bool, tolerance: dict, truth: Any) -> None:
    """Assert ``without`` (the student's count_include_pad=False result) equals ``truth`` (the reference's), or
    ``with_shares(share)`` (the student's count_include_pad=True result with each window's part divided by ``share``,
    its real elements / (kh·kw)) for one of ``shares`` (``{what: share}``, the true windows' first, then the
    student's own; a window with no real element may give the same NaN on both sides: the cells that judge the
    windows fail it); when only the student's own fits, some of their windows must hold padding where a true one
    does; ``varied``: one value everywhere fails. A right result passes whatever the count_include_pad=True one
    gives (that one is the cell's that judges it: issue 53 item 12)."""
    failures = []
    try:
        check_array(without, truth, name, check_dtype=False, **tolerance)
        right = True
    except AssertionError:
        right = False
    for what, share in ({} if right else shares).items():  # the first: the true windows; then the student's own
        try:
            check_array(without, with_shares(share), f"{name} against yours with count_include_pad=True × kh·kw / "
                        f"(real elements of {what})", check_dtype=False, equal_nan=True, **tolerance)
            break
        except AssertionError as exc:
            failures.append(exc)
    else:
        if failures:
            raise failures[0]
    finite = _as_numpy(without)[np.isfinite(_as_numpy(without))]
    if varied and (finite.size == 0 or np.ptp(finite) == 0):  # the relation holds for one that ignores its input
        raise AssertionError(f"{name} gives one value everywhere on a random input: it must be computed from it")
    # Only the student's own count fits, and none of their windows holds padding where the true ones do: a crop of
    # x (no pooling at all) fits that too. Decided from the shares (the geometry), never from the input's values,
    # so a window bug (say, the padding offset ignored) gets the same verdict here at every run seed.
    true_share, own_share = (np.asarray(share, np.float64) for share in list(shares.values())[:2])
    if failures and (true_share < 1 - 1e-6).any() and (own_share > 1 - 1e-4).all():
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

    def divided(share):
        expected = with_padding / share.astype(with_padding.dtype)
        # A window of your own that holds no real element (a true one always holds one): whatever it gives there, the
        # cells that judge the windows charge it, not this one (issue 53 item 12: a window-step bug cost both).
        empty = share == 0
        got = _as_numpy(mine)
        if empty.any() and got.shape == expected.shape:
            expected = np.where(empty, got, expected)
        return expected

    _real_divisor(mine, divided, shares, name, varied, tolerance,
                  avg_pool2d_reference(x, kernel, stride, padding, False))
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
    from course.reference import avg_pool2d_grad_reference, avg_pool2d_reference

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

    truth = avg_pool2d_grad_reference(np.zeros(tuple(input_shape), grad_out.dtype), grad_out, kernel, stride,
                                      padding, False)
    _real_divisor(mine, scaled, shares, name, varied, tolerance, truth)
    return mine


#: How :func:`call_on_layout` lays out a tensor or an array: the layouts callers pass every day.
LAYOUTS = ("contiguous", "channels_last", "strided")


def _laid_out(x, layout: str):
    """A copy of ``x`` (a tensor or an ndarray, ``[..., C, H, W]``) laid out as ``layout`` (:data:`LAYOUTS`, see
    :func:`call_on_layout`)."""
    if isinstance(x, np.ndarray):
        if layout == "contiguous":
            return x.copy()
        if layout == "channels_last":
            return np.moveaxis(np.moveaxis(x, -3, -1).copy(), -1, -3)
        if layout == "strided":
            wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1] + 1,), x.dtype)
            wide[..., :-1:2] = x
            return wide[..., :-1:2]
    elif layout == "contiguous":
        return x.clone().contiguous()
    elif layout == "channels_last":
        return x.movedim(-3, -1).contiguous().movedim(-1, -3)
    elif layout == "strided":
        wide = x.new_zeros(x.shape[:-1] + (2 * x.shape[-1] + 1,))
        wide[..., :-1:2] = x
        return wide[..., :-1:2]
    raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")


@runs_with_student_code
def call_on_layout(function: Callable, x, layout: str, *args, **kwargs) -> tuple:
    """``(out, x_after)``: ``out = function(y, *args, **kwargs)`` where ``y`` holds the values of ``x`` (a tensor or
    an ndarray ``[..., C, H, W]``) laid out as ``layout`` (:data:`LAYOUTS`: ``"contiguous"``; ``"channels_last"``,
    the same values in ``[..., H, W, C]`` memory; ``"strided"``, every other column of an array one wider than twice as
    wide: not contiguous, as a slice is, and no two of its axes can be merged by a view), and ``x_after`` is ``y``'s values after the call (contiguous), so the caller can
    check that the function left its input unchanged. Tensors come back detached; the result is not checked here
    (the caller judges its type)."""
    if isinstance(x, np.ndarray):
        y = _laid_out(x, layout)
        return function(y, *args, **kwargs), np.ascontiguousarray(y)
    import torch

    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor or a NumPy array, got {type(x).__name__}")
    y = _laid_out(x.detach(), layout)
    out = function(y, *args, **kwargs)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"the function's result must be a torch.Tensor, got {type(out).__name__}")
    return out.detach(), y.detach().contiguous()
