"""The sandbox policy (one place for the child's limits, read by both graders) and grader faults in the
child's set-up (a missing package the lesson needs is the grader's fault, a blocked one is skipped)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from traitlets.config import Config

from autograder.trusted import load_lesson
from autograder.trusted.lesson import Cell
from autograder.trusted.nbgrader_plugin import TrustedExecute
from autograder.trusted.policy import SandboxPolicy, load_policy
from autograder.trusted.sandbox import GraderFault, Limits, Sandbox, hidden_paths, sandbox_uid
from autograder.trusted.verdicts import run_tests

REPO = Path(__file__).resolve().parent.parent
FAST = Limits(test_seconds=5, cell_seconds=5, start_seconds=60, memory_bytes=1 << 30, output_chars=2000)


# --- the policy ------------------------------------------------------------------------------------

def test_the_repository_policy_gives_the_default_limits():
    assert load_policy(REPO).limits() == Limits()


def test_a_value_set_in_nbgrader_config_reaches_both_graders(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.SandboxPolicy.test_seconds = 7.5\n"
                                                 "c.SandboxPolicy.memory_mb = 512\n")
    limits = load_policy(tmp_path).limits()  # what `avgpool-course grade` reads
    assert (limits.test_seconds, limits.memory_bytes) == (7.5, 512 << 20)
    assert limits.cell_seconds == Limits().cell_seconds  # the rest keeps its default
    # `nbgrader autograde`: TrustedExecute has no limit traits of its own, it reads the same policy
    plugin = TrustedExecute(config=Config({"SandboxPolicy": {"test_seconds": 7.5, "memory_mb": 512}}))
    assert not {"test_seconds", "cell_seconds", "memory_mb"} & set(plugin.trait_names())
    assert load_policy(tmp_path, plugin.config).limits() == limits


def test_a_missing_config_file_gives_the_defaults(tmp_path):
    assert load_policy(tmp_path).limits() == Limits()


@pytest.mark.parametrize("trait", ["test_seconds", "memory_mb", "output_chars"])
def test_a_nonpositive_limit_is_refused_with_its_name(trait):
    with pytest.raises(ValueError, match=f"SandboxPolicy.{trait} must be positive"):
        SandboxPolicy(**{trait: 0}).limits()


# --- set-up imports --------------------------------------------------------------------------------

def start(prelude: str, block: list[str]) -> Sandbox:
    box = Sandbox([{"id": "prelude", "kind": "prelude", "source": prelude},
                   {"id": "answer", "kind": "solution", "source": "x = 1"}],
                  limits=FAST, hide=hidden_paths(REPO), uid=sandbox_uid(902), block=block)
    box.start()
    return box


def test_a_blocked_import_in_the_set_up_is_skipped_and_the_child_starts():
    box = start("import os\nimport torch\nimport json", ["torch"])
    try:
        assert all(o.ok for o in box.outcomes), box.outcomes
        assert box.student_ran and not box.dead
    finally:
        box.kill()


def test_a_missing_set_up_package_stops_the_child_before_student_code():
    box = start("import os\nimport no_such_package_for_the_lesson", ["torch"])
    try:
        assert not box.student_ran
        assert not all(o.ok for o in box.outcomes)
        assert "set-up import failed" in box.outcomes[-1].error["message"]
        assert "no_such_package_for_the_lesson" in box.outcomes[-1].error["message"]
    finally:
        box.kill()


def test_a_missing_set_up_package_is_a_grader_fault_not_a_student_zero():
    lesson = load_lesson("lesson1_by_hand", REPO)
    broken = dataclasses.replace(lesson, prelude=lesson.prelude + [
        Cell("broken-setup", "prelude", "import no_such_package_for_the_lesson")])
    sources = {c.id: c.source for c in lesson.solutions}
    with pytest.raises(GraderFault, match="no_such_package_for_the_lesson"):
        run_tests(broken, sources, FAST, uid=sandbox_uid(903))
    # the same lesson with its own set-up grades the reference solution fully
    verdicts = run_tests(lesson, sources, FAST, uid=sandbox_uid(903))
    assert all(t.passed for t in verdicts.tests), [t for t in verdicts.tests if not t.passed]


# --- forbidden packages are absent -----------------------------------------------------------------

PROBE = """
import os, sys, importlib
found = sorted(p for p in sys.path for name in ("torch", "torchgen", "functorch")
               if os.path.exists(os.path.join(p, name, "__init__.py")))
for key in [k for k in sys.modules if k.split(".")[0] == "torch"]:
    del sys.modules[key]
try:
    importlib.import_module("torch").nn.functional.avg_pool2d
    imported = True
except (ImportError, AttributeError):
    imported = False
"""


def probe(block: list[str]) -> dict:
    import time

    box = Sandbox([{"id": "prelude", "kind": "prelude", "source": "import numpy"},
                   {"id": "answer", "kind": "solution", "source": PROBE}],
                  limits=FAST, hide=hidden_paths(REPO), uid=sandbox_uid(904), block=block)
    try:
        box.start()
        assert box.outcomes[-1].ok, box.outcomes
        answers = {}
        for name in ("found", "imported"):
            reply, _ = box.request({"op": "get", "name": name}, [], time.monotonic() + 30)
            answers[name] = reply["ok"]
        return answers
    finally:
        box.kill()


@pytest.mark.skipif(not __import__("autograder.trusted.sandbox", fromlist=["x"]).containment().namespaces,
                    reason="needs mount namespaces (Linux)")
def test_a_forbidden_package_has_no_files_in_the_child_and_an_allowed_one_does():
    assert probe(["torch"]) == {"found": [], "imported": False}  # lesson 3: no spelling of an import reaches it
    allowed = probe([])  # lesson 4: torch is there
    assert allowed["imported"] is True and allowed["found"]


@pytest.mark.skipif(not __import__("autograder.trusted.sandbox", fromlist=["x"]).containment().namespaces,
                    reason="needs mount namespaces (Linux)")
def test_the_course_package_and_the_interpreter_are_read_only_even_for_a_root_child(tmp_path):
    import time

    import course

    target = Path(course.__file__).resolve().parent / "written-by-the-child.txt"
    source = f"""
import errno, sys
try:
    open({str(target)!r}, "w").write("x")
    result = "written"
except OSError as exc:
    result = errno.errorcode.get(exc.errno, str(exc.errno))
"""
    box = Sandbox([{"id": "prelude", "kind": "prelude", "source": "import os"},
                   {"id": "answer", "kind": "solution", "source": source}],
                  limits=FAST, hide=hidden_paths(REPO), uid=None, block=[])  # uid None: the child keeps root
    try:
        box.start()
        reply, _ = box.request({"op": "get", "name": "result"}, [], time.monotonic() + 30)
    finally:
        box.kill()
        written = target.exists()
        target.unlink(missing_ok=True)
    assert not written and reply["ok"] == "EROFS", reply
