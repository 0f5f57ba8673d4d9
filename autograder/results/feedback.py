"""Per-student feedback: nbgrader's own (``nbgrader generate_feedback``), checked before it is kept.

One format at one path: ``feedback/<student>/<lesson>/<lesson>.html``, nbgrader's layout, so
``nbgrader release_feedback`` hands the pages out and plain ``nbgrader generate_feedback`` writes the same
pages. nbgrader renders each autograded notebook with the gradebook's final scores (a manual grade from
formgrader wins over the automatic one), formgrader's comments and the late penalty. The course's
configuration (``nbgrader_config.py``) makes the rest safe to show: the test cells' outputs are the
trusted grader's verdict messages (``TrustedExecute``, which redacts any quoted hidden-test line and
withholds expected values until ``c.ExpectedAnswers.reveal``), the
hidden tests are cleared (nbgrader's ``ClearHiddenTests``), math is MathML (:mod:`autograder.results.feedback_steps`), which
renders offline, and the page opens with the graded cells by exercise and what each checks, lost points first, each a
link to its cell (``TestRows`` and the template ``templates/feedback-rows``, which extends nbgrader's own). This module runs it for the chosen lessons and students, then checks every page
before it is kept: no hidden-test line, and nothing loaded from the network (the link to MathJax that
nbgrader's template still writes is removed; MathML needs none). It also writes
``feedback/<student>/index.html`` listing the student's lessons. ``jobs`` nbgrader processes write the pages
at once, each leaving out the students of the others (the same pages as one process).
"""

from __future__ import annotations

import html
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder import coursedir
from autograder.results import templates
from autograder.results.tags import start_tags
from autograder.lessontext import hidden_test_lines
from autograder.records import record_dicts

#: ``<script>`` elements that load or configure MathJax (nbgrader's template links it from a CDN).
MATHJAX = re.compile(r"<script[^>]*(?:src=\"https?://[^\"]*mathjax[^\"]*\"|type=\"text/x-mathjax-config\")[^>]*>"
                     r".*?</script>\s*", re.S | re.I)
#: Tags that fetch what their ``src`` or ``href`` names.
LOADING = ("script", "link", "img", "iframe")
#: An address on another host: ``http(s)://`` or ``//``, after any spaces or control characters (a browser skips
#: them, and tabs and newlines anywhere, and reads ``\\`` as ``/``).
REMOTE = re.compile(r"[\x00-\x20]*(?:https?:)?[/\\]{2}", re.I)


def remote_load(page: str) -> str | None:
    """The first tag of ``page`` (HTML) that would load anything from the network, or None."""
    for match, _, attributes in start_tags(page, LOADING):
        if any(REMOTE.match(re.sub(r"[\t\n\r]", "", attributes.get(key, "")))
                                   for key in ("src", "href")):
            return match.group(0)
    return None


def checked_page(text: str, hidden: set[str], where: str) -> str:
    """``text`` without MathJax; raises ``CourseError`` if it quotes a hidden test or loads anything
    from the network."""
    text = MATHJAX.sub("", text)
    shown = html.unescape(text)  # as a reader sees it: ``&#39;``, ``&quot;``... are quotes
    # (a line without "&" in the raw text is in ``shown`` too: escaped text has no bare "&" to start a reference)
    quoted = [line for line in hidden if line in shown or ("&" in line and line in text)]
    if quoted:
        raise coursedir.CourseError(f"feedback for {where} would quote hidden tests ({quoted[0][:60]!r}); nothing "
                                    "of it was kept: report this as a bug of the course's grader")
    remote = remote_load(text)
    if remote:
        raise coursedir.CourseError(f"feedback for {where} would load {remote[:120]!r} from the network; nothing of "
                                    "it was kept")
    return text


#: The longest list of left-out students passed as one argument (Linux refuses one over 128 KiB).
MAX_ARGUMENT = 100_000


def _runs(everyone: list[str], chosen: list[str], jobs: int) -> list[list[str]]:
    """The arguments of the ``nbgrader generate_feedback`` runs that together write the pages of ``chosen``
    (of ``everyone`` graded in the lesson), each once: at most ``jobs`` runs, each leaving out (nbgrader's
    ``student_id_exclude``, a comma-separated list) every student it does not write. An id holding a comma
    cannot be left out that way: then one run per chosen student; nor can a list longer than
    :data:`MAX_ARGUMENT`: then one run for the whole class (or one per chosen student)."""
    if any("," in student for student in everyone):
        return [[f"--student={student}"] for student in chosen]
    groups = [chosen[i::jobs] for i in range(min(jobs, len(chosen)))]
    runs = [[f"--CourseDirectory.student_id_exclude={','.join(s for s in everyone if s not in group)}"]
            for group in groups]
    if any(len(run[0]) > MAX_ARGUMENT for run in runs):  # a class of thousands: one process, as before --jobs
        return [[]] if chosen == everyone else [[f"--student={student}"] for student in chosen]
    return runs


def _plan(root: Path, pairs: set[tuple[str, str]], jobs: int) -> list[tuple[str, list[str]]]:
    """``[(assignment, arguments)]`` of the ``nbgrader generate_feedback`` runs that write the pages of ``pairs``
    ((student, lesson)), each once. Where every folder under ``autograded/`` of those students is one of
    ``pairs``, at most ``jobs`` runs for every lesson at once (assignment ``*``: nbgrader starts once per job,
    not once per job and lesson); otherwise the runs of each lesson (see :func:`_runs`)."""
    on_disk = {(p.parent.name, p.name) for p in (root / "autograded").glob("*/*") if p.is_dir()}
    students = sorted({student for student, _ in pairs})
    if {pair for pair in on_disk if pair[0] in students} == pairs:
        everyone = sorted({student for student, _ in on_disk})
        return [("*", arguments) for arguments in _runs(everyone, students, jobs)]
    runs = []
    for lesson in sorted({lesson for _, lesson in pairs}):
        everyone = sorted(student for student, name in on_disk if name == lesson)
        graded = sorted(student for student, name in pairs if name == lesson)
        runs += [(lesson, arguments) for arguments in _runs(everyone, graded, jobs)]
    return runs


def write_feedback(root: Path, lessons: list[str] | None = None, students: list[str] | None = None,
                   jobs: int = 1) -> list[Path]:
    """nbgrader's feedback for every graded submission of ``lessons`` (by ``students``), checked (see the
    module docstring), written by ``jobs`` nbgrader processes at once (the same pages as one); returns the
    pages written."""
    root = Path(root)
    if type(jobs) is not int or jobs < 1:
        raise coursedir.CourseError(f"jobs must be an int >= 1 (nbgrader processes writing feedback at once), "
                                    f"got {jobs!r}")
    chosen = coursedir.check_lessons(lessons, root)
    coursedir.check_gradebook(root)
    records = [r for r in record_dicts(root) if r["lesson"] in chosen and (not students or r["student"] in students)
               and (root / "autograded" / r["student"] / r["lesson"]).is_dir()]
    if not records:
        raise coursedir.CourseError(f"no graded submissions in {root / 'autograded'}: grade them first with "
                                    "`avgpool-course grade`")
    written, by_student = [], {}
    runs = _plan(root, {(r["student"], r["lesson"]) for r in records}, jobs)
    # nbgrader adds a course's row to the gradebook where it is missing: done here once, before the runs, or two
    # starting together both add it and one fails (sqlite3.IntegrityError: UNIQUE constraint failed: course.id).
    # Two rows: the course's own, and nbgrader's "default_course", which its GetGrades step opens the gradebook
    # with whatever the course's id is (a gradebook the trusted grader wrote has only the course's own row).
    for course in (None, "default_course"):
        with coursedir.open_gradebook(root, course):
            pass
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # each run is an nbgrader process of its own
        results = list(pool.map(lambda run: (run[0], coursedir.run_nbgrader(root, "generate_feedback", run[0],
                                                                             "--force", *run[1])), runs))
    for lesson, result in results:
        if result.returncode != 0:
            output = result.stdout + result.stderr
            start = max(0, min((i for i in (output.find("Traceback"), output.find("| ERROR]")) if i >= 0),
                               default=len(output) - 2000))
            raise coursedir.CourseError(f"nbgrader generate_feedback {'(every lesson)' if lesson == '*' else lesson} failed:\n{output[start:start + 4000]}")
    for lesson in sorted({r["lesson"] for r in records}):
        hidden = hidden_test_lines(root, lesson)
        for record in (r for r in records if r["lesson"] == lesson):
            path = root / "feedback" / record["student"] / lesson / f"{lesson}.html"
            if not path.is_file():
                raise coursedir.CourseError(f"nbgrader wrote no feedback page for {record['student']}/{lesson}")
            try:
                path.write_text(checked_page(path.read_text(), hidden, f"{record['student']}/{lesson}"))
            except coursedir.CourseError:
                path.unlink()
                raise
            written.append(path)
            by_student.setdefault(record["student"], []).append(record)
    for student, items in by_student.items():
        (root / "feedback" / student / "index.html").write_text(templates.render(
            "feedback_index.html.j2", student=student, records=sorted(items, key=lambda r: r["lesson"])))
    return written
