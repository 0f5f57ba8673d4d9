"""``python -m autograder`` / ``avgpool-course``: the instructor's commands.

    release [LESSON ...]   build release/ from source/ with nbgrader; check solutions pass and stubs fail
    course                 the main job of the README (``make course``)
"""

from __future__ import annotations

import argparse
import sys
import time

from autograder import release as rel


def cmd_release(args: argparse.Namespace) -> int:
    chosen = args.lessons or rel.lessons()
    for lesson in chosen:
        rel.check_lesson(lesson)
    failures = 0
    print(f"{'lesson':<20} {'graded cells':>12} {'points':>7}  solutions pass  stubs fail")
    for lesson in chosen:
        summary = rel.build_and_check(lesson)
        ok = summary.solutions_pass and summary.stubs_fail
        failures += not ok
        print(f"{lesson:<20} {summary.graded_cells:>12} {summary.points:>7g}  {str(summary.solutions_pass):<14}  "
              f"{summary.stubs_fail}")
        for problem in summary.problems:
            print(f"    ! {problem}")
    print("checked: release/ regenerated from source/ by nbgrader; every source notebook passes"
          " `nbgrader validate`; every release notebook fails it on every test cell (`--invert`).")
    return 1 if failures else 0


def cmd_course(args: argparse.Namespace) -> int:
    started = time.monotonic()
    status = cmd_release(argparse.Namespace(lessons=[]))
    print(f"main job finished in {time.monotonic() - started:.0f} s")
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    release = commands.add_parser("release", help="build release/ from source/ and validate it")
    release.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names (default: all)")
    release.set_defaults(run=cmd_release)
    course = commands.add_parser("course", help="the main job: release, validate, grade the sample class")
    course.set_defaults(run=cmd_course)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except rel.ReleaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
