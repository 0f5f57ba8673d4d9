"""Per-submission records, as JSON under ``records/`` (a generated folder): ``records/<lesson>/<student>.json`` is
the record of the latest grading of that submission (written by ``grade``, read by ``feedback``, ``export`` and
``report``). Every file is written atomically (temporary file, then ``os.replace``); grading makes every record
(the verdict cache, the run's seed, a record from verdicts: :mod:`autograder.grading.submission`).

Module-level state, and why it carries nothing of one student to another: ``_WRITING`` (the temporary files this
process is writing right now, each removed when its write ends; a stop removes what is left: file names only).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder import stopping
from autograder.safe_text import clean_tree

RECORDS = "records"
STATUS_OK = "ok"
STATUS_GRADER_ERROR = "grader-error"  # the grader failed, not the student: no score is written
STATUSES = ("ok", "timeout", "memory", "crash", "invalid submission", "no solution cells", STATUS_GRADER_ERROR)


#: Seconds by phase of one grading (``Record.phases``; filled by ``grading.verdicts.run_tests`` and
#: ``grading.submission.recorded``). ``_wall``: wall clock the parent timed (a wait); ``_cpu``: CPU seconds the
#: kernel counts (the grading thread's; tests_parent_cpu: the grading process's, PyTorch's threads included, and in
#: a threaded Dask worker its other gradings' too; the child's: its cgroup or process tree). child_start_wall (fork or exec,
#: namespaces, mounts, limits: until the child's hello), child_setup_wall (the lesson's set-up, the helpers and
#: the wall in the child), child_cells_wall (the solution cells), parent_setup_cpu (the set-up run in the
#: parent), tests_wall (the test cells; a child's restart inside them excluded), tests_parent_cpu (the parent's
#: CPU in them: checks, comparisons, source rules, codec), tests_child_cpu (the child's CPU in them), two parts
#: of tests_parent_cpu: source_rules_cpu (check_avoids, the loop rules, a definition's source) and decode_cpu
#: (reading the child's values), child_stop_wall (ending the child until its processes are gone), record_wall
#: (the verdict cache's write and the record's build; not in a reused record: the cache entry is written before
#: its own write is timed), total_wall (the child's start to its stop). Also
#: ``child_reported_*`` (the child's own word about its CPU seconds: shown, never trusted) and ``reused``
#: (true: this grading reused verdicts of an earlier one, whose phases these are).
PHASES = ("child_start_wall", "child_setup_wall", "child_cells_wall", "parent_setup_cpu", "tests_wall",
          "tests_parent_cpu", "tests_child_cpu", "source_rules_cpu", "decode_cpu", "child_stop_wall", "record_wall",
          "total_wall")


@dataclass
class Record:
    """One submission's grading: a score, or an explicit status with a human-readable reason."""

    student: str
    lesson: str
    status: str  # one of STATUSES
    score: float
    max_score: float
    tests: list[dict]  # {grade_id, points, max_points, passed, message, seconds, fault, output, review, withheld}
    reason: str
    containment: str
    content_key: str
    cells: list[dict] = field(default_factory=list)  # solution-cell outcomes
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    seed: int | None = None  # the grading run's seed (hidden inputs); None when no test ran
    level: str = ""  # the containment level of the grading (grading.sandbox.LEVELS; the machine's when no code ran)
    phases: dict = field(default_factory=dict)  # seconds by phase of the grading that computed it (PHASES)

    def __post_init__(self):
        """Every text that came from a submission or its child made safe to write (records, feedback, the
        gradebook, a terminal): :func:`~autograder.safe_text.clean_tree`."""
        self.tests, self.cells, self.notes = clean_tree(self.tests), clean_tree(self.cells), clean_tree(self.notes)
        self.reason, self.containment = clean_tree(self.reason), clean_tree(self.containment)

    @classmethod
    def failed(cls, student: str, lesson: str, status: str, reason: str, *, tests: list[tuple[str, float]],
               max_score: float, containment: str, content_key: str, notes=(), seed: int | None = None,
               level: str = "", message: str | None = None, fault: str | None = None) -> "Record":
        """A record without verdicts (no code ran, or the grader failed on it): each of ``tests``
        (``(grade_id, points)``) 0 with ``message`` (default ``reason``) and ``fault``."""
        rows = [{"grade_id": grade_id, "points": 0.0, "max_points": points, "passed": False,
                 "message": reason if message is None else message, "seconds": 0.0, "fault": fault, "output": ""}
                for grade_id, points in tests]
        return cls(student, lesson, status, 0.0, max_score, rows, reason, containment, content_key, [], list(notes),
                   seed=seed, level=level)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Record":
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in names})

    def per_test(self) -> dict[str, float]:
        return {t["grade_id"]: t["points"] for t in self.tests}


#: Temporary files this process is writing (a worker stopped by a signal exits without unwinding: its
#: reaper removes them, see :mod:`autograder.stopping`).
_WRITING: set[str] = set()


def _remove_unfinished() -> None:
    for temporary in list(_WRITING):
        try:
            os.unlink(temporary)
        except OSError:
            pass


stopping.on_stop(_remove_unfinished)


def write_json(path: Path, data) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file next to it, then ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    _WRITING.add(temporary)
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    finally:
        _WRITING.discard(temporary)


def read_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def record_path(root: Path, lesson: str, student: str) -> Path:
    return Path(root) / RECORDS / lesson / f"{student}.json"


def load_record(root: Path, lesson: str, student: str) -> Record | None:
    data = read_json(record_path(root, lesson, student))
    if not isinstance(data, dict):
        return None
    try:
        return Record.from_dict(data)
    except TypeError:
        return None


def load_records(root: Path) -> list[Record]:
    """Every record under ``root/records`` (the latest grading of each submission), sorted by lesson then
    student; the verdict cache and the staging folder are not records."""
    found = []
    for path in sorted(Path(root, RECORDS).glob("*/*.json")):
        if path.parent.name in ("cache", "staging"):
            continue
        data = read_json(path)
        if isinstance(data, dict):
            try:
                found.append(Record.from_dict(data))
            except TypeError:
                continue
    return sorted(found, key=lambda r: (r.lesson, r.student))


def record_dicts(root: Path) -> list[dict]:
    """:func:`load_records` as plain dicts (what the report and the feedback read)."""
    return [record.as_dict() for record in load_records(root)]


def save_record(root: Path, record: Record) -> None:
    write_json(record_path(root, record.lesson, record.student), record.as_dict())
