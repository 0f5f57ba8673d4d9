"""Issue 41 item 3: the generator of bypasses (``benchmarks.attacks``), a fixed seeded sample of it.

Per lesson and forbidden target, programs composed from the primitives (up to three in a row) that a run
outside the grader confirms reach the target must each be refused by the lesson's rule; every honest
rewrite of the lesson's solution (run first: it computes what the solution does) must pass every rule of
the lesson. ``make attacks`` runs the whole set."""

from __future__ import annotations

import pytest

from benchmarks import attacks

SAMPLE, SEED = 12, 20260531


def test_the_generator_has_thirty_primitives_of_each_kind_it_needs():
    kinds = [kind for kind, _ in attacks.PRIMITIVES.values()]
    assert len(kinds) >= 30 and {"module", "attribute", "value"} <= set(kinds)
    assert max(len(s) for s in attacks.sequences(3)) == 3


@pytest.mark.parametrize("lesson", list(attacks.TARGETS))
def test_every_confirmed_bypass_is_refused(lesson):
    found = attacks.run_attacks(lesson, depth=3, limit=SAMPLE, seed=SEED)
    reached = [label for label, row in found.items() if not row.get("missing")]
    assert reached
    for label in reached:
        row = found[label]
        assert row["confirmed"] >= SAMPLE // 2, (label, row)  # the primitives really reach the target
        assert row["refused"] == row["confirmed"], (label, [(s, p) for s, p in row["passed"]][:1])


@pytest.mark.parametrize("lesson", list(attacks.TARGETS))
def test_every_honest_rewrite_runs_and_passes(lesson):
    row = attacks.run_honest(lesson)
    assert row["generated"] == row["ran"] == row["passed"] == len(attacks.HONEST_WAYS), row["failed"]


def test_a_confirmation_tells_a_program_that_misses_its_target():
    program = attacks._program("lesson4_torch", attacks.State("torch.nn.functional", "avg_pool2d", "F",
                                                             expr="F.max_pool2d"))
    assert not attacks.confirmed("lesson4_torch", "torch.nn.functional", "avg_pool2d", program, "F.max_pool2d")
    assert attacks.confirmed("lesson4_torch", "torch.nn.functional", "avg_pool2d", program, "F.avg_pool2d")
    assert attacks.refused("lesson4_torch", program)  # (a library pooling all the same)
