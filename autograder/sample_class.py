"""A sample class, as an LMS hands it over: about 40 students' notebooks, oddly named, in one .zip.

Deterministic (seeded). The mistakes and attacks are listed in ``sample_class.toml`` beside this module
(no solution is stored: answers come from ``source/``). Each submission starts from the lesson's release notebook with its solution
cells filled from the source notebook's solutions (matched by ``grade_id``), then varies honestly:

* ``complete``: every solution cell filled;
* ``partial``: the last solution cells left as the release stub;
* ``wrong:<mistake>``: a typical mistake made by string replacement in the reference solution (an
  off-by-one window, stride 0 not read as kernel_size, count_include_pad inverted, ...); a mistake is
  used for a lesson only when the replacement changes its code and the result still parses;
* ``blank``: the release handed back untouched;
* late: any of the above uploaded after the lesson's due date (the zip entry's time, a time in the
  name or timestamp.txt; Canvas-style names also carry the LMS's LATE mark);
* ``attack:<name>``: cheating or crashing submissions (:data:`ATTACKS`), each handed in by a student of its
  own, ``attack_<name>``: the grader must stop each on its targets (``make course`` says whether it did);
* LMS debris: a re-uploaded copy, a PDF instead of a notebook, a notebook cut short (not valid JSON).

The students after the first are :data:`SPECIAL`: same-name pairs told apart by their LMS ids, names
outside ASCII, a renamed file placed by its lesson folder, and LMS-marked late work.

Not every student hands in every lesson. ``manifest.json`` beside the archive says what each file is
(the LMS would not give it: it is for tests and for reading the report).
"""

from __future__ import annotations

import ast
import copy
import datetime as dt
import io
import json
import random
import re
import tokenize
import zipfile
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import nbformat

from autograder import coursedir, variants
from autograder.solutions import solution_cells

FIRST = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Karim", "Lena",
         "Mateo", "Nadia", "Oscar", "Priya", "Quentin", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wei", "Xenia",
         "Yusuf", "Zoe", "Amir", "Bea", "Chen", "Dina", "Emil", "Fatou", "Goran", "Hana", "Ines", "Jonas",
         "Kofi", "Lucia", "Milan", "Noor", "Olga", "Pavel", "Rhea", "Sven"]
LAST = ["Moreau", "Smith", "Okafor", "Tanaka", "Novak", "Garcia", "Ivanova", "Berg", "Rossi", "Kim", "Haddad",
        "Silva", "Nguyen", "Keller", "Dubois", "Singh", "Lopez", "Meyer", "Costa", "Sato"]
#: How each student's LMS names files (one style per student, as one LMS account keeps one name).
STYLES = ("canvas", "moodle", "per_lesson_folder", "nbgrader", "blackboard", "flat")
FIRST_DUE = dt.datetime(2025, 3, 3, 23, 59)


@dataclass(frozen=True)
class Mistake:
    """A typical wrong answer: regex replacements tried on every solution cell of a lesson."""

    name: str
    what: str
    replacements: tuple[tuple[str, str], ...]


#: The mistakes and attacks of the class: a small data file beside this module.
DATA = Path(__file__).with_name("sample_class.toml")


@dataclass(frozen=True)
class Attack:
    """A cheating or crashing submission of one lesson: the reference with ``cells`` replaced and
    ``append`` added to cells; the grader must score every test of ``stopped_on`` 0."""

    name: str
    lesson: str
    what: str
    stopped_on: tuple[str, ...]
    cells: dict
    append: dict

    @property
    def student(self) -> str:
        return f"attack_{self.name}"

    def answers(self, reference: dict[str, str]) -> dict[str, str]:
        """The solution cells handed in: the reference's, changed as the attack says."""
        answers = {**reference, **{g: text.strip("\n") + "\n" for g, text in self.cells.items()}}
        for grade_id, text in self.append.items():
            answers[grade_id] = answers.get(grade_id, "") + text
        return answers


def read_data(path: Path = DATA) -> tuple[tuple[Mistake, ...], tuple[Attack, ...]]:
    """The mistakes and attacks listed in ``path`` (:data:`DATA`)."""
    import tomllib

    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    mistakes = tuple(Mistake(m["name"], m["what"], tuple(tuple(r) for r in m["replacements"]))
                     for m in data.get("mistake", []))
    attacks = tuple(Attack(a["name"], a["lesson"], a["what"], tuple(a["stopped_on"]), a.get("cells", {}),
                           a.get("append", {})) for a in data.get("attack", []))
    return mistakes, attacks


MISTAKES, ATTACKS = read_data()


@dataclass
class Submission:
    """One file the LMS hands over, and what it is."""

    file: str
    student: str
    lesson: str
    variant: str
    late: bool = False
    timestamp: str | None = None
    note: str = ""
    lms_id: str | None = None  # the LMS's user id collect must keep (in the gradebook too)
    name: str = ""             # the display name collect must store in the gradebook


def _comment_spans(text: str) -> list[tuple[int, int]]:
    """The character spans of the comments in ``text`` (Python source)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    try:
        return [(starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1])
                for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []


def _substitute_in_code(pattern: str, replacement: str, text: str, count: int = 2) -> str:
    """``re.sub`` of at most ``count`` matches that lie outside comments (a comment is no mistake)."""
    comments = _comment_spans(text)
    done = 0

    def one(match: re.Match) -> str:
        nonlocal done
        if done >= count or any(a <= match.start() < b for a, b in comments):
            return match.group(0)
        done += 1
        return match.expand(replacement)

    return re.sub(pattern, one, text)


def apply_mistake(mistake: Mistake, cells: dict[str, str]) -> dict[str, str]:
    """The solution cells whose code ``mistake`` changes (and that still parse), mistake applied; {} if none."""
    changed = {}
    for grade_id, text in cells.items():
        new = text
        for pattern, replacement in mistake.replacements:
            new = _substitute_in_code(pattern, replacement, new)
        if new != text:
            try:
                ast.parse(new)
            except SyntaxError:
                continue
            changed[grade_id] = new
    return changed


def mistakes_for(cells: dict[str, str]) -> dict[str, dict[str, str]]:
    """``{mistake name: changed cells}`` for every mistake that applies to this lesson's solutions."""
    found = {}
    for mistake in MISTAKES:
        changed = apply_mistake(mistake, cells)
        if changed:
            found[mistake.name] = changed
    return found


def own_answers(root: Path, lesson: str, student: str, reference: dict[str, str],
                mistakes: dict[str, dict[str, str]]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """``(reference, mistakes)`` of ``student`` in ``lesson``: where the lesson draws numbers per student
    (:mod:`autograder.variants`), the cells worked out by hand hold that student's own answers, and the
    mistakes are made on them; elsewhere both as given."""
    if variants.graded_identity(root, student, lesson) is None:
        return reference, mistakes
    own = variants.hand_sources(student, reference, lesson)
    return own, mistakes_for(own)


def fill(release_nb, answers: dict[str, str]):
    """A copy of the release notebook whose solution cells hold ``answers`` (by grade_id; others: stub)."""
    nb = copy.deepcopy(release_nb)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in answers:
            cell.source = answers[grade_id]
    return nb


@dataclass(frozen=True)
class Student:
    """One student of the class: how their LMS names their files, and what collect must make of it."""

    full: str                 # the name as the LMS writes it
    style: str                # one of STYLES
    uid: int                  # the LMS's user id (in Canvas and Moodle names)
    student: str = ""         # the nbgrader student id collect must give (default: as the style implies)
    renamed: bool = False     # hands in a file renamed beyond recognition, in a folder naming the lesson
    marked_late: bool = False  # always late, and the LMS says so in the name


#: Students who try collect's identity rules (they replace the first names of the class, after the
#: first student): two Moodle students of one name and two Canvas ones of one login (the LMS id keeps
#: each pair apart), names outside ASCII (kept, and stored in the gradebook as written), a file renamed
#: beyond recognition (placed by its lesson folder), and LMS-marked late work.
SPECIAL = (
    Student("Wei Zhang", "moodle", 6666, "wei_zhang", renamed=True),
    Student("Wei Zhang", "moodle", 7777, "wei_zhang"),
    Student("José Núñez", "moodle", 4242, "jose_nunez"),
    Student("李明", "moodle", 8888, "李明"),
    Student("Дмитрий Иванов", "moodle", 9999, "дмитрий_иванов"),
    Student("Zoë Ångström", "per_lesson_folder", 5151, "zoe_angstrom"),
    Student("Wei Zhang", "canvas", 12345, "zhangwei", marked_late=True),
    Student("Wei Zhang", "canvas", 54321, "zhangwei"),
)


def file_name(person: Student, lesson: str, when: dt.datetime, late: bool) -> tuple[str, str, str]:
    """(path inside the archive, student id collect will derive, name it will store) for one file."""
    words = person.full.split()
    first, last = words[0], words[-1]
    login = f"{last}{first}".lower()
    style, uid = person.style, person.uid
    if person.renamed:
        path, student = f"{lesson}/{person.full}_{uid}_assignsubmission_file_/my homework (final).ipynb", ""
    elif style == "canvas":
        path, student = f"{login}{'_LATE' if late else ''}_{uid}_{uid * 7 % 100000}_{lesson}.ipynb", login
    elif style == "moodle":  # Moodle: one folder per participant, the file as uploaded
        path, student = f"{person.full}_{uid}_assignsubmission_file_/{lesson}.ipynb", "_".join(words).lower()
    elif style == "per_lesson_folder":
        path, student = f"{lesson}/{person.full}/notebook.ipynb", "_".join(words).lower()
    elif style == "nbgrader":
        path, student = f"{login}/{lesson}/{lesson}.ipynb", login
    elif style == "blackboard":
        path, student = f"{lesson}_{login}_attempt_{when:%Y-%m-%d-%H-%M-%S}_{lesson}.ipynb", login
    else:
        student = f"{first}{last[0]}".lower()
        path = f"submissions/{student}_{lesson}{'_LATE' if late else ''}.ipynb"
    shown = person.full if style in ("moodle", "per_lesson_folder") or person.renamed else student
    return path, person.student or student, shown


#: About this many submissions in a default class: what the main job grades in a few minutes on 2 cores.
TARGET_SUBMISSIONS = 60


def generate(out: Path, root: Path = coursedir.REPO, students: int = 40, seed: int = 7,
             submit_rate: float | None = None, lessons: list[str] | None = None, as_zip: bool = True,
             attacks: bool = True) -> tuple[Path, list[Submission]]:
    """Write the class into ``out`` (``out/lms_export.zip`` or the folder ``out/lms_export``).

    Returns the archive (or folder) and the manifest (also written to ``out/manifest.json``).
    ``submit_rate``: the chance that a student hands in a given lesson (the first student hands in all);
    default: 0.8, lowered so that the class holds about ``TARGET_SUBMISSIONS`` submissions in all.
    """
    rng = random.Random(seed)
    root = Path(root)
    released = coursedir.lessons(root, released=True)  # a lesson not yet released is skipped
    lessons = [lesson for lesson in lessons or released if lesson in released]
    if not lessons:
        raise coursedir.CourseError(f"no released lesson in {root}: run `avgpool-course release` first")
    people = [Student(f"{FIRST[i % len(FIRST)]} {LAST[(i * 7) % len(LAST)]}", STYLES[i % len(STYLES)], 10000 + i)
              for i in range(students)]
    styles = [person.style for person in people]
    rng.shuffle(styles)
    people = [Student(person.full, style, person.uid) for person, style in zip(people, styles)]
    people[1:1 + len(SPECIAL)] = SPECIAL[:max(0, students - 1)]
    shared = Counter(person.student for person in people if person.student)  # one name, two LMS ids:
    people = [replace(person, student=f"{person.student}_{person.uid}") if shared[person.student] > 1 else person
              for person in people]                                         # <name>_<id> each
    forced = 1 + min(len(SPECIAL), max(0, students - 1))  # the first student and the special ones
    if submit_rate is None:
        submit_rate = min(0.8, max(0.05, (TARGET_SUBMISSIONS - forced) / (students * len(lessons))))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}
    times: dict[str, dt.datetime] = {}
    manifest: list[Submission] = []
    per_lesson = {}
    for index, lesson in enumerate(lessons):
        release_nb = nbformat.read(coursedir.notebook(root, "release", lesson), as_version=4)
        reference = solution_cells(coursedir.notebook(root, "source", lesson))
        per_lesson[lesson] = (release_nb, reference, mistakes_for(reference),
                              FIRST_DUE + dt.timedelta(days=7 * index))
    for i, person in enumerate(people):
        for number, lesson in enumerate(lessons):
            special = 0 < i <= len(SPECIAL) and number == 0  # the special students hand in the first lesson
            if rng.random() > submit_rate and i > 0 and not special:
                continue
            release_nb, reference, mistakes, due = per_lesson[lesson]
            reference, mistakes = own_answers(root, lesson, file_name(person, lesson, due, False)[1], reference,
                                              mistakes)
            roll = rng.random()
            if i == 0 or roll < 0.45:
                variant, answers = "complete", dict(reference)
            elif roll < 0.65:
                keep = rng.randrange(1, len(reference)) if len(reference) > 1 else 0
                variant = f"partial:{keep}/{len(reference)}"
                answers = dict(list(reference.items())[:keep])
            elif roll < 0.95 and mistakes:
                name = rng.choice(sorted(mistakes))
                variant, answers = f"wrong:{name}", {**reference, **mistakes[name]}
            elif roll < 0.95:
                variant, answers = "complete", dict(reference)
            else:
                variant, answers = "blank", {}
            # collect knows a time from the zip entry, from the name (Blackboard) or from timestamp.txt
            timed = as_zip or person.style in ("blackboard", "nbgrader")
            marked = person.style in ("canvas", "flat")  # these LMS write LATE in the name
            late = (rng.random() < 0.12 and (timed or marked)) or (special and person.marked_late)
            when = due + (dt.timedelta(hours=rng.randint(1, 48)) if late
                          else -dt.timedelta(minutes=rng.randint(10, 72 * 60)))
            path, student, shown = file_name(person, lesson, when, late and marked)
            files[path] = nbformat.writes(fill(release_nb, answers)).encode()
            times[path] = when
            if person.style == "nbgrader":
                files[str(Path(path).parent / "timestamp.txt")] = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC").encode()
            stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC") if timed else None
            lms_id = str(person.uid) if person.style in ("canvas", "moodle") or person.renamed else None
            manifest.append(Submission(path, student, lesson, variant, late, stamp,
                                       "renamed: placed by its lesson folder" if person.renamed else "",
                                       lms_id, shown))
    first_lesson = lessons[0]
    release_nb, reference, _, due = per_lesson[first_lesson]
    # LMS debris: an earlier partial attempt (kept by the LMS beside the newer one), a PDF, a notebook cut short.
    attempt = next((m for m in manifest if m.file.startswith(f"{first_lesson}_") and "_attempt_" in m.file), None)
    if attempt is not None:
        when = times[attempt.file] - dt.timedelta(days=1)
        login = attempt.student
        older = f"{first_lesson}_{login}_attempt_{when:%Y-%m-%d-%H-%M-%S}_{first_lesson}.ipynb"
        files[older] = nbformat.writes(fill(release_nb, dict(list(reference.items())[:1]))).encode()
        times[older] = when
        manifest.append(Submission(older, login, first_lesson, "superseded",
                                   note="an earlier attempt; collect keeps the latest", name=login))
    files[f"submissions/helenp_{first_lesson}.pdf"] = b"%PDF-1.4 printed notebook\n"
    manifest.append(Submission(f"submissions/helenp_{first_lesson}.pdf", "helenp", first_lesson, "not a notebook",
                               note="a PDF instead of the .ipynb: collect reports it"))
    text = nbformat.writes(fill(release_nb, reference))
    files[f"submissions/ivanq_{first_lesson}.ipynb"] = text[: len(text) // 2].encode()
    manifest.append(Submission(f"submissions/ivanq_{first_lesson}.ipynb", "ivanq", first_lesson,
                               "not a notebook", note="upload cut short (invalid JSON): collect reports it"))
    for attack in ATTACKS if attacks else ():
        if attack.lesson not in per_lesson:
            continue
        release_nb, reference, mistakes, due = per_lesson[attack.lesson]
        reference, _ = own_answers(root, attack.lesson, attack.student, reference, mistakes)
        path = f"submissions/{attack.student}_{attack.lesson}.ipynb"
        files[path] = nbformat.writes(fill(release_nb, attack.answers(reference))).encode()
        times[path] = due - dt.timedelta(hours=1)
        manifest.append(Submission(path, attack.student, attack.lesson, f"attack:{attack.name}", False,
                                   times[path].strftime("%Y-%m-%d %H:%M:%S.%f UTC") if as_zip else None,
                                   note=attack.what, name=attack.student.replace("_", " ")))
    target = out / ("lms_export.zip" if as_zip else "lms_export")
    if as_zip:
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(files):
                when = times.get(path, FIRST_DUE)
                info = zipfile.ZipInfo(f"class_export/{path}", date_time=when.timetuple()[:6])
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, files[path])
    else:
        for path, data in files.items():
            (target / path).parent.mkdir(parents=True, exist_ok=True)
            (target / path).write_bytes(data)
    due_dates = {lesson: per_lesson[lesson][3].strftime("%Y-%m-%d %H:%M") for lesson in lessons}
    (out / "manifest.json").write_text(json.dumps({"due": due_dates, "seed": seed,
                                                   "submissions": [asdict(m) for m in manifest]}, indent=1))
    return target, manifest


def normalize_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def due_dates(out: Path) -> dict[str, str]:
    """The due dates written in ``out/manifest.json`` (``{lesson: 'YYYY-MM-DD HH:MM'}``)."""
    return json.loads((Path(out) / "manifest.json").read_text())["due"]
