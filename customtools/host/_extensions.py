"""Protocol extensibility: ``_``-prefixed methods, open enum values, custom capabilities.

* **Extension methods.** Every JSON-RPC method whose name starts with ``_`` is reserved for
  extensions. :class:`ExtensionRegistry` dispatches them: a request with no handler (and any
  unknown method, ``_`` or not) is answered with ``-32601 "Method not found"``; a notification
  with no handler is ignored, and a notification never gets a response. Handlers are registered
  and looked up under the **full wire name, leading ``_`` included**.
* **Enum and union values.** A value starting with ``_`` is an implementation extension; an
  unknown value without it is reserved for a future protocol version and is never treated as a
  custom extension. Open unions keep both verbatim; closed ones may reject the latter
  (:func:`check_variant`).
* **Custom capabilities** go in the capability object's ``_meta`` under a domain key
  (``{"_meta": {"example.com": {"workspace": true}}}``); a capability that is absent is
  unsupported, and support is checked by presence, not ``== true``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeVar

from customtools._format import describe_exception
from customtools.host._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    CustomizationError,
    JsonRpcError,
)
from customtools.host._meta import meta_from

__all__ = [
    "ExtensionRegistry",
    "advertise_capability",
    "advertised_capability",
    "check_variant",
    "classify_variant",
    "supports_capability",
]

logger = logging.getLogger("customtools.host")
Handler = Callable[[dict[str, Any]], Any]
H = TypeVar("H", bound=Handler)


def classify_variant(value: str, known: Iterable[str]) -> Literal["known", "extension", "future"]:
    """Say what an enum or union discriminator value is.

    Returns:
        ``"known"`` if listed in ``known``, ``"extension"`` if it starts with ``_``, otherwise
        ``"future"`` (reserved for a later protocol version).
    """
    if value in set(known):
        return "known"
    return "extension" if value.startswith("_") else "future"


def check_variant(value: str, known: Iterable[str], *, field: str, closed: bool = False) -> str:
    """Return ``value`` if this union may hold it.

    Open unions accept everything (the caller preserves what it does not know). Closed unions
    accept known values and ``_`` extensions, and reject future values.

    Raises:
        CustomizationError: ``closed`` and ``value`` is neither known nor an extension.
    """
    kind = classify_variant(value, known)
    if closed and kind == "future":
        raise CustomizationError(
            f"{field} {value!r} is not one of {sorted(set(known))}; this union is closed, "
            "and extension values must start with '_'",
            where=field,
        )
    return value


def advertise_capability(
    capabilities: Mapping[str, Any] | None, domain: str, features: Mapping[str, Any]
) -> dict[str, Any]:
    """Return a copy of ``capabilities`` advertising ``features`` under ``_meta[domain]``.

    Features already advertised for the domain are kept and updated.
    """
    out = dict(capabilities or {})
    meta = meta_from(out.get("_meta")) or {}
    current = meta.get(domain)
    meta[domain] = {**(current if isinstance(current, Mapping) else {}), **features}
    out["_meta"] = meta
    return out


def advertised_capability(
    capabilities: Mapping[str, Any] | None, domain: str
) -> dict[str, Any] | None:
    """Return what a peer advertised under ``_meta[domain]`` (``None`` if nothing)."""
    if not isinstance(capabilities, Mapping):
        return None
    meta = meta_from(capabilities.get("_meta"))
    entry = meta.get(domain) if meta else None
    return dict(entry) if isinstance(entry, Mapping) else None


def supports_capability(capabilities: Mapping[str, Any] | None, domain: str, feature: str) -> bool:
    """True when the peer advertised ``feature`` for ``domain``.

    Presence counts: ``true`` and an object (``{}``) both mean supported; a missing feature,
    ``false`` or ``null`` mean unsupported.
    """
    entry = advertised_capability(capabilities, domain)
    if entry is None or feature not in entry:
        return False
    return entry[feature] not in (False, None)


class ExtensionRegistry:
    """Handlers for ``_``-prefixed JSON-RPC requests and notifications.

    Example:
        >>> registry = ExtensionRegistry()
        >>> @registry.request("_example.com/echo")
        ... def echo(params):
        ...     return {"echo": params.get("text")}
    """

    def __init__(self) -> None:
        self._requests: dict[str, Handler] = {}
        self._notifications: dict[str, Handler] = {}

    @staticmethod
    def _check_name(method: str) -> None:
        if not method.startswith("_") or len(method) < 2:
            raise ValueError(
                f"extension method {method!r} must start with '_' (names without it are "
                f"reserved for the protocol); register it as {'_' + method.lstrip('_')!r}"
            )

    def add_request(self, method: str, handler: Handler) -> None:
        """Register ``handler(params) -> result`` (sync or async) for a request method."""
        self._check_name(method)
        self._requests[method] = handler

    def add_notification(self, method: str, handler: Handler) -> None:
        """Register ``handler(params)`` (sync or async) for a notification method."""
        self._check_name(method)
        self._notifications[method] = handler

    def request(self, method: str) -> Callable[[H], H]:
        """Decorator form of :meth:`add_request`."""

        def register(handler: H) -> H:
            self.add_request(method, handler)
            return handler

        return register

    def notification(self, method: str) -> Callable[[H], H]:
        """Decorator form of :meth:`add_notification`."""

        def register(handler: H) -> H:
            self.add_notification(method, handler)
            return handler

        return register

    def methods(self) -> tuple[str, ...]:
        """Every registered method name, requests first (for capability advertisement)."""
        return (*self._requests, *self._notifications)

    async def handle(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """Handle one incoming JSON-RPC message.

        Returns:
            The response for a request (``result`` or ``error``, same ``id``); ``None`` for a
            notification, which never gets one.
        """
        method = message.get("method")
        is_request = "id" in message
        params = {} if message.get("params") is None else message["params"]
        handlers = self._requests if is_request else self._notifications
        handler = handlers.get(method) if isinstance(method, str) else None
        if not is_request:
            if handler is not None and isinstance(params, Mapping):
                try:
                    await _call(handler, dict(params))
                except Exception:
                    logger.exception("extension notification %s failed", method)
            return None
        try:
            if handler is None:
                raise JsonRpcError(METHOD_NOT_FOUND, "Method not found")
            if not isinstance(params, Mapping):
                raise JsonRpcError(INVALID_PARAMS, f"{method} takes an object as params")
            result = await _call(handler, dict(params))
        except JsonRpcError as exc:
            return {"jsonrpc": "2.0", "id": message["id"], "error": exc.to_dict()}
        except Exception as exc:
            error = JsonRpcError(
                INTERNAL_ERROR, f"extension {method} failed: {describe_exception(exc)}"
            )
            return {"jsonrpc": "2.0", "id": message["id"], "error": error.to_dict()}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}


async def _call(handler: Handler, params: dict[str, Any]) -> Any:
    result = handler(params)
    if inspect.isawaitable(result):
        result = await result
    return result
