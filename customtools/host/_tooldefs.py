"""Tool definitions and active clients: the wire types a client publishes.

``ToolDefinition`` mirrors MCP's ``Tool`` (only ``name`` is required); ``SessionActiveClient`` is
one entry of ``SessionState.activeClients``: a client id, its tools and the plugins it publishes.
Both round-trip ``_meta``, ``null`` values and unknown keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from customtools._export import to_mcp
from customtools._tool import CustomTool
from customtools.host._codec import Field, decode_fields, encode_fields, put_extra, require_object
from customtools.host._errors import CustomizationError
from customtools.host._meta import meta_from, put_meta
from customtools.host._model import ClientPluginCustomization, client_plugin_from_dict

__all__ = ["SessionActiveClient", "ToolDefinition"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """A tool as the protocol describes it to clients and to the model.

    Args:
        name: the tool's name (a flat namespace shared by server and client tools).
        title: display name.
        description: what the tool does, for the model.
        input_schema: JSON Schema of the arguments (``None``: the tool has no schema, which is
            different from an empty schema ``{}``).
        output_schema: JSON Schema of structured output.
        annotations: advisory hints (``readOnlyHint``, ``destructiveHint``, ...), kept as given.
        meta: ``_meta`` on the wire.
        extra: unknown keys and explicit ``null`` values, kept for a lossless round trip.
    """

    name: str
    title: str | None = None
    description: str | None = None
    input_schema: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("name", "name", required=True),
        Field("title", "title"),
        Field("description", "description"),
        Field("input_schema", "inputSchema", "obj"),
        Field("output_schema", "outputSchema", "obj"),
        Field("annotations", "annotations", "obj"),
    )

    @classmethod
    def from_tool(cls, tool: CustomTool) -> ToolDefinition:
        """Describe a loaded custom tool the way it is advertised over MCP.

        Built from :func:`customtools._export.to_mcp`, so the host advertises exactly what the
        export does: ``title`` (the label, when it differs from the name), ``description``,
        ``inputSchema``, ``annotations`` and ``_meta``.
        """
        return cls.from_dict(to_mcp(tool), where=f"tool {tool.name!r}")

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form."""
        out = encode_fields(self, self._FIELDS, {})
        put_meta(out, self.meta)
        return put_extra(out, self.extra)

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "tool") -> ToolDefinition:
        """Decode a ``ToolDefinition``; a missing ``name`` raises ``CustomizationError``."""
        obj = require_object(data, where)
        kwargs, extra = decode_fields(obj, cls._FIELDS, where, handled=("_meta",))
        if obj.get("_meta", 0) is None:
            extra["_meta"] = None
        return cls(**kwargs, meta=meta_from(obj.get("_meta")), extra=extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionActiveClient:
    """One active client of a session: its tools and the plugins it publishes.

    Re-publishing the whole entry (``session/activeClientSet``) is the only way to change
    either; the reducer replaces the entry in place.
    """

    client_id: str
    tools: tuple[ToolDefinition, ...] = ()
    display_name: str | None = None
    customizations: tuple[ClientPluginCustomization, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("client_id", "clientId", required=True),
        Field("display_name", "displayName"),
    )

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form."""
        out = encode_fields(self, self._FIELDS, {})
        out["tools"] = [t.to_dict() for t in self.tools]
        if self.customizations is not None:
            out["customizations"] = [c.to_dict() for c in self.customizations]
        return put_extra(out, self.extra)

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "activeClient") -> SessionActiveClient:
        """Decode a ``SessionActiveClient`` (``clientId`` and ``tools`` are required)."""
        obj = require_object(data, where)
        kwargs, extra = decode_fields(obj, cls._FIELDS, where, handled=("tools", "customizations"))
        tools = obj.get("tools")
        if not isinstance(tools, list):
            raise CustomizationError(f"{where}: required array 'tools' is missing", where=where)
        kwargs["tools"] = tuple(
            ToolDefinition.from_dict(t, where=f"{where}.tools[{n}]") for n, t in enumerate(tools)
        )
        customizations = obj.get("customizations")
        if isinstance(customizations, list):
            kwargs["customizations"] = tuple(
                client_plugin_from_dict(c, where=f"{where}.customizations[{n}]")
                for n, c in enumerate(customizations)
            )
        elif customizations is not None:
            raise CustomizationError(f"{where}.customizations must be an array", where=where)
        elif "customizations" in obj:
            extra["customizations"] = None
        return cls(**kwargs, extra=extra)
