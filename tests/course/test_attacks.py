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
    assert row["review"] == row["forbidden"] == 0


def test_a_confirmation_tells_a_program_that_misses_its_target():
    program = attacks._program("lesson4_torch", attacks.State("torch.nn.functional", "avg_pool2d", "F",
                                                             expr="F.max_pool2d"))
    assert not attacks.confirmed("lesson4_torch", "torch.nn.functional", "avg_pool2d", program, "F.max_pool2d")
    assert attacks.confirmed("lesson4_torch", "torch.nn.functional", "avg_pool2d", program, "F.avg_pool2d")
    assert attacks.refused("lesson4_torch", program)  # (a library pooling all the same)


@pytest.mark.parametrize("lesson", list(attacks.WRITTEN_ATTACKS))
def test_every_written_attack_pools_and_is_never_allowed(lesson):
    """Issue 50's classes (string evaluators in allowed modules, rebound parameters, iterator tools with
    lambdas, loops in strings, copy nests): each really pools, and is proved forbidden or sent to review."""
    found = attacks.run_written_attacks(lesson)
    assert found
    for label, (pools, kind, message) in found.items():
        assert pools, label
        assert kind in ("forbidden", "review"), (label, kind)
        assert message, label


@pytest.mark.parametrize("lesson", list(attacks.HONEST_FORMS))
def test_every_honest_form_runs_and_is_proved_allowed(lesson):
    """Issue 50's honest forms that lost points (a helper computing the window, a float64 sum, accumulators,
    any loop order, a layer keeping its options in a dict) run as the solution does and are proved allowed."""
    for label, (runs, kind, message) in attacks.run_honest_forms(lesson).items():
        assert runs, label
        assert kind == "allowed", (label, message)


def test_three_verdicts_are_counted_apart():
    """A generated attack is either proved forbidden or sent to review, and both are counted."""
    row = attacks.run_attacks("lesson4_torch", depth=3, limit=SAMPLE, seed=SEED)["unlisted layer"]
    assert row["refused"] == row["forbidden"] + row["review"] == row["confirmed"] > 0
    assert attacks.verdict_of(lambda: None) == ("allowed", "")
