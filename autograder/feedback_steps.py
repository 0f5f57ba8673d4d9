"""The course's steps of ``nbgrader generate_feedback`` (listed in ``nbgrader_config.py``).

* :class:`HiddenTestsCleared`: nbgrader's ``ClearHiddenTests``, without the warning nbgrader prints when
  it runs under the HTML exporter ("Config option `display_data_priority` not recognized").
* :class:`MathToMathML`: math that renders offline: TeX in markdown cells becomes MathML, which
  browsers draw themselves (no MathJax, nothing loaded from the network). ``$...$`` becomes inline
  MathML, ``$$...$$`` a display block; code spans and fenced code are left alone, and a formula that
  latex2mathml cannot read stays as its TeX text.
"""

from __future__ import annotations

import re

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
