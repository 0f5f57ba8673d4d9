"""Unit tests of the trusted grader: intake, the plain-data codec, stand-ins, the sandbox's containment
and limits, and its wiring into nbgrader. The corpus (tests/grading/test_corpus.py) grades whole submissions."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from autograder.grading import _child, containment, load_lesson, parse_submission, sanitized_notebook
from autograder.grading.lesson import Cell, Lesson
from autograder.grading.nbgrader_plugin import configure
from autograder.grading.sandbox import (CrashFault, Limits, MemoryFault, Sandbox, TimeoutFault, hidden_paths,
                                        sandbox_uid, warm_here)
from autograder.grading.verdicts import run_tests, student_exception
from shared import FAST, REPO

LESSON1 = "lesson1_by_hand"


@pytest.fixture(scope="module")
def lesson1():
    return load_lesson(LESSON1, REPO)


# --- intake ----------------------------------------------------------------------------------------

def notebook_bytes(lesson, sources) -> bytes:
    return nbformat.writes(sanitized_notebook(lesson, sources)).encode()


def test_intake_takes_solution_sources_by_grade_id(lesson1):
    taken = parse_submission(notebook_bytes(lesson1, lesson1.reference_sources()), lesson1)
    assert taken.status == "ok"
    assert taken.sources == lesson1.reference_sources()


@pytest.mark.parametrize("data, why", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"[1, 2, 3]", "not a notebook"),
    (json.dumps({"nbformat": 3, "worksheets": []}).encode(), "nbformat 3"),
    (json.dumps({"nbformat": 4, "cells": "nope"}).encode(), "no list of cells"),
])
def test_intake_rejects_what_is_not_a_notebook_with_a_reason(lesson1, data, why):
    taken = parse_submission(data, lesson1)
    assert taken.status == "invalid submission"
    assert why in taken.reason


def test_intake_first_match_wins_and_ignores_metadata_and_wrong_cell_types(lesson1):
    nb = sanitized_notebook(lesson1, lesson1.reference_sources())
    twin = nbformat.v4.new_code_cell("def output_size(*a, **k):\n    return (0, 0)",
                                     metadata={"nbgrader": {"grade_id": "output_size", "solution": True}})
    nb.cells.append(twin)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "pool_both":
            cell.cell_type = "markdown"
            del cell["outputs"], cell["execution_count"]
        if meta.get("grade"):
            meta["points"] = 1000
    taken = parse_submission(nbformat.writes(nb).encode(), lesson1)
    assert taken.sources["output_size"] == lesson1.reference_sources()["output_size"]
    assert "pool_both" not in taken.sources
    assert any("second cell" in note for note in taken.notes)


def test_intake_without_any_solution_cell_says_so(lesson1):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    taken = parse_submission(nbformat.writes(nb).encode(), lesson1)
    assert taken.status == "no solution cells"
    assert "another lesson" in taken.reason


def test_sanitized_notebook_is_the_release_with_sources_swapped(lesson1):
    nb = sanitized_notebook(lesson1, {"output_size": "x = 1"})
    release = nbformat.read(str(lesson1.release_path), as_version=4)
    assert len(nb.cells) == len(release.cells)
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    assert by_id["output_size"].source == "x = 1"
    assert by_id["pool_both"].source == ""  # missing: empty
    assert by_id["output_size_basic"].source == {c.metadata.get("nbgrader", {}).get("grade_id"): c
                                                 for c in release.cells}["output_size_basic"].source


# --- the codec ---------------------------------------------------------------------------------------

def roundtrip(value, child_side: bool = False):
    blobs: list[bytes] = []
    _child.IN_CHILD = child_side
    try:
        tree = _child.encode(value, blobs, lambda v: (_ for _ in ()).throw(_child.Unsendable(type(v).__name__)))
        wire = json.loads(json.dumps(tree))
        _child.IN_CHILD = not child_side
        return _child.decode(wire, blobs, lambda node: None)
    finally:
        _child.IN_CHILD = False


@pytest.mark.parametrize("child_side", [False, True])
def test_codec_keeps_exact_types(child_side):
    value = {"t": (1, 2.5, True, None, "s"), "l": [1, [2]], 3: np.float32(1.5), "i": np.int64(7),
             "a": np.arange(6, dtype=np.float32).reshape(2, 3), "big": 2**80, "nan": float("nan"),
             "c": 1 + 2j, "b": b"\x00\x01", "set": {1, 2}, "dt": np.dtype("float64"), "k": np.float64,
             "tensor": torch.arange(4.0, dtype=torch.float64).requires_grad_(True),
             "half": torch.ones(2, dtype=torch.bfloat16), "size": torch.Size([2, 3]), "tdt": torch.float16}
    back = roundtrip(value, child_side)
    assert type(back["t"]) is tuple and back["t"] == (1, 2.5, True, None, "s")
    assert type(back["t"][0]) is int and type(back["t"][2]) is bool
    assert type(back["l"]) is list and back["l"] == [1, [2]]
    assert type(back[3]) is np.float32 and back[3] == np.float32(1.5)
    assert type(back["i"]) is np.int64
    assert type(back["a"]) is np.ndarray and back["a"].dtype == np.float32 and back["a"].shape == (2, 3)
    assert back["big"] == 2**80 and back["nan"] != back["nan"] and back["c"] == 1 + 2j and back["b"] == b"\x00\x01"
    assert back["set"] == {1, 2} and back["dt"] == np.dtype("float64") and back["k"] is np.float64
    assert type(back["tensor"]) is torch.Tensor and back["tensor"].dtype == torch.float64
    assert back["tensor"].requires_grad
    assert back["half"].dtype == torch.bfloat16 and type(back["size"]) is torch.Size and back["tdt"] is torch.float16


def test_codec_refuses_what_is_not_plain_data():
    class Sneaky(np.ndarray):
        pass

    for value in (np.zeros(2).view(Sneaky), np.array([object()]), lambda: 1, torch.nn.Parameter(torch.ones(1))):
        with pytest.raises(_child.Unsendable):
            roundtrip(value)


def test_protocol_never_unpickles():
    array = np.array([{"a": 1}], dtype=object)
    import io
    import pickle

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    with pytest.raises((ValueError, _child.ProtocolError)):
        _child.decode({"$array": 0}, [buffer.getvalue()], None)
    with pytest.raises(_child.ProtocolError):
        _child.decode({"$pickle": pickle.dumps(1).hex()}, [], None)


# --- stand-ins --------------------------------------------------------------------------------------

def test_student_exceptions_come_back_as_the_same_builtin_type():
    error = student_exception({"type": "ValueError", "builtin": "ValueError", "message": "kernel_size must be >= 1"})
    assert type(error) is ValueError and str(error) == "kernel_size must be >= 1"
    custom = student_exception({"type": "PoolError", "builtin": "ValueError", "message": "bad stride"})
    assert isinstance(custom, ValueError) and type(custom).__name__ == "PoolError"
    exiting = student_exception({"type": "SystemExit", "builtin": "BaseException", "message": "0"})
    assert isinstance(exiting, Exception) and "SystemExit" in str(exiting)


def tiny_lesson(solution: str, tests: dict[str, str], prelude: str = "import numpy as np\nimport torch\n"
                "from course.checks import check_array, check_value, check_raises, check_avoids\n",
                block: tuple = ()) -> Lesson:
    return Lesson("tiny", "tiny.ipynb", Path("/nonexistent"), Path("/nonexistent"),
                  [Cell("setup", "prelude", prelude)], [], [Cell("answer", "solution", solution, index=1)],
                  {"answer": ""}, {"answer": "code"},
                  [Cell(name, "test", source, points=1.0, index=2 + i) for i, (name, source) in enumerate(tests.items())],
                  list(block))


def verdicts_of(lesson, solution_source, limits=FAST):
    result = run_tests(lesson, {"answer": solution_source}, limits, uid=sandbox_uid(900))
    return {t.grade_id: t for t in result.tests}, result


def test_stand_ins_return_plain_data_and_refuse_to_be_judged_by_student_code():
    solution = (
        "import numpy as np\n"
        "class Yes:\n    def __eq__(self, other):\n        return True\n    def __bool__(self):\n        return True\n"
        "def double(x):\n    return x * 2\n"
        "def yes():\n    return Yes()\n"
        "def picky(k):\n    if k < 1:\n        raise ValueError(f'kernel_size must be >= 1, got {k}')\n    return k\n"
        "def as_tensor(x):\n    return torch.as_tensor(x) * 2\n"
        "def via_helper(x):\n    return as_tensor(x)\n"
        "scale = 3\n"
    )
    tests = {
        "arrays": "check_array(double(np.ones(3)), np.full(3, 2.0), 'double')\nprint('ok')",
        "tensors": "check_array(as_tensor(np.ones(2)), torch.full((2,), 2.0, dtype=torch.float64), 't')\nprint('ok')",
        "values": "check_value(scale, 3, 'scale')\nprint('ok')",
        "errors": "check_raises(ValueError, ['kernel_size'], picky, 0)\nprint('ok')",
        "always_equal": "assert yes() == 1, 'student objects do not decide comparisons'\nprint('ok')",
        "truthiness": "assert yes(), 'nor truth'\nprint('ok')",
        "source": "check_avoids(double, ['torch'], 'double')\nprint('ok')",
        "helper_source": "check_avoids(via_helper, ['torch'], 'via_helper')\nprint('ok')",
    }
    verdicts, _ = verdicts_of(tiny_lesson(solution, tests), solution)
    assert verdicts["arrays"].passed and verdicts["tensors"].passed and verdicts["values"].passed
    assert verdicts["errors"].passed
    assert not verdicts["always_equal"].passed
    assert not verdicts["truthiness"].passed
    assert verdicts["source"].passed  # only what defines `double` is inspected, as inspect.getsource would
    assert not verdicts["helper_source"].passed and "torch" in verdicts["helper_source"].message  # and its helpers


def test_hidden_inputs_are_drawn_from_the_run_seed_which_the_record_keeps():
    """The parent draws the inputs from (run seed, cell seed) and the child sees exactly those: one seed
    gives the same verdicts twice, another seed other inputs; the seed goes into the verdicts, the record
    and the verdict cache's key."""
    import course.checks
    from autograder.grading.intake import Intake
    from autograder.grading.submission import Submission, verdict_key

    prelude = "import numpy as np\nfrom course.checks import check_value, random_input\n"
    solution = "def echo(x):\n    return x\n"
    tests = {"echo": "x = random_input((2, 3), np.float64, seed=4)\nprint(repr(echo(x).tolist()))",
             "nonzero": "x = random_input((3, 3), np.float64, seed=5)\n"
                        "check_value(int(np.count_nonzero(echo(x))), 9, 'no zero')\nprint('ok')"}
    lesson = tiny_lesson(solution, tests, prelude=prelude)

    def graded(seed):
        result = run_tests(lesson, {"answer": solution}, FAST, uid=sandbox_uid(900), seed=seed)
        return result, [(t.grade_id, t.passed, t.output, t.message) for t in result.tests]

    first, once = graded(11)
    _, again = graded(11)
    _, other = graded(12)
    assert first.seed == 11 and once == again, "one seed, the same verdicts"
    assert once[0][2] != other[0][2], "another seed, other inputs"
    with course.checks.grading(run_seed=11):
        drawn = course.checks.random_input((2, 3), np.float64, seed=4)
    assert once[0][2].strip() == repr(drawn.tolist()), "the child got what the parent drew"
    assert course.checks.current() == course.checks.Grading(), "run_tests leaves no grader's state behind"
    assert not once[1][1] or not other[1][1] or any(not graded(s)[1][1][1] for s in range(13, 40)), \
        "some run seed draws zeros (ReLU or integer inputs), which standard-normal inputs never hold"
    record = Submission("ann", lesson, Intake("ok", "", {"answer": solution})).record(first)
    assert record.seed == 11 and record.as_dict()["seed"] == 11
    assert run_tests(lesson, {"answer": solution}, FAST, uid=sandbox_uid(900)).seed is not None, "a fresh seed"
    assert verdict_key("content", FAST, 11, "namespaces") != verdict_key("content", FAST, 12, "namespaces")


def test_a_rerun_resumes_an_unfinished_runs_seed(tmp_path):
    from autograder.grading.submission import GradingRun

    first = GradingRun.open(tmp_path, limits=FAST).seed
    assert GradingRun.open(tmp_path, limits=FAST).seed == first, "a run that did not finish is resumed with its seed"
    given = GradingRun.open(tmp_path, limits=FAST, seed=5)
    assert given.seed == 5 and GradingRun.open(tmp_path, limits=FAST).seed == 5, "a given seed is the run's seed"
    given.finish()
    assert GradingRun.open(tmp_path, limits=FAST).seed != 5, "after a finished run, a fresh seed"


def test_helpers_marked_runs_with_student_code_are_shipped_to_the_child():
    prelude = ("import numpy as np\nimport builtins\nfrom course.checks import runs_with_student_code, check_value\n"
               "describe = runs_with_student_code(builtins.repr)\n")
    solution = "class Pool:\n    def __repr__(self):\n        return 'Pool(k=2)'\npool = Pool()\n"
    tests = {"shipped": "check_value(describe(pool), 'Pool(k=2)', 'repr in the child')\nprint('ok')",
             "local": "check_value(describe(3), '3', 'plain call stays here')\nprint('ok')"}
    verdicts, _ = verdicts_of(tiny_lesson(solution, tests, prelude=prelude), solution)
    assert verdicts["shipped"].passed, verdicts["shipped"].message
    assert verdicts["local"].passed


def test_a_forbidden_module_cannot_be_imported_by_student_code():
    solution = "def pool(x):\n    mod = __import__('to' + 'rch')\n    return 1\n"
    tests = {"uses": "check_value(pool(1), 1, 'pool')\nprint('ok')",
             "avoids": "check_avoids(pool, ['torch'], 'pool')\nprint('ok')"}
    lesson = tiny_lesson(solution, tests, prelude="import numpy as np\nimport torch\n"
                         "from course.checks import check_value, check_avoids\n", block=("torch",))
    verdicts, _ = verdicts_of(lesson, solution)
    assert not verdicts["uses"].passed and "torch" in verdicts["uses"].message
    # both layers hold: the import is refused in the child, and the source check refuses __import__
    assert not verdicts["avoids"].passed and "__import__" in verdicts["avoids"].message


def test_the_grader_resolves_a_set_up_name_the_solution_uses():
    """``F`` comes from the set-up, not from the student's cells: the parent resolves it through its own
    run of the set-up, so ``F.conv2d`` is torch there as in the notebook; the student's own helper named
    ``reference`` is theirs."""
    prelude = ("import numpy as np\nimport torch\nimport torch.nn.functional as F\n"
               "from course.checks import check_value, check_avoids\n")
    solution = ("def reference(x):\n    return x\n"
                "def honest(x):\n    return reference(x)\n"
                "def cheat(x):\n    return F.conv2d(x, torch.ones(1, 1, 1, 1))\n")
    tests = {"honest": "check_avoids(honest, ['reference', 'avg_pool2d'], 'honest')\nprint('ok')",
             "cheat": "check_avoids(cheat, ['conv2d'], 'cheat')\nprint('ok')",
             "cheat_by_module": "check_avoids(cheat, ['functional'], 'cheat')\nprint('ok')"}
    verdicts, _ = verdicts_of(tiny_lesson(solution, tests, prelude=prelude), solution)
    assert verdicts["honest"].passed, verdicts["honest"].message
    assert not verdicts["cheat"].passed and "F.conv2d (torch.nn.functional.conv2d)" in verdicts["cheat"].message
    assert not verdicts["cheat_by_module"].passed and "torch.nn.functional" in verdicts["cheat_by_module"].message


# --- containment and limits --------------------------------------------------------------------------

PROBE = f"""
import os, resource, socket
def readable(path):
    try:
        return len(os.listdir(path)) if os.path.isdir(path) else len(open(path, 'rb').read(16))
    except OSError:
        return -1
def writable(path):
    try:
        with open(path, 'w') as handle:
            handle.write('x')
        os.remove(path)
        return True
    except OSError:
        return False
try:
    socket.create_connection(('127.0.0.1', 22), timeout=1).close()
    network = 'connected'
except OSError as exc:
    network = type(exc).__name__
probe = dict(uid=os.getuid(), pid=os.getpid(), env=sorted(os.environ), cwd=sorted(os.listdir('.')),
             source=readable('{REPO}/source'), tests=readable('{REPO}/tests'), autograder=readable('{REPO}/autograder'),
             course=readable('{REPO}/course'), release_write=writable('{REPO}/release/owned.txt'),
             network=network, nproc=resource.getrlimit(resource.RLIMIT_NPROC)[0],
             fsize=resource.getrlimit(resource.RLIMIT_FSIZE)[0], memory=resource.getrlimit(resource.RLIMIT_AS)[0])
"""


def sandbox(source: str, limits: Limits = FAST) -> Sandbox:
    box = Sandbox([{"id": "prelude", "kind": "prelude", "source": "import os"},
                   {"id": "answer", "kind": "solution", "source": source}],
                  limits=limits, hide=hidden_paths(REPO), uid=sandbox_uid(901))
    outcomes = box.start()
    assert all(o.ok for o in outcomes), outcomes
    return box


def ask(box: Sandbox, message: dict, seconds: float = 5):
    reply, blobs = box.request(message, [], time.monotonic() + seconds)
    return _child.decode(reply["ok"], blobs, lambda node: node) if "ok" in reply else reply


def test_containment_the_child_sees_only_what_it_may():
    os.environ["NBGRADER_EXECUTION"] = "autograde"  # must not reach the child
    try:
        box = sandbox(PROBE)
    finally:
        del os.environ["NBGRADER_EXECUTION"]
    try:
        probe = ask(box, {"op": "get", "name": "probe"})
    finally:
        box.close()
    mode = containment()
    print("containment here:", mode.describe(), "| child saw:", probe)
    assert not [k for k in probe["env"] if "NBGRADER" in k or "GRADE" in k]
    assert probe["cwd"] == [] or probe["cwd"] == [".matplotlib"]
    assert probe["course"] > 0, "the course helpers must stay readable"
    assert probe["fsize"] == FAST.file_bytes and probe["memory"] == FAST.memory_bytes
    if mode.namespaces:
        assert probe["source"] <= 0 and probe["tests"] <= 0 and probe["autograder"] <= 0
        assert probe["network"] != "connected"
        # PID 1 of its own namespace, but for a cold child of root: there bubblewrap's init is PID 1 (no --as-pid-1,
        # so the parent-death signal reaches the namespace) and the child its first process
        assert probe["pid"] == (2 if mode.drop_uid and not warm_here() else 1), probe["pid"]
    if mode.drop_uid:
        assert probe["uid"] >= 61000 and probe["nproc"] == FAST.nproc
        assert probe["release_write"] is False
    if not mode.namespaces:
        pytest.skip(f"containment here is {mode.mode}: instructor paths and network are not isolated")


def test_a_loop_ignoring_sigint_is_killed_within_the_limit():
    box = sandbox("import signal\ndef spin():\n    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                  "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    while True:\n        pass\n")
    target = ask(box, {"op": "get", "name": "spin"})
    started = time.monotonic()
    with pytest.raises(TimeoutFault):
        box.request({"op": "call", "target": {"$ref": target["$ref"]}, "args": [], "kwargs": {"$dict": []}}, [],
                    started + 2)
    assert time.monotonic() - started < 2 + 5
    assert box.proc.poll() is not None


def test_a_memory_bomb_ends_as_memory_and_the_parent_stays_small():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    box = sandbox("def bomb():\n    data = b'x' * (1 << 20)\n    while True:\n        data = data + data\n")
    target = ask(box, {"op": "get", "name": "bomb"})
    with pytest.raises(MemoryFault):
        box.request({"op": "call", "target": {"$ref": target["$ref"]}, "args": [], "kwargs": {"$dict": []}}, [],
                    time.monotonic() + 30)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024, f"the grader grew by {grown_kib / 1024:.0f} MiB"


def test_a_flood_of_output_is_capped_and_costs_the_parent_nothing():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    box = Sandbox([{"id": "answer", "kind": "solution",
                    "source": "import os, sys\nprint('x' * (200 << 20))\n"
                              "try:\n    [os.write(1, b'y' * (1 << 20)) for _ in range(200)]\n"
                              "except OSError as exc:\n    print('stopped:', exc, file=sys.stderr)\nvalue = 42\n"}],
                  limits=FAST, hide=[], uid=sandbox_uid(902))
    try:
        outcomes = box.start()
        assert ask(box, {"op": "get", "name": "value"}) == 42
    finally:
        box.close()
    assert len(outcomes[0].stdout) <= FAST.output_chars + 100 and "dropped" in outcomes[0].stdout
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024


def test_a_crashed_child_is_reported_and_the_next_start_is_clean():
    box = sandbox("import os\ndef die():\n    os._exit(7)\n")
    target = ask(box, {"op": "get", "name": "die"})
    with pytest.raises(CrashFault) as caught:
        box.request({"op": "call", "target": {"$ref": target["$ref"]}, "args": [], "kwargs": {"$dict": []}}, [],
                    time.monotonic() + 5)
    assert "the student's code ended its process (exit status 7)" in str(caught.value)  # after student code ran
    again = sandbox("value = 1\n")
    try:
        assert ask(again, {"op": "get", "name": "value"}) == 1
    finally:
        again.close()


# --- nbgrader -------------------------------------------------------------------------------------------


def written_test_cells(tests: dict[str, str], record) -> "nbformat.NotebookNode":
    """A notebook of one graded test cell per ``{grade_id: source}``, with the record's verdicts written into it
    as the plugin writes them into a student's graded notebook."""
    from types import SimpleNamespace

    from autograder.grading.nbgrader_plugin import TrustedExecute

    cells = [nbformat.v4.new_code_cell(tests[g], metadata={"nbgrader": {"grade": True, "solution": False,
             "grade_id": g, "points": 1, "locked": True, "schema_version": 3}}) for g in tests]
    nb = nbformat.v4.new_notebook(cells=cells)
    writer = TrustedExecute()
    writer.output_chars = 2000
    writer._write(nb, SimpleNamespace(tests=record.tests, cells=[], status="ok"))
    return nb

def test_a_short_answer_to_read_scores_0_is_recorded_and_flagged_for_manual_grading(tmp_path, monkeypatch):
    """A ``NeedsReview`` raised by the trusted test cell (an answer in words none of the accepted forms
    matches) is a verdict of its own: 0 points, the answer kept in the record; in nbgrader's gradebook the
    cell scores 0 and needs a manual grade, which then counts. A wrong structured answer is an ordinary
    failure, and so is a student's own exception of that name."""

    import nbgrader.api
    from nbgrader.api import Gradebook

    from autograder.coursedir import put_bin_on_path
    from autograder.grading.intake import Intake
    from autograder.grading.nbgrader_plugin import REVIEW, TrustedSaveAutoGrades
    from autograder.grading.submission import Submission

    solution = ("q1 = 'fewer parameters, but it does not reduce overfitting'\nq2 = 'b'\n"
                "class NeedsReview(AssertionError):\n    pass\n"
                "def sly():\n    raise NeedsReview('q3: look at me')\n")
    key = "{'answer': ['fewer parameters so less overfitting']}"
    tests = {"kc_q1": f"check_words(q1, 'q1', {key})\nprint('ok')",
             "kc_q2": "check_value(q2, 'c', 'q2')\nprint('ok')",
             "kc_q3": "sly()\nprint('ok')"}
    lesson = tiny_lesson(solution, tests, prelude="from course.checks import check_value, check_words\n")
    result = run_tests(lesson, {"answer": solution}, FAST, uid=sandbox_uid(900), seed=1)
    verdicts = {t.grade_id: t for t in result.tests}
    assert verdicts["kc_q1"].review == "fewer parameters, but it does not reduce overfitting"
    assert verdicts["kc_q1"].points == 0 and verdicts["kc_q1"].message.startswith("NeedsReview: q1:")
    assert verdicts["kc_q2"].review is None and verdicts["kc_q2"].points == 0, "a wrong letter: 0, no review"
    assert verdicts["kc_q3"].review is None and verdicts["kc_q3"].message.startswith("NeedsReview:"), "the student's"
    record = Submission("ann", lesson, Intake("ok", "", {"answer": solution})).record(result)
    assert record.score == 0 and "needs a look (0 until scored by hand): kc_q1" in record.reason
    assert [t["review"] for t in record.tests] == [verdicts["kc_q1"].review, None, None]

    nb = written_test_cells(tests, record)
    assert [c.outputs[0].ename for c in nb.cells] == ["NeedsReview", "WrongValue", "StudentError"]
    assert "your instructor will read this answer" in nb.cells[0].outputs[0].evalue
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    put_bin_on_path()
    # a new gradebook asks the alembic command for the schema's version (6 s); a stamp is all it writes
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", lambda: "test")
    with Gradebook(db) as gb:
        gb.add_assignment("tiny")
        gb.add_notebook("tiny", "tiny")
        for grade_id in tests:
            gb.add_grade_cell(grade_id, "tiny", "tiny", max_score=1, cell_type="code")
        gb.add_student("ann")
        with __import__("warnings").catch_warnings():  # nbgrader's add_submission warns under SQLAlchemy 2.1
            __import__("warnings").simplefilter("ignore")
            gb.add_submission("tiny", "ann")
    info = {"notebook": "tiny", "assignment": "tiny", "student": "ann", "db_url": db, REVIEW: ["kc_q1"]}
    TrustedSaveAutoGrades().preprocess(nb, {"nbgrader": info})
    with Gradebook(db) as gb:
        grades = {g: gb.find_grade(g, "tiny", "tiny", "ann") for g in tests}
        assert {g: (grade.auto_score, grade.needs_manual_grade) for g, grade in grades.items()} == \
            {"kc_q1": (0, True), "kc_q2": (0, False), "kc_q3": (0, False)}
        assert gb.find_submission("tiny", "ann").needs_manual_grade
        grades["kc_q1"].manual_score = 1.0  # what formgrader's score box writes
        gb.db.commit()
        assert gb.find_grade("kc_q1", "tiny", "tiny", "ann").score == 1.0


def test_a_wrong_value_is_recorded_whole_and_written_into_the_graded_notebook_without_the_expected_one():
    """A check's ``WrongValue`` (raised in the parent) keeps both messages in the record; the graded
    notebook shows the withheld one, and ``reveal_expected`` (the instructor's release) the full one, on
    the cells that show their verdict's withheld message only. A student's own exception of that name
    has no withheld form: its message is the student's."""
    from types import SimpleNamespace

    from autograder.grading.intake import Intake
    from autograder.outputs import reveal_expected
    from autograder.grading.submission import Submission

    solution = ("q4 = 'b'\nby_hand = [1.0, 2.5]\nclass WrongValue(AssertionError):\n    pass\n"
                "def sly():\n    raise WrongValue('q5: expected nothing')\n")
    tests = {"kc_q4": "check_value(q4, 'c', 'q4')\nprint('ok')",
             "by_hand": "check_array(np.asarray(by_hand), np.array([1.0, 2.0]), 'by_hand')\nprint('ok')",
             "kc_q5": "sly()\nprint('ok')"}
    lesson = tiny_lesson(solution, tests, prelude="import numpy as np\nfrom course.checks import check_array, "
                         "check_value\n")
    result = run_tests(lesson, {"answer": solution}, FAST, uid=sandbox_uid(900), seed=1)
    verdicts = {t.grade_id: t for t in result.tests}
    assert verdicts["kc_q4"].message == "WrongValue: q4: expected 'c' (str) but got 'b' (str)"
    assert verdicts["kc_q4"].withheld == "WrongValue: q4: got 'b' (str), not the expected value"
    assert "expected 2.0" in verdicts["by_hand"].message and "2.0" not in verdicts["by_hand"].withheld
    assert verdicts["kc_q5"].withheld is None and verdicts["kc_q5"].message == "WrongValue: q5: expected nothing"
    record = Submission("ann", lesson, Intake("ok", "", {"answer": solution})).record(result)
    assert [t["withheld"] for t in record.tests] == [verdicts[g].withheld for g in tests]

    nb = written_test_cells(tests, record)
    shown = [c.outputs[0].evalue for c in nb.cells]
    assert shown == ["q4: got 'b' (str), not the expected value", verdicts["by_hand"].withheld.split(": ", 1)[1],
                     "q5: expected nothing"]
    nb.cells[1].outputs[0].evalue = "graded by another run"  # not this record's verdict: left as it is
    assert reveal_expected(nb, SimpleNamespace(tests=record.tests, status="ok"), set(), 2000) == ["kc_q4"]
    assert [c.outputs[0].evalue for c in nb.cells] == ["q4: expected 'c' (str) but got 'b' (str)",
                                                       "graded by another run", "q5: expected nothing"]
    assert nb.cells[0].outputs[0].ename == "WrongValue"


def test_nbgrader_config_wires_the_trusted_grader():
    from traitlets.config import Config

    c = Config()
    configure(c)
    steps = c.Autograde.autograde_preprocessors
    assert steps[0].endswith("TrustedExecute") and not any(s.endswith(".Execute") for s in steps)
    for kept in ("IgnorePattern", "LimitOutput", "SaveAutoGrades", "AssignLatePenalties"):
        assert any(s.endswith(kept) for s in steps)
    config_text = (REPO / "nbgrader_config.py").read_text()
    assert "configure as _configure_trusted_grading" in config_text


@pytest.mark.slow
def test_plain_nbgrader_autograde_is_trusted_too(tmp_path, lesson1):
    """Without the batch's phase 1, ``nbgrader autograde`` computes verdicts itself; a cheat that patches
    the comparisons in a shared kernel gets nothing, and the gradebook gets the trusted score."""
    import sqlite3

    from autograder.coursedir import copy_course, run_nbgrader as nbgrader

    from autograder.variants import hand_sources

    copy_course(REPO, tmp_path, [LESSON1])
    sources = hand_sources("mallory", lesson1.reference_sources())  # her own numbers (the graded identity's)
    sources["worked_example"] = ("np.allclose = lambda *a, **k: True\nby_hand_avg = np.zeros((2, 2))\n"
                                 "by_hand_max = np.zeros((2, 2))\n")
    sources["knowledge_check"] += '\nlabel = "\udcff"  # a lone surrogate (valid JSON) must not stop nbgrader\n'
    folder = tmp_path / "submitted" / "mallory" / LESSON1
    folder.mkdir(parents=True)
    (folder / lesson1.notebook_name).write_text(json.dumps(sanitized_notebook(lesson1, sources)))
    with __import__("tempfile").TemporaryDirectory() as scratch:
        made = nbgrader(tmp_path, "generate_assignment", LESSON1, f"--CourseDirectory.release_directory={scratch}")
    assert made.returncode == 0, made.stderr[-2000:]
    graded = nbgrader(tmp_path, "autograde", LESSON1, "--TrustedExecute.test_seconds=10", "--TrustedExecute.seed=99")
    assert graded.returncode == 0, graded.stderr[-3000:]
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        rows = dict(db.execute("SELECT base_cell.name, grade.auto_score FROM grade JOIN base_cell"
                               " ON grade.cell_id = base_cell.id").fetchall())
    assert rows["worked_example_tests"] == 0
    assert sum(rows.values()) == lesson1.max_score - 2
    from autograder.records import load_record

    assert load_record(tmp_path, LESSON1, "mallory").seed == 99, "the configured seed drew the hidden inputs"
    again = nbgrader(tmp_path, "autograde", LESSON1, "--force", "--TrustedExecute.seed=100")
    assert again.returncode == 0, again.stderr[-3000:]
    assert load_record(tmp_path, LESSON1, "mallory").seed == 100, "a record of another seed is recomputed"


def test_cell_metadata_is_validated_as_jsonschema_does_with_each_schema_checked_once():
    import jsonschema
    from nbgrader.nbgraderformat import common
    from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

    from autograder.coursedir import SchemaCheckedOnce

    schema = MetadataValidatorV3().schema
    good = {"grade": True, "grade_id": "forward_tests", "locked": True, "points": 6, "schema_version": 3,
            "solution": False, "task": False}
    checked = SchemaCheckedOnce()
    for _ in range(3):
        checked.validate(good, schema)
        jsonschema.validate(good, schema)
    assert len(checked._validators) == 1, "the schema is checked and compiled once"
    for bad in ({**good, "points": "six"}, {**good, "grade_id": 7}, {"schema_version": 3}):
        with pytest.raises(jsonschema.ValidationError) as theirs:
            jsonschema.validate(bad, schema)
        with pytest.raises(jsonschema.ValidationError) as ours:
            checked.validate(bad, schema)
        assert ours.value.message == theirs.value.message
    assert checked.ValidationError is jsonschema.ValidationError, "the rest of jsonschema is jsonschema's"
    assert common.jsonschema is jsonschema, "nbgrader's own module is left alone outside autograde_in_process"
