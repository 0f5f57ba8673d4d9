"""The sample class: deterministic, as an LMS hands it over, with honest variations that really differ."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import nbformat
import pytest

from autograder import collect, sample_class, solutions
from nbtools import failing_cells, source_notebook
from workflow_fakes import LESSON, REPO, make_course


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_same_class_other_seed_other_class(tmp_path):
    root = make_course(tmp_path)
    a, manifest_a = sample_class.generate(tmp_path / "a", root, students=20, seed=3)
    b, manifest_b = sample_class.generate(tmp_path / "b", root, students=20, seed=3)
    c, _ = sample_class.generate(tmp_path / "c", root, students=20, seed=4)
    assert _digest(a) == _digest(b) and manifest_a == manifest_b
    assert _digest(a) != _digest(c)


def test_class_has_every_kind_of_submission_and_collect_places_it(tmp_path):
    root = make_course(tmp_path)
    archive, manifest = sample_class.generate(tmp_path / "lms", root, students=40, seed=7)
    kinds = Counter(m.variant.split(":")[0] for m in manifest)
    assert {"complete", "partial", "wrong", "not a notebook", "superseded", "attack"} <= set(kinds), kinds
    assert {m.student for m in manifest if m.variant.startswith("attack:")} == \
        {a.student for a in sample_class.ATTACKS if a.lesson == LESSON}
    assert any(m.late for m in manifest)
    assert len({m.student for m in manifest}) >= 30  # 40 names; with one lesson not everyone hands in
    due = {k: collect.parse_time(v) for k, v in sample_class.due_dates(tmp_path / "lms").items()}
    report = collect.collect(archive, root, [LESSON], due=due)
    expected = {(m.student, m.lesson) for m in manifest if m.variant not in ("not a notebook", "superseded")}
    assert {(p.student, p.lesson) for p in report.placed} == expected
    assert {(p.student, p.lesson) for p in report.placed if p.late} == {(m.student, m.lesson) for m in manifest
                                                                          if m.late}
    assert len(report.skipped) == sum(kinds[k] for k in ("not a notebook", "superseded"))
    json.loads((tmp_path / "lms" / "manifest.json").read_text())


def test_complete_submission_is_the_reference_solution(tmp_path):
    reference = solutions.solution_cells(source_notebook(LESSON))
    release_nb = nbformat.read(REPO / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    filled = sample_class.fill(release_nb, reference)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in filled.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    assert answers == reference
    assert not any("BEGIN SOLUTION" in text for text in answers.values())


def test_every_mistake_changes_code_or_is_skipped():
    reference = solutions.solution_cells(source_notebook(LESSON))
    found = sample_class.mistakes_for(reference)
    assert "off_by_one_window" in found and "stride_zero_kept" in found
    for name, cells in found.items():
        assert cells and all(cells[g] != reference[g] for g in cells), name
    inert = sample_class.Mistake("inert", "matches nothing", ((r"no such code", "x"),))
    assert sample_class.apply_mistake(inert, reference) == {}


def test_a_typical_mistake_fails_its_graded_cell_and_only_that_one():
    """Both sides: the reference passes output_size_basic; the off-by-one window fails it, not the others."""
    reference = solutions.solution_cells(source_notebook(LESSON))
    wrong = sample_class.mistakes_for(reference)["off_by_one_window"]
    assert set(wrong) == {"output_size"}
    cells = ("output_size_basic", "worked_example_tests", "kc_q1", "output_size_errors")
    assert failing_cells(LESSON, cells) == set()
    assert failing_cells(LESSON, cells, wrong) == {"output_size_basic"}


def test_every_attack_changes_the_cells_it_names_and_keeps_the_others():
    reference = solutions.solution_cells(source_notebook(LESSON))
    attacks = [a for a in sample_class.ATTACKS if a.lesson == LESSON]
    assert attacks
    for attack in attacks:
        answers = attack.answers(reference)
        assert set(answers) == set(reference), f"{attack.name} names a cell the lesson does not have"
        changed = {g for g in reference if answers[g] != reference[g]}
        assert changed == set(attack.cells) | set(attack.append), attack.name
        assert attack.stopped_on and attack.what


def test_the_main_job_says_whether_each_attack_was_stopped(capsys):
    """Both sides: an attack whose targets scored 0 is "stopped"; one that kept a target's points is
    "NOT STOPPED" and counted (the main job then exits 1)."""
    from autograder import cli

    attack = sample_class.ATTACKS[0]
    tests = [{"grade_id": g, "points": 0.0} for g in attack.stopped_on] + [{"grade_id": "other", "points": 2.0}]
    record = {"student": attack.student, "lesson": attack.lesson, "tests": tests}
    assert cli.attacks_report([record, {"student": "alice", "lesson": attack.lesson, "tests": []}]) == 0
    out = capsys.readouterr().out
    assert f"{attack.student}" in out and "stopped on" in out and "NOT STOPPED" not in out and "alice" not in out
    tests[0]["points"] = 1.0
    assert cli.attacks_report([record]) == 1
    assert f"NOT STOPPED on {attack.stopped_on[0]}" in capsys.readouterr().out


# --- honest versions (honest/<lesson>/) and each student's hand -------------------------------------------

def _versions(lesson):
    release_nb = nbformat.read(REPO / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    reference = solutions.solution_cells(source_notebook(lesson))
    return sample_class.honest_versions(REPO, lesson, reference), sample_class.given_names(release_nb), reference


def test_a_student_hand_renames_locals_drops_comments_and_swaps_independent_lines_and_computes_the_same():
    text = ('def f(x, size=2):\n    out = x * size  # scaled\n    total = 1\n    count = 2\n'
            '    kernel = dict(size=size)\n    msg = f"{out}"\n    return out + total + count + kernel["size"], msg\n')
    import random

    styled = sample_class.restyle({"c": text}, random.Random(0), renames=1.0, comments=1.0, order=1.0,
                                  note=False)["c"]
    import re

    assert not re.search(r"\b(total|count|kernel)\b", styled), styled  # its locals renamed...
    assert "out = x * size" in styled and 'f"{out}"' in styled, styled   # ...but one an f-string names
    assert "size=size" in styled and "(x, size=2)" in styled, "keywords and arguments keep their names"
    assert "# scaled" not in styled and "out = x * size\n" in styled
    assert styled.splitlines()[1].endswith(" = 1"), "independent neighbours swapped"
    run_a, run_b = {}, {}
    exec(text, run_a)
    exec(styled, run_b)
    assert run_a["f"](3) == run_b["f"](3) == (6 + 1 + 2 + 2, "6")


def test_a_combination_takes_a_helper_only_from_its_own_authors_cells():
    """Both sides: a backward reading `helper` is complete beside the forward of its own author that defines it,
    not beside another author's forward that does not (or that defines a name another cell defines too)."""
    import random

    versions = {"fwd": [("reference", "def f(x):\n    return x\n"), ("ann", "def helper(v):\n    return v\n\n"
                                                                                 "def f(x):\n    return helper(x)\n")],
                "bwd": [("reference", "def b(g):\n    return g\n"), ("ann", "def b(g):\n    return helper(g)\n"),
                        ("bob", "def helper(v):\n    return v\n\ndef f(x):\n    return x\n\ndef b(g):\n    return g\n")]}
    combos = set(sample_class.Versions(versions, set(), random.Random(0)).combos)
    assert (1, 1) in combos and (0, 1) not in combos, combos
    assert (0, 0) in combos and (1, 0) in combos and (1, 2) not in combos and (0, 2) not in combos, combos


def test_every_mistake_still_finds_code_to_change_on_the_versions_students_draw():
    """A wrong student's cells differ from the honest versions they drew in a cell the grader grades (not one
    it replaces by the course's own: a mistake there would cost nothing), in every lesson where the mistake
    changes such a cell of the reference."""
    from autograder.grading.lesson import GIVEN_TAG

    assert sample_class.GIVEN_TAG == GIVEN_TAG
    for lesson in coursedir_lessons():
        versions, given, reference = _versions(lesson)
        release_nb = nbformat.read(REPO / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        replaced = frozenset(c.metadata["nbgrader"]["grade_id"] for c in release_nb.cells
                             if GIVEN_TAG in c.metadata.get("tags", []))
        for name, cells in sample_class.mistakes_for(reference).items():
            if not set(cells) - replaced:
                continue
            hand = sample_class.Hands(versions, given, 7, lesson, [], replaced)
            answers = hand.wrong("someone", name)
            combo, _ = hand.handed["someone"]
            drawn = hand.versions.cells(combo)
            mistake = next(m for m in sample_class.MISTAKES if m.name == name)
            assert set(sample_class.apply_mistake(mistake, drawn)) - replaced, (lesson, name, hand.versions.who(combo))
            assert answers != drawn, (lesson, name)


def coursedir_lessons():
    from autograder import coursedir

    return coursedir.lessons(REPO, released=True)


#: The lessons whose tests run in seconds in this process; lessons 2-4's (a minute or more each, timing and
#: cost checks) are shown by `make course`, whose honest complete students all score full marks there.
QUICK = ("lesson1_by_hand", "lesson5_gap")


@pytest.mark.slow
@pytest.mark.parametrize("lesson", [lesson for lesson in coursedir_lessons() if lesson in QUICK])
def test_every_honest_version_passes_every_graded_cell_the_reference_passes(lesson):
    """Each honest version of honest/<lesson>/ (one author's cells, the reference's elsewhere, where those
    combine), run with the notebook's tests in this process: nothing fails that the reference passes."""
    versions, given, reference = _versions(lesson)
    graded = [c.metadata["nbgrader"]["grade_id"] for c in nbformat.read(source_notebook(lesson), as_version=4).cells
              if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
    base = failing_cells(lesson, graded)
    import random

    valid = set(sample_class.Versions(versions, given, random.Random(0)).combos)
    ids = list(versions)
    for who in sorted({w for v in versions.values() for w, _ in v[1:]}):
        combo = tuple(next((i for i, (w, _) in enumerate(versions[g]) if w == who), 0) for g in ids)
        if combo not in valid:  # e.g. a helper of its own that clashes with the reference's: drawn elsewhere
            continue
        cells = {g: versions[g][i][1] for g, i in zip(ids, combo) if i}
        assert failing_cells(lesson, graded, cells) <= base, (lesson, who)


def test_each_student_hands_in_their_own_hand_answers_and_the_slips_still_lose_points():
    """Lesson 1 draws its hand-worked numbers per student: a complete student's cells hold their own answers
    (full marks under their graded identity, not under another's), and the arithmetic slip and the guessed
    letters, made on those answers, fail their cells."""
    import course.checks

    hand = ("worked_example_tests", "worked_example_max_tests", "card_shapes_tests", "card_shapes_example2",
            "card_shapes_example3", "kc_q3", "kc_q6", "kc_q10")
    reference = solutions.solution_cells(source_notebook(LESSON))
    own = {}
    for student in ("alice", "zhangwei_12345"):
        own[student], mistakes = sample_class.own_answers(REPO, LESSON, student, reference,
                                                          sample_class.mistakes_for(reference))
        assert own[student] != reference and set(own[student]) == set(reference)
        with course.checks.grading(run_seed=5, student=student):  # as the trusted grader grades this student
            assert failing_cells(LESSON, hand, own[student]) == set(), student
            assert failing_cells(LESSON, hand, reference), "the lecture's answers are not this student's"
            assert "worked_example_tests" in failing_cells(LESSON, hand, mistakes["arithmetic_slip"])
            assert set(mistakes["guessed_answers"]) == {"knowledge_check"}
            assert failing_cells(LESSON, ("kc_q3", "kc_q6", "kc_q10"), mistakes["guessed_answers"])
    assert own["alice"] != own["zhangwei_12345"]
