"""Timing for the lessons: several rounds, the median, and functions compared side by side.

What is measured: wall-clock seconds per call (``time.perf_counter`` unless a ``clock`` is given),
averaged over the calls of one round, for every round; the result is the **median** over rounds, which a
stray slow round (another program, a page fault, the garbage collector) does not move. Functions that
are compared run in **interleaved** rounds (one round of each, in a rotating order, then the next round),
so a machine that slows down part way through slows every function alike, and a ratio is taken **per
round** and then the median of those ratios is reported.

Every result is plain data (dicts, lists, floats), so it prints, tabulates and plots easily.
:func:`check_vectorized` judges "no Python loop over the outputs" from CPU seconds (not wall-clock
time, which a busy machine inflates) against a vectorized baseline on inputs large along one axis.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["calls_per_round", "compare", "median_ratio", "best_of", "bandwidth_floor", "sweep", "format_table", "plot_loglog", "timed_call", "is_vectorized",
           "check_vectorized"]

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
    from course import checks

    router = checks.router
    if router is not None and router.wants((function,), {}):
        return router.timed_call(function, args, kwargs)
    start = time.process_time()
    result = function(*args, **kwargs)
    return result, time.process_time() - start


#: A call may use ``VECTORIZED_FACTOR`` times the CPU time of the vectorized baseline, plus
#: ``VECTORIZED_ALLOWANCE`` seconds. A Python loop over the outputs of the lessons' inputs (60 000 rows or
#: columns) costs 3 to 6 times that limit; an honest vectorized version stays 10 to 80 times under it.
VECTORIZED_FACTOR = 10.0
VECTORIZED_ALLOWANCE = 0.08


def _describe(args, kwargs) -> str:
    shown = [f"x{list(a.shape)}" if hasattr(a, "shape") else repr(a) for a in args]
    return ", ".join(shown + [f"{k}={v!r}" for k, v in kwargs.items()])


def is_vectorized(seconds: float, baseline_seconds: float) -> bool:
    """Whether a call that spent ``seconds`` of CPU time is within what a vectorized version needs, given
    the baseline's ``baseline_seconds`` on the same input (the rule of :func:`check_vectorized`)."""
    return seconds <= VECTORIZED_ALLOWANCE + VECTORIZED_FACTOR * baseline_seconds


def check_vectorized(function: Callable, baseline: Callable, calls, name: str, hint: str = "") -> list[float]:
    """Each ``(args, kwargs)`` of ``calls``: ``function`` must give ``baseline``'s result and spend at most
    ``VECTORIZED_FACTOR`` × the baseline's CPU time + ``VECTORIZED_ALLOWANCE`` seconds on it. The inputs are
    large along one axis (rows, columns, or maps), so a Python loop over that axis costs hundreds of
    times more CPU than whole-array NumPy; a loop over the kernel offsets costs nothing extra.
    Returns the CPU seconds of each call."""
    from course.checks import check_array

    spent = []
    for args, kwargs in calls:
        expected = None
        base = float("inf")
        for _ in range(3):  # the best of three: the baseline's own first-call costs are left out
            expected, seconds = timed_call(baseline, *args, **kwargs)
            base = min(base, seconds)
        result, seconds = timed_call(function, *args, **kwargs)
        call = f"{name}({_describe(args, kwargs)})"
        check_array(result, expected, call, rtol=1e-10, atol=1e-10)
        limit = VECTORIZED_ALLOWANCE + VECTORIZED_FACTOR * base
        assert is_vectorized(seconds, base), (
            f"{call} used {seconds:.2f} CPU seconds where a vectorized version needs about {base:.3f} s (limit "
            f"{limit:.2f} s): it loops in Python over the output (pixels, rows, columns, images or channels). "
            + (hint or "Replace that loop by slices that cover every window at once; a loop over the kernel "
               "offsets is fine, its length does not grow with the input."))
        spent.append(seconds)
    return spent
