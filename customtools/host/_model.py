"""The customization tree of the Agent Host Protocol, as frozen value objects.

A session's ``customizations`` list holds top-level entries -- :class:`PluginCustomization`,
:class:`DirectoryCustomization` (containers) or a bare :class:`McpServerCustomization` -- and
containers hold leaf children (agent, skill, prompt, rule, hook, mcpServer). ``to_dict`` and the
``*_from_dict`` functions speak the protocol's camelCase JSON.

Round trips are lossless: ``_meta`` is kept (a non-object ``_meta`` counts as absent), ``null``
stays distinct from absent, ``children`` absent ("not parsed yet") stays distinct from ``[]``
("parsed, empty"), unknown extra keys are kept in ``extra``, and an entry whose ``type`` is
unknown decodes to :class:`UnknownCustomization` and re-encodes verbatim (the customization
unions are open). A *known* ``type`` with a malformed payload raises
:class:`~customtools.host.CustomizationError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from customtools.host._codec import (
    Field,
    convert,
    decode_fields,
    encode_fields,
    put_extra,
    require_object,
)
from customtools.host._errors import CustomizationError
from customtools.host._meta import meta_from, put_meta
from customtools.host._parts import (
    CustomizationLoadState,
    Icon,
    McpServerState,
    TextRange,
)

__all__ = [
    "CHILD_TYPES",
    "AgentCustomization",
    "ChildCustomization",
    "ClientPluginCustomization",
    "Customization",
    "CustomizationLoadState",
    "DirectoryCustomization",
    "HookCustomization",
    "Icon",
    "McpServerCustomization",
    "McpServerState",
    "PluginCustomization",
    "PromptCustomization",
    "RuleCustomization",
    "SkillCustomization",
    "TextRange",
    "UnknownCustomization",
    "child_from_dict",
    "client_plugin_from_dict",
    "customization_from_dict",
]

CHILD_TYPES: frozenset[str] = frozenset({"agent", "skill", "prompt", "rule", "hook", "mcpServer"})
"""The ``ChildCustomizationType`` values: what a container's ``children`` may hold."""

_BASE_FIELDS = (
    Field("id", "id", required=True),
    Field("uri", "uri", required=True),
    Field("name", "name", required=True),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Customization:
    """Fields every customization carries."""

    id: str
    uri: str
    name: str
    icons: tuple[Icon, ...] | None = None
    range: TextRange | None = None
    meta: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    type: ClassVar[str] = ""
    _FIELDS: ClassVar[tuple[Field, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return the protocol's camelCase JSON for this customization."""
        out: dict[str, Any] = {"type": self.type}
        encode_fields(self, _BASE_FIELDS, out)
        if self.icons is not None:
            out["icons"] = [icon.to_dict() for icon in self.icons]
        if self.range is not None:
            out["range"] = self.range.to_dict()
        self._encode_more(out)
        encode_fields(self, self._FIELDS, out)
        put_meta(out, self.meta)
        return put_extra(out, self.extra)

    def _encode_more(self, out: dict[str, Any]) -> None:
        """Hook for subclasses with structured fields."""

    @classmethod
    def _decode(
        cls, data: Mapping[str, Any], where: str, handled: tuple[str, ...] = (), **structured: Any
    ) -> Any:
        handled = ("type", "icons", "range", "_meta", *handled)
        kwargs, extra = decode_fields(data, (*_BASE_FIELDS, *cls._FIELDS), where, handled=handled)
        icons = data.get("icons")
        if icons is not None:
            items = convert(icons, "any", f"{where}.icons")
            if not isinstance(items, list):
                raise CustomizationError(f"{where}.icons must be an array", where=where)
            kwargs["icons"] = tuple(
                Icon.from_dict(i, where=f"{where}.icons[{n}]") for n, i in enumerate(items)
            )
        if data.get("range") is not None:
            kwargs["range"] = TextRange.from_dict(data["range"], where=f"{where}.range")
        for key in handled[1:]:
            if key in data and data[key] is None:
                extra[key] = None  # null stays distinct from absent on re-encode
        # A non-object _meta counts as absent and is dropped.
        return cls(**kwargs, **structured, meta=meta_from(data.get("_meta")), extra=extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Container(_Customization):
    enabled: bool = True
    client_id: str | None = None
    load: CustomizationLoadState | None = None
    children: tuple[ChildCustomization, ...] | None = None

    def _encode_more(self, out: dict[str, Any]) -> None:
        out["enabled"] = self.enabled
        if self.client_id is not None:
            out["clientId"] = self.client_id
        if self.load is not None:
            out["load"] = self.load.to_dict()
        if self.children is not None:
            out["children"] = [child.to_dict() for child in self.children]

    @classmethod
    def _decode_container(cls, data: Mapping[str, Any], where: str, **more: Any) -> Any:
        enabled = data.get("enabled")
        if not isinstance(enabled, bool):
            raise CustomizationError(
                f"{where}: required field 'enabled' is missing or not a boolean", where=where
            )
        structured: dict[str, Any] = {"enabled": enabled, **more}
        client_id = data.get("clientId")
        if client_id is not None:
            structured["client_id"] = convert(client_id, "str", f"{where}.clientId")
        if data.get("load") is not None:
            structured["load"] = CustomizationLoadState.from_dict(
                data["load"], where=f"{where}.load"
            )
        children = data.get("children")
        if children is not None:
            if not isinstance(children, list):
                raise CustomizationError(f"{where}.children must be an array", where=where)
            structured["children"] = tuple(
                child_from_dict(c, where=f"{where}.children[{n}]") for n, c in enumerate(children)
            )
        return cls._decode(data, where, ("enabled", "clientId", "load", "children"), **structured)


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginCustomization(_Container):
    """An Open Plugins package (a container). ``client_id`` is set when a client published it."""

    type: ClassVar[str] = "plugin"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientPluginCustomization(PluginCustomization):
    """A plugin as a client publishes it, with an opaque ``nonce`` version token.

    The host compares nonces for equality to skip re-parsing an unchanged plugin; an absent
    nonce always means "parse again".
    """

    nonce: str | None = None
    _FIELDS: ClassVar[tuple[Field, ...]] = (Field("nonce", "nonce"),)


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryCustomization(_Container):
    """A directory the host watches. ``contents`` names the child kind it holds; ``writable``
    says clients may save into it (with ``resourceWrite``). It may not exist on disk yet."""

    contents: str
    writable: bool
    type: ClassVar[str] = "directory"
    _FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("contents", "contents", required=True),
        Field("writable", "writable", "bool", True),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentCustomization(_Customization):
    """An agent definition (``agents/*.md``): optional ``description``, ``model``, ``tools``."""

    description: str | None = None
    model: str | None = None
    tools: tuple[str, ...] | None = None
    type: ClassVar[str] = "agent"
    _FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("description", "description"),
        Field("model", "model"),
        Field("tools", "tools", "strs"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillCustomization(_Customization):
    """A skill (``skills/<name>/SKILL.md`` or a flat command file)."""

    description: str | None = None
    disable_model_invocation: bool | None = None
    type: ClassVar[str] = "skill"
    _FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("description", "description"),
        Field("disable_model_invocation", "disableModelInvocation", "bool"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptCustomization(_Customization):
    """A reusable prompt."""

    description: str | None = None
    type: ClassVar[str] = "prompt"
    _FIELDS: ClassVar[tuple[Field, ...]] = (Field("description", "description"),)


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleCustomization(_Customization):
    """A rule or instruction file. ``always_apply`` absent means "not stated", never ``False``."""

    description: str | None = None
    always_apply: bool | None = None
    globs: tuple[str, ...] | None = None
    type: ClassVar[str] = "rule"
    _FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("description", "description"),
        Field("always_apply", "alwaysApply", "bool"),
        Field("globs", "globs", "strs"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class HookCustomization(_Customization):
    """A hook declaration; ``event`` and ``matcher`` are display metadata only."""

    event: str | None = None
    matcher: str | None = None
    type: ClassVar[str] = "hook"
    _FIELDS: ClassVar[tuple[Field, ...]] = (Field("event", "event"), Field("matcher", "matcher"))


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerCustomization(_Customization):
    """An MCP server, as a child or as a bare top-level entry. It can be toggled."""

    state: McpServerState
    enabled: bool = True
    channel: str | None = None
    mcp_app: Mapping[str, Any] | None = None
    type: ClassVar[str] = "mcpServer"
    _FIELDS: ClassVar[tuple[Field, ...]] = (
        Field("enabled", "enabled", "bool", True),
        Field("channel", "channel"),
        Field("mcp_app", "mcpApp", "obj"),
    )

    def _encode_more(self, out: dict[str, Any]) -> None:
        out["state"] = self.state.to_dict()


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownCustomization:
    """An entry whose ``type`` this version does not know, kept verbatim.

    ``is_extension`` tells an implementation extension (``type`` starts with ``_``) from a
    value reserved for a future protocol version; both are preserved, neither is interpreted.
    """

    raw: Mapping[str, Any]

    @property
    def type(self) -> str:
        """The unknown ``type`` value (``""`` if missing)."""
        value = self.raw.get("type")
        return value if isinstance(value, str) else ""

    @property
    def id(self) -> str | None:
        """The entry's ``id`` if it has a string one."""
        value = self.raw.get("id")
        return value if isinstance(value, str) else None

    @property
    def is_extension(self) -> bool:
        """True when ``type`` is an implementation extension (starts with ``_``)."""
        return self.type.startswith("_")

    def to_dict(self) -> dict[str, Any]:
        """Return the original JSON object (a shallow copy)."""
        return dict(self.raw)


ChildCustomization: TypeAlias = (
    AgentCustomization
    | SkillCustomization
    | PromptCustomization
    | RuleCustomization
    | HookCustomization
    | McpServerCustomization
    | UnknownCustomization
)
Customization: TypeAlias = (
    PluginCustomization | DirectoryCustomization | McpServerCustomization | UnknownCustomization
)

_CHILD_CLASSES: dict[str, type[_Customization]] = {
    cls.type: cls
    for cls in (
        AgentCustomization,
        SkillCustomization,
        PromptCustomization,
        RuleCustomization,
        HookCustomization,
    )
}


def _decode_mcp(data: Mapping[str, Any], where: str) -> McpServerCustomization:
    if data.get("state") is None:
        raise CustomizationError(f"{where}: required field 'state' is missing", where=where)
    state = McpServerState.from_dict(data["state"], where=f"{where}.state")
    result: McpServerCustomization = McpServerCustomization._decode(
        data, where, ("state",), state=state
    )
    return result


def _type_of(data: Mapping[str, Any], where: str) -> str:
    return str(convert(data.get("type"), "str", f"{where}.type"))


def child_from_dict(data: Any, *, where: str = "child") -> ChildCustomization:
    """Decode one child of a container (an unknown ``type`` gives :class:`UnknownCustomization`).

    Raises:
        CustomizationError: the payload is malformed, or it is a container (containers cannot
            nest).
    """
    obj = require_object(data, where)
    kind = _type_of(obj, where)
    if kind == "mcpServer":
        return _decode_mcp(obj, where)
    cls = _CHILD_CLASSES.get(kind)
    if cls is not None:
        child: ChildCustomization = cls._decode(obj, where)
        return child
    if kind in ("plugin", "directory"):
        raise CustomizationError(
            f"{where}: a {kind!r} cannot be a child; containers do not nest", where=where
        )
    return UnknownCustomization(raw=dict(obj))


def customization_from_dict(data: Any, *, where: str = "customization") -> Customization:
    """Decode one top-level entry of ``SessionState.customizations``.

    A ``plugin`` carrying a ``nonce`` decodes to :class:`ClientPluginCustomization`.

    Raises:
        CustomizationError: the payload is malformed, or it is a child kind other than
            ``mcpServer`` (those live inside a container).
    """
    obj = require_object(data, where)
    kind = _type_of(obj, where)
    if kind == "plugin":
        cls = ClientPluginCustomization if "nonce" in obj else PluginCustomization
        plugin: PluginCustomization = cls._decode_container(obj, where)
        return plugin
    if kind == "directory":
        directory: DirectoryCustomization = DirectoryCustomization._decode_container(obj, where)
        return directory
    if kind == "mcpServer":
        return _decode_mcp(obj, where)
    if kind in CHILD_TYPES:
        raise CustomizationError(
            f"{where}: a {kind!r} cannot be top-level; put it in a plugin's or directory's "
            "'children'",
            where=where,
        )
    return UnknownCustomization(raw=dict(obj))


def client_plugin_from_dict(
    data: Any, *, where: str = "customization"
) -> ClientPluginCustomization:
    """Decode a ``ClientPluginCustomization`` (what ``SessionActiveClient.customizations`` holds).

    Raises:
        CustomizationError: the payload is not a well-formed ``plugin``.
    """
    obj = require_object(data, where)
    if obj.get("type") != "plugin":
        raise CustomizationError(
            f"{where}: clients publish plugins only, got type {obj.get('type')!r}", where=where
        )
    result: ClientPluginCustomization = ClientPluginCustomization._decode_container(obj, where)
    return result
