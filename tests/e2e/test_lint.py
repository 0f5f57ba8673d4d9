"""The linter (issue 44): ``ruff check`` with the project's configuration (``[tool.ruff]`` in pyproject.toml)
passes on the repository, and the same configuration refuses an unused import and an undefined name."""

import subprocess
import sys
from pathlib import Path
from shared import REPO


def ruff(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_repository_passes_the_linter():
    result = ruff(".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_linter_refuses_an_unused_import_and_an_undefined_name(tmp_path):
    config = str(REPO / "pyproject.toml")
    (tmp_path / "clean.py").write_text("import os\n\n\ndef here():\n    return os.getcwd()\n")
    assert ruff("--config", config, "clean.py", cwd=tmp_path).returncode == 0
    (tmp_path / "sloppy.py").write_text("import os\n\n\ndef here():\n    return getcwd()\n")
    result = ruff("--config", config, "sloppy.py", cwd=tmp_path)
    assert result.returncode == 1 and "F401" in result.stdout and "F821" in result.stdout, result.stdout
