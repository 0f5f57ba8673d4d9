"""Instructor tools: build and validate the release, grade submissions in a sandbox, report.

Never given to students: the grading corpus here holds correct solutions.
"""
