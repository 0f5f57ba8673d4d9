"""``benchmarks.mutants`` (``make mutants``): the mutation operators, the deterministic choice, the
classification, and a small sample graded by the real trusted grader (a mutant that changes what
``head_parameters`` returns is caught; one that changes nothing is not)."""

from __future__ import annotations

import pytest

from autograder.coursedir import REPO, lessons
from autograder.grading import load_lesson
from benchmarks import mutants as M

SNIPPET = '''
def f(x, n, count_include_pad=True):
    """Doc 7."""
    total = 0
    for i in range(n):
        total += x[i:n].sum(axis=(0, 1)) * 2
    if n < 3:
        raise ValueError(f"n must be >= 3, got {n}")
    y = x.transpose(0, 1).astype(np.float32)
    d = 4 if count_include_pad else n
    return total / d
'''


def sources(mutants):
    return {M.normalised(m.source) for m in mutants}


def test_each_operator_makes_its_mutant():
    made = M.mutants_of(SNIPPET, "cell")
    texts = "\n\n".join(m.source for m in made)
    for expected in ("range(n - 1)", "range(n + 1)", "x[i:n - 1]", "x[i + 1:n]", "axis=(0,)", "x.transpose(1, 0)",
                     "np.float64", "total = x[i:n]", "n <= 3", "* 3", "/ 2", "total * d", "total / (d + 1)",
                     "d = 4\n", "d = n\n", "not count_include_pad", "total = 1"):
        assert expected in texts, f"no mutant contains {expected!r}"
    assert {m.operator for m in made} >= {"operator", "comparison", "constant", "off-by-one", "axis", "dtype",
                                         "divisor", "augmented", "removed"}
    # messages and docstrings are never mutated: every mutant but a removed statement keeps them as they were
    assert all("n must be >= 3, got" in m.source and "Doc 7." in m.source for m in made if m.operator != "removed")
    assert all("Doc 7." in m.source for m in made)
    assert all(M.normalised(m.source) != M.normalised(SNIPPET) for m in made), "every mutant differs"


def test_answer_values_are_mutated():
    made = sources(M.mutants_of('q2 = True\nq3 = "c"\nq4 = "long free text"\nx = 3.5\nchoice = ("B", (0, 2))\n', "kc"))
    assert "q2 = False\nq3 = 'c'\nq4 = 'long free text'\nx = 3.5\nchoice = ('B', (0, 2))" in made
    assert any("q3 = 'd'" in s for s in made) and any("('C', (0, 2))" in s for s in made)
    assert any("x = 4.5" in s for s in made) and any("(0, 3)" in s for s in made)
    changed = [m for m in M.mutants_of('q4 = "long free text"\n', "kc") if m.operator != "removed"]
    assert changed == [], "free text is not an answer value to mutate"


def test_generator_is_deterministic():
    first, second = M.mutants_of(SNIPPET, "cell"), M.mutants_of(SNIPPET, "cell")
    assert [m.id for m in first] == [m.id for m in second] and len({m.id for m in first}) == len(first)
    assert M.choose(first, 5, seed=3) == M.choose(second, 5, seed=3)
    assert M.choose(first, 5, seed=3) != M.choose(first, 5, seed=4), "another seed, another choice"
    assert len(M.choose(first, None, seed=3)) == len(first)
    line = next(m for m in first if m.after == "for i in range(n - 1):")
    assert line.before == "for i in range(n):" and line.line == 5


def test_every_lesson_has_fifty_mutants_of_graded_cells():
    """At least 50 mutants per lesson (the issue's figure), only of cells that feed a test; every entry
    of the committed equivalents names a mutant that exists (a stale id fails here)."""
    ids = set()
    for name in lessons(REPO):
        lesson = load_lesson(name, REPO)
        fed = M.graded_cells(lesson)
        assert not set(fed) & set(lesson.given), "a given cell runs as the reference: never mutated"
        made = M.lesson_mutants(lesson)
        assert len(made) >= 50, name
        ids |= {m.id for m in made}
    assert set(M.load_equivalent()) <= ids, set(M.load_equivalent()) - ids
    fed = M.graded_cells(load_lesson("lesson2_loops", REPO))
    assert fed["predictions"] == {"predict_divisor", "predict_stride", "predict_padding"}
    assert "backward_tests" in fed["avg_pool2d_loops"], "the backward reads the forward cell's as_pair"


def test_classification(tmp_path):
    baseline = {"a": True, "b": True, "c": False}
    assert M.classify(baseline, {"a": False, "b": True}, {"a"}) == "caught"
    assert M.classify(baseline, {"a": True, "b": False}, {"a"}) == "missed", "only the tests the cell feeds count"
    assert M.classify(baseline, {"a": True, "c": False}, {"a", "c"}) == "missed", "failing already: no catch"
    assert M.classify(baseline, {}, {"a"}) == "missed", "an unreported test proves nothing"

    reference = "def g(x):\n    return x + 1\n"
    mutant = next(m for m in M.mutants_of(reference, "g") if m.after == "return x - 1")
    assert M.static_class(mutant.id, mutant.source, reference, {}) is None
    assert M.static_class(mutant.id, mutant.source, reference, {mutant.id: "x is always 0"}) == (
        "equivalent", "x is always 0")
    same = "def g(x):\n    return (x + 1)  # layout only\n"
    assert M.static_class("g:x", same, reference, {})[0] == "equivalent"
    assert M.static_class("g:x", "def g(x):\n    return x +\n", reference, {})[0] == "broken"

    assert isinstance(M.load_equivalent(), dict), "the committed file reads"
    listed = tmp_path / "eq.toml"
    listed.write_text('["g:operator:2:0"]\nreason = "x is always 0"\n')
    assert M.load_equivalent(listed) == {"g:operator:2:0": "x is always 0"}
    listed.write_text('["g:operator:2:0"]\nreason = " "\n')
    with pytest.raises(ValueError, match="needs a reason"):
        M.load_equivalent(listed)
    with pytest.raises(SystemExit):
        M.parse_args(["--limit", "-1"])

    counts = dict(total=2, caught=1, missed=1, equivalent=0, broken=0, error=0, score=0.5)
    missed = {"class": "missed", "id": "c:operator:1:ab", "cell": "c", "before": "x + 1", "after": "x - 1"}
    text = M.report([dict(counts, lesson="one", mutants=[missed, dict(missed, id="c:operator:1:cd", **{"class": "caught"})]),
                     {"lesson": "two", "failure": "the reference could not be graded: why", "mutants": []}])
    assert "c:operator:1:ab  [c]  x + 1  ->  x - 1" in text and "c:operator:1:cd" not in text
    assert "two               the reference could not be graded: why" in text and "50%" in text


def test_real_grader_catches_a_behaviour_change_and_not_a_no_op():
    lesson = load_lesson("lesson5_gap", REPO)
    reference = M.solutions.solution_cells(lesson.source_path)
    fed = M.graded_cells(lesson)["head_parameters"]
    made = M.mutants_of(reference["head_parameters"], "head_parameters")
    wrong = next(m for m in made if m.after == "gap_head = channels * num_classes - num_classes")
    no_op = reference["head_parameters"] + "\n_unused = 0\n"
    seed, baseline = 31, {t: True for t in fed}  # the reference's verdicts (the no-op below shows them)
    graded, why = M.grade(lesson.name, str(REPO), {**reference, wrong.cell: wrong.source}, seed, fed)
    assert M.classify(baseline, graded, fed) == "caught", (graded, why)
    graded, why = M.grade(lesson.name, str(REPO), {**reference, "head_parameters": no_op}, seed, fed)
    assert graded == baseline and M.classify(baseline, graded, fed) == "missed", (graded, why)


CONTRACT_SNIPPET = '''
def f(x, kernel_size, stride, count_include_pad=True):
    kh, kw = kernel_size
    sh, sw = stride
    sh, sw = sh or kh, sw or kw
    y = x.reshape(2, -1)
    out = x / 4
    n = int(kh * kw)
    s = y.sum(axis=1)
    if count_include_pad:
        d = out * 1
    else:
        d = out * 2
    return d
'''


def test_each_contract_operator_makes_its_mutant():
    """Issue 43's plausible mistakes: the stride-0 default from the other axis, view for reshape (tensor
    code only), an input updated in place, a NumPy int, a float64 sum cast back (NumPy code only), float64
    on one count_include_pad path."""
    tensor_code = M.mutants_of("import torch\n" + CONTRACT_SNIPPET, "cell")
    numpy_code = M.mutants_of(CONTRACT_SNIPPET, "cell")
    texts = "\n\n".join(m.source for m in tensor_code + numpy_code)
    for expected in ("sh, sw = (sh or kh, sw or kh)", "sh, sw = (sh or kw, sw or kw)", "y = x.view(2, -1)",
                     "out = x.__itruediv__(4)", "n = np.int64(kh * kw)",
                     "s = y.astype('float64').sum(axis=1).astype(y.dtype)", "d = (out * 2).astype('float64')"):
        assert expected in texts, f"no mutant contains {expected!r}"
    assert {m.operator for m in tensor_code + numpy_code} >= set(M.CONTRACT_OPERATORS)
    assert not any(m.operator == "view" for m in numpy_code), "ndarray.view takes a dtype: no mutant there"
    assert not any(m.operator == "accumulation" for m in tensor_code), "a tensor has no astype"
    assert not any(m.operator == "in-place" and "n = " in m.after for m in numpy_code), "numbers are not updated in place"


def test_the_report_counts_the_contract_operators():
    summary = {"lesson": "l", "total": 3, "caught": 1, "equivalent": 0, "missed": 2, "broken": 0, "error": 0,
               "score": 0.333, "mutants": [
                   {"operator": "view", "class": "caught", "id": "a", "cell": "c", "before": "", "after": ""},
                   {"operator": "view", "class": "missed", "id": "b", "cell": "c", "before": "", "after": ""},
                   {"operator": "constant", "class": "missed", "id": "d", "cell": "c", "before": "", "after": ""}]}
    summary["operators"] = M.operator_counts(summary["mutants"])
    assert summary["operators"]["view"]["caught"] == 1 and summary["operators"]["view"]["missed"] == 1
    text = M.report([summary])
    assert "contract operators (issue 43)" in text
    line = next(l for l in text.splitlines() if l.strip().startswith("view"))
    assert "1 / 2" in line, line
