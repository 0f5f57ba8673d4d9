"""Per-student variants (course/variants.py): reproducible, different per student and per term, every
variant as hard as the lecture's, and whose numbers a notebook or the grader shows."""

import json

import numpy as np
import pytest

import course.checks
from course import term, variants

LESSON = "lesson1_by_hand"
IDS = [f"student{i:04d}" for i in range(1500)]


def windows(matrix):
    m = np.asarray(matrix)
    return [m[2 * i:2 * i + 2, 2 * j:2 * j + 2] for i in range(2) for j in range(2)]


def test_the_same_student_gets_the_same_numbers_and_ids_are_read_loosely():
    for exercise in ("worked_example", "card_shapes", "knowledge_check"):
        first = variants.draw(LESSON, exercise, "alice")
        assert variants.draw(LESSON, exercise, "alice") == first
        assert variants.draw(LESSON, exercise, " Alice ") == first  # spaces and case do not make a new student
        assert variants.draw(LESSON, exercise, "bob") != first


def test_nobody_or_variants_off_gets_the_lecture_numbers():
    for exercise in ("worked_example", "card_shapes", "knowledge_check"):
        fixed = variants.FIXED[(LESSON, exercise)]
        assert variants.draw(LESSON, exercise, None) == fixed
        assert variants.draw(LESSON, exercise, "  ") == fixed
        assert variants.draw(LESSON, exercise, "alice", enabled=False) == fixed
        assert variants.draw(LESSON, exercise, "alice") != fixed


def test_a_new_salt_gives_new_numbers():
    same = sum(variants.draw(LESSON, "worked_example", s) == variants.draw(LESSON, "worked_example", s, salt="other-term")
               for s in IDS[:200])
    assert same == 0


def test_bad_arguments_name_the_rule():
    with pytest.raises(ValueError, match="lesson/exercise"):
        variants.draw(LESSON, "no_such_exercise", "alice")
    with pytest.raises(TypeError, match="student"):
        variants.draw(LESSON, "worked_example", 42)
    with pytest.raises(TypeError, match="between quotes"):
        variants.student_id(1234)


def test_worked_examples_are_all_as_hard_as_the_lecture_and_nearly_all_distinct():
    drawn = [variants.draw(LESSON, "worked_example", s) for s in IDS]
    assert len({json.dumps(d) for d in drawn}) == len(IDS), "every student of a large class has an input of their own"
    for d in drawn + [variants.FIXED[(LESSON, "worked_example")]]:
        assert (d["kernel_size"], d["stride"]) == (2, 2) and np.shape(d["matrix"]) == (4, 4)
        assert all(0 <= v <= 9 for row in d["matrix"] for v in row), "digits, as in the lecture"
        ws = windows(d["matrix"])
        assert all(len(set(w.ravel().tolist())) >= 3 for w in ws), "no window of equal values (a trivial max)"
        fractional = [w.sum() % 4 != 0 for w in ws]
        assert fractional[0] and sum(fractional[1:]) >= 2, "averages to work out, not whole numbers everywhere"
        assert len({int(w.sum()) for w in ws}) == 4, "four different averages"
    # the answer is not the same for everyone: each output position takes many values across the class
    averages = np.array([[w.mean() for w in windows(d["matrix"])] for d in drawn])
    assert all(len(set(averages[:, k])) >= 20 for k in range(4))


def test_card_networks_keep_the_arithmetic_sensible_and_vary():
    import torch
    from torch import nn

    drawn = [variants.draw(LESSON, "card_shapes", s) for s in IDS[:200]]
    shapes = set()
    for d in drawn:
        n1, n2, n3 = d["net1"], d["net2"], d["net3"]
        conv_side = n1["input"][1] - n1["conv_kernel"] + 1
        assert conv_side % n1["pool"] == 0 and conv_side // n1["pool"] >= 5, "the pooling tiles the conv's output"
        assert n1["conv_kernel"] in (3, 5) and n1["pool"] in (2, 3) and n1["channels"] != n1["input"][0]
        assert n2["input"][1] == n2["input"][2] >= 3, "net 2 is a global pool over a square map"
        assert n3["padding"] == n3["kernel_size"] // 2 and n3["stride"] == 2 and n3["input"][1] % 2 == 1
        with torch.no_grad():
            out1 = nn.Sequential(nn.Conv2d(n1["input"][0], n1["channels"], n1["conv_kernel"]), nn.AvgPool2d(n1["pool"]))(
                torch.zeros(1, *n1["input"])).shape[1:]
            out3 = nn.AvgPool2d(n3["kernel_size"], n3["stride"], n3["padding"])(torch.zeros(1, *n3["input"])).shape[1:]
        assert out1[1] not in (n1["input"][1], n1["pool"], n1["conv_kernel"]), "the size does not give itself away"
        assert out3[1] not in (n3["input"][1], n3["kernel_size"])
        shapes.add((tuple(out1), tuple(out3), n2["input"][0]))
    assert len(shapes) >= 160, f"the three answers vary across students ({len(shapes)} of 200 distinct)"


def test_knowledge_check_orders_are_permutations_and_every_letter_is_a_key():
    drawn = [variants.draw(LESSON, "knowledge_check", s) for s in IDS]
    for d in drawn:
        values = d["q3_values"]
        assert len(set(values)) == 4 and sum(values) % 4 == 0 and sum(values) // 4 not in values
        assert len({sum(values), max(values), sum(values) // 4}) == 3, "three different options"
        for q in ("q3", "q6", "q10"):
            assert sorted(d[f"{q}_order"]) == [0, 1, 2]
    for q in ("q3", "q6", "q10"):
        orders = {tuple(d[f"{q}_order"]) for d in drawn}
        assert len(orders) == 6, f"{q}: all six orders occur"
        letters = [d[f"{q}_order"].index(0) for d in drawn]
        assert min(letters.count(k) for k in range(3)) > len(IDS) / 5, f"{q}: the right option's letter is balanced"


def test_whose_numbers_a_notebook_shows(monkeypatch, capsys):
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.setitem(variants._typed, "id", None)
    assert variants.student_id("") is None
    assert "NO ID YET" in capsys.readouterr().out
    assert variants.variant(LESSON, "worked_example") == variants.FIXED[(LESSON, "worked_example")]
    assert variants.student_id(" carol ") == "carol"
    assert "'carol'" in capsys.readouterr().out
    assert variants.variant(LESSON, "worked_example") == variants.draw(LESSON, "worked_example", "carol")
    monkeypatch.setenv("JUPYTERHUB_USER", "dave")  # on the hub the login wins over anything typed
    assert variants.student_id("carol") == "dave"
    assert "not used on the hub" in capsys.readouterr().out
    assert variants.variant(LESSON, "worked_example") == variants.draw(LESSON, "worked_example", "dave")


def test_under_the_grader_only_the_graded_identity_counts(monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_USER", "dave")
    monkeypatch.setitem(variants._typed, "id", "carol")
    with course.checks.grading(run_seed=7, student="erin"):
        assert variants.variant(LESSON, "card_shapes") == variants.draw(LESSON, "card_shapes", "erin")
        with course.checks.grading(student=None):  # a run without an identity (the canary): the lecture's numbers
            assert variants.variant(LESSON, "card_shapes") == variants.FIXED[(LESSON, "card_shapes")]


def test_variants_off_in_the_shipped_term(monkeypatch, capsys):
    monkeypatch.setattr(term, "ENABLED", False)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.setitem(variants._typed, "id", None)
    assert variants.draw(LESSON, "worked_example", "alice") == variants.FIXED[(LESSON, "worked_example")]
    assert variants.student_id("alice") is None
    assert "same numbers" in capsys.readouterr().out


def test_lesson2s_checks_vary_in_order_and_size_and_the_lecture_numbers_are_course_bugs_checks():
    from course import bugs

    lecture = variants.lesson2_checks(variants.FIXED[("lesson2_loops", "predictions")])
    assert list(lecture) == list(bugs.CHECKS) == ["A", "B", "C"]
    for label in "ABC":
        assert np.array_equal(lecture[label][0], bugs.CHECKS[label][0]) and lecture[label][1:] == bugs.CHECKS[label][1:]
    keys = set()
    for student in IDS[:300]:
        numbers = variants.draw("lesson2_loops", "predictions", student)
        assert sorted(numbers["order"]) == ["ones", "ramp", "worked"]
        assert numbers["ones_size"] in (5, 9), "never the 7×7 ones of practice check D (it would show the place)"
        checks = variants.lesson2_checks(numbers)
        found = tuple(bugs.first_failure(bug, checks) for bug in (bugs.divisor_always_full, bugs.stride_zero_ignored,
                                                                  bugs.padding_one_side))
        assert all(found) and bugs.first_failure(bugs.avg_pool2d_reference, checks) is None, "every bug is caught"
        keys.add(found)
    assert len(keys) >= 8, f"the three keys vary across students ({len(keys)} distinct triples)"
