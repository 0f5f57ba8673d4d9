"""A lesson is built and validated again only when something its build reads has changed since a build
that validated (``autograder.release.build.build_key``, recorded in ``.validated-release.json``)."""

from __future__ import annotations

import nbformat
import pytest

from autograder import coursedir
from autograder.release import build as release
from shared import REPO

LESSON = "lesson1_by_hand"


@pytest.fixture
def course(tmp_path):
    return coursedir.copy_course(REPO, tmp_path / "course", [LESSON])


class Built(Exception):
    """Raised by the stand-in for nbgrader's build: the lesson was going to be built."""


def refuse_to_build(monkeypatch):
    def generate(lesson, root=REPO):
        raise Built(lesson)

    monkeypatch.setattr(release, "generate", generate)


def test_the_key_follows_every_input_of_the_build(course):
    key = release.build_key(LESSON, course)
    assert release.build_key(LESSON, course) == key, "the same files give the same key"
    for path in (coursedir.notebook(course, "source", LESSON), coursedir.notebook(course, "release", LESSON),
                 course / "nbgrader_config.py"):
        original = path.read_bytes()
        path.write_bytes(original + b" ")
        assert release.build_key(LESSON, course) != key, f"a change to {path.name} is not seen"
        path.write_bytes(original)
    assert release.build_key(LESSON, course) == key


def test_an_unchanged_lesson_is_not_built_again_and_a_changed_one_is(course, monkeypatch):
    refuse_to_build(monkeypatch)
    with pytest.raises(Built):  # no record yet: it is built
        release.build_and_check(LESSON, course)
    release.record_validated(LESSON, course)
    summary = release.build_and_check(LESSON, course)  # the record matches: nothing is built
    assert summary.unchanged and summary.solutions_pass and summary.stubs_fail and not summary.problems
    graded = [c.metadata["nbgrader"] for c in nbformat.read(coursedir.notebook(course, "source", LESSON), 4).cells
              if c.metadata.get("nbgrader", {}).get("grade")]
    assert (summary.graded_cells, summary.points) == (len(graded), sum(g["points"] for g in graded))
    with pytest.raises(Built):  # --force
        release.build_and_check(LESSON, course, force=True)
    source = coursedir.notebook(course, "source", LESSON)
    source.write_text(source.read_text().replace("Average pooling", "Average  pooling", 1))
    with pytest.raises(Built):  # the source changed since the validated build
        release.build_and_check(LESSON, course)


def test_a_broken_record_means_build_again(course, monkeypatch):
    refuse_to_build(monkeypatch)
    (course / release.VALIDATED).write_text("{not json")
    assert release.validated_builds(course) == {}
    with pytest.raises(Built):
        release.build_and_check(LESSON, course)
