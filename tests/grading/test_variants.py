"""Per-student variants graded by the real trusted grader: each student is right on their own numbers and
wrong on a classmate's (copying a classmate's hand answers scores 0 on those cells), the numbers come from
the graded identity (the ``submitted/`` folder) whatever the notebook's id cell says, which the record
notes, and a regrade with another run seed draws the same numbers."""

import json

import nbformat
import pytest

from autograder import coursedir
from autograder.grading import grade
from autograder.grading.lesson import load_lesson
from autograder.grading.submission import verdict_key
from autograder.variants import ID_TAG, answers, graded_identity, hand_sources, mismatch_note, typed_id
from shared import FAST, REPO

LESSON = "lesson1_by_hand"
#: The test cells of the answers worked out by hand (their keys are drawn per student).
HAND = ("worked_example_tests", "worked_example_max_tests", "card_shapes_tests", "card_shapes_example2",
        "card_shapes_example3", "kc_q3", "kc_q6", "kc_q10")


def hand_in(root, student, sources, typed=""):
    """Write ``sources`` as ``submitted/<student>/lesson1_by_hand/``, the id cell holding ``typed``."""
    nb = nbformat.read(coursedir.notebook(root, "source", LESSON), as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in sources:
            cell.source = sources[grade_id]
        if ID_TAG in cell.metadata.get("tags", []):
            cell.source = f'my_id = student_id({json.dumps(typed)})'
    folder = root / "submitted" / student / LESSON
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{LESSON}.ipynb")


def differs_everywhere(one: str, other: str) -> bool:
    """Whether every answer worked out by hand differs between students ``one`` and ``other`` (a letter of
    a three-option question is the same for two students one time in three: such a pair is no test of copying)."""
    a, b = answers(one), answers(other)
    return all(a[e]["answers"][k] != b[e]["answers"][k] for e in a for k in a[e]["answers"])


#: A student whose every hand answer differs from alice's: she hands in alice's.
COPIER = next(f"carol{i}" for i in range(100) if differs_everywhere("alice", f"carol{i}"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = coursedir.copy_course(REPO, tmp_path_factory.mktemp("course"), [LESSON])
    reference = load_lesson(LESSON, root).reference_sources()
    alice, bob = hand_sources("alice", reference), hand_sources("bob", reference)
    hand_in(root, "alice", alice, typed="alice")
    hand_in(root, "bob", bob)
    hand_in(root, COPIER, alice)                 # copied alice's hand answers
    hand_in(root, "dave", hand_sources("dave", reference), typed="alice")  # typed a classmate's id
    first = {r.student: r for r in grade([LESSON], root=root, jobs=2, progress=False, limits=FAST, gradebook=False,
                                         seed=11)}
    again = {r.student: r for r in grade([LESSON], ["alice", COPIER], root=root, progress=False, limits=FAST,
                                         gradebook=False, check_reference=False, seed=12)}
    return {"root": root, "first": first, "again": again}


def passed(record) -> dict[str, bool]:
    return {t["grade_id"]: t["passed"] for t in record.tests}


def test_each_student_is_right_on_their_own_numbers(graded):
    for student in ("alice", "bob", "dave"):
        record = graded["first"][student]
        assert record.status == "ok" and record.score == record.max_score, (student, record.tests)


def test_a_classmates_hand_answers_score_nothing_on_those_cells(graded):
    record = graded["first"][COPIER]
    got = passed(record)
    assert not any(got[t] for t in HAND), {t: got[t] for t in HAND}
    assert all(ok for t, ok in got.items() if t not in HAND), "the code cells are not the hand answers"
    points = {t["grade_id"]: t["points"] for t in record.tests}
    assert sum(points[t] for t in HAND) == 0


def test_the_notebooks_id_never_chooses_the_numbers_and_a_mismatch_is_noted(graded):
    dave, alice = graded["first"]["dave"], graded["first"]["alice"]
    assert dave.score == dave.max_score, "dave typed alice's id and is graded on his own numbers"
    assert any("variant id mismatch" in n and "'alice'" in n and "'dave'" in n for n in dave.notes), dave.notes
    assert not any("mismatch" in n for n in alice.notes)
    assert not any("mismatch" in n for n in graded["first"]["bob"].notes), "an empty id cell is no mismatch"


def test_a_regrade_with_another_seed_draws_the_same_numbers(graded):
    for student in ("alice", COPIER):
        before, after = graded["first"][student], graded["again"][student]
        assert (before.seed, after.seed) == (11, 12)
        assert passed(before) == passed(after), student


def test_the_cache_keeps_students_apart_only_where_numbers_differ(graded, tmp_path):
    root = graded["root"]
    assert graded_identity(root, "alice", LESSON) == "alice"
    assert graded_identity(root, "alice", "lesson3_numpy") is None, "a lesson without variants: one key for all"
    assert verdict_key("c", FAST, 1, "full", "alice") != verdict_key("c", FAST, 1, "full", "bob") \
        != verdict_key("c", FAST, 1, "full")
    off = coursedir.copy_course(REPO, tmp_path, [LESSON])
    (off / "nbgrader_config.py").write_text((off / "nbgrader_config.py").read_text() + "\nc.Variants.enabled = False\n")
    assert graded_identity(off, "alice", LESSON) is None, "variants off: everyone graded on the lecture's numbers"


def test_the_typed_id_is_read_never_run():
    assert typed_id(['my_id = student_id("  jdoe ")']) == "jdoe"
    assert typed_id(['my_id = student_id("")']) is None
    assert typed_id(['my_id = student_id(__import__("os").getlogin())', "x = ("]) is None
    cells = [{"metadata": {"tags": [ID_TAG]}, "source": ['my_id = student_id(', '"Bob")']}]
    assert mismatch_note(cells, "bob", LESSON) is None, "case and spaces do not make another student"
    assert "mismatch" in mismatch_note(cells, "alice", LESSON)
    assert mismatch_note([{"metadata": {}, "source": 'student_id("bob")'}], "alice", LESSON) is None, "untagged"


def test_the_instructors_answers_are_the_graded_keys_own():
    """What ``avgpool-course variants`` prints is what a complete student hands in (graded above)."""
    own = answers("alice")
    assert set(own) == {"worked_example", "card_shapes", "knowledge_check"}
    assert own["knowledge_check"]["answers"] != answers("bob")["knowledge_check"]["answers"] or \
        own["worked_example"]["answers"] != answers("bob")["worked_example"]["answers"]
    lecture = answers(None)
    assert lecture["worked_example"]["answers"] == {"by_hand_avg": [[3.75, 5.25], [4.5, 1.0]],
                                                    "by_hand_max": [[6.0, 8.0], [9.0, 2.0]]}
    assert lecture["card_shapes"]["answers"] == {"example1_shape": (6, 12, 12), "example2_shape": (64, 1, 1),
                                                 "example3_shape": (3, 9, 9)}
    assert lecture["knowledge_check"]["answers"] == {"q3": "c", "q6": "a", "q10": "b"}


@pytest.fixture
def course_root(tmp_path, monkeypatch):
    """A course folder with its own copy of course/term.py (what the commands write); this process's term kept."""
    from course import term

    root = coursedir.copy_course(REPO, tmp_path / "course", [LESSON])
    (root / "course").mkdir()
    (root / "course" / "term.py").write_text((REPO / "course" / "term.py").read_text())
    monkeypatch.setattr(term, "SALT", term.SALT)
    monkeypatch.setattr(term, "ENABLED", term.ENABLED)
    return root


def test_a_new_term_is_refused_once_a_lesson_has_graded_submissions_unless_forced(course_root, capsys):
    from autograder import cli
    from autograder.variants import read_term

    root, shipped = course_root, (REPO / "course" / "term.py").read_text()
    before = answers("alice")
    assert cli.main(["variants", "--new-term", "--salt", "spring-2027", "--root", str(root)]) == 0
    assert read_term(root / "course" / "term.py") == ("spring-2027", True)
    assert answers("alice", salt="spring-2027") != before, "a new term: new numbers"
    assert (REPO / "course" / "term.py").read_text() == shipped, "only the course folder's own term changes"
    (root / "records" / LESSON).mkdir(parents=True)
    (root / "records" / LESSON / "alice.json").write_text("{}")
    assert cli.main(["variants", "--new-term", "--salt", "autumn-2027", "--root", str(root)]) == 2
    assert "already has graded submissions" in capsys.readouterr().err
    assert read_term(root / "course" / "term.py")[0] == "spring-2027"
    assert cli.main(["variants", "--new-term", "--salt", "autumn-2027", "--force", "--root", str(root)]) == 0
    assert read_term(root / "course" / "term.py")[0] == "autumn-2027"
    assert cli.main(["variants", "--new-term", "--salt", "a b", "--force", "--root", str(root)]) == 2
    assert "--salt must be" in capsys.readouterr().err
    scratch = coursedir.copy_course(REPO, root.parent / "scratch", [LESSON])  # no course/ of its own
    assert cli.main(["variants", "--new-term", "--root", str(scratch)]) == 2
    assert "course/term.py does not exist" in capsys.readouterr().err


def test_the_variants_command_prints_a_students_numbers_and_answers(course_root, capsys):
    from autograder import cli

    root = course_root
    assert cli.main(["variants", "--student", "alice", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    own = answers("alice")
    assert json.dumps(own["worked_example"]["numbers"]) in out
    assert f"q3 = {own['knowledge_check']['answers']['q3']!r}" in out
    assert f"example1_shape = {own['card_shapes']['answers']['example1_shape']!r}" in out
    assert cli.main(["variants", "--student", "alice", "--lesson", "lesson3_numpy", "--root", str(root)]) == 2
    assert "no per-student exercises" in capsys.readouterr().err
    assert cli.main(["variants", "--root", str(root)]) == 2
    # variants off in the course's config: the lecture's numbers, said so; release writes it into course/term.py
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.Variants.enabled = False\n")
    assert cli.main(["variants", "--student", "alice", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "OFF" in out and json.dumps(answers(None)["worked_example"]["numbers"]) in out
    from autograder.variants import read_term, sync_enabled

    shipped = (REPO / "course" / "term.py").read_text()
    assert sync_enabled(root) and read_term(root / "course" / "term.py")[1] is False
    assert not sync_enabled(root), "in agreement: nothing written"
    assert (REPO / "course" / "term.py").read_text() == shipped, "the repository's own term is not this course's"
    scratch = coursedir.copy_course(REPO, root.parent / "scratch", [LESSON])
    (scratch / "nbgrader_config.py").write_text((scratch / "nbgrader_config.py").read_text() + "\nc.Variants.enabled = False\n")
    assert not sync_enabled(scratch), "a course folder without course/term.py of its own: nothing to write"


def test_the_main_jobs_line_counts_the_distinct_variants(tmp_path, capsys):
    from autograder import cli

    root = coursedir.copy_course(REPO, tmp_path / "course", [LESSON])
    records = [{"lesson": LESSON, "student": s} for s in ("alice", "bob", "alice", "erin")] + \
        [{"lesson": "lesson3_numpy", "student": "alice"}]
    cli.variants_summary(root, records)
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert line == (f"Variants: {LESSON}: 3 students received distinct variants: worked_example 3, card_shapes 3, "
                    "knowledge_check 3")


def test_lesson2s_predictions_are_right_on_their_own_checks_and_wrong_on_a_classmates():
    """In-process, as the grader's parent runs the test cells under each graded identity (lesson 1 above went
    through the whole grader; the identity reaches every lesson the same way)."""
    import course.checks
    from autograder.sample_class import mistakes_for, own_answers
    from autograder.solutions import solution_cells
    from nbtools import failing_cells

    lesson, cells = "lesson2_loops", {"predict_divisor", "predict_stride", "predict_padding"}
    reference = solution_cells(coursedir.notebook(REPO, "source", lesson))
    keys = {s: answers(s, lesson)["predictions"]["answers"] for s in [f"s{i}" for i in range(60)]}
    one = "s0"
    other = next(s for s in keys if all(keys[s][k] != keys[one][k] for k in keys[one]))
    own = {s: own_answers(REPO, lesson, s, reference, mistakes_for(reference))[0] for s in (one, other)}
    for student, classmate in ((one, other), (other, one)):
        with course.checks.grading(run_seed=3, student=student):
            assert failing_cells(lesson, cells, {"predictions": own[student]["predictions"]}) == set(), student
            assert failing_cells(lesson, cells, {"predictions": own[classmate]["predictions"]}) == cells, \
                f"{student} handing in {classmate}'s predictions"
