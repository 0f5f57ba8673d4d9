"""One set of pins: requirements.lock pins every package, closed on Linux, macOS and Windows;
pyproject.toml's direct dependencies (the lessons', the grader's, the tests') are pinned at the lock's
versions; environment.yml installs the lock itself."""

import json
import re
import tomllib

import pytest
from packaging.requirements import Requirement

from autograder import pins
from shared import REPO


def read(name):
    return (REPO / name).read_text()


def direct_pins(pyproject_text: str) -> dict[str, str]:
    """``{name: version}`` of every direct dependency, extras included; fails on a loose one."""
    project = tomllib.loads(pyproject_text)["project"]
    texts = project["dependencies"] + [d for extra in project["optional-dependencies"].values() for d in extra]
    loose = [t for t in texts if "==" not in t]
    assert not loose, f"unpinned direct dependencies in pyproject.toml: {loose}"
    return {pins.Pin(t).name: pins.Pin(t).version for t in texts}


def disagreements(lock_text: str, pyproject_text: str) -> list[str]:
    lock = pins.read_lock(lock_text)
    return [f"{name}: pyproject {version} vs requirements.lock {lock[name].version if name in lock else None}"
            for name, version in direct_pins(pyproject_text).items()
            if name not in lock or lock[name].version != version]


def test_pyproject_pins_every_direct_dependency_at_the_locks_version():
    assert disagreements(read("requirements.lock"), read("pyproject.toml")) == []
    # the other side: a pin that drifts from the lock, and a loose pin, are caught
    drifted = read("pyproject.toml").replace('"numpy==2.4.6"', '"numpy==2.4.5"')
    assert any(p.startswith("numpy") for p in disagreements(read("requirements.lock"), drifted))
    with pytest.raises(AssertionError, match="unpinned"):
        direct_pins(read("pyproject.toml").replace('"numpy==2.4.6"', '"numpy>=2"'))


def test_every_line_of_the_lock_is_an_exact_pin():
    for line in read("requirements.lock").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            assert [s.operator for s in requirement.specifier] == ["=="], line


def test_the_lock_is_closed_on_every_platform():
    """A resolve from the lock needs nothing outside it: every requirement of every locked package (the
    installed metadata, each platform's markers) is pinned, at a version it accepts."""
    assert pins.unpinned(REPO, read("requirements.lock")) == []


@pytest.mark.parametrize("remove, platform", [("traitlets", "Linux x86_64"), ("appnope", "macOS arm64"),
                                              ("pywinpty", "Windows x86_64")])
def test_a_package_missing_from_the_lock_is_found(remove, platform):
    lock = "\n".join(line for line in read("requirements.lock").splitlines()
                     if not line.lower().startswith(f"{remove}=="))
    problems = pins.unpinned(REPO, lock)
    assert problems and all(p.split(":")[0] == platform or remove == "traitlets" for p in problems)
    assert any(p.startswith(platform) and remove in p for p in problems), problems


def test_a_version_the_requirements_refuse_is_found():
    lock = read("requirements.lock").replace("traitlets==", "traitlets==1.0.0\n# was ")
    assert any("does not accept" in p and "traitlets" in p for p in pins.unpinned(REPO, lock))


def test_environment_yml_installs_exactly_the_lock():
    text = read("environment.yml")
    pip_section = [line.strip()[1:].strip() for line in text.split("- pip:", 1)[1].splitlines()
                   if line.strip().startswith("-")]
    assert pip_section == ["-r requirements.lock", "-e ."], pip_section
    assert "python=3.11" in text


def test_the_student_lock_is_the_lessons_part_of_the_lock():
    student = pins.student_lock(REPO)
    assert pins.unpinned(REPO, student, extras=()) == []
    names = set(pins.read_lock(student))
    assert {"numpy", "torch", "jupyterlab", "nbgrader", "appnope", "pywinpty"} <= names
    assert not names & {"pytest", "playwright", "pytest-timeout"}
    assert all(pins.read_lock(read("requirements.lock"))[n].line == pins.read_lock(student)[n].line for n in names)


def test_torch_pin_and_python_3_11():
    assert pins.read_lock(read("requirements.lock"))["torch"].version == "2.13.0"
    assert tomllib.loads(read("pyproject.toml"))["project"]["requires-python"] == ">=3.11,<3.12"


def proxy_pin_problems(package: dict, lock: dict) -> list[str]:
    """What is wrong with the hub proxy's pins (``deploy/jupyterhub``): package.json must pin
    configurable-http-proxy exactly, package-lock.json must hold that version and every package under it
    with an integrity hash and no download address."""
    wanted = package["dependencies"].get("configurable-http-proxy", "")
    problems = [] if re.fullmatch(r"\d+\.\d+\.\d+", wanted) else [f"package.json: not an exact pin: {wanted!r}"]
    locked = lock["packages"].get("node_modules/configurable-http-proxy", {}).get("version")
    if locked != wanted:
        problems.append(f"package-lock.json has configurable-http-proxy {locked}, package.json {wanted}")
    problems += [f"{name}: no sha512 integrity or a download address" for name, entry in lock["packages"].items()
                 if name and (not entry.get("integrity", "").startswith("sha512-") or "resolved" in entry)]
    return problems


def test_the_hub_proxy_is_pinned_with_everything_under_it():
    package = json.loads(read("deploy/jupyterhub/package.json"))
    lock = json.loads(read("deploy/jupyterhub/package-lock.json"))
    assert proxy_pin_problems(package, lock) == []
    # the other side: a loose pin, a lock of another version, an entry without its hash are caught
    loose = dict(package, dependencies={"configurable-http-proxy": "^5.3.0"})
    assert any("exact pin" in p for p in proxy_pin_problems(loose, lock))
    drifted = json.loads(json.dumps(lock))
    drifted["packages"]["node_modules/configurable-http-proxy"]["version"] = "5.2.0"
    assert any("5.2.0" in p for p in proxy_pin_problems(package, drifted))
    unhashed = json.loads(json.dumps(lock))
    next(entry for name, entry in unhashed["packages"].items() if name).pop("integrity")
    assert any("integrity" in p for p in proxy_pin_problems(package, unhashed))
