"""Small value types inside customizations: text ranges, icons, load and MCP server states."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from customtools.host._codec import (
    Field,
    convert,
    decode_fields,
    encode_fields,
    put_extra,
    require_object,
)
from customtools.host._errors import CustomizationError

__all__ = ["CustomizationLoadState", "Icon", "McpServerState", "TextRange"]


_LOAD_KINDS = ("loading", "loaded", "degraded", "error")
_MCP_KINDS = ("starting", "ready", "authRequired", "error", "stopped")
_MCP_REQUIRED = {"authRequired": ("reason", "resource"), "error": ("error",)}


@dataclass(frozen=True, slots=True, kw_only=True)
class TextRange:
    """A zero-based span ``{start: {line, character}, end: {line, character}}`` in ``uri``."""

    start_line: int
    start_character: int
    end_line: int
    end_character: int

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "start": {"line": self.start_line, "character": self.start_character},
            "end": {"line": self.end_line, "character": self.end_character},
        }

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "range") -> TextRange:
        """Decode a ``TextRange``; raise :class:`CustomizationError` if malformed."""
        obj = require_object(data, where)
        values: list[int] = []
        for end in ("start", "end"):
            pos = require_object(obj.get(end), f"{where}.{end}")
            for key in ("line", "character"):
                v = pos.get(key)
                if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                    raise CustomizationError(
                        f"{where}.{end}.{key} must be a non-negative integer", where=where
                    )
                values.append(v)
        return cls(
            start_line=values[0],
            start_character=values[1],
            end_line=values[2],
            end_character=values[3],
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Icon:
    """A display icon: ``src`` URI plus optional ``contentType``, ``sizes`` and ``theme``."""

    src: str
    content_type: str | None = None
    sizes: tuple[str, ...] | None = None
    theme: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("src", "src", required=True),
        Field("content_type", "contentType"),
        Field("sizes", "sizes", "strs"),
        Field("theme", "theme"),
    )

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form."""
        return put_extra(encode_fields(self, self._FIELDS, {}), self.extra)

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "icon") -> Icon:
        """Decode an ``Icon``."""
        kwargs, extra = decode_fields(require_object(data, where), cls._FIELDS, where)
        return cls(**kwargs, extra=extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomizationLoadState:
    """A container's host-reported load state, discriminated by ``kind``.

    ``loading`` and ``loaded`` carry nothing; ``degraded`` (partly loaded) and ``error`` (failed)
    require a ``message``. An unknown ``kind`` is kept with its other keys in ``extra``. Build
    the known ones with :meth:`loading`, :meth:`loaded`, :meth:`degraded`, :meth:`error`.
    """

    kind: str
    message: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def loading(cls) -> CustomizationLoadState:
        """The host is loading / parsing the container."""
        return cls(kind="loading")

    @classmethod
    def loaded(cls) -> CustomizationLoadState:
        """The host fully resolved the container."""
        return cls(kind="loaded")

    @classmethod
    def degraded(cls, message: str) -> CustomizationLoadState:
        """The container partly loaded; ``message`` describes what went wrong."""
        return cls(kind="degraded", message=message)

    @classmethod
    def error(cls, message: str) -> CustomizationLoadState:
        """The container failed to load; ``message`` carries the error."""
        return cls(kind="error", message=message)

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form ``{"kind": ..., "message"?: ...}``."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.message is not None:
            out["message"] = self.message
        return put_extra(out, self.extra)

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "load") -> CustomizationLoadState:
        """Decode a load state; ``degraded``/``error`` without a string ``message`` raise."""
        obj = require_object(data, where)
        kind = convert(obj.get("kind"), "str", f"{where}.kind")
        needs_message = kind in ("degraded", "error")
        fields = (Field("message", "message", required=needs_message),)
        if kind not in _LOAD_KINDS:
            return cls(kind=kind, extra={k: v for k, v in obj.items() if k != "kind"})
        kwargs, extra = decode_fields(obj, fields, where, handled=("kind",))
        return cls(kind=kind, **kwargs, extra=extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerState:
    """An MCP server's runtime state: ``kind`` plus that kind's fields, kept as given.

    This union is *closed* in the protocol's generated clients: an unknown ``kind`` that starts
    with ``_`` is kept as an extension, any other unknown ``kind`` is rejected.
    """

    kind: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form."""
        return {"kind": self.kind, **self.fields}

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "state") -> McpServerState:
        """Decode an MCP server state."""
        obj = require_object(data, where)
        kind = convert(obj.get("kind"), "str", f"{where}.kind")
        if kind not in _MCP_KINDS and not kind.startswith("_"):
            raise CustomizationError(
                f"{where}.kind {kind!r} is not an MCP server state ({', '.join(_MCP_KINDS)}); "
                "extension states must start with '_'",
                where=where,
            )
        for key in _MCP_REQUIRED.get(kind, ()):
            if obj.get(key) is None:
                raise CustomizationError(f"{where}: a {kind!r} state requires '{key}'", where=where)
        return cls(kind=kind, fields={k: v for k, v in obj.items() if k != "kind"})
