"""The options of process isolation: :class:`IsolationOptions`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["IsolationOptions"]


def _check(name: str, value: Any, *, allow_none: bool, integer: bool = False) -> None:
    if value is None and allow_none:
        return
    kind = "a positive integer" if integer else "a positive number"
    wrong_type = isinstance(value, bool) or not isinstance(value, int if integer else (int, float))
    if wrong_type or not value > 0 or (not integer and math.isinf(value)):
        suffix = " or None" if allow_none else ""
        raise ValueError(f"IsolationOptions.{name} must be {kind}{suffix}, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class IsolationOptions:
    """How isolated tool modules run (see ``docs/isolation.md``).

    Args:
        memory_limit_mib: memory one worker may allocate (``RLIMIT_DATA`` on Linux, the
            address space elsewhere); an allocation past it fails with ``MemoryError`` inside
            the tool. ``None``: no limit.
        cpu_limit: CPU seconds one worker process may use over its life (``RLIMIT_CPU``; the
            kernel then kills it with ``SIGXCPU`` and it is restarted). ``None``: no limit.
        file_size_limit_mib: size one file written by a worker may reach. ``None``: no limit.
        grace: ``None`` (the default): a cancelled or timed-out call has the adapter's
            ``grace`` (2 s unless set; docs/cancellation.md) to end before the worker and its
            process group are killed. A number shortens that grace for this pool's workers.
        restart_limit: crashes in a row after which a module's worker is no longer restarted
            and its tools answer that the module is dead; a call that completes resets the
            count. ``0`` never restarts.
        backoff: seconds before the first restart after a crash, doubled for each further
            crash in a row, at most ``max_backoff``.
        max_backoff: the longest wait before a restart.
        start_timeout: seconds a worker may take to start (the interpreter and customtools
            imported), not counting the module's own import, which ``load_timeout`` bounds.
        max_message_mib: the largest message (arguments, one update or one result) a worker
            and the host exchange; a larger result becomes an error result.
        env: the workers' environment; ``None`` passes the host's environment.
        python: the interpreter workers run; ``None`` is the host's own (``sys.executable``).
        spin_us: microseconds the host (and the worker) poll for a reply before waiting on
            the event loop: a call's round trip is several times faster, at the cost of
            holding the event loop (and a CPU) that long per message waited for. ``0`` turns
            it off.
    """

    memory_limit_mib: int | None = 1024
    cpu_limit: int | None = None
    file_size_limit_mib: int | None = None
    grace: float | None = None
    restart_limit: int = 3
    backoff: float = 0.25
    max_backoff: float = 5.0
    start_timeout: float = 60.0
    max_message_mib: int = 64
    env: Mapping[str, str] | None = None
    python: str | None = None
    spin_us: int = 200

    def __post_init__(self) -> None:
        _check("memory_limit_mib", self.memory_limit_mib, allow_none=True, integer=True)
        _check("cpu_limit", self.cpu_limit, allow_none=True, integer=True)
        _check("file_size_limit_mib", self.file_size_limit_mib, allow_none=True, integer=True)
        _check("grace", self.grace, allow_none=True)
        for name in ("backoff", "max_backoff", "start_timeout"):
            _check(name, getattr(self, name), allow_none=False)
        _check("max_message_mib", self.max_message_mib, allow_none=False, integer=True)
        if (
            isinstance(self.spin_us, bool)
            or not isinstance(self.spin_us, int)
            or not 0 <= self.spin_us <= 10_000
        ):
            raise ValueError(
                f"IsolationOptions.spin_us must be an integer from 0 to 10000, got {self.spin_us!r}"
            )
        if (
            isinstance(self.restart_limit, bool)
            or not isinstance(self.restart_limit, int)
            or self.restart_limit < 0
        ):
            raise ValueError(
                "IsolationOptions.restart_limit must be an integer >= 0,"
                f" got {self.restart_limit!r}"
            )

    def limits(self) -> dict[str, int | None]:
        """The resource limits in the form the worker applies (bytes and seconds)."""
        mib = 1024 * 1024
        return {
            "memory": self.memory_limit_mib * mib if self.memory_limit_mib else None,
            "cpu": self.cpu_limit,
            "fileSize": self.file_size_limit_mib * mib if self.file_size_limit_mib else None,
        }
