"""What students receive: ``release/``, the ``course/`` helpers and the install files, as a folder or .zip.

The bundle installs and runs on its own: its ``pyproject.toml`` is generated from the course's (same
pins, the lessons' dependencies only) and installs only the ``course`` package; its ``requirements.lock``
is the part of the course's lock that the lessons need (:func:`autograder.pins.student_lock`: no grader
or test package); its ``Makefile`` has a ``lab`` target that creates ``.venv`` from that lock, turns off
nbgrader's instructor menus (formgrader, create assignment, course list) and opens JupyterLab on
``release/``. It never holds ``source/``,
``autograder/`` (the instructor's tools) or any solution or hidden-test text: every bundle
is scanned (:func:`autograder.release.leaks.scan`) before it is reported as built.
"""

from __future__ import annotations

import shutil
import tomllib
import zipfile
from pathlib import Path

from autograder import coursedir, pins
from autograder.release import leaks

NAME = "avgpool-course-student"
COPIED = ("environment.yml", "nbgrader_config.py", "LICENSE")
#: nbgrader's JupyterLab parts that only an instructor uses; the student's install turns them off.
INSTRUCTOR_EXTENSIONS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                         "@jupyter/nbgrader:course-list")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", ".*")

STUDENT_README = """# avgpool-course: 2-D average pooling from first principles

Five Jupyter lessons, in order, in `release/`. You need Python 3.11 (or conda) and `make`.

## Install and open the lessons

```bash
make lab            # the first time: creates .venv from requirements.lock (a few minutes), then opens JupyterLab
```

or, with conda:

```bash
conda env create -f environment.yml && conda activate avgpool-course && jupyter lab release/
```

On **Windows** (no `make`): install Miniforge (conda), open the *Miniforge Prompt* in this folder and run

```bat
conda env create -f environment.yml
conda activate avgpool-course
jupyter lab release/
```

## Work on a lesson

Run every cell from the top. Cells that say `YOUR CODE HERE` are yours: replace the
`raise NotImplementedError(...)` line. The cell after each exercise tests your work and says what is
wrong; more (hidden) tests run when your work is graded, so aim for a right answer, not just green checks.

Before you hand in a notebook, press **Validate** in the notebook toolbar, or run `make validate`.
Hand in the `.ipynb` file itself (JupyterLab: File > Download).

`course/` holds the helpers the notebooks import (plots, data, checks); you do not need to edit it.
"""

STUDENT_MAKEFILE = """# make lab        create .venv from requirements.lock (first time), then open JupyterLab on release/
# make validate   run nbgrader validate on every lesson notebook

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: lab validate help

help:
\t@echo "make lab        open JupyterLab on release/ (installs .venv the first time)"
\t@echo "make validate   check every lesson notebook with nbgrader validate"

$(STAMP): requirements.lock pyproject.toml
\t@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version.split()[0] + " (set PYTHON=/path/to/python3.11)"'
\t$(PYTHON) -m venv $(VENV)
\t$(PY) -m pip install --quiet --upgrade pip
\t$(PY) -m pip install --quiet -r requirements.lock
\t$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
\t$(VENV)/bin/jupyter labextension disable --level=sys_prefix {instructor_extensions} >/dev/null
\t@touch $@

# LAB_ARGS: more options for JupyterLab (e.g. --no-browser). As root (in many containers) it needs --allow-root.
lab: $(STAMP)
\t$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) release/

validate: $(STAMP)
\t$(VENV)/bin/nbgrader validate release/*/*.ipynb
"""


def student_pyproject(root: Path) -> str:
    """The bundle's ``pyproject.toml``: the course's pins and metadata, installing only ``course``."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text())["project"]
    deps = "".join(f'    "{dep}",\n' for dep in project.get("dependencies", []))
    return ("[build-system]\n"
            'requires = ["setuptools>=64"]\n'
            'build-backend = "setuptools.build_meta"\n\n'
            "[project]\n"
            f'name = "{project["name"]}"\n'
            f'version = "{project["version"]}"\n'
            f'description = "{project.get("description", "")}"\n'
            'readme = "README.md"\n'
            f'requires-python = "{project.get("requires-python", ">=3.11")}"\n'
            "# The lessons' pins of the course's pyproject.toml; requirements.lock pins everything underneath.\n"
            f"dependencies = [\n{deps}]\n\n"
            "[tool.setuptools.packages.find]\n"
            'include = ["course*"]\n')


class BundleError(coursedir.CourseError):
    """The bundle would give something away; lists what."""


def build(out: Path, root: Path = coursedir.REPO, as_zip: bool = False, check: bool = True) -> Path:
    """Write the student bundle into the folder ``out`` (and ``out.zip`` when ``as_zip``); returns it.

    Raises :class:`BundleError` (leaving nothing behind) when the scan finds anything that must not
    reach students. ``check=False`` skips the scan (tests that look at packaging alone).
    """
    root, out = Path(root), Path(out)
    if out.resolve() in (root.resolve(), *root.resolve().parents) or root.resolve() in out.resolve().parents \
            and out.resolve().parts[len(root.resolve().parts)] in ("source", "release", "course", "autograder"):
        raise coursedir.CourseError(f"--out {out} would overwrite the course; choose a new folder, e.g. build/bundle")
    lessons = [l for l in coursedir.lessons(root) if any((root / "release" / l).glob("*.ipynb"))]
    if not lessons:
        raise coursedir.CourseError("release/ holds no lesson: run `avgpool-course release` first")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for lesson in lessons:
        shutil.copytree(root / "release" / lesson, out / "release" / lesson, ignore=IGNORE)
    shutil.copytree(root / "course", out / "course", ignore=IGNORE)
    for name in COPIED:
        if (root / name).exists():
            shutil.copy2(root / name, out / name)
    (out / "requirements.lock").write_text(pins.student_lock(root))
    (out / "pyproject.toml").write_text(student_pyproject(root))
    (out / "README.md").write_text(STUDENT_README)
    (out / "Makefile").write_text(STUDENT_MAKEFILE.replace("{instructor_extensions}", " ".join(INSTRUCTOR_EXTENSIONS)))
    problems = leaks.scan(out, root) if check else []
    if problems:
        shutil.rmtree(out)
        raise BundleError("the student bundle would give away solutions or grader files; fix these first:\n"
                          + "\n".join(f"  ! {p}" for p in problems))
    if as_zip:
        archive = out.with_suffix(".zip")
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(out.rglob("*")):
                if path.is_file():
                    zf.write(path, f"{NAME}/{path.relative_to(out).as_posix()}")
        return archive
    return out
