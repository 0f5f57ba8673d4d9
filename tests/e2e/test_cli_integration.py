"""The main job through the real trusted grader, on a small sample class of lesson 1."""

from __future__ import annotations

import csv
import json

import pytest

from autograder import cli, coursedir, sample_class
from autograder.results import export
from workflow_fakes import LESSON, make_course


@pytest.mark.slow
def test_main_job_with_the_trusted_grader(tmp_path, capsys):
    pytest.importorskip("autograder.grading")
    root = make_course(tmp_path)
    demo = tmp_path / "demo"
    status = cli.main(["course", "--root", str(root), "--skip-release", "--students", "8", "--seed", "5",
                       "--out", str(demo)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "Attacks in the sample class" in out and "NOT STOPPED" not in out
    assert "exchange: 1 hand-in refused (named " in out and "so the grade is that hand-in's" in out, out
    printed = export.parse_table(out.split("(- not handed in")[0].split("\n\n")[-1])
    rows = list(csv.DictReader((demo / "reports" / "grades.csv").open()))
    from_csv = {(r["student"], "lesson1"): float(r[LESSON]) for r in rows if r[LESSON]}
    from_csv.update({(r["student"], "total"): float(r["total"]) for r in rows})
    assert printed == from_csv
    with coursedir.open_gradebook(demo) as gb:
        from_db = {(s.student.id, "lesson1"): s.score for s in gb.assignment_submissions(LESSON)}
    assert {k: v for k, v in printed.items() if k[1] == "lesson1"} == from_db
    manifest = json.loads((demo / "lms" / "manifest.json").read_text())["submissions"]
    records = {p.stem: json.loads(p.read_text()) for p in (demo / "records" / LESSON).glob("*.json")}
    for entry in manifest:
        record = records.get(entry["student"])
        if entry["variant"] == "complete":
            assert record["status"] == "ok" and record["score"] == record["max_score"] == 25, record["reason"]
        elif entry["variant"].startswith("wrong:") and entry["student"] in records:
            assert record["score"] < 25, entry
        elif entry["variant"].startswith("attack:"):  # the grader stops it on every test it targets
            attack = next(a for a in sample_class.ATTACKS if entry["variant"] == f"attack:{a.name}")
            targets = {t["grade_id"]: t["points"] for t in record["tests"] if t["grade_id"] in attack.stopped_on}
            assert set(targets) == set(attack.stopped_on) and not any(targets.values()), (attack.name, targets)
        elif entry["variant"] == "blank":
            assert record["score"] == 0
