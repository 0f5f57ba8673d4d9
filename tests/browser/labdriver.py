"""Drive the student's JupyterLab in headless Chromium (Playwright, sync API) for the browser tests.

Everything here either prepares a temporary course folder, runs a JupyterLab server on localhost, or
acts in the page as a student would (menus, editor, toolbar) and reads back what the page shows.
Checks raise ``AssertionError`` with a message that says what the student would have seen, so the
negative tests can show that each check really detects its fault.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from shared import REPO

VENV_BIN = Path(sys.executable).parent
LESSON = "lesson1_by_hand"
STUB = f"{LESSON}/{LESSON}.ipynb"            # the release notebook, as the student receives it
SOLVED = f"{LESSON}/{LESSON}_solved.ipynb"   # the same notebook with the reference solutions filled in
NBGRADER_LAB = "@jupyter/nbgrader"
NBGRADER_SERVER = (
    "nbgrader.server_extensions.validate_assignment",
    "nbgrader.server_extensions.assignment_list",
    "nbgrader.server_extensions.course_list",
    "nbgrader.server_extensions.formgrader",
)
#: nbgrader's two halves, as disable_nbgrader names them, and the jupyter command that lists each kind.
LISTINGS = {"labextension": ("labextension", "list"), "server_extension": ("server", "extension", "list")}
PARTS = tuple(LISTINGS)
STUB_ERROR = 'NotImplementedError: Write your solution here, then run the tests below.'
# Launch flags: no sandbox (root in CI), no GPU, and nothing that phones home.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INSTALL_HINT = ("install Debian's Chromium: `sudo apt-get install -y --no-install-recommends chromium` "
                "(or run `.ci/run`, which does it); skip these tests with `-m \"not browser\"`")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
TIMEOUT_MS = 60_000  # the longest any single wait in the page may take


def in_ci() -> bool:
    """True when ``CI`` is set to anything but empty, 0, false or no (``.ci/run`` sets ``CI=true``): a
    browser test that cannot run then fails instead of skipping."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def find_chromium() -> str | None:
    """Path of the machine's Chromium (Debian's ``/usr/bin/chromium`` first), or None.

    ``$BROWSER_CHROMIUM``, when set, is the only candidate (another build, or a missing one to try the
    skip policy).
    """
    override = os.environ.get("BROWSER_CHROMIUM")
    candidates = [override] if override else ["/usr/bin/chromium", shutil.which("chromium"),
                                              shutil.which("chromium-browser")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


# --------------------------------------------------------------------------- the course folder

def strip_solution_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines()
                     if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


def solved_notebook(release_nb: Path, source_nb: Path):
    """The release notebook with every solution cell replaced by the instructor's solution (markers removed)."""
    nb = nbformat.read(release_nb, as_version=4)
    solutions = {cell.metadata["nbgrader"]["grade_id"]: cell.source
                 for cell in nbformat.read(source_nb, as_version=4).cells
                 if cell.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = strip_solution_markers(solutions[meta["grade_id"]])
    return nb


def prepare_course(root: Path) -> Path:
    """Copy ``release/`` to ``root`` and add the solved copy of lesson 1 beside the stub; returns ``root``."""
    shutil.copytree(REPO / "release", root)
    nb = solved_notebook(root / STUB, REPO / "source" / LESSON / f"{LESSON}.ipynb")
    nbformat.write(nb, root / SOLVED)
    return root


def insert_cell(path: Path, index: int, source: str) -> None:
    """Insert a plain code cell into the notebook at ``path`` (to plant a fault)."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(index, nbformat.v4.new_code_cell(source))
    nbformat.write(nb, path)


def notebook_cells(path: Path) -> list[dict]:
    nb = nbformat.read(path, as_version=4)
    return [{"type": c.cell_type, "source": c.source, "nbgrader": c.metadata.get("nbgrader", {})}
            for c in nb.cells]


def cell_index(path: Path, grade_id: str) -> int:
    for i, cell in enumerate(notebook_cells(path)):
        if cell["nbgrader"].get("grade_id") == grade_id:
            return i
    raise KeyError(f"{path.name} has no cell with grade_id {grade_id!r}")


# --------------------------------------------------------------------------- the server

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def jupyter_env(home: Path, config_dir: Path | None = None) -> dict[str, str]:
    """Environment for jupyter commands: the project's venv first, per-test data/runtime dirs.

    The venv's own configuration (``.venv/etc/jupyter``, which enables nbgrader's server extensions)
    applies exactly as for a student. The user configuration is ``config_dir`` when given, else the
    caller's ``JUPYTER_CONFIG_DIR`` when set (so a configuration that disables nbgrader can be tried,
    see README), else an empty folder under ``home`` (the user's ``~/.jupyter`` never leaks in).
    """
    env = dict(os.environ)
    for name in ("config", "data", "runtime"):
        (home / name).mkdir(parents=True, exist_ok=True)
    config = config_dir or os.environ.get("JUPYTER_CONFIG_DIR") or home / "config"
    env.update(JUPYTER_CONFIG_DIR=str(config), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTER_PLATFORM_DIRS="1",
               IPYTHONDIR=str(home / "ipython"), PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}")
    env.pop("JUPYTER_PATH", None)
    env.pop("NBGRADER_EXECUTION", None)
    env.pop("MPLBACKEND", None)  # a student's lab has none (grading in this test process sets Agg: no inline plots)
    return env


def jupyter(env: dict[str, str], *commands: tuple[str, ...], timeout: int = 60) -> list[str]:
    """Run each ``jupyter COMMAND`` from the venv, side by side; their stdout+stderr without colour codes."""
    procs = [subprocess.Popen([str(VENV_BIN / "jupyter"), *command], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for command in commands]
    return [ANSI.sub("", proc.communicate(timeout=timeout)[0]) for proc in procs]


@dataclass
class LabServer:
    port: int
    token: str
    root: Path
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen = field(repr=False)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """URL that opens ``path`` (relative to the root) in a fresh JupyterLab workspace."""
        return f"{self.base}/lab/tree/{path}?reset&token={self.token}"

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.base}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        for kernel in self.api("/api/kernels"):
            self.api(f"/api/kernels/{kernel['id']}", method="DELETE")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@contextmanager
def lab_server(root: Path, home: Path, config_dir: Path | None = None, start_timeout: float = 60.0):
    """Run ``jupyter lab`` on ``root`` (localhost, random port and token) until the block ends.

    No network: the extension manager is read-only, news and update checks are off. On exit the
    server is stopped with SIGTERM (it shuts its kernels down) and killed with its process group
    if it does not stop within 20 s.
    """
    env = jupyter_env(home, config_dir)
    settings = home / "user-settings"
    # A student would answer JupyterLab's "get notified about Jupyter news?" toast once; answer "never".
    seeded = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    seeded.parent.mkdir(parents=True, exist_ok=True)
    seeded.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = free_port(), secrets.token_hex(16)
    args = [str(VENV_BIN / "jupyter"), "lab", "--no-browser", f"--port={port}", "--port-retries=0",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            f"--LabApp.user_settings_dir={settings}", "--LabApp.extension_manager=readonly",
            "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--ServerApp.open_browser=False"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    log = home / "jupyter-lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(args, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    server = LabServer(port, token, root, env, log, proc)
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{server.log_tail()}")
            try:
                server.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"jupyter lab did not answer in {start_timeout:.0f} s:\n"
                                       f"{server.log_tail()}") from None
                time.sleep(0.25)
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def disable_nbgrader(config_dir: Path, part: str) -> None:
    """Disable nbgrader's ``"labextension"`` or its validate ``"server_extension"`` in ``config_dir`` only.

    The same settings ``jupyter labextension disable --level=user`` and ``jupyter server extension
    disable --user`` write, written here directly so that the environment's own configuration (in
    ``.venv/etc/jupyter``, where those commands write by default) is never touched.
    """
    if part == "labextension":
        target, data = config_dir / "labconfig" / "page_config.json", {"disabledExtensions": {NBGRADER_LAB: True}}
    elif part == "server_extension":
        target = config_dir / "jupyter_server_config.json"
        data = {"ServerApp": {"jpserver_extensions": {NBGRADER_SERVER[0]: False}}}
    else:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2))


def environment_config_digest() -> str:
    """A digest of the venv's Jupyter configuration (``<prefix>/etc/jupyter``), to prove tests leave it alone."""
    import hashlib

    digest = hashlib.sha256()
    base = Path(sys.prefix) / "etc" / "jupyter"
    for path in sorted(base.rglob("*")):
        digest.update(str(path.relative_to(base)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


# --------------------------------------------------------------------------- extension checks (CLI and REST)

def cli_extension_problems(env: dict[str, str], parts: tuple[str, ...] = PARTS) -> list[str]:
    """Problems in ``jupyter labextension list`` and ``jupyter server extension list`` ([] when fine).

    Any extension marked X, incompatible or outdated is a problem; nbgrader's lab extension and its
    server extensions must be listed as enabled and OK. ``parts`` runs only the listings of those parts
    (each command costs seconds of CPU).
    """
    problems = []
    outputs = dict(zip(parts, jupyter(env, *[LISTINGS[part] for part in parts])))
    lab, server = outputs.get("labextension"), outputs.get("server_extension")
    if lab is not None:
        for line in lab.splitlines():
            if re.search(r"\bX\b|incompatible|outdated|compatibility errors", line):
                problems.append(f"labextension list: {line.strip()}")
        nbgrader_lines = [line for line in lab.splitlines() if line.strip().startswith(NBGRADER_LAB + " ")]
        if not nbgrader_lines or not re.search(r"\benabled\s+OK\b", nbgrader_lines[0]):
            problems.append(f"labextension list: {NBGRADER_LAB} is not 'enabled OK': "
                            f"{nbgrader_lines[0].strip() if nbgrader_lines else 'not listed'}")
    if server is None:
        return problems
    # The server list has one section per config dir, highest priority (the user's) first: the first
    # section that names an extension decides whether it is enabled.
    state: dict[str, str] = {}
    for match in re.finditer(r"^\s*(\S+)\s+(enabled|disabled)\s*$", server, re.M):
        state.setdefault(match.group(1), match.group(2))
    for name in NBGRADER_SERVER:
        if state.get(name) != "enabled":
            problems.append(f"server extension list: {name} is {state.get(name, 'not listed')}")
        elif not re.search(rf"^\s*{re.escape(name)}\s+(\S+\s+)?OK\s*$", server, re.M):
            problems.append(f"server extension list: {name} did not validate OK")
    return problems


def rest_extension_problems(server: LabServer) -> list[str]:
    """What the extension manager's installed list (``/lab/api/extensions``) reports as not OK."""
    listing = server.api("/lab/api/extensions")  # installed extensions (no query: nothing is searched)
    entries = listing[0] if isinstance(listing, list) and listing and isinstance(listing[0], list) else listing
    problems = [f"extension manager: {e['name']} status {e.get('status')!r}"
                for e in entries if e.get("installed") and e.get("status") not in ("ok", None)]
    names = {e["name"]: e for e in entries}
    if NBGRADER_LAB not in names:
        problems.append(f"extension manager: {NBGRADER_LAB} is not listed")
    elif not names[NBGRADER_LAB].get("enabled"):
        problems.append(f"extension manager: {NBGRADER_LAB} is disabled")
    return problems


# --------------------------------------------------------------------------- the browser

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


@contextmanager
def chromium_browser(executable: str):
    """One headless Chromium (Playwright, sync API) for several pages: launched once, closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def chromium_page(browser, width: int = 1400, height: int = 900):
    """A page in a fresh browser context of ``browser`` (its own cookies, storage and cache, as a fresh
    profile has) that can reach 127.0.0.1 only.

    Yields ``(page, log)`` where ``log`` collects console errors, page errors and blocked requests.
    """
    log = {"console": [], "pageerror": [], "blocked": []}
    context = browser.new_context(viewport={"width": width, "height": height}, service_workers="block")
    try:
        def only_localhost(route):
            host = route.request.url.split("/")[2] if "://" in route.request.url else ""
            if route.request.url.startswith(("data:", "blob:")) or host.split(":")[0] in ("127.0.0.1", "localhost"):
                route.continue_()
            else:
                log["blocked"].append(route.request.url)
                route.abort()

        context.route("**/*", only_localhost)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        page.on("console", lambda m: log["console"].append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: log["pageerror"].append(str(e)))
        yield page, log
    finally:
        context.close()


def wait_kernel_idle(page) -> None:
    """Wait until the visible notebook has a Python kernel and that kernel is idle."""
    page.wait_for_function(
        """(panel) => {
          const p = document.querySelector(panel);
          const name = p && p.querySelector('.jp-KernelName');
          return !!name && /Python/.test(name.textContent)
                 && !!p.querySelector('.jp-Notebook-ExecutionIndicator[data-status="idle"]');
        }""", arg=PANEL, polling=250)


def open_notebook(page, server: LabServer, path: str) -> None:
    """Open ``path`` in a fresh workspace; wait until all its cells are shown and its kernel is idle."""
    page.goto(server.url(path))
    wait_notebook_shown(page, server.root, path)


def close_and_shut_down(page) -> None:
    """File → Close and Shut Down Notebook… on the visible notebook, confirmed; waits until it is closed
    (its kernel is shut down first)."""
    panels = page.locator(".jp-NotebookPanel").count()
    menu(page, "File", "Close and Shut Down Notebook…")
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.wait_for_function("(n) => document.querySelectorAll('.jp-NotebookPanel').length < n", arg=panels)


def open_from_path(page, root: Path, path: str) -> None:
    """File → Open from Path… ``path`` in the running JupyterLab (no page reload); waits as
    :func:`wait_notebook_shown`."""
    menu(page, "File", "Open from Path…")
    page.locator(".jp-Dialog input").fill(path)
    page.locator(".jp-Dialog .jp-mod-accept").click()
    wait_notebook_shown(page, root, path)


def wait_notebook_shown(page, root: Path, path: str) -> None:
    """Wait until the notebook ``path`` (relative to ``root``, the server's folder) is the current tab, with
    all its cells shown and its kernel idle."""
    expected = len(notebook_cells(root / path))
    page.wait_for_function(
        """([panel, name, n]) => {
          const tab = document.querySelector('.lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel');
          const p = document.querySelector(panel);
          return !!tab && tab.textContent === name && !!p
                 && p.querySelectorAll('.jp-Notebook .jp-Cell').length === n
                 && !!p.querySelector('.jp-NotebookPanel-toolbar .jp-KernelName');
        }""", arg=[PANEL, path.rsplit("/", 1)[-1], expected], polling=250)
    wait_kernel_idle(page)


def show_cell(page, index: int, part: str = "") -> None:
    """Scroll cell ``index`` (or its ``part``, a CSS selector inside it) into view and let it paint.

    Off-screen cells are skipped by the browser (CSS content-visibility), so wait two frames.
    """
    target = page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(index)
    if part:
        target = target.locator(part).first
    target.scroll_into_view_if_needed()
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def menu(page, top: str, item: str) -> None:
    """Click ``top`` in the menu bar, then ``item`` in its menu."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(top)}$")).click()
    page.locator(".lm-Menu:not(.lm-mod-hidden) .lm-Menu-itemLabel",
                 has_text=re.compile(rf"^{re.escape(item)}$")).first.click()


_RUN_DONE = """(panel) => {
  const p = document.querySelector(panel);
  if (!p) return false;
  const prompts = [...p.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent.trim());
  const busy = p.querySelector('.jp-Notebook-ExecutionIndicator[data-status="idle"]') === null;
  return !busy && prompts.length > 0 && !prompts.some(t => t.includes('*')) && /\\[\\d+\\]/.test(prompts[0]);
}"""


#: True once every image in the notebook's outputs has finished decoding (a busy machine decodes late).
_IMAGES_DECODED = "(panel) => [...document.querySelectorAll(panel + ' .jp-OutputArea-output img')].every(i => i.complete)"


def run_all(page) -> None:
    """Run → Run All Cells, then wait until no cell is queued or running and the kernel is idle, and
    every output image is decoded."""
    menu(page, "Run", "Run All Cells")
    page.wait_for_function(_RUN_DONE, arg=PANEL, polling=250)
    page.wait_for_function(_IMAGES_DECODED, arg=PANEL, polling=250)


def cell_outputs(page) -> list[dict]:
    """One entry per cell of the visible notebook: prompt, output text, error text, image sizes."""
    return page.evaluate("""(panel) => [...document.querySelectorAll(panel + ' .jp-Notebook .jp-Cell')].map(c => ({
        code: c.classList.contains('jp-CodeCell'),
        prompt: (c.querySelector('.jp-InputPrompt') || {}).textContent || '',
        text: [...c.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent).join('\\n'),
        error: [...c.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
                 .map(o => o.textContent).join('\\n'),
        images: [...c.querySelectorAll('.jp-OutputArea-output img')].map(i => [i.naturalWidth, i.naturalHeight]),
    }))""", PANEL)


def exception_line(error_text: str) -> str:
    """The ``Name: message`` line of a rendered traceback (its last non-empty line)."""
    lines = [line.strip() for line in error_text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def check_first_error_is_stub(cells: list[dict], outputs: list[dict]) -> int:
    """After Run All on the stub: the first error must be the stub's NotImplementedError in a solution cell.

    Returns that cell's index. Any other error (a lesson cell that breaks on its own) fails.
    """
    assert len(outputs) == len(cells), f"the page shows {len(outputs)} cells, the file has {len(cells)}"
    errors = [i for i, out in enumerate(outputs) if out["error"]]
    assert errors, "Run All Cells on the stub showed no error: the exercises' NotImplementedError is missing"
    first = errors[0]
    where = f"cell {first} ({cells[first]['source'].splitlines()[0][:60]!r})"
    assert STUB_ERROR in outputs[first]["error"], (
        f"unexpected error in {where}: {exception_line(outputs[first]['error'])}")
    assert cells[first]["nbgrader"].get("solution"), f"the stub's NotImplementedError came from {where}, " \
                                                     "which is not a solution cell"
    return first


def check_no_errors(cells: list[dict], outputs: list[dict]) -> None:
    """After Run All on a solved notebook: no cell shows an error, every code cell ran."""
    assert len(outputs) == len(cells), f"the page shows {len(outputs)} cells, the file has {len(cells)}"
    broken = [f"cell {i} ({cells[i]['source'].splitlines()[0][:60]!r}): {exception_line(out['error'])}"
              for i, out in enumerate(outputs) if out["error"]]
    assert not broken, "errors after Run All Cells:\n  " + "\n  ".join(broken)
    not_run = [i for i, out in enumerate(outputs) if out["code"] and not re.search(r"\[\d+\]", out["prompt"])]
    assert not not_run, f"code cells that did not run: {not_run}"


def check_plots_render(cells: list[dict], outputs: list[dict]) -> int:
    """Every cell that calls ``plt.show()`` shows at least one decoded ``img``; returns the image count."""
    missing = [i for i, cell in enumerate(cells)
               if cell["type"] == "code" and "plt.show()" in cell["source"]
               and not any(w > 0 and h > 0 for w, h in outputs[i]["images"])]
    assert not missing, f"cells whose plot did not render as an image: {missing}"
    return sum(len(out["images"]) for out in outputs)


def set_cell_source(page, index: int, text: str) -> None:
    """Replace cell ``index``'s source by typing into its CodeMirror editor (select all, insert text)."""
    show_cell(page, index)
    editor = page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(index).locator(".cm-content")
    editor.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(text)
    page.wait_for_function(
        "([panel, i, n]) => document.querySelectorAll(panel + ' .jp-Notebook .jp-Cell')[i]"
        ".querySelector('.cm-content').innerText.trim().length >= n",
        arg=[PANEL, index, len(text.strip().splitlines()[-1])])


def run_cells_from(page, index: int, count: int) -> None:
    """Select cell ``index`` and press Shift+Enter ``count`` times, then wait for the kernel."""
    page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(index).locator(".jp-InputPrompt").click()
    for _ in range(count):
        page.keyboard.press("Shift+Enter")
    page.wait_for_function(_RUN_DONE, arg=PANEL, polling=250)


#: True once the visible notebook's toolbar shows its kernel and every item but the spacer has rendered.
_TOOLBAR_RENDERED = """(panel) => {
  const bar = document.querySelector(panel + ' .jp-NotebookPanel-toolbar');
  const items = bar ? [...bar.querySelectorAll(':scope > .jp-Toolbar-item:not(.jp-Toolbar-spacer)')] : [];
  return !!bar && !!bar.querySelector('.jp-KernelName') && items.length > 0 && items.every(e => e.childElementCount > 0);
}"""


def validate_button(page):
    """nbgrader's Validate button in the notebook toolbar (AssertionError when it is missing)."""
    # The lab extension inserts the button when the panel is made, so it is there once every toolbar item
    # (the spacer aside) has rendered: no fixed wait that an absent button would always cost.
    page.wait_for_function(_TOOLBAR_RENDERED, arg=PANEL, polling=100)
    button = page.locator(f"{PANEL} .jp-NotebookPanel-toolbar .jp-ToolbarButtonComponent",
                          has_text=re.compile(r"^\s*Validate\s*$"))
    if not button.count():
        raise AssertionError("no Validate button in the notebook toolbar: nbgrader's lab extension "
                             f"{NBGRADER_LAB} is not active")
    button.first.wait_for(state="visible")
    return button.first


def validate(page) -> tuple[str, str]:
    """Click Validate and read nbgrader's answer: ``('success'|'failed'|'error', dialog text)``.

    The dialog is closed afterwards.
    """
    validate_button(page).click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(state="visible", timeout=TIMEOUT_MS)
    text = dialog.inner_text()
    if page.locator(".jp-Dialog #validation-message.validation-success").count():
        status = "success"
    elif page.locator(".jp-Dialog #validation-message.validation-failed").count():
        status = "failed"
    else:
        status = "error"
    return status, text


def check_validate_passes(page, while_open=None) -> str:
    """Click Validate and require nbgrader's "Success!"; returns the dialog's text.

    ``while_open()`` (e.g. a screenshot) is called before the dialog is closed.
    """
    status, text = validate(page)
    if while_open is not None:
        while_open()
    close_dialog(page)
    assert status == "success", f"Validate did not succeed ({status}):\n{text}"
    assert "Success! Your notebook passes all the tests." in text, text
    return text


def close_dialog(page) -> None:
    page.locator(".jp-Dialog .jp-mod-accept, .jp-Dialog .jp-Dialog-button").last.click()
    page.locator(".jp-Dialog").wait_for(state="detached")


def page_extension_problems(page, log: dict) -> list[str]:
    """What the page itself shows or logs about extensions that are disabled, failed or incompatible."""
    problems = []
    config = json.loads(page.locator("#jupyter-config-data").text_content())
    loaded = {ext["name"] for ext in config.get("federated_extensions", [])}
    if NBGRADER_LAB not in loaded:
        problems.append(f"page: {NBGRADER_LAB} is not among the loaded extensions")
    disabled = config.get("disabledExtensions", [])
    disabled = [k for k, v in disabled.items() if v] if isinstance(disabled, dict) else list(disabled)
    if any(name == NBGRADER_LAB or name.startswith(NBGRADER_LAB + ":") for name in disabled):
        problems.append(f"page: {NBGRADER_LAB} is disabled ({disabled})")
    shown = page.evaluate("""() => [...document.querySelectorAll('.jp-Notification-Toast, .jp-Dialog')]
                                   .map(e => e.innerText)""")
    problems += [f"page shows: {text.strip()[:200]!r}" for text in shown
                 if re.search(r"incompatible|failed to (load|activate)|build recommended|outdated", text, re.I)]
    problems += [f"console: {text[:300]}" for text in log["console"] + log["pageerror"]
                 if re.search(r"extension|plugin", text, re.I) and re.search(r"fail|error|incompatib", text, re.I)]
    return problems


def open_extension_manager(page) -> str:
    """Open the Extension Manager side panel and return its text (the list of installed extensions)."""
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='extensionmanager.main-view']").click()
    panel = page.locator("#extensionmanager\\.main-view")
    panel.wait_for(state="visible")
    # First use: a disclaimer asks to activate the panel (the read-only manager fetches nothing).
    agree = panel.locator("button, jp-button", has_text=re.compile(r"^\s*Yes\s*$"))
    if agree.count():
        agree.first.click()
    panel.get_by_text(NBGRADER_LAB.split("/")[-1]).first.wait_for(timeout=20_000)
    return panel.inner_text()


def close_extension_manager(page) -> None:
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='extensionmanager.main-view']").click()
    page.locator("#extensionmanager\\.main-view").wait_for(state="hidden")


def screenshot(page, folder: Path, name: str, shots: list[Path]) -> Path:
    path = folder / f"{len(shots) + 1:02d}_{name}.png"
    page.screenshot(path=str(path))
    shots.append(path)
    return path


def cell_source(cells: list[dict], grade_id: str) -> str:
    for cell in cells:
        if cell["nbgrader"].get("grade_id") == grade_id:
            return cell["source"]
    raise KeyError(grade_id)
