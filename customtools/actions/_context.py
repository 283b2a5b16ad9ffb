"""Execution context: the layered mapping every ``execute_action`` receives.

Layers, each owned by one builder argument group:

* **core** (always): ``core``, ``config``, ``trigger_source``, ``session`` (serialized),
  ``lifecycle`` (lifecycle runs only), ``request_context``, ``request_runtime``.
* **application** (when an application object is given): ``app`` and ``application`` (the
  same object), ``base_config``, ``session_asset_store``.
* **lifecycle extras**: ``original_session``, ``previous_agent_id``, ``next_agent_id``,
  ``error``, set from builder arguments only.
* **caller**: additive keys, JSON data (``extra``) or live objects such as ``terminal`` or
  ``server`` (``objects``).

Keys of the core and application layers always belong to the builder: a caller value for one
of them is dropped with a :class:`ReservedContextKeyWarning`. The lifecycle keys
(:data:`RESERVED_CONTEXT_KEYS`) belong to the builder when it has a value of its own for them
(from its arguments): then the caller's value is dropped with the same warning. When it has
none, the caller's value reaches the plugins, so a host can pass lifecycle information in the
extra context (``{"lifecycle": "session_fork", "original_session": {...}}``) as the protocol
describes. Everything except the live objects (``core``, ``request_runtime``, ``app``,
``application``, ``session_asset_store`` and the caller's ``objects``) must be
JSON-serializable: a :class:`ContextError` names the first offending key path. Plugins receive
fresh copies of the data, so one action cannot change what the next one sees except through
its result.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from customtools._format import describe_exception, escape_control, safe_repr
from customtools.actions._errors import ContextError, ReservedContextKeyWarning
from customtools.actions._session import SessionLike

__all__ = [
    "APPLICATION_CONTEXT_KEYS",
    "CORE_CONTEXT_KEYS",
    "RESERVED_CONTEXT_KEYS",
    "build_context",
    "ensure_serializable",
    "serialize_error",
    "serialize_session",
]

CORE_CONTEXT_KEYS: tuple[str, ...] = (
    "core",
    "config",
    "trigger_source",
    "session",
    "lifecycle",
    "request_context",
    "request_runtime",
)
APPLICATION_CONTEXT_KEYS: tuple[str, ...] = (
    "app",
    "application",
    "base_config",
    "session_asset_store",
)
RESERVED_CONTEXT_KEYS: tuple[str, ...] = (
    "lifecycle",
    "trigger_source",
    "original_session",
    "previous_agent_id",
    "next_agent_id",
    "error",
)
# ``final_messages`` is set by the builder during response_finalize runs.
_OWNED = frozenset(
    (*CORE_CONTEXT_KEYS, *APPLICATION_CONTEXT_KEYS, *RESERVED_CONTEXT_KEYS, "final_messages")
)
# Owned even when the builder has no value: the layers' own keys, never lifecycle information.
_ALWAYS_OWNED = _OWNED - frozenset(RESERVED_CONTEXT_KEYS)


def _find_bad(value: Any, path: str) -> tuple[str, str] | None:
    """Return ``(path, reason)`` of the first place json.dumps would reject, if any."""
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, f"the float {value!r} is not valid JSON")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                shown = safe_repr(key)
                return (path, f"the key {shown} ({type(key).__name__}) is not a JSON object key")
            found = _find_bad(item, f"{path}[{safe_repr(key)}]")
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _find_bad(item, f"{path}[{index}]")
            if found:
                return found
        return None
    return (path, f"a {type(value).__name__} is not JSON-serializable")


def ensure_serializable(value: Any, *, name: str = "context") -> str:
    """Check that ``value`` is JSON data and return its JSON text.

    Args:
        value: the data to check.
        name: how the root is named in the error (``context['config']``, ...).

    Raises:
        ContextError: naming the offending key path, such as ``context['error']['args'][0]``.
    """
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        found = _find_bad(value, name) or (name, describe_exception(exc))
        raise ContextError(
            f"{found[0]}: {found[1]}; execution context must be JSON data (pass live"
            " objects through the builder's 'objects' argument instead)",
            key_path=found[0],
        ) from exc


def serialize_error(error: BaseException | Mapping[str, Any]) -> dict[str, Any]:
    """Return the language-neutral form of an error: ``{"type", "message"}`` (+ ``cause``).

    A mapping is taken as already serialized and copied.
    """
    if isinstance(error, Mapping):
        return dict(error)
    out: dict[str, Any] = {"type": type(error).__name__, "message": exception_message(error)}
    cause = error.__cause__
    if cause is not None:
        out["cause"] = {"type": type(cause).__name__, "message": exception_message(cause)}
    return out


def exception_message(exc: BaseException) -> str:
    """The message of a foreign exception, safely: one printable line, never raising.

    This is :func:`~customtools._format.describe_exception` without its ``"TypeName: "``
    prefix; an exception whose ``__str__`` fails or is empty gets that function's wording.
    """
    described = describe_exception(exc)
    head, sep, rest = described.partition(": ")
    return rest if sep and head == escape_control(type(exc).__qualname__) else described


def serialize_session(
    session: SessionLike | Mapping[str, Any], *, name: str = "session"
) -> dict[str, Any]:
    """Return ``session.to_dict()`` (a mapping is copied), checked to be JSON data.

    Args:
        session: a session object or its serialized form.
        name: how the session is named in the error.

    Raises:
        ContextError: when the serialized session is not JSON data.
    """
    data = dict(session) if isinstance(session, Mapping) else session.to_dict()
    ensure_serializable(data, name=name)
    return data


@dataclass(frozen=True, slots=True)
class ContextTemplate:
    """A validated context without its ``session`` key: JSON text plus live objects."""

    data_json: str
    objects: Mapping[str, Any]

    def render(
        self, session: SessionLike, *, final_messages: Sequence[Mapping[str, Any]] | None = None
    ) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(self.data_json)
        out["session"] = serialize_session(session, name="context['session']")
        if final_messages is not None:
            out["final_messages"] = json.loads(
                ensure_serializable(list(final_messages), name="context['final_messages']")
            )
        out.update(self.objects)
        return out


def _drop(key: str, what: str) -> None:
    # stacklevel: _drop, _caller, context_template, build_context -> the caller's line
    warnings.warn(
        f"{what} key {key!r} is owned by the context builder; the caller's value was"
        f" dropped (pass it as the builder argument {key!r} where one exists)",
        ReservedContextKeyWarning,
        stacklevel=5,
    )


def _caller(
    given: Mapping[str, Any] | None, owned: Callable[[str], bool], what: str
) -> dict[str, Any]:
    """The caller's keys that survive; a key the builder owns is dropped with a warning."""
    out: dict[str, Any] = {}
    for key, value in (given or {}).items():
        if owned(key):
            _drop(key, what)
        else:
            out[key] = value
    return out


def context_template(
    *,
    config: Mapping[str, Any],
    trigger_source: str,
    lifecycle: str | None = None,
    core: Any = None,
    app: Any = None,
    base_config: Mapping[str, Any] | None = None,
    session_asset_store: Any = None,
    request_context: Mapping[str, Any] | None = None,
    request_runtime: Any = None,
    original_session: SessionLike | Mapping[str, Any] | None = None,
    previous_agent_id: str | None = None,
    next_agent_id: str | None = None,
    error: BaseException | Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    objects: Mapping[str, Any] | None = None,
) -> ContextTemplate:
    """Check and freeze everything but the session: :func:`build_context` in two steps.

    The dispatcher builds the template once per run and renders it for each action with the
    session as it is then. Arguments and errors are those of :func:`build_context`.
    """
    owned: dict[str, Any] = {
        "config": dict(config),
        "trigger_source": trigger_source,
        "lifecycle": lifecycle,
        "request_context": dict(request_context) if request_context is not None else None,
        "original_session": (
            serialize_session(original_session, name="context['original_session']")
            if original_session is not None
            else None
        ),
        "previous_agent_id": previous_agent_id,
        "next_agent_id": next_agent_id,
        "error": serialize_error(error) if error is not None else None,
    }
    if app is not None:
        owned["base_config"] = dict(base_config) if base_config is not None else dict(config)
    # Lifecycle keys the builder has no value for pass from the caller's data.
    data = _caller(extra, lambda key: key in _ALWAYS_OWNED or owned.get(key) is not None, "context")
    live = _caller(objects, _OWNED.__contains__, "context object")
    for key in set(data) & set(live):
        raise ContextError(f"context[{key!r}] is given both as data and as an object")
    data.update({k: v for k, v in owned.items() if v is not None})
    for key, value in data.items():
        ensure_serializable(value, name=f"context[{key!r}]")
    live["core"] = core
    if request_runtime is not None:
        live["request_runtime"] = request_runtime
    if app is not None:
        live.update(app=app, application=app)
        if session_asset_store is not None:
            live["session_asset_store"] = session_asset_store
    return ContextTemplate(data_json=ensure_serializable(data), objects=live)


def build_context(
    *,
    session: SessionLike,
    config: Mapping[str, Any],
    trigger_source: str,
    lifecycle: str | None = None,
    core: Any = None,
    app: Any = None,
    base_config: Mapping[str, Any] | None = None,
    session_asset_store: Any = None,
    request_context: Mapping[str, Any] | None = None,
    request_runtime: Any = None,
    original_session: SessionLike | Mapping[str, Any] | None = None,
    previous_agent_id: str | None = None,
    next_agent_id: str | None = None,
    error: BaseException | Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    objects: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the context mapping an action receives (the dispatcher calls this for you).

    Args:
        session: the session the action works on (serialized into ``context['session']``).
        config: the effective (resolved) config.
        trigger_source: who started the run: ``"manual"``, ``"application"``, ``"core"``,
            ``"server"``, ...
        lifecycle: the lifecycle name; omitted for manual runs.
        core: the core object (``None`` when there is none).
        app: the application object; when given, the application layer is added.
        base_config: the full application config (defaults to ``config``).
        session_asset_store: optional application asset store (live object).
        request_context: request-initialized plugin data (JSON data).
        request_runtime: request runtime helpers (live object).
        original_session: fork source, serialized.
        previous_agent_id: agent-switch source.
        next_agent_id: agent-switch destination.
        error: the failure of a ``request_error`` run, serialized.
        extra: additive caller data (JSON data); builder-owned keys are dropped with a warning.
        objects: additive caller live objects (``terminal``, ``server``, ...).

    Raises:
        ContextError: when a data key is not JSON-serializable (the message names the path).
    """
    options = dict(locals())
    del options["session"]
    return context_template(**options).render(session)
