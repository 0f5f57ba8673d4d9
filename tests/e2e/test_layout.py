"""The README's table of where each concern lives matches the folders (issue 27 step 4): every path it
names exists, and every module of ``autograder/`` is named in it. The floors (issue 44): the stages import the
ground floor, never each other, and the ground floor imports no stage."""

import ast
import re
from pathlib import Path

from shared import REPO


def table() -> list[str]:
    """The rows of the README's "How the code is laid out" table."""
    text = (REPO / "README.md").read_text()
    start = text.index("**How the code is laid out.**")
    return [line for line in text[start:].split("\n\n")[1].splitlines() if line.startswith("|")]


def named_paths(rows: list[str]) -> set[str]:
    """``autograder/...`` paths in the last column, short names (``leaks.py``) completed with the row's
    first full path's folder."""
    paths = set()
    for row in rows:
        where = row.strip("|").split("|")[-1]
        full = re.findall(r"`((?:autograder|course|benchmarks|tests)/[\w/.]*)`", where)
        folder = (full[0] if full[0].endswith("/") else full[0].rsplit("/", 1)[0] + "/") if full else ""
        paths.update(full)
        for short in re.findall(r"`([\w]+\.py)`", row):
            if folder.startswith("autograder/"):
                paths.add(folder + short)
    return paths


def test_every_path_the_table_names_exists():
    paths = named_paths(table())
    assert len(paths) > 20, paths
    missing = sorted(p for p in paths if not (REPO / p).exists())
    assert not missing, f"the README's layout table names paths that do not exist: {missing}"


def unnamed_modules(paths: set[str]) -> list[str]:
    """Modules of ``autograder/`` that neither ``paths`` nor a folder in it names."""
    modules = {str(p.relative_to(REPO)) for p in (REPO / "autograder").rglob("*.py")
               if p.name not in ("__init__.py", "__main__.py")}
    return sorted(m for m in modules if m not in paths and m.rsplit("/", 1)[0] + "/" not in paths)


def test_every_module_of_the_autograder_is_in_the_table():
    unnamed = unnamed_modules(named_paths(table()))
    assert not unnamed, f"modules the README's layout table does not name: {unnamed}"


def test_the_checks_see_a_wrong_path_and_a_module_left_out():
    rows = table() + ["| x | a module that moved | `autograder/moved_away.py` |"]
    assert "autograder/moved_away.py" in named_paths(rows) and not (REPO / "autograder/moved_away.py").exists()
    without = [row.replace(", `device_check.py`", "") for row in table()]
    assert unnamed_modules(named_paths(without)) == ["autograder/device_check.py"]


#: The stage packages of ``autograder/`` (issue 44): each imports the ground floor (the modules directly in
#: ``autograder/``) and ``course``, never another stage; the ground floor imports no stage. Only the commands
#: (``cli.py``, ``__main__.py``) compose the stages.
STAGES = ("release", "collect", "grading", "results")
ROOF = ("autograder/cli.py", "autograder/__main__.py")


def imported(path: str, text: str) -> list[tuple[int, str]]:
    """``(line, dotted module or name)`` of every import in ``text`` (the module at ``path``, relative to the
    repository), at any depth (a function's imports too), relative imports resolved."""
    package = path.removesuffix(".py").split("/")[:-1]
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def floor_violations(path: str, text: str) -> list[str]:
    """The imports of the module at ``path`` that break the floors: a stage's import of another stage, or
    the ground floor's import of a stage."""
    parts = path.split("/")
    stage = parts[1] if len(parts) > 2 and parts[1] in STAGES else None
    if path in ROOF:
        return []
    problems = []
    for line, name in imported(path, text):
        target = name.split(".")
        if target[0] == "autograder" and len(target) > 1 and target[1] in STAGES and target[1] != stage:
            where = f"the stage {stage}" if stage else "the ground floor"
            problems.append(f"{path}:{line}: {where} imports {'.'.join(target[:3])}")
    return problems


def test_the_stages_import_only_the_ground_floor_and_the_ground_floor_no_stage():
    problems = []
    for module in sorted((REPO / "autograder").rglob("*.py")):
        path = module.relative_to(REPO).as_posix()
        problems += floor_violations(path, module.read_text())
    assert not problems, "imports that run across or up the floors:\n" + "\n".join(problems)


def test_the_floor_rule_sees_a_stage_importing_another_and_the_ground_floor_importing_a_stage():
    honest = ("from autograder import coursedir\nfrom autograder.records import load_record\n"
              "from autograder.grading.lesson import load_lesson\nimport course.checks\n")
    assert floor_violations("autograder/grading/batch.py", honest) == []
    assert floor_violations("autograder/cli.py", "from autograder.grading import grade\n") == []
    across = "def place():\n    from autograder.grading.batch import ensure_assignment\n"
    assert floor_violations("autograder/collect/place.py", across) == [
        "autograder/collect/place.py:2: the stage collect imports autograder.grading.batch"]
    relative = "from ..release import leaks\nfrom . import templates\n"
    assert floor_violations("autograder/results/feedback.py", relative) == [
        "autograder/results/feedback.py:1: the stage results imports autograder.release.leaks"]
    assert floor_violations("autograder/records.py", "import autograder.grading.sandbox\n") == [
        "autograder/records.py:1: the ground floor imports autograder.grading.sandbox"]


def test_the_house_drawing_sees_a_cycle_a_stair_across_the_stages_and_a_room_too_large(tmp_path):
    """benchmarks.house (the drawing ``python -m benchmarks.house`` prints) on a small made-up house: an honest
    one has nothing to report; a cycle, a stage importing another, ``course`` importing the autograder and a
    room over MAX_LINES are each reported."""
    from benchmarks import house

    def build(files: dict[str, str]) -> Path:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        for name, text in {"autograder/__init__.py": "", "autograder/grading/__init__.py": "",
                           "autograder/results/__init__.py": "", "course/__init__.py": "", **files}.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        return root

    honest = {"autograder/records.py": "import course\n", "autograder/grading/batch.py": "from autograder import records\n",
              "autograder/results/export.py": "from ..records import x\n", "autograder/cli.py": "import autograder.grading.batch\n"}
    assert house.problems(build(honest)) == []
    assert "stage grading" in house.drawing(build(honest))
    broken = {**honest, "autograder/grading/a.py": "from autograder.grading import b\n",
              "autograder/grading/b.py": "from . import a\n",
              "autograder/results/report.py": "import autograder.grading.batch\n",
              "course/x.py": "from autograder import records\n",
              "autograder/records.py": "x = 1\n" * (house.MAX_LINES + 1)}
    assert house.problems(build(broken)) == [
        "autograder.results.report (results) imports autograder.grading.batch (grading)",
        "course.x (course) imports autograder.records (ground)",
        "an import cycle: autograder.grading.a -> autograder.grading.b",
        f"autograder.records: {house.MAX_LINES + 1} lines, more than {house.MAX_LINES}"]


def test_the_house_has_nothing_that_breaks_its_plan():
    """Issue 44: release, collect, grading and results on one floor above the ground floor, no import
    cycle, no module over ``MAX_LINES`` lines but ``_child.py`` (``python -m benchmarks.house`` draws it)."""
    from benchmarks import house

    assert house.problems() == []


#: Imports of another module's private name that are still there, each in ``course/checks/`` (the source rules,
#: being changed by other work at the time of issue 54): this list may only shrink; any other private import fails.
PRIVATE_LEFT = {
    ("course/checks/__init__.py", "course.checks.analysis.loops._LoopNests"),
    ("course/checks/__init__.py", "course.checks.analysis.resolver._Resolver"),
    ("course/checks/analysis/avoids.py", "course.checks.analysis.resolver._Resolver"),
    ("course/checks/analysis/loop_rules.py", "course.checks.analysis.loops._LoopNests"),
    ("course/checks/analysis/loops.py", "course.checks.analysis.lists._APPENDS"),
    ("course/checks/analysis/loops.py", "course.checks.analysis.resolver._Resolver"),
    ("course/checks/analysis/loops.py", "course.checks.analysis.resolver._Scope"),
    ("course/checks/analysis/objects.py", "course.checks.analysis.text._is_constant"),
    ("course/checks/analysis/resolver.py", "course.checks.analysis.lists._BUILTIN_NAMES"),
    ("course/checks/analysis/resolver.py", "course.checks.analysis.objects._library_object"),
    ("course/checks/analysis/resolver.py", "course.checks.analysis.objects._may_call"),
    ("course/torch_checks.py", "course.checks.values._laid_out"),  # lesson 5 imports it by that name
}


#: The packages of this repository whose modules the rule below holds to their faces.
OWN = ("autograder", "course", "benchmarks")


def private_imports(path: str, text: str, root: Path = REPO) -> list[tuple[str, str]]:
    """``(path, dotted name)`` of every import in the module at ``path`` of another module's private name
    (``_x``, not ``__x__``). A private *module* (``_child.py``) belongs to its package: a module inside that
    package may import it; a private name *in* a module belongs to that module alone."""
    here = path.removesuffix(".py").split("/")
    found = []
    for _, name in imported(path, text):
        parts = name.split(".")
        if parts[0] not in OWN:
            continue  # another distribution's private names are its own business
        for i, part in enumerate(parts):
            if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
                place = root.joinpath(*parts[:i + 1])
                is_module = place.with_suffix(".py").is_file() or place.is_dir()
                if not (is_module and here[:i] == parts[:i]):
                    found.append((path, ".".join(parts[:i + 1])))
                break
    return found


def test_no_module_imports_another_modules_private_name():
    found = set()
    for folder in OWN:
        for module in sorted((REPO / folder).rglob("*.py")):
            path = module.relative_to(REPO).as_posix()
            found.update(private_imports(path, module.read_text()))
    new = sorted(found - PRIVATE_LEFT)
    assert not new, "imports of another module's private name (make it public in its module, or keep it there):\n" \
        + "\n".join(f"{path}: {name}" for path, name in new)
    assert not PRIVATE_LEFT - found, f"fixed, so no longer listed: {sorted(PRIVATE_LEFT - found)}"


def test_the_private_import_rule_sees_a_private_name_but_lets_a_package_use_its_private_module():
    assert private_imports("autograder/grading/sandbox/cgroup.py",
                           "from autograder.grading.sandbox.uids import _running\n") == [
        ("autograder/grading/sandbox/cgroup.py", "autograder.grading.sandbox.uids._running")]
    assert private_imports("autograder/grading/verdicts.py", "from autograder.grading import _child\n") == []
    assert private_imports("autograder/grading/sandbox/runner.py", "from autograder.grading import _child\n") == []
    assert private_imports("autograder/results/report.py", "from autograder.grading import _child\n") == [
        ("autograder/results/report.py", "autograder.grading._child")]
    assert private_imports("benchmarks/attacks.py", "def f():\n    from autograder.grading.lesson import _code_of\n") \
        == [("benchmarks/attacks.py", "autograder.grading.lesson._code_of")]
    assert private_imports("autograder/cli.py", "from autograder import __version__\nimport os.path\n") == []
    assert private_imports("course/torch_checks.py", "from torch.utils._python_dispatch import TorchDispatchMode\n") \
        == []
