"""Unit tests of course/timing.py: structure and medians with a fake clock, never the machine's speed."""

from __future__ import annotations


import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import time  # noqa: E402

from course import timing  # noqa: E402
from course.checks import RUNS_WITH_STUDENT_CODE  # noqa: E402


class FakeClock:
    """A clock that moves only when a fake function says it cost some seconds; it logs who ran."""

    def __init__(self):
        self.now = 0.0
        self.log: list[str] = []

    def __call__(self) -> float:
        return self.now

    def costs(self, name: str, seconds) -> callable:
        """A zero-argument function that 'takes' ``seconds`` (a number, or a list consumed call by call)."""
        queue = list(seconds) if isinstance(seconds, (list, tuple)) else None

        def function(*args):
            self.log.append(name)
            self.now += queue.pop(0) if queue is not None else seconds
        return function


def test_calls_per_round_doubles_until_min_time():
    clock = FakeClock()
    assert timing.calls_per_round(clock.costs("f", 0.001), min_time=0.01, clock=clock) == 16  # 8 ms < 10 ms <= 16 ms
    assert timing.calls_per_round(clock.costs("slow", 1.0), min_time=0.01, clock=clock) == 1
    assert timing.calls_per_round(clock.costs("free", 0.0), min_time=0.01, clock=clock, max_calls=64) == 64
    with pytest.raises(ValueError, match="min_time"):
        timing.calls_per_round(clock.costs("f", 0.001), min_time=-1, clock=clock)


def test_compare_medians_and_ratios_are_exact_with_a_fake_clock():
    clock = FakeClock()
    result = timing.compare({"fast": clock.costs("fast", 0.002), "slow": clock.costs("slow", 0.006)},
                            rounds=4, number=3, baseline="slow", clock=clock)
    assert result["names"] == ["fast", "slow"]
    assert result["number"] == {"fast": 3, "slow": 3}
    assert result["times"]["fast"] == pytest.approx([0.002] * 4)
    assert result["median"] == pytest.approx({"fast": 0.002, "slow": 0.006})
    assert result["ratio"] == pytest.approx({"fast": 1 / 3, "slow": 1.0})
    assert clock.log.count("fast") == 12 and clock.log.count("slow") == 12


def test_compare_interleaves_rounds_in_a_rotating_order():
    clock = FakeClock()
    names = ["a", "b", "c"]
    timing.compare({n: clock.costs(n, 0.001) for n in names}, rounds=3, number=2, clock=clock)
    rounds = [clock.log[i:i + 6] for i in range(0, 18, 6)]
    assert rounds == [["a", "a", "b", "b", "c", "c"], ["b", "b", "c", "c", "a", "a"],
                      ["c", "c", "a", "a", "b", "b"]]


def test_median_ignores_one_slow_round():
    clock = FakeClock()
    result = timing.compare({"f": clock.costs("f", [0.001, 0.001, 1.0, 0.001, 0.001])}, rounds=5, number=1,
                            clock=clock)
    assert result["median"]["f"] == pytest.approx(0.001)
    assert max(result["times"]["f"]) == pytest.approx(1.0)


def test_ratio_is_the_median_of_per_round_ratios():
    # a is half of b in two rounds of three; in the other round the machine hiccups for a only.
    # The median of per-round ratios is 0.5; the ratio of the medians would be 0.004 / 0.002 = 2.
    clock = FakeClock()
    a = clock.costs("a", [0.001, 0.004, 0.010])
    b = clock.costs("b", [0.002, 0.002, 0.020])
    result = timing.compare({"a": a, "b": b}, rounds=3, number=1, baseline="b", clock=clock)
    assert result["times"]["a"] == pytest.approx([0.001, 0.004, 0.010])
    assert result["ratio"]["a"] == pytest.approx(0.5)
    assert result["median"]["a"] / result["median"]["b"] == pytest.approx(2.0)


def test_compare_calibrates_number_per_function():
    clock = FakeClock()
    result = timing.compare({"quick": clock.costs("quick", 0.001), "slow": clock.costs("slow", 0.5)},
                            rounds=2, min_time=0.004, clock=clock)
    assert result["number"] == {"quick": 4, "slow": 1}
    assert result["median"]["quick"] == pytest.approx(0.001)


@pytest.mark.parametrize("kwargs, message", [
    ({"functions": {}}, "at least one"),
    ({"rounds": 0}, "rounds"),
    ({"baseline": "nope"}, "baseline"),
    ({"number": 0}, "number"),
])
def test_compare_rejects_bad_arguments(kwargs, message):
    clock = FakeClock()
    args = {"functions": {"f": clock.costs("f", 0.001)}, "clock": clock}
    args.update(kwargs)
    functions = args.pop("functions")
    with pytest.raises(ValueError, match=message):
        timing.compare(functions, **args)


def test_sweep_respects_limits_and_passes_the_arguments():
    clock = FakeClock()
    seen = []

    def make_args(size):
        seen.append(size)
        return (size,)

    def cost_per_size(name, per_item):
        def function(size):
            clock.log.append(name)
            clock.now += per_item * size * size
        return function

    rows = timing.sweep({"loops": cost_per_size("loops", 1e-3), "vector": cost_per_size("vector", 1e-6)},
                        make_args, [4, 16, 64], limits={"loops": 16}, rounds=3, baseline="vector", clock=clock,
                        min_time=0)
    assert seen == [4, 16, 64]
    assert [(r["size"], r["name"]) for r in rows] == [(4, "loops"), (4, "vector"), (16, "loops"),
                                                       (16, "vector"), (64, "vector")]
    by = {(r["size"], r["name"]): r for r in rows}
    assert by[16, "loops"]["seconds"] == pytest.approx(1e-3 * 256)
    assert by[16, "loops"]["ratio"] == pytest.approx(1000.0)
    assert by[64, "vector"]["ratio"] == pytest.approx(1.0)
    assert len(by[4, "vector"]["times"]) == 3
    with pytest.raises(ValueError, match="limits"):
        timing.sweep({"f": cost_per_size("f", 1)}, make_args, [1], limits={"g": 3}, clock=clock)


def test_format_table_has_a_column_per_function_and_dashes_for_missing():
    rows = [{"size": 8, "name": "loops", "seconds": 0.0123}, {"size": 8, "name": "numpy", "seconds": 2.5e-5},
            {"size": 64, "name": "numpy", "seconds": 0.5}]
    text = timing.format_table(rows, size_label="H = W")
    lines = text.splitlines()
    assert lines[0].split() == ["H", "=", "W", "loops", "numpy"]
    assert set(lines[1]) <= {"-", " "}
    assert lines[2].split() == ["8", "12.3", "ms", "25", "µs"]
    assert lines[3].split() == ["64", "-", "500", "ms"]


def test_plot_loglog_draws_one_line_per_function_on_log_axes():
    rows = [{"size": s, "name": n, "seconds": t * s} for s in (4, 8, 16) for n, t in (("a", 1e-3), ("b", 1e-6))]
    ax = timing.plot_loglog(rows, xlabel="elements", x=lambda size: size * size, title="t")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
    assert list(ax.get_lines()[0].get_xdata()) == [16, 64, 256]
    assert ax.get_xlabel() == "elements" and ax.get_title() == "t"
    plt.close("all")


def _row_loop_pool(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Average pooling at stride 1, no padding (the calls here), looping in Python over the output rows."""
    kh, kw = kernel_size
    out = np.empty(x.shape[:2] + (x.shape[2] - kh + 1, x.shape[3] - kw + 1))
    for i in range(out.shape[2]):
        out[:, :, i] = sum(x[:, :, i:i + kh, j:j + out.shape[3]] for j in range(kw)).mean(axis=2) / kw
    return out


def _sliced_pool(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """The same with one slice per kernel offset."""
    kh, kw = kernel_size
    rows, cols = x.shape[2] - kh + 1, x.shape[3] - kw + 1
    return sum(x[:, :, i:i + rows, j:j + cols] for i in range(kh) for j in range(kw)) / (kh * kw)


def _baseline(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    from course.reference import avg_pool2d_reference

    return avg_pool2d_reference(x, kernel_size, stride, padding, count_include_pad)


CALLS = [((np.random.default_rng(0).random((1, 1, 60002, 2)), (3, 2)), dict(stride=1))]


def test_timed_call_returns_the_result_and_cpu_seconds():
    result, seconds = timing.timed_call(_row_loop_pool, *CALLS[0][0], **CALLS[0][1])
    np.testing.assert_allclose(result, _baseline(*CALLS[0][0], **CALLS[0][1]))
    assert seconds > 0.02  # 60 000 Python iterations


def test_check_vectorized_passes_slices_and_fails_a_loop_over_rows():
    rows = timing.check_vectorized(_sliced_pool, _baseline, CALLS, "pool")
    assert len(rows) == 1 and rows[0]["shape"] == [1, 1, 60002, 2]
    assert timing.is_vectorized(rows[0]["seconds"], rows[0]["baseline_seconds"])
    assert rows[0]["per_element"] == pytest.approx(rows[0]["seconds"] / (60000 * 1))
    with pytest.raises(AssertionError, match=r"pool\(x\[1, 1, 60002, 2\], \(3, 2\), stride=1\) used .* CPU seconds "
                                             r"\(\d+ ns per result element\) .* Python loop over that axis"):
        timing.check_vectorized(_row_loop_pool, _baseline, CALLS, "pool")


def test_the_loop_reading_is_a_hint_on_failure_and_sends_a_cheap_loop_over_the_data_to_review():
    """Issue 50: a kernel loop (``np.ndindex(kh, kw)``, counted by the reader since) passes on its cost; a loop over
    the rows fails on its cost, and the message carries what the reader says about its loops; a loop over the short
    axis of the timed input is within the limit, and the reader sees it loop over the data: review (0 until read)."""
    from course.checks import NeedsReview, check_kernel_loops

    def ndindex_pool(x, kernel_size, stride=0, padding=0, count_include_pad=True):
        kh, kw = kernel_size
        rows, cols = x.shape[2] - kh + 1, x.shape[3] - kw + 1
        total = np.zeros(x.shape[:2] + (rows, cols))
        for a, b in np.ndindex(kh, kw):
            total += x[:, :, a:a + rows, b:b + cols]
        return total / (kh * kw)

    def short_axis_pool(x, kernel_size, stride=0, padding=0, count_include_pad=True):
        kh, kw = kernel_size
        rows, cols = x.shape[2] - kh + 1, x.shape[3] - kw + 1
        total = np.zeros(x.shape[:2] + (rows, cols))
        for j in range(cols):  # one turn on the timed input (2 columns, a kernel 2 wide); as many as columns elsewhere
            for a in range(kh):
                total[:, :, :, j] += x[:, :, a:a + rows, j:j + kw].sum(axis=3)
        return total / (kh * kw)

    check_kernel_loops(ndindex_pool, "pool")
    timing.check_vectorized(ndindex_pool, _baseline, CALLS, "pool")
    with pytest.raises(NeedsReview, match=r"pool is within the CPU limit on every timed input, but it loops in Python .*"
                                          r"`for j in range\(cols\)` turns as often as the data is long") as review:
        timing.check_vectorized(short_axis_pool, _baseline, CALLS, "pool")
    assert "a loop over the data within the CPU limit" in review.value.answer
    with pytest.raises(AssertionError, match=r"Python loop over that axis.*A reading of your code's loops may help: ") \
            as refused:
        timing.check_vectorized(_row_loop_pool, _baseline, CALLS, "pool")
    assert not isinstance(refused.value, NeedsReview)  # the cost decides: proved 0


def test_cost_cases_are_long_along_each_axis_in_turn_beside_a_balanced_input_and_drawn_per_run(monkeypatch):
    from course.checks import hooks

    cases = timing.cost_cases(3)
    assert [case["axis"] for case in cases] == list(timing.AXES)
    for axis, case in enumerate(cases[:4]):
        shape = case["shape"]
        assert shape[axis] >= timing.LONG_AXIS and max(n for i, n in enumerate(shape) if i != axis) <= 6, case
        for k, s, p, n in zip(case["kernel_size"], case["stride"], case["padding"], shape[2:]):
            assert 2 <= k <= 3 and 1 <= s <= 2 and 0 <= p <= k // 2 and n + 2 * p >= k, case  # a window fits
    balanced = cases[4]["shape"]
    assert balanced[:2] == (2, 2) and balanced[2] == balanced[3]
    assert 0.9 < np.prod(balanced) / np.prod(cases[2]["shape"]) <= 1.0
    assert timing.cost_cases(3) == cases  # in a notebook: the same on every machine
    with hooks.grading(run_seed=12345):
        graded = timing.cost_cases(3)
    with hooks.grading(run_seed=54321):
        assert graded != timing.cost_cases(3) != cases  # under the grader: anew at each grading run


def test_the_baseline_is_timed_on_its_own_thread_only():
    """Another thread of the grader (grading another submission) burning CPU meanwhile does not raise the limit."""
    import threading

    stop = threading.Event()

    def burn():
        while not stop.is_set():
            pass

    def wait_for_the_burn():  # sleeps until the other thread has burnt 0.2 CPU seconds
        while time.process_time() - start < 0.2:
            time.sleep(0.005)

    thread = threading.Thread(target=burn)
    start = time.process_time()
    thread.start()
    try:
        _, seconds = timing.baseline_seconds(wait_for_the_burn)
    finally:
        stop.set()
        thread.join()
    assert seconds < 0.05 and time.process_time() - start >= 0.2, seconds


def _long_only(change):
    """_sliced_pool, with ``change(out)`` applied to its result on inputs longer than 1000 rows only."""
    def pool(x, kernel_size, stride=0, padding=0, count_include_pad=True):
        out = _sliced_pool(x, kernel_size)
        return change(out) if x.shape[2] > 1000 else out
    return pool


def _at(rows, value):
    def change(out):
        out[:, :, rows] = value
        return out
    return change


def test_check_vectorized_judges_the_time_not_the_values():
    """A wrong value that the function computes on every input is the value tests' to judge (one bug, one penalty):
    each row pooled one row off, or every value + 1, passes here."""
    def off_by_one(x, kernel_size, stride=0, padding=0, count_include_pad=True):  # each window one row down; the last one as the one before
        return np.concatenate([_sliced_pool(x[:, :, 1:], kernel_size), _sliced_pool(x[:, :, -kernel_size[0]:], kernel_size)], 2)

    def plus_one(x, kernel_size, stride=0, padding=0, count_include_pad=True):
        return _sliced_pool(x, kernel_size) + 1.0

    timing.check_vectorized(off_by_one, _baseline, CALLS, "pool")
    timing.check_vectorized(plus_one, _baseline, CALLS, "pool")


@pytest.mark.parametrize("name, function, message", [
    ("zeros on a long input", _long_only(np.zeros_like), "one value, 0.0, everywhere"),
    ("wrong rows at the start", _long_only(_at(slice(0, 5), 7.0)), r"piece \[0:1, 0:1, 0:\d+, 0:2\]"),
    ("wrong rows in the middle", _long_only(_at(slice(100, 59000), 7.0)), r"piece \[0:1, 0:1, [1-9]\d*:\d+, 0:2\]"),
    ("a wrong last row", _long_only(_at(-1, 7.0)), r"piece \[0:1, 0:1, \d+:60002, 0:2\]"),
    ("float32 on a long input", _long_only(lambda out: out.astype(np.float32)), "expected dtype float64"),
    ("a row short", _long_only(lambda out: out[:, :, 1:]), "expected shape"),
])
def test_check_vectorized_fails_a_function_that_computes_something_else_on_the_long_input(name, function, message):
    with pytest.raises(AssertionError, match=message):
        timing.check_vectorized(function, _baseline, CALLS, "pool")


def test_check_vectorized_pieces_line_up_with_the_whole_input_at_any_stride_and_padding():
    """The reference of lesson 3's exercise (torch's pooling here) on long inputs, forward and backward, at strides 1
    to 3 and paddings 0 to 1 on each axis, with and without count_include_pad: its pieces agree (no false failure)."""
    from course.reference import avg_pool2d_grad_reference

    def backward(grad_out, input_shape, kernel_size, stride=0, padding=0, count_include_pad=True):
        return avg_pool2d_grad_reference(np.zeros(input_shape), grad_out, kernel_size, stride, padding, count_include_pad)

    rng = np.random.default_rng(1)
    for shape, kernel, stride, padding, include in [((1, 2, 3001, 5), (3, 2), (2, 1), (1, 1), False),
                                                    ((2, 1, 4, 3002), (2, 3), (1, 3), (0, 1), True),
                                                    ((40, 50, 3, 3), 3, 0, 1, False)]:
        x = rng.standard_normal(shape)
        options = dict(stride=stride, padding=padding, count_include_pad=include)
        timing.check_vectorized(_baseline, _baseline, [((x, kernel), options)], "pool", seed=2)
        grad_out = rng.standard_normal(_baseline(x, kernel, **options).shape)
        timing.check_vectorized(backward, backward, [((grad_out, shape, kernel), options)], "pool_backward", seed=3)


def test_timed_call_is_not_shipped_to_the_child_and_counts_no_lines():
    assert not hasattr(timing, "line_events")
    assert not hasattr(timing.timed_call, RUNS_WITH_STUDENT_CODE)


def test_the_median_of_per_round_ratios_is_not_the_ratio_of_the_medians():
    clock = FakeClock()
    result = timing.compare({"a": clock.costs("a", [1, 10, 1]), "b": clock.costs("b", [2, 10, 3])}, rounds=3,
                            number=1, baseline="a", clock=clock)
    # per-round ratios b/a are 2, 1, 3: their median is 2, while the ratio of the medians would be 3
    assert result["ratio"]["b"] == 2 and result["median"]["b"] / result["median"]["a"] == 3
    assert timing.median_ratio(result["times"]["a"], result["times"]["b"], scale=10) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="paired"):
        timing.median_ratio([1.0, 2.0], [1.0])


def test_thread_counts_are_set_per_function_and_restored():
    clock, state, seen = FakeClock(), {"threads": 2}, []

    def record(name):
        def function():
            seen.append((name, state["threads"]))
            clock.now += 1
        return function
    control = (lambda: state["threads"], lambda n: state.update(threads=n))
    timing.compare({"one": record("one"), "all": record("all"), "any": record("any")}, rounds=2, clock=clock,
                   threads={"one": 1, "all": 2, "any": None}, thread_control=control)
    assert {(n, t) for n, t in seen if n != "any"} == {("one", 1), ("all", 2)}
    assert state["threads"] == 2, "the count before the timing is restored"
    with pytest.raises(ValueError, match="threads names unknown"):
        timing.compare({"a": record("a")}, threads={"b": 1}, thread_control=control, clock=clock)


def test_sync_runs_around_every_timed_round_and_best_of_is_the_fastest_call():
    clock, synced = FakeClock(), []
    timing.compare({"f": clock.costs("f", 0.001)}, rounds=3, number=2, clock=clock,
                   sync=lambda: synced.append(clock.log.count("f")))
    assert synced == [0, 2, 2, 4, 4, 6], "before the clock starts and before it stops"
    assert timing.best_of(clock.costs("g", [5.0, 3.0, 1.0, 2.0]), repeats=3, clock=clock) == 1.0


def test_bandwidth_floor_is_a_copy_rate():
    floor = timing.bandwidth_floor(mib=1, repeats=2)
    assert floor["array_bytes"] == 2**20 and floor["bytes_moved"] == 2 * 2**20 and floor["repeats"] == 2
    assert floor["best_s"] > 0 and abs(floor["gbytes_per_s"] - 2 * 2**20 / floor["best_s"] / 1e9) < 1e-9
    with pytest.raises(ValueError, match="mib"):
        timing.bandwidth_floor(mib=0)


def test_check_vectorized_names_the_arguments_it_needs():
    with pytest.raises(ValueError, match="baseline must name .* kernel_size"):
        timing.check_vectorized(_sliced_pool, lambda a, k, stride=1: _baseline(a, k, stride), CALLS, "pool")


@pytest.mark.parametrize("error", [ValueError("stride must be positive"), MemoryError(), IndexError("index 3")])
def test_check_vectorized_says_it_could_not_judge_a_function_that_raises(error):
    """Issue 43 item 3: a function that raises on a case the vectorization cell needs (another mistake, or an
    intermediate too large) fails with "could not judge", naming the call and the error, never with a message
    that blames a loop; on its pieces too. A function that works passes (above)."""
    def raising(x, kernel_size, stride=0, padding=0, count_include_pad=True):
        raise error

    def raising_on_the_long_input(x, kernel_size, stride=0, padding=0, count_include_pad=True):
        if x.shape[2] > 1000:
            raise error
        return _sliced_pool(x, kernel_size)

    # the pieces run first (their first-call costs are not timed): a function that always raises fails there
    for function, where in [(raising, r"pool on the piece \["), (raising_on_the_long_input, r"pool\(x\[1, 1, 60002, 2\]")]:
        with pytest.raises(AssertionError, match=rf"could not judge whether pool is vectorized: {where}.*raised "
                                                 rf"{type(error).__name__}") as failure:
            timing.check_vectorized(function, _baseline, CALLS, "pool")
        assert "Python loop" not in str(failure.value)


def test_where_the_grader_cannot_count_the_childs_cpu_the_vectorized_cell_is_a_grader_error():
    """Issue 50: the child's CPU seconds count every process it ever ran where it has a cgroup or a PID namespace
    of its own (tests/grading/test_grader_users.py shows orphans and unwaited children counted); without either, a
    timed call raises GraderFault (the submission's status is grader-error, never a student's 0). With one, the
    seconds are the sandbox's own count around the call, never anything the child reports."""
    from autograder.grading.sandbox import GraderFault, Sandbox
    from autograder.grading.sandbox.levels import Containment
    from autograder.grading.verdicts import _Router

    box = Sandbox.__new__(Sandbox)  # no child started: only what decides whether its CPU can be counted
    reasons = {}
    for cgroup, namespaces in [(None, False), (object(), False), (None, True)]:
        box.cgroup = cgroup
        box.mode = Containment("namespaces" if namespaces else "rlimits-only", namespaces, False, namespaces, False,
                               cgroup=cgroup is not None)
        reasons[cgroup is not None, namespaces] = box.cpu_uncounted()
    assert reasons[True, False] == reasons[False, True] == ""
    assert "neither a cgroup nor a PID namespace" in reasons[False, False]

    class Counted:
        def __init__(self, why):
            self.why, self.spent = why, 0.0

        def cpu_uncounted(self):
            return self.why

        def cpu_seconds(self):
            return self.spent

    class Session:
        def __init__(self, box):
            self.box = box

        def ensure(self):
            return self.box

    counted = Counted("")

    def student_call():
        counted.spent += 0.25  # what the kernel counts for the child while it runs the call
        return 7

    assert _Router(Session(counted)).timed_call(student_call, (), {}) == (7, 0.25)
    with pytest.raises(GraderFault, match="could not judge a rule on CPU seconds.*neither a cgroup nor a PID"):
        _Router(Session(Counted(reasons[False, False]))).timed_call(student_call, (), {})
