"""Verdicts: run a lesson's trusted test cells in this (parent) process against one student's code,
which lives in a sandboxed child (:mod:`autograder.grading.sandbox`).

Each test cell runs in a fresh namespace: the lesson's set-up (imports, ``course`` helpers, seeded) plus,
for every name the cell reads that the student's solution cells define, a stand-in: plain data by
value, anything else a :class:`StudentObject` whose calls and attribute reads go to the child and come
back as plain data. A test cell passes iff its code runs to the end without an exception.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import io
import os
import re
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field, asdict
from pathlib import Path

from autograder.grading import _child
from autograder.grading.lesson import Lesson, definition_in, names_bound, names_read, top_level_statements
from autograder.grading.sandbox import (CellOutcome, CrashFault, Fault, GraderFault, Limits, Sandbox, check_level, floor_banner,
                                        containment, hang_seconds, hidden_paths)
from autograder.grading.untrusted import decoded
from autograder.records import PHASES
from course.checks.analysis.lists import ALLOWED_TENSOR_TEXT
from course.checks.analysis.text import compile_tree, parse

_FAULT_ORDER = ("memory", "timeout", "crash")

#: The source rules a test cell calls by name (timed as ``source_rules_cpu``).
TIMED_RULES = ("check_avoids", "check_kernel_loops", "check_output_loops", "loop_nests")


@dataclass
class TestResult:
    grade_id: str
    points: float
    max_points: float
    passed: bool
    message: str
    seconds: float
    fault: str | None = None  # "timeout", "memory" or "crash" when student code broke a limit
    output: str = ""  # what the test cell printed (its pass text)
    review: str | None = None  # an answer in words the grader cannot be sure of, or code a source rule could neither
    # prove allowed nor forbidden (course.checks.NeedsReview: the constructs, lines in their cells): 0 until
    # the instructor scores it by hand (nbgrader flags the cell "needs manual grade"; the report lists it)
    withheld: str | None = None  # the message without the expected value it names (course.checks.WrongValue):
    # what the graded notebook and feedback show until the instructor releases expected answers


@dataclass
class Verdicts:
    """Everything the grader decided about one submission's code."""

    lesson: str
    content_key: str
    tests: list[TestResult]
    cells: list[dict] = field(default_factory=list)  # solution-cell outcomes: id, ok, error, stdout, stderr, fault
    faults: list[str] = field(default_factory=list)  # human-readable, one per fault
    containment: str = ""
    seconds: float = 0.0
    seed: int | None = None  # the grading run's seed: the hidden inputs were drawn from it
    level: str = ""  # the containment level the child had (sandbox.LEVELS)
    phases: dict = field(default_factory=dict)  # seconds by phase (records.PHASES), kept with the verdicts they timed

    @property
    def fault_kinds(self) -> list[str]:
        kinds = {t.fault for t in self.tests if t.fault} | {c.get("fault") for c in self.cells if c.get("fault")}
        return [k for k in _FAULT_ORDER if k in kinds]

    def as_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------------------------------
# Stand-ins for the student's objects

class StudentError(Exception):
    """An exception raised by student code that is not one of the re-created built-in types."""


_BUILTIN_TYPES = {name: getattr(__import__("builtins"), name) for name in _child.BUILTIN_ERRORS
                  if name not in ("Exception",)}


def student_exception(info: dict) -> BaseException:
    """The student's exception re-created in the parent: the same built-in type (or a subclass of it
    carrying the student's class name), with the student's message."""
    name = str(info.get("type", "Exception"))[:100]
    builtin = str(info.get("builtin", "Exception"))
    message = str(info.get("message", ""))
    base = _BUILTIN_TYPES.get(builtin, StudentError)
    if builtin == "BaseException":
        return StudentError(f"{name}: {message}" if message else name)
    if name == builtin and base is not StudentError:
        return base(message)
    return _exception_class(name, base)(message)


@functools.lru_cache(maxsize=256)
def _exception_class(name: str, base: type) -> type:
    """A subclass of ``base`` named like the student's exception class (``StudentError`` where the name is no
    identifier). A declared cache: it holds a class name and a built-in base, never a message or anything else of
    a submission, so one student's entry tells another nothing (two students' classes of one name and base
    are the same class to the parent's ``isinstance``, as they would be by name in a message)."""
    safe = name.replace(".", "_") if name.isidentifier() or name.replace(".", "_").isidentifier() else "StudentError"
    return type(safe, (base,), {"__module__": "student"})


class StudentObject:
    """A student object that lives in the sandboxed child (a function, class, instance, ...).

    Calling it or reading an attribute asks the child; the answer comes back as plain data or as another
    ``StudentObject``. It never compares, converts or tests true on the student's terms: those would
    let student code decide a verdict.
    """

    __slots__ = ("_session", "_ref", "_generation", "_label", "__student_source__", "__submission_source__",
                 "__student_cells__", "__trusted_globals__")

    def __init__(self, session: "Session", ref: dict, label: str, source: str | None = None):
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_ref", {"$ref": ref["$ref"]})
        object.__setattr__(self, "_generation", session.generation)
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "__student_source__", source if source is not None else session.student_source)
        object.__setattr__(self, "__submission_source__", session.student_source)
        object.__setattr__(self, "__student_cells__", session.student_cells)  # a rule's lines count in these
        object.__setattr__(self, "__trusted_globals__", session.namespace)  # the set-up's names, resolved

    def __call__(self, *args, **kwargs):
        return self._session.request({"op": "call", "target": self._ref}, args, kwargs, self)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._session.request({"op": "getattr", "target": self._ref, "name": name}, (), {}, self)

    def __setattr__(self, name, value):
        raise AttributeError("the grader does not set attributes on student objects")

    def __repr__(self) -> str:
        return f"<student object {self._label}>"

    def _refuse(self, *args, **kwargs):
        raise AssertionError(f"{self._label} is not plain data (an array, a tensor, a number, a string, or a tuple, "
                             "list or dict of these), so it cannot be checked; return plain data")

    __bool__ = __len__ = __iter__ = __array__ = __float__ = __int__ = __index__ = __complex__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __contains__ = __getitem__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __neg__ = __abs__ = __matmul__ = __rmatmul__ = __pow__ = _refuse

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    __hash__ = object.__hash__


def _object_class(type_name: str) -> type:
    """A fresh ``StudentObject`` subclass named after the student's type, one per object: failure messages
    name the type, and no two stand-ins ever share a type (so ``type(a) is type(b)`` checks between two
    student results fail, as they must: neither is a real array)."""
    module, _, qualname = type_name.rpartition(".")
    kind = type(qualname if qualname.isidentifier() else "StudentObject", (StudentObject,), {"__slots__": ()})
    kind.__module__ = f"student:{module}" if module else "student"
    kind.__qualname__ = qualname or "object"
    return kind


def _contains_student(value, depth: int = 0) -> bool:
    if isinstance(value, StudentObject):
        return True
    if depth > 4:
        return False
    if type(value) in (list, tuple, set, frozenset):
        return any(_contains_student(v, depth + 1) for v in value)
    if type(value) is dict:
        return any(_contains_student(v, depth + 1) for v in value.values())
    return False


class Session:
    """One submission's sandboxed child, restarted after a fault without the solution cell that caused it."""

    def __init__(self, lesson: Lesson, sources: dict[str, str], limits: Limits, uid: int | None, hide: list[str],
                 resources=None):
        self.lesson, self.limits, self.uid, self.hide = lesson, limits, uid, hide
        self.resources = resources  # the grading run's (Sandbox's default: those of no run)
        self.sources = sources
        self.student_cells = [sources.get(i, "") for i in lesson.code_solution_ids]
        self.student_source = "\n\n".join(self.student_cells)
        self.skip: set[str] = set()
        self.box: Sandbox | None = None
        self.generation = 0
        self.first_outcomes: list[CellOutcome] | None = None
        self.outcomes: dict[str, CellOutcome] = {}
        self.deadline = 0.0
        self.fault: Fault | None = None  # the fault of the current test cell (sticky)
        self.walled: list[str] = []  # walled operators student code called in the current test cell (sticky)
        self.broken: Fault | None = None  # the child cannot even start
        self.helpers: list[str] = []
        self.notes: list[str] = []
        self.namespace: dict = {}  # the lesson's set-up run in the parent (what its names resolve to)
        # seconds by phase of this grading (records.PHASES; record_wall is the record's, submission.recorded)
        self.phases: dict[str, float] = dict.fromkeys((p for p in PHASES if p != "record_wall"), 0.0)
        self._sources_of: dict[str, str] = {}  # source_of by name, for this submission only (parsed once)
        self._statements: list | None = None  # the solution cells' top-level statements (lesson.top_level_statements)

    def add(self, phase: str, seconds: float) -> None:
        self.phases[phase] = self.phases.get(phase, 0.0) + max(0.0, seconds)

    def _started(self, box: Sandbox, since: float) -> None:
        """Add the phases of ``box``'s start (begun at ``since``): the parent's marks, the child's own word."""
        end = time.monotonic()
        marks = box.marks
        hello = marks.get("hello", end)
        cells = marks.get("cells", marks.get("ready", end))
        self.add("child_start_wall", hello - since)
        self.add("child_setup_wall", cells - hello)
        self.add("child_cells_wall", marks.get("ready", end) - cells)
        for name, seconds in box.child_phases.items():
            self.add(f"child_reported_{name}", seconds)

    def _stop(self, box: Sandbox, how) -> None:
        started = time.monotonic()
        how()
        self.add("child_stop_wall", time.monotonic() - started)

    # -- the child --------------------------------------------------------------------------------
    def cells(self) -> list[dict]:
        lesson = self.lesson
        cells = [{"id": c.id, "kind": "prelude", "source": c.source} for c in lesson.prelude]
        ordered = [(c.index, {"id": c.id, "kind": "context", "source": c.source}) for c in lesson.context]
        positions = {c.id: c.index for c in lesson.solutions}
        for grade_id in lesson.code_solution_ids:
            if grade_id in self.skip:
                continue
            ordered.append((positions.get(grade_id, 10**6), {"id": grade_id, "kind": "solution",
                                                             "source": to_python(self.sources.get(grade_id, ""))}))
        cells += [cell for _, cell in sorted(ordered, key=lambda item: item[0])]
        return cells

    def ensure(self) -> Sandbox:
        if self.broken is not None:
            raise self.broken
        if self.box is not None and not self.box.dead:
            return self.box
        for _ in range(len(self.lesson.code_solution_ids) + 2):
            self.generation += 1
            box = Sandbox(self.cells(), limits=self.limits, hide=self.hide, uid=self.uid, block=self.lesson.block,
                          helpers=self.helpers, imports=self.lesson.preload_modules(self.helpers),
                          wall=self.lesson.wall, resources=self.resources)
            since = time.monotonic()
            outcomes = box.start()
            self._started(box, since)
            for outcome in outcomes:
                if outcome.id not in self.outcomes or outcome.fault:
                    self.outcomes[outcome.id] = outcome
            if self.first_outcomes is None:
                self.first_outcomes = outcomes
            faulted = [o for o in outcomes if o.fault]
            if not faulted and not box.dead:
                self.box = box
                return box
            self._stop(box, box.kill)
            culprit = faulted[-1] if faulted else None
            if not box.student_ran:  # nothing of the student's ran: the grader failed, not the student
                message = culprit.error.get("message") if culprit and culprit.error else "the child did not start"
                self.broken = GraderFault(f"the sandbox could not start or run the lesson's set-up: {message}"
                                          + (f" ({box.log_tail(300).strip()})" if box.log_tail(300).strip() else ""))
                raise self.broken
            if culprit is None or culprit.id not in self.lesson.code_solution_ids or culprit.id in self.skip:
                message = culprit.error.get("message") if culprit and culprit.error else "the child did not start"
                kind = {"timeout": _timeout_fault, "memory": _memory_fault}.get(culprit.fault if culprit else "",
                                                                              CrashFault)
                self.broken = kind(f"the sandbox could not run the lesson's set-up: {message}")
                raise self.broken
            self.skip.add(culprit.id)
            self.notes.append(f"solution cell {culprit.id!r}: {culprit.error.get('message') if culprit.error else ''}"
                              " (the cell was skipped when the process was restarted)")
        self.broken = CrashFault("the sandbox kept failing")
        raise self.broken

    def close(self) -> None:
        if self.box is not None:
            self._stop(self.box, self.box.close)
            self.box = None

    # -- requests ---------------------------------------------------------------------------------
    def _encode(self, value, blobs):
        def other(item):
            if isinstance(item, StudentObject):
                if item._generation != self.generation:
                    raise CrashFault("a student object from before the student's process was restarted was used")
                return dict(item._ref)
            raise _child.Unsendable(f"the grader cannot hand a {type(item).__module__}.{type(item).__qualname__} "
                                    "to student code (only plain data, arrays, tensors and student objects)")

        return _child.encode(value, blobs, other)

    def _decode(self, node, blobs, source: str | None = None):
        def ref(item):  # checked: {"$ref": int, "type": text, "callable": bool}
            return _object_class(item["type"])(self, item, item["type"], source)

        return decoded(node, blobs, ref)

    def request(self, message: dict, args=(), kwargs=None, target=None):
        if self.fault is not None:
            raise self.fault
        if target is not None and target._generation != self.generation:
            raise CrashFault("a student object from before the student's process was restarted was used")
        box = self.ensure()
        blobs: list[bytes] = []
        if message["op"] in ("call", "helper"):
            message = dict(message, args=self._encode(list(args), blobs), kwargs=self._encode(dict(kwargs or {}), blobs))
        try:
            reply, out = box.request(message, blobs, self.deadline)
        except Fault as fault:
            self.fault = fault
            raise
        if reply.get("wall"):  # the child's run-time wall stopped a forbidden operator, caught by student code or not
            self.walled += [str(name)[:200] for name in reply["wall"] if str(name) not in self.walled]
            raise AssertionError(walled_message(self.lesson.name, self.walled))
        if "raise" in reply:
            raise student_exception(reply["raise"] if isinstance(reply["raise"], dict) else {})
        if target is not None:
            source = target.__student_source__
        elif message["op"] == "get":
            source = self.source_of(message["name"])
        else:
            source = None
        clock = time.thread_time()
        try:
            return self._decode(reply.get("ok"), out, source)
        except _child.ProtocolError as exc:
            self.fault = CrashFault(f"the student's process sent back something unreadable ({exc})")
            box.kill()
            raise self.fault from None
        finally:
            self.add("decode_cpu", time.thread_time() - clock)

    def source_of(self, name: str) -> str:
        """What ``course.checks.source_of`` shows for student name ``name`` (see ``definition_source``): the
        solution cells' top-level statements read once per submission, each name's source found once."""
        if name not in self._sources_of:
            clock = time.thread_time()
            if self._statements is None:
                self._statements = top_level_statements(self.student_cells)
            found = definition_in(self._statements, name)
            self._sources_of[name] = found if found is not None else self.student_source
            self.add("source_rules_cpu", time.thread_time() - clock)
        return self._sources_of[name]

    def get(self, name: str):
        return self.request({"op": "get", "name": name})

    def helper(self, spec: str, args, kwargs):
        return self.request({"op": "helper", "helper": spec}, args, kwargs)


def walled_message(lesson: str, operators: list[str]) -> str:
    """The verdict on a test cell whose student code called operators the child walls off (``Lesson.wall``)."""
    number = re.match(r"lesson(\d+)", lesson)
    where = f"lesson {number.group(1)}" if number else f"the lesson {lesson}"
    return (f"proved forbidden: {', '.join(f'`{name}`' for name in operators[:5])} is not allowed in {where}: your code "
            f"called PyTorch's own pooling, convolution or resampling (the grader walls these operators off while "
            f"your code runs, whatever route reaches them); write it yourself with {ALLOWED_TENSOR_TEXT}")


def _timeout_fault(message):
    from autograder.grading.sandbox import TimeoutFault

    return TimeoutFault(message)


def _memory_fault(message):
    from autograder.grading.sandbox import MemoryFault

    return MemoryFault(message)


def to_python(source: str) -> str:
    """A student's cell as plain Python: IPython magics become ``get_ipython()`` calls (the child's
    stub ignores them), as in the kernel."""
    if not any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()) and "?" not in source:
        return source
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:
        return source


# ---------------------------------------------------------------------------------------------------
# Output captured per grading call: what a test cell prints goes to that call's buffer, whatever other
# threads of this process (a Dask worker's) print or capture at the same time.

_CAPTURE: contextvars.ContextVar = contextvars.ContextVar("autograder.grading.verdicts.capture", default=None)
_CAPTURE_LOCK = threading.Lock()


class _ContextStream:
    """``sys.stdout`` / ``sys.stderr`` seen by every thread: writes go to the current context's capture
    (``(out, err)`` of :func:`captured`) where one is set, else to the stream it replaced."""

    def __init__(self, fallback, index: int):
        self.fallback, self.index = fallback, index

    def write(self, text) -> int:
        target = _CAPTURE.get()
        return (target[self.index] if target is not None else self.fallback).write(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        target = _CAPTURE.get()
        (target[self.index] if target is not None else self.fallback).flush()

    def __getattr__(self, name):
        return getattr(self.fallback, name)


@contextlib.contextmanager
def captured(out, err):
    """Within the block, what this context prints goes to ``out`` and ``err`` (file-like): the process's
    ``sys.stdout`` and ``sys.stderr`` are never swapped per call, only wrapped once."""
    with _CAPTURE_LOCK:
        for index, name in enumerate(("stdout", "stderr")):
            if not isinstance(getattr(sys, name), _ContextStream):
                setattr(sys, name, _ContextStream(getattr(sys, name), index))
    token = _CAPTURE.set((out, err))
    try:
        yield
    finally:
        _CAPTURE.reset(token)


# ---------------------------------------------------------------------------------------------------
# The parent's namespace

def one_thread() -> None:
    """PyTorch on one thread in this (grading) process, as in the child (``OMP_NUM_THREADS=1``): the parent's
    references are small, and a grading process runs beside its child and the other workers, where more threads
    only contend (OpenMP spin-waits: with two, the parent's median CPU per lesson 2-3 submission went from 0.55 s
    to 2.1 s under a load of 4)."""
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def parent_namespace(lesson: Lesson) -> dict:
    """The lesson's set-up run in this process (trusted code): imports, seeds, ``course`` helpers."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__main__"}
    sink = io.StringIO()
    with captured(sink, sink):
        for cell in lesson.prelude + lesson.parent_context:
            import ast

            try:
                statements = parse(cell.source).body
            except SyntaxError:
                continue
            for statement in statements:
                try:
                    exec(compile_tree(ast.Module([statement], []), f"<{cell.id}>"), namespace)
                except Exception:
                    pass
    return namespace


class _Router:
    """The checks' ``router`` (:func:`course.checks.hooks.grading`) while one submission is graded: calls of marked helpers whose arguments
    hold student objects go to that submission's child."""

    def __init__(self, session: Session):
        self.session = session

    def wants(self, args, kwargs) -> bool:
        return _contains_student(args) or _contains_student(kwargs)

    def send(self, spec: str, args, kwargs):
        return self.session.helper(spec, args, kwargs)

    def timed_call(self, function, args, kwargs):
        """``(function(*args, **kwargs), CPU seconds the child spent on it)``, the time read by this
        process from the kernel's accounting of every process of the child (its cgroup, else its PID
        namespace's tree, reaped processes included); the child's own report is never asked. Where the
        sandbox cannot count them all, a :class:`GraderFault` (the grader's failure, never the student's 0)."""
        box = self.session.ensure()
        why = box.cpu_uncounted()
        if why:
            raise GraderFault(f"could not judge a rule on CPU seconds (lesson 3's vectorized cells): {why}; grade "
                              f"where the child has a cgroup or namespaces (bubblewrap)")
        before = box.cpu_seconds()
        result = function(*args, **kwargs)
        return result, max(0.0, box.cpu_seconds() - before)


def injectable(lesson: Lesson, test) -> set[str]:
    """The student names that go into test cell ``test`` (:attr:`Lesson.test_plan`, read once per lesson)."""
    plan = lesson.test_plan
    if test.id in plan and test in lesson.tests:
        return set(plan[test.id])
    import builtins

    return ((names_read(test.source) & lesson.solution_names) - set(dir(builtins))
            - names_bound(test.source))


def timed_rules(namespace: dict, session: Session) -> None:
    """The source rules of :data:`TIMED_RULES` in ``namespace`` (the set-up's, from ``course.checks``), each
    wrapped to add its CPU seconds to ``session``'s ``source_rules_cpu``; what they decide is unchanged."""
    import functools

    import course.checks

    for name in TIMED_RULES:
        rule = namespace.get(name)
        if rule is None or rule is not getattr(course.checks, name, None):
            continue

        def timed(*args, _rule=rule, **kwargs):
            clock = time.thread_time()
            try:
                return _rule(*args, **kwargs)
            finally:
                session.add("source_rules_cpu", time.thread_time() - clock)

        namespace[name] = functools.wraps(rule)(timed)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... {len(text) - limit} more characters dropped ..."


def _blame_replaced_cell(message: str, lost: dict[str, str]) -> str | None:
    """The message for a failure that names a name the student defined in a given-at-grading cell and
    the grader could not keep (``lost``: ``{name: grade_id}``, :meth:`Lesson.lost_names`); None when the
    failure names none of them."""
    for name, cell in lost.items():
        if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message):
            return (f"could not judge: `{name}` lived in the `{cell}` cell, which is replaced at grading by the "
                    f"course's own `{cell}` (the cell is given at grading), so your code could not use it; "
                    f"define `{name}` at the top level of that cell (a plain def, class, import or assignment "
                    f"is kept) or in a cell of your own, such as the one for your helper functions")
    return None


def new_seed() -> int:
    """A fresh grading-run seed (unpredictable, 32 bits, short enough to type after ``--seed``)."""
    return secrets.randbits(32)


def run_tests(lesson: Lesson, sources: dict[str, str], limits: Limits | None = None, *, uid: int | None = None,
              root: Path | None = None, seed: int | None = None, student: str | None = None,
              resources=None) -> Verdicts:
    """Grade ``sources`` (solution sources by grade_id) with the lesson's trusted test cells (a *given*
    cell runs as the reference: :meth:`Lesson.graded_sources`). The test cells draw their inputs from
    ``seed`` (the checks' ``run_seed``, :func:`course.checks.hooks.grading`; a fresh one when ``None``), which the verdicts keep, and the
    student's own numbers (:mod:`course.variants`) from ``student`` (the checks' ``student``: the graded
    identity, never the submission's word; ``None``: the lecture's numbers). ``resources``: the grading run's
    (:attr:`GradingRun.resources <autograder.grading.submission.GradingRun.resources>`), whose children,
    templates and uid leases it uses; default: those of children started outside any run."""
    limits = limits or Limits()
    check_level(limits.require)  # below the required containment: the grader refuses (GraderFault)
    seed = new_seed() if seed is None else int(seed)
    lost = lesson.lost_names(sources)
    sources = lesson.graded_sources(sources)
    if uid is None and containment().drop_uid:  # never run student code as root
        from autograder.grading.sandbox import sandbox_uid

        uid = sandbox_uid(0, resources)
    started, clock = time.monotonic(), time.thread_time()
    roots = [Path(__file__).resolve().parents[2]] + ([Path(root)] if root else [])
    hide = hidden_paths(*roots)
    session = Session(lesson, sources, limits, uid, hide, resources)
    one_thread()
    base = parent_namespace(lesson)
    session.namespace = base
    session.add("parent_setup_cpu", time.thread_time() - clock)
    import course.checks

    session.helpers = sorted(course.checks.MARKED_HELPERS)
    graded: dict[str, bool] = {}  # course.checks.hooks' graded_so_far: the test cells graded so far
    state = contextlib.ExitStack()  # the grader's state of the checks while this submission is graded
    state.enter_context(course.checks.grading(router=_Router(session), run_seed=seed, student=student,
                                              graded_so_far=graded))
    results: list[TestResult] = []
    faults: list[str] = []
    active: dict = {}
    try:
        for test in lesson.tests:
            session.fault, session.walled = None, []
            session.deadline = time.monotonic() + hang_seconds(limits.test_seconds)
            try:
                session.ensure().budget(limits.test_seconds)  # a restart does not count against this test
            except Fault:
                pass
            t0, clock, restarts = time.monotonic(), time.process_time(), _start_seconds(session)
            child_cpu = session.box.cpu_seconds() if session.box is not None and not session.box.dead else None
            session.deadline = t0 + hang_seconds(limits.test_seconds)
            namespace = dict(base)
            timed_rules(namespace, session)
            printed = io.StringIO()
            passed, message, review, withheld = False, "", None, None
            try:
                with captured(printed, io.StringIO()):
                    box = session.ensure()
                    for name in sorted(injectable(lesson, test) & set(box.names)):
                        if name not in base:
                            namespace[name] = session.get(name)
                    exec(compile(test.source, f"<test {test.id}>", "exec", dont_inherit=True), namespace)
                passed = session.fault is None
                if not passed:
                    message = session.fault.message
            except (KeyboardInterrupt, GraderFault):
                raise
            except Fault as fault:
                message = fault.message
                session.fault = session.fault or fault
            except BaseException as exc:  # the test failed: AssertionError, or an error the student raised
                message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                if session.fault is not None:
                    message = session.fault.message
                elif isinstance(exc, course.checks.NeedsReview):  # raised here, in the parent: never by student code
                    review = _cap(str(exc.answer), 2000)
                elif isinstance(exc, course.checks.WrongValue):  # a check's, in the parent: never student code's
                    withheld = _cap(f"{type(exc).__name__}: {exc.withheld}", 2000)
            if session.walled and session.fault is None:  # proved forbidden, whatever the cell did with the error
                passed, message, review, withheld = False, walled_message(lesson.name, session.walled), None, None
            blamed = _blame_replaced_cell(message, lost) if not passed else None
            if blamed:
                message, withheld = blamed, None
            fault = session.fault.kind if session.fault is not None else None
            if fault:
                faults.append(f"{test.id}: {fault}: {message}")
            results.append(TestResult(test.id, test.points if passed else 0.0, test.points, passed,
                                      _cap(message, 2000), round(time.monotonic() - t0, 3), fault,
                                      _cap(printed.getvalue(), limits.output_chars) if passed else "", review,
                                      withheld))
            graded[test.id] = passed
            session.add("tests_wall", time.monotonic() - t0 - (_start_seconds(session) - restarts))
            session.add("tests_parent_cpu", time.process_time() - clock)
            if child_cpu is not None and session.box is not None and not session.box.dead:
                session.add("tests_child_cpu", session.box.cpu_seconds() - child_cpu)
    finally:
        state.close()
        if session.box is not None:
            active = session.box.active
        session.close()
    cells = []
    for grade_id in lesson.code_solution_ids:
        outcome = session.outcomes.get(grade_id)
        if outcome is None:
            continue
        cells.append({"id": grade_id, "ok": outcome.ok, "error": outcome.error, "fault": outcome.fault,
                      "stdout": _cap(outcome.stdout, limits.output_chars),
                      "stderr": _cap(outcome.stderr, limits.output_chars), "seconds": round(outcome.seconds, 3)})
        if outcome.fault:
            message = outcome.error.get("message", "") if outcome.error else ""
            faults.insert(0, f"solution cell {grade_id}: {outcome.fault}: {message}")
    mode = containment()
    description = mode.describe()
    if mode.namespaces and active and active.get("uid", 0) == 0 and mode.drop_uid:
        description += " (uid drop failed)"
    if active.get("warm"):
        description += "; forked from a warm template (the set-up's modules imported once), its own namespaces and fresh folders made after the fork"
    banner = floor_banner(mode.level, limits.require)
    if banner:  # below the platform's floor only because the instructor lowered it: every record says so
        description += "; " + banner
    session.add("total_wall", time.monotonic() - started)
    return Verdicts(lesson.name, lesson.content_key(sources), results, cells, faults, description,
                    round(time.monotonic() - started, 3), seed, mode.level,
                    {name: round(seconds, 4) for name, seconds in session.phases.items()})


def _start_seconds(session: Session) -> float:
    """Seconds the session has spent starting and stopping children so far (not a test's own time)."""
    return sum(session.phases[name] for name in ("child_start_wall", "child_setup_wall", "child_cells_wall",
                                                 "child_stop_wall"))
