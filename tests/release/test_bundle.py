"""The student bundle: installs and runs on its own, and gives nothing away."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import pytest

from autograder.release import bundle, leaks
from autograder import pins
from autograder.coursedir import CourseError
from workflow_fakes import LESSON, REPO

RUN_TO_FIRST_EXERCISE = textwrap.dedent(r'''
    """Run lesson 1's release notebook cell by cell until its first exercise; print what happened."""
    import json, shutil, sys, tempfile
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(sys.argv[1], as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("import sys, course; print(sys.executable); print(course.__file__)"))
    # unix sockets, not TCP ports that a kernel of the other test worker may pick at the same moment
    sockets = tempfile.mkdtemp(prefix="kernel-")
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            config=Config({"KernelManager": {"transport": "ipc", "ip": sockets + "/ipc"}}),
                            resources={"metadata": {"path": sys.argv[2]}})
    client.widget_registry = {}  # no stand-in for ipywidgets' Output: it loses the cell's reply (tests/nbtools.py)
    result = {"ran": 0, "error": None, "stopped_at": None}
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            try:
                client.execute_cell(cell, index)
            except CellExecutionError as exc:
                result["error"] = exc.ename
                result["stopped_at"] = cell.metadata.get("nbgrader", {}).get("grade_id")
                break
            result["ran"] += 1
    shutil.rmtree(sockets, ignore_errors=True)
    result["first_output"] = nb.cells[0].outputs[0]["text"]
    print(json.dumps(result))
''')


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    """The bundle as a .zip, unpacked into an empty folder."""
    tmp = tmp_path_factory.mktemp("bundle")
    archive = bundle.build(tmp / "avgpool-course-student", REPO, as_zip=True, check=False)
    assert archive.suffix == ".zip"
    target = tmp / "student"
    target.mkdir()
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(target)
    return target / bundle.NAME


def test_bundle_holds_what_students_need(unpacked):
    names = {p.relative_to(unpacked).as_posix() for p in unpacked.rglob("*") if p.is_file()}
    assert {f"release/{LESSON}/{LESSON}.ipynb", "course/__init__.py", "course/checks/__init__.py", "requirements.lock",
            "environment.yml", "pyproject.toml", "README.md", "Makefile"} <= names
    assert not any(n.startswith(("source/", "autograder/")) or "__pycache__" in n for n in names)
    project = (unpacked / "pyproject.toml").read_text()
    assert 'include = ["course*"]' in project and "autograder" not in project
    assert "lab:" in (unpacked / "Makefile").read_text() and "make lab" in (unpacked / "README.md").read_text()
    dry = subprocess.run(["make", "--no-print-directory", "-n", "lab"], cwd=unpacked, capture_output=True, text=True, timeout=30)
    assert dry.returncode == 0 and "jupyter lab " in dry.stdout and dry.stdout.rstrip().endswith("release/"), dry.stderr
    assert ("--allow-root" in dry.stdout) == (os.geteuid() == 0), "as root (a container), JupyterLab needs --allow-root"
    for extension in bundle.INSTRUCTOR_EXTENSIONS:  # students do not get formgrader's menus
        assert extension in dry.stdout
    # the bundle installs the lessons' packages only: no test or grader-only package, and nothing missing
    lock = pins.read_lock((unpacked / "requirements.lock").read_text())
    assert {"numpy", "torch", "jupyterlab", "nbgrader"} <= set(lock)
    assert not {"pytest", "playwright", "pytest-timeout"} & set(lock)
    assert pins.unpinned(REPO, (unpacked / "requirements.lock").read_text(), extras=()) == []


@pytest.mark.slow
def test_bundle_installs_in_a_fresh_environment_and_runs_lesson1(unpacked, tmp_path):
    """A fresh venv (dependencies borrowed from the project's .venv via a .pth file, so nothing is
    downloaded), the bundle installed by its own pyproject, lesson 1 run up to its first exercise."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / "venv" / site.split(str(venv) + "/")[1] / "project_deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")
    kernel = venv / "share" / "jupyter" / "kernels" / "python3"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUPYTER_PATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", MPLBACKEND="Agg",
               JUPYTER_DATA_DIR=str(venv / "share" / "jupyter"))
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                              "--no-index", "-e", str(unpacked)], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=300)
    assert install.returncode == 0, install.stderr
    probe = subprocess.run([str(python), "-c", "import course, importlib.util; print(course.__file__); "
                            "print(importlib.util.find_spec('autograder'))"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert probe.stdout.splitlines() == [str(unpacked / "course" / "__init__.py"), "None"], probe.stderr
    script = tmp_path / "run_first.py"
    script.write_text(RUN_TO_FIRST_EXERCISE)
    folder = unpacked / "release" / LESSON
    result = subprocess.run([str(python), str(script), str(folder / f"{LESSON}.ipynb"), str(folder)],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    executable, course_file = outcome["first_output"].split()
    assert executable == str(python) and course_file == str(unpacked / "course" / "__init__.py")
    assert outcome["error"] == "NotImplementedError", outcome
    assert outcome["stopped_at"] is not None and outcome["ran"] >= 3, outcome


def test_bundle_gives_nothing_away(unpacked):
    """No file of source/ or autograder/, no nbgrader marker, no solution or hidden-test text."""
    problems = leaks.scan(unpacked, REPO)
    assert problems == [], "the student bundle gives away:\n" + "\n".join(problems)


def _scratch_course(tmp_path):
    root = tmp_path / "course"
    for name in ("course", f"release/{LESSON}", f"source/{LESSON}"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "requirements.lock", "environment.yml", "nbgrader_config.py"):
        shutil.copy2(REPO / name, root / name)
    (root / "autograder" / "corpus").mkdir(parents=True)
    (root / "autograder" / "corpus" / "reference.py").write_text("def answer():\n    return 42\n")
    return root


def test_scan_finds_planted_leaks(tmp_path):
    root = _scratch_course(tmp_path)
    folder = tmp_path / "bundle"
    folder.mkdir()
    shutil.copy2(root / "source" / LESSON / f"{LESSON}.ipynb", folder / "lesson.ipynb")
    shutil.copy2(root / "autograder" / "corpus" / "reference.py", folder / "helper.py")
    (folder / "autograder").mkdir()
    (folder / "autograder" / "x.txt").write_text("hello")
    from autograder.solutions import solution_cells
    solution = solution_cells(root / "source" / LESSON / f"{LESSON}.ipynb")["output_size"]
    (folder / "answers.py").write_text("# notes\n" + solution + "\n")
    (folder / "clean.py").write_text("import numpy as np\n\ndef f(x):\n    return np.mean(x)\n")
    problems = "\n".join(leaks.scan(folder, root))
    assert "lesson.ipynb: a copy of source/" in problems and "nbgrader marker 'BEGIN SOLUTION'" in problems
    assert "helper.py: a copy of autograder/corpus/reference.py" in problems
    assert "autograder/x.txt: a source/ or autograder/ folder" in problems
    assert "answers.py: solution or hidden-test text" in problems
    assert "clean.py" not in problems


def test_no_per_student_key_ships_and_a_planted_one_is_found(tmp_path):
    """A variant's numbers ship (the notebook shows them), its key never: every hidden line that turns a
    student's numbers into the key is a leak on its own, short or long, in course/ as in release/."""
    root = _scratch_course(tmp_path)
    keys = leaks.variant_key_lines(root / "source" / LESSON / f"{LESSON}.ipynb")
    assert {'check_value(q3, "abc"[kc["q3_order"].index(2)], "q3")',
            'expected = nn.AvgPool2d(2, stride=2)(torch.tensor(example, dtype=torch.float64)[None, None])[0, 0].numpy()'} <= keys
    folder = tmp_path / "bundle"
    for name in ("course", "release"):
        shutil.copytree(root / name, folder / name)
    assert leaks.scan(folder, root) == [], "course/variants.py draws numbers, never a key"
    variants = folder / "course" / "variants.py"
    variants.write_text(variants.read_text() + '\n\ndef q3(kc):\n    check_value(q3, "abc"[kc["q3_order"].index(2)], "q3")\n')
    assert [p for p in leaks.scan(folder, root) if p.startswith("course/variants.py: solution or hidden-test text")]


def test_bundle_refuses_a_leak_and_leaves_nothing(tmp_path, capsys):
    root = _scratch_course(tmp_path)
    from autograder.solutions import solution_cells
    solution = solution_cells(root / "source" / LESSON / f"{LESSON}.ipynb")["output_size"]
    (root / "course" / "answers.py").write_text(solution + "\n")
    with pytest.raises(bundle.BundleError, match="course/answers.py: solution or hidden-test text"):
        bundle.build(tmp_path / "out", root, check=True)
    assert not (tmp_path / "out").exists()
    from autograder import cli
    status = cli.main(["bundle", "--root", str(root), "--out", str(tmp_path / "out")])
    assert status == 2 and "would give away" in capsys.readouterr().err
    with pytest.raises(CourseError, match="would overwrite the course"):
        bundle.build(root / "course", root)


def _windows_commands(readme: str) -> list[str]:
    """The lines of the README's ```bat block (the Windows install)."""
    blocks = re.findall(r"```bat\n(.*?)```", readme, flags=re.S)
    assert len(blocks) == 1, "one Windows block"
    return [line.strip() for line in blocks[0].splitlines() if line.strip()]


@pytest.mark.parametrize("readme", ["README.md", "bundle"])
def test_the_windows_commands_match_the_install_files(readme, unpacked):
    """Windows has no make: the README's conda commands must name the real environment file, the name it
    creates and the folder of the lessons; and the lock they install must be closed on Windows."""
    folder = unpacked if readme == "bundle" else REPO
    text = (folder / "README.md").read_text()
    create, activate, lab = _windows_commands(text)
    environment = create.split("-f", 1)[1].strip()
    assert create.startswith("conda env create -f") and (folder / environment).is_file()
    name = re.search(r"^name:\s*(\S+)", (folder / environment).read_text(), flags=re.M).group(1)
    assert activate == f"conda activate {name}"
    assert lab.startswith("jupyter lab ") and (folder / lab.split()[-1]).is_dir()
    assert "-r requirements.lock" in (folder / environment).read_text()
    lock = (folder / "requirements.lock").read_text()
    assert not [p for p in pins.unpinned(REPO, lock, extras=()) if p.startswith("Windows")]


def test_a_line_one_lesson_shows_is_no_leak_where_another_lessons_key_holds_it(tmp_path):
    """Lesson 1's stub shows ``def output_size(...)`` and its docstring; lesson 2's key holds them too, inside
    its solution region: finding them in a bundle is no leak. A key line no lesson shows still is."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    signature = "def output_size(input_size, kernel_size, stride=0, padding=0):"
    secret = "    return tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(input_size, kernel_size, stride, padding))"
    lessons = {"lesson1": f"{signature}\n    ### BEGIN SOLUTION\n{secret}\n    ### END SOLUTION\n",
               "lesson2": f"### BEGIN SOLUTION\n{signature}\n{secret}\n### END SOLUTION\n"}
    for lesson, text in lessons.items():
        (tmp_path / "source" / lesson).mkdir(parents=True)
        nbformat.write(new_notebook(cells=[new_code_cell(text)]), tmp_path / "source" / lesson / f"{lesson}.ipynb")
    (tmp_path / "autograder").mkdir()
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "stub.py").write_text(f"{signature}\n    # YOUR CODE HERE\n    raise NotImplementedError()\n")
    assert leaks.scan(bundle, tmp_path) == []
    (bundle / "answer.py").write_text(f"{signature}\n{secret}\n")
    assert any("answer.py: solution or hidden-test text" in p for p in leaks.scan(bundle, tmp_path))
