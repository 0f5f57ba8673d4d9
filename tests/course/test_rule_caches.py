"""Issue 56 item 2: a source is read once for every rule and call (its resolver, its loop reading, its dynamic
code), keyed by the source text and plain data of the set-up only: a later call on the same text reuses the
reading, a different text or set-up is read afresh, and no cache keeps an object of a namespace or a call's cells."""

from __future__ import annotations

import gc
import uuid
import weakref

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course.checks import check_avoids, check_kernel_loops, check_output_loops
from course.checks.analysis import avoids, loops, resolver

SETUP = {"np": np, "torch": torch, "F": F}
POOLING = ["*pool*", "interpolate", "reference"]


class _Graded:
    """A grader stand-in: the student's source, the set-up's namespace and the submission's cells."""

    def __init__(self, text, namespace=SETUP, cells=None):
        self.__student_source__ = text
        self.__trusted_globals__ = namespace
        if cells is not None:
            self.__student_cells__ = cells


def _fresh(text: str) -> str:
    """``text`` with a comment no other test writes: a source no cache has read yet."""
    return f"# {uuid.uuid4().hex}\n{text}"


LOOPS = ("def avg_pool2d_loops(x, kernel_size):\n    out = np.zeros(x.shape)\n"
         "    for i in range(x.shape[2] - kernel_size + 1):\n        for j in range(x.shape[3] - kernel_size + 1):\n"
         "            out[:, :, i, j] = x[:, :, i:i + kernel_size, j:j + kernel_size].sum(axis=(2, 3))\n"
         "    return out")


def _counting(monkeypatch, owner, name: str) -> list:
    """Count the calls of ``owner.name`` (each call appends to the list returned)."""
    calls, original = [], getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_every_rule_and_call_on_one_source_reads_it_once(monkeypatch):
    built = _counting(monkeypatch, resolver._Resolver, "_settle")  # the last step of building a resolver
    nests = _counting(monkeypatch, loops._LoopNests, "_invoke")  # the walk of the loop reader
    dynamic = _counting(monkeypatch, avoids, "dynamic_code")
    uses = _counting(monkeypatch, resolver._Resolver, "_kinded_uses")
    text = _fresh(LOOPS)
    for _ in range(4):  # as lesson 2's hidden tests call them
        check_avoids(_Graded(text), POOLING, "avg_pool2d_loops")
        check_output_loops(_Graded(text), "avg_pool2d_loops")
    assert (len(built), len(nests), len(dynamic), len(uses)) == (1, 1, 1, 1)
    check_avoids(_Graded(_fresh(LOOPS)), POOLING, "avg_pool2d_loops")  # another text: read afresh
    assert (len(built), len(dynamic)) == (2, 2)


def test_a_forbidden_source_after_an_allowed_one_of_the_same_name_is_still_forbidden():
    honest = _fresh("def pool(x, k):\n    return x.unfold(2, k, k).unfold(3, k, k).mean((-1, -2))")
    cheat = honest.replace("x.unfold(2, k, k).unfold(3, k, k).mean((-1, -2))", "F.avg_pool2d(x, k)")
    check_avoids(_Graded(honest), POOLING, "pool")
    with pytest.raises(AssertionError, match=r"F\.avg_pool2d \(torch\.nn\.functional\.avg_pool2d"):
        check_avoids(_Graded(cheat), POOLING, "pool")
    check_avoids(_Graded(honest), POOLING, "pool")  # and the honest one stays allowed


def test_the_same_text_in_another_set_up_is_read_in_that_set_up():
    """The set-up is part of the key: ``K`` bound to 3 bounds the loop; bound to a million, it does not."""
    text = _fresh("def pool(x, kernel_size):\n    out = 0\n    for i in range(K):\n        out = out + x[i]\n"
                  "    return out")
    check_kernel_loops(_Graded(text, {"np": np, "K": 3}), "pool")
    with pytest.raises(AssertionError, match="turn up to 1000000 times"):
        check_kernel_loops(_Graded(text, {"np": np, "K": 10 ** 6}), "pool")
    check_kernel_loops(_Graded(text, {"np": np, "K": 3}), "pool")


def test_each_call_counts_lines_in_its_own_cells():
    """A cached reading quotes the cells of the call at hand, never those of the call that read it first."""
    text = _fresh("def pool(x, kernel_size):\n    out = 0\n    for i in range(x.shape[0]):\n"
                  "        out = out + x[i]\n    return out")
    first, second = ["\n" * 5 + text], ["\n" * 9 + text]
    messages = []
    for cells in (first, second, first):
        with pytest.raises(AssertionError) as caught:
            check_kernel_loops(_Graded(text, {"np": np}, cells), "pool")
        messages.append(str(caught.value))
    assert "line 9 of its cell" in messages[0] and "line 13 of its cell" in messages[1]
    assert messages[2] == messages[0]


def test_no_cache_keeps_an_object_of_the_namespace():
    """The keys are the text and plain data (paths, flags, ints): a set-up's objects die with it."""

    def helper(x):
        return x

    namespace = {"np": np, "helper": helper, "K": 3}
    gone = weakref.ref(helper)
    text = _fresh("def pool(x, kernel_size):\n    total = helper(x)\n    for i in range(K):\n"
                  "        total = total + x[i]\n    return total")
    check_avoids(_Graded(text, namespace), POOLING, "pool")
    check_kernel_loops(_Graded(text, namespace), "pool")
    del namespace, helper
    gc.collect()
    assert gone() is None


def test_a_tree_is_walked_once_and_its_list_goes_with_the_tree(monkeypatch):
    import ast

    from course.checks.analysis.text import walked

    tree = ast.parse("def f(x):\n    return [y.z for y in x]")
    walks = _counting(monkeypatch, ast, "walk")
    assert walked(tree) == tuple(ast.walk(tree)) and walked(tree)[0] is tree
    assert len(walks) == 2  # one for walked, one for the comparison: the second walked() reads its list
    gone = weakref.ref(tree)
    del tree
    gc.collect()
    assert gone() is None
