"""Instructor tools: build and validate the release, grade submissions in a sandbox, report.

Never given to students (they get ``release/`` and ``course/``). It holds no solution: the reference
solutions are read from ``source/``, and the grading corpus is test data (``tests/data/corpus``).
"""
