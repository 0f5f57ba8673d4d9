"""Everything a sandboxed child or a submission hands the grader is untrusted data (issue 32):

* every field of every message the child sends is checked by type and range before the parent uses it,
  and a malformed message after student code ran is the student's fault (a crash of that cell or test, 0
  for what it cannot do), never a grader error: student code can write to the child's reply pipe;
* text (lone surrogates, control characters) is made safe before anything is written;
* phase 2 stages and writes each student's notebook on its own: one bad submission never stops the
  gradebook of the others.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import corpus
from autograder.grading import _child, gradebook, load_lesson, parse_submission, sanitized_notebook
from autograder.grading.intake import Intake, read_submission
from autograder.grading.lesson import Cell, Lesson
from autograder.grading.nbgrader_plugin import TrustedExecute
from autograder.grading.submission import Submission
from autograder.records import STATUS_GRADER_ERROR, Record, load_record, save_record
from autograder.grading.sandbox import Limits, containment, sandbox_uid
from autograder.grading.untrusted import checked, decoded
from autograder.safe_text import clean_text
from autograder.grading.verdicts import TestResult as Result, Verdicts, run_tests
from workflow_fakes import make_course
from shared import FAST, REPO

LESSON1 = "lesson1_by_hand"
ProtocolError = _child.ProtocolError


# --- messages: the one check ------------------------------------------------------------------------

CAPTURE = {"text": "", "dropped": 0}
DONE = {"op": "cell_done", "index": 2, "stdout": CAPTURE, "stderr": CAPTURE, "seconds": 0.5}
ERROR = {"type": "ValueError", "builtin": "ValueError", "message": "bad", "memory": False}
BOUNDS = {"cells": 3, "first": 1, "cell": 2, "output_chars": 100}


@pytest.mark.parametrize("message, expected, rule", [
    ({**DONE, "index": "not a number"}, ("cell_done",), "'index' of a 'cell_done' message must be 2"),
    ({**DONE, "index": 1}, ("cell_done",), "must be 2"),  # not the cell that is running
    ({**DONE, "index": True}, ("cell_done",), "must be 2"),  # a bool is no index
    ({**DONE, "seconds": "soon"}, ("cell_done",), "'seconds'"),
    ({**DONE, "seconds": float("nan")}, ("cell_done",), "'seconds'"),
    ({**DONE, "seconds": -1}, ("cell_done",), "'seconds'"),
    ({**DONE, "raise": "boom"}, ("cell_done",), "'raise' of a 'cell_done' message must be an object"),
    ({**DONE, "raise": {**ERROR, "builtin": "Grader"}}, ("cell_done",), "'builtin' of a 'error' message"),
    ({**DONE, "raise": {**ERROR, "message": 7}}, ("cell_done",), "'message' of a 'error' message must be text"),
    ({**DONE, "raise": {**ERROR, "memory": "yes"}}, ("cell_done",), "'memory'"),
    ({**DONE, "stdout": {"text": 5, "dropped": 0}}, ("cell_done",), "'text' of a 'capture' message"),
    ({**DONE, "stdout": {"text": "x" * 101, "dropped": 0}}, ("cell_done",), "at most 100 characters"),
    ({**DONE, "stdout": {"text": "", "dropped": -3}}, ("cell_done",), "'dropped'"),
    ({k: v for k, v in DONE.items() if k != "stderr"}, ("cell_done",), "lacks its field 'stderr'"),
    ({**DONE, "verdict": "pass"}, ("cell_done",), "unknown fields verdict"),
    ({"op": "cell_start", "index": 3}, ("cell_start", "ready"), "in [1, 3)"),  # past the last cell
    ({"op": "cell_start", "index": 0}, ("cell_start", "ready"), "in [1, 3)"),  # a cell that already ran
    ({"op": "ready", "names": "answer"}, ("cell_start", "ready"), "'names'"),
    ({"op": "ready", "names": ["answer", 3]}, ("cell_start", "ready"), "'names'"),
    ({"op": "ready", "names": []}, ("cell_done",), "unexpected message 'ready'"),  # out of turn
    ({"op": ["cell_done"]}, ("cell_done",), "unexpected message"),
    ({"ok": 1, "op": "reply", "stdout": CAPTURE, "stderr": CAPTURE, "seconds": 0}, ("reply",), "unknown fields op"),
    ({"ok": 1, "raise": [], "stdout": CAPTURE, "stderr": CAPTURE, "seconds": 0}, ("reply",), "'raise'"),
    ({"op": "hello", "active": [], "pid": 1}, ("hello",), "'active'"),
])
def test_a_malformed_message_is_refused_naming_its_field_and_rule(message, expected, rule):
    with pytest.raises(ProtocolError, match=None) as refused:
        checked(message, expected, **BOUNDS)
    assert rule in str(refused.value), str(refused.value)


def test_a_well_formed_message_passes_with_its_text_cleaned():
    message = {**DONE, "raise": ERROR, "stdout": {"text": "\udcff\x1b[2J ok\n", "dropped": 4}}
    assert checked(message, ("cell_done",), **BOUNDS) == {**message, "stdout": {"text": "\ufffd\\x1b[2J ok\n",
                                                                                 "dropped": 4}}
    assert checked({"op": "cell_start", "index": 2}, ("cell_start", "ready"), **BOUNDS)["index"] == 2
    assert checked({"op": "ready", "names": ["a", "b"]}, ("cell_start", "ready"), **BOUNDS)["names"] == ["a", "b"]
    reply = {"ok": {"$tuple": [1]}, "stdout": CAPTURE, "stderr": CAPTURE, "seconds": 0}
    assert checked(reply, ("reply",), **BOUNDS) == reply
    assert checked({"op": "hello", "active": {"uid": 0}, "pid": 1}, ("hello",))["active"] == {"uid": 0}


def nested(depth: int) -> list:
    node: list = []
    for _ in range(depth):
        node = [node]
    return node


def forged(shape: str, data: bytes) -> bytes:
    """``.npy`` bytes whose header says ``shape`` (float64) and whose data is ``data``."""
    header = ("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }" % shape).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data


def npy(array: np.ndarray) -> bytes:
    blobs: list[bytes] = []
    _child.encode(array, blobs, None)
    return blobs[0]


@pytest.mark.parametrize("node, blobs, why", [
    (nested(5000), [], "RecursionError"),  # deeper than decode goes
    ({"$array": -1}, [npy(np.zeros(2))], "no blob -1"),  # the last blob, by Python's rules
    ({"$array": "0"}, [npy(np.zeros(2))], "no blob '0'"),
    ({"$array": 0}, [npy(np.zeros(2))[:-8]], "holds 8 bytes"),
    ({"$array": 0}, [forged("(9999999999999,)", bytes(16))], "holds 16 bytes"),  # refused before any allocation
    ({"$array": 0}, [npy(np.zeros(2)).replace(b"<f8", b"<q9")], "TypeError"),
    ({"$float": []}, [], "TypeError"),
    ({"$range": ["x"]}, [], "ValueError"),
    ({"$torchdevice": "warp:99"}, [], "RuntimeError"),
    ({"$ref": "1", "type": "f", "callable": True}, [], "'$ref' of a 'ref' message"),
    ({"$ref": 1, "type": ["f"], "callable": True}, [], "'type' of a 'ref' message"),
])
def test_a_malformed_value_is_a_protocol_error(node, blobs, why):
    with pytest.raises(ProtocolError) as refused:
        decoded(node, blobs, lambda item: item)
    assert why in str(refused.value), str(refused.value)


def test_a_well_formed_value_is_read():
    blobs = [npy(np.arange(6.0).reshape(2, 3))]
    value = decoded({"$tuple": [{"$array": 0}, {"$ref": 4, "type": "m.F", "callable": True}]}, blobs,
                    lambda item: ("ref", item["$ref"], item["type"]))
    assert value[0].tolist() == [[0, 1, 2], [3, 4, 5]] and value[1] == ("ref", 4, "m.F")
    assert decoded(nested(200), [], None) == nested(200)


# --- the attack: student code writes to the child's reply pipe ---------------------------------------

TO_GRADER = '''
import fcntl, json, os, stat, struct

def to_grader(body):
    """One frame on every pipe this process may only write to: the child's reply pipe to the grader."""
    body = body if isinstance(body, bytes) else json.dumps(body).encode()
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                os.write(fd, struct.pack("!II", len(body), 0) + body)
        except OSError:
            pass
'''
DEEP = 'b\'{"ok": \' + b"[" * 100000 + b"]" * 100000 + b"}"'


def two_cells(tests: dict[str, str]) -> Lesson:
    """A lesson of two solution cells (``first`` binds ``one``, ``second`` defines ``two()``) and ``tests``,
    one point each."""
    return Lesson("tiny", "tiny.ipynb", Path("/nonexistent"), Path("/nonexistent"),
                  [Cell("setup", "prelude", "import numpy as np\nfrom course.checks import check_value\n")], [],
                  [Cell("first", "solution", "one = 1", index=1),
                   Cell("second", "solution", "def two():\n    return 2", index=2)],
                  {"first": "", "second": ""}, {"first": "code", "second": "code"},
                  [Cell(name, "test", source, points=1.0, index=3 + i)
                   for i, (name, source) in enumerate(tests.items())])


def graded(lesson: Lesson, sources: dict[str, str]) -> tuple[dict[str, Result], Verdicts, Record]:
    verdicts = run_tests(lesson, sources, FAST, uid=sandbox_uid(905), seed=1)
    record = Submission("mallory", lesson, Intake("ok", "", sources)).record(verdicts)
    return {t.grade_id: t for t in verdicts.tests}, verdicts, record


@pytest.mark.parametrize("payload", [
    "{'op': 'cell_done', 'index': 'not a number'}",  # the case of the issue: int('not a number')
    "{'op': 'cell_done', 'index': 2, 'raise': 'boom', 'stdout': {}, 'stderr': {}, 'seconds': 0}",
    "{'op': 'cell_done', 'index': 2, 'stdout': {'text': '', 'dropped': 0}, 'stderr': {'text': '', 'dropped': 0},"
    " 'seconds': 'soon'}",
    DEEP,  # JSON nested too deep to read
    "{'op': 'cell_done', 'index': 2, 'stdout': {'text': '', 'dropped': 0}, 'stderr': {'text': '', 'dropped': 0},"
    " 'seconds': 0}",  # well formed: the child's own cell_done then comes out of turn
], ids=["index-type", "raise-type", "seconds-type", "deep-json", "out-of-turn"])
def test_a_malformed_message_from_a_solution_cell_is_that_cells_crash_not_a_grader_error(payload):
    lesson = two_cells({"t_one": "check_value(one, 1, 'one')", "t_two": "check_value(two(), 2, 'two')"})
    attack = TO_GRADER + f"to_grader({payload})\ndef two():\n    return 2\n"
    tests, verdicts, record = graded(lesson, {"first": "one = 1", "second": attack})
    assert tests["t_one"].passed, "the other cell's answer keeps its point"
    assert not tests["t_two"].passed and tests["t_two"].points == 0, "the attacking cell is not run again"
    crashed = {c["id"]: c for c in verdicts.cells}["second"]
    assert crashed["fault"] == "crash" and "malformed message" in crashed["error"]["message"], crashed
    assert record.status == "crash" and "must not write to the grader's pipes" in record.reason


@pytest.mark.parametrize("payload", ["{'raise': 'boom'}", DEEP, "{'ok': {'$array': 0}, 'stdout': {}}"],
                         ids=["raise-type", "deep-json", "missing-blob"])
def test_a_malformed_reply_from_a_graded_call_is_that_tests_crash_and_the_next_test_is_clean(payload):
    attack = TO_GRADER + f"def two():\n    to_grader({payload})\n    return 2\n"
    lesson = two_cells({"t_two": "check_value(two(), 2, 'two')", "t_one": "check_value(one, 1, 'one')"})
    tests, verdicts, record = graded(lesson, {"first": "one = 1", "second": attack})
    assert not tests["t_two"].passed and tests["t_two"].fault == "crash", tests["t_two"]
    assert "malformed message" in tests["t_two"].message or "unreadable" in tests["t_two"].message
    assert tests["t_one"].passed, "the next test reads its own answer (a fresh child), not the attacker's stale reply"
    assert record.status == "crash"


def test_honest_extremes_are_well_formed_messages_not_crashes():
    """The other side of the ranges: output past the cap, an exception with a 300-character class name
    and a 10 000-character message are what an honest child sends (capped by the child), never a crash."""
    honest = ('print("y" * 10000)\nLong = type("E" * 300, (ValueError,), {})\n'
              'def two():\n    raise Long("x" * 10000)\n')
    lesson = two_cells({"t_two": "two()", "t_one": "check_value(one, 1, 'one')"})
    tests, verdicts, record = graded(lesson, {"first": "one = 1", "second": honest})
    assert tests["t_one"].passed and not tests["t_two"].passed and tests["t_two"].fault is None, tests["t_two"]
    assert "x" * 100 in tests["t_two"].message
    cell = {c["id"]: c for c in verdicts.cells}["second"]
    assert cell["ok"] and cell["fault"] is None and "more characters" in cell["stdout"] and len(cell["stdout"]) < 2100
    assert record.status == "ok"


# --- text: lone surrogates and control characters ------------------------------------------------------

def test_clean_text_replaces_lone_surrogates_and_escapes_control_characters():
    assert clean_text("a\udcffb\ud800") == "a\ufffdb\ufffd"
    assert clean_text("\x1b[2J\x00\x07\x7f\x85") == "\\x1b[2J\\x00\\x07\\x7f\\x85"
    kept = "tab\t, new\nline, return\r, π, 😀, 漢字"
    assert clean_text(kept) == kept, "ordinary text, tabs and line ends are kept"
    assert clean_text(clean_text("\udcff\x1b")) == clean_text("\udcff\x1b"), "idempotent"
    source = 'banner = "\x1b[1m"'
    namespace: dict = {}
    exec(clean_text(source), namespace)
    assert namespace["banner"] == "\x1b[1m", "inside a string literal the escape means the same character"
    clean_text(kept + "\udcff").encode("utf-8")


def test_a_lone_surrogate_in_a_solution_source_is_taken_as_u_fffd_and_the_notebook_can_be_staged(tmp_path):
    lesson = load_lesson(LESSON1, REPO)
    sources = dict(lesson.reference_sources())
    sources["output_size"] += '\nlabel = "\udcff"  # a lone surrogate, valid in JSON\nbell = "\x07"\n'
    data = json.dumps(sanitized_notebook(lesson, sources)).encode()  # what a student's file holds
    taken = parse_submission(data, lesson)
    assert taken.status == "ok"
    assert 'label = "\ufffd"' in taken.sources["output_size"] and 'bell = "\\x07"' in taken.sources["output_size"]
    nbformat.write(sanitized_notebook(lesson, taken.sources), str(tmp_path / "staged.ipynb"))  # no UnicodeEncodeError
    assert "\ufffd" in (tmp_path / "staged.ipynb").read_text(encoding="utf-8")


@pytest.mark.parametrize("secret, kept", [
    ("0123456789abcdef" * 8, True),                    # what nbgrader submit writes: token_hex(64)
    ("../../../etc/passwd", False), ("ab\ncd", False), ("", False), ("f" * 2000, False), ("ABCDEF", False),
])
def test_the_submission_secret_is_staged_byte_for_byte_only_when_it_is_what_nbgrader_writes(tmp_path, secret, kept):
    """nbgrader release_feedback files each student's feedback under the secret of the submission (a hub's
    exchange), so staging carries it into autograded/; the file is the student's, so anything but hex is dropped."""
    root = make_course(tmp_path)
    lesson = load_lesson(LESSON1, root)
    folder = root / "submitted" / "ann" / LESSON1
    folder.mkdir(parents=True)
    nbformat.write(sanitized_notebook(lesson, dict(lesson.reference_sources())), str(folder / lesson.notebook_name))
    (folder / "submission_secret.txt").write_text(secret)
    assert gradebook.stage(root, [Submission.read(root, "ann", LESSON1)]) == {}
    staged = root / "records" / "staging" / "ann" / LESSON1 / gradebook.SUBMISSION_SECRET
    assert (staged.read_bytes() == secret.encode()) if kept else not staged.exists()


def test_a_record_holds_only_writable_text_and_so_does_the_notebook_written_from_it(tmp_path):
    lesson = load_lesson(LESSON1, REPO)
    hostile = "\udcff\x1b]0;owned\x07"
    tests = [Result(t.id, 0.0, t.points, False, f"AssertionError: got {hostile}", 0.0, None, "") for t in lesson.tests]
    cells = [{"id": i, "ok": False, "error": {"type": "E" + hostile, "builtin": "Exception", "message": hostile},
              "fault": None, "stdout": hostile, "stderr": hostile, "seconds": 0.0} for i in lesson.code_solution_ids]
    verdicts = Verdicts(lesson.name, "key", tests, cells, [f"x: {hostile}"], "containment", 0.0, 1)
    record = Submission("mallory", lesson, Intake("ok", "", {}, [hostile])).record(verdicts)
    text = json.dumps(record.as_dict(), ensure_ascii=False)
    assert "\udcff" not in text and "\x1b" not in text and "\x07" not in text and "\ufffd\\\\x1b]0;owned" in text
    save_record(tmp_path, record)
    assert load_record(tmp_path, lesson.name, "mallory") == record
    nb = sanitized_notebook(lesson, {})
    writer = TrustedExecute()
    writer.output_chars = 2000
    writer._write(nb, record)
    nbformat.write(nb, str(tmp_path / "autograded.ipynb"))  # what nbgrader writes: no UnicodeEncodeError


# --- phase 2: each submission on its own ---------------------------------------------------------------

def passing_record(root: Path, lesson, student: str, stdout: str = "") -> Record:
    """The record phase 1 gives a correct submission (saved), without running it: phase 2 alone is tested."""
    taken = read_submission(root / "submitted" / student / lesson.name, lesson)
    tests = [Result(t.id, t.points, t.points, True, "", 0.0, None, "passed\n") for t in lesson.tests]
    cells = [{"id": i, "ok": True, "error": None, "fault": None, "stdout": stdout, "stderr": "", "seconds": 0.0}
             for i in lesson.code_solution_ids]
    verdicts = Verdicts(lesson.name, lesson.content_key(taken.sources), tests, cells, [], "test", 0.0, None,
                        containment().level)  # graded at this machine's level, which the default floor asks for
    record = Submission(student, lesson, taken).record(verdicts)
    save_record(root, record)
    return record


@pytest.mark.slow
def test_one_bad_submission_never_stops_the_gradebook_of_the_others(tmp_path, monkeypatch):
    """alice is honest; mallory's source holds a lone surrogate and her code printed one; bob's notebook
    cannot be staged (a full disk, say) and nbgrader fails on carol's: alice and mallory are written,
    bob and carol become grader errors with the reason, and nothing stops."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    root = make_course(tmp_path, (LESSON1,))
    lesson = load_lesson(LESSON1, root)
    reference = {c.name: c for c in corpus.cases(LESSON1)}["reference"]
    for student in ("alice", "bob", "carol"):
        corpus.build(reference, root, student)
    sources = dict(lesson.reference_sources())
    sources["output_size"] += '\n\nlabel = "\udcff"\n'
    folder = root / "submitted" / "mallory" / LESSON1
    folder.mkdir(parents=True)
    (folder / lesson.notebook_name).write_text(json.dumps(sanitized_notebook(lesson, sources)))
    records = [passing_record(root, lesson, "alice"), passing_record(root, lesson, "bob"),
               passing_record(root, lesson, "carol"), passing_record(root, lesson, "mallory", "\udcff\x1b[2J")]

    real_write = nbformat.write

    def disk_full_for_bob(nb, path, *args, **kwargs):
        if f"{os.sep}bob{os.sep}" in str(path):
            raise OSError(28, "No space left on device")
        return real_write(nb, path, *args, **kwargs)

    real_verdicts = TrustedExecute._write

    def fails_on_carol(self, nb, record, *args):
        if record.student == "carol":
            raise RuntimeError("nbgrader's writer broke on this notebook")
        return real_verdicts(self, nb, record, *args)

    monkeypatch.setattr(gradebook.nbformat, "write", disk_full_for_bob)
    monkeypatch.setattr(TrustedExecute, "_write", fails_on_carol)
    graded = [(Submission.read(root, r.student, LESSON1), r) for r in records]  # as phase 1 read them
    assert gradebook.write_gradebook(root, graded) == [], "nothing that belongs to no one submission failed"
    status = {r.student: r.status for r in records}
    assert status == {"alice": "ok", "bob": STATUS_GRADER_ERROR, "carol": STATUS_GRADER_ERROR, "mallory": "ok"}
    bob, carol = records[1], records[2]
    assert "not the student" in bob.reason and "could not be staged" in bob.reason and "No space" in bob.reason
    assert "not the student" in carol.reason and "nbgrader's writer broke" in carol.reason, carol.reason
    assert load_record(root, LESSON1, "bob").status == STATUS_GRADER_ERROR, "the record on disk says so too"
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        scores = {s.student_id: s.score for s in gb.assignment_submissions(LESSON1)}
    assert scores.get("alice") == lesson.max_score and scores.get("mallory") == lesson.max_score
    assert "bob" not in scores and not scores.get("carol"), "no score for the grader's failures"
    written = (root / "autograded" / "mallory" / LESSON1 / lesson.notebook_name).read_text(encoding="utf-8")
    assert "\ufffd" in written and "\\x1b[2J" in written and "\x1b" not in written


# --- what a frame costs the parent: bounded, whatever the child sends (issue 45) -------------------------

_READER = r"""
import json, os, sys, time, tracemalloc
from autograder.grading import _child
from autograder.grading.untrusted import decoded
read_fd, limit = int(sys.argv[1]), int(sys.argv[2])
tracemalloc.start()  # every allocation from here on, NumPy's arrays included
channel = _child.Channel(read_fd, -1, limit=limit)
try:
    message, blobs = channel.recv(time.monotonic() + 120)
    value = decoded(message.get("ok"), blobs, lambda item: None)
    outcome = "read"
except _child.ProtocolError as exc:
    outcome = f"refused: {exc}"
print(json.dumps({"outcome": outcome, "grew_mib": tracemalloc.get_traced_memory()[1] / 2**20}))
"""


def _frame_cost(frame: bytes, limit: int) -> dict:
    """What reading ``frame`` (``Channel.recv`` and :func:`decoded`, as the grader reads a reply) costs a fresh
    process: its outcome and the peak of the memory it allocated for it (tracemalloc), MiB."""
    import subprocess
    import threading

    read_fd, write_fd = os.pipe()
    reader = subprocess.Popen([sys.executable, "-c", _READER, str(read_fd), str(limit)], pass_fds=(read_fd,),
                              stdout=subprocess.PIPE, text=True, cwd=REPO)
    os.close(read_fd)

    def write():
        try:
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(frame)
        except BrokenPipeError:  # refused before it read everything
            pass

    writer = threading.Thread(target=write)
    writer.start()
    out, _ = reader.communicate(timeout=300)
    writer.join()
    return json.loads(out.strip().splitlines()[-1])


def _raw_frame(json_bytes: bytes, blobs: list[bytes] = ()) -> bytes:
    return b"".join([struct.pack("!II", len(json_bytes), len(blobs)), *[struct.pack("!Q", len(b)) for b in blobs],
                     json_bytes, *blobs])


@pytest.mark.slow
def test_the_largest_frames_the_limits_allow_cost_the_parent_a_fixed_amount():
    """A child may write any frame to its reply pipe. Its JSON is refused past 16 MiB (before it is read) and
    past 800 000 values (before it is parsed); its blobs are read once into one buffer each and become arrays
    without a copy. Before: one 250 MB JSON frame made the grading process grow by 7.3 GiB."""
    limit = Limits().reply_bytes
    cap = _child.MAX_JSON_BYTES
    costs = {
        "250 MB of JSON": _frame_cost(_raw_frame(b'{"op":"reply","ok":[' + b"[]," * (250_000_000 // 3) + b"0]}"), limit),
        "16 MiB of JSON, empty lists": _frame_cost(_raw_frame(
            b'{"op":"reply","ok":[' + b"[]," * ((cap - 40) // 3) + b"0]}"), limit),
        "16 MiB of JSON, 790 000 values": _frame_cost(_raw_frame(
            b'{"op":"reply","ok":[' + b"[[]]," * 197_000 + b'"' + b"x" * (cap - 40 - 5 * 197_000) + b'"]}'), limit),
    }
    array = np.zeros((limit - (1 << 20)) // 8, dtype=np.float64)
    costs["one array of 255 MiB"] = _frame_cost(_raw_frame(b'{"op":"reply","ok":{"$array":0}}', [_child._npy(array)]),
                                                limit)
    for what, cost in costs.items():
        print(f"{what}: {cost['outcome'][:60]}, peak grew {cost['grew_mib']:.0f} MiB")
    assert costs["250 MB of JSON"]["outcome"].startswith("refused: frame too large")
    assert costs["16 MiB of JSON, empty lists"]["outcome"].startswith("refused: a frame's JSON holds more than")
    assert costs["16 MiB of JSON, 790 000 values"]["outcome"] == "read"
    assert costs["one array of 255 MiB"]["outcome"] == "read"
    assert all(cost["grew_mib"] <= (limit >> 20) + 64 for cost in costs.values()), costs
    assert costs["16 MiB of JSON, 790 000 values"]["grew_mib"] <= 128


@pytest.mark.parametrize("phases, problem", [
    ({"start_cpu": 0.01, "contain_cpu": 0.0, "setup_cpu": 1.5, "cells_cpu": 2}, None),
    ({"grader_cpu": 1.0}, "keys among"),  # a phase the child has no word about
    ({"cells_cpu": -1.0}, "seconds >= 0"),
    ({"cells_cpu": float("nan")}, "seconds >= 0"),
    ({"cells_cpu": "1"}, "seconds >= 0"),
    ([0.1], "keys among"),
])
def test_the_childs_own_phases_in_ready_are_checked_like_every_field(phases, problem):
    message = {"op": "ready", "names": ["f"], "phases": phases}
    if problem is None:
        assert checked(message, ("ready",))["phases"] == {k: float(v) for k, v in phases.items()}
        assert "phases" not in checked({"op": "ready", "names": []}, ("ready",)), "an older child sends none"
    else:
        with pytest.raises(_child.ProtocolError, match=problem):
            checked(message, ("ready",))
