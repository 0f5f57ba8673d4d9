"""avgpool-course: the instructor's week, one command per step.

Run as ``avgpool-course COMMAND`` or ``python -m autograder COMMAND`` in the course folder (the one
holding nbgrader_config.py), or pass --root. A typical week:

  avgpool-course release lesson2_loops      publish: build release/ from source/ and check it
  avgpool-course bundle --zip               what students download: release/ + course/ + install files
  avgpool-course collect ~/Downloads/lesson2_submissions.zip --due "2025-03-10 23:59"
  avgpool-course grade --jobs 2             grade every submission in submitted/ (trusted grader)
  avgpool-course feedback                   one HTML page per student and lesson, in feedback/
  avgpool-course export                     reports/grades.csv and reports/grades_by_cell.csv
  avgpool-course report                     reports/report.html: where the class struggled

  avgpool-course course                     the main job (make course): all of the above on a sample class
"""

from __future__ import annotations

import argparse
import inspect
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder import coursedir
from autograder.release import build as rel
from autograder.coursedir import CourseError
from autograder.stopping import Stopped, stoppable

def load_grader(args: argparse.Namespace):
    """The trusted grader's ``grade(lessons, students, jobs, root, progress, **where) -> list[Record]``:
    :func:`main`'s ``grader`` when given (``args.grader``: a test's stand-in), else ``autograder.grading.grade``."""
    if getattr(args, "grader", None) is not None:
        return args.grader
    try:
        from autograder.grading import grade
    except ImportError as exc:
        raise CourseError(f"the trusted grader (autograder.grading) cannot be loaded: {exc}; reinstall the "
                          "course environment (make course creates .venv)") from exc
    return grade


def root_of(args: argparse.Namespace) -> Path:
    return coursedir.find_root(getattr(args, "root", None))


def check_jobs(jobs: int) -> int:
    """``jobs`` (a command's --jobs), or CourseError unless it is at least 1."""
    if jobs < 1:
        raise CourseError(f"--jobs must be >= 1, got {jobs}")
    return jobs


# --- release ---------------------------------------------------------------------------------------

def cmd_release(args: argparse.Namespace) -> int:
    """Build release/ from source/ and check it.

    Regenerate the student notebooks in release/ from the instructor notebooks in source/ with
    nbgrader, then check that every solution passes `nbgrader validate` and that every test cell
    fails on the untouched stubs. Commit release/ (and .validated-release.json) afterwards.
    A lesson whose source/, release/, nbgrader_config.py and course/ helpers are byte for byte
    those of a build that validated (recorded in .validated-release.json) is not built again;
    --force builds and validates it anyway.

    examples:
      avgpool-course release                  every lesson
      avgpool-course release lesson2_loops    one lesson
      avgpool-course release --force         every lesson, validated again
    """
    from autograder import variants

    root = root_of(args)
    chosen = coursedir.check_lessons(args.lessons, root)
    if variants.sync_enabled(root):  # the notebooks show what grading uses
        print(f"c.Variants.enabled = {variants.enabled(root)} written into {variants.term_file(root)}")
    failures, unchanged = 0, 0
    print(f"{'lesson':<20} {'graded cells':>12} {'points':>7}  solutions pass  stubs fail")
    for lesson in chosen:
        summary = rel.build_and_check(lesson, root, force=getattr(args, "force", False))
        ok = summary.solutions_pass and summary.stubs_fail
        failures += not ok
        unchanged += summary.unchanged
        print(f"{lesson:<20} {summary.graded_cells:>12} {summary.points:>7g}  {str(summary.solutions_pass):<14}  "
              f"{str(summary.stubs_fail):<5}" + ("  (unchanged since its validated build)" if summary.unchanged else ""))
        for problem in summary.problems:
            print(f"    ! {problem}")
    print("checked: release/ regenerated from source/ by nbgrader; every source notebook passes"
          " `nbgrader validate`; every release notebook fails it on every test cell (`--invert`)"
          + ("; lessons marked unchanged were not rebuilt (--force rebuilds them)." if unchanged else "."))
    return 1 if failures else 0


# --- collect ---------------------------------------------------------------------------------------

def cmd_collect(args: argparse.Namespace) -> int:
    """Put an LMS export of student notebooks into submitted/.

    Take a .zip or folder of student notebooks, named however the LMS names them (e.g.
    alice_12345_lesson2_loops.ipynb, 'Bob Smith - lesson1_by_hand (2).ipynb',
    lesson3_numpy/carol/anything.ipynb), and place each one in
    submitted/<student>/<lesson>/<lesson>.ipynb with a timestamp.txt when the LMS gave a time
    (a date in the name, nbgrader's timestamp.txt, else the zip entry's time). The LMS's user id
    in a name keeps two students of the same name apart (the second is <name>_<id>); names keep
    their letters (José Núñez -> jose_nunez, 李明 -> 李明) and go into the gradebook with the LMS id.
    The student is named only by the export's own folder or file names (never by names inside a
    zip the student uploaded). Zips (the export, and a student's zip in a zip or folder export) are
    unpacked within limits on size, compression ratio, file count and nesting (collect.UnpackLimits);
    a zip past one is refused, and said so.
    Files that cannot be placed are listed with the reason; the others are placed anyway.
    Exit status 1 when some file was not placed.

    examples:
      avgpool-course collect export.zip
      avgpool-course collect downloads/ --due '2025-03-10 23:59' --verbose
      avgpool-course collect export.zip --due lesson1_by_hand=2025-03-03 --due lesson2_loops=2025-03-10
      avgpool-course collect moodle.zip --lesson lesson2_loops --timezone Europe/Berlin --roster roster.csv
      avgpool-course collect export.zip --due lesson1_by_hand=2026-12-03T17:00+01:00
    """
    from autograder import collect

    root = root_of(args)
    lessons = coursedir.lessons(root)
    coursedir.check_gradebook(root)
    due = collect.parse_due(args.due, lessons, timezone=args.timezone)
    report = collect.collect(args.source, root, lessons, due=due, dry_run=args.dry_run, lesson=args.lesson,
                             timezone=args.timezone, roster=args.roster)
    if not args.dry_run:
        collect.record_in_gradebook(root, due, report)
    print(report.summary())
    if args.verbose:
        for placed in report.placed:
            when = f" {placed.timestamp} (from the {placed.time_from})" if placed.timestamp else ""
            who = f" [{placed.first_name} {placed.last_name}".rstrip() + (f", LMS id {placed.lms_id}]"
                                                                          if placed.lms_id else "]")
            print(f"  {placed.file} -> submitted/{placed.student}/{placed.lesson}/{who}{when}"
                  f"{' (late)' if placed.late else ''}")
    if not args.dry_run:
        print(f"placed in {root / 'submitted'}; the log is {root / 'reports' / 'collect.json'}")
    return 1 if any("older copy" not in s.reason for s in report.skipped) else 0


# --- grade -----------------------------------------------------------------------------------------

def cmd_grade(args: argparse.Namespace) -> int:
    """Grade submitted/ with the trusted grader (writes gradebook.db).

    Grade every submission in submitted/ (or the chosen lessons/students) with the trusted
    grader: student code runs in a sandboxed process, verdicts come from one that never ran it.
    Scores go into gradebook.db (formgrader keeps working; manual grades are kept), one record
    per submission into records/.

    Hidden test inputs are drawn afresh for every grading run from the run's seed, which each
    record keeps and the summary prints; --seed N grades again with the inputs of run N (same
    code, same seed: the same verdicts, reused from records/cache/). Safe to stop and rerun: SIGTERM,
    SIGINT (Ctrl-C) or SIGHUP ends every process the run started within seconds and exits with 128 +
    the signal (nothing it started survives a SIGKILL either); a run that did not finish (stopped,
    killed, an error, or a grader-error record) is resumed by the next `grade` without --seed, with
    its seed and the verdicts it already computed; a run that finished is followed by one with a
    fresh seed, which grades every submission again.

    examples:
      avgpool-course grade --jobs 2
      avgpool-course grade --lesson lesson2_loops --student alice
      avgpool-course grade --seed 1234567 --student alice     reproduce alice's grading in run 1234567
      avgpool-course grade --cluster tcp://scheduler.example:8786
    """
    root = root_of(args)
    check_jobs(args.jobs)
    lessons = coursedir.check_lessons(args.lesson, root) if args.lesson else None
    coursedir.check_gradebook(root)
    coursedir.check_submissions(root, lessons, args.student)
    started = time.monotonic()
    where = {"cluster": args.cluster} if args.cluster else {}  # local worker processes unless --cluster
    if args.seed is not None:
        where["seed"] = args.seed
    results = [r.as_dict() for r in load_grader(args)(lessons, args.student or None, jobs=args.jobs, root=root,
                                                      progress=not args.quiet, **where)]
    how = f"on the Dask cluster at {args.cluster}" if args.cluster else f"with --jobs {args.jobs}"
    seeds = sorted({r["seed"] for r in results if r.get("seed") is not None})
    print(f"graded {len(results)} submissions in {time.monotonic() - started:.0f} s {how}; "
          f"gradebook: {coursedir.gradebook_name(root)}"
          + (f"; hidden inputs of run seed {', '.join(map(str, seeds))} (--seed reproduces it)" if seeds else ""))
    by_status: dict[str, int] = {}
    for record in results:
        by_status[record["status"]] = by_status.get(record["status"], 0) + 1
    print("status: " + ", ".join(f"{status} {count}" for status, count in sorted(by_status.items())))
    for record in results:
        if record["status"] != "ok":
            print(f"  ! {record['student']}/{record['lesson']}: {record['status']}: {record.get('reason', '')}")
    failed = by_status.get("grader-error", 0)
    if failed:
        print(f"error: the grader failed on {failed} submission(s) (status grader-error, listed above); their "
              "scores were not written. Fix the cause and run `avgpool-course grade` again.", file=sys.stderr)
        return 1
    return 0


# --- feedback, export, report, bundle --------------------------------------------------------------

def cmd_feedback(args: argparse.Namespace) -> int:
    """Write one HTML feedback page per student and lesson.

    Write feedback/<student>/<lesson>/<lesson>.html with nbgrader's generate_feedback: the
    gradebook's scores (manual grades and comments included), each test's verdict and message,
    the student's answers, math that renders offline. Every page is checked before it is kept:
    no hidden test, nothing loaded from the network. Expected answers stay withheld until
    c.ExpectedAnswers.reveal = True in nbgrader_config.py (then run this again: no regrading).
    --jobs N nbgrader processes write the pages at once (the same pages as one).

    examples:
      avgpool-course feedback
      avgpool-course feedback --jobs 4
      avgpool-course feedback --lesson lesson1_by_hand --student alice
    """
    from autograder.results import feedback

    root = root_of(args)
    jobs = check_jobs(args.jobs if args.jobs is not None else max(1, os.cpu_count() or 1))
    pages = feedback.write_feedback(root, args.lesson, args.student, jobs=jobs)
    students = {p.parent.parent.name for p in pages}
    print(f"wrote {len(pages)} feedback pages for {len(students)} students in {root / 'feedback'} "
          "(feedback/<student>/index.html links each lesson)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write the grades as CSV (per student, per graded cell).

    Read the gradebook (manual grades win over automatic ones) and write grades.csv (one row per
    student, one column per lesson, total) and grades_by_cell.csv (one row per student, lesson
    and graded cell). With --lms canvas or --lms moodle, write instead the LMS's own grade import
    file (reports/canvas_grades.csv, reports/moodle_grades.csv) for the students of --roster (the
    roster CSV given to collect): late penalties taken off, manual grades in, an empty cell (never
    0) where nothing was handed in; a graded student the roster lacks, or gives two LMS ids, is
    refused and nothing is written.

    examples:
      avgpool-course export
      avgpool-course export --out grades/
      avgpool-course export --lms canvas --roster canvas_gradebook.csv
      avgpool-course export --lms moodle --roster participants.csv --out upload/
    """
    from autograder.results import export

    root = root_of(args)
    if args.lms:
        from autograder.results import lms

        if not args.roster:
            raise CourseError(f"--lms {args.lms} needs --roster CSV: the class roster exported from "
                              f"{args.lms.capitalize()} (the one collect was given), whose ids the import file uses")
        out = Path(args.out) / f"{args.lms}_grades.csv" if args.out else None
        print(lms.describe(lms.write(root, args.lms, args.roster, out, args.lesson), args.lms))
        return 0
    grades = export.read_grades(root, args.lesson)
    out = Path(args.out) if args.out else root / "reports"
    per_student, per_cell = export.write_csv(grades, out)
    print(f"wrote {per_student} ({len(grades.students)} students) and {per_cell} ({len(grades.cells)} rows)")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Write a one-page HTML report of the class.

    Write one self-contained HTML page (plots inline, readable offline): score distribution per
    lesson, pass rate per graded cell, the item analysis of each graded cell (difficulty,
    discrimination, the most common failures, flags; also as items.csv beside the page), the
    slowest tests, every submission that is not OK with its reason, late submissions, files
    collect could not place, and the grade table.

    With --copying, also write copying.html beside it: pairs of students whose solution cells
    are much more alike than the class's usual (names, comments, order and the release's own
    code left out), side by side; a lead for a person, never a grade.

    examples:
      avgpool-course report
      avgpool-course report --out week3.html
      avgpool-course report --copying
    """
    from autograder.results import report

    root = root_of(args)
    path = report.write_report(root, args.out, args.lesson)
    print(f"wrote {path} (self-contained: open it in any browser, no network needed) and "
          f"{path.parent / 'items.csv'} (the item analysis)")
    if args.copying:
        from autograder.results import copying

        page, found = copying.write_page(root, path.parent / "copying.html",
                                         coursedir.check_lessons(args.lesson, root))
        print(f"wrote {page} (copying leads, never a grade):")
        for line in copying.summary_lines(found):
            print(f"  {line}")
    return 0


def cmd_bundle(args: argparse.Namespace) -> int:
    """Build what students receive (release/ + course/ + install files).

    Build the student bundle: release/, the course/ helpers, requirements.lock, environment.yml,
    a pyproject.toml that installs only `course`, a README for students and a Makefile whose
    `make lab` installs and opens JupyterLab. Never source/ or autograder/: the bundle is scanned
    for solution and hidden-test text and refused if any is found.

    examples:
      avgpool-course bundle
      avgpool-course bundle --zip --out build/avgpool-course-student
    """
    from autograder.release import bundle

    root = root_of(args)
    out = Path(args.out) if args.out else root / "build" / "student_bundle"
    made = bundle.build(out, root, as_zip=args.zip)
    print(f"wrote the student bundle {made}: release/, course/, requirements.lock, environment.yml, "
          "pyproject.toml (installs course only), README.md, Makefile (make lab). Scanned: no source/, "
          "no autograder/, no solution or hidden-test text.")
    return 0


def cmd_sample_class(args: argparse.Namespace) -> int:
    """Generate a made-up class's LMS export (for trying things out).

    Write a deterministic sample class, as an LMS hands it over (one .zip of oddly named
    notebooks: complete, partial, late, typical mistakes, a few broken files), and a
    manifest.json saying what each file is.

    examples:
      avgpool-course sample-class /tmp/class && avgpool-course collect /tmp/class/lms_export.zip
    """
    from autograder import sample_class

    root = root_of(args)
    target, manifest = sample_class.generate(Path(args.out), root, students=args.students, seed=args.seed,
                                             submit_rate=args.submit_rate, as_zip=not args.folder)
    print(f"wrote {target} ({len(manifest)} files) and {Path(args.out) / 'manifest.json'}")
    return 0


# --- variants --------------------------------------------------------------------------------------

def cmd_variants(args: argparse.Namespace) -> int:
    """Print a student's own numbers and answers, or start a new term's numbers.

    The exercises worked out by hand (lesson 1's worked example, card shapes and multiple-choice
    letters, lesson 2's predictions) draw their numbers from the student's id and the term's salt (course/term.py); a student
    is graded on the numbers of the id their work is collected under. --student prints that student's
    numbers and the answers they give (for office hours). --new-term writes a new salt: every
    student's numbers change, so it is refused once a lesson with variants has graded submissions
    (records/), unless --force. c.Variants.enabled = False in nbgrader_config.py gives everyone the
    lecture's numbers.

    examples:
      avgpool-course variants --student jdoe
      avgpool-course variants --student jdoe --lesson lesson1_by_hand
      avgpool-course variants --new-term
    """
    from autograder import variants

    root = root_of(args)
    if args.new_term:
        salt = variants.new_term(root, args.salt, force=args.force)
        print(f"new term: salt {salt!r} written into {variants.term_file(root)}; every student's numbers are new "
              "(run avgpool-course release, then hand out the new release)")
        return 0
    if not args.student:
        raise CourseError("variants: name a student (--student ID) or start a new term (--new-term)")
    print(variants.describe(args.student, args.lesson, root))
    return 0


def variants_summary(root: Path, records: list[dict]) -> None:
    """Print how many distinct variants of the hand-worked exercises the graded class received."""
    from autograder import variants

    graded: dict[str, list[str]] = {}
    for record in records:
        graded.setdefault(record["lesson"], []).append(record["student"])
    for line in variants.class_summary(root, graded):
        print(f"Variants: {line}")


# --- the main job ----------------------------------------------------------------------------------

def cmd_course(args: argparse.Namespace) -> int:
    """The main job (make course): release, then a whole week on a sample class.

    Build and validate release/, generate a sample class into its own course folder
    (sample_class/ by default; your submitted/ and gradebook.db are not touched), collect it,
    try one attack on nbgrader's exchange (it must be refused), grade it, write feedback, the CSV
    files and the report, and print the grade table.

    examples:
      avgpool-course course
      avgpool-course course --skip-release --students 10
      avgpool-course course --skip-release --run-seed 1234567   the same grades as the run of that seed
    """
    from autograder import collect, sample_class
    from autograder.results import copying, export, feedback, report

    started = time.monotonic()
    root = root_of(args)
    check_jobs(args.jobs)
    steps: list[tuple[str, float]] = []

    def step(name: str, since: float) -> float:
        now = time.monotonic()
        steps.append((name, now - since))
        return now

    mark = started
    if not args.skip_release:
        print("== release: build release/ from source/ and validate it")
        if cmd_release(argparse.Namespace(lessons=None, root=root, force=False)):
            print("error: the release did not validate (see above); fix source/ and rerun", file=sys.stderr)
            return 1
        mark = step("release", mark)
    demo = Path(args.out) if args.out else root / "sample_class"
    print(f"\n== sample class: a course folder of its own at {demo} (your gradebook.db is not touched)")
    if demo.exists():
        shutil.rmtree(demo)
    coursedir.copy_course(root, demo, folders=("source", "release", sample_class.HONEST))
    archive, manifest = sample_class.generate(demo / "lms", demo, students=args.students, seed=args.seed,
                                              submit_rate=args.submit_rate)
    print(f"generated {archive.relative_to(demo)}: {len(manifest)} files from an LMS")
    mark = step("sample class", mark)
    lessons = coursedir.lessons(demo)
    due = collect.parse_due([f"{l}={d}" for l, d in sample_class.due_dates(demo / "lms").items()], lessons)
    print("\n== collect")
    collected = collect.collect(archive, demo, lessons, due=due)
    collect.record_in_gradebook(demo, due, collected)
    print(collected.summary())
    exchange = exchange_attack(demo, collected.placed, lessons)
    mark = step("collect", mark)
    print(f"\n== grade (--jobs {args.jobs})")
    seed = {"seed": args.run_seed} if args.run_seed is not None else {}
    graded = load_grader(args)(None, None, jobs=args.jobs, root=demo, progress=True, **seed)
    mark = step("grade", mark)
    results = [r.as_dict() for r in graded]
    print("\n== feedback, export, report")
    with ThreadPoolExecutor(max_workers=1) as beside:  # nbgrader's feedback processes run while this one writes the rest
        writing = beside.submit(feedback.write_feedback, demo, jobs=args.jobs)
        grades = export.read_grades(demo)
        per_student, per_cell = export.write_csv(grades, demo / "reports")
        page = report.write_report(demo)
        copying_page, leads = copying.write_page(demo, demo / "reports" / "copying.html", lessons)
        pages = writing.result()
    step("feedback, export, report", mark)
    marks = {key: "L" for key, late in grades.late.items() if late}
    for record in results:
        if record["status"] != "ok":
            marks[(record["student"], record["lesson"])] = marks.get((record["student"], record["lesson"]), "") + "!"
    print("\n" + export.table(grades, marks))
    print("(- not handed in, L late, ! not OK: see the report; attack_*: a cheating submission, below)")
    unstopped = attacks_report(results) + exchange_attack_report(exchange, grades)
    variants_summary(demo, results)
    class_report(demo, leads)
    bad = sum(r["status"] != "ok" for r in results)
    print(f"\n{len(grades.students)} students, {len(results)} submissions graded ({bad} not OK), "
          f"{len(collected.skipped)} files not placed")
    print(f"report:   {page} (item analysis: {page}#items, {page.parent / 'items.csv'})\n"
          f"copying:  {copying_page}\n"
          f"grades:   {per_student}\n          {per_cell}\n"
          f"feedback: {demo / 'feedback'} ({len(pages)} pages)\ngradebook: {coursedir.gradebook_name(demo)}")
    print("time: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in steps)
          + f"; main job finished in {time.monotonic() - started:.0f} s")
    if unstopped:
        print(f"error: {unstopped} attack(s) not stopped: points on the tests they target, or a hand-in collected "
              "(see above)",
              file=sys.stderr)
        return 1
    return 0


def class_report(root: Path, leads: list) -> None:
    """Print one line per lesson: its hardest cell, its least discriminating one (the report's item analysis)
    and its top copy pair's score (``leads``: each lesson's copying leads, as ``copying.write_page`` found them)."""
    from autograder.results import copying, report
    from autograder.results import items as item_analysis

    pairs = {lesson.lesson: lesson for lesson in leads}
    print("\nThe class: each lesson's hardest cell (lowest difficulty), least discriminating one (see the report's "
          "item analysis) and top copy pair (a lead, never a grade: see the copying page)")
    for line in item_analysis.summary_lines(report.items(root)):
        lesson = pairs.get(line.split(":")[0])
        print(f"  {line}" + (f"; {copying.top_pair(lesson)}" if lesson else ""))


def attacks_report(records: list[dict]) -> int:
    """Print, for each attack of the sample class that was graded, whether the grader stopped it (every
    test it targets scored 0); return how many it did not stop."""
    from autograder.sample_class import ATTACKS

    by_student = {attack.student: attack for attack in ATTACKS}
    graded = [(by_student[r["student"]], r) for r in records if r["student"] in by_student]
    if not graded:
        return 0
    print("\nAttacks in the sample class: each cheats on some tests; the grader must score those 0 (its other "
          "answers are honest work of its own, so the rest of its points are earned)")
    unstopped = 0
    for attack, record in graded:
        scored = [t["grade_id"] for t in record["tests"] if t["grade_id"] in attack.stopped_on and t["points"] > 0]
        unstopped += bool(scored)
        verdict = f"NOT STOPPED on {', '.join(scored)}" if scored else f"stopped on {', '.join(attack.stopped_on)}"
        print(f"  {attack.student:<30} {attack.lesson}: {attack.what}: {verdict}")
    return unstopped


def exchange_attack(demo: Path, placed: list, lessons: list[str]):
    """The sample class's exchange attack (``autograder.collect.exchange_attack``), before grading: a hand-in
    in the name of the first student the LMS collect placed (in lesson order), linked to the lesson's
    ``source/`` notebook, collected with ``--update`` from a scratch exchange under ``demo``."""
    from autograder.collect import exchange_attack as attack

    honest = sorted((lessons.index(p.lesson), p.student) for p in placed
                    if p.lesson in lessons and not p.student.startswith("attack_"))
    if not honest:
        return None
    lesson, student = lessons[honest[0][0]], honest[0][1]
    return attack.collect(demo, attack.plant(demo, student, lesson))


def exchange_attack_report(outcome, grades) -> int:
    """Print whether the exchange attack was stopped (refused, nothing placed, the named student's hand-in
    kept byte for byte, so their grade is their LMS hand-in's); 1 if it was not, else 0."""
    if outcome is None:
        return 0
    o = outcome
    print(f"\nExchange attack (nbgrader's exchange, run as one account, {o.writer}): a hand-in in {o.student}'s name for "
          f"{o.lesson} whose notebook is a symbolic link to source/{o.lesson}/{o.lesson}.ipynb, collected with --update "
          "from the sample class's exchange/")
    reasons = "; ".join(o.refused) or "no reason given"
    if o.stopped:
        print(f"  exchange: 1 hand-in refused (named {o.student}, written by account {o.writer}: {reasons}); "
              f"{o.link_alone}: stopped")
    else:
        print(f"  exchange: NOT STOPPED: placed {', '.join(o.placed) or 'nothing'}, refused: {reasons}")
    score = grades.score.get((o.student, o.lesson))
    graded = f"{score:g}/{grades.max_score.get(o.lesson, 0):g}" if score is not None else "not graded"
    kept = ("holds the LMS hand-in byte for byte, so the grade is that hand-in's" if o.untouched
            else "CHANGED: the grade is not their LMS hand-in's")
    print(f"  {o.student}'s {o.lesson}: submitted/ {kept}: {graded}")
    return 0 if o.stopped else 1


# --- the parser ------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(prog="avgpool-course", description=__doc__, formatter_class=formatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, run, only: tuple[str, ...] = ()):
        """The subcommand ``name`` that calls ``run``, whose docstring is its help (first line), description and
        examples; with the shared --root and, for each name in ``only``, a repeatable --<name> filter."""
        summary, _, rest = inspect.cleandoc(run.__doc__).partition("\n\n")
        description, _, examples = rest.partition("\nexamples:\n")
        sub = commands.add_parser(name, help=summary[0].lower() + summary[1:].rstrip("."), description=description,
                                  formatter_class=formatter, epilog=f"examples:\n{examples}" if examples else None)
        sub.add_argument("--root", metavar="DIR", help="the course folder (holds nbgrader_config.py); default: "
                         "the current folder if it is one, else this repository")
        for what in only:
            sub.add_argument(f"--{what}", action="append", metavar=what.upper(), help=f"only this {what} (repeatable)")
        sub.set_defaults(run=run)
        return sub

    def add_class_options(sub) -> None:
        """The sample class's size, hand-in rate and seed (sample-class and course generate the same class)."""
        sub.add_argument("--students", type=int, default=40, help="class size (default 40)")
        sub.add_argument("--submit-rate", type=float, default=None, help="chance a student hands in a lesson "
                         "(default: 0.8, lowered to keep the class near 60 submissions in all)")
        sub.add_argument("--seed", type=int, default=7, help="random seed (same seed, same class)")

    sub = add("release", cmd_release)
    sub.add_argument("lessons", nargs="*", metavar="LESSON", help="lesson names (default: all)")
    sub.add_argument("--force", action="store_true", help="build and validate even a lesson unchanged since its "
                     "validated build")

    sub = add("collect", cmd_collect)
    sub.add_argument("source", metavar="SOURCE", help="the LMS export: a .zip archive or a folder")
    sub.add_argument("--due", action="append", default=[], metavar="[LESSON=]DATE",
                     help="due date: 'YYYY-MM-DD' (the end of that day), 'YYYY-MM-DD HH:MM' (in --timezone) or "
                     "with its zone ('2026-12-03T17:00+01:00'); stored in the gradebook, so nbgrader computes "
                     "how late each submission is and its late penalty")
    sub.add_argument("--timezone", metavar="ZONE", help="the LMS's time zone (IANA name, e.g. Europe/Berlin) for "
                     "due dates and submission times written without one (default: UTC)")
    sub.add_argument("--lesson", metavar="LESSON", help="the lesson of every file whose path names none "
                     "(e.g. a renamed 'my homework (final).ipynb')")
    sub.add_argument("--roster", metavar="CSV", help="the class roster (Canvas gradebook or Moodle participants "
                     "CSV): maps LMS user ids to names and nbgrader student ids")
    sub.add_argument("--dry-run", action="store_true", help="say where each file would go; place nothing")
    sub.add_argument("-v", "--verbose", action="store_true", help="list every placed file")

    sub = add("grade", cmd_grade, only=("lesson", "student"))
    sub.add_argument("--jobs", type=int, default=1, metavar="N", help="submissions graded at once (default 1)")
    sub.add_argument("--cluster", metavar="ADDRESS", help="grade on the workers of the Dask cluster whose "
                     "scheduler is at ADDRESS (tcp://HOST:8786); the gradebook is written here")
    sub.add_argument("--seed", type=int, metavar="N", help="the grading run's seed for the hidden test inputs "
                     "(a record's seed reproduces its run; default: resume an unfinished run's, else a fresh one)")
    sub.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    sub = add("feedback", cmd_feedback, only=("lesson", "student"))
    sub.add_argument("--jobs", type=int, default=None, metavar="N", help="nbgrader processes writing pages at "
                     "once (default: the number of CPUs)")

    sub = add("export", cmd_export, only=("lesson",))
    sub.add_argument("--out", metavar="DIR", help="folder for the CSV files (default: reports/)")
    sub.add_argument("--lms", choices=("canvas", "moodle"), help="write the LMS's grade import file instead")
    sub.add_argument("--roster", metavar="CSV", help="with --lms: the class roster (Canvas gradebook or Moodle "
                     "participants CSV) whose ids the import file uses")

    sub = add("report", cmd_report, only=("lesson",))
    sub.add_argument("--out", metavar="FILE", help="the HTML file (default: reports/report.html)")
    sub.add_argument("--copying", action="store_true", help="also write copying.html beside it (copying leads)")

    sub = add("bundle", cmd_bundle)
    sub.add_argument("--out", metavar="DIR", help="the bundle folder (default: build/student_bundle)")
    sub.add_argument("--zip", action="store_true", help="also write DIR.zip")

    sub = add("sample-class", cmd_sample_class)
    sub.add_argument("out", metavar="DIR", help="folder to write lms_export.zip and manifest.json into")
    add_class_options(sub)
    sub.add_argument("--folder", action="store_true", help="write a folder instead of a .zip")

    sub = add("variants", cmd_variants)
    sub.add_argument("--student", metavar="ID", help="the student's id (their folder under submitted/)")
    sub.add_argument("--lesson", metavar="LESSON", help="only this lesson (default: every lesson with variants)")
    sub.add_argument("--new-term", action="store_true", help="write a new salt into course/term.py")
    sub.add_argument("--salt", metavar="SALT", help="with --new-term: this salt (default: a fresh random one)")
    sub.add_argument("--force", action="store_true", help="with --new-term: even though lessons have graded "
                     "submissions")

    sub = add("course", cmd_course)
    sub.add_argument("--out", metavar="DIR", help="the sample course folder (default: sample_class/)")
    add_class_options(sub)
    sub.add_argument("--jobs", type=int, default=2, help="submissions graded, and nbgrader processes writing "
                     "feedback, at once (default 2)")
    sub.add_argument("--skip-release", action="store_true", help="do not rebuild and validate release/")
    sub.add_argument("--run-seed", type=int, metavar="N", help="the grading run's seed for the hidden test inputs "
                     "(as grade --seed; default a fresh one): the same class and run seed give the same grades")
    return parser


def main(argv: list[str] | None = None, *, grader=None) -> int:
    """Run the command of ``argv``; ``grader``: the grading function to use instead of the trusted grader's
    ``autograder.grading.grade`` (same signature; tests pass a quick stand-in)."""
    args = build_parser().parse_args(argv)
    args.grader = grader
    try:
        with stoppable():  # SIGTERM, SIGINT, SIGHUP: every process the command started ends first
            return args.run(args)
    except CourseError as exc:  # release, lesson, grading and bundle errors are all CourseErrors
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Stopped as stop:
        print(f"error: {stop}", file=sys.stderr)
        return stop.exit_status
