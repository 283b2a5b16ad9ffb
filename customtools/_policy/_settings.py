"""The settings of the execution policy: :class:`Policy`, and what a tool is allowed.

A setting of one tool is decided in three layers, lowest first: the built-in defaults, the
``POLICY`` its pack declares, the host's :class:`Policy`. Only the fields a layer *gives*
count, so a host that sets ``cache_ttl`` leaves the pack's ``rate`` in force. What a tool may
be (cached, retried) is not a setting: it follows from its annotations and its pack's
declared permissions (:func:`effects`), and no setting widens it.

A pack declares its settings like its permissions, with one module-level constant read
without importing the module (``POLICY = Policy(rate=(10, 60))``; literals only)::

    from customtools import Policy

    POLICY = Policy(max_concurrent=2, rate=(30, 60), retries=1)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from customtools._errors import CustomToolsError

if TYPE_CHECKING:
    from customtools._permissions import Declarations, Permissions
    from customtools._policy._backends import PolicyBackend
    from customtools._tool import CustomTool

__all__ = ["HOST_ONLY", "Effects", "Policy", "PolicyError", "declared_policy", "effects"]


class PolicyError(CustomToolsError, ValueError):
    """A :class:`Policy` setting, or a pack's ``POLICY`` declaration, that cannot be used."""


class _NotGiven:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


_NOT_GIVEN: Any = _NotGiven()

# field -> (built-in default, JSON key)
_FIELDS: Final[dict[str, tuple[Any, str]]] = {
    "max_concurrent": (None, "maxConcurrent"),
    "max_concurrent_pack": (None, "maxConcurrentPack"),
    "max_concurrent_host": (None, "maxConcurrentHost"),
    "queue_timeout": (30.0, "queueTimeout"),
    "weight": (1, "weight"),
    "rate": (None, "rate"),
    "max_result_bytes": (None, "maxResultBytes"),
    "result_ttl": (600.0, "resultTtl"),
    "retries": (2, "retries"),
    "retry_backoff": (0.25, "retryBackoff"),
    "transient": (("TransientToolError", "worker-crashed", "connection-lost"), "transient"),
    "cache_ttl": (60.0, "cacheTtl"),
    "cache_max_bytes": (32 << 20, "cacheMaxBytes"),
    "store_max_bytes": (128 << 20, "storeMaxBytes"),
}
HOST_ONLY: Final = frozenset(
    {"max_concurrent_host", "result_ttl", "cache_max_bytes", "store_max_bytes"}
)
"""Settings only the host's policy holds: a pack's declaration of them is ignored."""


def _count(name: str, value: Any, *, optional: bool = True) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        what = "a whole number >= 1" + (" or None" if optional else "")
        raise PolicyError(f"Policy.{name} must be {what}, got {value!r}")
    return value


def _seconds(name: str, value: Any, *, optional: bool = False, zero: bool = False) -> Any:
    if value is None and optional:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (value >= 0 if zero else value > 0)
        or math.isinf(value)
    ):
        low = ">= 0" if zero else "> 0"
        raise PolicyError(
            f"Policy.{name} must be a number of seconds {low}"
            + (" or None" if optional else "")
            + f", got {value!r}"
        )
    return float(value)


def _check(name: str, value: Any) -> Any:
    """``value`` for field ``name``, checked and normalized."""
    if name in ("max_concurrent", "max_concurrent_pack", "max_concurrent_host"):
        return _count(name, value)
    if name in ("weight",):
        return _count(name, value, optional=False)
    if name in ("max_result_bytes", "cache_max_bytes", "store_max_bytes"):
        return _count(name, value, optional=name == "max_result_bytes")
    if name == "retries":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10:
            raise PolicyError(f"Policy.retries must be a whole number from 0 to 10, got {value!r}")
        return value
    if name == "cache_ttl":
        return _seconds(name, value, optional=True)
    if name in ("queue_timeout", "result_ttl"):
        return _seconds(name, value)
    if name == "retry_backoff":
        return _seconds(name, value, zero=True)
    if name == "rate":
        if value is None:
            return None
        if (
            isinstance(value, (tuple, list))
            and len(value) == 2
            and _count("rate", value[0], optional=False)
        ):
            return (value[0], _seconds("rate", value[1]))
        raise PolicyError(
            f"Policy.rate must be (calls, seconds), such as (10, 60), or None, got {value!r}"
        )
    if name == "transient":
        names = (value,) if isinstance(value, str) else value
        if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) and n for n in names):
            raise PolicyError(
                "Policy.transient must be a list of error kinds or codes (such as"
                f" 'TransientToolError' or 'connection-lost'), got {value!r}"
            )
        return tuple(names)
    raise PolicyError(f"unknown Policy setting {name!r}")  # pragma: no cover - internal


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Policy:
    """How calls run: concurrency caps, a rate, a result budget, retries and caching.

    Set one on the host (``CustomToolAdapter(tool, policy=...)``, ``ToolRegistry(...,
    policy=...)``, ``ToolServer``/``serve(policy=...)``, the framework adapters); a pack may
    declare its own as ``POLICY = Policy(...)`` (literal arguments). Only the arguments given
    count; for each one the host's wins over the pack's, the pack's over the default.
    See docs/policy.md.

    Args:
        max_concurrent: calls of one tool running at once (``None``: no cap).
        max_concurrent_pack: calls of one pack's tools running at once.
        max_concurrent_host: calls running at once under this policy (host only), counted
            in ``weight`` units.
        queue_timeout: seconds a call may wait for a slot (or for its rate) before it gets
            a ``PolicyRefused`` error result (default 30).
        weight: host slots one call of the pack's tools takes (a pack declares its cost).
        rate: ``(calls, seconds)``: at most that many calls of one tool start per window.
        max_result_bytes: a result's budget in bytes (``None``: none, the default); a larger
            result is trimmed, shape kept, and kept whole for ``read_result``.
        result_ttl: seconds a trimmed result stays readable (host only; default 600).
        retries: further attempts of a retryable tool after a transient failure (default 2;
            0 turns retries off).
        retry_backoff: seconds before the first retry, doubled each time (default 0.25).
        transient: error kinds or codes that are transient (default ``TransientToolError``,
            ``worker-crashed``, ``connection-lost``); a result whose ``details`` has
            ``"transient": true`` is too.
        cache_ttl: seconds a cacheable tool's result is reused (default 60; ``None``: off).
        cache_max_bytes: size bound of the result cache (host only; default 32 MiB).
        store_max_bytes: size bound of the store of trimmed results (host only; 128 MiB).
        backend: where caps, rates, caches and stored results live (host only); an
            in-memory :class:`~customtools.policy.MemoryBackend` by default.

    Raises:
        PolicyError: a value of the wrong type or range; the message names the setting.
    """

    max_concurrent: int | None
    max_concurrent_pack: int | None
    max_concurrent_host: int | None
    queue_timeout: float
    weight: int
    rate: tuple[int, float] | None
    max_result_bytes: int | None
    result_ttl: float
    retries: int
    retry_backoff: float
    transient: tuple[str, ...]
    cache_ttl: float | None
    cache_max_bytes: int
    store_max_bytes: int
    backend: PolicyBackend = field(compare=False, repr=False)
    given: frozenset[str] = field(repr=False)

    def __init__(
        self,
        *,
        max_concurrent: int | None = _NOT_GIVEN,
        max_concurrent_pack: int | None = _NOT_GIVEN,
        max_concurrent_host: int | None = _NOT_GIVEN,
        queue_timeout: float = _NOT_GIVEN,
        weight: int = _NOT_GIVEN,
        rate: tuple[int, float] | None = _NOT_GIVEN,
        max_result_bytes: int | None = _NOT_GIVEN,
        result_ttl: float = _NOT_GIVEN,
        retries: int = _NOT_GIVEN,
        retry_backoff: float = _NOT_GIVEN,
        transient: tuple[str, ...] = _NOT_GIVEN,
        cache_ttl: float | None = _NOT_GIVEN,
        cache_max_bytes: int = _NOT_GIVEN,
        store_max_bytes: int = _NOT_GIVEN,
        backend: PolicyBackend | None = None,
    ) -> None:
        given = locals()
        names = []
        for name, (default, _) in _FIELDS.items():
            value = given[name]
            if value is _NOT_GIVEN:
                value = default
            else:
                value = _check(name, value)
                names.append(name)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "given", frozenset(names))
        if backend is None:
            from customtools._policy._backends import MemoryBackend

            memory = MemoryBackend(
                cache_max_bytes=self.cache_max_bytes, store_max_bytes=self.store_max_bytes
            )
            object.__setattr__(self, "backend", memory)
        else:
            object.__setattr__(self, "backend", backend)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={getattr(self, name)!r}" for name in _FIELDS if name in self.given
        )
        return f"Policy({shown})"

    def merged(self, declared: Policy | None) -> dict[str, Any]:
        """Each setting for a tool whose pack declares ``declared``: this policy's given
        value, else the pack's (host-only settings excepted), else the default."""
        out = {name: default for name, (default, _) in _FIELDS.items()}
        if declared is not None:
            for name in declared.given - HOST_ONLY:
                out[name] = getattr(declared, name)
        for name in self.given:
            out[name] = getattr(self, name)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the given settings, camelCase keys."""
        out: dict[str, Any] = {}
        for name, (_, key) in _FIELDS.items():
            if name in self.given:
                value = getattr(self, name)
                out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "policy") -> Policy:
        """Inverse of :meth:`to_dict` (snake_case keys are accepted too).

        Raises:
            PolicyError: an unknown key or a bad value; the message names ``where``.
        """
        if not isinstance(data, Mapping):
            raise PolicyError(f"{where}: a policy is a JSON object, got {type(data).__name__}")
        keys = {key: name for name, (_, key) in _FIELDS.items()}
        kwargs = {}
        for key, value in data.items():
            name = keys.get(key, key)
            if name not in _FIELDS:
                known = ", ".join(keys)
                raise PolicyError(f"{where}: unknown policy setting {key!r}; use {known}")
            kwargs[name] = value
        try:
            return cls(**kwargs)
        except PolicyError as exc:
            raise PolicyError(f"{where}: {exc}") from None

    def describe(self) -> str:
        """The given settings in plain words (the trust listing shows a pack's)."""
        words = {
            "max_concurrent": "at most {} running per tool",
            "max_concurrent_pack": "at most {} running per pack",
            "max_concurrent_host": "at most {} running in all",
            "queue_timeout": "waits for a slot at most {:g} s",
            "weight": "each call weighs {}",
            "max_result_bytes": "results up to {} bytes",
            "result_ttl": "trimmed results kept {:g} s",
            "retries": "up to {} retries",
            "retry_backoff": "first retry after {:g} s",
            "cache_max_bytes": "cache up to {} bytes",
            "store_max_bytes": "stored results up to {} bytes",
        }
        parts = []
        for name in _FIELDS:
            if name not in self.given:
                continue
            value = getattr(self, name)
            if name == "rate":
                parts.append(
                    "no rate limit" if value is None else f"{value[0]} calls per {value[1]:g} s"
                )
            elif name == "transient":
                parts.append("transient: " + ", ".join(value))
            elif name == "cache_ttl":
                parts.append("no caching" if value is None else f"cached {value:g} s")
            elif value is None:
                parts.append(f"no {name.replace('_', ' ')}")
            else:
                parts.append(words[name].format(value))
        return ", ".join(parts) or "the defaults"


@dataclass(frozen=True, slots=True)
class Effects:
    """What a tool's annotations and its pack's permissions say it does."""

    read_only: bool
    idempotent: bool
    destructive: bool

    @property
    def cacheable(self) -> bool:
        """Its results may be reused: read-only and idempotent."""
        return self.read_only and self.idempotent and not self.destructive

    @property
    def retryable(self) -> bool:
        """A failed call may run again: idempotent and not destructive."""
        return self.idempotent and not self.destructive


def effects(tool: CustomTool, permissions: Permissions | None) -> Effects:
    """The tool's effects: its annotations where it gives them; where it gives none, a pack
    whose declared permissions allow no write, no network and no programs is taken as
    read-only and idempotent (it cannot change anything outside its temporary directory)."""
    hints = tool.annotations or {}
    confined = (
        permissions is not None
        and not permissions.write
        and permissions.net == "none"
        and not permissions.run
    )

    def hint(key: str) -> bool:
        value = hints.get(key)
        return value is True or (value is None and confined)

    return Effects(
        read_only=hint("readOnlyHint"),
        idempotent=hint("idempotentHint"),
        destructive=hints.get("destructiveHint") is True,
    )


def declared_policy(declared: Declarations) -> Policy | None:
    """The ``POLICY`` a module declares, or ``None``; one that cannot be used is logged and
    ignored (``customtools validate`` reports it as ``invalid-policy``)."""
    error = declared.policy_error
    if declared.policy is not None:
        try:
            return Policy.from_dict(declared.policy, where=declared.policy_line or "POLICY")
        except PolicyError as exc:
            error = str(exc)
    if error is not None:
        from customtools._format import logger

        logger("customtools.policy").warning("%s; the pack's declared policy is ignored", error)
    return None
