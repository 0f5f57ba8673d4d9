"""Warm templates: an interpreter that has imported a lesson's set-up modules and forks a fresh child per
submission (:func:`spawn_warm`), where the platform allows (:func:`forks_warm`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from autograder import stopping
from autograder.grading.sandbox import levels, mounts
from autograder.grading.sandbox.bwrap import bwrap_command, keyring_filter_file
from autograder.grading.sandbox.limits import GraderFault
from autograder.grading.sandbox.mounts import child_plan
from autograder.grading.sandbox.resources import MAX_TEMPLATES, process_default
from autograder.grading.sandbox.runner import RUNNER_SOURCE, end_group, log_tail, clean_env
from autograder.grading.sandbox.uids import process_running


def warm_available(mode: levels.Containment) -> bool:
    """Warm children on Linux in ``namespaces`` and ``rlimits-only`` mode (a user namespace would have to
    be entered after the fork with its uid maps written from outside: those children stay cold)."""
    return sys.platform.startswith("linux") and mode.mode in ("namespaces", "rlimits-only")


def forks_warm(mode: levels.Containment, plan: list[list]) -> bool:
    """Whether a child of ``plan`` is forked from a warm template: a warm child makes only fresh folders
    itself (and its ``/proc``), so a needed path inside one (a checkout or venv under ``/tmp``) starts cold."""
    return warm_available(mode) and all(op[0] in ("proc", "tmpfs", "mqueue") for op in mounts.own_mounts(plan))


def warm_here() -> bool:
    """Whether this machine and checkout grade with warm children (what tests of warm children skip by)."""
    mode = levels.containment()
    return forks_warm(mode, child_plan(mode.namespaces, mode.drop_uid)[0])


class ForkedChild:
    """A child forked by a :class:`Template`, with the part of ``subprocess.Popen`` the sandbox uses."""

    def __init__(self, template: "Template", pid: int):
        self.template, self.pid, self.returncode = template, pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.template.status(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout)
            time.sleep(0.005)
        return self.returncode


class Template:
    """A warm interpreter (``_child.py --template``) that has imported a lesson's set-up modules, with
    ``block`` blocked first, and forks a fresh child per submission (:func:`_child.template_main`).
    Start-up and imports are paid once per grading run, process and lesson instead of once per child."""

    def __init__(self, block: list[str], imports: list[str], start_seconds: float, plan: list[list] | None = None):
        self.lock = threading.Lock()
        # Under bubblewrap (``plan``: the cold child's mounts) its home is its own fresh /tmp, else a folder of ours.
        self.home = "/tmp" if plan is not None else tempfile.mkdtemp(prefix="trusted-template-")
        self.own_home = plan is None
        self.log = tempfile.TemporaryFile(prefix="trusted-template-")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {**clean_env(), "HOME": self.home, "TMPDIR": self.home,
               "MPLCONFIGDIR": os.path.join(self.home, ".matplotlib")}
        runner = [sys.executable, "-I", "-c", RUNNER_SOURCE, "--template", str(theirs.fileno())]
        try:
            with keyring_filter_file() as seccomp:  # inherited by every child it forks
                self.proc = subprocess.Popen(
                    bwrap_command(runner, root=True, plan=plan, template=True, seccomp=seccomp)
                    if plan is not None else runner,
                    stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=env,
                    pass_fds=(theirs.fileno(),) + (() if seccomp is None or plan is None else (seccomp,)),
                    cwd="/" if plan is not None else self.home, start_new_session=True,
                    preexec_fn=stopping.die_with_parent)
        except OSError as exc:
            raise GraderFault(f"the warm sandbox template would not start: {exc}") from None
        finally:
            theirs.close()
        self.sock = ours
        self.sock.settimeout(start_seconds)
        try:
            self.sock.send(json.dumps({"block": list(block), "imports": list(imports),
                                       "mounts": None if plan is None else mounts.own_mounts(plan)}).encode())
            ready = json.loads(self.sock.recv(1 << 16) or b"null")
        except (OSError, ValueError):
            ready = None
        if not isinstance(ready, dict):
            self.close()
            raise GraderFault("the warm sandbox template did not start: "
                              + (log_tail(self.log, 600).strip() or "(no output)"))
        self.sock.settimeout(30)

    def alive(self) -> bool:
        return self.proc.poll() is None and self.sock is not None

    def _ask(self, request: dict, fds: list[int] = ()) -> dict:
        with self.lock:
            if not self.alive():
                raise OSError("the template has ended")
            socket.send_fds(self.sock, [json.dumps(request).encode()], list(fds))
            data = self.sock.recv(1 << 16)
        if not data:
            raise OSError("the template has ended")
        return json.loads(data)

    def spawn(self, fds: list[int]) -> ForkedChild:
        """Fork a child that serves the sandbox protocol on ``fds`` = [read, write, log, the ``cgroup.procs``
        files of its cgroup opened for writing...]; it has joined that cgroup (through the descriptors: the
        template's host is read-only) and leads its own process group when this returns."""
        reply = self._ask({"op": "fork"}, fds)
        if "pid" not in reply:
            raise GraderFault(f"the warm sandbox template could not fork a child: {reply.get('error')}")
        return ForkedChild(self, int(reply["pid"]))

    def status(self, pid: int) -> int | None:
        """The exit status of forked child ``pid`` (``Popen.returncode`` style), ``None`` while it runs."""
        try:
            return self._ask({"op": "wait", "pid": pid}).get("status")
        except (OSError, ValueError):  # the template is gone, and PR_SET_PDEATHSIG took its children
            return None if process_running(pid) else -signal.SIGKILL

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        end_group(self.proc)
        self.log.close()
        if self.own_home:
            shutil.rmtree(self.home, ignore_errors=True)


def spawn_warm(resources, block: list[str], imports: list[str], start_seconds: float, fds: list[int],
               plan: list[list] | None) -> ForkedChild:
    """Fork a child from the run's template for ``(block, imports, plan)`` (``resources``: the run's
    :class:`~.resources.Resources`; ``plan``: the mounts the template's bubblewrap makes, ``None`` without
    namespaces), starting (or restarting) the template when needed; at most
    :data:`~.resources.MAX_TEMPLATES` templates stay warm per run."""
    templates = resources.templates
    key = (tuple(block), tuple(imports), json.dumps(plan))
    for attempt in range(2):
        with resources.lock:
            if resources.closed:
                raise GraderFault("the grading run was closed while it still graded")
            template = templates.pop(key, None)
            if template is None or not template.alive():
                if template is not None:
                    template.close()
                template = Template(block, imports, start_seconds, plan)
            templates[key] = template
            while len(templates) > MAX_TEMPLATES:
                templates.pop(next(iter(templates))).close()
        try:
            return template.spawn(fds)
        except (OSError, ValueError) as exc:  # the template died under us: start it once more
            template.close()
            templates.pop(key, None)
            if attempt:
                raise GraderFault(f"the warm sandbox template stopped answering: {exc}") from None
    raise AssertionError("unreachable")


def close_templates() -> None:
    """Stop the warm templates of the children started outside any grading run (tests)."""
    resources = process_default()
    with resources.lock:
        templates, resources.templates = list(resources.templates.values()), {}
    for template in templates:
        template.close()
