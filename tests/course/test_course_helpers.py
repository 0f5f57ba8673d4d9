"""Unit tests of the course/ helpers that lesson 1 uses: checks, plotting, data, reference."""

import functools
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from course import setup_notebook  # noqa: E402
from course.checks import (NeedsReview, WrongValue, check_answered, check_array, check_avoids, check_raises,  # noqa: E402
                           check_same_outcome, check_value, random_input)
from course.data import sample_image  # noqa: E402
from course.plotting import show_grid, show_images, window_corners  # noqa: E402
from course.reference import avg_pool2d_grad_reference, avg_pool2d_reference  # noqa: E402


# --- checks -------------------------------------------------------------------------------------------

def test_check_array_accepts_a_match_and_names_each_kind_of_mismatch():
    want = np.arange(6.0).reshape(2, 3)
    check_array(want.copy(), want, "same")
    with pytest.raises(AssertionError, match="expected a numpy.ndarray but got list"):
        check_array(want.tolist(), want, "list")
    with pytest.raises(AssertionError, match="expected shape"):
        check_array(want.T, want, "shape")
    with pytest.raises(AssertionError, match="expected dtype float64 but got float32"):
        check_array(want.astype(np.float32), want, "dtype")
    check_array(want.astype(np.float32), want, "dtype left to another cell", check_dtype=False)  # values alone
    with pytest.raises(AssertionError, match="values differ"):
        check_array(want.astype(np.float32) + 1, want, "values, dtype left out", check_dtype=False)
    bad = want.copy()
    bad[1, 2] = np.nan
    with pytest.raises(AssertionError, match="non-finite"):
        check_array(bad, want, "nan")
    off = want.copy()
    off[1, 1] += 1e-3
    with pytest.raises(AssertionError, match=r"1 of 6 values differ; worst at index \(1, 1\)"):
        check_array(off, want, "values")


def test_check_array_rejects_subclasses_that_claim_equality():
    class AlwaysEqual(np.ndarray):
        def __eq__(self, other):
            return True

    want = np.ones(3)
    with pytest.raises(AssertionError, match="expected a numpy.ndarray"):
        check_array(np.zeros(3).view(AlwaysEqual), want, "subclass")


def test_check_array_on_tensors():
    want = torch.ones(2, 2)
    check_array(torch.ones(2, 2), want, "tensor")
    with pytest.raises(AssertionError, match="torch.Tensor"):
        check_array(np.ones((2, 2), dtype=np.float32), want, "ndarray for tensor")


def test_check_value_types_and_values():
    check_value((2, 3), (2, 3), "tuple")
    check_value(np.int64(4), 4, "numpy int")
    check_value(0.1 + 0.2, 0.3, "float")
    check_value(True, True, "bool")
    for wrong in [[2, 3], (2, 4), (2.0, 3)]:
        with pytest.raises(AssertionError, match="expected"):
            check_value(wrong, (2, 3), "tuple")
    with pytest.raises(AssertionError):
        check_value(True, 1, "bool is not an int")
    with pytest.raises(AssertionError):
        check_value("b", "a", "choice")


def test_a_wrong_value_says_what_was_given_and_withholds_what_was_expected():
    """``WrongValue``: the full message names the expected value (kept for the instructor); ``withheld``
    (what graded feedback shows) names the check and the value given, never the expected one."""
    with pytest.raises(WrongValue) as wrong:
        check_value(("B", "stride"), ("A", "shape"), "prediction_stride")
    assert "expected ('A', 'shape') (tuple)" in str(wrong.value)
    assert wrong.value.withheld == "prediction_stride: got ('B', 'stride') (tuple), not the expected value"
    with pytest.raises(WrongValue) as wrong:
        check_value(2, None, "count")  # not even the expected type is named
    assert "NoneType" in str(wrong.value) and "None" not in wrong.value.withheld
    off = np.array([[3.75, 5.25], [4.5, 1.0]])
    with pytest.raises(WrongValue) as wrong:
        check_array(off + [[0, 0], [0.5, 0]], off, "by_hand_avg")
    assert "expected 4.5 (max abs error 0.5" in str(wrong.value)
    assert wrong.value.withheld.startswith("by_hand_avg: 1 of 4 values differ; worst at index (1, 0): got 5.0, not the "
                                           "expected value")
    assert "4.5" not in wrong.value.withheld and "0.5" not in wrong.value.withheld, "no value, no error to add back"
    for form in ([1.0], off.T[:1], off.astype(np.float32)):  # the form asked for is no key: named as before
        with pytest.raises(AssertionError) as wrong:
            check_array(form, off, "by_hand_avg")
        assert type(wrong.value) is AssertionError and "expected" in str(wrong.value)


def test_check_raises_wants_the_right_error_and_words():
    def strict(k):
        if k < 1:
            raise ValueError(f"kernel_size must be >= 1, got {k}")
        return k

    check_raises(ValueError, ["kernel_size"], strict, 0)
    with pytest.raises(AssertionError, match="should mention 'padding'"):
        check_raises(ValueError, ["padding"], strict, 0)
    with pytest.raises(AssertionError, match="returned normally"):
        check_raises(ValueError, ["kernel_size"], strict, 2)
    with pytest.raises(AssertionError, match="raised TypeError"):
        check_raises(ValueError, ["kernel_size"], strict, "x")


# check_raises and catch-all messages (issue 31): lesson 1's two error cells, as the grader runs them (one
# compiled cell, fresh globals), against an output_size whose checks are the reference's and whose messages
# come in fourteen honest styles, some naming two, three or all four arguments, and four catch-all styles.
_AT_FAULT = {"type_input": "input_size", "type_kernel": "kernel_size", "type_stride": "stride",
             "type_padding": "padding", "input_min": "input_size", "kernel_min": "kernel_size", "stride_min": "stride",
             "padding_min": "padding", "padding_max": "padding", "window": "input_size"}
_RULE = {"type": "must be an int or a pair of ints", "input_min": "must be >= 1 on each axis",
         "kernel_min": "must be >= 1 on each axis", "stride_min": "must be >= 0 on each axis (0 means kernel_size)",
         "padding_min": "must be >= 0 on each axis", "padding_max": "must be <= kernel_size // 2",
         "window": "plus 2 * padding is smaller than kernel_size"}


def _rule(rule):
    return _RULE["type" if rule.startswith("type") else rule]


def _output_size_saying(say):
    """The reference's output_size whose error for ``rule`` says ``say(argument, rule, value, arguments)``."""
    def output_size(input_size, kernel_size, stride=0, padding=0):
        given = {"input_size": input_size, "kernel_size": kernel_size, "stride": stride, "padding": padding}

        def fail(kind, rule):
            raise kind(say(_AT_FAULT[rule], rule, given[_AT_FAULT[rule]], given))

        def pair(value, rule):
            whole = [isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                     for v in (value if isinstance(value, (tuple, list)) and len(value) == 2 else [value])]
            if not all(whole) or isinstance(value, (tuple, list)) and len(value) != 2:
                fail(TypeError, rule)
            return (int(value), int(value)) if not isinstance(value, (tuple, list)) else tuple(map(int, value))

        size, kernel = pair(input_size, "type_input"), pair(kernel_size, "type_kernel")
        step, pad = pair(stride, "type_stride"), pair(padding, "type_padding")
        for values, rule, low in ((size, "input_min", 1), (kernel, "kernel_min", 1), (step, "stride_min", 0),
                                  (pad, "padding_min", 0)):
            if min(values) < low:
                fail(ValueError, rule)
        for a in range(2):
            if pad[a] > kernel[a] // 2:
                fail(ValueError, "padding_max")
            if size[a] + 2 * pad[a] < kernel[a]:
                fail(ValueError, "window")
        step = tuple(k if s == 0 else s for k, s in zip(kernel, step))
        return tuple((size[a] + 2 * pad[a] - kernel[a]) // step[a] + 1 for a in range(2))
    return output_size


def _call(given):
    return ", ".join(f"{k}={v!r}" for k, v in given.items())


HONEST_MESSAGES = {
    "name, rule, value": lambda a, r, v, g: f"{a} {_rule(r)}, got {v!r}",
    "invalid name: value (rule)": lambda a, r, v, g: f"invalid {a}: {v!r} ({_rule(r)})",
    "the call, then the rule": lambda a, r, v, g: f"output_size({_call(g)}): {a} {_rule(r)}",
    "the rule, then the call": lambda a, r, v, g: f"{a} {_rule(r)} (called with {_call(g)})",
    "signature first": lambda a, r, v, g: f"output_size(input_size, kernel_size, stride, padding): {a} {_rule(r)}",
    "expected ...; got name=value": lambda a, r, v, g: f"expected {a} that {_rule(r).replace('must be', 'is')}; got {a}={v!r}",
    "the window in words": lambda a, r, v, g: (
        f"kernel_size {g['kernel_size']} is larger than input {g['input_size']} + 2*padding {g['padding']}"
        if r == "window" else f"padding {g['padding']} is more than half of kernel_size {g['kernel_size']}"
        if r == "padding_max" else f"{a} {_rule(r)}, got {v!r}"),
    "sums of the others": lambda a, r, v, g: (
        "input_size + 2 * padding must be >= kernel_size" if r == "window"
        else "2 * padding must be <= kernel_size" if r == "padding_max" else f"{a}={v!r}: {_rule(r)}"),
    "stride for context": lambda a, r, v, g: (
        f"input_size {g['input_size']} with padding {g['padding']} is too small for kernel_size {g['kernel_size']}"
        f" (stride {g['stride']})" if r == "window" else f"bad {a} {v!r}: {_rule(r)}"),
    "terse": lambda a, r, v, g: f"{a}: {_rule(r)}",
    "per axis": lambda a, r, v, g: f"each axis of {a} {_rule(r)}; {a} was {v!r}",
    "type names": lambda a, r, v, g: (f"{a} must be an int or a tuple of two ints, not {type(v).__name__}"
                                      if r.startswith("type") else f"{a} out of range: {v!r} ({_rule(r)})"),
    "a sentence": lambda a, r, v, g: f"The value {v!r} given for {a} is not allowed: it {_rule(r)}.",
    # corpus lesson1_by_hand/bug_stride_zero: one message for two rules of two arguments
    "one message for input_size and kernel_size": lambda a, r, v, g: (
        "input_size and kernel_size must be >= 1" if r in ("input_min", "kernel_min") else f"{a} {_rule(r)}"),
}
_ALL = "input_size, kernel_size, stride or padding"
CATCH_ALL_MESSAGES = {
    "one per type": lambda a, r, v, g: f"{_ALL} {'has the wrong type' if r.startswith('type') else 'is out of range'}",
    "with every value": lambda a, r, v, g: f"invalid {_ALL} (got {_call(g)})",
    "with the rule but not whose": lambda a, r, v, g: f"{_ALL} is wrong: {_rule(r)}",
    "names shuffled by value": lambda a, r, v, g: "one of " + ", ".join(sorted(g, key=lambda k: repr(g[k]))) + " is wrong",
}


@functools.lru_cache(maxsize=1)
def _error_cell_sources() -> dict:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "source" / "lesson1_by_hand" / "lesson1_by_hand.ipynb"
    cells = json.loads(path.read_text())["cells"]
    found = {c["metadata"].get("nbgrader", {}).get("grade_id"): "".join(c["source"]) for c in cells}
    return {i: found[i] for i in ("output_size_errors", "output_size_types")}


def _lesson1_error_cells(output_size) -> dict:
    """{grade_id: None or the AssertionError's text} of lesson 1's output_size_errors and output_size_types."""
    found = {}
    for grade_id, source in _error_cell_sources().items():
        try:
            exec(compile(source, f"<test {grade_id}>", "exec"),
                 {"np": np, "check_raises": check_raises, "check_value": check_value, "output_size": output_size,
                  "print": lambda *a: None})
            found[grade_id] = None
        except AssertionError as error:
            found[grade_id] = str(error)
    return found


@pytest.mark.parametrize("style", list(HONEST_MESSAGES))
def test_check_raises_passes_honest_messages_that_name_one_two_or_every_argument(style):
    assert _lesson1_error_cells(_output_size_saying(HONEST_MESSAGES[style])) == {
        "output_size_errors": None, "output_size_types": None}


@pytest.mark.parametrize("style", list(CATCH_ALL_MESSAGES))
def test_check_raises_fails_one_message_that_names_every_argument(style):
    """Corpus lesson1_by_hand/cheat_shotgun_messages, lesson3_numpy/cheat_error_words: each cell fails, saying
    which earlier error named the same arguments."""
    for grade_id, failure in _lesson1_error_cells(_output_size_saying(CATCH_ALL_MESSAGES[style])).items():
        assert failure and "which names the same arguments as the" in failure and "say which one" in failure, \
            (grade_id, failure)


def test_check_raises_compares_errors_within_one_run_of_a_cell():
    """A run of a cell is its own: the same catch-all function checked once per cell run is not compared
    across runs (a fixed function, run again, starts afresh), nor across error types."""
    shotgun = _output_size_saying(CATCH_ALL_MESSAGES["with the rule but not whose"])
    for arguments, mention in ((((4, 4), 0), "kernel_size"), (((4, 4), 2, -1), "stride")):
        exec(compile("check_raises(ValueError, [mention], output_size, *arguments)", "<test one>", "exec"),
             {"check_raises": check_raises, "output_size": shotgun, "mention": mention, "arguments": arguments})
    check_raises(ValueError, ["kernel_size"], shotgun, (4, 4), 0)
    check_raises(TypeError, ["stride"], shotgun, (4, 4), 2, "2")  # another type: its own messages


def test_check_same_outcome_wants_the_wrapped_result_or_its_error():
    x = np.arange(4.0)

    def fails():
        raise ValueError("slice step cannot be zero")

    check_same_outcome(lambda: x * 2, lambda: x + x, "double")
    check_same_outcome(fails, fails, "both raise the same error: the wrapper passed it on")
    with pytest.raises(AssertionError, match="wrapper: 1 of 4 values differ"):
        check_same_outcome(lambda: x * 2 + (x == 3), lambda: x + x, "wrapper")
    with pytest.raises(AssertionError, match="returned a result where the function it wraps raised ValueError"):
        check_same_outcome(lambda: x, fails, "wrapper")
    with pytest.raises(AssertionError, match="raised TypeError: no; expected ValueError"):
        check_same_outcome(lambda: (_ for _ in ()).throw(TypeError("no")), fails, "wrapper")
    with pytest.raises(ValueError, match="slice step"):  # the wrapper's own error, where the wrapped one returns
        check_same_outcome(fails, lambda: x, "wrapper")
    nan = np.array([1.0, np.nan])
    check_same_outcome(lambda: nan.copy(), lambda: nan, "the wrapped function's NaN, passed on")
    with pytest.raises(AssertionError, match=r"got nan at index \(0,\), expected 1.0"):
        check_same_outcome(lambda: nan[::-1].copy(), lambda: nan, "a NaN where the wrapped function has none")
    check_same_outcome(lambda: None, lambda: None, "no gradient on either side")
    with pytest.raises(AssertionError, match="got None, expected a result"):
        check_same_outcome(lambda: None, lambda: x, "a gradient lost by the wrapper")
    with pytest.raises(AssertionError, match="got a result, expected None"):
        check_same_outcome(lambda: x, lambda: None, "a gradient the wrapped function does not give")

    class Fault(Exception):  # an error that is no student's (the grader's own): never taken as an outcome
        pass

    def grader_fault():
        raise Fault("sandbox gone")

    with pytest.raises(Fault):
        check_same_outcome(grader_fault, grader_fault, "wrapper")


def test_check_answered_checks_the_form_only_and_check_avoids():
    assert check_answered("a", "q", ["a", "b", "c"], "section 1") == \
        "q: answered, read as 'a'. Unsure? It is taught in section 1."
    check_answered(False, "q", "true/false", "section 2")
    assert "read as 'the mean'" in check_answered("  The MEAN.", "q", "short answer", "section 3")
    assert "read as (n, C, 7, 7)" in check_answered("[n, C, 7, 7]", "q", "shape", "section 6")
    assert "read as nn.AvgPool2d(2)" in check_answered(" nn.AvgPool2d(2) ", "q", "layer", "section 6")
    assert "read as [[0.0, 1.0], [0.25, 0.25]]" in check_answered([[0, 1], (0.25, np.float32(0.25))], "g", "2x2 numbers", "s")
    for answer, form in [("d", ["a", "b"]), ("False", "true/false"), (0, "true/false"), ("a", "short answer"),
                         (None, "short answer"), ([[0, 1], [0, 1, 2]], "2x2 numbers"), ([[0, 1]], "2x2 numbers"),
                         ([[0, True], [0, 1]], "2x2 numbers"), ([[0, float("nan")], [0, 1]], "2x2 numbers"),
                         (np.zeros((2, 2)), "2x2 numbers"), ("[[0, 1], [0, 1]]", "2x2 numbers"),
                         (("N", "C"), "shape"), ("", "shape"), (None, "layer"), (" ", "layer")]:
        with pytest.raises(AssertionError, match="answer with") as raised:
            check_answered(answer, "q", form, "section 1")
        assert not isinstance(raised.value, NeedsReview)
    # issue 53: a shape or a layer written in a string that is not parsed goes to the instructor at once
    for answer, form in [("one value per channel", "shape"), ("(N,)", "shape"), ("layer = nn.AvgPool2d(2)", "layer"),
                         ("nn.AvgPool2d", "layer"), ("nn.AvgPool2d(k)", "layer")]:
        with pytest.raises(NeedsReview, match="goes to your instructor, who reads it and scores it by hand"):
            check_answered(answer, "q", form, "section 1")
    with pytest.raises(ValueError, match="form must be"):
        check_answered("a", "q", "essay", "section 1")


def _words(answer: str) -> str:
    """The verdict of a toy grammar (fewer parameters, so less overfitting): "pass" or "review"."""
    from course.checks import NeedsReview, check_words

    grammar = {"answer": ["<few> <so>? <less>"], "few": ["fewer parameters", "it has fewer parameters"],
               "so": ["so", "and", "and so"], "less": ["less overfitting", "it overfits less"]}
    try:
        check_words(answer, "q", grammar)
    except NeedsReview as review:
        assert review.answer == answer and "your instructor will read this answer" in str(review)
        return "review"
    return "pass"


@pytest.mark.parametrize("answer, verdict", [
    ("Fewer parameters, so less overfitting.", "pass"),
    ("it has fewer parameters and it overfits less", "pass"),
    ("\uff46ewer parameters, less overfitting", "pass"),  # a full-width letter is folded (NFKC), not a look-alike
    ("fewer parameters", "review"),  # a key idea missing: no form matches, the instructor reads it (never a silent 0)
    ("not only fewer parameters but also less overfitting", "review"),  # words no form has
    ("fewer parameters, less overfitting, not the max", "review"),
    ("fewer parameters, but it does not give less overfitting", "review"),
    ("fewer parameters; less overfitting is not true", "review"),
    ("it doesn\u2019t have fewer parameters, and less overfitting", "review"),
    ("fewer parameters, less overfitting, except for GAP", "review"),
    ("fewer parameters? less overfitting?", "review"),  # a question, not an answer
    ("fewer parameters, less \u043everfitting", "review"),  # a look-alike letter
    ("fewer parameters, less over\u200bfitting", "review"),  # an invisible one
    ('"fewer parameters, so less overfitting"', "review"),  # a quotation
    ("fewer parameters or less overfitting", "review"),  # another answer offered
    ("fewer parameters, less overfitting, said nobody", "review"),
])
def test_check_words_gives_a_point_only_to_an_answer_that_is_one_of_the_accepted_forms(answer, verdict):
    assert _words(answer) == verdict


def test_check_words_wants_a_string_and_check_avoids_reads_the_source():
    from course.checks import NeedsReview, check_words

    with pytest.raises(AssertionError, match="a short answer is a string") as refused:
        check_words(["fewer parameters"], "q", {"answer": ["fewer parameters"]})
    assert not isinstance(refused.value, NeedsReview)

    def honest(x):
        return x.mean()

    def cheat(x):
        import torch.nn.functional as F
        return F.avg_pool2d(x, 2)

    check_avoids(honest, ["torch", "avg_pool2d"], "honest")
    with pytest.raises(AssertionError, match=r"must not use F\.avg_pool2d \(torch\.nn\.functional\.avg_pool2d\) "
                       r"\(line \d+ of its cell, `return F\.avg_pool2d\(x, 2\)`\), import torch\.nn\.functional"):
        check_avoids(cheat, ["torch", "avg_pool2d"], "cheat")  # (the "cell": this file, as IPython's of a cell)


def test_random_input_is_seeded():
    a = random_input((2, 3), np.float32, seed=5)
    assert a.dtype == np.float32 and a.shape == (2, 3)
    assert np.array_equal(a, random_input((2, 3), np.float32, seed=5))
    assert not np.array_equal(a, random_input((2, 3), np.float32, seed=6))
    # in a student's kernel (no run seed): the standard normal draw of the cell's seed, as it always was
    assert np.array_equal(a, np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32))


def test_under_a_run_seed_inputs_follow_both_seeds(grader_state):
    from course import checks

    kernel = random_input((3, 4, 5), np.float64, seed=5)
    grader_state(run_seed=123)
    first = random_input((3, 4, 5), np.float64, seed=5)
    assert np.array_equal(first, random_input((3, 4, 5), np.float64, seed=5)), "one run seed, one input"
    assert not np.array_equal(first, random_input((3, 4, 5), np.float64, seed=6)), "each cell seed its own"
    points = checks.input_generator(5).standard_normal(4)  # what run_gradcheck draws its points from
    assert np.array_equal(points, checks.input_generator(5).standard_normal(4))
    grader_state(run_seed=124)
    assert not np.array_equal(first, random_input((3, 4, 5), np.float64, seed=5)), "another run, other inputs"
    assert not np.array_equal(points, checks.input_generator(5).standard_normal(4))
    grader_state(run_seed=None)
    assert np.array_equal(kernel, random_input((3, 4, 5), np.float64, seed=5)), "the kernel's draw is back"


def input_kind(x: np.ndarray) -> str:
    """Which of checks.INPUT_KINDS an array looks like (by its values)."""
    if np.abs(x[x != 0]).min() >= 1e3 and (np.all(x >= 0) or np.all(x <= 0)):
        return "large"
    if np.abs(x).max() < 0.1:
        return "tiny"
    if np.array_equal(x, np.round(x)) and np.abs(x).max() <= 4:
        return "integer"
    if x.min() == 0 and (x > 0).any():
        return "relu"
    return "normal" if (x < 0).any() and not np.array_equal(x, np.round(x)) else "unknown"


def test_under_a_run_seed_every_kind_appears_finite_in_every_dtype(grader_state):
    from course import checks

    seen: dict[str, int] = {}
    zero_windows = 0
    for run in range(200):
        grader_state(run_seed=run)
        x = random_input((2, 3, 8, 8), np.float64, seed=7)
        kind = input_kind(x)
        seen[kind] = seen.get(kind, 0) + 1
        windows = x.reshape(2, 3, 4, 2, 4, 2)
        zero_windows += int((windows == 0).all(axis=(3, 5)).any())
        for dtype in (np.float16, np.float32, np.float64):
            y = random_input((2, 3, 8, 8), dtype, seed=7)
            assert y.dtype == dtype and y.shape == (2, 3, 8, 8) and np.isfinite(y).all()
            assert input_kind(y) == kind or kind == "tiny", f"the kind does not depend on the dtype ({run})"
    assert set(seen) == set(checks.INPUT_KINDS), seen
    assert min(seen.values()) >= 10 and seen["relu"] > max(n for k, n in seen.items() if k != "relu"), \
        f"each kind at least a tenth of the draws, ReLU outputs the most: {seen}"
    assert zero_windows > 0, "ReLU inputs sometimes hold a whole window of zeros"


# --- plotting, data, setup, reference ------------------------------------------------------------------

def test_window_corners_follow_the_output_size_rule():
    assert window_corners((4, 4), 2) == [(0, 0), (0, 2), (2, 0), (2, 2)]
    corners = window_corners((5, 5), 3, stride=2, padding=1)
    assert len(corners) == 9 and corners[0] == (-1, -1) and corners[-1] == (3, 3)
    assert len(window_corners((5, 7), 2)) == 2 * 3  # floor mode drops the partial windows


def test_show_grid_draws_values_windows_and_padding():
    ax = show_grid(np.arange(16.0).reshape(4, 4), "t", kernel_size=2)
    texts = [t.get_text() for t in ax.texts]
    assert texts[:3] == ["0", "1", "2"] and len(texts) == 16
    assert len(ax.patches) == 4  # one rectangle per window
    ax2 = show_grid(np.ones((3, 3)), kernel_size=3, padding=1)
    assert len(ax2.texts) == 9 + 16  # 16 padded cells labelled "0"
    with pytest.raises(ValueError, match="2-D"):
        show_grid(np.ones(3))
    plt.close("all")


def test_show_images_titles_and_errors():
    fig = show_images([np.zeros((4, 4)), np.ones((2, 2))], ["a", "b"])
    assert [ax.get_title() for ax in fig.axes] == ["a\n[4, 4]", "b\n[2, 2]"]
    with pytest.raises(ValueError, match="one entry per image"):
        show_images([np.zeros((2, 2))], ["a", "b"])
    plt.close("all")


def test_sample_image_ships_with_matplotlib():
    image = sample_image(64)
    assert image.shape == (64, 64) and image.dtype == np.float32
    assert 0.0 <= image.min() < image.max() <= 1.0
    assert sample_image(None).shape == (600, 512)
    with pytest.raises(ValueError, match="size must be between"):
        sample_image(1000)


def test_setup_notebook_seeds_everything():
    setup_notebook(3)
    first = (np.random.rand(), torch.rand(1).item())
    setup_notebook(3)
    assert (np.random.rand(), torch.rand(1).item()) == first


def test_reference_is_torch_with_stride_zero_meaning_kernel():
    x = random_input((2, 3, 6, 6), np.float64, seed=1)
    out = avg_pool2d_reference(x, 2)
    assert out.shape == (2, 3, 3, 3) and out.dtype == np.float64
    assert np.allclose(out[0, 0, 0, 0], x[0, 0, :2, :2].mean())
    grad = avg_pool2d_grad_reference(x, np.ones_like(out), 2)
    assert np.allclose(grad, 0.25)
    excl = avg_pool2d_reference(x, 3, 1, 1, count_include_pad=False)
    assert np.allclose(excl[0, 0, 0, 0], x[0, 0, :2, :2].mean())


# --- check_avoids: forbidden names and code that hides what it calls --------------------------------

class _Source:
    """A stand-in carrying a student's source, as the grader's stand-ins do."""

    def __init__(self, text):
        self.__student_source__ = text


HONEST = '''
import sys


def pool(x, k):
    reference = x[:, :, ::k, ::k]          # a local variable may be called anything
    print("pooling", file=sys.stderr)       # sys for printing is fine
    out = sum(x[:, :, i::k, j::k] for i in range(k) for j in range(k)) / (k * k)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be an array, got {type(x).__name__}")
    return getattr(out, "astype")(x.dtype)
'''


@pytest.mark.parametrize("cheat, what", [
    ("import torch\ndef pool(x, k):\n    return torch.nn.functional.avg_pool2d(x, k)", "must not use"),
    ("def pool(x, k):\n    return getattr(F, 'avg' + '_pool2d')(x, k)", "computed attribute name"),
    ("def pool(x, k):\n    return F.__dict__['avg_pool' + '2d'](x, k)", ".__dict__"),
    ("def pool(x, k):\n    return eval('F.avg_' + 'pool2d')(x, k)", "`eval`"),
    ("import importlib\ndef pool(x, k):\n    return importlib.import_module('to' + 'rch')", "importlib"),
    ("import sys\ndef pool(x, k):\n    sys.settrace(None)\n    return x", "`sys.settrace`"),
    ("import sys as s\ndef pool(x, k):\n    del s.modules['torch']\n    return x", "`sys.modules`"),
    ("def pool(x, k):\n    return vars(F)['avg_pool2d'](x, k)", "`vars`"),
])
def test_check_avoids_refuses_forbidden_names_and_hidden_calls(cheat, what):
    from course.checks import check_avoids

    check_avoids(_Source(HONEST), ["torch", "avg_pool2d", "reference"], "pool")  # the honest one passes
    with pytest.raises(AssertionError, match=re.escape(what)) as caught:
        check_avoids(_Source(cheat), ["torch", "avg_pool2d", "reference"], "pool")
    assert "allowed:" in str(caught.value)


LESSON4_FORBIDDEN = ["*pool*", "conv*", "interpolate", "reference"]


@pytest.mark.parametrize("cheat, found", [
    ("def pool(x, k):\n    return F.avg_pool3d(x.unsqueeze(2), (1, k, k)).squeeze(2)", "avg_pool3d"),
    ("def pool(x, k):\n    return F.lp_pool2d(x, 1, k) / (k * k)", "lp_pool2d"),
    ("def pool(x, k):\n    return torch.ops.aten._adaptive_avg_pool2d(x, 2)", "_adaptive_avg_pool2d"),
    ("def pool(x, k):\n    return torch.nn.LPPool2d(1, k)(x) / (k * k)", "LPPool2d"),
    ("from torch.nn.functional import avg_pool1d as a1\ndef pool(x, k):\n    return a1(x, k)", "avg_pool1d"),
    ("def pool(x, k):\n    return F.interpolate(x, scale_factor=1 / k, mode='area')", "interpolate"),
    ("class Pool:\n    def __call__(self, x):\n        self.avg_pool3d = F.avg_pool3d\n"
     "        return self.avg_pool3d(x)", "avg_pool3d"),        # an attribute of its own, set from torch's
    ("def avg_pool3d(x):\n    return F.avg_pool3d(x)", "avg_pool3d"),  # a def of that name hides nothing
])
def test_a_pattern_forbids_every_spelling_of_library_pooling_but_not_the_students_own_names(cheat, found):
    """``*pool*`` covers every pooling function of PyTorch; the student's own ``pool`` (its def), a helper
    ``pool_rows``, a class ``AvgPool2dFunction`` and an attribute ``self.pool_size`` it sets do not match."""
    from course.checks import check_avoids

    honest = '''
class AvgPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.pool_size = k
        pooled = pool_rows(x, k)
        return pooled


def pool_rows(x, k):
    return sum(x[:, :, i::k] for i in range(k)) / k


def pool(x, k):
    return AvgPool2dFunction.apply(x, k)
'''
    check_avoids(_Source(honest), LESSON4_FORBIDDEN, "pool")
    with pytest.raises(AssertionError, match="must not use") as caught:
        check_avoids(_Source(cheat), LESSON4_FORBIDDEN, "pool")
    assert found in str(caught.value).split(";")[0]


def _kernel_helper(x):
    return F_helper_pool(x)  # noqa: F821 - a free name that is not a function of this module


def _kernel_caller(x):
    return _kernel_helper(x)


def test_in_the_notebook_check_avoids_reads_the_helpers_a_function_uses_as_the_grader_does():
    """Outside the grader (the student's kernel) the source is the function's plus, transitively, that of
    every function of its own module it names: a forbidden call one helper away is seen there too."""
    from course.checks import check_avoids, source_of

    text = source_of(_kernel_caller)
    assert "def _kernel_caller" in text and "def _kernel_helper" in text
    with pytest.raises(AssertionError, match="must not use F_helper_pool"):
        check_avoids(_kernel_caller, ["*pool*"], "_kernel_caller")
    # a name defined nowhere is refused even when no forbidden word matches it: the rule fails closed
    with pytest.raises(AssertionError, match="`F_helper_pool` .* is a name that is neither defined"):
        check_avoids(_kernel_caller, ["torch"], "_kernel_caller")


class _Submission(_Source):
    """A grader stand-in: the function's source, and every solution cell of the submission."""

    def __init__(self, text, whole):
        super().__init__(text)
        self.__submission_source__ = whole


def test_under_the_grader_code_that_hides_what_it_calls_is_refused_anywhere_in_the_solution_cells():
    """A plain function beside top-level code that reaches the grader's helpers through ``gc`` (to swap
    their code) fails; the same function in an honest submission passes."""
    from course.checks import NeedsReview, check_avoids

    function = "def pool(x, k):\n    return sum(x[:, :, i::k] for i in range(k)) / k\n"
    check_avoids(_Submission(function, function + "\nSIZES = [1, 2]\nprint('ready')\n"), ["torch"], "pool")
    swap = function + "\nimport gc\nfor f in gc.get_objects():\n    pass\n"
    with pytest.raises(NeedsReview, match="your solution cells reach into the interpreter outside pool") as caught:
        check_avoids(_Submission(function, swap), ["torch"], "pool")  # unproved: the instructor reads it
    assert "allowed:" in str(caught.value) and "the module `gc` (line 4, `import gc`)" in caught.value.answer


POOL_NDIM = 4  # a constant of the "notebook" (this module) whose name matches the pattern *pool*
POOL_FUNCTION = torch.nn.functional.avg_pool2d  # a library pooling function under a name of one's own


def _uses_a_constant(x):
    return x.reshape(x.shape[-POOL_NDIM:])


def _uses_a_library_alias(x):
    return POOL_FUNCTION(x, 2)


def test_in_the_notebook_a_constant_the_student_defined_is_their_own_name_but_an_alias_of_torch_is_not():
    from course.checks import check_avoids

    check_avoids(_uses_a_constant, ["*pool*"], "_uses_a_constant")
    with pytest.raises(AssertionError, match="must not use POOL_FUNCTION"):
        check_avoids(_uses_a_library_alias, ["*pool*"], "_uses_a_library_alias")


# --- check_avoids resolves what a name is, not how it is spelled ------------------------------------

NOT_YOURS = ["torch", "avg_pool2d", "avg_pool2d_reference", "reference", "scipy"]


@pytest.mark.parametrize("honest", [
    "def reference(x):\n    return x.mean()\n\ndef pool(x, k):\n    return reference(x)",   # a helper's name
    "def parameters(x):\n    return x.size\n\ndef pool(x, k):\n    return parameters(x)",
    "def pool(x, k):\n    reference = x.copy()\n    return reference.mean()",                # a local
])
def test_a_name_of_the_students_own_is_never_a_forbidden_use(honest):
    """Both sides: the student's own ``reference`` helper (or local) passes; the course's reference under
    a name of one's own, and torch reached through the set-up's ``F``, fail and the message says what
    the name resolves to."""
    from course.checks import check_avoids

    check_avoids(_Source(honest), NOT_YOURS, "pool")
    aliased = "from course.reference import avg_pool2d_reference as mine\ndef pool(x, k):\n    return mine(x, k)"
    with pytest.raises(AssertionError, match=re.escape("mine (course.reference.avg_pool2d_reference)")):
        check_avoids(_Source(aliased), NOT_YOURS, "pool")


class _Graded(_Source):
    """A grader stand-in with the set-up's namespace (what the parent ran of the lesson's set-up)."""

    def __init__(self, text, namespace):
        super().__init__(text)
        self.__trusted_globals__ = namespace


def test_under_the_grader_a_name_of_the_set_up_resolves_to_what_the_set_up_bound():
    """Lesson 3's set-up imports ``F``; ``F.conv2d`` names no forbidden word, but it is torch."""
    from course.checks import check_avoids

    setup = {"F": torch.nn.functional, "np": np}
    honest = "def pool(x, k):\n    return np.add.reduceat(x, np.arange(0, x.shape[-1], k), axis=-1) / k"
    check_avoids(_Graded(honest, setup), NOT_YOURS, "pool")
    cheat = "def pool(x, k):\n    return F.conv2d(x, np.ones((1, 1, k, k)) / k / k, stride=k)"
    with pytest.raises(AssertionError, match=re.escape("F.conv2d (torch.nn.functional.conv2d)")):
        check_avoids(_Graded(cheat, setup), NOT_YOURS, "pool")
    with pytest.raises(AssertionError, match="`F` .* is a name that is neither defined"):
        check_avoids(_Source(cheat), ["scipy"], "pool")  # without the set-up, F is untraced: refused, not passed


CONV = torch.nn.functional.conv2d
PARTIAL_POOL = __import__("functools").partial(torch.nn.functional.avg_pool2d, kernel_size=2)


def _pool_by_conv(x):
    return CONV(x, torch.ones(1, 1, 2, 2) / 4, stride=2)


def _pool_by_partial(x):
    return PARTIAL_POOL(x)


def _pool_by_slices(x):
    return (x[..., ::2, ::2] + x[..., 1::2, ::2] + x[..., ::2, 1::2] + x[..., 1::2, 1::2]) / 4


def test_in_the_notebook_a_global_resolves_to_its_object():
    from course.checks import check_avoids

    check_avoids(_pool_by_slices, ["torch"], "_pool_by_slices")
    with pytest.raises(AssertionError, match=re.escape("CONV (torch")):
        check_avoids(_pool_by_conv, ["scipy", "torch"], "_pool_by_conv")
    with pytest.raises(AssertionError, match=re.escape("PARTIAL_POOL (torch")):
        check_avoids(_pool_by_partial, ["avg_pool2d"], "_pool_by_partial")


def test_check_array_equal_nan_accepts_the_same_non_finite_values_only():
    """For comparing a function with itself (course.timing.check_vectorized): NaN where NaN is, inf where inf is."""
    same = np.array([1.0, np.nan, np.inf])
    check_array(same.copy(), same, "same", equal_nan=True)
    with pytest.raises(AssertionError, match="non-finite"):
        check_array(same.copy(), same, "same")
    for other in ([1.0, 2.0, np.inf], [1.0, np.nan, -np.inf], [np.nan, np.nan, np.inf]):
        with pytest.raises(AssertionError, match="other: got .* inf or NaN on one side only"):
            check_array(same, np.array(other), "other", equal_nan=True)


# --- check_real_divisor(_backward): count_include_pad=False judged against the student's own True (issue 29) -----

def _pool_with(window_bug: int = 0, divisor_bug: bool = False, crop: bool = False, nan: bool = False):
    """A loop pooling [B, C, H, W] with an optional window one row too long (window_bug=1), an always-kh·kw
    divisor, a crop of x instead of pooling, or NaN everywhere: the forward and its backward (count_include_pad
    the last argument of both)."""
    def windows(shape, k, s, p):
        (h, w), k, s, p = shape[2:], (k, k), (s, s), (p, p)
        out = [((h + 2 * p[0] - k[0]) // s[0] + 1), ((w + 2 * p[1] - k[1]) // s[1] + 1)]
        for i in range(out[0]):
            for j in range(out[1]):
                t, l = i * s[0] - p[0], j * s[1] - p[1]
                r0, r1, c0, c1 = max(t, 0), min(t + k[0] + window_bug, h), max(l, 0), min(l + k[1], w)
                yield i, j, out, (r0, r1, c0, c1), k[0] * k[1] if divisor_bug else (r1 - r0) * (c1 - c0)

    def pool(x, k, stride, padding, count_include_pad=True):
        if crop or nan:
            y = x[:, :, ::stride, ::stride][:, :, :len(range(0, x.shape[2] + 2 * padding - k + 1, stride)),
                                            :len(range(0, x.shape[3] + 2 * padding - k + 1, stride))].copy()
            return y * np.nan if nan else y
        out = None
        for i, j, size, (r0, r1, c0, c1), n in windows(x.shape, k, stride, padding):
            out = np.zeros(x.shape[:2] + tuple(size), x.dtype) if out is None else out
            out[:, :, i, j] = x[:, :, r0:r1, c0:c1].sum(axis=(2, 3)) / (k * k if count_include_pad else n)
        return out

    def backward(grad_out, shape, k, stride, padding, count_include_pad=True):
        grad_x = np.zeros(tuple(shape), grad_out.dtype)
        for i, j, _, (r0, r1, c0, c1), n in windows(shape, k, stride, padding):
            grad_x[:, :, r0:r1, c0:c1] += (grad_out[:, :, i, j] / (k * k if count_include_pad else n))[:, :, None, None]
        return grad_x
    return pool, backward


def test_check_real_divisor_judges_the_divisor_only():
    from course.checks import check_real_divisor, check_real_divisor_backward

    x = random_input((2, 3, 7, 8), np.float64, seed=5)
    grad_out = random_input((2, 3, 4, 4), np.float64, seed=6)

    def verdict(pool, backward):
        outcome = []
        for judge in (lambda: check_real_divisor(pool, x, 3, 2, 1, "f", varied=True),
                      lambda: check_real_divisor_backward(backward, grad_out, x.shape, 3, 2, 1, "b", varied=True)):
            try:
                judge()
                outcome.append(True)
            except AssertionError:
                outcome.append(False)
        return outcome

    assert verdict(*_pool_with()) == [True, True]  # right: passes
    assert verdict(*_pool_with(window_bug=1)) == [True, True]  # a window bug: the divisor is still right
    assert verdict(*_pool_with(divisor_bug=True)) == [False, False]  # always kh·kw: fails
    assert verdict(_pool_with(crop=True)[0], _pool_with()[1])[0] is False  # no pooling, no flag: fails
    assert verdict(_pool_with(nan=True)[0], _pool_with()[1])[0] is False  # NaN everywhere: fails
    reference = lambda x, k, stride, padding, count_include_pad: avg_pool2d_reference(  # noqa: E731
        x, k, stride, padding, count_include_pad)
    assert verdict(reference, _pool_with()[1]) == [True, True]


def test_course_checks_is_one_facade_over_its_modules():
    """Issue 44: ``course.checks`` re-exports every public name of its modules (the same objects)."""
    import importlib
    import pkgutil

    import course.checks

    for info in pkgutil.walk_packages(course.checks.__path__, "course.checks."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if not name.startswith("_") and getattr(value, "__module__", None) == info.name:
                assert getattr(course.checks, name, None) is value, f"course.checks.{name} ({info.name})"


def test_the_graders_state_is_set_only_inside_one_grading_block_and_reset_on_the_way_out():
    """Issue 54: no module class is swapped (``course.checks`` and its hooks are plain modules); the grader's
    state is set by ``with grading(...)`` only, which the checks read, and it is reset when the block is left,
    by an exception too, nested blocks included; outside every block (a student's kernel) all is ``None``."""
    import threading
    import types

    import course.checks
    from course.checks import hooks

    assert type(course.checks) is types.ModuleType and type(hooks) is types.ModuleType
    assert not hasattr(course.checks, "run_seed") and not hasattr(hooks, "run_seed"), "state only via current()"
    assert hooks.current() == hooks.Grading(router=None, run_seed=None, student=None, graded_so_far=None)
    in_notebook = course.checks.random_input((3,), seed=2)
    with course.checks.grading(run_seed=7, student="ann") as state:
        assert state is hooks.current() and (state.run_seed, state.student) == (7, "ann")
        assert not np.array_equal(course.checks.random_input((3,), seed=2), in_notebook), "the checks read it"
        with hooks.grading(student=None):  # a nested block replaces what it names, keeps the rest
            assert (hooks.current().run_seed, hooks.current().student) == (7, None)
        assert hooks.current().student == "ann", "the inner block's exit restores the outer state"
        seen = []
        other = threading.Thread(target=lambda: seen.append(hooks.current()))
        other.start()
        other.join()
        assert seen == [hooks.Grading()], "another thread (another submission) sees none of this one's"
    assert hooks.current() == hooks.Grading(), "left: reset"
    assert np.array_equal(course.checks.random_input((3,), seed=2), in_notebook)
    with pytest.raises(ZeroDivisionError):
        with hooks.grading(run_seed=8, graded_so_far={"a": True}):
            assert hooks.passed("a") is True
            raise ZeroDivisionError("a test cell's error")
    assert hooks.current() == hooks.Grading() and hooks.passed("a") is None, "reset on an exception too"
    with pytest.raises(TypeError, match="unknown grader state seed .*run_seed"):
        hooks.grading(seed=3).__enter__()
    assert hooks.current() == hooks.Grading()


def test_check_real_divisor_backward_judges_a_window_bug_the_same_at_every_run_seed(grader_state):
    """Issue 43: a backward that forgets the padding offset (its divisor the real elements of its own windows) passes
    the divisor's check at every run seed; it used to fail it where the drawn grad_out was zero on the windows that
    tell count_include_pad=False apart (run seeds 11 and 27 on this geometry). A crop still fails (above)."""
    from course.checks import check_real_divisor_backward

    def forgets_offset(grad_out, shape, k, stride, padding, count_include_pad=True):
        grad_x = np.zeros(tuple(shape), grad_out.dtype)
        for i in range(grad_out.shape[2]):
            for j in range(grad_out.shape[3]):
                r0, r1 = i * stride[0], min(i * stride[0] + k[0], shape[2])
                c0, c1 = j * stride[1], min(j * stride[1] + k[1], shape[3])
                n = k[0] * k[1] if count_include_pad else (r1 - r0) * (c1 - c0)
                grad_x[:, :, r0:r1, c0:c1] += (grad_out[:, :, i, j] / n)[:, :, None, None]
        return grad_x

    for seed in (11, 27, 1, 2, 3):
        grader_state(run_seed=seed)
        for dtype in (np.float32, np.float64):
            x = random_input((2, 2, 4, 7), dtype, seed=505)
            grad_out = random_input(avg_pool2d_reference(x, (4, 3), 2, (0, 1)).shape, dtype, seed=605)
            check_real_divisor_backward(forgets_offset, grad_out, x.shape, (4, 3), (2, 2), (0, 1), "b",
                                        rtol=1e-5, atol=1e-6)


def test_a_time_ratio_reads_one_way_faster_or_slower_with_the_tables_number():
    """Issue 53: speed is said one way throughout ("N times faster/slower than ..."), never "0.72 times as fast"."""
    from course.timing import speed

    assert speed(0.4, "PyTorch") == "2.50 times faster than PyTorch (time ratio 0.40)"
    assert speed(1.1, "PyTorch") == "1.10 times slower than PyTorch (time ratio 1.10)"
    assert speed(0.99, "PyTorch") == "as fast as PyTorch (time ratio 0.99)"
    for wrong in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="ratio must be a positive finite time ratio"):
            speed(wrong, "PyTorch")
