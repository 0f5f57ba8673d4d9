"""Instructor tools: build and validate the release, grade submissions in a sandbox, report.

Never given to students (they get ``release/`` and ``course/``). It holds no solution: the reference
solutions are read from ``source/``, and the grading corpus is test data (``tests/data/corpus``).
"""

import sys

# jsonschema, which nbformat imports, adds checks of the "iri" formats where the package rfc3987_syntax imports,
# and that package builds its Lark grammars as it is imported: a second of every process that reads a notebook.
# Nothing here checks formats (nbformat validates without a format checker), so every process that imports this
# package before nbformat (the course's commands, their workers, and the nbgrader commands they start:
# coursedir.run_nbgrader) marks it missing, which jsonschema allows (it imports it under suppress(ImportError)).
# A process that has imported it already (a plain `nbgrader` command, which reads nbgrader_config.py late) keeps it.
sys.modules.setdefault("rfc3987_syntax", None)
