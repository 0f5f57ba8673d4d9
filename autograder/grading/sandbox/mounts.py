"""The mounts of a child's mount namespace: :data:`MOUNTS`, the one list of those every child gets, and the plan
made from it for a lesson (:func:`mount_plan`: what is bound back, exposed, hidden). Bubblewrap makes a plan
(``bwrap.bwrap_command``, a cold child and a warm template); a forked warm child makes again its own part
(:func:`own_mounts`, sent to ``_child.make_mounts`` as data). Why each mount is there: ``THREAT_MODEL.md``."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

#: Every mount a child gets whatever the lesson, made in this order where the path exists here: ``(kind, path,
#: bytes)``. ``host``: the host's files read-only; ``dev``: a minimal ``/dev``; ``proc``: its PID namespace's own
#: ``/proc``; ``fresh``: an empty tmpfs of mode 1777, its own, gone with it, on every folder anyone may write
#: (``/run/lock`` is ``/var/lock``; ``/run/user`` holds the users' runtime folders); ``cover``: root's empty tmpfs
#: of mode 0755 (the child's uid writes nothing there) with only :func:`needed_paths` bound back inside, where
#: other checkouts, homes and instructors' files live, and on ``/run`` (``/var/run``), where the host's daemons
#: listen on unix sockets, which a read-only bind does not close and a network namespace does not separate
#: (journald, D-Bus, a PostgreSQL gradebook's server), and on ``/sys/fs/cgroup``, whose host tree (read-only, and a
#: cgroup namespace does not change a mount made before it) lists every live child's cgroup, its processes, memory
#: and CPU, and the grader's, and on ``/dev/pts`` (its ``/dev/ptmx`` then opens nothing: the machine's terminals,
#: ``kernel.pty.max``, are counted across every ``/dev/pts``, and a child held 3,071 of its 4,096); ``mqueue``: its
#: IPC namespace's own POSIX message queues.
#: A forked warm child makes its ``proc``, ``fresh`` and ``mqueue`` mounts again (:func:`own_mounts`), its template
#: the rest. A new mount is one more row here (and its reason in ``THREAT_MODEL.md``).
MOUNTS = (("host", "/", 0), ("dev", "/dev", 0), ("proc", "/proc", 0),
          ("fresh", "/tmp", 64 << 20), ("fresh", "/var/tmp", 16 << 20), ("fresh", "/dev/shm", 16 << 20),
          ("fresh", "/run/lock", 1 << 20), ("fresh", "/run/user", 1 << 20),
          *(("cover", path, 1 << 20) for path in ("/work", "/home", "/root", "/srv", "/mnt", "/media", "/opt", "/run",
                                                        "/sys/fs/cgroup", "/dev/pts")),
          ("mqueue", "/dev/mqueue", 0))
#: What the mounts make, as :meth:`Containment.describe` says it.
SUMMARY = "fresh tmpfs for every writable folder"


def base_mounts() -> list[list]:
    """The ``host``, ``dev`` and ``proc`` rows of :data:`MOUNTS` as operations (``["bind", "/"]``, ``["dev",
    path]``, ``["proc", path]``): what every bubblewrap line makes before its plan."""
    return [["bind", path] if kind == "host" else [kind, path] for kind, path, _ in MOUNTS
            if kind in ("host", "dev", "proc")]


def _mqueues() -> list[list]:
    """The ``mqueue`` rows of :data:`MOUNTS` that exist here, as operations."""
    return [["mqueue", path] for kind, path, _ in MOUNTS if kind == "mqueue" and os.path.isdir(path)]


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def mount_plan(*, fresh: list[list], keep: list[str], expose: list[list], hide: list[str],
               cover: list[list] = ()) -> tuple[list[list], dict]:
    """``(the mounts of a child's mount namespace, in order; what they make)``: a fresh tmpfs of mode 1777 on
    each ``fresh`` folder (``[[path, size]]``: folders any user may write), an empty tmpfs of mode 0755 (root's:
    the child's uid writes nothing there) on each ``cover`` folder (same form: where others' files live), its
    own ``/dev/mqueue``, an empty tmpfs on each ``expose`` ancestor (``[[ancestor, [paths]]]``: folders the
    child's uid cannot traverse), the ``keep`` paths bound back read-only (source: the host's view), ``hide``
    covered (a folder by an empty tmpfs, a file by ``/dev/null``). Operations: ``["tmpfs", path, bytes,
    mode]``, ``["mqueue", path]``, ``["dir", path]`` (mode 0755, for the child's uid to traverse), ``["bind",
    path]``, ``["null", path]``. Bubblewrap makes them (``bwrap.bwrap_command``), a warm child its
    :func:`own_mounts` again; all or the child does not start. ``made`` is reported as the child's ``active``."""
    ops: list[list] = []
    made: dict = {"hidden": []}
    emptied = [*fresh, *cover]
    covered = [path for path, _ in emptied]
    modes = {path: mode for (path, _), mode in zip(emptied, [0o1777] * len(fresh) + [0o755] * len(cover))}
    for path, size in sorted(emptied, key=lambda folder: len(Path(folder[0]).parts)):  # /run before /run/lock
        ops.append(["tmpfs", path, size, modes[path]])
        made["hidden"].append(path)
    for op in _mqueues():  # the POSIX message queues of this child's own IPC namespace
        ops.append(op)
        made["hidden"].append(op[1])
    for ancestor, paths in expose:  # only what the child needs comes back
        if not any(_inside(ancestor, c) for c in covered):
            ops.append(["tmpfs", ancestor, 64 << 10, 0o755])
            covered.append(ancestor)
        made.setdefault("exposed", []).extend(paths)
    bound: list[str] = []
    for path in sorted(keep, key=lambda p: (len(Path(p).parts), p)):  # a folder before what lies inside it
        if not os.path.exists(path) or any(_inside(path, b) for b in bound):
            continue  # inside a folder already bound back: there already, and read-only (no "dir" may go there)
        bound.append(path)
        under = [c for c in covered if _inside(path, c) and c != path]
        parent, between = os.path.dirname(path), []
        while under and parent != under[0] and _inside(parent, under[0]):
            between.insert(0, parent)
            parent = os.path.dirname(parent)
        ops += [["dir", folder] for folder in between] + [["bind", path]]
        if not any(_inside(path, f) for f in covered) and path not in made.get("exposed", []) and os.path.isdir(path):
            made.setdefault("read_only", []).append(path)
    kept = [path for folder, _ in emptied for path in keep if _inside(path, folder) and os.path.exists(path)]
    if kept:
        made["kept"] = kept
    hidden_folders = [path for path in hide if os.path.isdir(path) and not os.path.islink(path)]
    for path in hide:
        inside = [c for c in covered if _inside(path, c)] + [h for h in hidden_folders if _inside(path, h) and h != path]
        if (inside and not any(_inside(path, k) for k in keep)) or not os.path.lexists(path):
            continue  # covered already (inside a fresh or hidden folder: the child has no such path to mount on)
        ops.append(["tmpfs", path, 64 << 10, 0o755] if os.path.isdir(path) else ["null", path])
        made["hidden"].append(path)
    return ops, made


def own_mounts(plan: list[list], fresh: list[list] | None = None) -> list[list]:
    """What a forked warm child makes again in its own namespaces (``_child.make_mounts``, in order): the ``proc``
    rows of :data:`MOUNTS`, then the part of ``plan`` on or inside each ``fresh`` folder (default
    :func:`fresh_folders`; a warm child is made only where that is their tmpfs alone) and its ``mqueue``."""
    fresh = fresh_folders() if fresh is None else fresh
    procs = [["proc", path] for kind, path, _ in MOUNTS if kind == "proc"]
    return procs + [op for op in plan if op[0] == "mqueue" or any(_inside(op[1], folder) for folder, _ in fresh)]


def child_plan(namespaces: bool, drop_uid: bool, hide: list[str] = ()) -> tuple[list[list], dict | None]:
    """``(the mounts, what they hide)`` of a child that must not see ``hide``, in a containment with or without
    ``namespaces`` (none without) and a dropped uid (``Containment``'s fields of those names)."""
    if not namespaces:
        return [], None
    return mount_plan(fresh=fresh_folders(), cover=fresh_folders("cover"), keep=needed_paths(),
                      hide=list(hide), expose=exposed_paths() if drop_uid else [])


@functools.lru_cache(maxsize=None)
def _package_paths(modules: tuple[str, ...]) -> tuple[str, ...]:
    import importlib.metadata
    import importlib.util

    owners = importlib.metadata.packages_distributions()
    found: list[str] = []
    for module in modules:
        tops: set[Path] = set()
        for dist_name in owners.get(module, []):
            try:
                dist = importlib.metadata.distribution(dist_name)
            except importlib.metadata.PackageNotFoundError:
                continue
            base = Path(dist.locate_file("")).resolve()
            for file in dist.files or []:
                parts = Path(file).parts
                if parts and parts[0] != "..":  # scripts in bin/ stay: they cannot run without the package
                    tops.add(base / parts[0])
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:  # a package (its folders) or a single module (its file)
            locations = list(spec.submodule_search_locations or []) or ([spec.origin] if spec.origin else [])
            tops.update(Path(location).resolve() for location in locations if location != "built-in")
        found.extend(str(p) for p in sorted(tops) if p.exists())
    return tuple(dict.fromkeys(found))


def package_paths(modules) -> list[str]:
    """Every file and folder of the distributions that provide ``modules`` (e.g. ``torch``: ``torch/``,
    ``torchgen/``, ``functorch/``, its ``.dist-info``): what the child must not see for a lesson that
    forbids them, so that no spelling of an import can load them. Found without importing them."""
    return list(_package_paths(tuple(sorted(modules))))


def hidden_paths(*roots: Path) -> list[str]:
    """Paths under course roots that the child must not see (those that exist)."""
    keep = [Path(p) for p in needed_paths()]
    names = ["source", "autograder", "tests", "submitted", "autograded", "feedback", "records", ".git",
             "gradebook.db", "gradebook.db-journal", "nbgrader_config.py", "sample_class", "reports", "grades.csv",
             "benchmarks", ".ci"]
    found: list[str] = []
    for root in roots:
        root = Path(root).resolve()
        for name in names:
            path = root / name
            if not path.exists() or str(path) in found:
                continue
            if any(k == path or path in k.parents for k in keep):
                continue  # never hide the interpreter or the course helpers
            found.append(str(path))
    return found


def fresh_folders(kind: str = "fresh") -> list[list]:
    """``[[path, bytes]]`` of the ``kind`` rows of :data:`MOUNTS` (``fresh`` or ``cover``) whose folder exists here."""
    return [[path, size] for row, path, size in MOUNTS if row == kind and os.path.isdir(path) and not os.path.islink(path)]


def needed_paths() -> list[str]:
    """What the child must read: the interpreter's prefixes, the virtual environment, ``course/``."""
    needed = [str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve())]
    try:
        import course

        needed.append(str(Path(course.__file__).resolve().parent))
    except (ImportError, TypeError):
        pass
    return list(dict.fromkeys(needed))


@functools.lru_cache(maxsize=None)
def exposed_paths() -> list[list]:
    """``[[ancestor, [paths]]]``: the first folder others cannot traverse above each of :func:`needed_paths`
    (e.g. ``/root``, mode 700, holding the interpreter), with the needed paths below it."""
    groups: dict[str, list[str]] = {}
    for path in map(Path, needed_paths()):
        for ancestor in list(reversed(path.parents))[1:]:
            try:
                if not os.stat(ancestor).st_mode & 0o001:
                    groups.setdefault(str(ancestor), []).append(str(path))
                    break
            except OSError:
                break
    return [[ancestor, paths] for ancestor, paths in groups.items()]
