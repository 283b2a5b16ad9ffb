"""Process-level helpers shared by the isolation workers and the ``validate`` sandbox.

Linux ``prctl`` (dumpable flag, child subreaper, parent-death signal) and the per-process
resource limits (``setrlimit``). Both are best effort: on a platform or kernel without them
nothing happens, and the callers document what is then not guaranteed.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "PR_SET_CHILD_SUBREAPER",
    "PR_SET_PDEATHSIG",
    "dumpable",
    "prctl",
    "set_dumpable",
    "set_limits",
]

PR_SET_PDEATHSIG: Final = 1
PR_GET_DUMPABLE: Final = 3
PR_SET_DUMPABLE: Final = 4
PR_SET_CHILD_SUBREAPER: Final = 36


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


def set_limits(limits: Mapping[str, Any]) -> None:
    """Lower this process's resource limits, hard limits included; never raises.

    ``limits`` may hold ``memory`` (bytes: ``RLIMIT_DATA`` on Linux, which counts the heap and
    private anonymous mappings but not the address space shared libraries reserve; the
    address space elsewhere), ``cpu`` (seconds of CPU time, then ``SIGXCPU``) and
    ``fileSize`` (bytes one written file may reach). Core files are always turned off. A
    limit is never raised above the current hard limit.

    The limits are **hard**: the hard limit is lowered with the soft one, so code in the
    process cannot lift them (an unprivileged process can never raise a hard limit). For
    ``cpu`` the hard limit is one second above the soft one: the kernel sends ``SIGXCPU`` at
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
    if limits.get("memory"):
        which = resource.RLIMIT_DATA if sys.platform.startswith("linux") else resource.RLIMIT_AS
        lower(which, int(limits["memory"]))
    if limits.get("cpu"):
        lower(resource.RLIMIT_CPU, int(limits["cpu"]), slack=1)
    if limits.get("fileSize"):
        lower(resource.RLIMIT_FSIZE, int(limits["fileSize"]))
