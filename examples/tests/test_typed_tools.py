"""The typed-function examples: temperature (top level), word_count (factory), ticker (stream)."""

from __future__ import annotations

import pytest

from customtools.testing import ToolPack, assert_cancelled, assert_error, assert_ok, assert_text


def test_temperature_schema_comes_from_the_annotations(tool_pack: ToolPack) -> None:
    tool = tool_pack["convert_temperature"]
    props = tool.parameters["properties"]

    assert tool.description == "Convert a temperature from one scale to another."
    assert props["source"]["enum"] == ["celsius", "fahrenheit", "kelvin"]
    assert props["value"]["description"] == "The temperature to convert."
    assert tool.parameters["required"] == ["value", "source"]
    assert tool.output_schema is not None
    assert tool.output_schema["required"] == ["value", "scale"]


def test_temperature_converts_and_returns_structured_content(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync(
        "convert_temperature", {"value": 100, "source": "celsius", "target": "fahrenheit"}
    )

    assert_ok(call)
    assert call.result.structured_content == {"value": 212.0, "scale": "fahrenheit"}
    assert_text(call, '{"value": 212.0, "scale": "fahrenheit"}')


def test_temperature_rejects_an_unknown_scale_before_running(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("convert_temperature", {"value": 1, "source": "rankine"})

    assert_error(call, match="/source")


def test_temperature_below_absolute_zero_is_an_error_result(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("convert_temperature", {"value": -300, "source": "celsius"})

    assert_error(call, match="below absolute zero")


@pytest.mark.anyio
async def test_word_count_names_the_most_common_words(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("count_words", {"text": "a b a\nc a b", "top": 2})

    assert_ok(call)
    assert call.result.structured_content == {"words": 6, "lines": 2, "top": ["a", "b"]}


@pytest.mark.anyio
async def test_ticker_streams_each_tick(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("ticker", {"count": 3, "interval": 0})

    assert_text(assert_ok(call), "tick 3/3")
    assert call.update_texts == ["tick 1/3", "tick 2/3", "tick 3/3"]
    assert "signal" not in tool_pack["ticker"].parameters["properties"]


@pytest.mark.anyio
async def test_ticker_stops_when_aborted(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("ticker", {"count": 50, "interval": 0.01}, abort_after_updates=2)

    assert_cancelled(call)
    assert call.update_texts == ["tick 1/50", "tick 2/50"]
