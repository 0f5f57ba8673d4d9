"""Course-level timings: each lesson notebook's execution time, and grading throughput.

Notebooks run with nbclient, once each (kernel start included). Grading throughput compares the
trusted grader (``autograder.grading.grade``, ``--jobs 1`` and ``2``) with plain ``nbgrader autograde``
on the same submissions: copies of the release notebook with the reference solution cells filled in,
graded in a scratch course directory (never the repository's own gradebook).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder.coursedir import REPO, copy_course, notebook, run_nbgrader, tool_env
from autograder.solutions import lesson_notebook, solution_cells


def time_notebook(notebook: Path, timeout: int = 600) -> dict:
    """Execute ``notebook`` top to bottom with nbclient in its own folder; ``{"seconds", "status"}``."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(Path(notebook).parent)}})
    # No stand-in for ipywidgets' Output (lesson 1's explorer): it can lose a cell's reply, and the cell then waits
    # out its whole timeout (nbclient issue 312; tests/nbtools.py's without_output_widgets).
    client.widget_registry = {}
    start = time.perf_counter()
    try:
        client.execute()
        status = "ok"
    except CellExecutionError as error:
        status = "error: " + str(error).strip().splitlines()[-1][:200]
    except Exception as error:  # noqa: BLE001 - a kernel that died is a result, not a crash of the benchmark
        status = f"error: {type(error).__name__}: {error}"[:200]
    return {"seconds": time.perf_counter() - start, "status": status}


def time_notebooks(lessons: list[str], root: Path = REPO, progress=print) -> dict[str, dict]:
    """``{lesson: {"seconds", "status"}}`` for every lesson, ``status`` "not available" when it is missing."""
    found = {}
    for lesson in lessons:
        notebook = lesson_notebook(lesson, root)
        if notebook is None:
            found[lesson] = {"seconds": None, "status": f"not available (no notebook in source/{lesson})"}
            continue
        progress(f"  executing {notebook.relative_to(root)} ...")
        found[lesson] = time_notebook(notebook)
    return found


# --- grading throughput ---------------------------------------------------------------------------

def trusted_grader():
    """``autograder.grading.grade`` (importable here; it runs in a child, see :func:`trusted_in_process`)
    or the reason it cannot be used."""
    try:
        module = importlib.import_module("autograder.grading")
        return module.grade, None
    except Exception as error:  # noqa: BLE001
        return None, f"autograder.grading is not importable ({type(error).__name__}: {error})"


def nbgrader_cmd(*args: str, root: Path) -> subprocess.CompletedProcess:
    """One ``nbgrader`` command in course ``root`` with its own gradebook ``root/gradebook.db``."""
    return run_nbgrader(root, *args, db_url=f"sqlite:///{root}/gradebook.db")


#: The block of ``nbgrader_config.py`` that plugs the trusted grader into ``nbgrader autograde``.
TRUSTED_BLOCK = re.compile(r"\n# Trusted autograding.*?_configure_trusted_grading\(c\)\n", re.S)


def make_course(scratch: Path, lessons: list[str], students: list[str], root: Path = REPO, *,
                honest_corpus: bool = False, warm: bool = True, plain: bool = False) -> Path:
    """A scratch course: ``source/``, a fresh release and gradebook, one reference submission per student
    and lesson, and with ``honest_corpus`` every honest corpus case of the lessons (correct answers and
    honest bugs, as students write them). ``warm=False`` sets ``c.SandboxPolicy.warm = False``;
    ``plain=True`` removes the trusted block from the config, so ``nbgrader autograde`` is stock nbgrader
    (the whole notebook in a Jupyter kernel)."""
    copy_course(root, scratch, lessons, folders=("source",))
    config = (root / "nbgrader_config.py").read_text()
    if plain:
        config = TRUSTED_BLOCK.sub("\n", config)
        if "_configure_trusted_grading" in config:
            raise RuntimeError("could not remove the trusted block from nbgrader_config.py")
    if not warm:
        config += "\nc.SandboxPolicy.warm = False  # benchmark: a fresh interpreter per child\n"
    config += "\nc.Variants.enabled = False  # benchmark: the reference answers the lecture's numbers\n"
    (scratch / "nbgrader_config.py").write_text(config)
    for lesson in lessons:
        result = nbgrader_cmd("generate_assignment", lesson, "--force", root=scratch)
        if result.returncode != 0:
            raise RuntimeError(f"nbgrader generate_assignment {lesson} failed: {result.stderr[-500:]}")
        answers = solution_cells(lesson_notebook(lesson, root))
        released = notebook(scratch, "release", lesson)
        submission = nbformat.read(released, as_version=4)
        for cell in submission.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answers:
                cell.source = answers[grade_id]
        for student in students:
            folder = scratch / "submitted" / student / lesson
            folder.mkdir(parents=True)
            nbformat.write(copy.deepcopy(submission), folder / released.name)
            (folder / "timestamp.txt").write_text("2025-01-01 12:00:00.000000 UTC\n")
        if honest_corpus:
            from tests import corpus  # test data of this repository, run from its root

            for case in corpus.cases(lesson):
                if case.honest:
                    corpus.build(case, scratch)
    return scratch


def submission_count(course: Path) -> int:
    return sum(1 for _ in Path(course).glob("submitted/*/*/"))


def call_grade(grade, lessons, students, jobs, root, cluster=None):
    """Call ``grade`` with the documented keywords it accepts: progress off, and no verdict cache (two
    identical reference submissions must both be graded for real)."""
    wanted = dict(lessons=lessons, students=students, jobs=jobs, root=root, progress=False, use_cache=False)
    if cluster:
        wanted["cluster"] = cluster
    accepted = inspect.signature(grade).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        wanted = {k: v for k, v in wanted.items() if k in accepted}
    return grade(**wanted)


def grade_child() -> None:
    """Entry point of the grading child: ``argv[1]`` is JSON ``{lessons, students, jobs, root, cluster}``;
    prints the records as JSON on the last line of stdout."""
    import json

    from autograder.grading import grade

    args = json.loads(sys.argv[1])
    records = call_grade(grade, args["lessons"], args["students"], args["jobs"], Path(args["root"]),
                         args.get("cluster"))
    print("\n" + json.dumps([r.as_dict() for r in records], default=str))


def trusted_in_process(lessons, students, jobs, root, cluster=None) -> list[dict]:
    """``autograder.grading.grade`` in a fresh interpreter, as an instructor runs it: the benchmark's own
    process has run torch with changed thread counts, which must not leak into the grader's workers.
    ``students=None``: every submission of the course."""
    import json

    args = json.dumps({"lessons": lessons, "students": students, "jobs": jobs, "root": str(root),
                       "cluster": cluster})
    code = "from benchmarks.course_runs import grade_child; grade_child()"
    done = subprocess.run([sys.executable, "-c", code, args], cwd=REPO, capture_output=True, text=True,
                          env=tool_env())
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or ["no output"])[-1][:300])
    return json.loads(done.stdout.strip().splitlines()[-1])


def nbgrader_scores(course: Path, lessons: list[str], students: list[str] | None) -> dict:
    """Points given / possible over the submissions (of ``students``, default all), read from the scratch
    gradebook nbgrader wrote."""
    from nbgrader.api import Gradebook, MissingEntry

    score = possible = 0.0
    scores: dict[str, float] = {}
    with Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:
        for lesson in lessons:
            for student in students or [s.id for s in gradebook.students]:
                try:
                    submission = gradebook.find_submission(lesson, student)
                except MissingEntry:
                    continue
                score, possible = score + submission.score, possible + submission.max_score
                scores[f"{student}/{lesson}"] = float(submission.score)
    return {"score": score, "max_score": possible, "by_submission": scores}


def phase_medians(data: list[dict]) -> dict[str, float]:
    """The median seconds of each phase (``Record.phases``) over the records (as dicts) that carry them."""
    timed = [d["phases"] for d in data if d.get("phases")]
    names = dict.fromkeys(name for phases in timed for name, value in phases.items() if name != "reused")
    return {name: statistics.median(float(p.get(name) or 0.0) for p in timed) for name in names}


def record_scores(data: list[dict]) -> dict:
    """Points given / possible and the statuses of the trusted grader's records (as dicts)."""
    problems = [f"{d.get('student')}/{d.get('lesson')}: {d.get('status')}: {str(d.get('reason'))[:300]}"
                for d in data if d.get("status") != "ok"]
    return {"records": len(data), "record_statuses": sorted({str(d.get("status")) for d in data}),
            "problems": problems,
            "by_submission": {f"{d.get('student')}/{d.get('lesson')}": float(d.get("score") or 0) for d in data},
            "sandbox_seconds": sum(float(d.get("seconds") or 0) for d in data),
            "phases": phase_medians(data),
            "score": sum(float(d.get("score") or 0) for d in data),
            "max_score": sum(float(d.get("max_score") or 0) for d in data)}


#: ``(label, how, jobs, warm)``: ``how`` is "nbgrader" (plain ``nbgrader autograde``), "local" (the
#: trusted grader's own processes) or "cluster" (a loopback Dask cluster of ``jobs`` workers).
CONTENDERS = (("nbgrader autograde", "nbgrader", 1, None), ("trusted --jobs 1 warm", "local", 1, True),
              ("trusted --jobs 2 warm", "local", 2, True), ("trusted --jobs 2 cold", "local", 2, False))
SCALE_CONTENDERS = (("nbgrader autograde", "nbgrader", 1, None), ("trusted --jobs 1 cold", "local", 1, False),
                    ("trusted --jobs 1 warm", "local", 1, True), ("trusted --jobs 2 cold", "local", 2, False),
                    ("trusted --jobs 2 warm", "local", 2, True),
                    ("trusted on a loopback Dask cluster, 2 workers, warm", "cluster", 2, True))


def grading_throughput(lessons: list[str], students: int = 2, root: Path = REPO, progress=print, *,
                       contenders=CONTENDERS, honest_corpus: bool = False) -> dict:
    """Submissions per minute of each contender (:data:`CONTENDERS`) on the same submissions: ``students``
    reference submissions per lesson, plus the honest corpus with ``honest_corpus``, gradebook included.

    Each contender grades in its own fresh scratch course (so none sees another's gradebook), one after
    the other (too slow to interleave); the note in the result says so.
    """
    grade, reason = trusted_grader()
    if grade is None:
        return {"status": "not available", "reason": reason}
    names = [f"bench_student_{i + 1}" for i in range(students)]
    result = {"status": "ok", "lessons": lessons, "submissions": None, "runs": {}, "honest_corpus": honest_corpus,
              "note": "one run each, in the order listed (too slow to interleave)"}
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        for label, how, jobs, warm in contenders:
            folder = Path(tmp) / "".join(ch if ch.isalnum() else "_" for ch in label)
            course = make_course(folder, lessons, names, root, honest_corpus=honest_corpus, warm=warm is not False,
                                 plain=how == "nbgrader")
            count = result["submissions"] = submission_count(course)
            progress(f"  grading {count} submissions with {label} ...")
            start = time.perf_counter()
            try:
                if how == "nbgrader":
                    for lesson in lessons:
                        done = nbgrader_cmd("autograde", lesson, "--force", root=course)
                        if done.returncode != 0:
                            raise RuntimeError(done.stderr.strip().splitlines()[-1][:300])
                    records = None
                elif how == "cluster":
                    from .loopback import loopback_cluster

                    with loopback_cluster(folder / "cluster", workers=jobs) as (address, _):
                        start = time.perf_counter()  # the cluster's own start-up is not grading
                        records = trusted_in_process(lessons, None, jobs, course, cluster=address)
                else:
                    records = trusted_in_process(lessons, None, jobs, course)
                seconds = time.perf_counter() - start
                run = {"seconds": seconds, "per_minute": count / seconds * 60.0, "status": "ok"}
                run.update(nbgrader_scores(course, lessons, None) if records is None else record_scores(records))
            except Exception as error:  # noqa: BLE001 - reported, the rest of the benchmark goes on
                run = {"seconds": None, "per_minute": None, "status": f"error: {type(error).__name__}: {error}"[:300]}
            result["runs"][label] = run
    base = result["runs"].get("nbgrader autograde", {}).get("per_minute")
    for run in result["runs"].values():
        run["vs_nbgrader"] = run["per_minute"] / base if base and run.get("per_minute") else None
    return result
