"""collect: LMS exports, named however the LMS names them, into submitted/<student>/<lesson>/."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import unicodedata
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
import pytest

from autograder import collect, coursedir, solutions
from autograder.collect import unpack, zip_collect
from autograder.coursedir import CourseError
from workflow_fakes import LESSON, REPO, make_course

LESSONS = ["lesson1_by_hand", "lesson2_loops", "lesson3_numpy", "lesson4_torch", "lesson5_gap"]


@pytest.mark.parametrize("path, student, lms_id, lesson", [
    ("alice_12345_lesson2_loops.ipynb", "alice", "12345", "lesson2_loops"),
    ("alice_LATE_12345_67890_lesson2_loops-1.ipynb", "alice", "12345", "lesson2_loops"),
    ("Bob Smith - lesson1_by_hand (2).ipynb", "bob_smith", None, "lesson1_by_hand"),
    ("lesson3_numpy/carol/anything.ipynb", "carol", None, "lesson3_numpy"),
    ("carol/lesson3_numpy/lesson3_numpy.ipynb", "carol", None, "lesson3_numpy"),
    ("submissions/dave_lesson4_torch_LATE.ipynb", "dave", None, "lesson4_torch"),
    ("lesson1_by_hand_erin_attempt_2025-03-02-14-05-00.ipynb", "erin", None, "lesson1_by_hand"),
    ("frank_lesson5.ipynb", "frank", None, "lesson5_gap"),
    ("Gina O'Neil_998_assignsubmission_file_/lesson2_loops.ipynb", "gina_o_neil", "998", "lesson2_loops"),
    ("Wei Zhang_6666_assignsubmission_file_lesson2_loops.ipynb", "wei_zhang", "6666", "lesson2_loops"),
    ("lesson2_loops/Wei Zhang_6666_assignsubmission_file_/my homework (final).ipynb", "wei_zhang", "6666",
     "lesson2_loops"),
    ("José Núñez_41_assignsubmission_file_/lesson1_by_hand.ipynb", "jose_nunez", "41", "lesson1_by_hand"),
    ("lesson1_by_hand/Zoë Ångström/notebook.ipynb", "zoe_angstrom", None, "lesson1_by_hand"),
    ("李明_8888_assignsubmission_file_/lesson1_by_hand.ipynb", "李明", "8888", "lesson1_by_hand"),
    ("Дмитрий Иванов_9_assignsubmission_file_/lesson1_by_hand.ipynb", "дмитрий_иванов", "9", "lesson1_by_hand"),
])
def test_lms_names_are_understood(path, student, lms_id, lesson):
    name, found, problem = collect.describe(PurePosixPath(path), LESSONS)
    assert (name.slug, name.lms_id, found, problem) == (student, lms_id, lesson, "")


@pytest.mark.parametrize("path, problem", [
    ("random.ipynb", "no lesson name"),
    ("lesson1_lesson2.ipynb", "names several lessons"),
    ("submissions/lesson2_loops.ipynb", "no student name"),
])
def test_names_that_cannot_be_placed_say_why(path, problem):
    name, _, reason = collect.describe(PurePosixPath(path), LESSONS)
    assert name is None and problem in reason


def test_names_keep_their_letters_and_say_them_as_written():
    """Latin letters lose their accents only (readable ASCII ids); other scripts are kept, never dropped."""
    assert collect.normalize("José Núñez") == "jose_nunez" and collect.normalize("Zoë Ångström") == "zoe_angstrom"
    assert collect.normalize("Łukasz Straße") == "lukasz_strasse"
    assert collect.normalize("Дмитрий Иванов") == "дмитрий_иванов", "й keeps its breve: it is not Latin"
    assert collect.normalize("李明") == "李明" and collect.normalize("नमस्ते") == "नमस्ते", "marks stay in the word"
    name = collect.name_in("José Núñez_41_assignsubmission_file_", LESSONS)
    assert name.display == "José Núñez" and name.first_last() == ("José", "Núñez")
    assert collect.name_in("李明_8888_assignsubmission_file_", LESSONS).first_last() == ("李明", "")
    for slug in ("jose_nunez", "李明", "дмитрий_иванов"):  # what nbgrader needs of a student id (a folder it globs)
        assert collect.check_student_id(slug, "test") == slug
    with pytest.raises(CourseError, match="cannot be an nbgrader student id"):
        collect.check_student_id("wei zhang*", "--roster r.csv, line 2, SIS Login ID")


def test_lesson_flag_places_a_file_that_names_no_lesson_and_only_those():
    renamed = PurePosixPath("Wei Zhang_6666_assignsubmission_file_/my homework (final).ipynb")
    assert "pass --lesson" in collect.describe(renamed, LESSONS)[2]
    name, lesson, problem = collect.describe(renamed, LESSONS, "lesson2_loops")
    assert (name.slug, name.lms_id, lesson, problem) == ("wei_zhang", "6666", "lesson2_loops", "")
    named = PurePosixPath("alice_12345_lesson1_by_hand.ipynb")
    assert collect.describe(named, LESSONS, "lesson2_loops")[1] == "lesson1_by_hand", "the name wins over --lesson"


def test_time_in_a_name():
    assert str(collect.parse_time("x_attempt_2025-03-02-14-05-00_y")) == "2025-03-02 14:05:00"
    assert collect.parse_time("alice_12345_lesson2_loops") is None
    assert collect.parse_time("wei_120250302_lesson1") is None, "a date is never read inside a longer number"


def _notebook(text: str = "x = 1") -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(text))
    return nbformat.writes(nb)


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def _zip(path: Path, entries: dict[str, tuple[str, tuple]]) -> Path:
    """A zip whose entries carry the times an LMS gave them: ``{name: (text, date_time)}``."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, (text, when) in entries.items():
            zf.writestr(zipfile.ZipInfo(name, when), text)
    return path


def _export(folder: Path) -> Path:
    """A messy LMS export: styles mixed, a re-upload, a PDF, a cut-short notebook, a nbgrader folder."""
    return _write(folder, {
        "alice_12345_lesson1_by_hand.ipynb": _notebook("a = 1"),
        "Bob Smith - lesson1_by_hand.ipynb": _notebook("old"),
        "Bob Smith - lesson1_by_hand (2).ipynb": _notebook("new"),
        "lesson1_by_hand/carol/anything.ipynb": _notebook(),
        "dave/lesson1_by_hand/lesson1_by_hand.ipynb": _notebook(),
        "dave/lesson1_by_hand/timestamp.txt": "2025-03-05 10:00:00.000000 UTC",
        "submissions/erin_lesson1_by_hand_LATE.ipynb": _notebook(),
        "submissions/frank_lesson1_by_hand.pdf": "%PDF-1.4",
        "submissions/gina_lesson1_by_hand.ipynb": _notebook()[:40],
        "notes.ipynb": _notebook(),
        ".ipynb_checkpoints/alice_lesson1_by_hand-checkpoint.ipynb": _notebook(),
    })


def test_collect_places_what_it_can_and_reports_the_rest(tmp_path):
    root = make_course(tmp_path)
    export = _export(tmp_path / "export")
    due = {LESSON: collect.parse_time("2025-03-04 23:59")}
    report = collect.collect(export, root, [LESSON], due=due)
    placed = {(p.student, p.lesson): p for p in report.placed}
    assert set(placed) == {(s, LESSON) for s in ("alice", "bob_smith", "carol", "dave", "erin")}
    for student in ("alice", "bob_smith", "carol", "dave", "erin"):
        assert (root / "submitted" / student / LESSON / f"{LESSON}.ipynb").is_file()
    bob = nbformat.read(root / "submitted" / "bob_smith" / LESSON / f"{LESSON}.ipynb", as_version=4)
    assert bob.cells[0].source == "new", "the re-upload (2) must win over the first upload"
    assert placed[("dave", LESSON)].late and placed[("erin", LESSON)].late and not placed[("alice", LESSON)].late
    assert placed[("alice", LESSON)].lms_id == "12345" and placed[("dave", LESSON)].time_from == "timestamp.txt"
    stamp = (root / "submitted" / "dave" / LESSON / "timestamp.txt").read_text()
    from nbgrader.utils import parse_utc
    assert str(parse_utc(stamp)).startswith("2025-03-05 10:00:00")
    reasons = {s.file: s.reason for s in report.skipped}
    assert "not a notebook file" in reasons["submissions/frank_lesson1_by_hand.pdf"]
    assert "not a Jupyter notebook" in reasons["submissions/gina_lesson1_by_hand.ipynb"]
    assert "File > Download" in reasons["submissions/gina_lesson1_by_hand.ipynb"]
    assert "no lesson name" in reasons["notes.ipynb"]
    assert "older copy" in reasons["Bob Smith - lesson1_by_hand.ipynb"]
    assert not any("checkpoint" in name for name in reasons), "checkpoints are not submissions"
    log = json.loads((root / "reports" / "collect.json").read_text())
    assert len(log["placed"]) == 5 and len(log["skipped"]) == 4


def test_collect_reads_a_zip_with_a_top_folder(tmp_path):
    root = make_course(tmp_path)
    export = _export(tmp_path / "export")
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in export.rglob("*"):
            if path.is_file():
                zf.write(path, f"CS101 export/{path.relative_to(export)}")
    report = collect.collect(archive, root, [LESSON])
    assert {p.student for p in report.placed} == {"alice", "bob_smith", "carol", "dave", "erin"}


# --- identities ------------------------------------------------------------------------------------

def test_same_name_students_stay_two(tmp_path):
    """Both sides: two LMS ids under one name are two students, each with their own notebook; two files
    of one name without ids are one student's re-uploads (the later wins)."""
    root = make_course(tmp_path)
    export = _write(tmp_path / "lms", {
        f"Wei Zhang_6666_assignsubmission_file_/{LESSON}.ipynb": _notebook("mine = 6666"),
        f"Wei Zhang_7777_assignsubmission_file_/{LESSON}.ipynb": _notebook("mine = 7777"),
        f"zhangwei_12345_111_{LESSON}.ipynb": _notebook("mine = 12345"),
        f"zhangwei_LATE_54321_222_{LESSON}.ipynb": _notebook("mine = 54321"),
        f"Ana Lima - {LESSON}.ipynb": _notebook("first"),
        f"Ana Lima - {LESSON} (2).ipynb": _notebook("second"),
    })
    report = collect.collect(export, root, [LESSON])
    placed = {p.student: p for p in report.placed}
    assert set(placed) == {"wei_zhang_6666", "wei_zhang_7777", "zhangwei_12345", "zhangwei_54321", "ana_lima"}
    for student, p in placed.items():
        if p.lms_id:
            nb = nbformat.read(root / "submitted" / student / LESSON / f"{LESSON}.ipynb", as_version=4)
            assert nb.cells[0].source == f"mine = {p.lms_id}" and student.endswith(p.lms_id)
    assert placed["zhangwei_54321"].late and not placed["zhangwei_12345"].late
    assert [s.reason for s in report.skipped] == [f"older copy of ana_lima/{LESSON}; kept Ana Lima - {LESSON} (2).ipynb"]


def test_a_file_without_an_id_joins_the_one_student_of_that_name_or_says_why_not(tmp_path):
    root = make_course(tmp_path)
    one = _write(tmp_path / "one", {f"alice_12345_{LESSON}.ipynb": _notebook(),
                                    "lesson2_loops/alice/notebook.ipynb": _notebook()})
    report = collect.collect(one, root, [LESSON, "lesson2_loops"])
    assert {(p.student, p.lms_id) for p in report.placed} == {("alice", "12345")}
    two = _write(tmp_path / "two", {f"Wei Zhang_6666_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
                                    f"Wei Zhang_7777_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
                                    f"Wei Zhang - {LESSON}.ipynb": _notebook()})
    report = collect.collect(two, root, [LESSON])
    assert {p.student for p in report.placed} == {"wei_zhang_6666", "wei_zhang_7777"}
    assert "2 students of that name have LMS ids (6666, 7777)" in report.skipped[0].reason
    assert "--roster" in report.skipped[0].reason


@pytest.fixture
def gradebook_course(tmp_path):
    """A course whose gradebook exists (made once per test: nbgrader runs alembic to create one)."""
    root = make_course(tmp_path)
    coursedir.open_gradebook(root).close()
    return root


def test_ids_and_names_go_into_the_gradebook_and_an_id_once_seen_stays(gradebook_course, tmp_path):
    """Week 1: one Wei Zhang (wei_zhang); week 2 both: the first keeps wei_zhang, the second is
    wei_zhang_7777. Unicode names reach the gradebook as written."""
    root = gradebook_course
    week1 = _write(tmp_path / "week1", {
        f"Wei Zhang_6666_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
        f"José Núñez_41_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
        f"李明_8888_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
        f"Дмитрий Иванов_9_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
    })
    report = collect.collect(week1, root, [LESSON])
    collect.record_in_gradebook(root, report=report)
    assert {p.student for p in report.placed} == {"wei_zhang", "jose_nunez", "李明", "дмитрий_иванов"}
    assert (root / "submitted" / "李明" / LESSON / f"{LESSON}.ipynb").is_file()
    with coursedir.open_gradebook(root) as gb:
        people = {s.id: (s.first_name, s.last_name, s.lms_user_id) for s in gb.students}
    assert people == {"wei_zhang": ("Wei", "Zhang", "6666"), "jose_nunez": ("José", "Núñez", "41"),
                      "李明": ("李明", None, "8888"), "дмитрий_иванов": ("Дмитрий", "Иванов", "9")}
    week2 = _write(tmp_path / "week2", {
        f"Wei Zhang_7777_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
        f"Wei Zhang_6666_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
    })
    report = collect.collect(week2, root, [LESSON])
    assert {(p.student, p.lms_id) for p in report.placed} == {("wei_zhang", "6666"), ("wei_zhang_7777", "7777")}


def test_a_roster_maps_lms_ids_to_names_and_student_ids(tmp_path):
    root = make_course(tmp_path)
    canvas = tmp_path / "canvas.csv"
    with canvas.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lesson 1 (1)"])
        writer.writerow(["    Points Possible", "", "", "", "", "25"])
        writer.writerow(["Zhang, Wei", "12345", "S-1", "wzhang1", "A", ""])
        writer.writerow(["Zhang, Wei", "54321", "S-2", "", "A", ""])
    export = _write(tmp_path / "lms", {f"zhangwei_12345_1_{LESSON}.ipynb": _notebook(),
                                       f"zhangwei_54321_2_{LESSON}.ipynb": _notebook()})
    report = collect.collect(export, root, [LESSON], roster=canvas)
    assert {(p.student, p.first_name, p.last_name, p.name_from) for p in report.placed} == {
        ("wzhang1", "Wei", "Zhang", "roster"), ("S-2", "Wei", "Zhang", "roster")}
    moodle = tmp_path / "moodle.csv"
    moodle.write_text("\ufeffIdentifier,Full name,Email address,ID number\n"
                      "Participant 6666,Wei Zhang,wz1@uni.example,\nParticipant 7777,Wei Zhang,wz2@uni.example,s777\n",
                      encoding="utf-8")
    people = collect.read_roster(moodle)
    assert people.by_lms_id["7777"].student == "s777" and people.by_lms_id["6666"].student == ""
    assert people.by_lms_id["6666"].first_name == "Wei" and people.by_lms_id["6666"].last_name == "Zhang"
    export = _write(tmp_path / "moodle", {f"Wei Zhang_6666_assignsubmission_file_/{LESSON}.ipynb": _notebook(),
                                          f"Wei Zhang_7777_assignsubmission_file_/{LESSON}.ipynb": _notebook()})
    report = collect.collect(export, root, [LESSON], roster=people)
    assert {p.student for p in report.placed} == {"wei_zhang", "s777"}, "the roster's s777 leaves the name free"
    (tmp_path / "grades.csv").write_text("name,score\nwei,3\n")
    with pytest.raises(CourseError, match=r"--roster .*neither a Canvas gradebook .* nor a Moodle participants"):
        collect.read_roster(tmp_path / "grades.csv")
    (tmp_path / "bad.csv").write_text("Student,ID,SIS Login ID\n\"Zhang, Wei\",1,w zhang\n")
    with pytest.raises(CourseError, match=r"line 2, SIS Login ID: 'w zhang' cannot be an nbgrader student id"):
        collect.read_roster(tmp_path / "bad.csv")


# --- zip names and times -----------------------------------------------------------------------------

class _RawName(zipfile.ZipInfo):
    """A zip entry whose name bytes are written as given, without the UTF-8 flag (as many LMS do)."""

    __slots__ = ("raw",)

    def _encodeFilenameFlags(self):  # noqa: N802 (zipfile's name)
        return self.raw, self.flag_bits & ~0x800


def test_a_zip_without_the_utf8_flag_decodes(tmp_path):
    root = make_course(tmp_path)
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in (f"José Núñez_41_assignsubmission_file_/{LESSON}.ipynb", f"Straße_7_{LESSON}.ipynb"):
            info = _RawName(name, (2025, 3, 1, 12, 0, 0))
            info.raw = name.encode("utf-8")
            zf.writestr(info, _notebook())
        dos = _RawName("x", (2025, 3, 1, 12, 0, 0))
        dos.raw = f"M\x81ller_9_{LESSON}.ipynb".encode("latin-1")  # a real cp437 name: ü is 0x81
        zf.writestr(dos, _notebook())
    with zipfile.ZipFile(archive) as zf:
        assert any("Jos├⌐" in n for n in zf.namelist()), "the wrong side: read as cp437, the name is garbled"
    report = collect.collect(archive, root, [LESSON])
    assert {(p.student, p.first_name, p.last_name) for p in report.placed} == {
        ("jose_nunez", "José", "Núñez"), ("strasse", "Straße", ""), ("muller", "Müller", "")}


def test_submission_times_come_from_the_lms_in_its_time_zone(tmp_path):
    """A zip entry's time is the LMS's local time: with --timezone Europe/Berlin, 17:30 is 16:30 UTC.
    A date in the name, then timestamp.txt, come before it; a LATE mark is kept and gets the time."""
    root = make_course(tmp_path)
    archive = _zip(tmp_path / "lms.zip", {
        f"Wei Zhang_6666_assignsubmission_file_/{LESSON}.ipynb": (_notebook(), (2026, 12, 3, 17, 30, 0)),
        f"amy_LATE_5_6_{LESSON}.ipynb": (_notebook(), (2026, 12, 4, 9, 0, 0)),
        f"{LESSON}_ben_attempt_2026-12-03-10-00-00_{LESSON}.ipynb": (_notebook(), (2026, 12, 5, 9, 0, 0)),
        f"cat/{LESSON}/{LESSON}.ipynb": (_notebook(), (2026, 12, 5, 9, 0, 0)),
        f"cat/{LESSON}/timestamp.txt": ("2026-12-02 08:00:00.000000 UTC", (2026, 12, 5, 9, 0, 0)),
        f"dan_{LESSON}.ipynb": (_notebook(), (1980, 1, 1, 0, 0, 0)),  # what a zip holds when no time was given
    })
    due = collect.parse_due([f"{LESSON}=2026-12-03T17:00+01:00"], [LESSON])
    report = collect.collect(archive, root, [LESSON], due=due, timezone="Europe/Berlin")
    placed = {p.student: p for p in report.placed}
    assert (placed["wei_zhang"].timestamp, placed["wei_zhang"].time_from) == ("2026-12-03 16:30:00.000000 UTC", "zip")
    assert placed["wei_zhang"].late and placed["wei_zhang"].seconds_late == 30 * 60
    assert (root / "submitted" / "wei_zhang" / LESSON / "timestamp.txt").read_text() == "2026-12-03 16:30:00.000000 UTC"
    amy = placed["amy"]
    assert amy.marked_late and amy.late and amy.timestamp == "2026-12-04 08:00:00.000000 UTC"
    assert (placed["ben"].time_from, placed["ben"].timestamp) == ("name", "2026-12-03 09:00:00.000000 UTC")
    assert not placed["ben"].late
    assert (placed["cat"].time_from, placed["cat"].timestamp) == ("timestamp.txt", "2026-12-02 08:00:00.000000 UTC")
    assert placed["dan"].timestamp is None and not (root / "submitted" / "dan" / LESSON / "timestamp.txt").exists()
    utc = collect.collect(archive, root, [LESSON], due=due, dry_run=True)
    assert {p.student: p.seconds_late for p in utc.placed}["wei_zhang"] == 90 * 60, "without --timezone: UTC"


def test_a_date_alone_is_due_at_the_end_of_that_day():
    due = collect.parse_due([f"{LESSON}=2026-12-03"], [LESSON])[LESSON]
    assert due == dt.datetime(2026, 12, 3, 23, 59, 59, 999999)
    assert not collect.parse_time("2026-12-03 18:00") > due, "an evening hand-in is on time (not 00:00)"
    assert collect.parse_time("2026-12-04 00:00:01") > due
    berlin = collect.parse_due(["2026-12-03"], [LESSON], timezone="Europe/Berlin")[LESSON]
    assert berlin == dt.datetime(2026, 12, 3, 22, 59, 59, 999999), "the end of the day in Berlin, in UTC"


def test_a_time_zoned_due_date_compares_right():
    zoned = collect.parse_due([f"{LESSON}=2026-12-03T17:00+01:00"], [LESSON])[LESSON]
    assert zoned == dt.datetime(2026, 12, 3, 16, 0)
    assert collect.parse_due(["2026-12-03 17:00"], [LESSON], timezone="Europe/Berlin")[LESSON] == zoned
    summer = collect.parse_due(["2026-07-01 17:00"], [LESSON], timezone="Europe/Berlin")[LESSON]
    assert summer == dt.datetime(2026, 7, 1, 15, 0), "summer time: UTC+2"
    assert collect.parse_due(["2026-12-03 17:00 UTC"], [LESSON], timezone="Europe/Berlin")[LESSON] == \
        dt.datetime(2026, 12, 3, 17, 0), "a zone written in the date wins over --timezone"
    assert collect.parse_due(["2026-12-03 17:00"], [LESSON])[LESSON] == dt.datetime(2026, 12, 3, 17, 0)


def test_collect_errors_name_what_to_do(tmp_path):
    root = make_course(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CourseError, match="holds no files"):
        collect.collect(tmp_path / "empty", root, [LESSON])
    with pytest.raises(CourseError, match="does not exist"):
        collect.collect(tmp_path / "missing.zip", root, [LESSON])
    (tmp_path / "grades.txt").write_text("not a zip")
    with pytest.raises(CourseError, match="neither a folder nor a .zip"):
        collect.collect(tmp_path / "grades.txt", root, [LESSON])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "alice_lesson1_by_hand.ipynb").write_text("{ not json")
    with pytest.raises(CourseError, match="(?s)no student notebook could be placed.*not a Jupyter notebook"):
        collect.collect(tmp_path / "bad", root, [LESSON])
    with pytest.raises(CourseError, match="--lesson 'lesson9': unknown lesson"):
        collect.collect(tmp_path / "bad", root, [LESSON], lesson="lesson9")
    with pytest.raises(CourseError, match="unknown lesson 'lesson9'"):
        collect.parse_due(["lesson9=2025-01-01"], [LESSON])
    with pytest.raises(CourseError, match="YYYY-MM-DD"):
        collect.parse_due(["tomorrow"], [LESSON])
    with pytest.raises(CourseError, match="--timezone 'Europe/Berln': unknown time zone.*IANA"):
        collect.parse_due(["2025-01-01"], [LESSON], timezone="Europe/Berln")


def test_real_release_notebook_is_accepted(tmp_path):
    root = make_course(tmp_path)
    folder = tmp_path / "lms"
    folder.mkdir()
    (folder / f"zoe_{LESSON}.ipynb").write_bytes((REPO / "release" / LESSON / f"{LESSON}.ipynb").read_bytes())
    report = collect.collect(folder, root, [LESSON])
    assert [(p.student, p.lesson) for p in report.placed] == [("zoe", LESSON)] and not report.skipped


# --- identity only from the export; bounded unpacking ---------------------------------------------

EARLY, LATER, FUTURE = (2026, 12, 1, 10, 0, 0), (2026, 12, 2, 10, 0, 0), (2099, 1, 1, 0, 0, 0)


def _zip_bytes(entries: dict[str, str | bytes | zipfile.ZipInfo], when: tuple = LATER) -> bytes:
    """A zip (deflated) of ``{name: data}``, every entry at ``when``; a ZipInfo value is a symlink entry."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, when)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buffer.getvalue()


def _link_entry(name: str, target: str) -> bytes:
    """A zip holding one symbolic link entry ``name`` -> ``target`` (as zip tools store links)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        info = zipfile.ZipInfo(name, LATER)
        info.external_attr = (0o120777 << 16)
        zf.writestr(info, target)
    return buffer.getvalue()


def _export_of(tmp_path: Path, kind: str, entries: dict[str, tuple[str | bytes, tuple]]) -> Path:
    """The LMS export of ``{name: (data, date_time)}``: a zip (``kind`` "zip", entries at their times) or
    the folder it unpacks to ("folder", no times)."""
    if kind == "zip":
        return _zip(tmp_path / "lms.zip", entries)
    for name, (data, _) in entries.items():
        (tmp_path / "lms" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "lms" / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return tmp_path / "lms"


EXPORTS = ["zip", "folder"]


def _source(root: Path, student: str) -> str | None:
    """The first cell of ``student``'s placed notebook, None when nothing is placed for them."""
    path = root / "submitted" / student / LESSON / f"{LESSON}.ipynb"
    return nbformat.read(path, as_version=4).cells[0].source if path.exists() else None


def _reasons(report) -> dict[str, str]:
    return {s.file: s.reason for s in report.skipped}


@pytest.mark.parametrize("kind", EXPORTS)
def test_names_inside_a_students_upload_never_place_it_over_another_student(tmp_path, kind):
    """In a zip or a folder export alike: Alice's zip holds `bob_2_20/<lesson> (9).ipynb`: it is Alice's
    (her zip's name in the export says so), never Bob's; Ana's `upload.zip` in her folder is hers;
    Carol's holds `../bob/...` and `/bob_2_20_...`: reported, not unpacked; a zip whose export name names
    nobody is reported; Dan's zip, whose folder name his export also has, is reported. Earlier code placed
    each of them over Bob's notebook (a zip export), or reported every zip as "not a notebook file" (a
    folder export)."""
    root = make_course(tmp_path)
    export = _export_of(tmp_path, kind, {
        f"bob_2_20_{LESSON}.ipynb": (_notebook("bob's own"), EARLY),
        "alice_1_10_upload.zip": (_zip_bytes({f"bob_2_20/{LESSON} (9).ipynb": _notebook("alice's")}, FUTURE), LATER),
        "Ana Lima_4_assignsubmission_file_/upload.zip": (_zip_bytes({f"{LESSON}.ipynb": _notebook("ana's")}), LATER),
        "carol_3_30_upload.zip": (_zip_bytes({f"../bob/{LESSON}.ipynb": _notebook("carol's"),
                                              f"/bob_2_20_{LESSON}.ipynb": _notebook("carol's")}, FUTURE), LATER),
        f"{LESSON}.zip": (_zip_bytes({f"bob/{LESSON}.ipynb": _notebook("nobody's")}, FUTURE), LATER),
        "dan_5_50/upload.zip": (_zip_bytes({f"bob_2_20_{LESSON}.ipynb": _notebook("dan's zip")}), LATER),
        f"dan_5_50/upload/{LESSON}.ipynb": (_notebook("dan's"), LATER),
    })
    report = collect.collect(export, root, [LESSON])
    assert {p.student: _source(root, p.student) for p in report.placed} == {
        "bob": "bob's own", "alice": "alice's", "ana_lima": "ana's", "dan": "dan's"}
    reasons = _reasons(report)
    assert "is also a folder of the export" in reasons["dan_5_50/upload.zip"]
    assert "a '..' path" in reasons[f"carol_3_30_upload.zip: ../bob/{LESSON}.ipynb"]
    assert "an absolute path" in reasons[f"carol_3_30_upload.zip: /bob_2_20_{LESSON}.ipynb"]
    assert "names inside a student's upload are never used" in reasons[f"{LESSON}/bob/{LESSON}.ipynb"]
    logged = {s["file"] for s in json.loads((root / "reports" / "collect.json").read_text())["skipped"]}
    assert set(reasons) == logged


def test_a_folder_inside_a_students_folder_is_still_that_student(tmp_path):
    """A folder export: a student folder inside Ana's is Ana's (today: Bob's, over his notebook); an
    export of Ana alone keeps her folder as the identity (today: stripped, the file name named Bob)."""
    root = make_course(tmp_path)
    export = _write(tmp_path / "moodle", {
        f"Bob Ray_2_assignsubmission_file_/{LESSON}.ipynb": _notebook("bob's own"),
        f"Ana Lima_1_assignsubmission_file_/Bob Ray_2_assignsubmission_file_/{LESSON}.ipynb": _notebook("ana's"),
    })
    report = collect.collect(export, root, [LESSON])
    assert (_source(root, "bob_ray"), _source(root, "ana_lima")) == ("bob's own", "ana's")
    assert not report.skipped
    lone = _write(tmp_path / "lone", {f"Ana Lima_1_assignsubmission_file_/bob_ray_{LESSON}.ipynb": _notebook()})
    assert [p.student for p in collect.collect(lone, root, [LESSON], dry_run=True).placed] == ["ana_lima"]
    wrapped = _write(tmp_path / "wrapped", {f"CS101 export/ana_{LESSON}.ipynb": _notebook(),
                                            f"CS101 export/bob_{LESSON}.ipynb": _notebook()})
    assert {p.student for p in collect.collect(wrapped, root, [LESSON], dry_run=True).placed} == {"ana", "bob"}


def test_links_are_reported_never_followed(tmp_path):
    """Symbolic links (to another student's notebook, outside the export, a folder; in a zip) are
    reported and never placed. Today's code copied Bob's notebook, and the outside file, as others' work."""
    root = make_course(tmp_path)
    export = _write(tmp_path / "lms", {f"bob_2_20_{LESSON}.ipynb": _notebook("bob's own")})
    _write(tmp_path / "outside", {"secret.ipynb": _notebook("secret"), f"erin_5_50_{LESSON}.ipynb": _notebook()})
    (export / f"alice_1_10_{LESSON}.ipynb").symlink_to(export / f"bob_2_20_{LESSON}.ipynb")
    (export / f"carol_3_30_{LESSON}.ipynb").symlink_to(tmp_path / "outside" / "secret.ipynb")
    (export / "erin_5_50").symlink_to(tmp_path / "outside", target_is_directory=True)
    (export / collect.UNPACKED).write_text(json.dumps({"times": {f"bob_2_20_{LESSON}.ipynb": "2099-01-01T00:00:00"},
                                                       "uploads": []}))  # a folder export's is anybody's
    report = collect.collect(export, root, [LESSON])
    assert {p.student for p in report.placed} == {"bob"} and _source(root, "bob") == "bob's own"
    assert report.placed[0].timestamp is None, "a .collect_unpacked.json in a folder export is never read"
    reasons = _reasons(report)
    for link in (f"alice_1_10_{LESSON}.ipynb", f"carol_3_30_{LESSON}.ipynb", "erin_5_50"):
        assert "a symbolic link" in reasons[link], link
    archive = _zip(tmp_path / "lms.zip", {
        f"bob_2_20_{LESSON}.ipynb": (_notebook("bob's own"), EARLY),
        "alice_1_10_upload.zip": (_link_entry(f"{LESSON}.ipynb", f"../bob_2_20_{LESSON}.ipynb"), LATER),
    })
    report = collect.collect(archive, root, [LESSON])
    assert [p.student for p in report.placed] == ["bob"]
    assert "a symbolic link inside an archive" in _reasons(report)[f"alice_1_10_upload.zip: {LESSON}.ipynb"]


def test_one_students_two_copies_keep_the_latest_by_the_exports_time(tmp_path):
    """Two entries whose names differ only in Unicode form or case, or a copy inside the student's own
    zip (whose name says 2099): the later by the export's time is placed, the other reported. Today's
    code let the NFD entry overwrite the NFC one on unpacking and took 2099 from the student's name."""
    root = make_course(tmp_path)
    nfc = f"José_41_{LESSON}.ipynb"
    archive = _zip(tmp_path / "lms.zip", {
        nfc: (_notebook("later"), LATER),
        unicodedata.normalize("NFD", nfc): (_notebook("earlier"), EARLY),
        f"ana_1_10_{LESSON}.ipynb": (_notebook("later"), LATER),
        f"ANA_1_10_{LESSON}.ipynb": (_notebook("earlier"), EARLY),
        f"bob_2_20_{LESSON}.ipynb": (_notebook("later"), LATER),
        "bob_2_19_upload.zip": (_zip_bytes({f"{LESSON}_2099-01-01.ipynb": _notebook("earlier"),
                                            "timestamp.txt": "2099-01-01 00:00:00.000000 UTC"}, FUTURE), EARLY),
        "carol_3_30_upload.zip": (_zip_bytes({f"{LESSON}.ipynb": _notebook()}, FUTURE), (1980, 1, 1, 0, 0, 0)),
    })
    report = collect.collect(archive, root, [LESSON])
    assert {p.student: _source(root, p.student) for p in report.placed} == {"jose": "later", "ana": "later",
                                                                            "bob": "later", "carol": "x = 1"}
    stamps = {p.student: p.timestamp for p in report.placed}
    assert (stamps["bob"], stamps["carol"]) == ("2026-12-02 10:00:00.000000 UTC", None), "never the zip's inner times"
    reasons = _reasons(report)
    for twice in (nfc, f"ANA_1_10_{LESSON}.ipynb"):  # the NFD name is shown in NFC, as it is unpacked
        assert "holds it twice" in reasons[f"lms.zip: {twice}"]
    assert reasons[f"bob_2_19_upload/{LESSON}_2099-01-01.ipynb"] == \
        f"older copy of bob/{LESSON}; kept bob_2_20_{LESSON}.ipynb"


def test_zip_collects_archive_folder_unpacks_exports_at_its_top_and_students_zips_below(tmp_path):
    """``nbgrader zip_collect``'s archive folder (its extractor): a zip at its top is an LMS export, whose
    names identify; a zip below is a student's upload, whose names never do. Earlier code took every zip
    for an export, unpacked into a folder of its name (``moodle/``, which then named Alice and Wei), and
    placed the one in ``<lesson>/upload.zip`` as Bob's."""
    archive = tmp_path / "archive"
    archive.mkdir()
    _zip(archive / "moodle.zip", {
        f"Wei Zhang_6666_assignsubmission_file_/{LESSON}.ipynb": (_notebook("wei's"), LATER),
        "alice_1_10_upload.zip": (_zip_bytes({f"bob_2_20/{LESSON}.ipynb": _notebook("alice's")}), LATER)})
    (archive / LESSON).mkdir()
    (archive / LESSON / "upload.zip").write_bytes(_zip_bytes({f"bob_2_20_{LESSON}.ipynb": _notebook("nobody's")}))
    extracted = tmp_path / "extracted"
    zip_collect.LMSExtractor().extract(str(archive), str(extracted))
    report = collect.CollectReport(str(extracted))
    chosen = collect.place(extracted, [LESSON], report)
    assert {student: nbformat.read(c.path, as_version=4).cells[0].source for (student, _), c in chosen.items()} \
        == {"wei_zhang": "wei's", "alice": "alice's"}
    nobodys = _reasons(report)[f"{LESSON}/upload/bob_2_20_{LESSON}.ipynb"]
    assert "names inside a student's upload are never used" in nobodys


class _Disk:
    """What collect writes in its scratch folder (through ``open``): bytes in all, and the most on disk
    at once (the files it wrote summed after every write; not a folder export's own files, linked in)."""

    def __init__(self, monkeypatch):
        self.written = self.peak = 0
        self.files: set[Path] = set()
        monkeypatch.setattr(unpack, "open", self._open, raising=False)

    def _open(self, path, mode="r", *args, **kwargs):
        handle, disk = open(path, mode, *args, **kwargs), self
        assert any(p.name.startswith("collect-") for p in Path(path).parents), "only in the scratch folder"
        self.files.add(Path(path))

        class Counted:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                handle.close()

            def write(self, data):
                handle.write(data)
                handle.flush()
                disk.written += len(data)
                held = sum(f.stat().st_size for f in disk.files if f.is_file())
                disk.peak = max(disk.peak, held)

        return Counted()


KiB = 1024


@pytest.mark.parametrize("limits, upload, broken", [
    (collect.UnpackLimits(ratio=50, ratio_from=64 * KiB), {f"{LESSON}.ipynb": bytes(4 * collect.MiB)},
     "more than 50 times its compressed size (the ratio limit)"),
    (collect.UnpackLimits(member_bytes=256 * KiB), {f"{LESSON}.ipynb": b"0123456789abcdef" * (300 * KiB // 16)},
     "over the per-file limit of 262144 bytes"),
    (collect.UnpackLimits(total_bytes=300 * KiB), {f"{n}.ipynb": b"0123456789abcdef" * (200 * KiB // 16)
                                                   for n in "abc"}, "the total limit of 307200 bytes"),
    (collect.UnpackLimits(members=6), {f"{n}.txt": b"x" for n in "abcdefgh"}, "(the member-count limit)"),
    (collect.UnpackLimits(depth=2), {"inner.zip": _zip_bytes({f"{LESSON}.ipynb": _notebook()})},
     "nested deeper than 2 (the depth limit)"),
], ids=["bomb-ratio", "member", "total", "members", "depth"])
@pytest.mark.parametrize("kind", EXPORTS)
def test_an_upload_past_a_limit_is_refused_while_streaming_and_the_others_placed(tmp_path, monkeypatch, limits,
                                                                                upload, broken, kind):
    """Bob's zip, in a zip or a folder export, breaks one limit: one line names his zip and the limit,
    nothing of it is placed, nothing is written past the limit (the scratch folder's peak is measured),
    Alice and Carol are placed. (Earlier code did not unpack a zip in a folder export at all.)"""
    root = make_course(tmp_path)
    archive = _export_of(tmp_path, kind, {f"alice_1_10_{LESSON}.ipynb": (_notebook("alice's"), LATER),
                                          "bob_2_20_upload.zip": (_zip_bytes(upload), LATER),
                                          f"carol_3_30_{LESSON}.ipynb": (_notebook("carol's"), LATER)})
    disk = _Disk(monkeypatch)
    report = collect.collect(archive, root, [LESSON], limits=limits)
    assert (_source(root, "alice"), _source(root, "carol"), _source(root, "bob")) == ("alice's", "carol's", None)
    refused = [s for s in report.skipped if s.file.startswith("bob_2_20_upload")]
    assert len(refused) == 1 and broken in refused[0].reason and "nothing of it is placed" in refused[0].reason
    assert f"  ! {refused[0].file}: {refused[0].reason}" in report.summary().splitlines()
    assert json.loads((root / "reports" / "collect.json").read_text())["skipped"] == [
        {"file": s.file, "reason": s.reason} for s in report.skipped]
    assert disk.peak <= disk.written and disk.peak <= limits.total_bytes
    assert disk.peak > 0 or (kind == "folder" and "declares" in refused[0].reason), "nothing written at all?"
    if "ratio" in broken:  # 4 MiB of zeros in ~4 KiB: at most 50 times that is ever written
        bomb = zipfile.ZipFile(io.BytesIO(_zip_bytes(upload))).infolist()[0].compress_size
        assert disk.written <= 50 * bomb + 2 * len(_notebook("alice's")) + len(_zip_bytes(upload)) < collect.MiB


def test_unpack_limits_must_be_positive():
    with pytest.raises(CourseError, match=r"UnpackLimits.ratio=0: must be a positive whole number"):
        collect.UnpackLimits(ratio=0)


# --- nbgrader: zip_collect with the same rules, the late penalty -------------------------------------

@pytest.mark.slow
def test_nbgrader_zip_collect_uses_the_same_rules(tmp_path):
    from autograder.coursedir import run_nbgrader as nbgrader

    root = make_course(tmp_path)
    archive = root / "downloaded" / LESSON / "archive"
    archive.mkdir(parents=True)
    entries = {
        "Wei Zhang_6666_assignsubmission_file_/my homework (final).ipynb": (_notebook("a"), (2026, 12, 3, 18, 0, 0)),
        "Wei Zhang_7777_assignsubmission_file_/notebook.ipynb": (_notebook("b"), (2026, 12, 3, 12, 0, 0)),
        "José Núñez_41_assignsubmission_file_/x.ipynb": (_notebook("c"), (2026, 12, 3, 12, 0, 0)),
    }
    _zip(archive / "moodle.zip", entries)
    result = nbgrader(root, "zip_collect", LESSON, "--LMSCollector.timezone=Europe/Berlin")
    assert result.returncode == 0, result.stderr[-3000:]
    ours = collect.collect(archive / "moodle.zip", tmp_path / "ours", [LESSON], lesson=LESSON,
                           timezone="Europe/Berlin", dry_run=True)
    placed = {p.student: p.timestamp for p in ours.placed}
    assert set(placed) == {"wei_zhang_6666", "wei_zhang_7777", "jose_nunez"}
    from nbgrader.utils import parse_utc
    for student, stamp in placed.items():
        folder = root / "submitted" / student / LESSON
        assert (folder / f"{LESSON}.ipynb").is_file(), student
        assert parse_utc((folder / "timestamp.txt").read_text()) == parse_utc(stamp)


@pytest.mark.slow
def test_a_late_submission_gets_nbgraders_penalty_in_the_gradebook_and_the_csv(tmp_path):
    """The course's grading path (trusted grader, then nbgrader autograde) applies
    c.LateSubmissionPlugin.penalty_method once collect stored the due date and the timestamps."""
    from autograder.results import export
    from autograder import sample_class
    from autograder.grading import batch

    root = make_course(tmp_path)
    with (root / "nbgrader_config.py").open("a") as config:
        config.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    release = nbformat.read(REPO / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    solved = nbformat.writes(sample_class.fill(release, solutions.solution_cells(
        REPO / "source" / LESSON / f"{LESSON}.ipynb")))
    archive = _zip(tmp_path / "lms.zip", {f"erin_LATE_1_2_{LESSON}.ipynb": (solved, (2025, 3, 5, 10, 0, 0)),
                                          f"finn_3_4_{LESSON}.ipynb": (solved, (2025, 3, 3, 22, 0, 0))})
    due = collect.parse_due([f"{LESSON}=2025-03-03"], [LESSON])
    report = collect.collect(archive, root, [LESSON], due=due)
    collect.record_in_gradebook(root, due, report)
    records = batch.grade(None, None, root=root, progress=False, check_reference=False)
    assert {r.student: r.score for r in records} == {"erin": 25.0, "finn": 25.0}
    with coursedir.open_gradebook(root) as gb:
        late, on_time = gb.find_submission(LESSON, "erin"), gb.find_submission(LESSON, "finn")
        assert late.total_seconds_late == pytest.approx(34 * 3600, abs=1) and late.late_submission_penalty == 25
        assert on_time.total_seconds_late == 0 and on_time.late_submission_penalty == 0
    grades = export.read_grades(root)
    rows = {r["student"]: r for r in csv.DictReader(export.write_csv(grades, root / "reports")[0].open())}
    assert (rows["erin"][LESSON], rows["erin"][f"{LESSON}_hours_late"], rows["erin"][f"{LESSON}_penalty"]) == \
        ("0", "34", "25")
    assert (rows["finn"][LESSON], rows["finn"][f"{LESSON}_hours_late"], rows["finn"][f"{LESSON}_penalty"]) == \
        ("25", "0", "0")
    assert rows["erin"]["total"] == "0" and grades.late[("erin", LESSON)] and not grades.late[("finn", LESSON)]
    from autograder.results import report as report_module

    assert report_module.late_mark(grades, ("erin", LESSON))["text"] == "late 34 h −25"
    assert report_module.late_mark(grades, ("finn", LESSON)) is None
    assert "late 34 h −25" in report_module.build(root), "the report shows the hours late and the penalty"
