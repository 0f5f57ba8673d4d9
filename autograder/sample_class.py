"""A sample class, as an LMS hands it over: about 40 students' notebooks, oddly named, in one .zip.

Deterministic (seeded). The mistakes, attacks and planted pairs are listed in ``sample_class.toml`` beside
this module (no solution is stored here: answers come from the course's ``source/`` and ``honest/``). Each
submission starts from the lesson's release notebook with its solution cells filled (matched by ``grade_id``)
with the student's own honest versions (:class:`Hands`: drawn from the reference and ``honest/<lesson>/``, as
unlike the earlier students' as the pool allows, then restyled in the student's hand), then varies honestly:

* ``complete``: every solution cell filled (two of them planted copies of an earlier student, one an honest
  look-alike: the manifest's ``plant``);
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
import functools
import io
import itertools
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


@dataclass(frozen=True)
class Plant:
    """A pair planted in one lesson for the copying leads: ``how`` is ``renamed`` (a copy, locals renamed and
    comments rewritten), ``reordered`` (a copy, independent statements swapped and one cell another honest
    version) or ``lookalike`` (no copy: an honest student whose versions are the most like another's)."""

    lesson: str
    how: str
    what: str


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


def read_plants(path: Path = DATA) -> tuple[Plant, ...]:
    """The planted pairs listed in ``path`` (:data:`DATA`), in order."""
    import tomllib

    plants = tuple(Plant(p["lesson"], p["how"], p["what"])
                   for p in tomllib.loads(Path(path).read_text(encoding="utf-8")).get("plant", []))
    for plant in plants:
        if plant.how not in ("renamed", "reordered", "lookalike"):
            raise ValueError(f"{path}: plant.how must be renamed, reordered or lookalike, got {plant.how!r}")
    return plants


PLANTS = read_plants()


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
    versions: str = ""         # whose honest version of each cell it hands in, where the lesson has several
    plant: str = ""            # planted for the copying leads: renamed, reordered (copies) or lookalike (honest)
    plant_of: str = ""         # ... of this student's hand-in


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
    if re.search(pattern, text) is None:  # most patterns miss most cells: no tokenizing then
        return text
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


#: The tag of a solution cell the grader replaces by the course's own (autograder.grading.lesson's GIVEN_TAG).
GIVEN_TAG = "given-at-grading"
#: Independent honest solutions, per lesson: ``<course>/honest/<lesson>/*.py`` (course material beside
#: ``source/``, never shipped in the wheel: they are solutions). Each file holds ``# %% <grade_id>`` sections,
#: each one cell's whole source as another student wrote it; the reference is always one more version.
HONEST = "honest"


def honest_versions(root: Path, lesson: str, reference: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """``{grade_id: [(who, source)]}``: each solution cell's honest versions, the reference's first."""
    versions = {grade_id: [("reference", text)] for grade_id, text in reference.items()}
    for path in sorted((Path(root) / HONEST / lesson).glob("*.py")):
        parts = re.split(r"^# %% (\S+)[ \t]*\n", path.read_text(encoding="utf-8"), flags=re.M)
        for grade_id, text in zip(parts[1::2], parts[2::2]):
            if grade_id not in versions:
                raise coursedir.CourseError(f"{path}: {grade_id!r} is no solution cell of {lesson}")
            versions[grade_id].append((path.stem, text.strip("\n") + "\n"))
    return versions


@functools.lru_cache(maxsize=None)
def _names(text: str) -> tuple[frozenset, frozenset]:
    """(names a cell reads that it does not bind anywhere, names it binds at top level); empty if no Python."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return frozenset(), frozenset()
    read, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    top = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            top.update((a.asname or a.name).split(".")[0] for a in statement.names)
        else:
            top.update(n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return frozenset(read - bound), frozenset(top)


def given_names(release_nb) -> set[str]:
    """The names the release notebook's own code cells (set-up, given cells) and Python's builtins bind."""
    import builtins

    names = set(dir(builtins))
    for cell in release_nb.cells:
        if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("solution"):
            names |= _names(cell.source)[1]
    return names


def _code_weight(text: str) -> int:
    return sum(len(line.strip()) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


class Versions:
    """Which honest version of each solution cell each student of one lesson hands in: every student takes,
    among the combinations whose cells find every name they read (in the notebook, in cells of the same
    author, or, where the reference's cells define it too, in any other cell) and bind no top-level name another cell binds, one as
    unlike the earlier students' as can be (the largest share of code any earlier student has in common with
    it, least), ties drawn from ``rng``. So independent students share little beyond what the exercise fixes."""

    def __init__(self, versions: dict[str, list[tuple[str, str]]], given: set[str], rng: random.Random, limit=4000):
        self.ids = list(versions)
        self.versions = versions
        self.weight = {(g, i): max(1, _code_weight(text)) for g in self.ids for i, (_, text) in enumerate(versions[g])}
        names = {(g, i): _names(text) for g in self.ids for i, (_, text) in enumerate(versions[g])}
        combos = list(itertools.islice(itertools.product(*(range(len(versions[g])) for g in self.ids)), limit))
        rng.shuffle(combos)

        interface = given.union(*(names[g, 0][1] for g in self.ids))  # what the reference's cells define

        def complete(combo) -> bool:
            tops = [names[g, i][1] for g, i in zip(self.ids, combo)]
            if sum(map(len, tops)) != len(set().union(*tops)):  # a name bound by two cells
                return False
            bound = given | (interface & set().union(*tops))
            for g, i in zip(self.ids, combo):  # a helper of one's own comes from one's own cells
                own = set().union(*(names[h, j][1] for h, j in zip(self.ids, combo)
                                    if versions[h][j][0] == versions[g][i][0]))
                if not names[g, i][0] <= bound | own:
                    return False
            return True

        self.combos = [c for c in combos if complete(c)] or [(0,) * len(self.ids)]
        self.taken: list[tuple[int, ...]] = []

    def shared(self, a: tuple[int, ...], b: tuple[int, ...], first: int | None = None) -> float:
        """The share of a's code (its ``first`` cells when given) that b has too, word for word: the cells in
        which a and b hand in the same version, by the size of that version's code."""
        ids = self.ids[:first]
        return (sum(self.weight[g, i] for g, i, j in zip(ids, a, b) if i == j)
                / max(1, sum(self.weight[g, i] for g, i in zip(ids, a))))

    def cells(self, combo: tuple[int, ...]) -> dict[str, str]:
        return {g: self.versions[g][i][1] for g, i in zip(self.ids, combo)}

    def who(self, combo: tuple[int, ...]) -> str:
        return ", ".join(f"{g}: {self.versions[g][i][0]}" for g, i in zip(self.ids, combo) if len(self.versions[g]) > 1)

    def draw(self, fits=None, near: tuple[int, ...] | None = None, below: float = 0.45, first: int | None = None):
        """The next student's combination (one with a cell version in ``fits``, a set of ``(grade_id, index)``,
        when given: the reference's if none has); ``near``: the most alike to that combination among those
        sharing under ``below`` of the code with it (a look-alike); ``first``: the student hands in only that
        many cells, so only those count."""
        candidates = [c for c in self.combos if fits is None or any(p in fits for p in zip(self.ids, c))]
        candidates = candidates or [(0,) * len(self.ids)]
        if near is not None:
            close = [c for c in candidates if c != near and self.shared(c, near) < below]
            combo = max(close or candidates, key=lambda c: self.shared(c, near))
        else:
            combo = min(candidates, key=lambda c: max((max(self.shared(c, t, first), self.shared(t, c))
                                                        for t in self.taken), default=0.0))
        self.taken.append(combo)
        return combo


#: Other names students give the usual locals (a student's own names: copying reads through them).
SYNONYMS = {"out": ("result", "res", "pooled"), "total": ("acc", "window_total", "s"), "divisor": ("denom", "count"),
            "height": ("h", "rows"), "width": ("w", "cols"), "out_h": ("oh", "h_out", "n_rows"),
            "out_w": ("ow", "w_out", "n_cols"), "grad_x": ("dx", "grad_in", "gx"), "size": ("dims", "shape_in"),
            "kernel": ("k", "window"), "step": ("strides", "hop"), "pad": ("pads", "p"), "batch": ("n", "b_size"),
            "channels": ("c_count", "n_channels"), "window": ("patch", "win"), "cam": ("heat", "act_map"),
            "gaps": ("diffs", "deltas"), "result": ("output", "answer"), "count": ("n_real", "cnt"),
            "average": ("avg", "mean_map"), "maximum": ("mx", "max_map"), "batch_t": ("t",), "padded": ("big", "xp"),
            "train": ("train_acc",), "held_out": ("val_acc", "held"), "oh": ("out_rows", "n_h"),
            "ow": ("out_cols", "n_w"), "kh": ("k_h", "win_h"), "kw": ("k_w", "win_w"), "sh": ("s_h", "step_h"),
            "sw": ("s_w", "step_w"), "ph": ("p_h", "pad_h"), "pw": ("p_w", "pad_w"), "g": ("grad", "gx"),
            "acc": ("window_sum", "tot"), "share": ("part", "portion"), "rows": ("row_range", "rr"),
            "cols": ("col_range", "cc"), "r0": ("top", "r_lo"), "c0": ("left", "c_lo"), "y": ("pooled_out", "z"),
            "n": ("count", "num"), "k": ("kern", "ksz"), "s": ("strd", "st"),
            "p": ("pd", "padd")}
#: What students write above a cell of theirs, now and then.
NOTES = ("# my solution", "# worked this out on paper first", "# checked against the examples above",
         "# second try, this one passes", "# TODO tidy up")


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _renamed(text: str, rng: random.Random, share: float, avoid: frozenset = frozenset()) -> str:
    """``text`` with about ``share`` of the functions' locals that :data:`SYNONYMS` knows renamed (never an
    argument, a name a string mentions, a keyword, an attribute, a name already used or one of ``avoid``)."""
    tree = ast.parse(text)
    nodes = list(ast.walk(tree))
    local = {n.id for f in nodes if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local -= {a.arg for a in nodes if isinstance(a, ast.arg)}
    local -= {n for g in nodes if isinstance(g, (ast.Global, ast.Nonlocal)) for n in g.names}
    local -= {n.id for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
              for n in ast.walk(s) if isinstance(n, ast.Name)} | _names(text)[1] | avoid
    local -= {n.id for c in nodes if isinstance(c, ast.ClassDef) for s in c.body  # class attributes
              if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(s) if isinstance(n, ast.Name)}
    tokens = _tokens(text)
    strings = " ".join(t.string for t in tokens if t.type == tokenize.STRING)
    used = {t.string for t in tokens if t.type == tokenize.NAME}
    names = {}
    for name in sorted(local):
        if name in SYNONYMS and not re.search(rf"\b{name}\b", strings) and rng.random() < share:
            new = rng.choice(SYNONYMS[name])
            if new not in used and new not in names.values():
                names[name] = new
    if not names:
        return text
    starts, out, at, depth = _offsets(text), [], 0, 0
    for before, token, after in zip([None] + tokens, tokens, tokens[1:] + [None]):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        if (token.type == tokenize.NAME and token.string in names and not (before and before.string == ".")
                and not (depth and after and after.string == "=")):
            start = starts[token.start[0] - 1] + token.start[1]
            out += [text[at:start], names[token.string]]
            at = start + len(token.string)
    return "".join(out) + text[at:]


def _recommented(text: str, rng: random.Random, share: float) -> str:
    """``text`` without about ``share`` of its comments (a line that held only a comment goes)."""
    lines = text.splitlines(keepends=True)
    for token in reversed([t for t in _tokens(text) if t.type == tokenize.COMMENT]):
        if rng.random() >= share:
            continue
        row, col = token.start[0] - 1, token.start[1]
        line = lines[row]
        code = line[:col].rstrip()
        lines[row] = code + ("\n" if line.endswith("\n") else "") if code else ""
    return "".join(lines)


def _reordered(text: str, rng: random.Random, share: float) -> str:
    """``text`` with about ``share`` of the pairs of neighbouring one-line assignments to plain names (neither
    reading or writing what the other writes) swapped."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    swaps = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        body = [s for s in body if isinstance(s, ast.stmt)] if isinstance(body, list) else []
        i = 0
        while i + 1 < len(body):
            a, b = body[i], body[i + 1]
            if all(isinstance(s, ast.Assign) and s.lineno == s.end_lineno and all(isinstance(t, ast.Name) for t in s.targets)
                   for s in (a, b)) and b.lineno == a.lineno + 1:
                written = [{t.id for t in s.targets} for s in (a, b)]
                read = [{n.id for n in ast.walk(s.value) if isinstance(n, ast.Name)} for s in (a, b)]
                if not (written[0] & (written[1] | read[1]) or written[1] & read[0]) and rng.random() < share:
                    swaps.append(a.lineno - 1)
                    i += 2
                    continue
            i += 1
    for row in swaps:
        first, second = lines[row], lines[row + 1]
        if not second.endswith("\n"):
            first, second = first.rstrip("\n"), second + "\n"
        lines[row], lines[row + 1] = second, first
    return "".join(lines)


def restyle(answers: dict[str, str], rng: random.Random, renames: float | None = None,
            comments: float | None = None, order: float | None = None, note: bool = True,
            avoid: frozenset = frozenset()) -> dict[str, str]:
    """One student's hand: ``answers`` with some locals renamed, some comments dropped (and now and then a
    note of their own above a cell), some independent neighbouring assignments swapped; each share drawn from
    ``rng`` unless given; ``avoid``: names never renamed (the notebook's, the cells' top-level ones). A cell
    that is not Python, or would no longer parse, is kept as it was."""
    renames = rng.uniform(0.2, 0.9) if renames is None else renames
    comments = rng.uniform(0.0, 0.8) if comments is None else comments
    order = rng.uniform(0.0, 0.6) if order is None else order
    noted = rng.choice(sorted(answers)) if note and answers and rng.random() < 0.5 else None
    styled = {}
    for grade_id, text in answers.items():
        new = text
        try:
            new = _reordered(_recommented(_renamed(text, rng, renames, avoid), rng, comments), rng, order)
            ast.parse(new)
        except SyntaxError:
            new = text
        if grade_id == noted:
            new = f"{rng.choice(NOTES)}\n{new}"
        styled[grade_id] = new
    return styled


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


#: The manifest's note on each kind of planted hand-in.
PLANTED = {"renamed": "planted copy of {}: locals renamed, comments rewritten",
           "reordered": "planted copy of {}: statements reordered, one cell another version",
           "lookalike": "honest look-alike of {}: independent work, the versions most like theirs"}


class Hands:
    """Who hands in what code in one lesson: each student their own honest versions (:class:`Versions`) in
    their own hand (:func:`restyle`), and the lesson's planted pairs (:data:`PLANTS`), each made from the
    latest honest complete student when the next student hands in complete work."""

    def __init__(self, versions: dict[str, list[tuple[str, str]]], given: set[str], seed: int, lesson: str,
                 plants: list[Plant], given_at_grading: frozenset = frozenset()):
        self.seed, self.lesson, self.plants = seed, lesson, list(plants)
        self.given_at_grading = given_at_grading  # cells the grader replaces by the course's: a mistake there costs nothing
        self.versions = Versions(versions, given, random.Random(f"{seed}/{lesson}"))
        self.avoid = frozenset(given.union(*(_names(t)[1] for v in versions.values() for _, t in v)))
        # a student's own hand (renamed locals, comments dropped...) only beside independent versions of the cells;
        # a lesson with the reference alone (a course without honest/) hands it in as it is
        self.styled = any(len(v) > 1 for v in versions.values())
        self.handed: dict = {}   # student -> (combo, answers as handed in)
        self.ids: dict = {}      # student -> the student id collect gives
        self.source = None       # the latest honest complete student

    def _rng(self, student, what: str = "") -> random.Random:
        return random.Random(f"{self.seed}/{self.lesson}/{student}/{what}")

    def _hand_in(self, student, combo, **style) -> dict[str, str]:
        cells = self.versions.cells(combo)
        answers = restyle(cells, self._rng(student), avoid=self.avoid, **style) if self.styled else cells
        self.handed[student] = (combo, answers)
        return answers

    def honest(self, student, first: int | None = None) -> dict[str, str]:
        """An honest student's solution cells (only the ``first`` ones when given)."""
        return dict(list(self._hand_in(student, self.versions.draw(first=first)).items())[:first])

    def wrong(self, student, mistake: str) -> dict[str, str]:
        """An honest student's cells with ``mistake`` made (on versions it applies to)."""
        found = next(m for m in MISTAKES if m.name == mistake)
        fits = {(g, i) for g, versions in self.versions.versions.items() for i, (_, text) in enumerate(versions)
                if g not in self.given_at_grading and apply_mistake(found, {g: text})}  # a cell that is graded
        combo = self.versions.draw(fits=fits or None)
        cells = self.versions.cells(combo)
        answers = {**cells, **apply_mistake(found, cells)}
        answers = restyle(answers, self._rng(student), avoid=self.avoid) if self.styled else answers
        self.handed[student] = (combo, answers)
        return answers

    def complete(self, student) -> tuple[dict[str, str], str]:
        """(the solution cells, the plant's note or "") of a student handing in complete work."""
        if not (self.plants and self.source is not None):
            answers = self.honest(student)
            self.source = student
            return answers, ""
        plant, source = self.plants.pop(0), self.source
        combo, handed = self.handed[source]
        rng = self._rng(student)
        if plant.how == "lookalike":
            answers = self._hand_in(student, self.versions.draw(near=combo))
        elif plant.how == "renamed":
            answers = restyle(handed, rng, renames=1.0, comments=1.0, order=0.0, note=False, avoid=self.avoid)
            answers = {g: f"{rng.choice(NOTES)}\n{t}" if t.strip() else t for g, t in answers.items()}
            self.handed[student] = (combo, answers)
        else:  # reordered, and one cell (the smallest another version exists of) another honest version
            weight = self.versions.weight
            others = [c for c in self.versions.combos if sum(i != j for i, j in zip(c, combo)) == 1]
            other = min(others, key=lambda c: next(weight[g, i] + weight[g, j] for g, i, j
                                                   in zip(self.versions.ids, c, combo) if i != j), default=combo)
            changed = {g: t for g, t in self.versions.cells(other).items() if t != self.versions.cells(combo)[g]}
            answers = restyle({**handed, **changed}, rng, renames=0.0, comments=0.0, order=1.0, note=False,
                              avoid=self.avoid)
            self.handed[student] = (other, answers)
        return answers, f"{plant.how}:{source}"

    def who(self, student) -> str:
        """Whose version of each cell ``student`` handed in ("" for none)."""
        return self.versions.who(self.handed[student][0]) if student in self.handed else ""

    def named(self, student, student_id: str) -> None:
        """Remember the id collect gives ``student`` (for the plants' notes)."""
        self.ids[student] = student_id

    def planted(self, planted: str) -> tuple[str, str]:
        """(how, the source's student id) of a planted hand-in; ("", "") for none."""
        if not planted:
            return "", ""
        how, source = planted.split(":", 1)
        return how, self.ids.get(int(source) if source.isdigit() else source, source)


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
    hands = {}
    for index, lesson in enumerate(lessons):
        release_nb = nbformat.read(coursedir.notebook(root, "release", lesson), as_version=4)
        reference = solution_cells(coursedir.notebook(root, "source", lesson))
        per_lesson[lesson] = (release_nb, reference, mistakes_for(reference),
                              FIRST_DUE + dt.timedelta(days=7 * index))
        given = given_names(release_nb)
        replaced = frozenset(c.metadata.get("nbgrader", {}).get("grade_id") for c in release_nb.cells
                             if GIVEN_TAG in c.metadata.get("tags", []))
        hands[lesson] = Hands(honest_versions(root, lesson, reference), given, seed, lesson,
                              [p for p in PLANTS if p.lesson == lesson], replaced)
    for i, person in enumerate(people):
        for number, lesson in enumerate(lessons):
            special = 0 < i <= len(SPECIAL) and number == 0  # the special students hand in the first lesson
            if rng.random() > submit_rate and i > 0 and not special:
                continue
            release_nb, reference, mistakes, due = per_lesson[lesson]
            hand = hands[lesson]
            # the cells worked out by hand hold this student's own numbers (issue 55), their mistakes made on them
            own, mistakes = own_answers(root, lesson, file_name(person, lesson, due, False)[1], reference, mistakes)
            mine = [grade_id for grade_id in reference if own[grade_id] != reference[grade_id]]
            roll, planted = rng.random(), ""
            if i == 0 or roll < 0.45 or (roll >= 0.65 and roll < 0.95 and not mistakes):
                variant, (answers, planted) = "complete", hand.complete(i)
            elif roll < 0.65:
                keep = rng.randrange(1, len(reference)) if len(reference) > 1 else 0
                variant = f"partial:{keep}/{len(reference)}"
                answers = hand.honest(i, keep)
            elif roll < 0.95:
                name = rng.choice(sorted(mistakes))
                variant, answers = f"wrong:{name}", hand.wrong(i, name)
            else:
                variant, answers = "blank", {}
            if not planted.startswith(("renamed:", "reordered:")):  # a planted copy keeps its classmate's numbers
                made = mistakes[name] if variant.startswith("wrong:") else {}
                answers = {**answers, **{g: made.get(g, own[g]) for g in mine if g in answers}}
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
            hand.named(i, student)
            how, of = hand.planted(planted)
            notes = ["renamed: placed by its lesson folder" if person.renamed else "", PLANTED.get(how, "").format(of)]
            manifest.append(Submission(path, student, lesson, variant, late, stamp, "; ".join(n for n in notes if n),
                                       lms_id, shown, hand.who(i), how, of))
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
        mine, _ = own_answers(root, attack.lesson, attack.student, reference, mistakes)  # its own numbers
        path = f"submissions/{attack.student}_{attack.lesson}.ipynb"
        own = hands[attack.lesson].honest(attack.student)  # the cells it does not attack: honest work of its own
        own.update({g: mine[g] for g in own if mine[g] != reference[g]})
        files[path] = nbformat.writes(fill(release_nb, attack.answers(own))).encode()
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
