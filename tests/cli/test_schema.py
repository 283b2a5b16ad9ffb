"""``customtools schema``: one tool's definition in each provider format."""

from __future__ import annotations

import json

import pytest

from ._helpers import EXAMPLES, FIXTURES

SWATCH_PARAMETERS = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "pattern": "^#?[0-9A-Fa-f]{6}$"},
        "size": {"type": "integer", "minimum": 1, "maximum": 256, "default": 32},
    },
    "required": ["colour"],
    "additionalProperties": False,
}
DESCRIPTION = "Draws a square PNG filled with one colour, given as #RRGGBB."


def _schema(cli, *argv):
    result = cli("schema", "swatch", "--path", str(EXAMPLES), *argv)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_json_schema_is_the_default(cli):
    assert _schema(cli) == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "swatch",
        "description": DESCRIPTION,
        **SWATCH_PARAMETERS,
    }


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        (
            "openai",
            {
                "type": "function",
                "function": {
                    "name": "swatch",
                    "description": DESCRIPTION,
                    "parameters": SWATCH_PARAMETERS,
                },
            },
        ),
        (
            "openai-responses",
            {
                "type": "function",
                "name": "swatch",
                "description": DESCRIPTION,
                "parameters": SWATCH_PARAMETERS,
            },
        ),
        (
            "anthropic",
            {"name": "swatch", "description": DESCRIPTION, "input_schema": SWATCH_PARAMETERS},
        ),
        (
            "mcp",
            {
                "name": "swatch",
                "title": "Colour swatch",
                "description": DESCRIPTION,
                "inputSchema": SWATCH_PARAMETERS,
            },
        ),
        (
            "definition",
            {
                "name": "swatch",
                "label": "Colour swatch",
                "description": DESCRIPTION,
                "parameters": SWATCH_PARAMETERS,
            },
        ),
    ],
)
def test_each_provider_format(cli, fmt, expected):
    assert _schema(cli, "--format", fmt) == expected


def test_strict_tool_carries_the_strict_flag_for_openai(cli):
    result = cli("schema", "echo", "--path", str(FIXTURES / "clean"), "--format", "openai")
    assert json.loads(result.out)["function"]["strict"] is True
    assert result.err == ""


def test_strict_tool_outside_the_subset_warns_on_stderr(cli):
    path = str(FIXTURES / "mixed" / "undescribed.py")
    result = cli("schema", "undescribed", "--path", path, "--format", "openai")
    assert result.code == 0
    assert json.loads(result.out)["function"]["strict"] is True
    assert "outside OpenAI's strict subset" in result.err


def test_unknown_tool_exits_2_with_suggestions(cli):
    result = cli("schema", "swatches", "--path", str(EXAMPLES))
    assert result.code == 2
    assert "did you mean 'swatch'?" in result.err
    assert result.out == ""


def test_unknown_format_is_a_usage_error(cli):
    result = cli("schema", "swatch", "--path", str(EXAMPLES), "--format", "yaml")
    assert result.code == 2
    assert "invalid choice" in result.err
