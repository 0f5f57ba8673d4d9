"""The sandbox policy (one place for the child's limits, read by both graders), the containment level
(stated in every record; ``c.SandboxPolicy.require`` refuses to grade below it) and grader faults in the
child's set-up (a missing package the lesson needs is the grader's fault, a blocked one is skipped)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from traitlets.config import Config

import corpus
from autograder.grading import _child, batch, gradebook, load_lesson, sandbox
from autograder.grading.intake import Intake
from autograder.grading.lesson import Cell
from autograder.grading.nbgrader_plugin import TrustedExecute
from autograder.grading.policy import SandboxPolicy, load_policy
from autograder.grading.submission import GradingRun, Submission, grade_one
from autograder.grading.sandbox import (LEVELS, Containment, GraderFault, Limits, Sandbox, containment, hidden_paths,
                                        level_meets, sandbox_uid)
from autograder.grading.verdicts import run_tests
from workflow_fakes import make_course
from shared import FAST, REPO


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


def test_both_graders_reuse_or_recompute_in_exactly_the_same_cases(tmp_path, monkeypatch):
    """``avgpool-course grade`` (:func:`grade_one` of a :class:`Submission` read from ``submitted/``) and ``nbgrader autograde``
    (:class:`TrustedExecute`) after a first grading: the same code, limits and seed reuse its verdicts;
    other limits, another seed or other code are computed again, by both alike."""
    import shutil
    import sys

    from autograder.grading import verdicts as verdicts_module
    from autograder.grading.intake import sanitized_notebook

    root = make_course(tmp_path / "course", ("lesson1_by_hand",))
    lesson = load_lesson("lesson1_by_hand", root)
    cases = {c.name: c for c in corpus.cases("lesson1_by_hand")}
    computed: list[int] = []
    real = verdicts_module.run_tests

    def counted(*args, **kwargs):
        computed.append(1)
        return real(*args, **kwargs)

    for module in [m for name, m in sys.modules.items() if name.startswith("autograder.grading")]:
        if getattr(module, "run_tests", None) is real:  # wherever a grader looks it up
            monkeypatch.setattr(module, "run_tests", counted)
    policy = {"test_seconds": 5, "cell_seconds": 5, "start_seconds": 60, "memory_mb": 1024, "output_chars": 2000}
    assert load_policy(root, Config({"SandboxPolicy": policy})).limits() == FAST
    corpus.build(cases["reference"], root, "alice")
    grade_one(Submission.read(root, "alice", lesson.name), GradingRun(root, FAST, 1))  # FAST: ints, the policy: floats
    assert computed == [1]
    first = tmp_path / "first"
    shutil.copytree(root / "records", first)
    other = cases["bug_swapped_pool"]

    def recomputed(grader: str, limits: dict, seed: int, case) -> bool:
        """Whether ``grader`` computes verdicts again, from the state the first grading left."""
        shutil.rmtree(root / "records")
        shutil.copytree(first, root / "records")
        corpus.build(case, root, "alice")
        computed.clear()
        if grader == "cli":
            run = GradingRun(root, load_policy(root, Config({"SandboxPolicy": limits})).limits(), seed)
            grade_one(Submission.read(root, "alice", lesson.name), run)
        else:
            plugin = TrustedExecute(config=Config({"SandboxPolicy": limits,
                                                   "TrustedExecute": {"course_root": str(root), "seed": seed}}))
            plugin.preprocess(sanitized_notebook(lesson, case.sources(lesson)),
                              {"nbgrader": {"assignment": lesson.name, "student": "alice", "notebook": "x"}})
        return bool(computed)

    changes = {"nothing": (policy, 1, cases["reference"]), "limits": ({**policy, "test_seconds": 6}, 1,
               cases["reference"]), "seed": (policy, 2, cases["reference"]), "code": (policy, 1, other)}
    decided = {grader: {change: recomputed(grader, *how) for change, how in changes.items()}
               for grader in ("cli", "nbgrader")}
    assert decided["cli"] == {"nothing": False, "limits": True, "seed": True, "code": True}
    assert decided["nbgrader"] == decided["cli"]


def test_a_missing_config_file_gives_the_defaults(tmp_path):
    assert load_policy(tmp_path).limits() == Limits()


@pytest.mark.parametrize("trait", ["test_seconds", "memory_mb", "output_chars"])
def test_a_nonpositive_limit_is_refused_with_its_name(trait):
    with pytest.raises(ValueError, match=f"SandboxPolicy.{trait} must be positive"):
        SandboxPolicy(**{trait: 0}).limits()


@pytest.mark.parametrize("setting, value, lowest", [
    ("nofile", 15, 16), ("nofile", 1 << 40, 16), ("msgqueue_kb", -1, 0), ("memlock_kb", 1 << 40, 0),
])
def test_a_child_rlimit_setting_out_of_its_range_is_refused_with_its_name_and_rule(setting, value, lowest):
    """Below its lowest value, or above the grading process's own hard limit (which a child made without
    privileges cannot exceed), a setting is refused naming it and the range."""
    import resource

    name = {"nofile": "RLIMIT_NOFILE", "msgqueue_kb": "RLIMIT_MSGQUEUE", "memlock_kb": "RLIMIT_MEMLOCK"}[setting]
    hard = resource.getrlimit(getattr(resource, name))[1]
    if value > lowest and hard == resource.RLIM_INFINITY:
        pytest.skip(f"this process's hard {name} is unlimited: no upper bound to pass")
    rule = (f"at least {lowest}" if hard == resource.RLIM_INFINITY else rf"from {lowest} to \d+, this grading "
            rf"process's own hard {name} \(a child made without privileges cannot get more\)")
    with pytest.raises(ValueError, match=rf"SandboxPolicy.{setting} must be {rule}, got {value}"):
        SandboxPolicy(**{setting: value}).limits()
    assert SandboxPolicy(**{setting: lowest}).limits()  # the lowest value itself is allowed


#: Opens pipes until 60 descriptors are held or the kernel refuses: ``opened`` (how many), ``refused`` (its error).
OPEN_MANY = """import os
opened, refused, kept = 0, None, []
while opened < 60 and refused is None:
    try:
        kept.extend(os.pipe())
        opened += 2
    except OSError as exc:
        refused = exc.strerror
"""


@pytest.mark.parametrize("nofile, refused", [(32, "Too many open files"), (256, None)])
def test_the_policys_descriptor_limit_reaches_the_child(tmp_path, nofile, refused):
    """``c.SandboxPolicy.nofile`` in nbgrader_config.py is the child's RLIMIT_NOFILE: lowered to 32, a child
    that opens 60 descriptors is stopped short of 32; at the default it opens them all."""
    (tmp_path / "nbgrader_config.py").write_text(f"c = get_config()\nc.SandboxPolicy.nofile = {nofile}\n")
    limits = load_policy(tmp_path).limits()
    assert limits.nofile == nofile
    box = Sandbox([{"id": "answer", "kind": "solution", "source": OPEN_MANY}],
                  limits=dataclasses.replace(FAST, nofile=limits.nofile), hide=hidden_paths(REPO), uid=sandbox_uid(908))
    try:
        box.start()
        assert all(o.ok for o in box.outcomes), box.outcomes
        reply, blobs = box.request({"op": "get", "name": "refused"}, [], time.monotonic() + 30)
        said = _child.decode(reply["ok"], blobs, None)
        reply, blobs = box.request({"op": "get", "name": "opened"}, [], time.monotonic() + 30)
        opened = _child.decode(reply["ok"], blobs, None)
    finally:
        box.close()
    assert said == refused, (said, opened)
    assert opened < nofile if refused else opened == 60, opened


# --- the containment level ------------------------------------------------------------------------

#: A TA's machine as issue 28 found it: user namespaces, but no root and no cgroup it may make.
TA_MACHINE = Containment("user-namespace", True, True, False, True, cgroup=False, lacks=(
    ("uid", "the grader does not run as root"), ("cgroup", "the grader does not run as root")))
NO_NAMESPACES = Containment("rlimits-only", False, False, False, True, cgroup=True, lacks=(
    ("namespaces", "unshare --user failed: unshare: unshare failed: Operation not permitted"),
    ("uid", "the grader does not run as root")))


def test_a_level_meets_itself_and_every_level_below_it_and_no_other():
    assert [level for level in LEVELS if level_meets("user-namespace+cgroup", level)] == \
        ["rlimits-only", "rlimits-only+cgroup", "user-namespace", "user-namespace+cgroup"]
    assert [level for level in LEVELS if level_meets("namespaces", level)] == \
        ["rlimits-only", "user-namespace", "namespaces"]
    assert level_meets("", "rlimits-only") and not level_meets("", "user-namespace")  # a record older than levels


@pytest.mark.parametrize("require", ["namespaces+cgroups", "root", "", "cgroup"])
def test_a_required_level_that_is_not_a_level_is_refused_with_its_name(require):
    with pytest.raises(ValueError, match="SandboxPolicy.require must be .platform. or one of rlimits-only, "):
        SandboxPolicy(require=require).limits()


def test_the_shortfall_is_one_sentence_naming_what_the_machine_lacks():
    assert TA_MACHINE.level == "user-namespace" and NO_NAMESPACES.level == "rlimits-only+cgroup"
    assert TA_MACHINE.shortfall("user-namespace") == "" and NO_NAMESPACES.shortfall("rlimits-only+cgroup") == ""
    said = TA_MACHINE.shortfall("namespaces+cgroup")
    assert said == ("this machine gives the trusted grader user-namespace containment, below the namespaces+cgroup "
                    "that c.SandboxPolicy.require asks for: it lacks an unprivileged uid for the child (the grader "
                    "does not run as root) and a cgroup of the child's own (the grader does not run as root)")
    assert "cgroup" not in TA_MACHINE.shortfall("namespaces").split("lacks")[1]  # only what the level needs
    said = NO_NAMESPACES.shortfall("user-namespace")
    assert "lacks mount, network, PID, IPC and UTS namespaces (unshare --user failed" in said and "uid" not in said
    assert "\n" not in said and said.endswith("Operation not permitted); " + sandbox.INSTALL_HINT)


def test_bubblewrap_gives_the_namespaces_and_without_it_the_level_says_so(monkeypatch):
    """Where ``bwrap`` runs, cold children get their namespaces from it (root: ``namespaces``, another
    user: ``user-namespace``) and the description says so; without it the level is ``rlimits-only``,
    never a silent fallback, and the refusal names the missing command (under CI ``.ci/run`` installs it)."""
    import os
    import shutil
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("bubblewrap is Linux's")
    if shutil.which("bwrap") is None:
        assert not os.environ.get("CI"), "bwrap is missing: .ci/run installs Debian's bubblewrap"
        pytest.skip("bwrap is not installed here")
    assert containment().mode == ("namespaces" if os.geteuid() == 0 else "user-namespace")
    assert "cold children and the templates of warm ones under bubblewrap" in containment().describe()
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    without = sandbox.containment.__wrapped__()
    assert without.mode == "rlimits-only" and not without.namespaces and not without.via
    assert "no bwrap command on PATH); install bubblewrap (Debian" in without.shortfall("user-namespace")


def test_one_mount_plan_covers_fresh_folders_binds_back_what_the_child_needs_and_hides_the_rest(tmp_path):
    """``mount_plan`` is the one list of mounts bubblewrap makes (cold child, warm template): a fresh folder is
    covered and a needed path inside it bound back with traversable folders above it; a hidden path that
    the fresh folder already covers needs nothing, one outside is covered (a folder by a tmpfs, a file by
    /dev/null); an absent path is skipped."""
    fresh, other = tmp_path / "fresh", tmp_path / "other"
    venv = fresh / "a" / "b" / "venv"
    for folder in (venv / "torch", other / "source"):
        folder.mkdir(parents=True)
    (fresh / "secret.txt").write_text("x")
    (other / "gradebook.db").write_text("x")
    plan, made = sandbox.mount_plan(fresh=[[str(fresh), 1 << 20]], keep=[str(venv), str(other / "absent")], expose=[],
                                    hide=[str(fresh / "secret.txt"), str(venv / "torch"), str(other / "source"),
                                          str(other / "gradebook.db"), str(other / "absent")])
    assert plan == [["tmpfs", str(fresh), 1 << 20, 0o1777], ["dir", str(fresh / "a")], ["dir", str(fresh / "a" / "b")],
                    ["bind", str(venv)], ["tmpfs", str(venv / "torch"), 64 << 10, 0o755],
                    ["tmpfs", str(other / "source"), 64 << 10, 0o755], ["null", str(other / "gradebook.db")]]
    assert made == {"hidden": [str(fresh), str(venv / "torch"), str(other / "source"), str(other / "gradebook.db")],
                    "kept": [str(venv)]}
    command = sandbox.bwrap_command(["python"], root=True, plan=plan)
    assert command[-2:] == ["--", "python"] and command[0] == "bwrap"
    assert ["--perms", "1777", "--size", str(1 << 20), "--tmpfs", str(fresh), "--dir", str(fresh / "a")] == \
        command[command.index("--perms"):command.index("--perms") + 8]
    assert ["--ro-bind", str(venv), str(venv)] == command[command.index(str(venv)) - 1:command.index(str(venv)) + 2]
    assert ["--ro-bind", "/dev/null", str(other / "gradebook.db")] == command[-5:-2]


def test_a_needed_path_inside_another_is_bound_once_with_its_folder(tmp_path):
    """A venv and the course inside one fresh folder, one needed path inside another (the wheel's venv and its
    site-packages): the outer folder is bound once, first, whatever order they come in, and nothing is made
    inside a folder already bound back read-only (a "dir" there fails the child: read-only file system)."""
    fresh = tmp_path / "fresh"
    venv, site = fresh / "venv", fresh / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    for keep in ([str(site), str(venv)], [str(venv), str(site)]):
        plan, _ = sandbox.mount_plan(fresh=[[str(fresh), 1 << 20]], keep=keep, expose=[], hide=[])
        assert plan == [["tmpfs", str(fresh), 1 << 20, 0o1777], ["bind", str(venv)]], keep


def test_a_hidden_path_inside_a_hidden_folder_needs_no_mount(tmp_path):
    """The sample class inside the repository (make course): the repository's sample_class/ and the class's own
    sample_class/source are both instructor paths; the inner one is gone with the outer, whatever order they
    come in (a mount on it found no such path in the child and stopped every child)."""
    outer = tmp_path / "repo" / "sample_class"
    (outer / "source").mkdir(parents=True)
    (outer / "gradebook.db").write_text("x")
    for hide in ([str(outer / "source"), str(outer), str(outer / "gradebook.db")], [str(outer), str(outer / "source")]):
        plan, made = sandbox.mount_plan(fresh=[], keep=[], expose=[], hide=hide)
        assert [op for op in plan if op[0] != "mqueue"] == [["tmpfs", str(outer), 64 << 10, 0o755]], hide
        assert str(outer) in made["hidden"] and str(outer / "source") not in made["hidden"]


def test_below_the_required_level_nothing_is_graded_and_the_sentence_says_why(tmp_path, monkeypatch):
    root = make_course(tmp_path / "course", ("lesson1_by_hand",))
    corpus.build({c.name: c for c in corpus.cases("lesson1_by_hand")}["reference"], root, "alice")
    monkeypatch.setattr(sandbox.levels, "containment", lambda: TA_MACHINE)  # as a TA grades
    limits = Limits(require="namespaces")
    record = grade_one(Submission.read(root, "alice", "lesson1_by_hand"), GradingRun(root, limits, 1, use_cache=False))
    assert record.status == "grader-error" and record.score == 0.0
    assert record.reason.endswith(TA_MACHINE.shortfall("namespaces"))
    assert "(the grader does not run as root)" in record.reason
    with pytest.raises(batch.GradingError, match=r"^nothing was graded: this machine gives the trusted grader "
                                                 r"user-namespace containment, below the namespaces") as refused:
        batch.grade(root=root, limits=limits, progress=False, gradebook=False)
    assert "\n" not in str(refused.value)


def test_a_grader_fault_in_nbgrader_autograde_is_one_line_and_a_grader_error_record(tmp_path, monkeypatch):
    """nbgrader logs the traceback of what a preprocessor raises (``convert_notebooks``); a grader fault in
    ``TrustedExecute`` fails the submission (no score, nbgrader's non-zero exit) and logs one line."""
    import logging
    import traceback

    from autograder.grading.intake import sanitized_notebook
    from autograder.grading.nbgrader_plugin import TrustedGraderError
    from autograder.records import load_record

    root = make_course(tmp_path / "course", ("lesson1_by_hand",))
    lesson = load_lesson("lesson1_by_hand", root)
    monkeypatch.setattr(sandbox.levels, "containment", lambda: TA_MACHINE)
    plugin = TrustedExecute(config=Config({"SandboxPolicy": {"require": "namespaces"},
                                           "TrustedExecute": {"course_root": str(root)}}))
    logged: list[str] = []
    catcher = logging.Handler()
    catcher.emit = lambda record: logged.append(record.getMessage())
    plugin.log.addHandler(catcher)
    try:
        with pytest.raises(TrustedGraderError) as raised:
            plugin.preprocess(sanitized_notebook(lesson, lesson.reference_sources()),
                              {"nbgrader": {"assignment": lesson.name, "student": "alice", "notebook": "x"}})
        try:
            raise raised.value
        except TrustedGraderError:
            plugin.log.error(traceback.format_exc())  # what nbgrader does with it
    finally:
        plugin.log.removeHandler(catcher)
    said = TA_MACHINE.shortfall("namespaces")
    assert logged[-1] == f"the trusted grader failed on alice / {lesson.name} (not the student's fault; no score " \
                         f"written): {said}", logged
    assert not any("Traceback" in line for line in logged)
    record = load_record(root, lesson.name, "alice")
    assert record.status == "grader-error" and record.score == 0 and record.reason.endswith(said)
    # `avgpool-course grade` names that line as why nbgrader failed on the submission (else its last error)
    log = "\n".join(["[AutogradeApp | ERROR] There was an error processing assignment: x", f"[AutogradeApp | ERROR] "
                     f"{logged[-1]}", "[AutogradeApp | ERROR] Please see the above traceback for details"])
    assert gradebook.failure_line(log) == logged[-1][:500]
    assert gradebook.failure_line("Traceback ...\nValueError: bad cell\n[App | ERROR] see above") == "ValueError: bad cell"


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
    # the same lesson with its own set-up grades the reference solution fully, here at the level this
    # machine gives when that is the level required, and every record states it
    here = containment()
    verdicts = run_tests(lesson, sources, dataclasses.replace(FAST, require=here.level), uid=sandbox_uid(903))
    assert all(t.passed for t in verdicts.tests), [t for t in verdicts.tests if not t.passed]
    assert verdicts.level == here.level
    assert Submission("ann", lesson, Intake("ok", "", sources)).record(verdicts).level == here.level
    assert Submission("ann", lesson, Intake("invalid submission", "no notebook", {})).record(None).level == here.level


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


@pytest.mark.skipif(not __import__("autograder.grading.sandbox", fromlist=["x"]).containment().namespaces,
                    reason="needs mount namespaces (Linux)")
def test_a_forbidden_package_has_no_files_in_the_child_and_an_allowed_one_does():
    assert probe(["torch"]) == {"found": [], "imported": False}  # lesson 3: no spelling of an import reaches it
    allowed = probe([])  # lesson 4: torch is there
    assert allowed["imported"] is True and allowed["found"]


@pytest.mark.skipif(not __import__("autograder.grading.sandbox", fromlist=["x"]).containment().namespaces,
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


def test_a_new_mount_is_one_row_of_the_one_list_that_every_path_reads(tmp_path, monkeypatch):
    """``sandbox.mounts.MOUNTS`` is the one list of a child's mounts: a ``fresh`` row added to it (and only to
    it) is a tmpfs of mode 1777 in the cold child's plan and bubblewrap's line, made again by a warm child
    (``own_mounts``), and a ``cover`` row root's tmpfs of mode 0755; a folder in no row gets no mount. The ``host``, ``dev`` and ``proc`` rows start every bubblewrap line."""
    new_fresh, new_cover, elsewhere = tmp_path / "scratch", tmp_path / "others", tmp_path / "elsewhere"
    for folder in (new_fresh, new_cover, elsewhere):
        folder.mkdir()
    monkeypatch.setattr(sandbox.mounts, "MOUNTS", (*sandbox.mounts.MOUNTS, ("fresh", str(new_fresh), 1 << 20),
                                                   ("cover", str(new_cover), 1 << 20)))
    machine = Containment("namespaces", True, False, True, True)
    plan, made = sandbox.child_plan(machine.namespaces, machine.drop_uid)
    assert ["tmpfs", str(new_fresh), 1 << 20, 0o1777] in plan and ["tmpfs", str(new_cover), 1 << 20, 0o755] in plan
    assert not [op for op in plan if op[1] == str(elsewhere)] and str(new_fresh) in made["hidden"]
    command = sandbox.bwrap_command(["python"], root=True, plan=plan)
    assert ["--perms", "1777", "--size", str(1 << 20), "--tmpfs", str(new_fresh)] == \
        command[command.index(str(new_fresh)) - 5:command.index(str(new_fresh)) + 1]
    assert command[command.index("--new-session") + 1:command.index("--new-session") + 8] == \
        ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    own = sandbox.own_mounts(plan)
    assert own[0] == ["proc", "/proc"] and ["tmpfs", str(new_fresh), 1 << 20, 0o1777] in own
    assert not [op for op in own if op[1] == str(elsewhere)]


def test_a_warm_child_makes_only_its_fresh_folders_and_its_template_the_rest(tmp_path, monkeypatch):
    """The warm template's bubblewrap makes the whole mount plan (a covered folder is root's, mode 0755, with the
    venv bound back inside it); a forked child makes again only a fresh tmpfs on each folder anyone may write
    and its mqueue (``own_mounts``), and ``_child.make_mounts`` refuses any other mount. A needed path inside a
    fresh folder (a venv in /tmp), which the child would have to bind itself, makes the child cold."""
    fresh, cover = tmp_path / "fresh", tmp_path / "cover"
    venv, source = cover / "venv", tmp_path / "source"
    for folder in (fresh, venv, source):
        folder.mkdir(parents=True)
    plan, made = sandbox.mount_plan(fresh=[[str(fresh), 1 << 20]], cover=[[str(cover), 1 << 20]], keep=[str(venv)],
                                    expose=[], hide=[str(source)])
    mqueue = [op for op in plan if op[0] == "mqueue"]
    assert [op for op in plan if op[0] != "mqueue"] == [
        ["tmpfs", str(fresh), 1 << 20, 0o1777], ["tmpfs", str(cover), 1 << 20, 0o755], ["bind", str(venv)],
        ["tmpfs", str(source), 64 << 10, 0o755]]
    assert made["kept"] == [str(venv)] and str(cover) in made["hidden"]
    assert sandbox.own_mounts(plan, [[str(fresh), 1 << 20]]) == [["proc", "/proc"], ["tmpfs", str(fresh), 1 << 20, 0o1777],
                                                                *mqueue]
    inside = fresh / "venv"
    inside.mkdir()
    plan, _ = sandbox.mount_plan(fresh=[[str(fresh), 1 << 20]], keep=[str(inside)], expose=[], hide=[])
    assert ["bind", str(inside)] in sandbox.own_mounts(plan, [[str(fresh), 1 << 20]])
    with pytest.raises(OSError, match="only fresh folders"):
        _child.make_mounts([["bind", str(inside)]])
    template = sandbox.bwrap_command(["python"], root=True, plan=[], template=True)
    assert {"--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--dev", "--proc"} <= set(template)
    assert "--unshare-pid" not in template and "CAP_SYS_ADMIN" in template and "CAP_SYS_ADMIN" not in \
        sandbox.bwrap_command(["python"], root=True, plan=[])
    assert template[template.index("--ro-bind"):template.index("--ro-bind") + 3] == ["--ro-bind", "/", "/"]
    if not (containment().namespaces and sandbox.warm_here()):
        return
    cells = [{"id": "a", "kind": "solution", "source": "x = 1"}]
    assert Sandbox(cells, limits=FAST).warm
    real = sandbox.needed_paths
    monkeypatch.setattr(sandbox.mounts, "needed_paths", lambda: [*real(), "/tmp"])  # what a venv in /tmp asks for
    assert not Sandbox(cells, limits=FAST).warm


def test_a_warm_child_whose_own_mount_fails_never_runs_student_code(tmp_path, monkeypatch):
    """A fresh folder that the forked child cannot mount (a path its template does not have) stops the child
    before any student code, as a failing bubblewrap mount stops a cold one: the grader's fault, never a score."""
    if not (containment().namespaces and sandbox.warm_here()):
        pytest.skip("a warm child makes mounts of its own only where there are namespaces")
    real, absent = sandbox.own_mounts, str(tmp_path / "absent")  # under /tmp: the template's /tmp is its own
    monkeypatch.setattr(sandbox.mounts, "own_mounts", lambda plan, fresh=None: [*real(plan, fresh),
                                                                        ["tmpfs", absent, 1 << 20, 0o1777]])
    box = Sandbox([{"id": "a", "kind": "solution", "source": "x = 1"}], limits=FAST, imports=["json"])
    try:
        outcomes = box.start()
    finally:
        box.kill()
        templates = sandbox.process_default().templates  # no later test may meet this template
        for key in [k for k in templates if k[1] == ("json",)]:
            templates.pop(key).close()
    assert box.warm and not box.student_ran, outcomes
    assert outcomes[-1].id == "<start>" and absent in outcomes[-1].error["message"], outcomes
    assert outcomes[-1].error["message"].startswith("the grading process ended before any student code ran"), outcomes


# --- whose fault a child's end is, and how the grader knows (issue 45) ------------------------------------

SELF_KILL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\nx = 1"


def test_a_child_that_kills_itself_is_its_own_crash_not_a_memory_fault():
    """A SIGKILL that no out-of-memory killer sent (the child's own cgroup counted none) is what the student's
    code did: a crash, said so, never "memory"."""
    box = Sandbox([{"id": "answer", "kind": "solution", "source": SELF_KILL}],
                  limits=dataclasses.replace(FAST, warm=False), hide=hidden_paths(REPO), uid=sandbox_uid(902))
    try:
        outcomes = box.start()
    finally:
        box.kill()
    assert outcomes[-1].fault == "crash", outcomes
    assert "ended by SIGKILL" in outcomes[-1].error["message"]


@pytest.mark.parametrize("own_cgroup", [True, False], ids=["cgroup", "no-cgroup"])
def test_a_child_that_kills_itself_while_the_machines_count_rises_is_its_own_crash(monkeypatch, own_cgroup):
    """The machine's out-of-memory count (``/proc/vmstat``) is any process's to read: a child that waits for it to
    rise and then sends itself SIGKILL must not turn its 0 into a grader error. With a cgroup its own counters
    decide (they counted no kill); without one no counter is its own, and the SIGKILL is its crash (the message
    names the machine's count for the instructor). Before, both were grader errors with no score."""
    if own_cgroup and not containment().cgroup:
        pytest.skip("the grader makes no cgroup here")
    if not own_cgroup:
        monkeypatch.setattr(sandbox.cgroup.Cgroup, "create", classmethod(lambda cls, *a, **k: None))
    counts = iter(range(100, 10_000))
    monkeypatch.setattr(sandbox.process, "machine_oom_kills", lambda: next(counts))  # rises between start and end
    box = Sandbox([{"id": "answer", "kind": "solution", "source": SELF_KILL}],
                  limits=dataclasses.replace(FAST, warm=False), hide=hidden_paths(REPO), uid=sandbox_uid(902))
    try:
        outcomes = box.start()
    finally:
        box.kill()
    message = outcomes[-1].error["message"]
    assert outcomes[-1].fault == "crash" and "ended by SIGKILL" in message, outcomes
    assert ("its own cgroup counted none" in message) if own_cgroup else ("count rose from" in message)
    if own_cgroup:
        return
    lesson = load_lesson("lesson1_by_hand", REPO)
    sources = dict(lesson.reference_sources())
    sources["output_size"] = SELF_KILL + "\n" + sources["output_size"]
    verdicts = run_tests(lesson, sources, dataclasses.replace(FAST, warm=False), uid=sandbox_uid(903))
    assert "crash" in verdicts.fault_kinds and verdicts.tests and not any(t.passed for t in verdicts.tests
                                                                         if t.grade_id.startswith("output_size")), verdicts


#: Fills memory its cgroup counts but its address space does not (RLIMIT_AS cannot stop it first): files in
#: memory, 16 MiB each (RLIMIT_FSIZE).
FILL = "import os\nkept = []\nwhile True:\n    kept.append(os.memfd_create('fill'))\n    os.write(kept[-1], b'x' * (16 << 20))"


@pytest.mark.parametrize("limits", [dataclasses.replace(FAST, warm=False, memory_bytes=256 << 20),
                                    dataclasses.replace(FAST, memory_bytes=256 << 20)], ids=["cold", "warm"])
def test_a_child_its_own_cgroups_out_of_memory_killer_ended_is_a_memory_fault(limits):
    """A child that fills its cgroup's cap is ended by the cgroup's out-of-memory killer, which the cgroup's own
    counters say (a kill counted, the cap reached): a memory fault, the student's."""
    if not containment().cgroup:
        pytest.skip("the grader makes no cgroup here")
    if limits.warm and not sandbox.warm_here():
        pytest.skip(f"the grader forks no warm children here ({containment().mode} mode)")
    box = Sandbox([{"id": "answer", "kind": "solution", "source": FILL}], limits=limits, hide=hidden_paths(REPO),
                  uid=sandbox_uid(902))
    try:
        outcomes = box.start()
    finally:
        box.kill()
    assert outcomes[-1].fault == "memory", outcomes
    assert "the out-of-memory count of the child's own cgroup rose" in outcomes[-1].error["message"]


@pytest.mark.parametrize("events, fault", [((1, False), GraderFault), ((1, True), "memory"), ((0, True), "crash"),
                                           ((None, True), "memory")])
def test_whose_kill_it_was_is_read_from_the_childs_own_cgroup(monkeypatch, events, fault):
    """What the child's own cgroup counted decides (its ``memory_events``: out-of-memory kills, cap reached): a kill
    while it never reached its cap was the machine's killer (a grader error, no score); at its cap, its own
    (memory); no kill counted, a crash; a kernel that counts no kills, at the cap: memory."""
    if not containment().cgroup:
        pytest.skip("the grader makes no cgroup here")
    monkeypatch.setattr(sandbox.cgroup.Cgroup, "memory_events", lambda self: events)
    box = Sandbox([{"id": "answer", "kind": "solution", "source": SELF_KILL}],
                  limits=dataclasses.replace(FAST, warm=False), hide=hidden_paths(REPO), uid=sandbox_uid(902))
    try:
        if fault is GraderFault:
            with pytest.raises(GraderFault, match=r"the machine ran out of memory .* never reached its cap"):
                box.start()
            return
        outcomes = box.start()
    finally:
        box.kill()
    assert outcomes[-1].fault == fault, outcomes


def test_a_cpu_budget_stop_says_how_the_seconds_were_counted():
    box = Sandbox([{"id": "answer", "kind": "solution", "source": "while True:\n    pass"}],
                  limits=dataclasses.replace(FAST, cell_seconds=1.0), hide=hidden_paths(REPO), uid=sandbox_uid(902))
    try:
        outcomes = box.start()
    finally:
        box.kill()
    message = outcomes[-1].error["message"]
    assert outcomes[-1].fault == "timeout" and "more than 1 CPU seconds" in message
    assert ("counted by the kernel in the child's cgroup" if containment().cgroup else
            "summed over the child's process tree") in message


def test_two_grading_runs_share_no_template_lease_or_child_and_closing_one_ends_only_its_own(tmp_path):
    """Issue 54: templates, uid leases and live children belong to a grading run's resources. Two runs in one
    process hold none of each other's; ``run.close()`` ends every child and template of that run (alive before,
    gone after) and releases its lease, while the other run's child still answers; ``reap_all`` (what a stop
    signal runs) reaches the runs still open; a run sent to a worker process carries no resources."""
    import fcntl
    import pickle

    from autograder.grading.sandbox import lease_folder, process_running, reap_all, resources

    cells = [{"id": "setup", "kind": "prelude", "source": "import json"},
             {"id": "answer", "kind": "solution", "source": "x = 41 + 1"}]
    one, other = GradingRun(tmp_path, FAST, 1), GradingRun(tmp_path, FAST, 1)
    assert "_resources" not in pickle.loads(pickle.dumps(one)).__dict__ and pickle.loads(pickle.dumps(one)) == one

    def processes(run) -> list[int]:
        return [box.proc.pid for box in run.resources.live] + [t.proc.pid for t in run.resources.templates.values()]

    def gone(pids, seconds=10.0) -> bool:
        end = time.monotonic() + seconds
        while any(process_running(pid) for pid in pids) and time.monotonic() < end:
            time.sleep(0.05)
        return not any(process_running(pid) for pid in pids)

    try:
        boxes, uids = [], []
        for run in (one, other):
            uids.append(sandbox_uid(910, run.resources))
            box = Sandbox(cells, limits=FAST, hide=hidden_paths(REPO), uid=uids[-1], imports=["json"],
                          resources=run.resources)
            assert not any(outcome.fault for outcome in box.start()), box.log_tail()
            boxes.append(box)
        assert uids[0] != uids[1], "a uid lease each"
        assert one.resources.live == {boxes[0]} and other.resources.live == {boxes[1]}, "a child each"
        if boxes[0].warm:
            assert boxes[0].proc.template is not boxes[1].proc.template, "a warm template each"
            assert set(one.resources.templates.values()).isdisjoint(other.resources.templates.values())
        mine, theirs = processes(one), processes(other)
        assert mine and theirs and all(process_running(pid) for pid in mine + theirs), "alive before close"
        closed = one.resources
        one.close()
        assert gone(mine), "run.close() ends every child and template of the run"
        assert closed.closed and closed not in resources._OPEN and not closed.live and not closed.templates
        with open(lease_folder() / f"{uids[0]}.lock", "a+") as lease:  # released: anyone may take it now
            fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(lease, fcntl.LOCK_UN)
        assert all(process_running(pid) for pid in theirs), "the other run's child and template live on"
        reply, blobs = boxes[1].request({"op": "get", "name": "x"}, [], time.monotonic() + 30)
        assert _child.decode(reply["ok"], blobs, None) == 42, "and the other run's child still answers"
        assert other.resources in resources._OPEN
        reap_all()  # a stop signal: every open run's processes end
        assert gone(theirs), "reap_all ended the open run's child and template"
    finally:
        one.close()
        other.close()
    assert not one.__dict__.get("_resources") and not other.__dict__.get("_resources")
