"""Step 1 of the flow, ``source/`` → ``release/``: each lesson's student notebook built by nbgrader and
validated (``build``), the solution regions turned into stubs (``stubs``), what must never reach a
student checked (``leaks``), and the student bundle (``bundle``)."""

__all__ = ["build", "bundle", "leaks", "stubs"]  # the modules other packages may use
