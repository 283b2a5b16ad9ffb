"""Provider formats and the compatibility rules of ``customtools._export``."""

from __future__ import annotations

import pytest

from customtools import CustomTool, Type
from customtools._export import (
    JSON_SCHEMA_DIALECT,
    anthropic_issues,
    openai_issues,
    openai_strict_issues,
    to_anthropic,
    to_json_schema,
    to_mcp,
    to_openai,
)


def _tool(**fields):
    fields.setdefault("name", "lookup")
    fields.setdefault("description", "Looks a word up.")
    return CustomTool(execute=lambda *args: "", **fields)


STRICT_READY = Type.Object(
    {
        "word": Type.String(pattern="^[a-z]+$"),
        "limit": Type.Union([Type.Integer(minimum=1), Type.Null()]),
        "tags": Type.Array(Type.String(), maxItems=3),
        "filter": Type.Object({"lang": Type.Enum(["en", "fr"])}),
    }
)


def _rules(issues):
    return [(issue.rule, issue.path) for issue in issues]


def test_a_strict_ready_schema_has_no_issues():
    assert openai_strict_issues(STRICT_READY) == []
    tool = _tool(parameters=STRICT_READY, strict=True)
    assert openai_issues(tool) == []
    assert anthropic_issues(tool) == []


def test_optional_properties_open_objects_and_defaults_break_strict_mode():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "default": "x", "minLength": 1},
            "nested": {"type": "object", "properties": {"b": {"type": "integer"}}},
        },
        "required": ["nested"],
    }
    assert _rules(openai_strict_issues(schema)) == [
        ("strict-open-object", ""),
        ("strict-optional-property", "/properties/a"),
        ("strict-keyword", "/properties/a"),
        ("strict-keyword", "/properties/a"),
        ("strict-open-object", "/properties/nested"),
        ("strict-optional-property", "/properties/nested/properties/b"),
    ]
    messages = [issue.message for issue in openai_strict_issues(schema)]
    assert any("'default'" in message for message in messages)
    assert any("'minLength'" in message for message in messages)


def test_untyped_and_unsupported_types_break_strict_mode():
    schema = Type.Object({"anything": Type.Any(), "odd": {"type": "date"}})
    assert _rules(openai_strict_issues(schema)) == [
        ("strict-untyped", "/properties/anything"),
        ("strict-type", "/properties/odd"),
    ]


def test_property_names_with_slashes_are_escaped_in_pointers():
    schema = {"type": "object", "properties": {"a/b~c": {"type": "string"}}, "required": []}
    paths = [issue.path for issue in openai_strict_issues(schema)]
    assert "/properties/a~1b~0c" in paths


def test_deep_nesting_breaks_strict_mode():
    schema = Type.Object({"leaf": Type.String()})
    for _ in range(11):
        schema = Type.Object({"child": schema})
    assert ("strict-too-deep", "") in _rules(openai_strict_issues(schema))


def test_strict_rules_apply_only_to_strict_tools():
    loose = _tool(parameters=Type.Object({"a": Type.Optional(Type.String())}))
    assert openai_issues(loose) == []
    strict = _tool(parameters=loose.parameters, strict=True)
    assert [issue.rule for issue in openai_issues(strict)] == ["strict-optional-property"]


@pytest.mark.parametrize(
    "parameters",
    [
        {"properties": {"a": {"type": "string"}}},
        {"anyOf": [Type.Object({}), Type.Object({"a": Type.String()})]},
    ],
)
def test_a_root_that_is_not_an_object_breaks_every_provider(parameters):
    tool = _tool(parameters=parameters)
    assert [issue.rule for issue in openai_issues(tool)][:1] == ["root-not-object"]
    assert [issue.provider for issue in anthropic_issues(tool)][:1] == ["anthropic"]
    assert all(issue.path == "" for issue in anthropic_issues(tool))


def test_a_long_description_breaks_openai():
    tool = _tool(description="x" * 1025)
    (issue,) = openai_issues(tool)
    assert issue.rule == "description-too-long"
    assert issue.path is None
    assert "1025" in issue.message
    assert issue.to_dict() == {
        "provider": "openai",
        "rule": "description-too-long",
        "path": None,
        "message": issue.message,
    }


def test_exports_copy_parameters_and_set_only_what_the_tool_sets():
    tool = _tool(label="Look up", parameters=STRICT_READY, annotations={"readOnlyHint": True})
    assert to_json_schema(tool) == {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "lookup",
        "description": "Looks a word up.",
        **STRICT_READY,
    }
    assert to_openai(tool) == {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Looks a word up.",
            "parameters": STRICT_READY,
        },
    }
    assert to_anthropic(tool)["input_schema"] == STRICT_READY
    assert to_mcp(tool) == {
        "name": "lookup",
        "title": "Look up",
        "description": "Looks a word up.",
        "inputSchema": STRICT_READY,
        "annotations": {"readOnlyHint": True},
    }
    exported = to_openai(tool)["function"]["parameters"]
    exported["properties"] = {}
    assert tool.parameters["properties"]  # a copy, not the tool's own mapping


def test_empty_description_and_meta():
    tool = _tool(description="", meta={"x/y": 1}, strict=True)
    assert "description" not in to_anthropic(tool)
    assert to_openai(tool, api="responses") == {
        "type": "function",
        "name": "lookup",
        "parameters": tool.parameters,
        "strict": True,
    }
    assert to_mcp(tool)["_meta"] == {"x/y": 1}
    assert "title" not in to_mcp(tool)  # the label defaults to the name


def test_unknown_openai_api_is_rejected():
    with pytest.raises(ValueError, match="api must be"):
        to_openai(_tool(), api="assistants")  # type: ignore[arg-type]


def test_deferred_tools_carry_defer_loading_where_the_format_has_the_flag():
    deferrable = _tool(deferrable=True)
    plain = _tool()
    assert to_anthropic(deferrable)["defer_loading"] is True
    assert to_openai(deferrable, api="responses")["defer_loading"] is True
    assert "defer_loading" not in to_anthropic(plain)
    assert "defer_loading" not in to_openai(plain, api="responses")
    # defer= decides, whatever the tool says
    assert to_anthropic(plain, defer=True)["defer_loading"] is True
    assert "defer_loading" not in to_anthropic(deferrable, defer=False)
    assert to_openai(plain, api="responses", defer=True)["defer_loading"] is True
    # Chat Completions and MCP have no such flag
    assert "defer_loading" not in to_openai(deferrable, defer=True)["function"]
    assert "defer_loading" not in to_openai(deferrable, defer=True)
    assert "defer_loading" not in to_mcp(deferrable)
