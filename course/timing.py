"""Timing for the lessons: several rounds, the median, and functions compared side by side.

What is measured: wall-clock seconds per call (``time.perf_counter`` unless a ``clock`` is given),
averaged over the calls of one round, for every round; the result is the **median** over rounds, which a
stray slow round (another program, a page fault, the garbage collector) does not move. Functions that
are compared run in **interleaved** rounds (one round of each, in a rotating order, then the next round),
so a machine that slows down part way through slows every function alike, and a ratio is taken **per
round** and then the median of those ratios is reported.

Every result is plain data (dicts, lists, floats), so it prints, tabulates and plots easily.
:func:`check_vectorized` judges "no Python loop over the data" from CPU seconds alone (not wall-clock
time, which a busy machine inflates) against a vectorized baseline on inputs long along one axis at a time and a
balanced one (:func:`cost_cases`), and that the long input does not change what the function computes (its own
results on short pieces of that input); a static reading of the loops is a hint in a failure's message, and where
the cost passes but that reading sees a loop over the data, the cell goes to review (never a 0, never the points).
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["calls_per_round", "compare", "median_ratio", "best_of", "bandwidth_floor", "sweep", "format_table", "plot_loglog", "timed_call", "is_vectorized",
           "check_vectorized", "cost_cases", "baseline_seconds"]

Clock = Callable[[], float]


def calls_per_round(function: Callable[[], Any], min_time: float = 0.005, clock: Clock = time.perf_counter,
                    max_calls: int = 1 << 20) -> int:
    """How many back-to-back calls of ``function()`` one round needs to last at least ``min_time`` seconds.

    Starts at 1 and doubles (each try runs the calls and reads ``clock``), up to ``max_calls``. A round
    of several calls averages out the clock's resolution for fast functions; a slow function gets 1.
    """
    if min_time < 0:
        raise ValueError(f"min_time must be >= 0 seconds, got {min_time}")
    number = 1
    while True:
        start = clock()
        for _ in range(number):
            function()
        if clock() - start >= min_time or number >= max_calls:
            return number
        number *= 2


def median_ratio(numerators: Sequence[float], denominators: Sequence[float], scale: float = 1.0) -> float:
    """``median(n_i / d_i) * scale`` over paired rounds (not the ratio of the medians)."""
    if len(numerators) != len(denominators) or not numerators:
        raise ValueError(f"need paired rounds, got {len(numerators)} and {len(denominators)}")
    return statistics.median(n / d if d > 0 else float("inf") for n, d in zip(numerators, denominators)) * scale


def speed(ratio: float, anchor: str) -> str:
    """A time ratio (a time over ``anchor``'s) as the course says it, one way throughout (issue 53): ``"2.50 times
    faster than {anchor}"`` for 0.4, ``"1.10 times slower than {anchor}"`` for 1.1, ``"as fast as {anchor}"``
    within 2 %; the ratio itself follows in brackets, as the tables print it."""
    if not ratio > 0 or ratio == float("inf"):
        raise ValueError(f"ratio must be a positive finite time ratio, got {ratio!r}")
    if abs(ratio - 1) <= 0.02:
        return f"as fast as {anchor} (time ratio {ratio:.2f})"
    factor, word = (1 / ratio, "faster") if ratio < 1 else (ratio, "slower")
    return f"{factor:.2f} times {word} than {anchor} (time ratio {ratio:.2f})"


def torch_threads() -> tuple[Callable[[], int], Callable[[int], None]]:
    """``(get, set)`` of torch's intra-op thread count."""
    import torch

    return torch.get_num_threads, torch.set_num_threads


def compare(functions: Mapping[str, Callable[[], Any]], *, rounds: int = 5,
            number: int | Mapping[str, int] | None = None, min_time: float = 0.005, baseline: str | None = None,
            clock: Clock = time.perf_counter, threads: Mapping[str, int | None] | None = None,
            thread_control: tuple[Callable[[], int], Callable[[int], None]] | None = None,
            sync: Callable[[], None] | None = None) -> dict:
    """Time zero-argument callables side by side, in interleaved rounds.

    Each round runs every function ``number[name]`` times back to back (calibrated with
    :func:`calls_per_round` when ``number`` is None; the calibration also warms the function up) and
    records the seconds per call. Round ``r`` starts with function ``r mod n`` and goes on in order,
    so no function always runs first. ``threads`` maps a name to torch's thread count while it runs
    (``thread_control``: another ``(get, set)`` pair), restored at the end; ``sync`` (e.g.
    ``torch.cuda.synchronize``) runs before the clock starts and before it stops.

    Returns plain data::

        {"names": [...], "rounds": R, "number": {name: calls per round},
         "times": {name: [seconds per call, one per round]}, "median": {name: median seconds per call},
         "baseline": name or None, "ratio": {name: median over rounds of time / baseline's time}}

    ``ratio`` is empty without a ``baseline``.
    """
    names = list(functions)
    if not names:
        raise ValueError("functions must hold at least one function to time")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    if baseline is not None and baseline not in functions:
        raise ValueError(f"baseline must be one of the names {names}, got {baseline!r}")
    wanted = {name: count for name, count in (threads or {}).items() if count is not None}
    if set(wanted) - set(names):
        raise ValueError(f"threads names unknown functions {sorted(set(wanted) - set(names))}; the functions "
                         f"are {names}")
    get_threads, set_threads = (thread_control or torch_threads()) if wanted else (None, None)
    original = get_threads() if wanted else None
    sync = sync or (lambda: None)

    def use(name: str) -> None:
        if name in wanted and get_threads() != wanted[name]:
            set_threads(wanted[name])

    def seconds_per_call(name: str, calls: int) -> float:
        function = functions[name]
        sync()
        start = clock()
        for _ in range(calls):
            function()
        sync()
        return (clock() - start) / calls

    times: dict[str, list[float]] = {name: [] for name in names}
    try:
        if number is None:
            calls = {}
            for name in names:
                use(name)
                calls[name] = calls_per_round(lambda f=functions[name]: (f(), sync()), min_time, clock)
        elif isinstance(number, int):
            calls = dict.fromkeys(names, number)
        else:
            calls = {name: int(number[name]) for name in names}
        if min(calls.values()) < 1:
            raise ValueError(f"number must be >= 1 call per round, got {calls}")
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                use(name)
                times[name].append(seconds_per_call(name, calls[name]))
    finally:
        if wanted and get_threads() != original:
            set_threads(original)
    ratio = {name: median_ratio(times[name], times[baseline]) for name in names} if baseline is not None else {}
    return {"names": names, "rounds": rounds, "number": calls, "times": times,
            "median": {name: statistics.median(times[name]) for name in names},
            "baseline": baseline, "ratio": ratio}


def best_of(function: Callable[[], Any], repeats: int, clock: Clock = time.perf_counter,
            sync: Callable[[], None] | None = None) -> float:
    """The shortest of ``repeats`` timed calls of ``function`` (after one untimed call): a floor, such as
    the fastest copy of a large array, which load from other programs can only slow down."""
    sync = sync or (lambda: None)
    function()
    best = float("inf")
    for _ in range(repeats):
        sync()
        start = clock()
        function()
        sync()
        best = min(best, clock() - start)
    return best


def bandwidth_floor(mib: int = 256, repeats: int = 7) -> dict:
    """The CPU's memory-bandwidth floor: the best ``np.copyto`` of a ``mib`` MiB array of float64, as
    ``{"method", "repeats", "array_bytes", "bytes_moved", "best_s", "gbytes_per_s"}`` (bytes read + written).

    No code that reads an input and writes an output can move its bytes faster than this copy does, so
    ``seconds / (bytes / (gbytes_per_s * 1e9))`` says how many times that floor a function takes. Make the
    array larger than the CPU's caches (the default 256 MiB is), or the floor is the cache's speed.
    """
    import numpy as np

    if mib < 1 or repeats < 1:
        raise ValueError(f"mib and repeats must be >= 1, got mib={mib!r}, repeats={repeats!r}")
    src = np.ones(mib * 2**20 // 8)
    dst = np.empty_like(src)
    best = best_of(lambda: np.copyto(dst, src), repeats)
    moved = 2 * src.nbytes
    return {"method": f"np.copyto of {mib} MiB", "repeats": repeats, "array_bytes": src.nbytes,
            "bytes_moved": moved, "best_s": best, "gbytes_per_s": moved / best / 1e9}


def sweep(functions: Mapping[str, Callable[..., Any]], make_args: Callable[[Any], Sequence], sizes: Iterable,
          *, limits: Mapping[str, Any] | None = None, rounds: int = 5, min_time: float = 0.005,
          baseline: str | None = None, clock: Clock = time.perf_counter) -> list[dict]:
    """Time ``function(*make_args(size))`` for every function and size, interleaved at each size.

    ``limits`` maps a name to the largest size it is timed at (e.g. slow Python loops only on small
    inputs). Returns one row per (size, function) that ran::

        {"size": size, "name": name, "seconds": median seconds per call, "times": [per round],
         "ratio": median ratio to ``baseline`` at that size (only with a baseline that ran)}
    """
    limits = dict(limits or {})
    unknown = set(limits) - set(functions)
    if unknown:
        raise ValueError(f"limits names unknown functions {sorted(unknown)}; the functions are {list(functions)}")
    rows = []
    for size in sizes:
        args = tuple(make_args(size))
        chosen = {name: (lambda f=f: f(*args)) for name, f in functions.items()
                  if name not in limits or size <= limits[name]}
        if not chosen:
            continue
        base = baseline if baseline in chosen else None
        result = compare(chosen, rounds=rounds, min_time=min_time, baseline=base, clock=clock)
        for name in result["names"]:
            row = {"size": size, "name": name, "seconds": result["median"][name], "times": result["times"][name]}
            if base is not None:
                row["ratio"] = result["ratio"][name]
            rows.append(row)
    return rows


def _format_seconds(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_table(rows: Sequence[Mapping], size_label: str = "size") -> str:
    """A text table of :func:`sweep` rows: one line per size, one column per function (median time).

    A function that was not timed at a size (above its limit) shows ``-``.
    """
    names = list(dict.fromkeys(row["name"] for row in rows))
    sizes = list(dict.fromkeys(row["size"] for row in rows))
    cell = {(row["size"], row["name"]): _format_seconds(row["seconds"]) for row in rows}
    table = [[size_label] + names] + [[str(size)] + [cell.get((size, name), "-") for name in names] for size in sizes]
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["  ".join(text.rjust(width) for text, width in zip(line, widths)) for line in table]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def plot_loglog(rows: Sequence[Mapping], ax=None, xlabel: str = "input size", x: Callable[[Any], float] | None = None,
                title: str | None = None):
    """Plot the median time per call against size on log-log axes, one line per function.

    ``x`` turns a size into the number on the horizontal axis (e.g. the number of input elements);
    by default the size itself. On log-log axes a cost that grows like ``size**p`` is a straight line
    of slope ``p``, and a constant factor between two functions is a constant vertical gap.
    Returns the matplotlib ``Axes``.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.0))
    to_x = x or (lambda size: size)
    for name in dict.fromkeys(row["name"] for row in rows):
        mine = [row for row in rows if row["name"] == name]
        ax.plot([to_x(row["size"]) for row in mine], [row["seconds"] for row in mine], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("seconds per call (median)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    return ax


def timed_call(function: Callable, *args, **kwargs) -> tuple[Any, float]:
    """``(function(*args, **kwargs), CPU seconds of that call)``: user + system time of every thread, as the
    operating system accounts it, so a busy machine barely moves it (unlike wall-clock time).

    Under the trusted grader a student's function runs in a separate sandboxed process, and that
    process's CPU time is read by the grader from outside it: student code cannot change the figure."""
    from course.checks import hooks

    router = hooks.current().router
    if router is not None and router.wants((function,), {}):
        return router.timed_call(function, args, kwargs)
    start = time.process_time()
    result = function(*args, **kwargs)
    return result, time.process_time() - start


#: The rule of :func:`check_vectorized`: a call may use ``VECTORIZED_FACTOR`` times the CPU seconds of the
#: vectorized baseline (PyTorch, one thread) on the same input, plus ``VECTORIZED_ALLOWANCE`` seconds (a call's fixed
#: costs: the grader's copies of the arrays to and from the sandbox). Measured on every lesson 3 corpus case on the
#: inputs of :func:`cost_cases` (``python -m benchmarks.vectorized_cost --hogs 2``: a 2-core machine loaded with two
#: CPU hogs and other work): honest code takes at most 13.2 times the baseline (``correct_sliding_window``'s forward, a
#: mean over ``sliding_window_view``), a Python loop over a long axis at least 367 times (a loop over the output
#: pixels on the columns input), 370 to 2 900 times for the others; in the limit's terms honest code uses at most 0.17
#: of it (6 times under), loops at least 4.2 times it. Under the grader (lesson 3's corpus, loaded) honest code
#: reaches 26 times the baseline on the thinnest inputs (the call's fixed costs: the arrays copied to and from the
#: sandbox), yet at most 0.20 of the limit (5 times under) with its 0.02 s, and the loops used 4.0 (a loop over the output
#: pixels) to 37 times the limit. The two sides are 20 to 30 times apart, not the 100 times that 10 times on both
#: sides would need: the limit sits in the middle. No measure of CPU seconds gives 10 times on both sides (issue 50,
#: item 1; ``python -m benchmarks.vectorized_cost --hogs 2 [--shapes thin]`` prints each, on the corpus, the honest
#: generator's forms and a loop written to be cheap): a loop over the output elements turns once per element on every
#: input, long or balanced, as vectorized code works once per element, so neither its cost on a long input over its
#: cost on the balanced one (honest code up to 9, loops over the output pixels 1.8 to 2.7) nor the spread of its cost
#: per element across the inputs (honest up to 14, a loop over every element on lists 2.7) tells it; bounds on the
#: ratio to PyTorch and on those at once keep at best 5.9 times on each side (7.0 on thin inputs: nothing across the
#: long axis, a 1-D kernel along it); and a plain-Python loop over the output elements on lists
#: (``probe_python_lists``) costs 120 times PyTorch, 10 times the dearest honest form (12 times): no bound on CPU time
#: keeps more than 3.2 times on each side of that. That loop is 1.5 times over the limit; where a loop passes the cost,
#: the loop reading sends the cell to review (:func:`review_data_loops`).
VECTORIZED_FACTOR = 60.0
VECTORIZED_ALLOWANCE = 0.02

#: :func:`cost_cases`: the long axis of each timed input has this many positions or more (a Python loop over it
#: turns at least this often).
LONG_AXIS = 100_000

#: :func:`check_vectorized` runs the function again on pieces of each long input: along the long axis, pieces
#: about this many rows or columns long; along the batch and channel axes, blocks of at most ``PIECE_BLOCK``.
PIECE_LENGTH = 40
PIECE_BLOCK = 3


def _describe(args, kwargs) -> str:
    shown = [f"x{list(a.shape)}" if hasattr(a, "shape") else repr(a) for a in args]
    return ", ".join(shown + [f"{k}={v!r}" for k, v in kwargs.items()])


def is_vectorized(seconds: float, baseline_seconds: float) -> bool:
    """Whether a call that spent ``seconds`` of CPU time is within what a vectorized version needs, given
    the baseline's ``baseline_seconds`` on the same input (the rule of :func:`check_vectorized`)."""
    return seconds <= VECTORIZED_ALLOWANCE + VECTORIZED_FACTOR * baseline_seconds


AXES = ("batch", "channels", "rows", "columns", "balanced")


def cost_cases(seed: int) -> list[dict]:
    """The inputs :func:`check_vectorized` times, drawn from :func:`course.checks.input_generator` ``(seed)`` (anew at
    each grading run): one input long along each axis in turn, ``[N, 1, h, w]``, ``[1, N, h, w]``, ``[1, 1, N, w]``,
    ``[1, 1, h, N]`` with ``N`` >= :data:`LONG_AXIS` and ``h, w`` one window across (no padding on those axes: a loop over the long
    axis gets the fewest elements per turn), and a ``balanced`` one ``[2, 2, n, n]`` of
    as many elements as the rows input. Each a small kernel (2 or 3), stride (1 or 2) and padding (up to half the
    kernel) per axis and a ``count_include_pad``. Returns ``[{"axis", "shape", "kernel_size", "stride", "padding",
    "count_include_pad"}]``, one per name of :data:`AXES`."""
    import math

    from course.checks import input_generator

    rng = input_generator(seed)
    long = LONG_AXIS + int(rng.integers(0, 1000))
    cases = []
    for axis in AXES:
        kernel = tuple(int(k) for k in rng.integers(2, 4, 2))
        stride = tuple(int(s) for s in rng.integers(1, 3, 2))
        padding = tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel)
        h, w = kernel  # one window across each short axis (no padding there): the fewest elements per turn of a loop
        shape = {"batch": (long, 1, h, w), "channels": (1, long, h, w), "rows": (1, 1, long, w),
                 "columns": (1, 1, h, long)}.get(axis)
        if axis != "balanced":  # no padding across the short spatial axes
            padding = tuple(p if shape[2 + i] == long else 0 for i, p in enumerate(padding))
        if shape is None:  # the rows input's elements on a square map
            n = math.isqrt(long * cases[2]["shape"][3] // 4)
            shape = (2, 2, n, n)
        cases.append({"axis": axis, "shape": shape, "kernel_size": kernel, "stride": stride, "padding": padding,
                      "count_include_pad": bool(rng.integers(0, 2))})
    return cases


def baseline_seconds(baseline: Callable, *args, **kwargs) -> tuple[Any, float]:
    """``(baseline(*args, **kwargs), its CPU seconds)``: the trusted baseline runs in this process, on this thread
    (``time.thread_time``: other threads of a grader, grading other submissions, do not count) and with PyTorch on
    one thread (its thread pool's CPU would not count); the best of three calls (first-call costs left out)."""
    import sys

    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    if threads is not None and threads != 1:
        torch.set_num_threads(1)
    try:
        best, result = float("inf"), None
        for _ in range(3):
            start = time.thread_time()
            result = baseline(*args, **kwargs)
            best = min(best, time.thread_time() - start)
    finally:
        if threads is not None and threads != 1:
            torch.set_num_threads(threads)
    return result, best


def _loop_hint(function: Callable, name: str) -> str:
    """What the static reading of ``function``'s loops (:func:`course.checks.check_kernel_loops`) says about them:
    a hint for a message, never a verdict (an empty string where it finds nothing to say)."""
    from course.checks import check_kernel_loops

    try:
        check_kernel_loops(function, name)
    except AssertionError as reading:
        return f" A reading of your code's loops may help: {str(reading)[:600]}"
    except Exception as error:  # the reader's own trouble never changes the verdict; the grader's failure is raised
        if type(error).__name__ == "GraderFault":
            raise
    return ""


def review_data_loops(function: Callable, name: str) -> None:
    """After the cost passed: where the static reading of the loops (:class:`~course.checks.analysis.loops._LoopNests`,
    as :func:`course.checks.check_kernel_loops` reads them) sees a Python loop whose length grows with the data,
    :class:`~course.checks.NeedsReview` (the third verdict: a loop over the shorter side of the maps costs little on
    inputs long along one axis, and still turns as often as that side is long). What the reader cannot read (a
    ``while``, recursion, a helper passed as a value) is not a loop over the data: the cost has judged it. The
    reader's own trouble never changes the verdict; the grader's failure is raised."""
    from course.checks import NeedsReview
    from course.checks.analysis.lists import LOOP_INSTEAD
    from course.checks.analysis.loop_rules import loop_nests
    from course.checks.analysis.text import in_cells

    try:
        nests = loop_nests(function, name, ("output_size",))
        over_data = [problem for problem in nests.problems if problem not in nests.unread()]
        found = in_cells("; ".join(over_data[:3]), nests.text, nests.cells) if over_data else ""
    except Exception as error:
        if type(error).__name__ == "GraderFault":
            raise
        return
    if found:
        raise NeedsReview(f"{name} is within the CPU limit on every timed input, but it loops in Python over the data: "
                          f"{found} (a loop over the shorter side of the maps costs little on these inputs and still "
                          f"turns as often as that side is long). Your instructor will read this code; the cell counts 0 "
                          f"until then. To be scored at once: {LOOP_INSTEAD}",
                          f"{name}: a loop over the data within the CPU limit: {found[:600]}")


def _pair(value) -> tuple[int, int]:
    import numpy as np

    return (int(value), int(value)) if np.ndim(value) == 0 else (int(value[0]), int(value[1]))


def _crops(length: int, step: int, rng, spatial: bool) -> list[tuple[int, int]]:
    """``(start, size)`` crops of one axis of ``length`` input positions, one per piece (three).

    Batch and channel axes (``spatial`` False): blocks of at most :data:`PIECE_BLOCK` at random starts. A
    spatial axis no longer than 2 × :data:`PIECE_LENGTH`: the whole axis. A longer one: its start, its end
    and a random place between, each crop starting on a multiple of the stride ``step`` and as long as the
    axis less a multiple of it, so the crop's windows are the whole input's windows, shifted by whole windows.
    """
    if not spatial:
        size = min(length, PIECE_BLOCK)
        return [(int(rng.integers(0, length - size + 1)), size) for _ in range(3)]
    if length <= 2 * PIECE_LENGTH:
        return [(0, length)] * 3
    size = length - (length - PIECE_LENGTH) // step * step
    last = length - size  # a multiple of step
    return [(0, size), (step * int(rng.integers(0, last // step + 1)), size), (last, size)]


def _kept(start: int, size: int, length: int, count: int, k: int, s: int, p: int, backward: bool):
    """``(piece indices, whole-input indices)`` along one spatial axis where a piece's result must equal the
    whole input's: the indices of the piece's ``count`` results (outputs; for the ``backward``, input
    positions) whose windows (``k`` positions from ``j * s - p``) stay at least ``k + p`` positions inside each
    cut of the crop (an edge of the whole input is no cut). The margin keeps a window that sits a little off
    (an off-by-one, a padding ignored: mistakes the value tests judge) inside the piece too."""
    import numpy as np

    index = np.arange(count)
    margin = k + p
    if backward:  # position r: every window that holds it starts after r - k and at most at r
        low, high = index - k + 1, index + k
    else:
        low, high = index * s - p, index * s - p + k
    keep = ((start == 0) | (low >= margin)) & ((start + size == length) | (high <= size - margin))
    return index[keep], index[keep] + (start if backward else start // s)


def _piece_calls(bound, result_shape, rng):
    """The three pieces of one bound call of average pooling (forward: ``x``; backward: ``grad_out`` and
    ``input_shape``; both: ``kernel_size``, ``stride``, ``padding``) whose result has ``result_shape``: for each,
    ``(bound call on the piece, the piece's result shape, its crop [(start, size)] per input axis, piece index,
    whole-result index)``; the piece's result at the piece index must equal the whole result at the other."""
    import numpy as np

    arguments = dict(bound.arguments)
    backward = "input_shape" in arguments
    needed = {"grad_out", "input_shape", "kernel_size"} if backward else {"x", "kernel_size"}
    if not needed <= set(arguments):
        raise ValueError(f"check_vectorized: baseline must name the arguments of a pooling call, x and kernel_size "
                         f"(or grad_out, input_shape and kernel_size), got {sorted(arguments)}")
    kernel = _pair(arguments["kernel_size"])
    stride = tuple(s or k for s, k in zip(_pair(arguments.get("stride", 0)), kernel))
    padding = _pair(arguments.get("padding", 0))
    whole = tuple(int(n) for n in (arguments["input_shape"] if backward else arguments["x"].shape))
    lengths = result_shape if not backward else arguments["grad_out"].shape  # the outputs per axis
    crops = [_crops(n, stride[axis - 2] if axis >= 2 else 1, rng, axis >= 2) for axis, n in enumerate(whole)]
    pieces = []
    for number in range(3):
        cut = [axis_crops[number] for axis_crops in crops]
        inputs = tuple(slice(a, a + m) for a, m in cut)
        # the piece's outputs along a spatial axis: the whole input's, less one per stride cut off
        outs = [m if axis < 2 else lengths[axis] - (whole[axis] - m) // stride[axis - 2]
                for axis, (a, m) in enumerate(cut)]
        kept = [(np.arange(m), np.arange(a, a + m)) if axis < 2 else
                _kept(a, m, whole[axis], m if backward else outs[axis], kernel[axis - 2], stride[axis - 2],
                      padding[axis - 2], backward) for axis, (a, m) in enumerate(cut)]
        if not all(len(mine) for mine, _ in kept):
            raise ValueError(f"check_vectorized: a piece {cut} of an input {list(whole)} keeps no result to compare")
        given = dict(arguments)
        if backward:
            first = [a if axis < 2 else a // stride[axis - 2] for axis, (a, m) in enumerate(cut)]
            given["grad_out"] = np.ascontiguousarray(
                arguments["grad_out"][tuple(slice(f, f + n) for f, n in zip(first, outs))])
            given["input_shape"] = type(arguments["input_shape"])(m for _, m in cut)
        else:
            given["x"] = np.ascontiguousarray(arguments["x"][inputs])
        shape = tuple(m for _, m in cut) if backward else tuple(outs)
        mine = np.ix_(*(m for m, _ in kept))
        theirs = np.ix_(*(w for _, w in kept))
        pieces.append((bound.signature.bind(**given), shape, cut, mine, theirs))
    return pieces


def _judgeable(call: Callable, name: str, described: str, *args, **kwargs) -> Any:
    """``call(*args, **kwargs)``; where the student's function raises (one of the checks' ``STUDENT_ERRORS``, or
    ``MemoryError``), an AssertionError that says the rule could not be judged and why, so the cell that judges
    vectorization does not blame a loop for another mistake (a grader's own fault is never caught here)."""
    from course.checks import STUDENT_ERRORS

    try:
        return call(*args, **kwargs)
    except (*STUDENT_ERRORS, MemoryError) as error:
        raise AssertionError(
            f"could not judge whether {name} is vectorized: {described} raised {type(error).__name__}: "
            f"{str(error)[:300]} (a case this cell needs); the cells that test {name}'s values and errors say "
            f"what is wrong") from None


def check_vectorized(function: Callable, baseline: Callable, calls, name: str, hint: str = "", seed: int = 0
                     ) -> list[dict]:
    """Each ``(args, kwargs)`` of ``calls``, a call of average pooling, forward ``(x, kernel_size, stride,
    padding, count_include_pad)`` or backward ``(grad_out, input_shape, ...)`` as ``baseline``'s signature
    names them: ``function`` must spend at most ``VECTORIZED_FACTOR`` × the baseline's CPU seconds +
    ``VECTORIZED_ALLOWANCE`` on it (:func:`is_vectorized`). The cost is the verdict: on inputs long along one axis
    (:func:`cost_cases`) a Python loop over that axis costs hundreds of times whole-array NumPy, a loop over the
    kernel offsets nothing extra. Under the trusted grader the function's CPU seconds are the kernel's count for
    every process of the sandboxed child, read by the grader (the child's own report is never asked); the
    baseline's are this thread's (:func:`baseline_seconds`). On failure the message carries what the static
    reading of the loops says (:func:`_loop_hint`), as a hint only; where every call passes but that reading sees
    a loop over the data, the third verdict (:func:`review_data_loops`: review, 0 until read). Returns one row per call: ``{"shape",
    "seconds", "baseline_seconds", "limit", "per_element", "ratio"}`` (``per_element``: seconds per result element).

    The rule is the time, not the values (the value tests judge those, so one wrong value costs their points
    only): the result must have the baseline's type, shape and dtype, must not be one value everywhere when
    the baseline's is not, and must equal ``function``'s **own** results on three short pieces of the same
    input (at the start, the end and a random place of the long axis, on blocks of the batch and channel
    axes; the place drawn from :func:`course.checks.input_generator` ``(seed)``, anew at each grading run).
    Average pooling is local, so a function that works computes on a long input what it computes on its
    pieces, and one that is fast only because a long input makes it compute something else fails.
    """
    import inspect

    import numpy as np

    from course.checks import check_array, check_form, input_generator

    rng = input_generator(seed)
    signature = inspect.signature(baseline)
    rows = []
    for args, kwargs in calls:
        expected, base = baseline_seconds(baseline, *args, **kwargs)
        call = f"{name}({_describe(args, kwargs)})"
        pieces = []  # the function on the pieces first: its first-call costs (lazy imports, caches) are not timed
        for piece, shape, cut, mine, theirs in _piece_calls(signature.bind(*args, **kwargs), expected.shape, rng):
            where = ", ".join(f"{a}:{a + m}" for a, m in cut)
            own = _judgeable(function, name, f"{name} on the piece [{where}] of that input", *piece.args, **piece.kwargs)
            check_form(own, np.empty(shape, expected.dtype), f"{name} on the piece [{where}] of that input")
            pieces.append((where, own[mine], theirs))
        result, seconds = _judgeable(timed_call, name, call, function, *args, **kwargs)
        check_form(result, expected, call)
        if result.size and np.ptp(expected) > 0 and bool((result == result.flat[0]).all()):
            raise AssertionError(f"{call} gives one value, {float(result.flat[0])!r}, everywhere on a random input: the "
                                 f"result must be computed from the input")
        for where, own, theirs in pieces:
            check_array(result[theirs], own, f"{call} on the piece [{where}] of its input, against your own "
                        f"{name} on that piece alone (the long input must not change what it computes)",
                        rtol=1e-10, atol=1e-10, equal_nan=True)
        limit = VECTORIZED_ALLOWANCE + VECTORIZED_FACTOR * base
        if not is_vectorized(seconds, base):
            raise AssertionError(
                f"{call} used {seconds:.3f} CPU seconds ({1e9 * seconds / expected.size:.0f} ns per result element) "
                f"where PyTorch needs {base:.4f} s ({1e9 * base / expected.size:.1f} ns per element; limit {limit:.3f} s "
                f"= {VECTORIZED_FACTOR:g} times that + {VECTORIZED_ALLOWANCE:g} s): on an input this long along one "
                f"axis that is what a Python loop over that axis costs (over images, channels, rows, columns or "
                f"pixels, whether written as a for, a comprehension, map or reduce with a lambda, or in a string). "
                + (hint or "Replace that loop by slices that cover every window at once; a loop over the kernel "
                   "offsets is fine, its length does not grow with the input.") + _loop_hint(function, name))
        rows.append({"shape": list(np.shape(args[0])), "seconds": seconds, "baseline_seconds": base, "limit": limit,
                     "per_element": seconds / max(1, expected.size), "ratio": seconds / base if base > 0 else float("inf")})
    review_data_loops(function, name)
    return rows
