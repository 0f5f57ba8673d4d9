"""Step 4 of the flow, the gradebook and ``records/`` → what people read: feedback pages (``feedback``,
``feedback_steps``), the grades as CSV (``export``), the class report (``report``), their HTML
``templates``; ``tags``, the start tags of a page, read without a parse tree."""

__all__ = ["copying", "export", "feedback", "feedback_steps", "items", "lms", "report", "tags", "templates"]  # what other packages may use
