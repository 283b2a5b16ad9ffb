"""The example pack as a whole: it passes the validate check; weather.md is metadata."""

from __future__ import annotations

from pathlib import Path

from customtools.testing import ToolPack, check_pack

EXAMPLE_TOOLS = Path(__file__).resolve().parent.parent / "tools"


def test_the_pack_passes_the_strict_validate_check() -> None:
    report = check_pack(EXAMPLE_TOOLS, strict=True)

    assert report.findings == ()
    assert report.tool_names == (
        "countdown",
        "notes",
        "repo_stats",
        "run_command",
        "search_text",
        "swatch",
        "convert_temperature",  # temperature.py
        "ticker",
        "count_words",  # word_count.py
    )


def test_no_tool_takes_a_name_a_host_typically_builds_in() -> None:
    check_pack(EXAMPLE_TOOLS, strict=True, builtin_tool_names=["bash", "read", "edit", "write"])


def test_weather_md_is_metadata_and_never_a_tool(tool_pack: ToolPack) -> None:
    assert "weather" not in tool_pack
    assert [item.name for item in tool_pack.metadata] == ["weather"]
    weather = tool_pack.metadata[0]
    assert weather.format == "md"
    assert "forecast" in weather.description
    assert check_pack(EXAMPLE_TOOLS).metadata_names == ("weather",)


def test_every_tool_describes_itself_and_its_parameters(tool_pack: ToolPack) -> None:
    for tool in tool_pack:
        assert tool.description.strip(), tool.name
        assert tool.parameters["type"] == "object", tool.name
        assert tool.parameters.get("additionalProperties") is False, tool.name
