"""The options of the isolation pool: :class:`IsolationOptions`, which extends the workers'
:class:`~._limits.WorkerLimits` (its limit fields are the options' own keywords)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from customtools._isolation._limits import WorkerLimits, check_positive

__all__ = ["IsolationOptions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class IsolationOptions(WorkerLimits):
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
        WorkerLimits.__post_init__(self)
        check_positive(self, "grace", allow_none=True)
        for name in ("backoff", "max_backoff", "start_timeout"):
            check_positive(self, name, allow_none=False)
        check_positive(self, "max_message_mib", allow_none=False, integer=True)
        _check_integer(self, "spin_us", 0, 10_000)
        _check_integer(self, "restart_limit", 0)


def _check_integer(owner: IsolationOptions, name: str, low: int, high: int | None = None) -> None:
    value = getattr(owner, name)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= (high or value):
        span = f">= {low}" if high is None else f"from {low} to {high}"
        raise ValueError(f"IsolationOptions.{name} must be an integer {span}, got {value!r}")
