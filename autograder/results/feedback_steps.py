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
"""

from __future__ import annotations

import re
from pathlib import Path

from latex2mathml.converter import convert
from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import ClearHiddenTests
from traitlets import Bool, List

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
