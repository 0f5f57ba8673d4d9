"""The sandboxed child: runs one student's solution cells and answers calls with plain data only.

This module is self-contained (standard library; NumPy and PyTorch only when the lesson imports them)
because its *source text* is what the parent runs with ``python -I -c``: inside the sandbox the
``autograder`` package is hidden, and nothing from it is imported. The parent imports the same module
for the wire format (:class:`Channel`, :func:`encode`, :func:`decode`), so both sides share one codec.

Wire format: a frame is ``[u32 json length][u32 blob count][u64 blob length]*n [json][blobs]``. Values are
JSON trees with ``$``-tagged nodes for what JSON lacks (tuples, arrays, tensors, NumPy scalars, ...);
arrays travel as ``.npy`` bytes written and read with ``allow_pickle=False``. Nothing is ever pickled.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import select
import signal
import struct
import sys
import time
# Bound here, so student code that replaces builtins cannot change how this module reads and writes.
from builtins import (BaseException, Exception, GeneratorExit, KeyboardInterrupt, MemoryError, SystemExit, bool,
                      bytearray, bytes, callable, compile, memoryview, dict, exec, float, frozenset, getattr, int, isinstance, issubclass, len, list,
                      next, range, repr, set, slice, sorted, str, sum, tuple, type, zip)

FRAME = struct.Struct("!II")
BLOB = struct.Struct("!Q")
MAX_DEPTH = 32
MAX_NODES = 200_000
#: A frame's JSON part is small (values other than plain data travel as blobs): at most ``MAX_JSON_BYTES``, with
#: at most ``MAX_SEPARATORS`` of ``, : [ {`` (every JSON value but the first follows one), counted before it is
#: parsed, so reading any frame costs the reader at most its blobs, read once into one buffer each, plus a
#: bounded JSON tree (measured: ``tests/grading/test_untrusted.py``).
MAX_JSON_BYTES = 16 << 20
MAX_SEPARATORS = 4 * MAX_NODES


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed frame (or sent too much)."""


class ChannelTimeout(Exception):
    """No complete frame arrived before the deadline."""


class ChannelClosed(Exception):
    """The other side closed its end (the process died)."""


def frame(message: dict, blobs: list[bytes]) -> bytes:
    """One frame of the wire format (the module docstring)."""
    data = json.dumps(message, allow_nan=True, separators=(",", ":")).encode()
    return b"".join([FRAME.pack(len(data), len(blobs)), *[BLOB.pack(len(b)) for b in blobs], data, *blobs])


class Channel:
    """Length-prefixed frames over a pair of pipe file descriptors."""

    def __init__(self, read_fd: int, write_fd: int, limit: int = 1 << 28):
        self.read_fd, self.write_fd, self.limit = read_fd, write_fd, limit

    def send(self, message: dict, blobs: list[bytes] = ()) -> None:
        view = memoryview(frame(message, blobs))
        while view:
            written = os.write(self.write_fd, view)
            view = view[written:]

    def _read(self, size: int, deadline: float | None, tick) -> bytearray:
        """``size`` bytes, read into one buffer of that size (never a list of chunks joined afterwards)."""
        buffer = bytearray(size)
        view, done = memoryview(buffer), 0
        while done < size:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ChannelTimeout()
                ready, _, _ = select.select([self.read_fd], [], [], min(remaining, 0.2))
                if tick is not None:
                    tick()
                if not ready:
                    continue
            got = os.readv(self.read_fd, [view[done:done + (1 << 20)]])
            if not got:
                raise ChannelClosed()
            done += got
        view.release()
        return buffer

    def recv(self, deadline: float | None = None, tick=None) -> tuple[dict, list[bytearray]]:
        size, count = FRAME.unpack(self._read(FRAME.size, deadline, tick))
        if count > 100_000 or size > min(self.limit, MAX_JSON_BYTES):
            raise ProtocolError(f"frame too large ({size} bytes of JSON, {count} blobs)")
        lengths = [BLOB.unpack(self._read(BLOB.size, deadline, tick))[0] for _ in range(count)]
        if size + sum(lengths) > self.limit:
            raise ProtocolError(f"reply of {size + sum(lengths)} bytes is over the limit of {self.limit}")
        raw = self._read(size, deadline, tick)
        if sum(raw.count(c) for c in (b",", b":", b"[", b"{")) > MAX_SEPARATORS:
            raise ProtocolError(f"a frame's JSON holds more than {MAX_SEPARATORS} values")
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep to read
            raise ProtocolError(f"not JSON: {exc}") from None
        del raw
        if not isinstance(message, dict):
            raise ProtocolError("a frame must hold a JSON object")
        return message, [self._read(n, deadline, tick) for n in lengths]


# ----------------------------------------------------------------------------------------------------
# Plain-data codec. ``other(value)`` handles what is not plain data (the child keeps it and sends a
# reference; the parent refuses it unless it is a stand-in); ``ref(node)`` resolves a ``$ref`` node.

class Unsendable(TypeError):
    """A value that is not plain data and cannot be sent by reference."""


IN_CHILD = False  # set by main(): the child writes .npy with its own small code (below)
_NPY_HEADER = re.compile(r"^\{'descr': '([<>|=]?[a-zA-Z]\d*(?:\[\w+\])?)', 'fortran_order': (True|False), 'shape': \(([\d, ]*)\), \}\s*$")


def _npy(array) -> bytes:
    """``array`` as the bytes of a ``.npy`` file (format 1.0, never pickled)."""
    if not IN_CHILD:
        import numpy as np

        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        return buffer.getvalue()
    # In the child: no numpy Python helpers, which student code may have patched.
    if array.dtype.names is not None or array.dtype.subdtype is not None:
        raise Unsendable("structured arrays cannot be sent")
    shape = tuple(int(n) for n in array.shape)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        array.dtype.str, "".join(f"{n}, " for n in shape).rstrip(" ") if len(shape) != 1 else f"{shape[0]},")
    header = header.encode("latin1")
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    data = array.tobytes(order="C")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data


def _load_npy(blob: bytes):
    """The array of ``.npy`` 1.0 bytes, read the same way in both processes: never unpickled, and the data
    must be exactly as long as the header's shape and dtype say (a forged header allocates nothing)."""
    import numpy as np

    if type(blob) not in (bytes, bytearray, memoryview) or bytes(blob[:8]) != b"\x93NUMPY\x01\x00":
        raise ProtocolError("not a .npy 1.0 blob")
    size = struct.unpack("<H", blob[8:10])[0]
    match = _NPY_HEADER.match(bytes(blob[10:10 + size]).decode("latin1"))
    if match is None:
        raise ProtocolError("unreadable .npy header")
    dtype = np.dtype(match.group(1))
    shape = tuple(int(n) for n in match.group(3).replace(" ", "").split(",") if n)
    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize != len(blob) - 10 - size:
        raise ProtocolError(f"a .npy blob of shape {shape} and dtype {dtype.str} holds {len(blob) - 10 - size} bytes")
    array = np.frombuffer(blob, dtype=dtype, offset=10 + size)
    if type(blob) is not bytearray:
        array = array.copy()  # read-only bytes; a buffer just received (a bytearray, given out once) is not copied
    return array.reshape(shape, order="F" if match.group(2) == "True" else "C")


_TORCH_VIA_FLOAT32 = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def encode(value, blobs: list, other, _state=None):
    """``value`` as a JSON tree; arrays are appended to ``blobs`` as ``.npy`` bytes."""
    state = _state if _state is not None else {"nodes": 0}
    state["nodes"] += 1
    if state["nodes"] > MAX_NODES:
        raise Unsendable(f"too many values (more than {MAX_NODES}) to send")
    depth = state.get("depth", 0)
    if depth > MAX_DEPTH:
        raise Unsendable(f"values nested deeper than {MAX_DEPTH}")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"$float": repr(value)}

    def inner(items):
        state["depth"] = depth + 1
        try:
            return [encode(v, blobs, other, state) for v in items]
        finally:
            state["depth"] = depth

    if kind is list:
        return inner(value)
    if kind is tuple:
        return {"$tuple": inner(value)}
    if kind is dict:
        flat = inner([item for pair in value.items() for item in pair])
        return {"$dict": [flat[i:i + 2] for i in range(0, len(flat), 2)]}
    if kind in (set, frozenset):
        return {"$set" if kind is set else "$frozenset": inner(list(value))}
    if kind is bytes:
        return {"$bytes": base64.b64encode(value).decode()}
    if kind is complex:
        return {"$complex": [repr(value.real), repr(value.imag)]}
    if kind is slice:
        return {"$slice": inner([value.start, value.stop, value.step])}
    if value is Ellipsis:
        return {"$ellipsis": True}
    if kind is range:
        return {"$range": [value.start, value.stop, value.step]}
    np = sys.modules.get("numpy")
    if np is not None and isinstance(getattr(np, "ndarray", None), type):
        if kind is np.ndarray:
            if value.dtype.hasobject:
                return other(value)
            blobs.append(_npy(value))
            return {"$array": len(blobs) - 1}
        if isinstance(value, np.generic) and kind.__module__ == "numpy" and not value.dtype.hasobject:
            blobs.append(_npy(np.asarray(value)))
            return {"$npscalar": len(blobs) - 1}
        if isinstance(value, np.dtype):
            return {"$npdtype": value.str if value.names is None else str(value)}
        if isinstance(value, type) and issubclass(value, np.generic) and value.__module__ == "numpy":
            return {"$nptype": value.__name__}
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(getattr(torch, "Tensor", None), type):  # not an empty stand-in
        if kind is torch.Tensor:
            if value.layout != torch.strided or value.is_quantized:
                return other(value)
            name = str(value.dtype).replace("torch.", "")
            data = value.detach().cpu().resolve_conj().resolve_neg()
            if name in _TORCH_VIA_FLOAT32:
                data = data.float()
            blobs.append(_npy(data.numpy()))
            return {"$tensor": len(blobs) - 1, "dtype": name, "grad": bool(value.requires_grad)}
        if kind is torch.dtype:
            return {"$torchdtype": str(value).replace("torch.", "")}
        if kind is torch.Size:
            return {"$torchsize": inner(list(value))}
        if kind is torch.device:
            return {"$torchdevice": str(value)}
    return other(value)


def _blob(blobs: list, index):
    """Blob ``index``: a received buffer is given out once as it is (its array uses it without a copy), then
    read-only, so two values never share memory."""
    if type(index) is not int or not 0 <= index < len(blobs):
        raise ProtocolError(f"no blob {index!r} among {len(blobs)}")
    blob = blobs[index]
    if type(blob) is bytearray:
        blobs[index] = memoryview(blob).toreadonly()
    return blob


def decode(node, blobs: list[bytes], ref):
    """The value of a JSON tree made by :func:`encode` (arrays read by :func:`_load_npy`, never unpickled)."""
    if node is None or type(node) in (bool, int, float, str):
        return node
    if type(node) is list:
        return [decode(v, blobs, ref) for v in node]
    if type(node) is not dict or len(node) == 0:
        raise ProtocolError(f"unexpected node {type(node).__name__}")
    tag = next(iter(node))
    body = node[tag]
    if tag == "$float":
        return float(body)
    if tag == "$tuple":
        return tuple(decode(v, blobs, ref) for v in body)
    if tag == "$dict":
        return {decode(k, blobs, ref): decode(v, blobs, ref) for k, v in body}
    if tag in ("$set", "$frozenset"):
        items = [decode(v, blobs, ref) for v in body]
        return set(items) if tag == "$set" else frozenset(items)
    if tag == "$bytes":
        return base64.b64decode(body)
    if tag == "$complex":
        return complex(float(body[0]), float(body[1]))
    if tag == "$slice":
        return slice(*[decode(v, blobs, ref) for v in body])
    if tag == "$ellipsis":
        return Ellipsis
    if tag == "$range":
        return range(*[int(v) for v in body])
    if tag == "$array":
        return _load_npy(_blob(blobs, body))
    if tag == "$npscalar":
        return _load_npy(_blob(blobs, body))[()]
    if tag == "$npdtype":
        import numpy as np

        return np.dtype(body)
    if tag == "$nptype":
        import numpy as np

        kind = getattr(np, str(body), None)
        if not (isinstance(kind, type) and issubclass(kind, np.generic)):
            raise ProtocolError(f"unknown numpy type {body!r}")
        return kind
    if tag == "$tensor":
        import torch

        array = _load_npy(_blob(blobs, body))
        tensor = torch.from_numpy(array.copy() if not array.flags.writeable else array)
        dtype = getattr(torch, str(node.get("dtype", "")), None)
        if isinstance(dtype, torch.dtype) and tensor.dtype != dtype:
            tensor = tensor.to(dtype)
        if node.get("grad") and (tensor.is_floating_point() or tensor.is_complex()):
            tensor.requires_grad_(True)
        return tensor
    if tag == "$torchdtype":
        import torch

        dtype = getattr(torch, str(body), None)
        if not isinstance(dtype, torch.dtype):
            raise ProtocolError(f"unknown torch dtype {body!r}")
        return dtype
    if tag == "$torchsize":
        import torch

        return torch.Size([int(v) for v in body])
    if tag == "$torchdevice":
        import torch

        return torch.device(str(body))
    if tag == "$ref":
        return ref(node)
    raise ProtocolError(f"unknown tag {tag!r}")


# ----------------------------------------------------------------------------------------------------
# Everything below runs only in the child.

BUILTIN_ERRORS = (
    "ValueError", "TypeError", "NotImplementedError", "IndexError", "KeyError", "ZeroDivisionError",
    "AttributeError", "RuntimeError", "RecursionError", "ArithmeticError", "LookupError", "OverflowError",
    "FloatingPointError", "AssertionError", "NameError", "UnboundLocalError", "ImportError",
    "ModuleNotFoundError", "OSError", "FileNotFoundError", "PermissionError", "UnicodeError",
    "StopIteration", "BufferError", "EOFError", "IOError", "Exception",
)


class Capture:
    """A text stream that keeps the first ``cap`` characters written to it and counts the rest."""

    def __init__(self, name: str, cap: int, fd: int):
        self.name, self.cap, self._fd = name, cap, fd
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0
        self.encoding = "utf-8"
        self.errors = "replace"

    def write(self, text) -> int:
        text = str(text)
        self.total += len(text)
        if self.kept < self.cap:
            piece = text[: self.cap - self.kept]
            self.parts.append(piece)
            self.kept += len(piece)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def take(self) -> dict:
        text = "".join(self.parts)
        dropped = self.total - self.kept
        self.parts, self.kept, self.total = [], 0, 0
        return {"text": text, "dropped": dropped}


class IPythonStub:
    """Enough of ``get_ipython()`` for magics in student cells: they do nothing (``%%time`` runs its body)."""

    def __init__(self, namespace: dict):
        self.user_ns = namespace
        self.input_transformers_cleanup: list = []
        self.input_transformers_post: list = []
        self.ast_transformers: list = []
        self.events = self

    def register(self, *args, **kwargs):
        return None

    def run_line_magic(self, name, line, *args, **kwargs):
        return None

    def run_cell_magic(self, name, line, cell, *args, **kwargs):
        if name in ("time", "timeit", "capture", "prun"):
            exec(compile(cell, "<cell magic>", "exec"), self.user_ns)
        return None

    def system(self, *args, **kwargs):
        return None

    getoutput = system

    def __getattr__(self, name):
        raise AttributeError(f"the grader's get_ipython() has no {name!r} (student code runs in plain Python)")


def _syscall(name: str, *args) -> None:
    """Call the C library's ``name`` (Python 3.11 has no ``os.unshare`` or ``os.mount``); ``OSError`` where it fails."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if getattr(libc, name)(*args) != 0:
        raise OSError(ctypes.get_errno(), f"{name}{args} failed")


def make_mounts(plan: list) -> None:
    """Make the mounts of ``plan`` (``sandbox.mounts.own_mounts``, sent as data: its PID namespace's ``/proc``, a
    fresh tmpfs on each folder any user may write, the mqueue of its own IPC namespace) in this warm child's new
    mount and PID namespaces, in order; the rest are its template's, made by bubblewrap. Raises ``OSError`` at the
    first that fails (or at any other kind of mount): the child then never runs student code."""
    for kind, path, *rest in plan:
        if kind not in ("proc", "tmpfs", "mqueue"):
            raise OSError(f"a warm child makes only fresh folders, not a {kind!r} mount")
        flags = 2 | 4 | (0 if kind == "tmpfs" else 8)  # MS_NOSUID | MS_NODEV, MS_NOEXEC but on tmpfs
        data = f"size={rest[0]},mode={rest[1]:o}".encode() if kind == "tmpfs" else None
        _syscall("mount", kind.encode(), path.encode(), kind.encode(), flags, data)


def setup_sandbox(config: dict) -> dict:
    """Set limits, drop privileges, enter the scratch folder (the mounts are bubblewrap's, or a warm child's
    :func:`make_mounts`). Returns what took effect."""
    import resource

    active: dict = {"namespaces": bool(config.get("namespaces")), "hidden": [], "rlimits": [], "uid": os.getuid()}
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the file-size limit fail instead of killing
    scratch = config["scratch"]
    active.update(config.get("mounted") or {})
    uid = config.get("uid")
    limits = {
        "RLIMIT_AS": config.get("memory_bytes"),
        "RLIMIT_FSIZE": config.get("file_bytes"),
        "RLIMIT_NPROC": config.get("nproc"),
        "RLIMIT_NOFILE": config.get("nofile"),
        "RLIMIT_MSGQUEUE": config.get("msgqueue_bytes"),
        "RLIMIT_MEMLOCK": config.get("memlock_bytes"),
        "RLIMIT_CORE": 0,
    }
    for name, value in limits.items():
        if value is None or not hasattr(resource, name):
            continue
        try:
            resource.setrlimit(getattr(resource, name), (int(value), int(value)))
            active["rlimits"].append(name)
        except (ValueError, OSError) as exc:
            active.setdefault("rlimit_failed", []).append(f"{name}: {exc}")
    try:  # the lowest priority, which an unprivileged uid cannot raise again: the grader's processes come first
        os.setpriority(os.PRIO_PROCESS, 0, 19)
        active["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    except OSError:
        pass
    if uid is not None and os.getuid() == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            active["uid"] = os.getuid()
        except OSError as exc:
            active["setuid_failed"] = str(exc)
        # The kernel clears the parent-death signal when the uid changes: arm it again, so the child (the
        # PID namespace's init, whose end ends every process in it) dies with its parent even now.
        _die_with_parent()
    os.makedirs(scratch, exist_ok=True)  # the child's uid owns it (a fresh /tmp is mode 1777)
    try:
        _syscall("prctl", 38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    except Exception:
        pass
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update(config.get("env", {}))
    os.environ["HOME"] = os.environ["TMPDIR"] = scratch
    os.environ["MPLCONFIGDIR"] = os.path.join(scratch, ".matplotlib")
    return active


class WalledOperator(RuntimeError):
    """PyTorch's operator a lesson forbids was called (issue 50 item 4): raised by the kernel :func:`raise_wall`
    puts in its place; the call is also recorded in ``WALL_HITS``, which every reply reports (``"wall"``)."""


#: The walled operators called (``"aten::avg_pool2d"``, each once) while the current request or cell runs, caught by
#: student code or not: its reply names them (``"wall"``).
WALL_HITS: list = []


def raise_wall(patterns: list) -> list:
    """Override, at PyTorch's dispatcher, every registered operator (all namespaces and overloads) whose name
    matches one of ``patterns`` (``fnmatch``, e.g. ``"*pool[123]d*"``) with a kernel that records the call in
    :data:`WALL_HITS` and raises :class:`WalledOperator`: on the Autograd key and on every backend and composite key
    the operator has a kernel for, so neither autograd, ``torch.inference_mode``, an ``out=`` overload, a backend's
    own kernel (``_slow_conv2d_forward``, ``mkldnn_convolution``) nor a quantized or MKL-DNN tensor gets past it.
    Returns the ``torch.library.Library`` objects, which must stay alive (their end undoes the registrations)."""
    import fnmatch
    import warnings

    import torch

    keys = ("CPU", "CUDA", "Meta", "QuantizedCPU", "QuantizedCUDA", "MkldnnCPU", "SparseCPU", "SparseCUDA",
            "CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
    libraries: dict = {}
    hits, walled = WALL_HITS, WalledOperator

    def kernel_for(name):
        def walled_kernel(*args, **kwargs):
            if name not in hits:
                hits.append(name)
            raise walled(f"{name} is PyTorch's own pooling, convolution or resampling, which this lesson forbids "
                         "(under the grader it cannot run): write it yourself with tensor operations")
        return walled_kernel

    with warnings.catch_warnings():  # "Overriding a previously registered kernel": that is the point
        warnings.simplefilter("ignore")
        for full in torch._C._dispatch_get_all_op_names():
            namespace, _, operator = full.partition("::")
            if not any(fnmatch.fnmatchcase(operator.split(".")[0], p) for p in patterns):
                continue
            if namespace not in libraries:
                libraries[namespace] = torch.library.Library(namespace, "IMPL")
            kernel = kernel_for(full)
            for key in ["Autograd"] + [k for k in keys if torch._C._dispatch_has_kernel_for_dispatch_key(full, k)]:
                libraries[namespace].impl(operator, kernel, key)
    return list(libraries.values())


class Child:
    """The request loop: cells first, then ``get`` / ``call`` / ``getattr`` / ``helper`` requests."""

    def __init__(self, channel: Channel, config: dict):
        self.channel, self.config = channel, config
        self.pid = os.getpid()
        self.phases: dict = {}  # this child's CPU seconds by phase (run_cells sends them with ``ready``)
        self.refs: dict[int, object] = {}
        self.next_ref = 1
        self.namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__}
        self.prelude_names: set[str] = set()
        cap = int(config.get("output_chars", 20_000))
        self.stdout = Capture("stdout", cap, 1)
        self.stderr = Capture("stderr", cap, 2)
        self.helpers: dict[str, object] = {}
        self.walls: list = []  # the torch.library.Library objects of raise_wall, kept alive

    # -- values -----------------------------------------------------------------------------------
    def keep(self, value) -> dict:
        number = self.next_ref
        self.next_ref += 1
        self.refs[number] = value
        kind = type(value)
        return {"$ref": number, "type": f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', '?')}",
                "callable": callable(value)}

    def resolve(self, node: dict):
        number = node.get("$ref")
        if number not in self.refs:
            raise ProtocolError(f"unknown reference {number!r}")
        return self.refs[number]

    def pack(self, value) -> tuple[dict, list[bytes]]:
        blobs: list[bytes] = []
        try:
            tree = encode(value, blobs, self.keep)
        except Unsendable as exc:
            return {"raise": {"type": "Unsendable", "builtin": "TypeError",
                              "message": f"the result cannot be handed to the grader: {exc}"}}, []
        if sum(len(b) for b in blobs) > self.channel.limit // 2:
            return {"raise": {"type": "ResultTooLarge", "builtin": "ValueError",
                              "message": "the result is too large to hand to the grader"}}, []
        return {"ok": tree}, blobs

    @staticmethod
    def describe(exc: BaseException) -> dict:
        kind = type(exc)
        builtin = "Exception"
        for base in kind.__mro__:
            if getattr(base, "__module__", None) == "builtins" and base.__name__ in BUILTIN_ERRORS:
                builtin = base.__name__
                break
        if isinstance(exc, (SystemExit, KeyboardInterrupt, GeneratorExit)):
            builtin = "BaseException"
        try:
            message = str(exc)[:4000]
        except BaseException:
            message = "<the exception's message could not be printed>"
        return {"type": str(getattr(kind, "__qualname__", "?"))[:200], "builtin": builtin, "message": message,
                "memory": isinstance(exc, MemoryError)}

    # -- running student code ---------------------------------------------------------------------
    def guarded(self, action):
        """Run ``action()`` with captured output; returns ``(reply, blobs)``."""
        started = time.monotonic()
        walled = len(WALL_HITS)
        sys.stdout, sys.stderr = self.stdout, self.stderr
        try:
            value = action()
        except BaseException as exc:  # student code may raise anything, SystemExit included
            self.exit_if_forked()
            reply, blobs = {"raise": self.describe(exc)}, []
        else:
            self.exit_if_forked()
            reply, blobs = self.pack(value)
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        reply["stdout"], reply["stderr"] = self.stdout.take(), self.stderr.take()
        reply["seconds"] = time.monotonic() - started
        if len(WALL_HITS) > walled:
            reply["wall"] = WALL_HITS[walled:walled + 100]
            del WALL_HITS[walled:]
        return reply, blobs

    def exit_if_forked(self) -> None:
        if os.getpid() != self.pid:  # a fork of the student's made it back here: it must not answer
            os._exit(0)

    def run_cell(self, cell: dict):
        source = cell["source"]

        def action():
            code = compile(source, f"<cell {cell.get('id', '?')}>", "exec", dont_inherit=True)
            exec(code, self.namespace)

        return self.guarded(action)

    def block_modules(self) -> None:
        for name in self.config.get("block", []):
            for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
                sys.modules[key] = None
            sys.modules[name] = None

    def run_cells(self) -> None:
        """Run the cells, then send ``ready`` with the names they bound and this child's own CPU seconds by phase
        (``phases``: start, contain, set-up, cells; what the child says about itself, shown and never trusted)."""
        self.block_modules()
        clock = time.process_time()
        for index, cell in enumerate(self.config.get("cells", [])):
            if cell["kind"] == "prelude":
                # trusted set-up code, statement by statement (a blocked import must not stop the rest)
                import ast

                try:
                    statements = ast.parse(cell["source"]).body
                except SyntaxError:
                    statements = []
                for statement in statements:
                    try:
                        sys.stdout, sys.stderr = self.stdout, self.stderr
                        exec(compile(ast.Module([statement], []), "<prelude>", "exec"), self.namespace)
                    except ImportError as exc:
                        missing = str(exc.name or "")
                        if missing.split(".")[0] not in self.config.get("block", []):
                            # a package the lesson needs is missing: the grader's fault, before student code
                            sys.__stderr__.write(f"set-up import failed: {type(exc).__name__}: {exc}\n")
                            sys.__stderr__.flush()
                            os._exit(3)
                    except Exception:
                        pass
                    finally:
                        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
                self.stdout.take(), self.stderr.take()
                continue
            if not self.prelude_names:
                self.prelude_names = set(self.namespace)
                self.namespace["get_ipython"] = lambda stub=IPythonStub(self.namespace): stub
                self.load_helpers()
                self.wall_off()
                self.phases["setup_cpu"], clock = time.process_time() - clock, time.process_time()
            self.channel.send({"op": "cell_start", "index": index})
            reply, _ = self.run_cell(cell)
            reply.pop("ok", None)
            reply.pop("wall", None)  # a cell's call of a walled operator shows in its error, if it was not caught
            reply["op"], reply["index"] = "cell_done", index
            self.channel.send(reply)
        if not self.prelude_names:
            self.prelude_names = set(self.namespace)
            self.load_helpers()
            self.wall_off()
            self.phases["setup_cpu"], clock = time.process_time() - clock, time.process_time()
        self.phases["cells_cpu"] = time.process_time() - clock
        names = sorted(k for k in self.namespace if not k.startswith("__") and k not in self.prelude_names
                       and k != "get_ipython")
        self.channel.send({"op": "ready", "names": names, "phases": dict(self.phases)})

    def load_helpers(self) -> None:
        """Import the course helpers that run beside student code now, before any student code runs."""
        import importlib

        for spec in self.config.get("helpers", []):
            module_name, _, qualname = spec.partition(":")
            try:
                target = importlib.import_module(module_name)
                for part in qualname.split("."):
                    target = getattr(target, part)
                self.helpers[spec] = target
            except Exception:
                pass

    def wall_off(self) -> None:
        """Raise the lesson's run-time wall (``config["wall"]``, :func:`raise_wall`) before any student code runs;
        where it cannot be raised the child ends (exit 3, as a failed set-up import): the grader's fault."""
        if not self.config.get("wall"):
            return
        try:
            self.walls = raise_wall(list(self.config["wall"]))
        except BaseException as exc:
            sys.__stderr__.write(f"could not wall off the lesson's forbidden operators: {type(exc).__name__}: {exc}\n")
            sys.__stderr__.flush()
            os._exit(3)

    # -- requests ---------------------------------------------------------------------------------
    def handle(self, message: dict, blobs: list[bytes]):
        op = message.get("op")
        ref = self.resolve
        if op == "get":
            name = message["name"]

            def action():
                if name not in self.namespace:
                    raise NameError(f"name {name!r} is not defined")
                return self.namespace[name]
        elif op == "getattr":
            target, attribute = decode(message["target"], blobs, ref), str(message["name"])

            def action():
                return getattr(target, attribute)
        elif op == "call":
            target = decode(message["target"], blobs, ref)
            args = decode(message["args"], blobs, ref)
            kwargs = decode(message["kwargs"], blobs, ref)

            def action():
                return target(*args, **kwargs)
        elif op == "helper":
            helper = self.helpers.get(message["helper"])
            args = decode(message["args"], blobs, ref)
            kwargs = decode(message["kwargs"], blobs, ref)

            def action():
                if helper is None:
                    raise RuntimeError(f"helper {message['helper']!r} could not be imported in the sandbox")
                return helper(*args, **kwargs)
        else:
            raise ProtocolError(f"unknown request {op!r}")
        return self.guarded(action)

    def serve(self) -> None:
        while True:
            try:
                message, blobs = self.channel.recv()
            except ChannelClosed:
                os._exit(0)
            if message.get("op") == "exit":
                os._exit(0)
            try:
                reply, out = self.handle(message, blobs)
            except Exception as exc:  # a request the child cannot read
                reply, out = {"raise": {"type": "ProtocolError", "builtin": "RuntimeError",
                                        "message": str(exc)[:4000]}}, []
            self.channel.send(reply, out)


def serve_child(read_fd: int, write_fd: int) -> None:
    """The child's life: read the sandbox configuration, contain itself, run the cells, answer requests."""
    global IN_CHILD
    IN_CHILD = True
    import faulthandler

    faulthandler.enable()  # a crash in C code leaves its Python stack in the child's log
    channel = Channel(read_fd, write_fd)
    config, _ = channel.recv()
    started = time.process_time()  # this process's CPU seconds so far: the interpreter's start (0 when forked warm)
    active = setup_sandbox(config)
    channel.limit = int(config.get("reply_bytes", channel.limit))
    child = Child(channel, config)
    child.phases["start_cpu"] = started
    child.phases["contain_cpu"] = time.process_time() - started
    channel.send({"op": "hello", "active": active, "pid": os.getpid()})
    child.run_cells()
    child.serve()


# ----------------------------------------------------------------------------------------------------
# The warm template (``--template FD``): an interpreter that has imported the lesson's set-up modules once and
# forks a fresh child per submission; it never runs student code. Bubblewrap, which runs it where there are
# namespaces, starts programs and cannot contain a forked one: the child makes its own namespaces and mounts
# (``_forked``), then the same ``setup_sandbox`` as a cold child (why each: THREAT_MODEL.md).

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP = 0x08000000, 0x04000000, 0x02000000
#: A warm child's namespaces: those ``sandbox.BWRAP_NAMESPACES`` gives a cold one (why: there).
CHILD_NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP


def _die_with_parent() -> None:
    """SIGKILL this process when its parent ends (Linux; set again after every uid change, which clears it)."""
    try:
        _syscall("prctl", 1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except Exception:
        pass


def _close_all_but(keep: set) -> None:
    import resource

    top = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    top = top if 0 < top < 1 << 20 else 1 << 16
    previous = -1
    for fd in sorted(keep) + [top]:
        if fd > previous + 1:  # never an empty range: CPython turns closerange(3, 3) into close_range(3, ~0)
            os.closerange(previous + 1, fd)
        previous = fd


def _forked(mounts: list | None, fds: list, sync_w: int) -> None:
    """In the forked child (never returns): its own session and cgroup, then, with ``mounts`` (the template runs
    under bubblewrap), new namespaces with this process's child as their PID 1 and :func:`make_mounts`, then
    :func:`serve_child`."""
    read_fd, write_fd, log_fd, *cgroup_procs = fds
    try:
        os.setsid()  # its own process group: the parent kills the group
        _die_with_parent()
        for fd in cgroup_procs:  # opened by the grader: the template's host is read-only
            os.write(fd, b"0")
            os.close(fd)
    except BaseException as exc:
        os.write(sync_w, f"the forked child could not join its session or cgroup: {exc}".encode()[:4000])
        os._exit(5)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.write(sync_w, b"ok")
    _close_all_but({0, 1, 2, read_fd, write_fd})
    if mounts is not None:  # an error from here on stops the child (template_main) before any student code
        _syscall("unshare", CHILD_NAMESPACES)
        inner = os.fork()
        if inner:  # like unshare --fork --kill-child: wait, then end as the child ended
            os.close(read_fd)
            os.close(write_fd)
            _, status = os.waitpid(inner, 0)
            if os.WIFSIGNALED(status):
                if os.WTERMSIG(status) != signal.SIGKILL:  # whose handler cannot be set (EINVAL)
                    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
                os.kill(os.getpid(), os.WTERMSIG(status))
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        _die_with_parent()
        # bubblewrap left the template's mounts slaves of the host's, never shared: nothing propagates back
        make_mounts(mounts)
    sys.argv = ["-c"]
    serve_child(read_fd, write_fd)


def template_main(sock_fd: int) -> None:
    """Serve ``fork`` and ``wait`` requests over a SOCK_SEQPACKET socket (file descriptors travel with
    ``fork`` as SCM_RIGHTS) until the grader closes it."""
    import importlib
    import socket

    _die_with_parent()
    sock = socket.socket(fileno=sock_fd)
    setup = json.loads(sock.recv(1 << 16) or b"{}")
    for name in setup.get("block", []):  # as Child.block_modules does, before anything is imported
        sys.modules[name] = None
    for name in setup.get("imports", []):
        try:
            importlib.import_module(name)
        except BaseException:  # the child's own set-up meets the same error and reports it
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    statuses: dict = {}
    forked: set = set()

    def reap(*_signal) -> None:
        """Reap every ended child now (also on SIGCHLD): a forked child's inner process (its PID namespace's
        first process, orphaned when the grader kills the group) is this template's to reap, not the host init's,
        which may take a second or never do it, while the grader waits for it to be gone (``Sandbox.kill``)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in forked:
                statuses[pid] = os.waitstatus_to_exitcode(status)
                forked.discard(pid)

    try:
        _syscall("prctl", 36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans of its forked children come here
        signal.signal(signal.SIGCHLD, reap)
    except (OSError, AttributeError, ValueError):
        pass  # reaped later (the host's init), as before
    sock.send(b'{"ready": true}')

    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 8)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)
        request = json.loads(data)
        reply: dict = {}
        if request.get("op") == "fork" and len(fds) >= 3:
            sync_r, sync_w = os.pipe()
            sys.stdout.flush()
            sys.stderr.flush()
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # reaped only once its pid is known
            pid = os.fork()
            if pid == 0:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
                try:
                    sock.close()
                    os.close(sync_r)
                    _forked(setup.get("mounts"), fds, sync_w)
                except BaseException as exc:  # one line for the grader-error message: what failed, and why
                    print(f"the forked child stopped before any student code: {type(exc).__name__}: {exc}",
                          file=sys.stderr, flush=True)
                finally:
                    os._exit(1)
            forked.add(pid)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            os.close(sync_w)
            answer = os.read(sync_r, 4096)
            os.close(sync_r)
            reply = {"pid": pid} if answer == b"ok" else {"error": answer.decode("utf-8", "replace") or
                                                          "the forked child ended before it was ready"}
        elif request.get("op") == "wait":
            reap()
            reply = {"status": statuses.pop(int(request.get("pid", 0)), None)}
        else:
            reply = {"error": f"unknown template request {request.get('op')!r}"}
        for fd in fds:
            os.close(fd)
        reap()
        sock.send(json.dumps(reply).encode())


def main() -> None:
    if sys.argv[1:2] == ["--template"]:
        template_main(int(sys.argv[2]))
    else:
        serve_child(int(sys.argv[1]), int(sys.argv[2]))


if __name__ == "__main__":
    main()
