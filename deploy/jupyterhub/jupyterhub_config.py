"""JupyterHub for one course (avgpool-course) with several graders, on one Linux machine.

Local system users log in with their own password (PAM, JupyterHub's default authenticator: no second
user database to keep) and each gets a JupyterLab server of their own, started as that user by the local
process spawner. The course folder (``source/``, ``gradebook.db``, ``submitted/``...) belongs to one
ordinary account, the course's grader account; its JupyterLab runs as the hub service ``avgpool-course``
with formgrader, and only the members of the hub group ``formgrade-avgpool-course`` (the instructors and
TAs) may open it. Students are the group ``nbgrader-avgpool-course``; they fetch and submit through
nbgrader's exchange folder, which every single-user server reaches.

This is nbgrader's own "one class, several graders" layout (nbgrader's ``demos/``). Run the hub as root
(it must start servers as other users): ``jupyterhub -f deploy/jupyterhub/jupyterhub_config.py``.
Every setting below comes from an environment variable with a default; README, "Run the course on a
JupyterHub", lists the steps, and ``tests/browser/test_hub.py`` runs them.
"""

import os
import sys

c = get_config()  # noqa: F821  (provided by traitlets when JupyterHub loads this file)

COURSE = "avgpool-course"
HERE = os.path.dirname(os.path.abspath(__file__))


def _names(variable: str, default: str) -> list[str]:
    """A comma-separated list of user names from ``variable`` (``default`` when unset)."""
    return [name.strip() for name in os.environ.get(variable, default).split(",") if name.strip()]


#: Hub users who grade (formgrader, collect, grade, feedback): instructors and TAs.
GRADERS = _names("AVGPOOL_HUB_GRADERS", "instructor1,instructor2")
#: Hub users who take the course.
STUDENTS = _names("AVGPOOL_HUB_STUDENTS", "")
#: The ordinary account that owns the course folder; the course service runs as it.
COURSE_ACCOUNT = os.environ.get("AVGPOOL_HUB_COURSE_ACCOUNT", f"grader-{COURSE}")
#: The course folder (a copy of this repository, or source/, release/ and nbgrader_config.py), mode 700.
COURSE_DIR = os.environ.get("AVGPOOL_HUB_COURSE_DIR", f"/home/{COURSE_ACCOUNT}/{COURSE}")
#: nbgrader's exchange: a folder every user may write to (mode 1777).
EXCHANGE = os.environ.get("AVGPOOL_HUB_EXCHANGE", "/srv/nbgrader/exchange")
#: The single-user environment: a Python with the course installed (``pip install -r requirements.lock``
#: and ``pip install .``) in a folder every user can read; by default the hub's own.
PYTHON = os.environ.get("AVGPOOL_HUB_PYTHON", sys.executable)
#: The proxy, from npm (``npm ci --prefix deploy/jupyterhub`` installs the pinned one here).
PROXY = os.environ.get("AVGPOOL_HUB_PROXY", os.path.join(HERE, "node_modules", ".bin", "configurable-http-proxy"))
#: Where the hub keeps its database, cookie secret and proxy token (root only).
STATE = os.environ.get("AVGPOOL_HUB_STATE", "/srv/jupyterhub")
SERVICE_PORT = int(os.environ.get("AVGPOOL_HUB_SERVICE_PORT", "9999"))

# -- the hub: address, state, proxy
c.JupyterHub.bind_url = os.environ.get("AVGPOOL_HUB_URL", "http://:8000")
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("AVGPOOL_HUB_API_PORT", "8081"))
c.JupyterHub.db_url = f"sqlite:///{os.path.join(STATE, 'jupyterhub.sqlite')}"
c.JupyterHub.cookie_secret_file = os.path.join(STATE, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(STATE, "jupyterhub.pid")
c.ConfigurableHTTPProxy.command = [PROXY]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('AVGPOOL_HUB_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(STATE, "jupyterhub-proxy.pid")

# -- who may log in: local system users, by PAM
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = set(GRADERS) | set(STUDENTS)

# -- the groups nbgrader knows: formgrade-<course> may open the course service, nbgrader-<course> takes it
c.JupyterHub.load_groups = {f"formgrade-{COURSE}": {"users": GRADERS},
                            f"nbgrader-{COURSE}": {"users": STUDENTS}}
c.JupyterHub.load_roles = [
    {"name": f"formgrade-{COURSE}", "groups": [f"formgrade-{COURSE}"],
     "scopes": [f"access:services!service={COURSE}", "list:services", f"read:services!service={COURSE}"]},
    {"name": f"nbgrader-{COURSE}", "groups": [f"nbgrader-{COURSE}"],
     "scopes": ["list:services", f"read:services!service={COURSE}"]},
    # a single-user server's token may do what its user may (nbgrader's course list asks for services)
    {"name": "server", "scopes": ["inherit"]},
]

# -- every user's JupyterLab: the course's Python, nbgrader's student side (exchange, course id)
_jupyter_env = {
    "JUPYTER_CONFIG_PATH": os.path.join(HERE, "jupyter"),  # nbgrader_config.py: the course id, the exchange
    "AVGPOOL_HUB_EXCHANGE": EXCHANGE,
    "JUPYTERHUB_DEFAULT_URL": "/lab",
    # a Terminal finds the course's commands (nbgrader, avgpool-course) first
    "PATH": os.pathsep.join([os.path.dirname(PYTHON), "/usr/local/bin", "/usr/bin", "/bin"]),
}
c.Spawner.cmd = [PYTHON, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
# users' own servers (students; graders grade in the course service) without nbgrader's instructor tools:
# servers/ disables the Create Assignment toolbar and formgrader (lab and server extension) ahead of jupyter/
c.Spawner.environment = dict(_jupyter_env, JUPYTER_CONFIG_PATH=os.pathsep.join(
    [os.path.join(HERE, "servers"), _jupyter_env["JUPYTER_CONFIG_PATH"]]))
c.Spawner.http_timeout = 60
c.Spawner.start_timeout = 60

# -- the course service: the course account's JupyterLab in the course folder, with formgrader
c.JupyterHub.services = [{
    "name": COURSE,
    "url": f"http://127.0.0.1:{SERVICE_PORT}",
    "command": [PYTHON, "-m", "jupyterhub.singleuser", f"--ServerApp.root_dir={COURSE_DIR}"],
    "user": COURSE_ACCOUNT,
    "cwd": COURSE_DIR,
    "environment": dict(_jupyter_env),
    "oauth_no_confirm": True,
}]
