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
from typing import Iterator

import pytest

_LOCK = "/tmp/avgpool-course-test-accounts.lock"


def _accounts_command(*argv: str, check: bool) -> None:
    """Run ``useradd``/``userdel`` while holding the lock that test workers share."""
    with open(_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(list(argv), check=check)


@contextlib.contextmanager
def local_account(name: str, tools: tuple[str, ...], why: str, system: bool = False) -> Iterator[int]:
    """The uid of account ``name``; skips (fails under CI, saying ``why``) without root or ``tools``."""
    if os.geteuid() != 0 or not all(shutil.which(tool) for tool in tools):
        if os.environ.get("CI"):
            pytest.fail(f"{why}: it needs root and {', '.join(tools)}")
        pytest.skip(f"needs root and {', '.join(tools)}")
    created = False
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        _accounts_command("useradd", *(["--system"] if system else []), "--no-create-home", "--shell",
                          "/usr/sbin/nologin", name, check=True)
        uid, created = pwd.getpwnam(name).pw_uid, True
    try:
        yield uid
    finally:
        if created:
            _accounts_command("userdel", name, check=False)
