"""Per-submission records and the verdict cache, as JSON under ``records/`` (a generated folder).

``records/<lesson>/<student>.json`` is the record of the latest grading of that submission;
``records/cache/<key>.json`` holds verdicts keyed by a hash of (solution sources, trusted test sources,
set-up sources, limits, grader version, the grading run's seed), so a re-run with the same seed (or a run
killed half-way and restarted, which resumes its seed: :func:`run_seed`) reuses them, and a new seed
draws new hidden inputs. ``records/run.json`` holds the seed of the latest grading run and whether it
finished. Every file is written atomically (temporary file, then ``os.replace``).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field, asdict
from pathlib import Path

from autograder import stopping
from autograder.grading.intake import Intake
from autograder.grading.lesson import Lesson, GRADER_VERSION
from autograder.grading.sandbox import Limits, containment as machine_containment
from autograder.grading.untrusted import clean_tree
from autograder.grading.verdicts import Verdicts

RECORDS = "records"
STATUS_OK = "ok"
STATUS_GRADER_ERROR = "grader-error"  # the grader failed, not the student: no score is written
STATUSES = ("ok", "timeout", "memory", "crash", "invalid submission", "no solution cells", STATUS_GRADER_ERROR)


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
    level: str = ""  # the containment level of the grading (sandbox.LEVELS; the machine's when no code ran)

    def __post_init__(self):
        """Every text that came from a submission or its child made safe to write (records, feedback, the
        gradebook, a terminal): :func:`~autograder.grading.untrusted.clean_tree`."""
        self.tests, self.cells, self.notes = clean_tree(self.tests), clean_tree(self.cells), clean_tree(self.notes)
        self.reason, self.containment = clean_tree(self.reason), clean_tree(self.containment)

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


def cache_key(content_key: str, limits: Limits, seed: int) -> str:
    """The verdict cache's key: what a verdict depends on (the code and tests, the limits, the run's seed)."""
    payload = json.dumps({"content": content_key, "limits": limits.as_dict(), "grader": GRADER_VERSION,
                          "seed": int(seed)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


RUN_FILE = "run.json"


def run_seed(root: Path, seed: int | None = None) -> int:
    """The seed of a grading run that starts now, noted (unfinished) in ``records/run.json``: ``seed``
    when given; else, when the latest run did not finish (stopped, killed, it raised, or a submission got a grader
    error), that run's seed,
    so the new run resumes it (its cached verdicts are reused and every record of the batch shares one
    seed); else a fresh one."""
    from autograder.grading.verdicts import new_seed

    path = Path(root) / RECORDS / RUN_FILE
    if seed is None:
        last = read_json(path)
        resumable = isinstance(last, dict) and last.get("finished") is False and type(last.get("seed")) is int
        seed = last["seed"] if resumable else new_seed()
    write_json(path, {"seed": int(seed), "finished": False})
    return int(seed)


def run_finished(root: Path, seed: int) -> None:
    """Note in ``records/run.json`` that the run of ``seed`` finished (the next run draws a fresh seed)."""
    write_json(Path(root) / RECORDS / RUN_FILE, {"seed": int(seed), "finished": True})


def cache_path(root: Path, key: str) -> Path:
    return Path(root) / RECORDS / "cache" / f"{key}.json"


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


def make_record(student: str, lesson: Lesson, intake: Intake, verdicts: Verdicts | None, containment: str) -> Record:
    """The record of one submission from its intake and (when it was run) its verdicts."""
    if verdicts is None:  # invalid submission, or no solution cells: every test fails with the reason
        tests = [{"grade_id": t.id, "points": 0.0, "max_points": t.points, "passed": False,
                  "message": f"{intake.status}: {intake.reason}", "seconds": 0.0, "fault": None, "output": ""}
                 for t in lesson.tests]
        return Record(student, lesson.name, intake.status, 0.0, lesson.max_score, tests, intake.reason, containment,
                      lesson.content_key({}), [], list(intake.notes), level=machine_containment().level)
    tests = [asdict(t) for t in verdicts.tests]
    score = float(sum(t["points"] for t in tests))
    kinds = verdicts.fault_kinds
    status = kinds[0] if kinds else STATUS_OK
    reason = "; ".join(verdicts.faults) if verdicts.faults else ""
    failed = [t["grade_id"] for t in tests if not t["passed"]]
    if not reason and failed:
        reason = f"{len(failed)} of {len(tests)} tests failed: {', '.join(failed)}"
    review = [t["grade_id"] for t in tests if t.get("review") is not None]
    if review:  # an answer in words the grader could not be sure of: the instructor scores it by hand
        reason += f"; needs a look (0 until scored by hand): {', '.join(review)}"
    return Record(student, lesson.name, status, score, lesson.max_score, tests, reason, verdicts.containment,
                  verdicts.content_key, verdicts.cells, list(intake.notes), verdicts.seconds, verdicts.seed,
                  verdicts.level)
