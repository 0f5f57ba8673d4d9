"""What a child may use (:class:`Limits`) and how it broke them: :class:`Fault` (the student's code) or
:class:`GraderFault` (the grader's own failure, never a score)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    """Limits for one submission's child process. ``test_seconds`` and ``cell_seconds`` are CPU seconds
    of the child's whole process tree, as the kernel accounts them (a busy machine does not use them
    up); a wall-clock cap of :func:`hang_seconds` of them stops code that hangs without computing."""

    test_seconds: float = 60.0  #: CPU seconds of student code run by one test cell, in total
    cell_seconds: float = 60.0  #: CPU seconds of each solution cell
    start_seconds: float = 120.0  #: wall clock: interpreter start and the lesson's set-up imports
    memory_bytes: int = 4 << 30  #: address space of the child (RLIMIT_AS) and its RSS (watched)
    file_bytes: int = 16 << 20  #: largest file the child may write (RLIMIT_FSIZE)
    nproc: int = 64  #: processes and threads of the sandbox uid (RLIMIT_NPROC; a cgroup's pids.max): honest work needs <= 3
    #: descriptors of each of its processes (RLIMIT_NOFILE; the machine's file table is shared): honest work holds
    #: at most 5 (every lesson's reference, measured), so a child of ``nproc`` processes holds 16,384 at most
    nofile: int = 256
    #: bytes of POSIX message queues (RLIMIT_MSGQUEUE, counted per uid, and in a user namespace towards the
    #: grading user's too): one queue of the default size; honest work needs none
    msgqueue_bytes: int = 128 << 10
    memlock_bytes: int = 64 << 10  #: locked memory (RLIMIT_MEMLOCK, mlock and io_uring buffers): honest work locks none
    output_chars: int = 20_000  #: stored stdout/stderr per cell
    reply_bytes: int = 256 << 20  #: largest reply the parent reads
    warm: bool = True  #: fork children from a warm template (Linux, namespaces or rlimits-only): not a limit
    #: the lowest containment level to grade at (one of LEVELS, or PLATFORM: the strongest the platform
    #: offers, ``levels.platform_level``): not a limit
    require: str = "platform"

    def as_dict(self) -> dict:
        """The limits a verdict depends on (``warm`` changes how fast a child starts, never a verdict;
        ``require`` only whether grading happens at all, and every record states its level)."""
        limits = asdict(self)
        limits.pop("warm")
        limits.pop("require")
        return limits


#: The wall-clock cap of a CPU budget: ``HANG_FACTOR`` × the budget + ``HANG_SECONDS`` (sleeping or
#: blocked code uses no CPU; a machine at load 4 on 2 cores still finishes honest work well inside it).
HANG_FACTOR, HANG_SECONDS = 4.0, 10.0


def hang_seconds(cpu_seconds: float) -> float:
    return HANG_FACTOR * cpu_seconds + HANG_SECONDS


class Fault(BaseException):
    """Student code broke a limit. A ``BaseException``, so a test's ``except Exception`` cannot swallow it."""

    kind = "crash"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class TimeoutFault(Fault):
    kind = "timeout"


class MemoryFault(Fault):
    kind = "memory"


class CrashFault(Fault):
    kind = "crash"


class GraderFault(Exception):
    """The grader itself failed (the sandbox would not start, the lesson's packages would not import in
    it, the child stopped speaking the protocol before any student code ran). Never a student's score:
    the submission gets status ``grader-error`` with this message and no score is written."""

    kind = "grader-error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
