"""Per-student feedback pages, rendered from the trusted grader's records (never from hidden tests).

``feedback/<student>/<lesson>/<lesson>.html`` (nbgrader's layout, so ``nbgrader release_feedback``
can hand them out) and ``feedback/<student>/index.html``. Each page shows the score, the submission's
status and reason, every graded cell's verdict and message, the *visible* part of each test (taken
from ``release/``, which students already have) and the student's own answers. nbgrader's own
``generate_feedback`` is not used: it renders the autograded notebook, whose test cells hold the
hidden tests. Any line of a hidden test quoted in a message is redacted, and every page is checked
for hidden-test text before it is written.
"""

from __future__ import annotations

import html
from pathlib import Path

import nbformat

from autograder import coursedir, leaks
from autograder import records as recs

CSS = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem} table{border-collapse:collapse;width:100%} td,th{border-bottom:1px solid #ddd;
padding:.3rem .5rem;text-align:left;vertical-align:top} .pass{color:#176a2b;font-weight:bold}
.fail{color:#a11;font-weight:bold} pre{background:#f6f6f6;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
.status{padding:.5rem;background:#fff4e0;border-left:4px solid #e90} small{color:#666}"""


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{CSS}</style></head><body>{body}</body></html>\n")


def _cells(notebook: Path) -> list:
    try:
        return nbformat.read(notebook, as_version=4).cells
    except Exception:  # an unreadable submission: the record already says why
        return []


def render(record: dict, root: Path, hidden: set[str]) -> str:
    """The HTML page for one record."""
    student, lesson = record["student"], record["lesson"]
    release_cells = _cells(next((root / "release" / lesson).glob("*.ipynb")))
    visible = {c.metadata["nbgrader"]["grade_id"]: c.source for c in release_cells
               if c.metadata.get("nbgrader", {}).get("grade")}
    order = [c.metadata["nbgrader"]["grade_id"] for c in release_cells if c.metadata.get("nbgrader", {}).get("grade")]
    submitted = root / "submitted" / student / lesson
    answers = {}
    for notebook in sorted(submitted.glob("*.ipynb")):
        for cell in _cells(notebook):
            meta = cell.metadata.get("nbgrader", {}) if isinstance(cell.metadata, dict) else {}
            if meta.get("solution") and meta.get("grade_id"):
                answers[meta["grade_id"]] = cell.source
    tests = sorted(record["tests"], key=lambda t: order.index(t["grade_id"]) if t["grade_id"] in order else 999)
    score, max_score = record.get("score", 0) or 0, record.get("max_score", 0) or 0
    parts = [f"<h1>{html.escape(lesson)}: feedback for {html.escape(student)}</h1>",
             f"<p><b>Score: {score:g} / {max_score:g}</b></p>"]
    if record["status"] != "ok":
        parts.append(f"<p class='status'>Status: <b>{html.escape(record['status'])}</b>. "
                     f"{html.escape(leaks.redact(str(record.get('reason', '')), hidden))}</p>")
    rows = []
    for test in tests:
        verdict = "<span class='pass'>passed</span>" if test.get("passed") else "<span class='fail'>failed</span>"
        message = leaks.redact(str(test.get("message") or ""), hidden)
        code = visible.get(test["grade_id"], "")
        rows.append(
            f"<tr><td>{html.escape(test['grade_id'])}</td><td>{verdict}</td>"
            f"<td>{float(test.get('points', 0) or 0):g} / {float(test.get('max_points', 0) or 0):g}</td>"
            f"<td>{'<pre>' + html.escape(message) + '</pre>' if message else ''}"
            f"<details><summary>visible test</summary><pre>{html.escape(code)}</pre></details></td></tr>")
    parts.append("<h2>Graded cells</h2><table><tr><th>cell</th><th>verdict</th><th>points</th>"
                 f"<th>message</th></tr>{''.join(rows)}</table>")
    parts.append("<p><small>Hidden tests also ran; their code is not shown. A failed cell's message says "
                 "what was wrong.</small></p>")
    if answers:
        parts.append("<h2>Your answers</h2>")
        parts += [f"<details><summary>{html.escape(gid)}</summary><pre>{html.escape(leaks.redact(src, hidden))}</pre></details>"
                  for gid, src in answers.items()]
    return _page(f"{lesson} feedback: {student}", "".join(parts))


def hidden_test_lines(root: Path, lesson: str) -> set[str]:
    """Hidden-test lines of ``lesson``'s source notebook that students cannot already read in the
    release (a line written inside a visible one is public); empty when ``source/`` is absent."""
    notebooks = sorted((root / "source" / lesson).glob("*.ipynb"))
    if not notebooks:
        return set()
    public = "\n".join(cell.source for cell in _cells(next((root / "release" / lesson).glob("*.ipynb"))))
    return {line for line in leaks.secret_lines(notebooks[0], ("HIDDEN TESTS",)) if line not in public}


def write_feedback(root: Path, lessons: list[str] | None = None, students: list[str] | None = None) -> list[Path]:
    """Write the feedback pages of every graded submission; returns the pages written."""
    root = Path(root)
    chosen = coursedir.check_lessons(lessons, root)
    coursedir.check_gradebook(root)
    records = [r for r in recs.load(root) if r["lesson"] in chosen and (not students or r["student"] in students)]
    if not records:
        raise coursedir.CourseError(f"no graded submissions in {root / 'records'}: grade them first with "
                                    "`avgpool-course grade`")
    hidden = {lesson: hidden_test_lines(root, lesson) for lesson in chosen}
    written, by_student = [], {}
    for record in records:
        page = render(record, root, hidden[record["lesson"]])
        quoted = [line for line in hidden[record["lesson"]] if html.escape(line) in page or line in page]
        if quoted:
            raise RuntimeError(f"feedback for {record['student']}/{record['lesson']} would quote hidden tests: "
                               f"{quoted[:2]}")
        path = root / "feedback" / record["student"] / record["lesson"] / f"{record['lesson']}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page)
        written.append(path)
        by_student.setdefault(record["student"], []).append(record)
    for student, items in by_student.items():
        rows = "".join(f"<tr><td><a href='{html.escape(r['lesson'])}/{html.escape(r['lesson'])}.html'>"
                       f"{html.escape(r['lesson'])}</a></td><td>{(r.get('score') or 0):g} / "
                       f"{(r.get('max_score') or 0):g}</td><td>{html.escape(r['status'])}</td></tr>"
                       for r in sorted(items, key=lambda r: r["lesson"]))
        (root / "feedback" / student / "index.html").write_text(
            _page(f"feedback: {student}", f"<h1>Feedback for {html.escape(student)}</h1><table><tr><th>lesson"
                  f"</th><th>score</th><th>status</th></tr>{rows}</table>"))
    return written
