"""Content blocks and tool results: the wire-shaped data every tool call produces.

Shapes follow the MCP ``CallToolResult`` family (text, image, audio, resource link, embedded
resource), so results map onto MCP and provider formats without loss. Every type carries an
optional ``meta`` mapping, written as ``_meta`` on the wire, that survives a round trip.

A content block whose ``type`` starts with ``_`` and is unknown is an *extension block*: it is
kept as :class:`ExtensionContent` and written back unchanged. An unknown type without the ``_``
prefix is a :class:`~customtools.ContentError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from customtools._errors import ContentError

__all__ = [
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ExtensionContent",
    "ImageContent",
    "ResourceLink",
    "TextContent",
    "ToolResult",
    "content_from_dict",
    "normalize_result",
    "text_result",
]


def _meta_from(data: Mapping[str, Any], where: str) -> Mapping[str, Any] | None:
    meta = data.get("_meta")
    if meta is None:
        return None
    if not isinstance(meta, Mapping):
        raise ContentError(f"{where}: '_meta' must be an object, got {type(meta).__name__}")
    return dict(meta)


def _put_meta(
    out: dict[str, Any],
    meta: Mapping[str, Any] | None,
    annotations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    if annotations is not None:
        out["annotations"] = dict(annotations)
    if meta is not None:
        out["_meta"] = dict(meta)
    return out


def _require_str(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ContentError(
            f"{where}: field '{key}' must be a string, got {type(value).__name__}"
            " (see docs/authoring.md#results)"
        )
    return value


@dataclass(frozen=True, kw_only=True)  # no slots: see text_result
class TextContent:
    """Plain text for the model.

    Args:
        text: the text.
        annotations: MCP-style annotations (``audience``, ``priority``, ...), kept as given.
        meta: ``_meta`` on the wire.
    """

    text: str
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    type: ClassVar[str] = "text"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form ``{"type": "text", "text": ...}``."""
        out: dict[str, Any] = {"type": "text", "text": self.text}
        return _put_meta(out, self.meta, self.annotations)


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageContent:
    """An image as base64 data.

    Args:
        data: base64-encoded bytes.
        mime_type: for example ``image/png``; ``mimeType`` on the wire.
        annotations: MCP-style annotations, kept as given.
        meta: ``_meta`` on the wire.
    """

    data: str
    mime_type: str
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    type: ClassVar[str] = "image"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form ``{"type": "image", "data": ..., "mimeType": ...}``."""
        out: dict[str, Any] = {"type": "image", "data": self.data, "mimeType": self.mime_type}
        return _put_meta(out, self.meta, self.annotations)


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioContent:
    """Audio as base64 data (``mimeType`` such as ``audio/wav`` on the wire)."""

    data: str
    mime_type: str
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    type: ClassVar[str] = "audio"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form ``{"type": "audio", "data": ..., "mimeType": ...}``."""
        out: dict[str, Any] = {"type": "audio", "data": self.data, "mimeType": self.mime_type}
        return _put_meta(out, self.meta, self.annotations)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceLink:
    """A link to a resource the host can fetch (MCP ``resource_link``).

    Optional fields left as ``None`` are omitted on the wire.
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    type: ClassVar[str] = "resource_link"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form ``{"type": "resource_link", "uri": ..., "name": ...}``."""
        out: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("size", self.size),
        ):
            if value is not None:
                out[key] = value
        return _put_meta(out, self.meta, self.annotations)


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddedResource:
    """A resource embedded in the result (MCP ``resource``).

    Args:
        resource: the resource contents as on the wire: ``uri``, optional ``mimeType``, and
            ``text`` or ``blob`` (base64). Kept as given, including unknown keys.
    """

    resource: Mapping[str, Any]
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    type: ClassVar[str] = "resource"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form ``{"type": "resource", "resource": {...}}``."""
        out: dict[str, Any] = {"type": "resource", "resource": dict(self.resource)}
        return _put_meta(out, self.meta, self.annotations)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionContent:
    """A content block of an extension type (its ``type`` starts with ``_``).

    customtools does not interpret it; ``data`` holds the whole wire object, ``type`` and
    ``_meta`` included, and :meth:`to_dict` writes it back unchanged.
    """

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.type.startswith("_"):
            raise ContentError(
                f"extension content type {self.type!r} must start with '_'"
                " (known types: text, image, audio, resource_link, resource)"
            )

    @property
    def meta(self) -> Mapping[str, Any] | None:
        """The block's ``_meta``, if any."""
        meta = self.data.get("_meta")
        return meta if isinstance(meta, Mapping) else None

    def to_dict(self) -> dict[str, Any]:
        """Return the block exactly as it was read."""
        out = dict(self.data)
        out["type"] = self.type
        return out


ContentBlock = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | ExtensionContent
)
"""Any content block a result or update can carry."""

_CONTENT_TYPES = ("text", "image", "audio", "resource_link", "resource")


def content_from_dict(data: Mapping[str, Any], *, where: str = "content block") -> ContentBlock:
    """Build a content block from its wire form.

    Args:
        data: a mapping with a ``type`` key.
        where: how to name the block in an error (for example ``"tool 'grep' content[2]"``).

    Raises:
        ContentError: ``data`` is not a mapping, lacks a field, or has an unknown type that
            does not start with ``_``.
    """
    if not isinstance(data, Mapping):
        raise ContentError(f"{where}: expected an object with a 'type', got {type(data).__name__}")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ContentError(f"{where}: missing string field 'type'")
    annotations = data.get("annotations")
    if kind == "text":
        return TextContent(
            text=_require_str(data, "text", where),
            annotations=annotations,
            meta=_meta_from(data, where),
        )
    if kind in ("image", "audio"):
        cls = ImageContent if kind == "image" else AudioContent
        return cls(
            data=_require_str(data, "data", where),
            mime_type=_require_str(data, "mimeType", where),
            annotations=annotations,
            meta=_meta_from(data, where),
        )
    if kind == "resource_link":
        size = data.get("size")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool)):
            raise ContentError(f"{where}: field 'size' must be an integer")
        return ResourceLink(
            uri=_require_str(data, "uri", where),
            name=_require_str(data, "name", where),
            title=data.get("title"),
            description=data.get("description"),
            mime_type=data.get("mimeType"),
            size=size,
            annotations=annotations,
            meta=_meta_from(data, where),
        )
    if kind == "resource":
        resource = data.get("resource")
        if not isinstance(resource, Mapping):
            raise ContentError(f"{where}: field 'resource' must be an object")
        return EmbeddedResource(
            resource=dict(resource), annotations=annotations, meta=_meta_from(data, where)
        )
    if kind.startswith("_"):
        return ExtensionContent(type=kind, data=dict(data))
    raise ContentError(
        f"{where}: unknown content type {kind!r}; use one of {', '.join(_CONTENT_TYPES)},"
        " or prefix an extension type with '_'"
    )


def _block(value: Any, where: str) -> ContentBlock:
    if isinstance(value, ContentBlock):
        return value
    if isinstance(value, str):
        return TextContent(text=value)
    return content_from_dict(value, where=where)


@dataclass(frozen=True, kw_only=True)  # no slots: see text_result
class ToolResult:
    """The outcome of a tool call, or one partial update of it.

    Args:
        content: blocks for the model (text, images, ...). A ``list`` is accepted and stored
            as a tuple.
        details: anything JSON-shaped for the host and UI; never sent to the model.
        is_error: the call failed; the content says why. ``isError`` on the wire.
        structured_content: a JSON object mirroring the result for machine readers
            (MCP ``structuredContent``).
        meta: ``_meta`` on the wire.
    """

    content: tuple[ContentBlock, ...] = ()
    details: Any = None
    is_error: bool = False
    structured_content: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.content, tuple):  # a list is accepted at run time
            object.__setattr__(self, "content", tuple(self.content))  # type: ignore[unreachable]

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        details: Any = None,
        is_error: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolResult:
        """A result holding one text block."""
        return cls(content=(TextContent(text=text),), details=details, is_error=is_error, meta=meta)

    @property
    def text(self) -> str:
        """The text of every text block, joined by newlines (``""`` when there is none)."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form: ``content``, ``isError`` and, when set, ``details``,
        ``structuredContent`` and ``_meta``."""
        out: dict[str, Any] = {
            "content": [block.to_dict() for block in self.content],
            "isError": self.is_error,
        }
        if self.details is not None:
            out["details"] = self.details
        if self.structured_content is not None:
            out["structuredContent"] = dict(self.structured_content)
        return _put_meta(out, self.meta)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "result") -> ToolResult:
        """Build a result from its wire form (see :meth:`to_dict`).

        Raises:
            ContentError: a field has the wrong type or a content block is invalid.
        """
        if not isinstance(data, Mapping):
            raise ContentError(f"{where}: expected an object, got {type(data).__name__}")
        raw_content = data.get("content", ())
        if isinstance(raw_content, (str, bytes)) or not isinstance(raw_content, Sequence):
            raise ContentError(
                f"{where}: 'content' must be a list of content blocks,"
                f" got {type(raw_content).__name__}"
            )
        blocks = tuple(
            _block(item, f"{where} content[{index}]") for index, item in enumerate(raw_content)
        )
        is_error = data.get("isError", data.get("is_error", False))
        if not isinstance(is_error, bool):
            raise ContentError(f"{where}: 'isError' must be true or false")
        structured = data.get("structuredContent")
        if structured is not None and not isinstance(structured, Mapping):
            raise ContentError(f"{where}: 'structuredContent' must be an object")
        return cls(
            content=blocks,
            details=data.get("details"),
            is_error=is_error,
            structured_content=structured,
            meta=_meta_from(data, where),
        )


_new = object.__new__


def text_result(text: str, details: Any = None, is_error: bool = False) -> ToolResult:
    """Build a one-text-block result without the dataclass ``__init__`` (the adapter's hot path).

    A frozen dataclass ``__init__`` costs about 0.6 µs per object, and setting slots one by one
    through ``object.__setattr__`` about 0.4 µs. ``TextContent`` and ``ToolResult`` are the two
    value objects built on every call, so they are the only ones left without ``__slots__``:
    their instance ``__dict__`` is filled directly here, holding only the fields that differ
    from the defaults (the others read the dataclass's class-level defaults). That is about
    four times cheaper than the ``__init__`` path (see ``benchmarks/bench_adapter.py``; the
    whole call budget is about 1.3 µs).
    """
    block = _new(TextContent)
    block.__dict__["text"] = text  # item assignment: the frozen __setattr__ is not involved
    result = _new(ToolResult)
    fields = result.__dict__
    fields["content"] = (block,)
    if details is not None or is_error:
        fields["details"] = details
        fields["is_error"] = is_error
    return result


def normalize_result(value: Any, *, tool_name: str) -> ToolResult:
    """Turn whatever a tool returned into a :class:`ToolResult`.

    Accepted: a :class:`ToolResult`; a ``str`` (one text block); a mapping with ``content``
    and/or ``details`` (and optionally ``isError``/``is_error``, ``structuredContent``,
    ``_meta``) whose content entries are content blocks, their wire dicts, or strings.

    Raises:
        ContentError: anything else; the message names the tool and the type it returned.
    """
    if type(value) is ToolResult:
        return value
    if isinstance(value, str):
        return text_result(str(value))
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, Mapping):
        if "content" not in value and "details" not in value:
            raise ContentError(
                f"tool {tool_name!r} returned a mapping without 'content' or 'details'"
                f" (keys: {sorted(map(str, value))}); return a ToolResult, a str,"
                " or a mapping with 'content' and/or 'details'"
            )
        return ToolResult.from_dict(value, where=f"tool {tool_name!r} result")
    raise ContentError(
        f"tool {tool_name!r} returned {type(value).__name__}; return a ToolResult, a str,"
        " or a mapping with 'content' and/or 'details'"
    )
