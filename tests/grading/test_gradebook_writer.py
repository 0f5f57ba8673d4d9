"""Phase 2 beside phase 1 (:class:`autograder.grading.gradebook.LessonWriter`, issue 56): while other processes
grade, each lesson goes into the gradebook as soon as its last record is in, in one thread of the grader (the
gradebook's one writer); without them, every lesson is written when phase 1 ends. nbgrader's part
(``write_gradebook``) is replaced by a recorder here: ``test_untrusted`` and every batch test run the real one."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from autograder.grading import gradebook


class Recorder:
    """Stands in for ``write_gradebook``: remembers each call's lesson(s), thread and what had been added by then."""

    def __init__(self, writer_box: list):
        self.calls: list[tuple[list[str], str, int]] = []
        self.box = writer_box
        self.first_written = threading.Event()

    def __call__(self, root, graded, progress=False, seed=None):
        added = sum(len(pairs) for pairs in self.box[0].graded.values())
        self.calls.append((sorted({s.lesson.name for s, _ in graded}), threading.current_thread().name, added))
        self.first_written.set()
        return ["problem of b"] if any(s.lesson.name == "b" for s, _ in graded) else []


def _submission(lesson: str, student: str):
    return SimpleNamespace(lesson=SimpleNamespace(name=lesson), student=student)


@pytest.fixture
def work():
    return [_submission("a", "s1"), _submission("a", "s2"), _submission("b", "s1"), _submission("c", "s1")]


def test_in_the_background_a_lesson_is_written_as_soon_as_its_last_record_is_in(monkeypatch, tmp_path, work):
    box: list = []
    recorder = Recorder(box)
    monkeypatch.setattr(gradebook, "write_gradebook", recorder)
    with gradebook.LessonWriter(tmp_path, work, seed=1, background=True) as writer:
        box.append(writer)
        writer.add(work[0], "record a1")
        assert not recorder.calls, "lesson a has a record missing"
        writer.add(work[1], "record a2")
        assert recorder.first_written.wait(10), "lesson a was not written while the others were still grading"
        writer.add(work[2], "record b1")
    assert [call[0] for call in recorder.calls] == [["a"], ["b"]], "c never got its record: it is not written"
    assert all(call[1] != threading.main_thread().name for call in recorder.calls), "written in the writer's thread"
    assert recorder.calls[0][2] == 2, "lesson a went in before lesson b's record came"
    assert writer.problems == ["problem of b"]


def test_without_other_processes_every_complete_lesson_is_written_at_the_end_in_one_call(monkeypatch, tmp_path, work):
    box: list = []
    recorder = Recorder(box)
    monkeypatch.setattr(gradebook, "write_gradebook", recorder)
    with gradebook.LessonWriter(tmp_path, work, background=False) as writer:
        box.append(writer)
        for submission in work[:3]:
            writer.add(submission, "record")
        assert not recorder.calls
    assert recorder.calls == [(["a", "b"], threading.main_thread().name, 3)]
    assert writer.problems == ["problem of b"]


@pytest.mark.parametrize("background", [True, False])
def test_an_error_in_phase_1_writes_nothing_more(monkeypatch, tmp_path, work, background):
    box: list = []
    recorder = Recorder(box)
    monkeypatch.setattr(gradebook, "write_gradebook", recorder)
    with pytest.raises(RuntimeError, match="the pool broke"):
        with gradebook.LessonWriter(tmp_path, work, background=background) as writer:
            box.append(writer)
            writer.add(work[2], "record b1")
            if background:
                assert recorder.first_written.wait(10)
            raise RuntimeError("the pool broke")
    assert [call[0] for call in recorder.calls] == ([["b"]] if background else [])
