"""A lesson as the trusted grader sees it, read from the instructor's notebook (``source/``) and the
student notebook (``release/``): solution cells, test cells (hidden tests included), set-up code.

Everything here is driven by the notebooks' nbgrader metadata, so a new lesson needs no grader change.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

import nbformat

from autograder.coursedir import notebook
from course.checks.analysis.text import parse

#: Bumped whenever a change in the grader may change a verdict (it is part of every cache key).
GRADER_VERSION = "trusted-7"

#: The tag of a solution cell that re-uses an earlier lesson's exercise (``output_size`` in lessons 2-4):
#: the student writes it again to work with, and the grader runs the reference in its place.
GIVEN_TAG = "given-at-grading"

#: Modules that a lesson may forbid (named in a test's ``check_avoids`` list); the child then cannot
#: import them at all, so no spelling of the import gets past the rule.
BLOCKABLE_MODULES = {"torch", "torchvision", "scipy", "jax", "tensorflow", "cupy", "numba", "skimage", "cv2"}

#: PyTorch's native operators a lesson forbids by a ``check_avoids`` pattern (issue 50 item 4), as ``fnmatch`` patterns
#: of an operator's name (every namespace and overload: ``aten::avg_pool2d.out``, ``quantized::conv2d``): where the
#: child has PyTorch, they are overridden at its dispatcher before student code runs (``_child.raise_wall``).
NATIVE_OPERATORS = {"*pool*": "*pool[123]d*", "conv*": "*conv[!e]*", "interpolate": "*upsample*"}


@dataclass(frozen=True)
class Cell:
    id: str
    kind: str  # "prelude", "context", "solution", "test"
    source: str
    cell_type: str = "code"
    points: float = 0.0
    index: int = 0


def code_of(source: str) -> str:
    """Trusted set-up code without IPython magics or shell lines (they mean nothing outside a kernel)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _parse(source: str) -> ast.Module | None:
    try:
        return parse(source)
    except SyntaxError:
        return None


def names_read(source: str) -> set[str]:
    """Every name a cell loads (anywhere in it)."""
    tree = _parse(code_of(source))
    if tree is None:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def names_bound(source: str, top_level: bool = False) -> set[str]:
    """Names a cell binds (assignments, defs, classes, imports; ``top_level``: only module-level ones)."""
    tree = _parse(code_of(source))
    if tree is None:
        return set()
    nodes = tree.body if top_level else list(ast.walk(tree))
    bound: set[str] = set()
    for node in nodes:
        for sub in (ast.walk(node) if top_level else [node]):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                bound.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(sub.name)
                if top_level:
                    break
            elif isinstance(sub, ast.alias):
                bound.add((sub.asname or sub.name).split(".")[0])
            elif isinstance(sub, ast.arg):
                if not top_level:
                    bound.add(sub.arg)
    return bound


def _base_name(node: ast.AST) -> str | None:
    """``Own`` of ``Own.p.q`` or ``table["k"]``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


#: Top-level statements of a given-at-grading cell that are kept at grading when they bind none of the
#: reference's names: the student's own helpers, constants and imports (printed checks and the like are not).
KEPT_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign,
                   ast.AnnAssign)


def kept_definitions(source: str, replaced: set[str]) -> str:
    """The student's own top-level definitions in a given-at-grading cell (``source``): every def, class,
    import and assignment that binds none of the ``replaced`` names (those the reference cell binds, e.g.
    ``output_size``), in order and as written; "" for a cell that does not parse."""
    tree = _parse(source)
    if tree is None:
        return ""
    lines = source.splitlines()
    spans = [(min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])]), s.end_lineno or s.lineno)
             for s in tree.body]
    kept: list[str] = []
    for index, (statement, (start, end)) in enumerate(zip(tree.body, spans)):
        if not isinstance(statement, KEPT_STATEMENTS) or names_bound(ast.unparse(statement), True) & replaced:
            continue
        shared = any(i != index and s <= end and e >= start for i, (s, e) in enumerate(spans))
        kept.append(ast.unparse(statement) if shared else "\n".join(lines[start - 1:end]))
    return "\n\n\n".join(kept)


def definition_source(cells: list[str], name: str) -> str | None:
    """The student's source behind ``name``: the top-level statement(s) of the solution cells that define
    it, plus, transitively, those defining any other top-level name it uses (helpers, aliased imports).
    This is what ``inspect.getsource`` shows in the notebook, and more: a forbidden call moved into a
    helper is still seen, and so is every top-level statement that binds no name but reads one of these
    (``Own.p = F.avg_pool2d``, ``table["k"] = f``, ``setattr(Own, "p", f)``): it can change what the name
    holds. ``None`` when no top-level statement defines ``name``. (Several names of the same cells:
    :func:`top_level_statements` once, then :func:`definition_in`.)"""
    return definition_in(top_level_statements(cells), name)


def top_level_statements(cells: list[str]) -> list[tuple[set[str], str, set[str], set[str]]]:
    """The top-level statements of ``cells`` as :func:`definition_in` reads them: ``(names bound, source, names
    used, names whose attributes or items it changes)``, read once for every name asked."""
    statements: list[tuple[set[str], str, set[str], set[str]]] = []  # (names bound, source, used, changed)
    for text in cells:
        tree = _parse(text)
        if tree is None:
            continue
        for node in tree.body:
            segment = ast.get_source_segment(text, node) or ""
            bound = names_bound(segment, top_level=True) if segment else set()
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            if not bound or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stored = used if not bound else set()
            else:  # Own.p = ..., table["k"] = ... (with a walrus or a tuple target beside)
                stored = {_base_name(t) for n in ast.walk(node) for t in getattr(n, "targets", [getattr(n, "target", None)])
                          if isinstance(t, (ast.Attribute, ast.Subscript))} - {None}
            statements.append((bound, segment, used, stored))
    return statements


def definition_in(statements: list[tuple[set[str], str, set[str], set[str]]], name: str) -> str | None:
    """:func:`definition_source` of ``name`` among ``statements`` (:func:`top_level_statements`)."""
    wanted, chosen, seen = [name], [], set()
    while wanted:
        current = wanted.pop()
        if current in seen:
            continue
        seen.add(current)
        for index, (bound, _segment, used, changed) in enumerate(statements):
            if (current in bound or current in changed) and index not in chosen:
                chosen.append(index)
                wanted.extend(used - seen)
    if not chosen:
        return None
    return "\n\n".join(statements[i][1] for i in sorted(chosen))


def _imports_only(source: str) -> str:
    tree = _parse(code_of(source))
    if tree is None:
        return ""
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))


def literal_constants(cells: list[Cell]) -> dict:
    """Top-level ``NAME = <literal>`` assignments of trusted cells (the set-up's list of what the
    exercises may not use, say), by name."""
    constants: dict = {}
    for cell in cells:
        tree = _parse(cell.source)
        for node in tree.body if tree is not None else []:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    constants[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return constants


def avoided(tests: list[Cell], prelude: list[Cell] = ()) -> set[str]:
    """Every entry of the ``check_avoids(fn, [...])`` lists of the tests; a list given by name is read from the
    set-up's literal constants."""
    constants = literal_constants(list(prelude))
    found: set[str] = set()
    for cell in tests:
        tree = _parse(cell.source)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name == "check_avoids" and len(node.args) >= 2:
                    argument = node.args[1]
                    try:
                        values = (constants.get(argument.id) if isinstance(argument, ast.Name)
                                  else ast.literal_eval(argument))
                    except ValueError:
                        continue
                    if isinstance(values, (list, tuple, set)):
                        found.update(v for v in values if isinstance(v, str))
    return found


def forbidden_modules(tests: list[Cell], prelude: list[Cell] = ()) -> list[str]:
    """Modules named in ``check_avoids`` lists of the tests (:func:`avoided`) that the child can block."""
    return sorted(avoided(tests, prelude) & BLOCKABLE_MODULES)


def walled_operators(tests: list[Cell], prelude: list[Cell] = ()) -> list[str]:
    """The :data:`NATIVE_OPERATORS` patterns of what the tests' ``check_avoids`` lists forbid, where the child
    has PyTorch (a lesson that blocks it needs no wall)."""
    found = avoided(tests, prelude)
    return [] if "torch" in found else sorted(NATIVE_OPERATORS[p] for p in found & set(NATIVE_OPERATORS))


def _meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


@dataclass
class Lesson:
    """The trusted parts of one lesson."""

    name: str
    notebook_name: str  # file name, e.g. lesson1_by_hand.ipynb
    source_path: Path
    release_path: Path
    prelude: list[Cell]  # set-up code: run in the parent (trusted) and in the child
    context: list[Cell]  # ungraded cells the graded cells need, beyond the set-up
    solutions: list[Cell]  # the reference solution cells (source/)
    stubs: dict[str, str]  # release/ solution sources by grade_id (what a student starts from)
    solution_types: dict[str, str]  # grade_id -> cell type ("code" or "markdown")
    tests: list[Cell]
    block: list[str] = field(default_factory=list)
    wall: list[str] = field(default_factory=list)  # native operators overridden in the child (walled_operators)
    parent_context: list[Cell] = field(default_factory=list)  # context cells that use no student name
    given: list[str] = field(default_factory=list)  # solution ids graded with the reference (tag GIVEN_TAG)

    @property
    def solution_ids(self) -> list[str]:
        """The trusted list of solution grade_ids, in notebook order (from ``release/``)."""
        return list(self.stubs)

    @property
    def code_solution_ids(self) -> list[str]:
        return [i for i in self.stubs if self.solution_types.get(i) == "code"]

    @property
    def max_score(self) -> float:
        return float(sum(c.points for c in self.tests))

    # A cache: what depends only on the lesson's trusted cells is computed once per Lesson object (cached_property),
    # so its key is the Lesson's: the lesson's content (load_lesson makes one per course root, lesson and stamps of
    # its source and release notebooks) and the grader's version (this process's code). It holds nothing from a
    # submission: only names read from the reference solutions, the set-up and the test cells.

    @cached_property
    def solution_names(self) -> frozenset[str]:
        """Names the reference solution cells bind at top level, less those the set-up binds: the only
        student names the grader ever reads from the child."""
        bound: set[str] = set()
        for cell in self.solutions:
            if cell.cell_type == "code":
                bound |= names_bound(cell.source, top_level=True)
        for cell in self.prelude:
            bound -= names_bound(cell.source, top_level=True)
        return frozenset(bound)

    @cached_property
    def test_plan(self) -> dict[str, frozenset[str]]:
        """``{test id: the student names that go into it}``: those its source reads that the reference solution
        cells bind at top level (:attr:`solution_names`), never a builtin (a student's ``def enumerate`` stays in
        the child) and never a name the test cell binds itself."""
        return {test.id: frozenset((names_read(test.source) & self.solution_names) - set(dir(builtins))
                                   - names_bound(test.source)) for test in self.tests}

    def preload_modules(self, helpers=()) -> list[str]:
        """The modules a warm sandbox template imports once for every submission of this lesson: those
        the set-up imports (``import a.b``, ``from a.b import c``), what ``course.setup_notebook`` imports on
        first use (``course.SETUP_IMPORTS``) and the course helpers' modules, never a blocked one (its objects
        would be in the child's memory even though its import is refused)."""
        names: list[str] = []
        for cell in self.prelude:
            try:
                tree = parse(cell.source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.extend(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.append(node.module)
        if any(name == "course" or name.startswith("course.") for name in names):  # the set-up calls setup_notebook
            from course import SETUP_IMPORTS

            names.extend(SETUP_IMPORTS)
        names.extend(spec.partition(":")[0] for spec in helpers)
        blocked = set(self.block)
        return [name for name in dict.fromkeys(names) if name.split(".")[0] not in blocked]

    def reference_sources(self) -> dict[str, str]:
        return {c.id: c.source for c in self.solutions}

    def graded_sources(self, sources: dict[str, str]) -> dict[str, str]:
        """What the grader runs of a submission: its solution sources, with each *given* cell (an earlier
        lesson's exercise re-used here, such as ``output_size``) replaced by the reference (the student's
        other definitions of that cell kept: :meth:`given_source`), so that a bug in it costs points in its
        own lesson only."""
        return {**sources, **{grade_id: self.given_source(grade_id, sources.get(grade_id, ""))
                              for grade_id in self.given}}

    def given_source(self, grade_id: str, source: str) -> str:
        """What runs for the given cell ``grade_id`` whose student source is ``source``: the reference cell,
        then the student's own other definitions of that cell (:func:`kept_definitions`: a helper such as
        ``_as_pair`` written beside ``output_size`` stays the student's). Idempotent."""
        reference = self.reference_sources()[grade_id]
        if source.startswith(reference):  # already graded_sources' output
            source = source[len(reference):]
        kept = kept_definitions(source, names_bound(reference, top_level=True))
        return reference + ("\n\n\n# Kept from your cell (the definitions beside the replaced ones):\n" + kept
                            if kept else "")

    def lost_names(self, sources: dict[str, str]) -> dict[str, str]:
        """``{name: grade_id}``: names the student's given-at-grading cell ``grade_id`` binds at top level
        that no graded cell binds any more (e.g. a helper defined in a ``for`` loop of that cell)."""
        graded = self.graded_sources(sources)
        bound = set().union(*(names_bound(s, top_level=True) for s in graded.values()), set())
        for cell in self.prelude:
            bound |= names_bound(cell.source, top_level=True)
        return {name: grade_id for grade_id in self.given
                for name in sorted(names_bound(sources.get(grade_id, ""), top_level=True) - bound)}

    def content_key(self, sources: dict[str, str]) -> str:
        """A hash of everything a verdict depends on besides the limits: the student's solution sources
        (not those of given cells), the trusted test, set-up and context sources, and the grader version."""
        payload = {
            "grader": GRADER_VERSION,
            "lesson": self.name,
            "prelude": [c.source for c in self.prelude],
            "context": [c.source for c in self.context],
            "tests": [[c.id, c.points, c.source] for c in self.tests],
            # a given cell runs as the reference (plus the student's own definitions of that cell) whatever
            # else the student wrote: keyed by what runs, so the key is the same before and after
            # graded_sources (batch, nbgrader's TrustedExecute)
            "solutions": [[i, sources.get(i, "")] for i in self.code_solution_ids if i not in self.given],
            "given": [[i, self.given_source(i, sources.get(i, ""))] for i in self.given],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _cells(path: Path) -> list:
    nb = nbformat.read(str(path), as_version=4)
    return nb.cells


@lru_cache(maxsize=64)
def _load(lesson: str, source_path: Path, release_path: Path, stamp: tuple) -> Lesson:
    """``lesson`` read from its source and release notebooks; a declared cache keyed by their paths and
    (modification time, size): it holds the course's notebooks only, never a submission."""
    cells = _cells(source_path)
    prelude: list[Cell] = []
    ungraded: list[Cell] = []
    solutions: list[Cell] = []
    tests: list[Cell] = []
    first_code = True
    given: list[str] = []
    for index, cell in enumerate(cells):
        meta = _meta(cell)
        is_code = cell.cell_type == "code"
        if meta.get("solution"):
            if GIVEN_TAG in cell.get("metadata", {}).get("tags", []):
                given.append(str(meta.get("grade_id")))
            solutions.append(Cell(str(meta.get("grade_id")), "solution", cell.source, cell.cell_type,
                                  float(meta.get("points", 0) or 0), index))
        elif meta.get("grade") and is_code:
            tests.append(Cell(str(meta.get("grade_id")), "test", cell.source, "code",
                              float(meta.get("points", 0) or 0), index))
        elif is_code:
            if first_code:
                prelude.append(Cell("setup", "prelude", code_of(cell.source), index=index))
            else:
                ungraded.append(Cell(f"cell{index}", "context", code_of(cell.source), index=index))
        if is_code:
            first_code = False
    # Imports anywhere in the ungraded cells belong to the set-up too.
    extra_imports = "\n".join(filter(None, (_imports_only(c.source) for c in ungraded)))
    if extra_imports:
        prelude.append(Cell("imports", "prelude", extra_imports))
    known = set(dir(builtins))
    for cell in prelude:
        known |= names_bound(cell.source, top_level=True)
    student = set()
    for cell in solutions:
        if cell.cell_type == "code":
            student |= names_bound(cell.source, top_level=True)
    # Context: ungraded cells that define a name a graded cell reads and nothing else defines.
    chosen: dict[int, Cell] = {}
    wanted = [c for c in tests + solutions if c.cell_type == "code"]
    seen_missing: set[str] = set()
    while wanted:
        cell = wanted.pop()
        missing = names_read(cell.source) - names_bound(cell.source) - known - student - seen_missing
        for name in sorted(missing):
            seen_missing.add(name)
            providers = [c for c in ungraded if c.index < cell.index and name in names_bound(c.source, top_level=True)]
            if providers and providers[-1].index not in chosen:
                chosen[providers[-1].index] = providers[-1]
                wanted.append(providers[-1])
    context = [chosen[i] for i in sorted(chosen)]
    parent_context = [c for c in context if not (names_read(c.source) & student)]
    release_cells = _cells(release_path)
    stubs: dict[str, str] = {}
    types: dict[str, str] = {}
    for cell in release_cells:
        meta = _meta(cell)
        if meta.get("solution") and meta.get("grade_id") and str(meta["grade_id"]) not in stubs:
            stubs[str(meta["grade_id"])] = cell.source
            types[str(meta["grade_id"])] = cell.cell_type
    return Lesson(lesson, source_path.name, source_path, release_path, prelude, context, solutions, stubs, types,
                  tests, forbidden_modules(tests, prelude), walled_operators(tests, prelude), parent_context, given)


def load_lesson(lesson: str, root: Path) -> Lesson:
    """The lesson ``lesson`` of course root ``root`` (cached until its notebooks change)."""
    root = Path(root).resolve()
    source = notebook(root, "source", lesson)
    release = notebook(root, "release", lesson)
    stamp = tuple((p.stat().st_mtime_ns, p.stat().st_size) for p in (source, release))
    return _load(lesson, source, release, stamp)
