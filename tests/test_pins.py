"""One set of pins: requirements.lock, pyproject.toml and environment.yml agree on every direct dependency."""

import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^\s*-?\s*([A-Za-z0-9_.\-]+)\s*==\s*([A-Za-z0-9_.+\-]+)\s*$")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lines):
    found = {}
    for line in lines:
        match = PIN.match(line.split("#")[0])
        if match:
            found[norm(match.group(1))] = match.group(2)
    return found


def lock_pins(text: str) -> dict:
    return pins(text.splitlines())


def pyproject_pins(text: str) -> dict:
    deps = tomllib.loads(text)["project"]["dependencies"]
    unpinned = [d for d in deps if "==" not in d]
    assert not unpinned, f"unpinned direct dependencies in pyproject.toml: {unpinned}"
    return pins(deps)


def environment_pins(text: str) -> dict:
    pip_section = text.split("- pip:", 1)[1].splitlines()
    return pins(line for line in pip_section if "==" in line)


def disagreements(lock: dict, pyproject: dict, environment: dict) -> list[str]:
    problems = []
    if set(pyproject) != set(environment):
        problems.append(f"direct dependencies differ: pyproject {sorted(pyproject)} vs environment.yml {sorted(environment)}")
    for name, version in pyproject.items():
        if environment.get(name) != version:
            problems.append(f"{name}: pyproject {version} vs environment.yml {environment.get(name)}")
        if lock.get(name) != version:
            problems.append(f"{name}: pyproject {version} vs requirements.lock {lock.get(name)}")
    return problems


def read(name):
    return (REPO / name).read_text()


def test_the_three_pin_files_agree():
    problems = disagreements(lock_pins(read("requirements.lock")), pyproject_pins(read("pyproject.toml")),
                             environment_pins(read("environment.yml")))
    assert not problems, problems


def test_every_line_of_the_lock_is_an_exact_pin():
    loose = [l for l in read("requirements.lock").splitlines() if l.strip() and not l.startswith("#") and "==" not in l]
    assert not loose, loose


def test_torch_pin_is_the_cpu_build_on_disk_and_python_is_3_11():
    assert lock_pins(read("requirements.lock"))["torch"] == "2.13.0"
    assert "python=3.11" in read("environment.yml")


def test_disagreement_is_detected():
    lock = lock_pins(read("requirements.lock"))
    pyproject = pyproject_pins(read("pyproject.toml"))
    environment = environment_pins(read("environment.yml").replace("numpy==", "numpy==0.0.1+"))
    assert any(p.startswith("numpy") for p in disagreements(lock, pyproject, environment))
    with pytest.raises(AssertionError, match="unpinned"):
        pyproject_pins(read("pyproject.toml").replace('"numpy==2.4.6"', '"numpy>=2"'))
