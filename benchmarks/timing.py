"""Side-by-side timing on a noisy machine: interleaved rounds and the median of per-round ratios.

Every candidate runs once per round, in the same order each round (A, B, C, A, B, C ...), so a burst of
load from another process hits all of them alike; a ratio is taken inside each round and the median of
those ratios is reported. Torch's thread count is set per candidate and restored afterwards.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Candidate:
    """One thing to time: ``fn()`` is one call; ``threads`` is torch's thread count while it runs (None: leave)."""

    name: str
    fn: Callable[[], object]
    threads: int | None = None


@dataclass
class Timings:
    """Seconds per call of every candidate, one entry per round (``per_round[name][i]`` is round ``i``)."""

    per_round: dict[str, list[float]] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def median_time(self, name: str) -> float:
        return statistics.median(self.per_round[name])

    def ratio(self, numerator: str, denominator: str, scale: float = 1.0) -> float:
        """Median over rounds of ``time(numerator) / time(denominator) * scale`` (ratios taken per round)."""
        return median_of_ratios(self.per_round[numerator], self.per_round[denominator], scale)


def median_of_ratios(numerators: list[float], denominators: list[float], scale: float = 1.0) -> float:
    """``median(n_i / d_i) * scale`` over paired rounds (not the ratio of the medians)."""
    if len(numerators) != len(denominators) or not numerators:
        raise ValueError(f"need paired rounds, got {len(numerators)} and {len(denominators)}")
    return statistics.median(n / d for n, d in zip(numerators, denominators)) * scale


def torch_threads() -> tuple[Callable[[], int], Callable[[int], None]]:
    """``(get, set)`` of torch's intra-op thread count."""
    import torch

    return torch.get_num_threads, torch.set_num_threads


def interleave(candidates: list[Candidate], rounds: int, *, target: float = 0.03, warmup: int = 1,
               timer: Callable[[], float] = time.perf_counter, threads=None,
               sync: Callable[[], None] | None = None, max_calls: int = 1000) -> Timings:
    """Time ``candidates`` in ``rounds`` interleaved rounds; returns seconds per call per round.

    Each candidate is first warmed up (``warmup`` calls) and calibrated: one timed call decides how many
    calls (``ceil(target / t)``, at most ``max_calls``) make up one measurement, the same in every round.
    ``sync`` (e.g. ``torch.cuda.synchronize``) runs before starting and before stopping the clock.
    ``threads`` is a ``(get, set)`` pair (default: torch's); the original count is restored at the end.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    names = [c.name for c in candidates]
    if len(set(names)) != len(names):
        raise ValueError(f"candidate names must be unique, got {names}")
    need_threads = any(c.threads is not None for c in candidates)
    get_threads, set_threads = (threads or torch_threads()) if need_threads else (None, None)
    original = get_threads() if need_threads else None
    sync = sync or (lambda: None)

    def use(candidate: Candidate) -> None:
        if candidate.threads is not None and get_threads() != candidate.threads:
            set_threads(candidate.threads)

    def measure(candidate: Candidate, calls: int) -> float:
        sync()
        start = timer()
        for _ in range(calls):
            candidate.fn()
        sync()
        return (timer() - start) / calls

    result = Timings(order=names)
    try:
        for candidate in candidates:
            use(candidate)
            for _ in range(warmup):
                candidate.fn()
            once = measure(candidate, 1)
            result.calls[candidate.name] = max(1, min(max_calls, math.ceil(target / once) if once > 0 else max_calls))
            result.per_round[candidate.name] = []
        for _ in range(rounds):
            for candidate in candidates:
                use(candidate)
                result.per_round[candidate.name].append(measure(candidate, result.calls[candidate.name]))
    finally:
        if need_threads and get_threads() != original:
            set_threads(original)
    return result


def best_of(fn: Callable[[], object], repeats: int, timer: Callable[[], float] = time.perf_counter,
            sync: Callable[[], None] | None = None) -> float:
    """The shortest of ``repeats`` timed calls of ``fn`` (after one untimed call)."""
    sync = sync or (lambda: None)
    fn()
    best = math.inf
    for _ in range(repeats):
        sync()
        start = timer()
        fn()
        sync()
        best = min(best, timer() - start)
    return best
