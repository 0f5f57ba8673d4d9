"""A local account for a test that runs something as another user (made with ``useradd`` as root when
missing, removed afterwards if the test made it). ``useradd`` and ``userdel`` of parallel test workers take turns
(a lock file), since either refuses while the other holds ``/etc/passwd``."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

_LOCK = "/tmp/avgpool-course-test-accounts.lock"


def _accounts_command(*argv: str, check: bool) -> None:
    """Run ``useradd``/``userdel`` while holding the lock that test workers share."""
    with open(_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(list(argv), check=check)


@contextlib.contextmanager
def local_account(name: str, tools: tuple[str, ...], why: str, system: bool = False,
                  home: str | None = None) -> Iterator[int]:
    """The uid of account ``name`` (home folder ``home``, not created, when given); skips (fails under CI,
    saying ``why``) without root or ``tools``."""
    if os.geteuid() != 0 or not all(shutil.which(tool) for tool in tools):
        if os.environ.get("CI"):
            pytest.fail(f"{why}: it needs root and {', '.join(tools)}")
        pytest.skip(f"needs root and {', '.join(tools)}")
    created = False
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        _accounts_command("useradd", *(["--system"] if system else []), "--no-create-home",
                          *(["--home-dir", home] if home else []), "--shell", "/usr/sbin/nologin", name, check=True)
        uid, created = pwd.getpwnam(name).pw_uid, True
    try:
        yield uid
    finally:
        left = processes_of(uid, wait=10.0)
        if left:  # what ran as the account outlived the test: say so, end it, then remove the account
            print(f"WARNING: {len(left)} processes of {name} (uid {uid}) outlived the test: " + "; ".join(left),
                  file=sys.stderr, flush=True)
            for line in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(line.split()[0]), 9)
            processes_of(uid, wait=5.0)
        if created:
            _accounts_command("userdel", name, check=False)


def processes_of(uid: int, wait: float = 0.0) -> list[str]:
    """``"pid command line"`` of each process whose real uid is ``uid``, once none is left or after ``wait``
    seconds (a process that is ending is given that long)."""
    import time

    deadline = time.monotonic() + wait
    while True:
        found = []
        for status in Path("/proc").glob("[0-9]*/status"):
            with contextlib.suppress(OSError):
                uids = next(line for line in status.read_text().splitlines() if line.startswith("Uid:"))
                if int(uids.split()[1]) == uid:
                    command = (status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    found.append(f"{status.parent.name} {command.strip()[:200]}")
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.2)


#: Shell lines (run as root in a mount namespace of its own: ``unshare --mount --propagation private``) after
#: which every user can run this Python although it lives below a folder others cannot traverse (/root,
#: mode 700): that folder ($COVER) is covered by a tmpfs others may traverse and the interpreter's folder
#: ($PREFIX_ROOT) is moved back into it (through $STAGE); the host's folder keeps its mode.
#: :func:`interpreter_cover` gives the variables.
COVER_INTERPRETER = r"""
mount --bind "$PREFIX_ROOT" "$STAGE"
mount -t tmpfs -o mode=0755,size=64k tmpfs "$COVER"
mkdir -p "$PREFIX_ROOT"
mount --move "$STAGE" "$PREFIX_ROOT"
"""


@contextlib.contextmanager
def interpreter_cover() -> Iterator[tuple[str, dict[str, str]]]:
    """``(shell lines, their variables)``: :data:`COVER_INTERPRETER` and ``COVER``, ``PREFIX_ROOT``, ``STAGE``
    (a folder made for the block); no lines where every folder above this Python is traversable."""
    real = Path(os.path.realpath(sys.executable))
    for ancestor in reversed(real.parents):
        if ancestor != Path("/") and not os.stat(ancestor).st_mode & 0o001:
            break
    else:
        yield "", {}
        return
    stage = tempfile.mkdtemp(prefix="cover-stage-")
    try:
        yield COVER_INTERPRETER, {"COVER": str(ancestor), "STAGE": stage,
                                  "PREFIX_ROOT": str(ancestor / real.relative_to(ancestor).parts[0])}
    finally:
        os.rmdir(stage)


#: Run as root in a mount namespace of its own where every user can reach the interpreter (it lives under
#: /root, mode 700: COVER_INTERPRETER goes first), then become the account with a clean environment.
AS_ACCOUNT = r"""
cd "$REPO"
if [ -n "$CGROUP" ]; then echo $$ > "$CGROUP/cgroup.procs"; fi
exec setpriv --reuid="$ACCOUNT" --regid="$ACCOUNT" --clear-groups \
    env -i PATH=/usr/bin:/bin HOME=/nonexistent LANG=C.UTF-8 TMPDIR="$TA_TMPDIR" "$PYTHON" -I -c "$CODE"
"""


def run_as(account: str, code: str, repo: Path, tmpdir: str = "/tmp", cgroup: str = "", capture: bool = True,
           timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -I -c code`` in ``repo`` as ``account`` (root only), with ``sys.path`` as this venv's, a clean
    environment, temporary files in ``tmpdir``, in the cgroup v2 folder ``cgroup`` when given; output captured
    unless ``capture`` is False."""
    with interpreter_cover() as (cover, variables):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **variables, "REPO": str(repo), "ACCOUNT": account,
               "TA_TMPDIR": tmpdir, "PYTHON": sys.executable, "CGROUP": cgroup,
               "CODE": f"import sys; sys.path[:0] = {sys.path!r}\n" + code}
        return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               "set -e\n" + cover + AS_ACCOUNT], env=env, capture_output=capture, text=True,
                              timeout=timeout)
