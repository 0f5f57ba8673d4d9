"""nbgrader's ``ClearSolutions`` with one addition: *optional* solution regions.

A region whose begin line carries the marker, ``### BEGIN SOLUTION (optional)``, becomes a comment in the
student's notebook, not the usual ``raise NotImplementedError``: a place for helpers of the student's
own at the top level of a cell, which must not stop *Run All* when the student needs none.
"""

from __future__ import annotations

import re

from nbgrader.preprocessors import ClearSolutions
from traitlets import Unicode


class ClearSolutionsWithOptional(ClearSolutions):
    optional_marker = Unicode("(optional)", help="Text on a begin-solution line that makes the region "
                              "optional").tag(config=True)
    optional_stub = Unicode("# YOUR CODE HERE (optional: leave this empty if you need no helpers)",
                            help="What an optional region becomes in the release").tag(config=True)

    def _replace_solution_region(self, cell, language: str) -> bool:
        replaced = False
        if cell.cell_type == "code" and self.optional_marker in cell.source:
            kept, skipping = [], False
            for line in cell.source.split("\n"):
                if self.begin_solution_delimeter in line and self.optional_marker in line:
                    kept.append(re.match(r"\s*", line).group(0) + self.optional_stub)
                    skipping = replaced = True
                elif skipping and self.end_solution_delimeter in line:
                    skipping = False
                elif not skipping:
                    kept.append(line)
            if skipping:
                raise RuntimeError("no end solution statement found after an optional region")
            cell.source = "\n".join(kept)
        return super()._replace_solution_region(cell, language) or replaced
