"""The resource limits of a worker process (:class:`WorkerLimits`), and Linux ``prctl``.

Both isolation modes limit their workers with one :class:`WorkerLimits` value, in MiB and
seconds: the pool's :class:`~customtools.isolation.IsolationOptions` extends it, and
``validate`` builds one from its flags. Bytes appear only where the kernel wants them
(:func:`set_limits`). Both helpers are best effort: on a platform or kernel without them
nothing happens, and the callers document what is then not guaranteed.
"""

from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "PR_SET_CHILD_SUBREAPER",
    "PR_SET_PDEATHSIG",
    "WorkerLimits",
    "check_positive",
    "dumpable",
    "prctl",
    "set_dumpable",
    "set_limits",
]

PR_SET_PDEATHSIG: Final = 1
PR_GET_DUMPABLE: Final = 3
PR_SET_DUMPABLE: Final = 4
PR_SET_CHILD_SUBREAPER: Final = 36
_MIB: Final = 1024 * 1024


def check_positive(owner: object, name: str, *, allow_none: bool, integer: bool = False) -> None:
    """Refuse ``owner.name`` unless it is a positive (finite) number, or ``None`` if allowed.

    Raises:
        ValueError: naming the class and the field.
    """
    value = getattr(owner, name)
    if value is None and allow_none:
        return
    kind = "a positive integer" if integer else "a positive number"
    wrong_type = isinstance(value, bool) or not isinstance(value, int if integer else (int, float))
    if wrong_type or not value > 0 or (not integer and math.isinf(value)):
        suffix = " or None" if allow_none else ""
        where = type(owner).__name__
        raise ValueError(f"{where}.{name} must be {kind}{suffix}, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerLimits:
    """Hard resource limits of one worker process (``setrlimit``), in MiB and CPU seconds;
    ``None`` is no limit. The fields are documented where users set them:
    :class:`~customtools.isolation.IsolationOptions` and ``customtools validate --help``.
    """

    memory_limit_mib: int | None = 1024
    cpu_limit: int | None = None
    file_size_limit_mib: int | None = None

    def __post_init__(self) -> None:
        for name in ("memory_limit_mib", "cpu_limit", "file_size_limit_mib"):
            check_positive(self, name, allow_none=True, integer=True)

    def to_dict(self) -> dict[str, int | None]:
        """The limits alone (not the rest of an ``IsolationOptions``), as messages carry them."""
        return {
            "memoryMib": self.memory_limit_mib,
            "cpuSeconds": self.cpu_limit,
            "fileSizeMib": self.file_size_limit_mib,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkerLimits:
        """The limits :meth:`to_dict` wrote."""
        return cls(
            memory_limit_mib=data.get("memoryMib"),
            cpu_limit=data.get("cpuSeconds"),
            file_size_limit_mib=data.get("fileSizeMib"),
        )


def prctl(option: int, value: int = 0) -> int | None:
    """Linux ``prctl(option, value)``; ``None`` when unavailable or refused."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        result = int(libc.prctl(option, value, 0, 0, 0))
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None
    return None if result < 0 else result


def dumpable() -> int | None:
    """This process's ``PR_GET_DUMPABLE`` value (Linux), else ``None``."""
    return prctl(PR_GET_DUMPABLE)


def set_dumpable(value: int) -> None:
    """Set ``PR_SET_DUMPABLE`` (Linux; elsewhere nothing happens)."""
    prctl(PR_SET_DUMPABLE, value)


def set_limits(limits: WorkerLimits) -> None:
    """Lower this process's resource limits to ``limits``, hard limits included; never raises.

    Core files are always turned off. A limit is never raised above the current hard limit.
    The limits are **hard**: the hard limit is lowered with the soft one, so code in the
    process cannot lift them (an unprivileged process can never raise a hard limit). For
    the CPU the hard limit is one second above the soft one: the kernel sends ``SIGXCPU`` at
    the soft limit (which names the cause) and ``SIGKILL`` at the hard one, so a process that
    ignores ``SIGXCPU`` or lifts its soft limit still ends one second later.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return

    def lower(which: int, value: int, slack: int = 0) -> None:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        ceiling = value + slack
        if hard != resource.RLIM_INFINITY:
            ceiling = min(ceiling, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (value, ceiling))

    lower(resource.RLIMIT_CORE, 0)
    if limits.memory_limit_mib:
        which = resource.RLIMIT_DATA if sys.platform.startswith("linux") else resource.RLIMIT_AS
        lower(which, limits.memory_limit_mib * _MIB)
    if limits.cpu_limit:
        lower(resource.RLIMIT_CPU, limits.cpu_limit, slack=1)
    if limits.file_size_limit_mib:
        lower(resource.RLIMIT_FSIZE, limits.file_size_limit_mib * _MIB)
