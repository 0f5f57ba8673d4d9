"""The pinned install: ``requirements.lock`` and the closure of its requirements on every platform.

``requirements.lock`` pins every package of the course environment (students' lessons, the grader, the
tests). A package that only one platform needs (``appnope`` on macOS, ``pywinpty`` on Windows) carries
its marker, so pip installs it there and skips it elsewhere. :func:`unpinned` walks the requirements of
the installed packages (their metadata; nothing is downloaded) from the project's direct dependencies,
with each platform's markers, and lists every requirement the lock does not satisfy: an empty list
means a resolve from the lock needs nothing outside it. :func:`student_lock` is the part of the lock
that the lessons alone need: what the student bundle installs.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: The platforms the course installs on: marker values of a stock CPython 3.11 on each.
PLATFORMS = {
    "Linux x86_64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
                     "os_name": "posix"},
    "macOS arm64": {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64",
                    "os_name": "posix"},
    "Windows x86_64": {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64",
                       "os_name": "nt"},
}
_PYTHON = {"python_version": "3.11", "python_full_version": "3.11.9", "implementation_name": "cpython",
           "platform_python_implementation": "CPython"}


class Pin:
    """One line of a lock: ``name==version`` and, for one platform's packages, ``; marker``."""

    def __init__(self, line: str):
        text, _, marker = line.partition(";")
        self.requirement = Requirement(text.strip())
        self.name = canonicalize_name(self.requirement.name)
        self.version = next(iter(self.requirement.specifier)).version
        self.marker = Marker(marker.strip()) if marker.strip() else None
        self.line = line.strip()

    def applies(self, platform: dict) -> bool:
        return self.marker is None or self.marker.evaluate(dict(_PYTHON, **platform))


def read_lock(text: str) -> dict[str, Pin]:
    """The pins of a lock's text, by canonical name (comments and blank lines skipped)."""
    pins = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            pin = Pin(line)
            pins[pin.name] = pin
    return pins


def direct_dependencies(root: Path, extras: tuple[str, ...] = ()) -> list[Requirement]:
    """``pyproject.toml``'s ``dependencies`` plus those of the named optional ``extras``."""
    project = tomllib.loads((Path(root) / "pyproject.toml").read_text())["project"]
    texts = list(project.get("dependencies", []))
    for extra in extras:
        texts += project.get("optional-dependencies", {})[extra]
    return [Requirement(text) for text in texts]


def _requires(name: str) -> list[Requirement] | None:
    try:
        return [Requirement(text) for text in metadata.distribution(name).requires or []]
    except metadata.PackageNotFoundError:
        return None  # not installed here (another platform's package): its own requirements are unknown


def walk(roots: list[Requirement], pins: dict[str, Pin], platform: dict) -> tuple[set[str], list[str]]:
    """``(names needed, problems)`` on ``platform``, starting from ``roots``: every requirement whose
    marker holds must be pinned, by a pin that applies there, at a version it accepts."""
    needed: set[str] = set()
    problems: list[str] = []
    todo = [(root, "pyproject.toml", "") for root in roots]
    seen: set[tuple[str, str]] = set()
    while todo:
        requirement, wanted_by, extra = todo.pop()
        environment = dict(_PYTHON, **platform, extra=extra)
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        name = canonicalize_name(requirement.name)
        pin = pins.get(name)
        if pin is None or not pin.applies(platform):
            problems.append(f"{requirement} (needed by {wanted_by}) is not in the lock")
            continue
        if not requirement.specifier.contains(pin.version, prereleases=True):
            problems.append(f"{requirement} (needed by {wanted_by}) does not accept the lock's {pin.line}")
        needed.add(name)
        for wanted_extra in ("", *sorted(requirement.extras)):
            if (name, wanted_extra) in seen:
                continue
            seen.add((name, wanted_extra))
            for sub in _requires(name) or []:
                todo.append((sub, name, wanted_extra))
    return needed, sorted(set(problems))


def unpinned(root: Path, lock_text: str, extras: tuple[str, ...] = ("grader", "postgres", "cluster", "hub", "test")) -> list[str]:
    """What a resolve from ``lock_text`` would need from outside it, on any of :data:`PLATFORMS`."""
    pins = read_lock(lock_text)
    roots = direct_dependencies(root, extras)
    return [f"{platform}: {problem}" for platform, values in PLATFORMS.items()
            for problem in walk(roots, pins, values)[1]]


def student_lock(root: Path) -> str:
    """The lines of ``requirements.lock`` that the lessons need on some platform (``dependencies`` only,
    no grader or test extra), with a header saying so."""
    lock = (Path(root) / "requirements.lock").read_text()
    pins = read_lock(lock)
    roots = direct_dependencies(root)
    needed = set().union(*(walk(roots, pins, values)[0] for values in PLATFORMS.values()))
    lines = [pins[name].line for name in sorted(needed, key=lambda n: pins[n].line.lower())]
    return ("# What the lessons need, pinned exactly (Python 3.11): the course's requirements.lock without the\n"
            "# grader's and the tests' packages. Lines with a marker install only on that platform.\n"
            + "\n".join(lines) + "\n")
