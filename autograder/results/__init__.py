"""Step 4 of the flow, the gradebook and ``records/`` → what people read: feedback pages (``feedback``,
``feedback_steps``), the grades as CSV (``export``), the class report (``report``), their HTML
``templates``."""

__all__ = ["copying", "export", "feedback", "feedback_steps", "items", "lms", "report", "templates"]  # what other packages may use
