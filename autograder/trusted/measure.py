"""Side by side: the trusted grader with ``--jobs N`` against plain ``nbgrader autograde``.

    python -m autograder.trusted.measure [--jobs 2] [--lessons lesson1_by_hand lesson2_loops ...]

Both grade the same submissions, the honest part of the corpus (its ``correct`` and ``bug`` cases), each
in its own temporary copy of the course: plain nbgrader (its stock ``Execute`` preprocessor: the whole
notebook in a Jupyter kernel, one submission after another) and the trusted grader (phase 1 with
``jobs`` workers and no cache, then phase 2 through nbgrader). Prints both wall-clock times and their
ratio, and per-submission scores side by side (plain nbgrader scores a correct answer that warns on
stderr 0; the trusted grader does not). Not a unit test: a measurement.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from autograder import corpus
from autograder.trusted.batch import REPO, ensure_assignment, grade, nbgrader

TRUSTED_BLOCK = re.compile(r"\n# Trusted autograding.*?_configure_trusted_grading\(c\)\n", re.S)


def make_course(destination: Path, lessons: list[str], plain: bool) -> Path:
    for lesson in lessons:
        for folder in ("source", "release"):
            shutil.copytree(REPO / folder / lesson, destination / folder / lesson)
    config = (REPO / "nbgrader_config.py").read_text()
    if plain:
        config = TRUSTED_BLOCK.sub("\n", config)
        assert "_configure_trusted_grading" not in config, "could not remove the trusted block"
    (destination / "nbgrader_config.py").write_text(config)
    return destination


def scores(root: Path) -> dict[tuple[str, str], float]:
    query = ("SELECT student.id, assignment.name, SUM(grade.auto_score) FROM grade"
             " JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id"
             " JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id"
             " JOIN student ON submitted_assignment.student_id = student.id"
             " JOIN assignment ON submitted_assignment.assignment_id = assignment.id"
             " GROUP BY student.id, assignment.name")
    with sqlite3.connect(root / "gradebook.db") as db:
        return {(s, a): float(v or 0) for s, a, v in db.execute(query)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--lessons", nargs="*", default=["lesson1_by_hand", "lesson2_loops", "lesson3_numpy"])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    cases = [c for c in corpus.cases() if c.lesson in args.lessons and c.honest]
    with tempfile.TemporaryDirectory(prefix="measure-") as scratch:
        plain_root = make_course(Path(scratch) / "plain", args.lessons, plain=True)
        trusted_root = make_course(Path(scratch) / "trusted", args.lessons, plain=False)
        for root in (plain_root, trusted_root):
            for case in cases:
                corpus.build(case, root)
            for lesson in args.lessons:
                ensure_assignment(root, lesson)  # the gradebook knows the lesson (not timed)
        print(f"{len(cases)} honest submissions of {', '.join(args.lessons)}")

        started = time.monotonic()
        for lesson in args.lessons:
            result = nbgrader(plain_root, "autograde", lesson, "--force")
            if result.returncode != 0:
                print(f"plain nbgrader autograde {lesson} reported errors:\n{result.stderr[-1500:]}")
        plain_seconds = time.monotonic() - started

        started = time.monotonic()
        grade(root=trusted_root, jobs=args.jobs, progress=False, use_cache=False)
        trusted_seconds = time.monotonic() - started

        plain, trusted = scores(plain_root), scores(trusted_root)
    ratio = plain_seconds / trusted_seconds
    print(f"{'grader':<34} {'seconds':>8} {'submissions/min':>16}")
    print(f"{'plain nbgrader autograde':<34} {plain_seconds:8.1f} {60 * len(cases) / plain_seconds:16.1f}")
    print(f"{f'trusted grader --jobs {args.jobs}':<34} {trusted_seconds:8.1f} {60 * len(cases) / trusted_seconds:16.1f}")
    print(f"ratio plain / trusted = {ratio:.2f} (above 1: the trusted grader is faster)")
    print(f"\n{'submission':<46} {'plain':>6} {'trusted':>8}")
    for case in cases:
        key = (case.student, case.lesson)
        print(f"{case.lesson + '/' + case.name:<46} {plain.get(key, float('nan')):6g} {trusted.get(key, float('nan')):8g}")
    if args.json:
        args.json.write_text(json.dumps({"submissions": len(cases), "plain_seconds": plain_seconds,
                                         "trusted_seconds": trusted_seconds, "jobs": args.jobs, "ratio": ratio}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
