"""What grading adds to the records (:mod:`autograder.records`): a record made from a submission's verdicts, and
the verdict cache. ``records/cache/<key>.json`` holds verdicts keyed by a hash of (solution sources, trusted
test sources, set-up sources, limits, grader version, the grading run's seed), so a re-run with the same seed
(or a run killed half-way and restarted, which resumes its seed: :func:`run_seed`) reuses them, and a new
seed draws new hidden inputs. ``records/run.json`` holds the seed of the latest grading run and whether it
finished. Every file is written atomically (temporary file, then ``os.replace``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from autograder.grading.intake import Intake
from autograder.grading.lesson import Lesson, GRADER_VERSION
from autograder.grading.sandbox import Limits, containment as machine_containment
from autograder.grading.verdicts import Verdicts
from autograder.records import RECORDS, STATUS_OK, Record, read_json, write_json


def cache_key(content_key: str, limits: Limits, seed: int, student: str | None = None) -> str:
    """The verdict cache's key: what a verdict depends on (the code and tests, the limits, the run's seed,
    and the graded identity where the lesson draws numbers per student: :mod:`autograder.variants`)."""
    fields = {"content": content_key, "limits": limits.as_dict(), "grader": GRADER_VERSION, "seed": int(seed)}
    if student is not None:
        fields["student"] = student
    payload = json.dumps(fields, sort_keys=True)
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
    if review:  # an answer in words, or code a rule could not prove either way: the instructor scores it by hand
        reason += f"; needs a look (0 until scored by hand): {', '.join(review)}"
    return Record(student, lesson.name, status, score, lesson.max_score, tests, reason, verdicts.containment,
                  verdicts.content_key, verdicts.cells, list(intake.notes), verdicts.seconds, verdicts.seed,
                  verdicts.level)
