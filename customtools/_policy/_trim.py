"""Trimming a result to a byte budget without breaking its shape.

Text blocks are cut; other blocks (images, audio, embedded resources) that do not fit are
replaced by a line saying what was left out. Structured content is shrunk inside its output
schema: arrays lose items from the end (never below ``minItems``) and strings are cut (never
below ``minLength``, and never a string held to an ``enum``, ``const``, ``pattern`` or
``format``); objects keep every property. A part of a schema this module does not follow
(``$ref``, ``anyOf``, ``contains``, ...) is left whole. The shrunk content is checked against
the schema, and kept only if it validates.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from customtools._content import TextContent, ToolResult

__all__ = ["CUT_MARK", "document", "result_size", "shrink", "trim_content"]

CUT_MARK: Final = "…"
"""Ends a string that was cut."""

# Keywords whose meaning trimming keeps (or that say nothing about values).
_FOLLOWED: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "definitions",
    }
)
_MARK_BYTES: Final = len(json.dumps(CUT_MARK)) - 2  # as JSON escapes it


def _size(value: Any) -> int:
    """Bytes of ``value`` as JSON (``\\u`` escapes counted, so never an underestimate)."""
    if type(value) is str:
        return len(value) + 2 if value.isascii() else len(json.dumps(value))
    return len(json.dumps(value, separators=(",", ":"), default=str))


def _text_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def result_size(result: ToolResult) -> int:
    """About how many bytes ``result`` takes on the wire (content and structured content)."""
    total = 0
    for block in result.content:
        if type(block) is TextContent:
            total += _text_size(block.text)
        else:
            total += _size(block.to_dict())
    if result.structured_content is not None:
        total += _size(result.structured_content)
    return total


def _followed(schema: Any) -> bool:
    """Whether trimming can follow ``schema`` (``True``/absent: anything goes)."""
    if schema is None or schema is True or schema == {}:
        return True
    return isinstance(schema, Mapping) and schema.keys() <= _FOLLOWED


def _child(schema: Any, key: str) -> Any:
    if schema is None or schema is True or not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        return properties[key]
    extra = schema.get("additionalProperties", True)
    return None if extra is True else extra


def _item(schema: Any, index: int) -> Any:
    if schema is None or schema is True or not isinstance(schema, Mapping):
        return None
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    items = schema.get("items", True)
    return None if items is True else items


def shrink(value: Any, schema: Any, budget: int) -> Any:
    """``value`` made to take about ``budget`` bytes as JSON, keeping the shape ``schema``
    describes (``None``: no schema). Values that cannot shrink come back as they are."""
    if budget < 0:
        budget = 0
    kind = type(value)
    if kind is str:
        if len(value) + 2 <= budget or not _followed(schema):
            return value
        floor = schema.get("minLength", 0) if isinstance(schema, Mapping) else 0
        keep = max(budget - 2 - _MARK_BYTES, floor if isinstance(floor, int) else 0, 0)
        if keep + len(CUT_MARK) >= len(value):
            return value
        return value[:keep] + CUT_MARK
    if kind is not list and kind is not dict:
        return value
    if not _followed(schema):
        return value
    if kind is dict:
        sizes = {key: _size(item) for key, item in value.items()}
        spent = sum(sizes.values())
        overhead = 1 + sum(_size(str(key)) + 2 for key in value)  # braces, keys, ':' and ','
        if spent + overhead <= budget:
            return value
        room = max(budget - overhead, 0)
        spent = spent or 1
        return {
            key: shrink(item, _child(schema, key), room * sizes[key] // spent)
            for key, item in value.items()
        }
    floor = schema.get("minItems", 0) if isinstance(schema, Mapping) else 0
    floor = floor if isinstance(floor, int) else 0
    kept: list[Any] = []
    used = 2
    for item in value:
        size = _size(item) + 1
        if used + size > budget and len(kept) >= floor:
            break
        kept.append(item)
        used += size
    if used <= budget or not kept:
        return kept
    if isinstance(schema, Mapping) and schema.get("uniqueItems") is True:
        return kept  # cut items could become equal
    share = max((budget - 2) // len(kept) - 1, 0)
    return [shrink(item, _item(schema, i), share) for i, item in enumerate(kept)]


def document(result: ToolResult) -> str:
    """The text ``read_result`` pages through: the text blocks, then the structured content as
    JSON (left out when a text block already is that JSON)."""
    texts = [block.text for block in result.content if type(block) is TextContent]
    text = "\n".join(texts)
    structured = result.structured_content
    if structured is not None:
        dumped = json.dumps(structured, ensure_ascii=False, default=str)
        if dumped not in texts:
            text = f"{text}\n\nstructuredContent:\n{dumped}" if text else dumped
    return text


def trim_content(
    result: ToolResult,
    budget: int,
    size: int,
    schema: Mapping[str, Any] | None,
    valid: Callable[[Any], bool],
) -> tuple[ToolResult, list[str]]:
    """``result`` (``size`` bytes) trimmed to about ``budget`` bytes, and what was cut (one
    phrase each). ``valid`` says whether shrunk structured content still fits ``schema``."""
    ratio = budget / size if size else 1.0
    cut: list[str] = []
    blocks: list[Any] = []
    for block in result.content:
        if type(block) is TextContent:
            text = block.text
            length = _text_size(text)
            allowed = int(length * ratio)
            if length > allowed:
                kept = text[: max(allowed - 3, 0)]  # the mark takes 3 bytes
                while _text_size(kept) + 3 > allowed and kept:
                    kept = kept[: len(kept) * 3 // 4]
                blocks.append(dataclasses.replace(block, text=kept + CUT_MARK))
                cut.append(f"text {length} -> {_text_size(kept)} bytes")
            else:
                blocks.append(block)
            continue
        length = _size(block.to_dict())
        if length > int(length * ratio) and length > 256:
            kind = getattr(block, "type", "block")
            blocks.append(TextContent(text=f"[a {kind} block of {length} bytes was left out]"))
            cut.append(f"{kind} of {length} bytes left out")
        else:
            blocks.append(block)
    structured = result.structured_content
    if structured is not None:
        before = _size(structured)
        shrunk = shrink(dict(structured), schema, int(before * ratio))
        if shrunk != structured and valid(shrunk):
            cut.append(f"structured content {before} -> {_size(shrunk)} bytes")
            structured = shrunk
        elif shrunk != structured:
            cut.append("structured content kept whole (its schema forbids trimming)")
    return (
        ToolResult(
            content=tuple(blocks),
            details=result.details,
            is_error=result.is_error,
            structured_content=structured,
            meta=result.meta,
        ),
        cut,
    )
