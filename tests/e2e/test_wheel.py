"""Installed like users install: a wheel (not editable) in a fresh venv grades through the trusted grader,
and where the trusted grader cannot be imported, ``nbgrader autograde`` refuses instead of running
submissions in nbgrader's own kernel.

The slow test builds the wheel from a clean copy of the package sources (``course/``, ``autograder/``,
``pyproject.toml``, ``README.md``: what ``pip install .`` reads; a stale ``build/`` cannot creep in),
creates a venv with ``python -m venv``, installs the wheel into it, and grades one submission in a scratch
course directory that holds no ``course/`` or ``autograder/`` folder, so every import of the course
comes from the wheel. The venv's third-party packages are those of the test's own environment, which was
installed from ``requirements.lock`` (``make test`` builds it; CI starts from nothing), hard-linked into the
venv's ``site-packages`` (copied across file systems) without the checkout's editable install: the same
files a fresh ``pip install -r requirements.lock`` writes, inside the venv's prefix as the sandbox expects,
in seconds (installing the lock a second time cost this test 143 s and deleting it 93 s).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from autograder.coursedir import copy_course
from autograder.variants import hand_sources
from shared import REPO

LESSON = "lesson1_by_hand"
REFUSAL = "nbgrader autograde refuses to run"
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".ipynb_checkpoints")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def cannot_run(reason: str):
    if in_ci():
        pytest.fail(f"CI is set and {reason}", pytrace=False)
    pytest.skip(reason)


def tracked_package_files() -> list[str]:
    """The files of ``autograder/`` and ``course/`` as git tracks them (on disk where git is unavailable)."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "autograder", "course"], capture_output=True,
                            text=True)
    if listed.returncode == 0 and listed.stdout.strip():
        return sorted(listed.stdout.split())
    return sorted(p.relative_to(REPO).as_posix() for top in ("autograder", "course") for p in (REPO / top).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


# --- config: fast, in-process ------------------------------------------------------------------------

def load_config(monkeypatch, importable: bool):
    if not importable:
        monkeypatch.setitem(sys.modules, "autograder.grading.nbgrader_plugin", None)  # import raises ImportError
    return PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()


def test_config_without_the_trusted_grader_refuses_autograde(monkeypatch):
    c = load_config(monkeypatch, importable=False)
    assert c.CourseDirectory.source_directory == "source"  # the rest of the course config still loads
    steps = list(c.Autograde.sanitize_preprocessors) + list(c.Autograde.autograde_preprocessors)
    assert len(steps) == 2 and not any(isinstance(s, str) and s.endswith("Execute") for s in steps)
    for step in steps:
        with pytest.raises(RuntimeError, match=REFUSAL) as caught:
            step(nbformat.v4.new_notebook(), {})
        message = str(caught.value)
        assert "autograder.grading.nbgrader_plugin" in message and "pip install ." in message and ".venv" in message
    assert "Validate" not in c  # other commands are left as they are
    # feedback never shows hidden tests' source, grader or not
    from nbgrader.preprocessors import ClearHiddenTests

    assert any(isinstance(s, type) and issubclass(s, ClearHiddenTests) for s in c.GenerateFeedback.preprocessors)


def test_feedback_clears_hidden_tests_and_writes_math_as_mathml_or_refuses(monkeypatch):
    """With the course's tools feedback clears hidden tests, withholds expected answers (by default) and
    writes TeX as MathML (renders offline);
    without them generate_feedback refuses rather than hand students raw TeX (or hidden tests)."""
    from autograder.results.feedback_steps import ExpectedAnswers, HiddenTestsCleared, MathToMathML, TestRows

    config = load_config(monkeypatch, importable=True)
    steps = config.GenerateFeedback.preprocessors
    assert HiddenTestsCleared in steps and ExpectedAnswers in steps and MathToMathML in steps and TestRows in steps
    assert config.ExpectedAnswers.reveal is False, "expected answers are withheld unless the instructor releases them"
    monkeypatch.setitem(sys.modules, "autograder.results.feedback_steps", None)
    steps = [s for s in load_config(monkeypatch, importable=True).GenerateFeedback.preprocessors
             if not isinstance(s, str)]
    assert len(steps) == 4  # the three above and the named rows (TestRows), each refusing
    for step in steps:
        with pytest.raises(RuntimeError, match="generate_feedback needs the course's tools"):
            step(nbformat.v4.new_notebook(), {})


def test_generate_assignment_uses_the_optional_stubs_or_refuses_without_them(monkeypatch):
    """With the course's tools the pipeline is nbgrader's own with ClearSolutions swapped for the
    subclass that knows optional regions; without them generate_assignment stops with a clear error."""
    from nbgrader.preprocessors import ClearSolutions

    from autograder.release.stubs import ClearSolutionsWithOptional

    steps = load_config(monkeypatch, importable=True).GenerateAssignment.preprocessors
    assert ClearSolutionsWithOptional in steps and ClearSolutions not in steps and len(steps) >= 10
    monkeypatch.setitem(sys.modules, "autograder.release.stubs", None)
    steps = load_config(monkeypatch, importable=True).GenerateAssignment.preprocessors
    refusing = [s for s in steps if callable(s) and getattr(s, "__name__", "") == "ClearSolutionsWithOptional"]
    assert len(refusing) == 1 and ClearSolutions not in steps
    with pytest.raises(RuntimeError, match="generate_assignment needs the course's tools"):
        refusing[0](nbformat.v4.new_notebook(), {})


def test_config_with_the_trusted_grader_wires_it(monkeypatch):
    c = load_config(monkeypatch, importable=True)
    assert c.Autograde.autograde_preprocessors[0].endswith("TrustedExecute")
    from nbgrader.converters.autograde import Autograde

    # sanitizing is nbgrader's own list, with OverwriteCells swapped for the subclass that knows the release
    default = [step.__name__ for step in Autograde.class_traits()["sanitize_preprocessors"].default()]
    assert [step.rsplit(".", 1)[-1] for step in c.Autograde.sanitize_preprocessors] == \
        ["RestoreReleasedCells" if name == "OverwriteCells" else name for name in default]


class _SourceCells:
    """The part of nbgrader's gradebook that OverwriteCells reads: one locked test cell of source/."""

    def __init__(self, source):
        self.cell = type("SourceCell", (), {"cell_type": "code", "source": source, "locked": True,
                                            "checksum": None, "name": "tests"})()

    def find_source_cell(self, grade_id, notebook_id, assignment_id):
        return self.cell

    def find_graded_cell(self, grade_id, notebook_id, assignment_id):
        return type("GradedCell", (), {"max_score": 2.0})()


@pytest.mark.parametrize("student_source, warned", [
    ("check(x)\nprint('ok')", False),                          # the released cell: hidden tests removed
    ("check(x)\n### BEGIN HIDDEN TESTS\ncheck(y)\n### END HIDDEN TESTS\nprint('ok')", False),  # source/ itself
    ("pass  # the student emptied the test\nprint('ok')", True),  # a real change of a locked cell
])
def test_a_test_cell_is_restored_silently_only_when_it_is_the_released_one(student_source, warned, caplog):
    """nbgrader's OverwriteCells warns "checksum has changed" for every test cell whose hidden tests the
    release removed; the subclass restores those silently and still warns for (and undoes) any other edit."""
    from nbgrader import utils

    from autograder.grading.nbgrader_plugin import RestoreReleasedCells

    source = "check(x)\n### BEGIN HIDDEN TESTS\ncheck(y)\n### END HIDDEN TESTS\nprint('ok')"
    cell = nbformat.v4.new_code_cell(student_source, metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": "tests", "points": 2, "schema_version": 3}})
    gradebook = _SourceCells(source)
    gradebook.cell.checksum = utils.compute_checksum(nbformat.v4.new_code_cell(source, metadata=cell.metadata))
    step = RestoreReleasedCells()
    step.gradebook, step.notebook_id, step.assignment_id = gradebook, "nb", "lesson"
    with caplog.at_level("WARNING"):
        restored, _ = step.preprocess_cell(cell, {}, 0)
    assert restored.source == source, "the locked cell is always put back as source/ has it"
    assert ("has changed" in caplog.text) is warned, caplog.text


# --- the wheel, installed ------------------------------------------------------------------------------

def run(command, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, **kw)


def link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(venv, env, wheel)``: a fresh venv with requirements.lock and the course's wheel installed."""
    tmp = tmp_path_factory.mktemp("wheel")
    started = time.monotonic()
    tree = tmp / "tree"
    for name in ("course", "autograder"):
        shutil.copytree(REPO / name, tree / name, ignore=IGNORE)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, tree / name)
    built = run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                 "-w", tmp / "dist", tree], cwd=tmp, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    for noise in ("absent from the packages configuration", "SetuptoolsDeprecationWarning"):
        assert noise not in built.stdout + built.stderr, f"building the wheel printed {noise!r}:\n{built.stderr[-3000:]}"
    (wheel,) = (tmp / "dist").glob("avgpool_course-*.whl")

    venv = tmp / "venv"
    made = run([sys.executable, "-m", "venv", "--without-pip", venv], timeout=300)  # pip comes with the packages
    if made.returncode != 0:
        cannot_run(f"python -m venv failed here: {made.stderr[-500:]}")
    python = venv / "bin" / "python"
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], timeout=60)
    assert purelib.returncode == 0, purelib.stderr[-1000:]
    import sysconfig

    shutil.copytree(sysconfig.get_paths()["purelib"], purelib.stdout.strip(), symlinks=True, dirs_exist_ok=True,
                    copy_function=link_or_copy, ignore=shutil.ignore_patterns("__editable__*", "avgpool_course-*"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    # the dependencies' commands (nbgrader runs `alembic`) come from the test environment's bin, behind the venv's
    env.update(PATH=os.pathsep.join([str(venv / "bin"), sysconfig.get_paths()["scripts"], env.get("PATH", "")]),
               PYTHONNOUSERSITE="1", MPLBACKEND="Agg", PYTHONWARNINGS="ignore",
               JUPYTER_DATA_DIR=str(venv / "share" / "jupyter"))
    # The wheel needs nothing from an index: every dependency it declares must be there already.
    wheel_install = run([python, "-m", "pip", "install", "--quiet", "--no-index", "--disable-pip-version-check",
                         wheel], cwd=tmp, env=env, timeout=300)
    assert wheel_install.returncode == 0, wheel_install.stderr[-3000:]
    print(f"wheel built and installed in {time.monotonic() - started:.0f} s")
    yield venv, env, wheel
    shutil.rmtree(venv, ignore_errors=True)  # hard links: quick


@pytest.mark.slow
def test_the_wheel_ships_every_package_file(installed):
    _, _, wheel = installed
    with zipfile.ZipFile(wheel) as zf:
        shipped = {n for n in zf.namelist() if not n.split("/")[0].endswith(".dist-info")}
    missing = sorted(set(tracked_package_files()) - shipped)
    assert not missing, f"the wheel lacks {len(missing)} files of the checkout: {missing[:10]}"
    assert any(n.startswith("autograder/grading/") for n in shipped)
    assert not [n for n in shipped if "corpus" in n], "the grading corpus (solutions) is test data, never shipped"


def grades_of(course: Path, student: str) -> tuple[list, float]:
    """The auto scores of ``student``'s grades in the gradebook (none without a submission), the lesson's max."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        try:
            submission = gb.find_submission(LESSON, student)
            scores = [g.auto_score for nb in submission.notebooks for g in nb.grades]
        except MissingEntry:
            scores = []
        return scores, gb.find_assignment(LESSON).max_score


@pytest.mark.slow
def test_installed_wheel_grades_through_the_trusted_grader_and_refuses_without_it(installed, tmp_path):
    from autograder.grading import load_lesson, sanitized_notebook

    venv, env, _ = installed
    python = venv / "bin" / "python"
    nbgrader = [python, "-m", "nbgrader"]
    probe = run([python, "-c", "import json, sysconfig, autograder, course, autograder.grading.nbgrader_plugin as p;"
                 " print(json.dumps([sysconfig.get_paths()['purelib'], autograder.__file__, course.__file__, p.__file__]))"],
                cwd=tmp_path, env=env, timeout=300)
    assert probe.returncode == 0, probe.stderr[-3000:]
    purelib, *files = json.loads(probe.stdout.strip().splitlines()[-1])
    assert Path(purelib).resolve().is_relative_to(venv.resolve())
    assert all(Path(f).resolve().is_relative_to(Path(purelib).resolve()) for f in files), files

    course = copy_course(REPO, tmp_path / "course", [LESSON])
    assert not (course / "autograder").exists() and not (course / "course").exists()
    lesson = load_lesson(LESSON, REPO)
    ran_in_kernel = tmp_path / "student-code-ran-in-a-kernel"
    for student, prefix in (("ada", ""), ("bob", f"open({str(ran_in_kernel)!r}, 'w').close()\n")):
        sources = hand_sources(student, lesson.reference_sources())  # the student's own numbers (variants on)
        sources["worked_example"] = prefix + sources["worked_example"]
        folder = course / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        nbformat.write(sanitized_notebook(lesson, sources), str(folder / lesson.notebook_name))
    made = run([*nbgrader, "generate_assignment", LESSON, "--force",
                f"--CourseDirectory.release_directory={tmp_path / 'release-scratch'}"], cwd=course, env=env, timeout=300)
    assert made.returncode == 0, made.stderr[-3000:]

    # Installed: plain `nbgrader autograde` is trusted and scores the correct solution in full.
    graded = run([*nbgrader, "autograde", LESSON, "--student=ada"], cwd=course, env=env, timeout=600)
    log = graded.stdout + graded.stderr
    assert graded.returncode == 0, log[-3000:]
    assert "Trusted grader: computing verdicts for ada" in log
    for noise in ("has changed", "is not absolute", "SAWarning", "Warning:"):  # nbgrader's own, on the screen
        assert noise not in log, f"plain nbgrader autograde printed {noise!r}:\n{log[-3000:]}"
    record = json.loads((course / "records" / LESSON / "ada.json").read_text())
    assert record["status"] == "ok" and record["score"] == record["max_score"] == lesson.max_score
    scores, max_score = grades_of(course, "ada")
    assert sum(scores) == max_score == lesson.max_score

    # The trusted grader unimportable (an `autograder` package without `trusted` first on the path):
    # autograde refuses, says why and what to do, runs no student code and writes no score.
    stub = tmp_path / "stub"
    (stub / "autograder").mkdir(parents=True)
    (stub / "autograder" / "__init__.py").write_text("")
    refused = run([*nbgrader, "autograde", LESSON, "--student=bob"], cwd=course, env=dict(env, PYTHONPATH=str(stub)),
                  timeout=600)
    log = refused.stdout + refused.stderr
    assert refused.returncode != 0, log[-3000:]
    assert REFUSAL in log and "No module named 'autograder.grading'" in log and "pip install ." in log, log[-3000:]
    assert not ran_in_kernel.exists(), "student code ran in a kernel"
    assert not (course / "records" / LESSON / "bob.json").exists()
    assert not (course / "autograded" / "bob" / LESSON / lesson.notebook_name).exists()
    scores, _ = grades_of(course, "bob")
    assert all(s is None for s in scores), scores


def test_the_feedback_template_is_the_feedback_pages_alone(monkeypatch):
    """The course's named rows (template feedback-rows) head generate_feedback's page only: formgrader shows a
    submission with a plain HTMLExporter and its own template ``formgrade`` (set as nbgrader's formgrader sets it,
    before the course's config), which a course-wide HTMLExporter setting replaced (the hub test then waited in
    vain for formgrader's grade boxes)."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.converters import GenerateFeedback
    from traitlets.config import Config

    from autograder.results.feedback_steps import FeedbackPage, template_basedirs

    config = load_config(monkeypatch, importable=True)
    assert "template_name" not in config.HTMLExporter
    formgrader = Config()
    formgrader.HTMLExporter.template_name = "formgrade"
    formgrader.HTMLExporter.extra_template_basedirs = template_basedirs()[1:]  # nbgrader's formgrader templates
    formgrader.merge(config)
    assert HTMLExporter(config=formgrader).template_name == "formgrade"
    assert config.GenerateFeedback.exporter_class is FeedbackPage
    feedback = Config(config)
    feedback.HTMLExporter.template_name = "feedback"  # what GenerateFeedback sets for its exporter
    page = FeedbackPage(config=feedback)
    assert (page.template_name, page.template_file) == ("feedback-rows", "rows.html.j2")
    assert GenerateFeedback(config=config).exporter_class is FeedbackPage
