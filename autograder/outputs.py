"""What a graded test cell shows for its verdict (a record's test): its printed text for a pass, an ``error``
output carrying only the failure message for a fail, no hidden-test line, at most ``output_chars`` characters,
and without the expected value a check names until the instructor reveals it. Written into the graded
notebook by the trusted grader's nbgrader step and revealed again by ``feedback``.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode

from autograder.lessontext import redact

#: Characters of a cell's output kept (its stdout and stderr, a failure message): ``c.SandboxPolicy.output_chars``'
#: default (:class:`autograder.grading.policy.SandboxPolicy`).
OUTPUT_CHARS = 20_000


def output_chars(config) -> int:
    """``c.SandboxPolicy.output_chars`` of ``config`` (nbgrader's loaded configuration), as the grader's policy
    reads it: :data:`OUTPUT_CHARS` unless set; a ``ValueError`` unless a positive integer."""
    value = config.SandboxPolicy.get("output_chars", OUTPUT_CHARS) if "SandboxPolicy" in config else OUTPUT_CHARS
    value = int(value) if isinstance(value, str) else value  # from a command line
    if type(value) is not int or value <= 0:
        raise ValueError(f"SandboxPolicy.output_chars must be positive, got {value!r}")
    return value


def verdict_output(verdict: dict, header: str, hidden: set[str], output_chars: int,
                   reveal: bool = False) -> NotebookNode:
    """The output a test cell shows for ``verdict`` (a record's test): its printed text for a pass, an
    ``error`` carrying only the failure message for a fail, any quoted hidden-test line redacted, at most
    ``output_chars``. A message that names an expected value is shown without it (its ``withheld`` form,
    :class:`course.checks.WrongValue`) unless ``reveal``."""
    if verdict["passed"]:
        text = redact(verdict.get("output") or "passed\n", hidden)
        return NotebookNode(output_type="stream", name="stdout", text=text[:output_chars])
    shown = verdict.get("message") if reveal or not verdict.get("withheld") else verdict["withheld"]
    message = redact(str(shown or "failed"), hidden)[:output_chars]
    name, _, value = message.partition(": ")
    if not (name.isidentifier() and value):
        name, value = "AssertionError", message
    if verdict.get("fault"):
        name = {"timeout": "TimeoutError", "memory": "MemoryError"}.get(verdict["fault"], "StudentCrash")
    elif verdict.get("review") is not None:
        name = "NeedsReview"
    elif name == "NeedsReview":  # a student's exception of that name: not the grader's mark
        name = "StudentError"
    return NotebookNode(output_type="error", ename=name, evalue=header + value, traceback=[f"{name}: {header}{value}"])


def reveal_expected(nb: NotebookNode, record, hidden: set[str], output_chars: int) -> list[str]:
    """Show in ``nb`` (a graded notebook of ``record``'s submission) the expected values its test cells'
    messages withhold: each failed test cell whose output is its verdict's withheld message gets the full
    one. A cell showing anything else (a notebook graded by another run) is left as it is. Returns the
    grade_ids revealed."""
    tests = {t["grade_id"]: t for t in record.tests}
    header = "" if record.status == "ok" else f"[{record.status}] "
    revealed = []
    for cell in nb.cells:
        verdict = tests.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
        if cell.cell_type != "code" or verdict is None or verdict["passed"] or not verdict.get("withheld"):
            continue
        withheld = verdict_output(verdict, header, hidden, output_chars)
        if [(o.get("ename"), o.get("evalue")) for o in cell.get("outputs", [])] == [(withheld.ename, withheld.evalue)]:
            cell.outputs = [verdict_output(verdict, header, hidden, output_chars, reveal=True)]
            revealed.append(verdict["grade_id"])
    return revealed
