"""The course on a real JupyterHub, end to end, in headless Chromium: README "Run the course on a JupyterHub".

The test is the newcomer of that section: it makes the local accounts (``useradd``: two students, an
instructor, the course account that owns the course folder), the exchange folder and the course folder,
releases lessons 1 and 2 as the course account, and starts JupyterHub with ``deploy/jupyterhub/jupyterhub_config.py``
and the pinned ``configurable-http-proxy`` on loopback (PAM logins, the local process spawner). Then:

1. both students log in, fetch lesson 1 from the *Assignments* list and submit it; one of them first types
   an answer into a solution cell and presses **Validate**;
2. the course account (an ordinary user) collects (the course's collect: each hand-in under the account
   that owns it) and grades with the trusted grader; the instructor
   opens formgrader through the hub, sees both scores, gives a manual grade and a comment; the course
   account generates and releases feedback;
   alice also hands in lesson 2 (``nbgrader submit`` in her terminal) with a forward whose loop rule is
   unproved: it is graded 0 with "needs manual grade", formgrader flags it, the instructor scores it in
   formgrader, and the score reaches ``grades.csv`` and her feedback page (the review path, issue 50);
3. each student fetches feedback and sees their own score, the comment and no hidden test (the trusted
   grader's staging carries each hand-in's ``submission_secret.txt`` into ``autograded/``, under which
   ``nbgrader release_feedback`` files the feedback);
4. a student can read neither the other's submission nor the course folder (``source/``, the gradebook),
   and the hub refuses them formgrader and the other student's server.

Needs root (``useradd``, the hub starts servers as other users), Chromium, node and the proxy installed by
``npm ci --prefix deploy/jupyterhub``; skipped loudly without them, failed under ``CI``. Every process it
starts (hub, proxy, course service, single-user servers, their kernels) is ended with it.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import pytest

import labdriver as lab
from accounts import interpreter_cover, local_account
from autograder import coursedir
from autograder.results import export
from autograder.solutions import solution_cells
from autograder.variants import hand_sources
from shared import WHILE_FORWARD

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]

DEPLOY = lab.REPO / "deploy" / "jupyterhub"
PROXY = DEPLOY / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE = "avgpool-course"
LESSON = lab.LESSON
REVIEWED = "lesson2_loops"   # alice's second hand-in: a forward whose loop rule is unproved (WHILE_FORWARD)
STUDENTS = ("hubt-alice", "hubt-bob")   # alice answers the worked example; bob hands in the stub
INSTRUCTOR = "hubt-teacher"
COURSE_ACCOUNT = "hubt-course"
BIN = Path(sys.executable).parent
COMMENT = "Right shapes; now try the output-size rule."
NEEDS = ("useradd", "chpasswd", "unshare", "setpriv")

#: A command as another user, in a mount namespace where that user can reach this Python (see
#: accounts.COVER_INTERPRETER), with the environment the hub gives its servers.
AS_USER = r"""
cd "$WORKDIR"
exec setpriv --reuid="$ACCOUNT" --regid="$ACCOUNT" --init-groups env -i PATH="$USER_PATH" HOME="$USER_HOME" \
    LANG=C.UTF-8 JUPYTER_CONFIG_PATH="$JUPYTER_CONFIG_PATH" AVGPOOL_HUB_EXCHANGE="$AVGPOOL_HUB_EXCHANGE" "$@"
"""


def proxy_or_skip() -> None:
    """Skips (fails under CI) without node or the pinned proxy, saying how to install them."""
    missing = [what for what, ok in (("node", shutil.which("node")), (str(PROXY.relative_to(lab.REPO)), os.access(PROXY, os.X_OK)))
               if not ok]
    if missing:
        reason = (f"the hub test needs {' and '.join(missing)}: install node and npm, then run "
                  "`npm ci --prefix deploy/jupyterhub` (`.ci/run` does it)")
        if lab.in_ci():
            pytest.fail(f"CI is set and {reason}", pytrace=False)
        pytest.skip(reason)


class Hub:
    """A running hub and the folders around it (see :func:`hub`)."""

    def __init__(self, top: Path, port: int, passwords: dict[str, str], cover: tuple[str, dict[str, str]]):
        self.top, self.port, self.passwords = top, port, passwords
        self.cover_script, self.cover_env = cover
        self.exchange = top / "exchange"
        self.course_dir = top / "homes" / COURSE_ACCOUNT / COURSE
        self.log = top / "jupyterhub.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def home(self, name: str) -> Path:
        return self.top / "homes" / name

    def env(self) -> dict[str, str]:
        """What every command of the deployment sees: the global nbgrader config, the exchange."""
        return {"JUPYTER_CONFIG_PATH": str(DEPLOY / "jupyter"), "AVGPOOL_HUB_EXCHANGE": str(self.exchange)}

    def as_user(self, name: str, *argv: str, cwd: Path | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
        """``argv`` as ``name`` (its home, or ``cwd``), as in a terminal of that user's JupyterLab."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **self.cover_env, **self.env(), "ACCOUNT": name,
               "WORKDIR": str(cwd or self.home(name)), "USER_HOME": str(self.home(name)),
               "USER_PATH": f"{BIN}{os.pathsep}/usr/bin:/bin"}
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               "set -e\n" + self.cover_script + AS_USER, "sh", *argv],
                              env=env, capture_output=True, text=True, timeout=timeout)

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def _wait_for_hub(hub: Hub, deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if hub.proc.poll() is not None:
            raise AssertionError(f"JupyterHub exited ({hub.proc.returncode}):\n{hub.log_tail()}")
        try:
            with urllib.request.urlopen(f"{hub.url}/hub/api/", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"JupyterHub did not answer on {hub.url} within {deadline_s:.0f} s:\n{hub.log_tail()}")


def _stop(hub: Hub, uids: set[int]) -> None:
    """SIGTERM to the hub and, at the same time, to its proxy and every process of the test's accounts (the
    course service, the servers, their kernels), then SIGKILL to whatever is left, by process id. (Left to the
    hub, the course service's stop sometimes took its whole 20 s of SIGINT, SIGTERM and SIGKILL timeouts.)"""
    ours: dict[int, psutil.Process] = {}
    with contextlib.suppress(psutil.NoSuchProcess):
        for proc in [psutil.Process(hub.proc.pid), *psutil.Process(hub.proc.pid).children(recursive=True)]:
            ours[proc.pid] = proc
    for proc in psutil.process_iter(["uids"]):
        if proc.info["uids"] and proc.info["uids"].real in uids:
            ours[proc.pid] = proc
    hub.proc.send_signal(signal.SIGTERM)
    for proc in ours.values():
        if proc.pid != hub.proc.pid:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.terminate()
    try:
        hub.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        hub.proc.kill()
        hub.proc.wait()
    _, alive = psutil.wait_procs(list(ours.values()), timeout=5)
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(alive, timeout=5)


@pytest.fixture(scope="module")
def hub(chromium, screenshot_root):
    """The README's steps as root: accounts, exchange, course folder, lessons 1 and 2 released, the hub running."""
    proxy_or_skip()
    with contextlib.ExitStack() as stack:
        top = Path(tempfile.mkdtemp(prefix="avgpool-hub-"))
        stack.callback(shutil.rmtree, top, ignore_errors=True)
        top.chmod(0o755)
        (top / "homes").mkdir(mode=0o755)
        (top / "homes").chmod(0o755)
        names = (*STUDENTS, INSTRUCTOR, COURSE_ACCOUNT)
        uids = {name: stack.enter_context(local_account(name, NEEDS, "the hub test makes its users",
                                                        home=str(top / "homes" / name)))
                for name in names}
        passwords = {name: secrets.token_urlsafe(12) for name in names}
        subprocess.run(["chpasswd"], input="".join(f"{n}:{p}\n" for n, p in passwords.items()), text=True, check=True)
        for name, uid in uids.items():
            (top / "homes" / name).mkdir(mode=0o700)
            os.chown(top / "homes" / name, uid, uid)
        hub = Hub(top, lab.free_port(), passwords, stack.enter_context(interpreter_cover()))
        # nbgrader's exchange: every user may write, nobody may remove another's files
        hub.exchange.mkdir()
        hub.exchange.chmod(0o1777)
        # the course folder, the course account's alone
        coursedir.copy_course(lab.REPO, hub.course_dir, [LESSON, REVIEWED])
        for path in [hub.course_dir, *hub.course_dir.rglob("*")]:
            os.chown(path, uids[COURSE_ACCOUNT], uids[COURSE_ACCOUNT])
        hub.course_dir.chmod(0o700)

        state = top / "state"
        state.mkdir(mode=0o700)
        env = {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}", "LANG": "C.UTF-8",
               "HOME": str(state), **hub.cover_env, **hub.env(),
               "AVGPOOL_HUB_GRADERS": INSTRUCTOR, "AVGPOOL_HUB_STUDENTS": ",".join(STUDENTS),
               "AVGPOOL_HUB_COURSE_ACCOUNT": COURSE_ACCOUNT, "AVGPOOL_HUB_COURSE_DIR": str(hub.course_dir),
               "AVGPOOL_HUB_STATE": str(state), "AVGPOOL_HUB_URL": f"http://127.0.0.1:{hub.port}",
               "AVGPOOL_HUB_API_PORT": str(lab.free_port()), "AVGPOOL_HUB_PROXY_API_PORT": str(lab.free_port()),
               "AVGPOOL_HUB_SERVICE_PORT": str(lab.free_port())}
        command = f'exec "{BIN / "jupyterhub"}" -f "{DEPLOY / "jupyterhub_config.py"}"'
        with open(hub.log, "w") as log:
            hub.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                         "set -e\n" + hub.cover_script + command],
                                        cwd=state, env=env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        # the hub's log stays beside the screenshots, its shutdown included (callbacks run last first)
        stack.callback(print, f"\nJupyterHub log: {screenshot_root / 'test_hub_jupyterhub.log'}")
        stack.callback(shutil.copy, hub.log, screenshot_root / "test_hub_jupyterhub.log")
        stack.callback(_stop, hub, set(uids.values()))
        # lessons 1 and 2 released while the hub starts (no student can log in before it answers)
        for lesson in (LESSON, REVIEWED):
            released = hub.as_user(COURSE_ACCOUNT, str(BIN / "nbgrader"), "release_assignment", lesson,
                                   cwd=hub.course_dir)
            assert released.returncode == 0, released.stdout + released.stderr
        _wait_for_hub(hub)
        yield hub


# --------------------------------------------------------------------------- in the browser

def log_in(page, hub: Hub, name: str, then: str | None = None) -> None:
    """The hub's login form with ``name``'s password; waits for ``then`` (a path on the hub; default: the
    user's own JupyterLab, which the hub starts after the login)."""
    target = then or f"/user/{name}/lab"
    page.goto(f"{hub.url}/hub/login" + (f"?next={urllib.parse.quote(then, safe='')}" if then else ""))
    page.fill("#username_input", name)
    page.fill("#password_input", hub.passwords[name])
    page.click("#login_submit")
    page.wait_for_url(lambda url: urllib.parse.urlparse(url).path.startswith(target), timeout=90_000)
    if then is None:
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=60_000)


def assignment_list(page):
    """Nbgrader → Assignment List; returns the panel once its lists have loaded."""
    lab.menu(page, "Nbgrader", "Assignment List")
    panel = page.locator("#assignments")
    panel.wait_for()
    page.wait_for_function("() => [...document.querySelectorAll('#assignments .list_loading')]"
                           ".every(e => e.offsetParent === null)")
    return panel


def item_button(page, section: str, label: str, lesson: str = LESSON):
    """The ``label`` button of ``lesson``'s row in the ``section`` list (released, fetched, submitted)."""
    row = page.locator(f"#{section}_assignments_list .list_item", has_text=lesson).first
    row.wait_for(timeout=60_000)
    return row.locator("button", has_text=re.compile(rf"^\s*{label}\s*$")).first


def hand_in(page, hub: Hub, name: str, answer: str | None, folder: Path, shots: list[Path]) -> str:
    """Step 1 for student ``name``: log in, fetch lesson 1 from the Assignments list, open it and run it down to
    the worked example's own numbers, type ``answer`` into the worked example and press Validate (when given),
    submit. Returns the text the numbers' cell printed (see :func:`shown_numbers`)."""
    log_in(page, hub, name)
    assignment_list(page)
    lab.screenshot(page, folder, f"{name}_released", shots)
    item_button(page, "released", "Fetch").click()
    submit = item_button(page, "fetched", "Submit")
    notebook = hub.home(name) / LESSON / f"{LESSON}.ipynb"
    assert notebook.is_file(), f"Fetch did not put {LESSON} into {name}'s home"
    # open it as a student does, from the fetched assignment's list of notebooks (no page reload)
    row = page.locator("#fetched_assignments_list .list_item", has_text=LESSON).first
    row.locator("a.assignment-notebooks-link").click()
    row.locator(".assignment-notebooks .item_name a", has_text=LESSON).first.click()
    lab.wait_notebook_shown(page, hub.home(name), f"{LESSON}/{LESSON}.ipynb")
    shown = shown_numbers(page, notebook)
    lab.screenshot(page, folder, f"{name}_own_numbers", shots)
    if answer is not None:
        cells = lab.notebook_cells(notebook)
        exercise = lab.cell_index(notebook, "worked_example")
        lab.set_cell_source(page, exercise, answer)
        status, text = lab.validate(page)  # saves the notebook first
        lab.screenshot(page, folder, f"{name}_validated", shots)
        lab.close_dialog(page)
        graded = [c for c in cells if c["nbgrader"].get("grade") and not c["nbgrader"].get("solution")]
        # every test cell fails but the worked example's two (its average and its maximum)
        assert status == "failed" and text.count("The following cell failed") == len(graded) - 2, \
            f"Validate after answering the worked example only: {status}\n{text}"
        assert "by_hand_avg" not in text, "the typed answer did not reach the saved notebook"
    assignment_list(page)
    submit = item_button(page, "fetched", "Submit")
    submit.click()
    item_button(page, "submitted", "Fetch Feedback").wait_for()
    lab.screenshot(page, folder, f"{name}_submitted", shots)
    return shown


#: The worked example's cell prints the top-left window of the student's own matrix (the matrix is its picture).
TOP_LEFT = "Your top-left window: ("


def shown_numbers(page, notebook: Path) -> str:
    """Run the open lesson 1 from its set-up cell down to the cell that shows the worked example's own numbers
    (Shift+Enter, as a student does); the lines that cell and the id cell printed (whose numbers, which)."""
    cells = lab.notebook_cells(notebook)
    numbers = next(i for i, c in enumerate(cells) if 'variant("lesson1_by_hand", "worked_example")' in c["source"])
    first = next(i for i, c in enumerate(cells) if c["type"] == "code")
    lab.run_cells_from(page, first, numbers - first + 1)
    outputs = lab.cell_outputs(page)
    assert not any(out["error"] for out in outputs[:numbers + 1]), \
        [lab.exception_line(out["error"]) for out in outputs[:numbers + 1] if out["error"]]
    assert any(w > 0 and h > 0 for w, h in outputs[numbers]["images"]), "the own numbers' picture did not render"
    text = "\n".join(out["text"] for out in outputs[first:numbers + 1])
    return "\n".join(line.strip() for line in text.splitlines() if "drawn for" in line or TOP_LEFT in line)


def expected_numbers(name: str) -> str:
    """What the worked example's cell prints for hub user ``name``: the top-left window of the matrix that
    ``course.variants`` draws for them (computed here, in the test's process)."""
    from course.variants import draw

    matrix = draw(LESSON, "worked_example", name)["matrix"]
    window = [float(v) for v in (*matrix[0][:2], *matrix[1][:2])]
    return TOP_LEFT + " + ".join(f"{v:g}" for v in window) + f") / 4 = {sum(window) / 4:g}"


def test_the_course_on_a_hub(hub, browser, screenshots):
    folder, shots = screenshots
    alice, bob = STUDENTS
    # alice's own numbers: her notebook draws them from her hub login, the grader from the exchange's owner
    answer = hand_sources(alice, solution_cells(lab.REPO / "source" / LESSON / f"{LESSON}.ipynb"))["worked_example"]

    @contextlib.contextmanager
    def session(name):
        """A page in a fresh browser context (each session logs in anew); a failure inside leaves a
        screenshot of the page."""
        with lab.chromium_page(browser) as (page, _):
            try:
                yield page, None
            except BaseException:
                with contextlib.suppress(Exception):
                    lab.screenshot(page, folder, f"{name}_FAILED", shots)
                raise

    # 1. both students hand in through the Assignments list; alice answers the worked example first
    shown = {}
    for name, typed in ((alice, answer), (bob, None)):
        with session(name) as (page, _):
            shown[name] = hand_in(page, hub, name, typed, folder, shots)
    # ... each saw their own numbers in the worked example's cell (issue 55): the hub login's variant
    for name, text in shown.items():
        assert f"drawn for your hub login {name!r}" in text, f"{name}'s id cell: {text!r}"
        assert expected_numbers(name) in text, f"{name}'s worked example shows {text!r}, drew {expected_numbers(name)!r}"
    assert shown[alice].splitlines()[-1] != shown[bob].splitlines()[-1], f"the same numbers for both: {shown}"

    # ... and alice hands in lesson 2 from her terminal: honest, but its forward's loop rule is unproved
    hand_in_reviewed(hub, alice)

    # 2. the course account (an ordinary user) collects and grades with the trusted grader
    course = hub.course_dir
    placed = {}
    for lesson in (REVIEWED, LESSON):
        course_command(hub, "nbgrader", "collect", lesson)
        collected = json.loads((course / "reports" / "exchange_collect.json").read_text())  # the course's collect
        assert not collected["skipped"], collected
        placed[lesson] = sorted(p["student"] for p in collected["placed"])
    assert placed == {REVIEWED: [alice], LESSON: [alice, bob]}, placed
    done = course_command(hub, "avgpool-course", "grade", "-q")
    print(done.stdout.strip().splitlines()[-1])  # the summary line: how many, how long, which containment
    grades = export.read_grades(course)
    full = grades.max_score[REVIEWED]
    assert grades.score == {(alice, LESSON): 2.0, (bob, LESSON): 0.0, (alice, REVIEWED): full - 2}, grades.score
    assert manual_grade(course, REVIEWED, "forward_avoids", alice) == (0, None, True), "unproved: 0 until read"
    # ... the instructor opens formgrader through the hub: the course service, their group's
    with session(INSTRUCTOR) as (page, _):
        log_in(page, hub, INSTRUCTOR, then=f"/services/{COURSE}/formgrader")
        page.get_by_text(LESSON).first.wait_for()
        lab.screenshot(page, folder, "instructor_formgrader", shots)
        gradebook = f"{hub.url}/services/{COURSE}/formgrader/gradebook/{LESSON}/{LESSON}"
        page.goto(gradebook)
        page.get_by_role("button", name="Show All Names").click()
        for name, score in ((alice, "2 / 25"), (bob, "0 / 25")):
            row = page.locator("tr", has=page.locator("a.name-shown", has_text=name))
            assert score in row.inner_text(), f"formgrader's row of {name}: {row.inner_text()!r}, expected {score}"
        lab.screenshot(page, folder, "instructor_gradebook", shots)
        # a manual grade for bob (the worked example's average: its 1 point), a comment for alice
        for name, fill in ((bob, {"input.score#worked_example_tests": "1"}),
                           (alice, {"#worked_example-comment": COMMENT})):
            page.goto(gradebook)
            link = page.locator("a.name-shown", has_text=name)
            link.wait_for(state="attached")
            page.goto(f"{hub.url}{link.get_attribute('href')}")  # the submission (its link hides the name)
            page.wait_for_function("() => window.formgrader && formgrader.grades && formgrader.grades.loaded"
                                   " && formgrader.comments && formgrader.comments.loaded")  # both in their inputs
            for selector, value in fill.items():
                page.locator(selector).fill(value)
                page.locator(selector).press("Tab")  # formgrader saves on change
            lab.screenshot(page, folder, f"instructor_grades_{name}", shots)
            wait_saved(course, name)
        # the review path: formgrader flags alice's lesson 2 "needs manual grade"; the instructor reads the
        # loops (they compute each window) and gives the cell its 2 points in its score box
        page.goto(f"{hub.url}/services/{COURSE}/formgrader/gradebook/{REVIEWED}/{REVIEWED}")
        page.get_by_role("button", name="Show All Names").click()
        row = page.locator("tr", has=page.locator("a.name-shown", has_text=alice))
        assert row.locator(".needs-manual-grade").get_attribute("data-search") == "needs manual grade", row.inner_text()
        page.goto(f"{hub.url}{row.locator('a.name-shown').get_attribute('href')}")
        page.wait_for_function("() => window.formgrader && formgrader.grades && formgrader.grades.loaded")
        box = page.locator("input.score#forward_avoids")
        assert "needs_manual_grade" in box.get_attribute("class"), box.get_attribute("class")
        box.fill("2")
        box.press("Tab")  # formgrader saves on change
        lab.screenshot(page, folder, "instructor_review_forward_avoids", shots)
        end = time.monotonic() + 30
        while manual_grade(course, REVIEWED, "forward_avoids", alice)[1] != 2 and time.monotonic() < end:
            time.sleep(0.25)
        assert manual_grade(course, REVIEWED, "forward_avoids", alice)[:2] == (0, 2), "formgrader did not save it"
        # the class report's item analysis and the copying page (issue 52), opened through the course service
        course_command(hub, "avgpool-course", "report", "--copying")
        check_report_pages(page, hub, folder, shots)
    course_command(hub, "avgpool-course", "export")
    (line,) = [r for r in csv.DictReader((course / "reports" / "grades.csv").open()) if r["student"] == alice]
    assert float(line[REVIEWED]) == full, f"grades.csv: alice's {REVIEWED} with the instructor's 2 points: {line}"

    # 4. (before feedback) what a student cannot reach: the other's hand-in, the course folder, formgrader, the other's server
    inbound = hub.exchange / COURSE / "inbound"
    # nbgrader's inbound/ cannot be listed, and a hand-in's folder ends in a random string: its files are
    # world-readable, so nobody may learn that name (nbgrader's design; bob would read it by its full path)
    theirs = next(inbound.glob(f"{alice}+{LESSON}+*"))
    assert len(theirs.name.rsplit("+", 1)[-1]) >= 12, f"hand-in folder without a random part: {theirs.name}"
    for argv in (("ls", str(inbound)), ("ls", str(course / "source")),
                 ("cat", str(course / "gradebook.db")), ("cat", str(hub.home(alice) / LESSON / f"{LESSON}.ipynb"))):
        done = hub.as_user(bob, *argv)
        assert done.returncode != 0 and "Permission denied" in done.stderr, f"{bob} ran {' '.join(argv)}: {done.stdout[:200]}"
    with session(bob) as (page, _):
        log_in(page, hub, bob, then="/hub/home")  # the hub's cookie is what the refusals are about
        for path in (f"/services/{COURSE}/formgrader", f"/user/{alice}/lab"):
            response = page.goto(f"{hub.url}{path}")
            lab.screenshot(page, folder, f"{bob}_refused_{path.split('/')[2]}", shots)
            assert response.status == 403, f"{bob} opened {path}: HTTP {response.status}"
        # ... and their own server has no instructor tools: no Create Assignment toolbar, no formgrader
        page.goto(f"{hub.url}/user/{bob}/lab", wait_until="domcontentloaded")  # the page config is in the HTML
        disabled = json.loads(page.locator("#jupyter-config-data").text_content())["disabledExtensions"]
        assert {"@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader"} <= set(disabled), disabled
        response = page.goto(f"{hub.url}/user/{bob}/formgrader")
        assert response.status == 404, f"{bob}'s own server serves formgrader: HTTP {response.status}"

    # ... and releases feedback (nbgrader generate_feedback: the same pages as avgpool-course feedback)
    for lesson in (LESSON, REVIEWED):
        for step in ("generate_feedback", "release_feedback"):
            course_command(hub, "nbgrader", step, lesson, timeout=240)

    # 3. each student fetches feedback: their own score, no hidden test
    hidden = hidden_lines(lab.REPO / "source" / LESSON / f"{LESSON}.ipynb")
    for name, score in ((alice, 2.0), (bob, 1.0)):
        with session(name) as (page, _):
            log_in(page, hub, name)
            text = fetch_feedback(page, hub, name, LESSON, folder, shots)
            assert re.search(rf"Score:\s*{score:g}(\.0+)?\s*/", text), f"{name}'s feedback does not show {score}:\n{text[:800]}"
            if name == alice:
                assert COMMENT in text, f"the instructor's comment is not in {name}'s feedback:\n{text[:800]}"
            shown = [line for line in hidden if line in text]
            assert not shown, f"{name}'s feedback shows hidden test lines: {shown[:3]}"
            if name == alice:  # the review path's end: her lesson 2 feedback with the instructor's 2 points
                text = fetch_feedback(page, hub, name, REVIEWED, folder, shots)
                assert re.search(rf"Score:\s*{full:g}(\.0+)?\s*/\s*{full:g}", text), f"lesson 2's feedback:\n{text[:800]}"
                assert re.search(r'name="forward_avoids".*?Score: 2(\.0)? / 2', page.content(), flags=re.S), \
                    "lesson 2's feedback: the instructor's 2 points for forward_avoids"
                shown = [line for line in hidden_lines(lab.REPO / "source" / REVIEWED / f"{REVIEWED}.ipynb") if line in text]
                assert not shown, f"{name}'s lesson 2 feedback shows hidden test lines: {shown[:3]}"


def check_report_pages(page, hub: Hub, folder: Path, shots: list[Path]) -> None:
    """The instructor opens ``reports/report.html#items`` and ``reports/copying.html`` (``avgpool-course report
    --copying``) from the course folder through the hub (the course service's files URL): the item analysis's
    heading, table and picture and the copying page's heading render, and neither page asks anything of
    another host than the hub (every request the hub's own URL or ``data:``)."""
    requests: list[str] = []

    def record(request) -> None:
        requests.append(request.url)

    page.on("request", record)
    files = f"{hub.url}/services/{COURSE}/files/reports"
    response = page.goto(f"{files}/report.html#items")
    assert response.status == 200, f"report.html through the hub: HTTP {response.status}"
    heading = page.locator("#items + h2")
    assert heading.inner_text().startswith("Item analysis"), heading.inner_text()
    heading.scroll_into_view_if_needed()
    rows = page.locator("table.items tbody tr")
    cells = [rows.nth(i).inner_text() for i in range(rows.count())]
    assert any("worked_example_tests" in row for row in cells), f"item analysis rows: {cells}"
    picture = page.locator("#items ~ img").first  # the difficulty-against-discrimination picture, embedded
    assert picture.get_attribute("src").startswith("data:image/png;base64,"), picture.get_attribute("src")[:60]
    assert picture.evaluate("i => i.complete && i.naturalWidth > 0"), "the item analysis picture did not render"
    lab.screenshot(page, folder, "instructor_report_items", shots)
    response = page.goto(f"{files}/copying.html")
    assert response.status == 200, f"copying.html through the hub: HTTP {response.status}"
    assert page.locator("h1").inner_text() == "Copying leads", page.locator("h1").inner_text()
    assert "never a grade" in page.locator(".lead").inner_text(), page.locator(".lead").inner_text()
    assert page.locator("h2", has_text=LESSON).count() == 1, page.locator("body").inner_text()[:800]
    lab.screenshot(page, folder, "instructor_copying", shots)
    page.remove_listener("request", record)
    away = [url for url in requests if not (url.startswith(f"{hub.url}/") or url.startswith("data:"))]
    assert requests and not away, f"the report pages asked another host: {away}"


def course_command(hub: Hub, tool: str, *argv: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """``tool argv`` (``nbgrader`` or ``avgpool-course``) as the course account in the course folder; it must succeed."""
    done = hub.as_user(COURSE_ACCOUNT, str(BIN / tool), *argv, cwd=hub.course_dir, timeout=timeout)
    assert done.returncode == 0, f"{tool} {' '.join(argv)} as {COURSE_ACCOUNT}:\n{done.stdout}\n{done.stderr}"
    return done


def hand_in_reviewed(hub: Hub, name: str) -> None:
    """``name`` fetches lesson 2 and submits it from a terminal (``nbgrader fetch_assignment``/``submit``), with
    the reference's answers (its own predictions) but the forward written with a ``while`` over the rows
    (:data:`WHILE_FORWARD`)."""
    import nbformat

    from autograder.sample_class import fill

    for step in ("fetch_assignment", "submit"):
        if step == "submit":  # the student's own file: written into, so it keeps its owner
            notebook = hub.home(name) / REVIEWED / f"{REVIEWED}.ipynb"
            cells = hand_sources(name, solution_cells(lab.REPO / "source" / REVIEWED / f"{REVIEWED}.ipynb"),
                                 REVIEWED)  # the student's own predictions (variants on)
            nbformat.write(fill(nbformat.read(notebook, as_version=4), {**cells, "avg_pool2d_loops": WHILE_FORWARD}),
                           str(notebook))
        done = hub.as_user(name, str(BIN / "nbgrader"), step, REVIEWED)
        assert done.returncode == 0, f"nbgrader {step} {REVIEWED} as {name}:\n{done.stdout}\n{done.stderr}"


def manual_grade(course: Path, lesson: str, grade_id: str, name: str) -> tuple:
    """(auto score, manual score, needs manual grade) of ``name``'s cell ``grade_id`` in the gradebook."""
    with coursedir.open_gradebook(course) as gb:
        grade = gb.find_grade(grade_id, lesson, lesson, name)
        return grade.auto_score, grade.manual_score, grade.needs_manual_grade


def fetch_feedback(page, hub: Hub, name: str, lesson: str, folder: Path, shots: list[Path]) -> str:
    """``name`` presses Fetch Feedback on ``lesson``'s row (back in their JupyterLab) and opens the page: its text."""
    if urllib.parse.urlparse(page.url).path != f"/user/{name}/lab":
        page.goto(f"{hub.url}/user/{name}/lab")
        page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=60_000)
    assignment_list(page)
    with page.expect_response(lambda r: "/assignments/fetch_feedback" in r.url) as fetched:
        item_button(page, "submitted", "Fetch Feedback", lesson).click()  # the server answers once it has copied
    assert fetched.value.status == 200, f"{name}'s Fetch Feedback of {lesson}: HTTP {fetched.value.status}"
    pages = sorted(hub.home(name).glob(f"{lesson}/feedback/*/{lesson}.html"))
    assert pages, f"no feedback of {lesson} in {name}'s home after Fetch Feedback"
    page.goto(f"{hub.url}/user/{name}/files/{pages[-1].relative_to(hub.home(name))}")
    text = page.locator("body").inner_text()
    lab.screenshot(page, folder, f"{name}_feedback" + ("" if lesson == LESSON else f"_{lesson}"), shots)
    return text


def wait_saved(course: Path, name: str, timeout_s: float = 30.0) -> None:
    """Wait until formgrader has written ``name``'s manual grade or comment into the gradebook."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        with coursedir.open_gradebook(course) as gb:
            grade = gb.find_grade("worked_example_tests", LESSON, LESSON, name).manual_score
            comment = gb.find_comment("worked_example", LESSON, LESSON, name).manual_comment
        if (name == STUDENTS[1] and grade == 1) or (name == STUDENTS[0] and comment == COMMENT):
            return
        time.sleep(0.25)
    raise AssertionError(f"formgrader did not save {name}'s grade or comment (grade {grade}, comment {comment!r})")


def hidden_lines(source: Path) -> list[str]:
    """The lines of every hidden test of ``source`` (long enough to be telling)."""
    lines = []
    for cell in lab.notebook_cells(source):
        parts = cell["source"].split("### BEGIN HIDDEN TESTS")
        for part in parts[1:]:
            lines += [line.strip() for line in part.split("### END HIDDEN TESTS")[0].splitlines() if len(line.strip()) > 20]
    return lines
