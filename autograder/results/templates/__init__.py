"""The HTML pages the instructor's tools write (the class report, each student's feedback index), as Jinja2
templates with autoescaping on: every value is escaped unless a template marks it safe."""

from __future__ import annotations

import functools

import jinja2


@functools.lru_cache(maxsize=None)
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("autograder.results", "templates"), autoescape=True,
                              trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True)


def render(name: str, **values) -> str:
    """The template ``name`` (e.g. ``report.html.j2``) filled with ``values``."""
    return environment().get_template(name).render(**values)
