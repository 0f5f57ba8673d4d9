"""The README's table of where each concern lives matches the folders (issue 27 step 4): every path it
names exists, and every module of ``autograder/`` is named in it."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


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
