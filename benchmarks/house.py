"""The house drawing (issue 44): the code's floors, rooms and stairs, read from the imports.

    .venv/bin/python -m benchmarks.house

prints the roof (the commands), the stage floor (release, collect, grading, results), the ground floor (the
modules directly in ``autograder/``) and the course package under it; each room (module) with its lines; each
flight of stairs (imports from one floor or stage to another) with its count; and what breaks the plan: an
import across the stage floor or up a floor, an import cycle, a room over ``MAX_LINES`` lines.
``tests/e2e/test_layout.py`` asserts that last list is empty.
"""

import ast
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STAGES = ("release", "collect", "grading", "results")
ROOF = ("autograder.cli", "autograder.__main__")
MAX_LINES = 800
#: Rooms allowed to be larger: the child's program is one self-contained text (it is what the child runs).
LARGE_ROOMS = ("autograder.grading._child",)
#: Floors from the top; a module may import its own floor's ground and anything below, never above.
FLOORS = ("roof", *STAGES, "ground", "course")


def modules(root: Path = REPO) -> dict[str, Path]:
    """Every module of ``autograder`` and ``course``: dotted name -> file (a package is its ``__init__``)."""
    found = {}
    for package in ("autograder", "course"):
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def floor(module: str) -> str:
    """``roof``, a stage's name, ``ground`` or ``course``."""
    parts = module.split(".")
    if parts[0] == "course":
        return "course"
    if module in ROOF:
        return "roof"
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in STAGES) else "ground"


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``module`` (file ``path``) imports, at any depth; ``from a import b``
    counts as ``a.b`` when that is a module, else ``a``."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            stem = ".".join(base + ([node.module] if node.module else []))
            names = [f"{stem}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            while parts and ".".join(parts) not in known:
                parts.pop()
            if parts and ".".join(parts) != module:
                found.add(".".join(parts))
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def is_package_edge(source: str, target: str) -> bool:
    """A package's ``__init__`` importing its own submodules (a re-export), or a submodule its own package's
    ``__init__``: the same room's door, not a flight of stairs."""
    return target.startswith(source + ".") or source.startswith(target + ".")


def problems(root: Path = REPO) -> list[str]:
    """What breaks the plan: an import across the stage floor or up a floor, a cycle, a room too large."""
    known = modules(root)
    graph = {module: imports(module, path, known) for module, path in known.items()}
    found = []
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            above, below = floor(source), floor(target)
            if above == "roof" or above == below:
                continue
            if below == "roof" or (below in STAGES and above != below) or (above == "course" and below != "course"):
                found.append(f"{source} ({above}) imports {target} ({below})")
    plain = {source: {t for t in targets if not is_package_edge(source, t)} for source, targets in graph.items()}
    found += [f"an import cycle: {' -> '.join(group)}" for group in cycles(plain)]
    for module, path in sorted(known.items()):
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and module not in LARGE_ROOMS:
            found.append(f"{module}: {lines} lines, more than {MAX_LINES}")
    return found


def drawing(root: Path = REPO) -> str:
    """The floors top to bottom, their rooms (module: lines) and the stairs between floors (counts)."""
    known = modules(root)
    rooms = {name: [] for name in FLOORS}
    for module, path in known.items():
        rooms[floor(module)].append(f"{module.split('.', 1)[-1] if '.' in module else module} "
                                    f"{len(path.read_text().splitlines())}")
    stairs = Counter()
    for module, path in known.items():
        for target in imports(module, path, known):
            if floor(module) != floor(target):
                stairs[floor(module), floor(target)] += 1
    out = []
    for name in FLOORS:
        label = {"roof": "roof (commands)", "ground": "ground floor", "course": "course/ (under the house)"}
        out.append(f"{label.get(name, 'stage ' + name)}: {len(rooms[name])} rooms")
        out.append("    " + ", ".join(sorted(rooms[name])))
    out.append("stairs (imports between floors):")
    out += [f"    {a} -> {b}: {n}" for (a, b), n in sorted(stairs.items(), key=lambda s: (FLOORS.index(s[0][0]),
                                                                                      FLOORS.index(s[0][1])))]
    broken = problems(root)
    out.append("what breaks the plan: " + ("nothing" if not broken else ""))
    out += [f"    {line}" for line in broken]
    return "\n".join(out)


if __name__ == "__main__":
    print(drawing())
