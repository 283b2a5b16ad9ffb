"""The session an action works on: a reference :class:`Session` and the host Protocol.

The dispatcher never mutates a session in place. It derives a new one with
``with_changes(messages=..., metadata=...)`` after each action, so a host can bring its own
session type by implementing :class:`SessionLike`, and the caller's object is left untouched.

``session_metadata`` patches use JSON Merge Patch semantics (RFC 7396): nested mappings merge
key by key, ``None`` deletes a key, anything else replaces. So a plugin can repair one entry of
``metadata["overrides"]`` without knowing the others.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["Session", "SessionLike", "merge_patch"]

S = TypeVar("S", bound="SessionLike")


@runtime_checkable
class SessionLike(Protocol):
    """What the dispatcher needs from a host's session type.

    Implementations must treat ``with_changes`` as a pure function: return a new object and
    leave ``self`` as it was.
    """

    @property
    def id(self) -> str:
        """Stable session id."""
        ...

    @property
    def messages(self) -> Sequence[Mapping[str, Any]]:
        """The visible transcript."""
        ...

    @property
    def metadata(self) -> Mapping[str, Any]:
        """Session-owned metadata, including ``overrides``."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable form (it is what plugins see as ``context['session']``)."""
        ...

    def with_changes(
        self: S,
        *,
        messages: Sequence[Mapping[str, Any]] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> S:
        """Return a copy with ``messages`` and/or ``metadata`` replaced."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Session:
    """A minimal session: id, messages and metadata.

    Messages are plain mappings (``{"role": ..., "content": ...}`` or any shape the host
    uses). The object is frozen; derive changed copies with :meth:`with_changes`.

    Args:
        id: stable session id.
        messages: the transcript.
        metadata: session-owned metadata; ``metadata["overrides"]`` holds per-session settings.
        meta: ``_meta`` on the wire.
    """

    id: str
    messages: tuple[Mapping[str, Any], ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"Session id must be a non-empty string, got {self.id!r}")
        object.__setattr__(self, "messages", tuple(self.messages))

    @property
    def overrides(self) -> Mapping[str, Any]:
        """``metadata["overrides"]``, or an empty mapping."""
        value = self.metadata.get("overrides")
        return value if isinstance(value, Mapping) else {}

    def with_changes(
        self,
        *,
        messages: Sequence[Mapping[str, Any]] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Session:
        """Return a copy with ``messages`` and/or ``metadata`` replaced."""
        return Session(
            id=self.id,
            messages=tuple(messages) if messages is not None else self.messages,
            metadata=dict(metadata) if metadata is not None else self.metadata,
            meta=self.meta,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"id", "messages", "metadata"}`` (plus ``_meta``) as fresh plain data."""
        out: dict[str, Any] = {
            "id": self.id,
            "messages": [copy.deepcopy(dict(m)) for m in self.messages],
            "metadata": copy.deepcopy(dict(self.metadata)),
        }
        if self.meta is not None:
            out["_meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Session:
        """Build a session from :meth:`to_dict` output.

        Raises:
            ValueError: when ``id`` is missing or a field has the wrong type.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"Session.from_dict needs a mapping, got {type(data).__name__}")
        messages = data.get("messages", [])
        metadata = data.get("metadata", {})
        meta = data.get("_meta")
        if not isinstance(messages, (list, tuple)) or not all(
            isinstance(m, Mapping) for m in messages
        ):
            raise ValueError("Session.from_dict: 'messages' must be a list of mappings")
        if not isinstance(metadata, Mapping):
            raise ValueError("Session.from_dict: 'metadata' must be a mapping")
        if meta is not None and not isinstance(meta, Mapping):
            raise ValueError("Session.from_dict: '_meta' must be a mapping")
        return cls(
            id=data.get("id"),  # type: ignore[arg-type]  # checked in __post_init__
            messages=tuple(copy.deepcopy(dict(m)) for m in messages),
            metadata=copy.deepcopy(dict(metadata)),
            meta=dict(meta) if meta is not None else None,
        )


def merge_patch(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a JSON Merge Patch (RFC 7396) and return a new mapping; inputs are untouched.

    Example:
        >>> merge_patch({"overrides": {"a": 1, "b": 2}}, {"overrides": {"b": None, "c": 3}})
        {'overrides': {'a': 1, 'c': 3}}
    """
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping):
            current = out.get(key)
            out[key] = merge_patch(current if isinstance(current, Mapping) else {}, value)
        else:
            out[key] = copy.deepcopy(value)
    return out
