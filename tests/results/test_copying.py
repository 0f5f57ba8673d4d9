"""Copying leads (autograder/results/copying.py): independent honest solutions of one exercise are not
flagged; planted copies (renamed, re-commented, reordered, one cell changed) are, with the release's own
code of the cells (the stubs) never counted as alike."""

from __future__ import annotations

import re

import nbformat

from autograder.results import copying
from autograder.solutions import solution_cells
from shared import REPO

LESSON = "lesson2_loops"
CELL = "avg_pool2d_loops"
#: Each planted copy and the student it copies.
PLANTED = {"copy_renamed": "product", "copy_recommented": "while_loops", "copy_reordered": "mean_of_padded",
           "copy_one_cell_changed": "padded_copy"}

#: Independent honest solutions of lesson 2's forward (each passes its tests), written apart from the reference.
HONEST = {
"while_loops": '''
def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(x, np.ndarray) or x.ndim != 4:
        raise TypeError("x must be a 4-D NumPy array")
    if x.dtype not in (np.float32, np.float64):
        raise TypeError("x must be float32 or float64")
    k = (kernel_size, kernel_size) if np.isscalar(kernel_size) else tuple(kernel_size)
    s = (stride, stride) if np.isscalar(stride) else tuple(stride)
    p = (padding, padding) if np.isscalar(padding) else tuple(padding)
    s = (s[0] or k[0], s[1] or k[1])
    n_rows, n_cols = output_size(x.shape[2:], kernel_size, stride, padding)
    result = np.zeros((x.shape[0], x.shape[1], n_rows, n_cols), dtype=x.dtype)
    row = 0
    while row < n_rows:
        col = 0
        while col < n_cols:
            y0 = row * s[0] - p[0]
            x0 = col * s[1] - p[1]
            ys = slice(max(y0, 0), min(y0 + k[0], x.shape[2]))
            xs = slice(max(x0, 0), min(x0 + k[1], x.shape[3]))
            window = x[:, :, ys, xs]
            n = k[0] * k[1] if count_include_pad else window.shape[2] * window.shape[3]
            result[:, :, row, col] = window.sum(axis=(2, 3)) / n
            col += 1
        row += 1
    return result
''',
"product": '''
import itertools

def pair(v):
    return (int(v), int(v)) if isinstance(v, (int, np.integer)) else (int(v[0]), int(v[1]))

def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    if not isinstance(x, np.ndarray):
        raise TypeError("x must be an ndarray")
    if x.ndim != 4:
        raise ValueError("x must be [B, C, H, W]")
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError("x must have a float dtype")
    kh, kw = pair(kernel_size)
    sh, sw = pair(stride)
    if sh == 0: sh = kh
    if sw == 0: sw = kw
    ph, pw = pair(padding)
    H, W = x.shape[2], x.shape[3]
    oh, ow = output_size((H, W), kernel_size, stride, padding)
    y = np.empty((*x.shape[:2], oh, ow), dtype=x.dtype)
    for n, ch, a, b in itertools.product(range(x.shape[0]), range(x.shape[1]), range(oh), range(ow)):
        acc, cnt = 0.0, 0
        for u in range(kh):
            for v in range(kw):
                r, c = a * sh - ph + u, b * sw - pw + v
                if 0 <= r < H and 0 <= c < W:
                    acc += x[n, ch, r, c]
                    cnt += 1
        y[n, ch, a, b] = acc / (kh * kw if count_include_pad else cnt)
    return y
''',
"mean_of_padded": '''
def avg_pool2d_loops(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    """My pooling."""
    if type(x) is not np.ndarray:
        raise TypeError("x: expected a numpy array")
    if len(x.shape) != 4:
        raise ValueError("x: expected 4 dimensions")
    if x.dtype.kind != "f":
        raise TypeError("x: expected floats")
    kernel = np.broadcast_to(kernel_size, 2).astype(int)
    step = np.broadcast_to(stride, 2).astype(int)
    step = np.where(step == 0, kernel, step)
    pad = np.broadcast_to(padding, 2).astype(int)
    h_out, w_out = output_size(x.shape[-2:], kernel_size, stride, padding)
    big = np.pad(x, [(0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])])
    ones = np.pad(np.ones(x.shape[-2:]), [(pad[0], pad[0]), (pad[1], pad[1])])
    out = []
    for img in big:
        planes = []
        for plane in img:
            rows = []
            for r in range(h_out):
                vals = []
                for c in range(w_out):
                    top, left = r * step[0], c * step[1]
                    patch = plane[top:top + kernel[0], left:left + kernel[1]]
                    if count_include_pad:
                        vals.append(patch.mean())
                    else:
                        vals.append(patch.sum() / ones[top:top + kernel[0], left:left + kernel[1]].sum())
                rows.append(vals)
            planes.append(rows)
        out.append(planes)
    return np.array(out, dtype=x.dtype)
''',
}


def _release(cell: str) -> str:
    nb = nbformat.read(REPO / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell)


def _answers() -> dict[str, dict[str, str]]:
    """``{student: {grade_id: source}}`` of the forward and test-cases cells: honest students (the reference,
    the corpus's other algorithm, :data:`HONEST`), each with their own test cases, and a planted copy of four
    of them (:data:`PLANTED`)."""
    reference = solution_cells(REPO / "source" / LESSON / f"{LESSON}.ipynb")
    corpus = (REPO / "tests" / "data" / "corpus" / LESSON / "correct_padded_copy.py").read_text()
    forward = dict(HONEST, reference=reference[CELL], padded_copy=corpus.split(f"# %% {CELL}\n")[1])
    answers = {name: {CELL: code, "my_cases": f"my_cases = [((1, {i + 1}, {i + 4}, 5), 'float32', {i % 3 + 1}, 0, 0, "
                                                f"{i % 2 == 0})]"} for i, (name, code) in enumerate(forward.items())}
    renamed = forward["product"]
    for old, new in [("acc", "total"), ("cnt", "count"), ("pair", "two"), ("oh", "out_rows"), ("ow", "out_cols"),
                     ("kh", "k_rows"), ("kw", "k_cols"), ("y", "res")]:
        renamed = re.sub(rf"\b{old}\b", new, renamed)
    lines = forward["mean_of_padded"].splitlines()
    moved = lines.index("    pad = np.broadcast_to(padding, 2).astype(int)")
    first = lines.index("    kernel = np.broadcast_to(kernel_size, 2).astype(int)")
    answers.update({  # each a copy of another student (PLANTED)
        "copy_renamed": {CELL: renamed, "my_cases": answers["product"]["my_cases"].replace("my_cases", "my_cases ")},
        "copy_recommented": {name: "\n".join(line + "  # my own work" if line.strip() else "# worked on this late"
                                             for line in text.splitlines()).replace("0.0", "0.")
                             for name, text in answers["while_loops"].items()},
        "copy_reordered": {CELL: "\n".join(lines[:first] + [lines[moved]] + lines[first:moved] + lines[moved + 1:]),
                           "my_cases": answers["mean_of_padded"]["my_cases"]},
        "copy_one_cell_changed": {CELL: forward["padded_copy"],
                                  "my_cases": "my_cases = [((2, 2, 6, 6), 'float64', 2, 1, 1, True)]"},
    })
    return answers


def _class() -> tuple[dict[str, str], str]:
    """Each student's two cells as one text, and the release's code of the two cells."""
    codes = {name: cells[CELL] + "\n\n" + cells["my_cases"] for name, cells in _answers().items()}
    return codes, _release(CELL) + "\n\n" + _release("my_cases")


def test_planted_copies_are_flagged_and_independent_honest_solutions_are_not():
    codes, template = _class()
    pairs = copying.compare(codes, template)
    scores = {frozenset((p.a, p.b)): p.score for p in pairs}
    flagged = {frozenset((p.a, p.b)) for p in copying.flagged(pairs)}
    planted = {frozenset(pair) for pair in PLANTED.items()}
    assert flagged == planted, {tuple(sorted(k)): round(v, 3) for k, v in scores.items() if v > 0.4}
    honest = [name for name in codes if name not in PLANTED]
    top_honest = max(scores[frozenset((a, b))] for i, a in enumerate(honest) for b in honest[i + 1:])
    assert top_honest < copying.FLOOR <= copying.threshold(pairs) < min(scores[p] for p in planted)
    assert min(scores[p] for p in planted) > 0.9


def test_the_release_template_is_not_counted_as_alike():
    """Two students who each kept the release's given helper (as_pair, the docstring) and wrote the rest
    apart are alike only for what they wrote; without the template they would be much more alike."""
    template = _release(CELL)
    given = template.split("def avg_pool2d_loops")[0]
    codes = {"a": given + HONEST["while_loops"], "b": given + HONEST["mean_of_padded"]}
    with_template = copying.compare(codes, template)[0].score
    without = copying.compare(codes, "")[0].score
    assert with_template < without and with_template < copying.FLOOR


def test_canonical_makes_alike_what_copying_changes_and_keeps_what_it_does_not():
    one = "import numpy as np\nimport math\n\nx = 1.\ny = 0x10  # sixteen\nz = x + y\n"
    two = "import math\nimport numpy as np\n# my work\nY = 16\nX = 1.0\n\n\nz = X + Y"
    assert copying.canonical(one) != copying.canonical(two), "names differ (the tokens compare them as alike)"
    assert re.sub(r"\b([xy])\b", lambda m: m.group(1).upper(), copying.canonical(one)) == copying.canonical(two)
    dependent = "a = 1\nb = a + 1\n"
    assert copying.canonical(dependent) == "a = 1\nb = a + 1", "a statement that reads another stays after it"
    assert copying.canonical("def f(:\n  # note\n  pass") == "def f(:\n  pass", "not Python: only comments go"


def test_the_copying_page_shows_the_planted_pairs_side_by_side_and_says_it_is_no_grade(tmp_path):
    from autograder import sample_class
    from workflow_fakes import make_course

    root = make_course(tmp_path, (LESSON,))
    release = nbformat.read(REPO / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    for student, cells in _answers().items():
        target = root / "submitted" / student / LESSON / f"{LESSON}.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(sample_class.fill(release, cells), str(target))
    (root / "submitted" / "blank" / LESSON).mkdir(parents=True)  # a stub hand-in: no code to compare
    nbformat.write(release, str(root / "submitted" / "blank" / LESSON / f"{LESSON}.ipynb"))
    html, (found,) = copying.page(root, [LESSON])
    assert {frozenset((p.a, p.b)) for p in found.flagged} == {frozenset(pair) for pair in PLANTED.items()}
    assert len(found.pairs) == len(_answers()) * (len(_answers()) - 1) // 2 == 36, "the stub hand-in is left out"
    assert "never a grade" in html and "nothing is\ndeducted" in html
    assert html.count("<div class='sides'>") == 4 and html.count("<mark>") > 8
    assert "data:image/png;base64," in html and not re.search(r"(?:src|href)=['\"](?!data:)", html)
    assert "0 &lt;= r &lt; H" in html and "0 <= r" not in html, "code is escaped, then marked"


def test_the_sample_class_flags_its_planted_copies_and_no_honest_student(tmp_path):
    """A small sample class of lessons 2 and 3, generated (not graded): each honest student hands in their own
    honest versions of the cells in their own hand (sample_class.Hands); the planted copies (lesson 2: renamed and
    re-commented; lesson 3: reordered, one cell another version) are flagged, the honest look-alike (lesson 2)
    and every honest pair are not."""
    import shutil

    from autograder import sample_class
    from workflow_fakes import make_course

    lessons = ("lesson2_loops", "lesson3_numpy")
    root = make_course(tmp_path, lessons)
    folder, manifest = sample_class.generate(tmp_path / "lms", REPO, students=16, seed=7, lessons=list(lessons),
                                             as_zip=False)
    for entry in manifest:
        if entry.variant not in ("not a notebook", "superseded"):
            target = root / "submitted" / entry.student / entry.lesson / f"{entry.lesson}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(folder / entry.file, target)
    planted = {(m.lesson, m.student): (m.plant, m.plant_of) for m in manifest if m.plant}
    assert sorted(how for how, _ in planted.values()) == ["lookalike", "renamed", "reordered"], planted
    for lesson in lessons:
        found = copying.lesson_pairs(root, lesson)
        flagged = {frozenset((p.a, p.b)) for p in found.flagged}
        scores = {frozenset((p.a, p.b)): p.score for p in found.pairs}
        plants = {frozenset((student, of)): how for (where, student), (how, of) in planted.items() if where == lesson}
        print(f"\n{lesson}: line at {found.threshold:.2f}; " + "; ".join(
            f"{how} {' and '.join(sorted(pair))}: {scores[pair]:.2f}" for pair, how in plants.items()))
        honest = [p for p in found.pairs if frozenset((p.a, p.b)) not in plants]
        print(f"  best honest pair {honest[0].a} and {honest[0].b}: {honest[0].score:.2f} of {len(honest)}")
        assert flagged == {pair for pair, how in plants.items() if how != "lookalike"}, (
            lesson, {tuple(sorted(pair)): round(scores[pair], 2) for pair in flagged | set(plants)})
        assert honest[0].score < found.threshold


def test_the_sample_classs_honest_versions_are_independent_work():
    """Every two honest versions of one solution cell (honest/<lesson>/ and the reference) score under the
    line's ceiling as a pair on that cell alone: the pool holds independent solutions, not the reference's
    near-copies (the grading corpus's one-line variations of it score 0.88-0.96 and are left out)."""
    from autograder import coursedir, sample_class

    worst = {}
    for lesson in coursedir.lessons(REPO, released=True):
        release = copying._solution_cells(REPO / "release" / lesson / f"{lesson}.ipynb")
        reference = solution_cells(REPO / "source" / lesson / f"{lesson}.ipynb")
        for grade_id, versions in sample_class.honest_versions(REPO, lesson, reference).items():
            if len(versions) > 1:
                top = copying.compare(dict(versions), release.get(grade_id, ""))[0]
                worst[f"{lesson}/{grade_id}"] = (round(top.score, 2), top.a, top.b)
    assert len(worst) >= 15, worst
    assert max(score for score, _, _ in worst.values()) < copying.CEILING, worst


def test_scores_are_the_same_in_every_process():
    """copydetect hashes k-grams with Python's per-process salted ``hash``; the course's comparison gives the same
    scores whatever PYTHONHASHSEED is (with copydetect's own hash, seeds 1 and 2 gave other scores here)."""
    import os
    import subprocess
    import sys

    script = ("import json, pathlib\nfrom autograder.results import copying\n"
              "codes = {p.stem: p.read_text() for p in sorted(pathlib.Path('honest/lesson2_loops').glob('*.py'))}\n"
              "print(json.dumps([(p.a, p.b, round(p.score, 9)) for p in copying.compare(codes)]))")
    runs = [subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, PYTHONHASHSEED=seed)) for seed in ("1", "2")]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    assert runs[0].stdout == runs[1].stdout and len(runs[0].stdout) > 20
