"""The course's steps of ``nbgrader generate_feedback`` (listed in ``nbgrader_config.py``).

* :class:`HiddenTestsCleared`: nbgrader's ``ClearHiddenTests``, without the warning nbgrader prints when
  it runs under the HTML exporter ("Config option `display_data_priority` not recognized").
* :class:`MathToMathML`: math that renders offline: TeX in markdown cells becomes MathML, which
  browsers draw themselves (no MathJax, nothing loaded from the network). ``$...$`` becomes inline
  MathML, ``$$...$$`` a display block; code spans and fenced code are left alone, and a formula that
  latex2mathml cannot read stays as its TeX text.
* :class:`ExpectedAnswers`: the expected values that failed checks name (a knowledge check's key, a
  prediction, a value worked out by hand) stay withheld, as the graded notebook has them, until the
  instructor releases them with ``c.ExpectedAnswers.reveal = True``; then each is shown again from the
  submission's record (``records/<lesson>/<student>.json``), without regrading.
* :class:`FeedbackPage`: the exporter that writes the page, from the template ``feedback-rows``.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from jinja2 import pass_context
from latex2mathml.converter import convert
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import ClearHiddenTests
from traitlets import Bool, List

from autograder.results.tags import start_tags

#: ``$$display$$`` or ``$inline$`` (no space just inside the dollars, so "$5 and $6" is not math).
MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|\$(?!\s)(?P<inline>[^$\n]+?)(?<!\s)\$", re.S)
#: Fenced code blocks and code spans, which keep their dollars.
CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)


def _formula(match: re.Match) -> str:
    display = match.group("display") is not None
    tex = match.group("display") if display else match.group("inline")
    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - TeX it cannot read stays readable as TeX
        return match.group(0)


def to_mathml(markdown: str) -> str:
    """``markdown`` with every formula outside code written as MathML."""
    return "".join(part if CODE.fullmatch(part) else MATH.sub(_formula, part) for part in CODE.split(markdown))


class HiddenTestsCleared(ClearHiddenTests):
    """nbgrader's ``ClearHiddenTests``; its ``display_data_priority`` (set by the HTML exporter for every
    step) made configurable, as nbgrader's own ``GetGrades`` has it, so the setting applies silently."""

    display_data_priority = List(ClearHiddenTests.display_data_priority.default_value).tag(config=True)


class MathToMathML(Preprocessor):
    """Markdown cells' TeX as MathML (see the module docstring)."""

    enabled = Bool(True, help="on wherever it is listed (nbconvert's preprocessors are off by default)").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            cell.source = to_mathml(cell.source)
        return cell, resources


class ExpectedAnswers(Preprocessor):
    """Expected values in failure messages: withheld (the default; the graded notebook holds the withheld
    form) or, with ``reveal``, shown from the record the trusted grader kept
    (:func:`autograder.outputs.reveal_expected`)."""

    enabled = Bool(True, help="on wherever it is listed (nbconvert's preprocessors are off by default)").tag(config=True)
    reveal = Bool(False, help="Show the expected values that failed checks name (knowledge-check keys, predictions, "
                  "values worked out by hand) in feedback. Off while students may resubmit; turn it on and "
                  "regenerate feedback to release them (no regrading)").tag(config=True)

    def preprocess(self, nb, resources):
        if not self.reveal:
            return nb, resources
        from autograder.lessontext import hidden_test_lines
        from autograder.outputs import output_chars, reveal_expected
        from autograder.records import load_record

        root = Path(self.config.CourseDirectory.get("root") or ".")
        info = resources["nbgrader"]
        record = load_record(root, info["assignment"], info["student"])
        if record is None:
            self.log.warning("no record of %s / %s in %s: its expected answers stay withheld (grade it with "
                             "avgpool-course grade)", info["student"], info["assignment"], root / "records")
            return nb, resources
        reveal_expected(nb, record, hidden_test_lines(root, info["assignment"]), output_chars(self.config))
        return nb, resources


def template_basedirs() -> list[str]:
    """Where nbconvert finds the page's template ``feedback-rows``: the course's templates, then nbgrader's (its
    ``feedback``, which ``feedback-rows`` extends)."""
    import nbgrader

    nbgrader_templates = Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates"
    return [str(Path(__file__).resolve().parent / "templates"), str(nbgrader_templates)]


#: What nbconvert's ``HTMLExporter`` writes as the alternative text of an image that has none.
NO_ALT = "No description has been provided for this image"


def with_alt_text(page: str) -> tuple[str, int]:
    """``page`` (HTML) with ``alt="`` :data:`NO_ALT` ``"`` on every ``<img>`` that has no ``alt``, as nbconvert's
    ``HTMLExporter`` gives it; and how many it gave one."""
    parts, done = [], 0
    for match, _, attributes in start_tags(page, ["img"]):
        if "alt" not in attributes:
            parts += [page[done:match.start() + 4], f' alt="{NO_ALT}"']
            done = match.start() + 4
    return "".join(parts) + page[done:], len(parts) // 2


class FeedbackPage(HTMLExporter):
    """The exporter of ``generate_feedback`` alone (``c.GenerateFeedback.exporter_class``): nbgrader's feedback
    page headed by :class:`TestRows`' list, from the template ``feedback-rows``. Configured under its own name, so
    every other page (formgrader's view of a submission uses a plain ``HTMLExporter`` with its template
    ``formgrade``) keeps its own template.

    The page is the template's text as rendered: ``HTMLExporter`` parses each page again with BeautifulSoup
    (pure Python: two fifths of ``generate_feedback``'s time) and writes the tree back, only to give every ``<img>``
    an alt text (:func:`with_alt_text` does that) and a ``tabindex`` to the cells of a JupyterLab page
    (``.jp-Notebook``), which this page, of the classic template, is not."""

    @property
    def default_config(self):
        config = super().default_config
        config.FeedbackPage.template_name = "feedback-rows"
        config.FeedbackPage.template_file = "rows.html.j2"
        config.FeedbackPage.extra_template_basedirs = template_basedirs()
        return config

    @functools.cached_property
    def _highlighted(self):
        """``(lexer, source, language, magics language) -> HTML``: nbconvert's ``Highlight2HTML``, each computed once
        (the latest 2,048 kept): the cells every student has (the release's tests and given code) are highlighted
        once per process, not once per page (pygments: two fifths of a page's time)."""
        @functools.lru_cache(maxsize=2048)
        def highlighted(lexer, source, language, magics):
            metadata = {"magics_language": magics} if magics is not None else None
            return Highlight2HTML(pygments_lexer=lexer, parent=self)(source, language, metadata)

        return highlighted

    @functools.cached_property
    def _markdown(self):
        """``source -> HTML``: ``HTMLExporter.markdown2html`` of a cell without attachments, each computed once (the
        latest 2,048 kept): the lesson's text, the same on every page, is rendered once per process."""
        return functools.lru_cache(maxsize=2048)(lambda source: HTMLExporter.markdown2html(self, {}, source))

    @pass_context
    def markdown2html(self, context, source):
        """``HTMLExporter.markdown2html``; where neither the cell's attachments nor the page's folder (``embed_images``)
        can change the HTML, once per source (:attr:`_markdown`)."""
        if self.embed_images or context.get("cell", {}).get("attachments"):
            return super().markdown2html(context, source)
        return self._markdown(source)

    def from_notebook_node(self, nb, resources=None, **kw):
        """``HTMLExporter.from_notebook_node`` (nbconvert 7) without its second parse, each source highlighted once."""
        info = nb.metadata.get("language_info", {})
        lexer = info.get("pygments_lexer", info.get("name"))

        def highlight(source, language=None, metadata=None):
            return self._highlighted(lexer, source, language, (metadata or {}).get("magics_language"))

        self.register_filter("highlight_code", self.filters.get("highlight_code", highlight))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata,
                                                                        parent=self, resources=resources))
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        page, missing = with_alt_text(page)
        if missing:
            self.log.warning("Alternative text is missing on %s image(s).", missing)
        return page, resources


def exercise_of(markdown: str) -> str | None:
    """The last heading of a markdown cell, without its ``#``, backticks and points (``"Exercise 2.1 — the
    forward pass with loops"``), or None."""
    headings = [line.lstrip("#").strip() for line in markdown.splitlines() if re.match(r"#{1,6}\s", line)]
    if not headings:
        return None
    return re.sub(r"\s*\([^()]*\bpoints?\b[^()]*\)\s*$", "", headings[-1].replace("`", "")).strip()


def checks_of(source: str, grade_id: str) -> str:
    """What a test cell checks, in one line: its first line when that is a comment (``# The lecture's
    worked example ...``; " …" where the comment goes on), "your answer q2" for a knowledge check or prediction (``feedback = check_...(q2, ...)``),
    else its ``grade_id`` in words."""
    lines = source.lstrip().split("\n")
    first = lines[0].strip()
    if first.startswith("#") and not first.startswith("###"):
        said = first.lstrip("#").strip()
        more = len(lines) > 1 and lines[1].startswith("#") and not lines[1].startswith("###")
        return said.rstrip(",;:") + " …" if more or said[-1:] in ",;:" else said
    try:
        statement = ast.parse(first).body[0]
        if [t.id for t in statement.targets] == ["feedback"] and isinstance(statement.value.args[0], ast.Name):
            return f"your answer {statement.value.args[0].id}"
    except (SyntaxError, IndexError, AttributeError):
        pass
    return grade_id.replace("_", " ")


class TestRows(Preprocessor):
    """The page's list of graded test cells (see the module docstring); after nbgrader's ``GetGrades`` (the
    scores) and :class:`HiddenTestsCleared` (what a row quotes is visible text)."""

    enabled = Bool(True, help="on wherever it is listed (nbconvert's preprocessors are off by default)").tag(config=True)

    def preprocess(self, nb, resources):
        rows, exercise = [], ""
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                exercise = exercise_of(cell.source) or exercise
            grading = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or not grading.get("grade") or grading.get("solution"):
                continue
            score, points = grading.get("score"), float(grading.get("points") or 0)
            rows.append({"grade_id": grading["grade_id"], "exercise": exercise, "points": points,
                         "checks": checks_of(cell.source, grading["grade_id"]),
                         "score": None if score is None else float(score)})
        rows.sort(key=lambda row: row["score"] is not None and row["score"] >= row["points"])  # lost first
        resources["test_rows"] = rows
        return nb, resources
