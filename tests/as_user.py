"""Run tests as an unprivileged account, the way an instructor who is not root grades (issue 28):

    .venv/bin/python tests/as_user.py tests/grading/test_corpus.py tests/grading/test_sandbox_channels.py

as root: the account ``avgpool-ta`` is made with ``useradd`` when missing (removed afterwards if made here),
then pytest runs in this repository as that user, with a clean environment and this venv's packages.
``.ci/run`` runs the corpus and the cross-child channel tests this way after ``make test``. Exits with
pytest's status."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The repository first, so that ``import course`` (the package) never finds the folder ``tests/course`` (no
# ``__init__``: a namespace package) when this script's folder comes before it, as the account's
# ``python -I`` (no working directory on its path) would have it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from accounts import local_account, run_as  # noqa: E402
from shared import REPO  # noqa: E402

ACCOUNT = "avgpool-ta"
TOOLS = ("useradd", "unshare", "setpriv")


def main(arguments: list[str]) -> int:
    if os.geteuid() != 0:
        print("tests/as_user.py must run as root (it makes the account and becomes it)", file=sys.stderr)
        return 2
    missing = [tool for tool in TOOLS if not shutil.which(tool)]
    if missing:
        print(f"tests/as_user.py needs {', '.join(missing)} on PATH (util-linux and passwd): install them first",
              file=sys.stderr)
        return 2
    corpus = {name: value for name, value in os.environ.items() if name.startswith("CORPUS_")}  # which cases, which seed
    code = (f"import os, pytest, sys; os.environ.update({corpus!r}); "
            f"sys.exit(pytest.main({['-q', '-p', 'no:cacheprovider', '-rs', *arguments]!r}))")
    with local_account(ACCOUNT, TOOLS, "running tests as an unprivileged user", system=True):
        print(f"as {ACCOUNT} (not root): pytest {' '.join(arguments)}", flush=True)
        return run_as(ACCOUNT, code, REPO, capture=False, timeout=3600).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
