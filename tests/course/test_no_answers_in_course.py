"""Nothing a student imports solves an exercise: no function or class of ``course/`` (public or private)
passes a graded cell when it is handed in as the student's answer.

Each graded cell runs here in-process, as in a notebook, on the reference solution with one student
name replaced by a ``course`` object; a cell the reference itself does not pass in this harness is left
out, and the test says which and why. Shortcuts keep the scan fast without changing a verdict (see
:func:`passing_objects`): the cell's statements before its first mention of the name run once, not once
per object; the source rules (pure) run once per course object, and on an object they are slow on, last;
every object that passes so passes the plain run too before it counts.
"""

import ast
import contextlib
import copy
import functools
import importlib
import inspect
import io
import linecache
import pkgutil
import signal
import sys
import warnings

import pytest

import course
from autograder.coursedir import lessons
from autograder.grading.lesson import load_lesson, names_read
from course.reference import avg_pool2d_reference
from shared import REPO

SECONDS_PER_RUN = 20
#: The source rules a graded cell states first (``check_avoids``: no library shortcut; the loop rules): each
#: reads only the source of what it is given, changes nothing and returns None, so all it does to a run is
#: to raise or not. On a course object each costs a second or more (``course/checks/`` is large).
SOURCE_RULES = ("check_avoids", "check_output_loops", "check_kernel_loops")
#: Built-ins through which a statement can read a name it does not spell out.
BY_NAME = ("globals", "locals", "vars", "eval", "exec")
#: CPU seconds a source rule may spend on a course object before the scan runs it last (:class:`_Rule`).
RULE_CPU_SECONDS = 0.1


def course_objects() -> dict[str, object]:
    """Every function and class that ``course``'s modules (those of its packages too) define, by ``module.name``."""
    found = {}
    for info in pkgutil.walk_packages(course.__path__, "course."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    found.update({f"course.{n}": v for n, v in vars(course).items()
                  if (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == "course"})
    return found


class _TooLong(Exception):
    pass


def _on_alarm(signum, frame):
    raise _TooLong()


def _runs(code, namespace: dict, why: list | None = None) -> bool:
    """Run compiled ``code`` in ``namespace`` (which it changes), as a notebook runs a cell; True iff it
    runs to the end within ``SECONDS_PER_RUN``."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(SECONDS_PER_RUN)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(code, namespace)
        return True
    except BaseException as exc:  # noqa: BLE001 - any failure, a timeout included, is a failing cell
        if why is not None:
            why.append(f"{type(exc).__name__}: {str(exc)[:300]}")
        return False
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is not None:
            plt.close("all")  # figures a course object drew (no cell reads another run's figures)


def _passes(source: str, namespace: dict, why: list | None = None) -> bool:
    """Run a graded cell in a copy of ``namespace``; True iff it runs to the end."""
    return _runs(compile(source, "<graded cell>", "exec"), dict(namespace), why)


class _Deferred(BaseException):
    pass


class _Rule:
    """A source rule (:data:`SOURCE_RULES`) that runs where it is cheap and passes unchecked where it is
    not: stopped after ``RULE_CPU_SECONDS`` of CPU time on a function, and on that function from then on
    (see :func:`passing_objects`). A rule is pure, so each outcome is kept: by the rule, the function and
    the arguments but ``name`` (which only words the message)."""

    slow: dict[int, object] = {}  # id -> the function (kept, so that its id stays its own)
    outcomes: dict[tuple, tuple[object, BaseException | None]] = {}  # -> (the function, what it raised)

    def __init__(self, rule):
        self.rule = rule

    def __call__(self, function, *args, **kwargs) -> None:
        if id(function) in self.slow:
            return None
        given = inspect.signature(self.rule).bind(function, *args, **kwargs).arguments
        key = (self.rule.__name__, id(function), repr({k: v for k, v in given.items() if k not in ("function", "name")}))
        if key in self.outcomes:
            error = self.outcomes[key][1]
            if error is not None:
                raise error
            return None
        armed, fired = [True], []

        def stop(signum, frame):
            if armed:  # never once the rule has ended: what it did stands
                fired.append(True)
                raise _Deferred()

        previous = signal.signal(signal.SIGPROF, stop)
        signal.setitimer(signal.ITIMER_PROF, RULE_CPU_SECONDS)
        try:
            try:
                self.rule(function, *args, **kwargs)
            finally:
                armed.clear()
        except BaseException as error:  # noqa: BLE001 - what the rule raised, unless the timer stopped it
            if not fired:
                if isinstance(error, Exception) and not isinstance(error, _TooLong):  # not the run's own alarm
                    self.outcomes[key] = (function, error)
                raise
        else:
            if not fired:
                self.outcomes[key] = (function, None)
                return None
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
        self.slow[id(function)] = function
        return None


def _rule_call(statement: ast.stmt) -> bool:
    """Whether ``statement`` is a source rule on a line of its own whose arguments are names, constants and
    attributes of names (``check_avoids(AvgPool2d.forward, NOT_YOURS, "AvgPool2d.forward")``)."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name) and statement.value.func.id in SOURCE_RULES):
        return False
    plain = (ast.Name, ast.Constant, ast.Attribute, ast.List, ast.Tuple, ast.Load)
    arguments = statement.value.args + [k.value for k in statement.value.keywords]
    return all(isinstance(node, plain) for argument in arguments for node in ast.walk(argument))


def _rules_are_statements(tree: ast.Module) -> bool:
    """Whether every use of a :data:`SOURCE_RULES` name in the cell is a :func:`_rule_call` at the top
    level: nothing in the cell catches what a rule raises or reads what it returns."""
    calls = {id(s.value.func) for s in tree.body if _rule_call(s)}
    return all(id(node) in calls for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id in SOURCE_RULES)


def _mentions(statement: ast.stmt, name: str) -> bool:
    """Whether ``statement`` (with every function or class it defines) names ``name``, or reads names
    through :data:`BY_NAME`."""
    return any(isinstance(node, ast.Name) and node.id in (name, *BY_NAME) for node in ast.walk(statement))


def _plan(tree: ast.Module, name: str) -> tuple[list, list, list]:
    """The cell's top-level statements as ``(leading, rules, rest)``: ``leading``, the statements before the
    first that mentions ``name`` other than a rule; ``rules``, the rules among them that mention ``name``
    (all of them: :func:`_rules_are_statements`, else none); ``rest``, the statements from there on.
    A leading statement that binds a name such a rule reads ends ``leading``."""
    rules_apart = _rules_are_statements(tree)
    leading, rules = [], []
    for statement in tree.body:
        if rules_apart and _rule_call(statement) and _mentions(statement, name):
            rules.append(statement)
        elif _mentions(statement, name) or _binds_what_rules_read(statement, rules):
            break
        else:
            leading.append(statement)
    return leading, rules, tree.body[len(leading) + len(rules):]


def _binds_what_rules_read(statement: ast.stmt, rules: list) -> bool:
    """Whether ``statement`` binds a name that one of ``rules`` reads."""
    read = {node.id for rule in rules for node in ast.walk(rule) if isinstance(node, ast.Name)}
    bound = {getattr(node, "id", None) or getattr(node, "name", None) or getattr(node, "asname", None)
             for node in ast.walk(statement)
             if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
             or isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
    bound |= {(alias.asname or alias.name).split(".")[0] for node in ast.walk(statement)
              if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    return bool(read & bound)


def passing_objects(source: str, name: str, namespace: dict, objects: dict[str, object]) -> list[str]:
    """The labels of ``objects`` that pass the graded cell ``source`` as the student's ``name`` (the rest of
    ``namespace``: the reference). Each verdict is the plain run's (:func:`_passes`), reached faster:

    - The cell's ``leading`` statements (:func:`_plan`) do not mention ``name``, so they do the same
      whatever it holds (the reference's functions read the reference's namespace, not the cell's): they
      run once, and each object runs the ``rules`` and the ``rest`` in that state, the values the leading
      statements made copied afresh (``copy.deepcopy``) so that no run sees what another changed. Where they
      fail or their values cannot be copied, each object runs the whole cell.
    - The source rules are pure (they read the source of what they are given, change nothing, return None)
      and on lines of their own, so moving them after leading statements that bind nothing they read
      changes no verdict, and a run in which some rules pass unchecked (:class:`_Rule`: those that would
      take long) and that fails means the cell fails: where every rule passes, the cell runs as that run;
      where one fails, the cell stops there.
    - Only an object that passes so runs the whole cell as it is (:func:`_passes`), which decides.
    """
    tree = ast.parse(source)
    leading, rules, rest = _plan(tree, name)
    state = dict(namespace)  # one dict: the functions the leading statements define read it as their globals
    if leading and _runs(compile(ast.Module(leading, []), "<graded cell>", "exec"), state):
        made = {k: v for k, v in state.items() if k not in namespace or v is not namespace[k]}
    else:
        made, rules, rest = {}, [], tree.body
    code = compile(ast.Module(rules + rest, []), "<graded cell>", "exec")
    apart = {n: _Rule(namespace[n]) for n in SOURCE_RULES if n in namespace} if _rules_are_statements(tree) else {}
    found = []
    for label, value in objects.items():
        try:
            fresh = copy.deepcopy(made, {id(v): v for v in made.values() if inspect.ismodule(v)})
        except Exception:  # noqa: BLE001 - a value that cannot be copied: this object runs the whole cell
            fresh = None
        if fresh is not None:
            state.clear()
            state.update({**namespace, **fresh, **apart, name: value})
            if not _runs(code, state):
                continue
        if _passes(source, {**namespace, name: value}):
            found.append(label)
    return found


@functools.lru_cache(maxsize=None)
def reference_namespace(lesson_name: str) -> dict:
    """The set-up and the reference solution cells of ``lesson_name``, run in notebook order, once per
    process (the lesson's context cells are left out: they train networks and draw figures). Each run
    works in a copy of it."""
    import matplotlib

    lesson = load_lesson(lesson_name, REPO)
    matplotlib.use("Agg")
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in sorted(lesson.prelude + [c for c in lesson.solutions if c.cell_type == "code"],
                           key=lambda c: c.index):
            filename = f"<cell {cell.id}>"  # registered like IPython's cells, so inspect reads the source
            linecache.cache[filename] = (len(cell.source), None, cell.source.splitlines(True), filename)
            exec(compile(cell.source, filename, "exec"), namespace)
    return namespace


def answers_found(lesson, objects: dict[str, object]) -> tuple[list[str], list[str], int]:
    """(``"cell: name = course object"`` for every course object that passes a graded cell as the
    student's ``name``; why each cell that calls a student's function could not run on the reference;
    the number of cells that call a student's function)."""
    namespace = reference_namespace(lesson.name)
    student_names = {n for n in lesson.solution_names if callable(namespace.get(n))}
    found, skipped, calling = [], [], 0
    for cell in lesson.tests:
        names = sorted(names_read(cell.source) & student_names)
        calling += bool(names)
        why: list = []
        if not names or not _passes(cell.source, namespace, why):
            skipped.extend(f"{cell.id}: {reason}" for reason in why)
            continue
        for name in names:
            found.extend(f"{cell.id}: {name} = {label}" for label in passing_objects(cell.source, name, namespace,
                                                                                     objects))
    return found, skipped, calling


@pytest.mark.parametrize("lesson_name", lessons(REPO))
def test_no_course_function_or_class_passes_a_graded_cell_on_its_own(lesson_name):
    lesson = load_lesson(lesson_name, REPO)
    found, skipped, calling = answers_found(lesson, course_objects())
    assert calling and not skipped, f"cells that call the student's code did not run on the reference: {skipped}"
    assert not found, "course/ gives away answers:\n" + "\n".join(found)


def test_the_scan_finds_an_answer_planted_in_course():
    """The lesson-1 answer to output_size, planted back as a course helper, is found."""
    lesson = load_lesson("lesson1_by_hand", REPO)
    planted = reference_namespace(lesson.name)["output_size"]
    found, _, _ = answers_found(lesson, {"course.network._pair_and_rules": planted})
    assert "output_size_basic: output_size = course.network._pair_and_rules" in found


def _vandal(x, *args, **kwargs):
    """Zeroes its input in place (what a run may do to the values the leading statements made)."""
    x[...] = 0
    return x


def _through_the_reference(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """Right values, by the course's reference: what ``check_avoids`` refuses in lesson 2."""
    return avg_pool2d_reference(x, kernel_size, stride, padding, count_include_pad)


@pytest.mark.parametrize("rules_last", [False, True], ids=["rules-first", "rules-last"])
def test_the_shortcuts_change_no_verdict(rules_last, monkeypatch):
    """In lesson 2's forward_tests (check_avoids, then the worked example made by a leading statement),
    the reference's own answer planted as a course helper is found, after a helper that zeroes the worked
    example in place; the right values through the course's reference (refused by check_avoids) are not,
    whether the rule runs first or, as on a function it is slow on, last."""
    lesson = load_lesson("lesson2_loops", REPO)
    namespace = reference_namespace(lesson.name)
    objects = {"vandal": _vandal, "answer": namespace["avg_pool2d_loops"], "through": _through_the_reference}
    monkeypatch.setattr(_Rule, "slow", {id(o): o for o in objects.values()} if rules_last else {})
    monkeypatch.setattr(_Rule, "outcomes", {})
    cell = next(c for c in lesson.tests if c.id == "forward_tests")
    leading, rules, rest = _plan(ast.parse(cell.source), "avg_pool2d_loops")
    assert leading and [ast.unparse(r).split("(")[0] for r in rules] == ["check_avoids"] and rest
    assert passing_objects(cell.source, "avg_pool2d_loops", namespace, objects) == ["answer"]
    assert _passes(cell.source, {**namespace, "avg_pool2d_loops": _through_the_reference}) is False
    refused = [error for function, error in _Rule.outcomes.values() if function is _through_the_reference]
    assert refused == ([] if rules_last else [refused[0]]) and (rules_last or isinstance(refused[0], AssertionError))
