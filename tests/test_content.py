"""Content blocks and ToolResult: wire forms, _meta, extension blocks, normalization."""

from __future__ import annotations

from typing import Any

import pytest

from customtools._content import (
    AudioContent,
    EmbeddedResource,
    ExtensionContent,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
    content_from_dict,
    normalize_result,
)
from customtools._errors import ContentError

BLOCKS: list[dict[str, Any]] = [
    {"type": "text", "text": "hello"},
    {"type": "text", "text": "hi", "annotations": {"audience": ["user"]}, "_meta": {"k": 1}},
    {"type": "image", "data": "aGk=", "mimeType": "image/png", "_meta": {"x": [1]}},
    {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
    {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain", "size": 3},
    {"type": "resource", "resource": {"uri": "file:///b", "text": "body", "extra": True}},
    {"type": "_vendor_chart", "points": [1, 2], "_meta": {"v": 2}},
]


@pytest.mark.parametrize("wire", BLOCKS)
def test_content_blocks_round_trip_unchanged(wire: dict[str, Any]) -> None:
    assert content_from_dict(wire).to_dict() == wire


def test_block_types() -> None:
    kinds = [type(content_from_dict(b)) for b in BLOCKS]
    assert kinds == [
        TextContent,
        TextContent,
        ImageContent,
        AudioContent,
        ResourceLink,
        EmbeddedResource,
        ExtensionContent,
    ]


def test_unknown_type_without_underscore_is_an_error_naming_it() -> None:
    with pytest.raises(ContentError, match="unknown content type 'chart'"):
        content_from_dict({"type": "chart"})


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({"text": "no type"}, "missing string field 'type'"),
        ({"type": "text"}, "field 'text' must be a string"),
        ({"type": "image", "data": "x"}, "field 'mimeType' must be a string"),
        ({"type": "text", "text": "x", "_meta": "nope"}, "'_meta' must be an object"),
        ({"type": "resource", "resource": "x"}, "field 'resource' must be an object"),
        ({"type": "resource_link", "uri": "u", "name": "n", "size": True}, "'size'"),
    ],
)
def test_malformed_blocks_name_the_problem(wire: dict[str, Any], message: str) -> None:
    with pytest.raises(ContentError, match=message):
        content_from_dict(wire)


def test_extension_content_requires_underscore() -> None:
    with pytest.raises(ContentError, match="must start with '_'"):
        ExtensionContent(type="chart")


def test_extension_content_exposes_meta() -> None:
    block = content_from_dict({"type": "_x", "_meta": {"a": 1}})
    assert block.meta == {"a": 1}


def test_result_round_trip_keeps_meta_details_and_unknown_blocks() -> None:
    wire = {
        "content": BLOCKS,
        "isError": True,
        "details": {"count": 3, "nested": {"a": [1]}},
        "structuredContent": {"answer": 42},
        "_meta": {"trace": "abc", "customtools/coercions": []},
    }
    assert ToolResult.from_dict(wire).to_dict() == wire


def test_result_defaults_on_the_wire() -> None:
    assert ToolResult().to_dict() == {"content": [], "isError": False}


def test_result_accepts_list_content_and_stores_a_tuple() -> None:
    result = ToolResult(content=[TextContent(text="a")])  # type: ignore[arg-type]
    assert result.content == (TextContent(text="a"),)


def test_text_joins_text_blocks_only() -> None:
    result = ToolResult(
        content=(
            TextContent(text="a"),
            ImageContent(data="", mime_type="image/png"),
            TextContent(text="b"),
        )
    )
    assert result.text == "a\nb"


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ({"content": "text"}, "'content' must be a list"),
        ({"content": [], "isError": "yes"}, "'isError' must be true or false"),
        ({"content": [], "structuredContent": [1]}, "'structuredContent' must be an object"),
        ({"content": [{"type": "bogus"}]}, r"content\[0\]: unknown content type 'bogus'"),
    ],
)
def test_malformed_results_name_the_problem(wire: dict[str, Any], message: str) -> None:
    with pytest.raises(ContentError, match=message):
        ToolResult.from_dict(wire)


def test_results_are_frozen() -> None:
    result = ToolResult.from_text("x")
    with pytest.raises(AttributeError):
        result.is_error = True  # type: ignore[misc]


def test_normalize_accepts_results_strings_and_mappings() -> None:
    direct = ToolResult.from_text("x")
    assert normalize_result(direct, tool_name="t") is direct
    assert normalize_result("s", tool_name="t") == ToolResult.from_text("s")
    mapped = normalize_result(
        {"content": [{"type": "text", "text": "m"}], "is_error": True}, tool_name="t"
    )
    assert mapped.is_error
    assert mapped.text == "m"


def test_normalize_rejects_other_types_naming_tool_and_type() -> None:
    with pytest.raises(ContentError, match=r"tool 'grep' returned int"):
        normalize_result(3, tool_name="grep")
    with pytest.raises(ContentError, match=r"without 'content' or 'details'"):
        normalize_result({"text": "x"}, tool_name="grep")
