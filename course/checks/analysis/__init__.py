"""The source analysis of the checks: the text they read (:mod:`.text`), the resolver (:mod:`.resolver`), the
lists it reads (:mod:`.lists`), :func:`~course.checks.check_avoids` (:mod:`.avoids`) and the loop reader
(:mod:`.loops`)."""
