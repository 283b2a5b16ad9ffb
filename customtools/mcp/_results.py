"""Mapping between :class:`~customtools.ToolResult` and MCP's ``CallToolResult``, both ways.

Used by the server (a tool's result goes out) and by mounted servers (a remote result comes
in). ``details`` travel under the namespaced result ``_meta`` key :data:`DETAILS_META_KEY`;
``structuredContent`` is used only for tools that declare an output schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types

from customtools._content import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ExtensionContent,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
    content_from_dict,
)

__all__ = [
    "DETAILS_META_KEY",
    "EXTENSION_META_KEY",
    "MESSAGE_CHARS",
    "from_call_result",
    "progress_message",
    "to_call_result",
]

DETAILS_META_KEY = "customtools/details"
"""Result ``_meta`` key carrying a tool's ``details`` (for UIs, not for the model)."""

EXTENSION_META_KEY = "customtools/content"
"""Content ``_meta`` key keeping an extension block MCP has no type for (sent as text)."""

MESSAGE_CHARS = 200
"""Progress messages are cut to this many characters."""

_SCALARS = (str, int, float, bool, type(None))
_MODELS: dict[type, Any] = {
    TextContent: types.TextContent,
    ImageContent: types.ImageContent,
    AudioContent: types.AudioContent,
    ResourceLink: types.ResourceLink,
    EmbeddedResource: types.EmbeddedResource,
}


def _jsonable(value: Any, depth: int = 0) -> bool:
    if isinstance(value, _SCALARS):
        return not (isinstance(value, float) and value != value)  # NaN is not JSON
    if depth > 64:
        return False
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _jsonable(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_jsonable(v, depth + 1) for v in value)
    return False


def _block(block: ContentBlock) -> Any:
    cls = type(block)
    if cls is TextContent and block.annotations is None and block.meta is None:  # type: ignore[union-attr]
        return types.TextContent(text=block.text)  # type: ignore[union-attr]
    model = _MODELS.get(cls)
    if model is not None:
        return model.model_validate(block.to_dict())
    # An extension block (`_`-prefixed type): MCP clients know no such type, so the model
    # gets a text rendering and the block itself rides along in the text block's _meta.
    assert isinstance(block, ExtensionContent)
    wire = block.to_dict()
    return types.TextContent(
        text=json.dumps(wire, ensure_ascii=False, default=str),
        _meta={EXTENSION_META_KEY: wire},
    )


def to_call_result(result: ToolResult, *, structured: bool = False) -> types.CallToolResult:
    """The MCP result for ``result``.

    Args:
        result: the tool's result.
        structured: the tool declares an output schema, so ``structured_content`` is sent as
            ``structuredContent`` (the adapter checked it, or dropped it from an error result).
    """
    content = [_block(block) for block in result.content]
    meta: dict[str, Any] | None = dict(result.meta) if result.meta else None
    details = result.details
    if details is not None:
        meta = {**(meta or {}), DETAILS_META_KEY: details if _jsonable(details) else repr(details)}
    if meta is not None and not _jsonable(meta):
        meta = {k: (v if _jsonable(v) else repr(v)) for k, v in meta.items()}
    structured_content = None
    if structured and result.structured_content is not None:
        structured_content = dict(result.structured_content)
    return types.CallToolResult(
        content=content,
        is_error=result.is_error,
        structured_content=structured_content,
        _meta=meta,
    )


def from_call_result(result: types.CallToolResult, *, where: str) -> ToolResult:
    """The :class:`ToolResult` for a remote ``CallToolResult``; ``_meta`` kept intact.

    ``details`` come back from :data:`DETAILS_META_KEY` when present; the key stays in
    ``_meta`` too, so a result that is served again is unchanged.
    """
    blocks: list[ContentBlock] = []
    for index, item in enumerate(result.content):
        if type(item) is types.TextContent and item.meta is None and item.annotations is None:
            blocks.append(TextContent(text=item.text))  # the common case, without a dump
            continue
        wire = item.model_dump(by_alias=True, exclude_none=True, mode="json")
        meta = wire.get("_meta")
        if isinstance(meta, Mapping) and isinstance(meta.get(EXTENSION_META_KEY), Mapping):
            wire = dict(meta[EXTENSION_META_KEY])
        blocks.append(content_from_dict(wire, where=f"{where}: content[{index}]"))
    meta = dict(result.meta) if result.meta else None
    details = meta.get(DETAILS_META_KEY) if meta else None
    structured = result.structured_content
    return ToolResult(
        content=tuple(blocks),
        details=details,
        is_error=bool(result.is_error),
        structured_content=structured if isinstance(structured, Mapping) else None,
        meta=meta,
    )


def progress_message(partial: ToolResult) -> str | None:
    """A short, one-line summary of a partial result for ``notifications/progress``."""
    for block in partial.content:
        if type(block) is TextContent:
            text = " ".join(block.text.split())
            if len(text) > MESSAGE_CHARS:
                return text[: MESSAGE_CHARS - 1] + "\u2026"
            return text
    return None
