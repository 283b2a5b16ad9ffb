"""``_meta``: the one extension slot every wire type carries.

Rules (from the Agent Client Protocol's extensibility chapter, which the Agent Host Protocol
follows):

* ``_meta`` is an object of string keys to arbitrary values. Receivers make no assumptions about
  the values.
* A ``_meta`` that is not an object (a string, a number, a list, ``null``) is treated as
  *absent*; decoding never fails because of it.
* The root keys ``traceparent``, ``tracestate`` and ``baggage`` are reserved for W3C trace
  context. :func:`merge_meta` refuses to write them; :func:`with_trace_context` is the one way
  in, and it checks the ``traceparent`` format.
* Custom data never goes at the root of a protocol type; it goes under a namespaced key in
  ``_meta`` (``{"example.com/feature": ...}``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "RESERVED_META_KEYS",
    "merge_meta",
    "meta_from",
    "put_meta",
    "trace_context",
    "with_trace_context",
]

RESERVED_META_KEYS: frozenset[str] = frozenset({"traceparent", "tracestate", "baggage"})
"""Root ``_meta`` keys reserved for W3C trace context."""

_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")


def meta_from(value: Any) -> dict[str, Any] | None:
    """Decode a ``_meta`` value leniently.

    Args:
        value: whatever the wire carried under ``_meta`` (or ``None`` when the key was absent).

    Returns:
        A fresh ``dict`` copy when ``value`` is an object with string keys, otherwise ``None``
        (a non-object ``_meta`` counts as absent, never as an error).
    """
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return dict(value)
    return None


def put_meta(out: dict[str, Any], meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """Write ``meta`` into ``out`` under ``_meta`` when it is not ``None``; return ``out``."""
    if meta is not None:
        out["_meta"] = dict(meta)
    return out


def merge_meta(base: Mapping[str, Any] | None, extra: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``base`` updated with ``extra`` (a new dict; neither argument changes).

    Raises:
        ValueError: ``extra`` sets a reserved trace-context key; use
            :func:`with_trace_context` for those.
    """
    clash = sorted(RESERVED_META_KEYS.intersection(extra))
    if clash:
        raise ValueError(
            f"_meta keys {clash} are reserved for W3C trace context; "
            "set them with with_trace_context() or put custom data under a namespaced key"
        )
    merged = dict(base or {})
    merged.update(extra)
    return merged


def trace_context(meta: Mapping[str, Any] | None) -> dict[str, str]:
    """Return the W3C trace-context entries of ``meta`` (only string values are kept)."""
    if not isinstance(meta, Mapping):
        return {}
    return {k: v for k in sorted(RESERVED_META_KEYS) if isinstance(v := meta.get(k), str)}


def with_trace_context(
    meta: Mapping[str, Any] | None,
    *,
    traceparent: str,
    tracestate: str | None = None,
    baggage: str | None = None,
) -> dict[str, Any]:
    """Return a copy of ``meta`` carrying W3C trace context at its root.

    Args:
        meta: the existing ``_meta`` (or ``None``).
        traceparent: ``version-traceid-parentid-flags`` in lower-case hex.
        tracestate: the vendor list, passed through unchanged.
        baggage: the baggage header, passed through unchanged.

    Raises:
        ValueError: ``traceparent`` is not in the W3C format.
    """
    if not _TRACEPARENT.match(traceparent):
        raise ValueError(
            f"traceparent {traceparent!r} is not W3C trace context "
            "(expected '00-<32 hex>-<16 hex>-<2 hex>')"
        )
    out = dict(meta or {})
    out["traceparent"] = traceparent
    for key, value in (("tracestate", tracestate), ("baggage", baggage)):
        if value is not None:
            out[key] = value
    return out
