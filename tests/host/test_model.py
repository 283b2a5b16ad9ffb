"""The customization model: field names, null vs absent, children, load states, open unions.

Checklist items 1-5 of ``reference/ahp-acp.md`` section 6.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from customtools.host import (
    AgentCustomization,
    ClientPluginCustomization,
    CustomizationError,
    CustomizationLoadState,
    DirectoryCustomization,
    HookCustomization,
    McpServerCustomization,
    McpServerState,
    PluginCustomization,
    RuleCustomization,
    SessionActiveClient,
    SkillCustomization,
    TextRange,
    ToolDefinition,
    UnknownCustomization,
    child_from_dict,
    client_plugin_from_dict,
    customization_from_dict,
)

FIXTURES = Path(__file__).resolve().parents[1] / "conformance" / "ahp" / "reducers"


def _fixture_customizations() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for state in (data["initial"], data["expected"]):
            found.extend(state.get("customizations") or [])
        for action in data["actions"]:
            found.extend(action.get("customizations") or [])
            if "customization" in action:
                found.append(action["customization"])
    return found


@pytest.mark.parametrize("entry", _fixture_customizations())
def test_item1_every_fixture_customization_round_trips_exactly(entry: dict[str, Any]) -> None:
    assert customization_from_dict(entry).to_dict() == entry


def test_item1_null_stays_distinct_from_absent() -> None:
    with_null = {"type": "skill", "id": "s", "uri": "u", "name": "n", "description": None}
    without = {"type": "skill", "id": "s", "uri": "u", "name": "n"}
    assert child_from_dict(with_null).to_dict() == with_null
    assert child_from_dict(without).to_dict() == without
    assert "description" in child_from_dict(with_null).to_dict()


def test_item1_wire_names_are_camel_case() -> None:
    rule = RuleCustomization(
        id="r", uri="file:///r.mdc", name="r", always_apply=True, globs=("*.py",)
    )
    skill = SkillCustomization(id="s", uri="u", name="s", disable_model_invocation=True)
    assert rule.to_dict() == {
        "type": "rule",
        "id": "r",
        "uri": "file:///r.mdc",
        "name": "r",
        "alwaysApply": True,
        "globs": ["*.py"],
    }
    assert skill.to_dict()["disableModelInvocation"] is True
    plugin = PluginCustomization(id="p", uri="u", name="p", client_id="ide")
    assert plugin.to_dict()["clientId"] == "ide"


def test_item2_children_absent_and_empty_survive_as_different_values() -> None:
    base = {"type": "plugin", "id": "p", "uri": "u", "name": "n", "enabled": True}
    unparsed = customization_from_dict(base)
    empty = customization_from_dict({**base, "children": []})
    assert isinstance(unparsed, PluginCustomization)
    assert isinstance(empty, PluginCustomization)
    assert unparsed.children is None
    assert empty.children == ()
    assert "children" not in unparsed.to_dict()
    assert empty.to_dict()["children"] == []


@pytest.mark.parametrize("missing", ["contents", "writable"])
def test_item3_directory_requires_contents_and_writable(missing: str) -> None:
    data = {
        "type": "directory",
        "id": "d",
        "uri": "file:///d",
        "name": "d",
        "enabled": True,
        "contents": "skill",
        "writable": False,
    }
    del data[missing]
    with pytest.raises(CustomizationError, match=f"required field '{missing}' is missing"):
        customization_from_dict(data)


def test_item3_client_plugin_nonce_is_optional() -> None:
    base = {"type": "plugin", "id": "p", "uri": "virtual://x", "name": "x", "enabled": True}
    assert client_plugin_from_dict(base).nonce is None
    with_nonce = client_plugin_from_dict({**base, "nonce": "sha256:1"})
    assert with_nonce.nonce == "sha256:1"
    assert with_nonce.to_dict()["nonce"] == "sha256:1"
    assert isinstance(customization_from_dict({**base, "nonce": "n"}), ClientPluginCustomization)


@pytest.mark.parametrize("kind", ["loading", "loaded", "degraded", "error"])
def test_item4_load_state_decodes_the_four_kinds(kind: str) -> None:
    data = {"kind": kind, **({"message": "why"} if kind in ("degraded", "error") else {})}
    state = CustomizationLoadState.from_dict(data)
    assert state.kind == kind
    assert state.to_dict() == data


@pytest.mark.parametrize("kind", ["degraded", "error"])
def test_item4_degraded_and_error_require_a_message(kind: str) -> None:
    with pytest.raises(CustomizationError, match="required field 'message'"):
        CustomizationLoadState.from_dict({"kind": kind})


def test_item4_constructors_build_the_wire_shapes() -> None:
    assert CustomizationLoadState.degraded("1 skill failed").to_dict() == {
        "kind": "degraded",
        "message": "1 skill failed",
    }
    assert CustomizationLoadState.loading().to_dict() == {"kind": "loading"}


@pytest.mark.parametrize(
    "entry",
    [
        {"type": "_acme/widget", "id": "w", "payload": [1, 2, 3]},
        {"type": "workflow", "id": "f", "uri": "u", "name": "future kind", "steps": 3},
    ],
)
def test_item5_unknown_type_decodes_opaque_and_reencodes_verbatim(entry: dict[str, Any]) -> None:
    top = customization_from_dict(entry)
    child = child_from_dict(entry)
    assert isinstance(top, UnknownCustomization)
    assert isinstance(child, UnknownCustomization)
    assert json.dumps(top.to_dict()) == json.dumps(entry)
    assert top.is_extension is entry["type"].startswith("_")


def test_item5_unknown_child_survives_inside_a_container() -> None:
    data = {
        "type": "directory",
        "id": "d",
        "uri": "u",
        "name": "d",
        "enabled": True,
        "contents": "skill",
        "writable": True,
        "children": [{"type": "_x", "id": "1", "z": None}],
    }
    assert customization_from_dict(data).to_dict() == data


def test_unknown_load_kind_is_kept() -> None:
    state = CustomizationLoadState.from_dict({"kind": "paused", "until": 5})
    assert state.to_dict() == {"kind": "paused", "until": 5}


def test_known_type_with_malformed_payload_raises_naming_the_path() -> None:
    data = {
        "type": "plugin",
        "id": "p",
        "uri": "u",
        "name": "n",
        "enabled": True,
        "children": [{"type": "skill", "id": "s", "uri": "u", "name": 3}],
    }
    with pytest.raises(
        CustomizationError,
        match=r"customization\.children\[0\]\.name must be a "
        "string, got number",
    ):
        customization_from_dict(data)


def test_child_kinds_are_rejected_at_top_level_and_containers_as_children() -> None:
    skill = {"type": "skill", "id": "s", "uri": "u", "name": "s"}
    plugin = {"type": "plugin", "id": "p", "uri": "u", "name": "p", "enabled": True}
    with pytest.raises(CustomizationError, match="cannot be top-level"):
        customization_from_dict(skill)
    with pytest.raises(CustomizationError, match="containers do not nest"):
        child_from_dict(plugin)


def test_bare_top_level_mcp_server_round_trips_with_state_and_range() -> None:
    server = McpServerCustomization(
        id="m",
        uri="file:///ws/.mcp.json",
        name="fs",
        state=McpServerState(kind="ready"),
        range=TextRange(start_line=1, start_character=4, end_line=3, end_character=5),
        channel="mcp://fs",
    )
    data = server.to_dict()
    assert data["range"] == {
        "start": {"line": 1, "character": 4},
        "end": {"line": 3, "character": 5},
    }
    assert customization_from_dict(data) == server


def test_mcp_state_is_closed_but_keeps_extensions() -> None:
    assert McpServerState.from_dict({"kind": "_acme/warming", "pct": 5}).fields == {"pct": 5}
    with pytest.raises(CustomizationError, match="not an MCP server state"):
        McpServerState.from_dict({"kind": "sleeping"})
    with pytest.raises(CustomizationError, match="requires 'error'"):
        McpServerState.from_dict({"kind": "error"})


def test_meta_round_trips_and_non_object_meta_counts_as_absent() -> None:
    agent = AgentCustomization(id="a", uri="u", name="a", meta={"acme.dev/x": 1})
    assert child_from_dict(agent.to_dict()) == agent
    odd = child_from_dict({"type": "hook", "id": "h", "uri": "u", "name": "h", "_meta": "x"})
    assert isinstance(odd, HookCustomization)
    assert odd.meta is None
    assert "_meta" not in odd.to_dict()


def test_container_fields_round_trip() -> None:
    directory = DirectoryCustomization(
        id="d",
        uri="file:///ws/.github/skills",
        name="skills",
        contents="skill",
        writable=True,
        enabled=False,
        client_id=None,
        load=CustomizationLoadState.loaded(),
        children=(
            SkillCustomization(id="s", uri="file:///ws/.github/skills/a/SKILL.md", name="a"),
        ),
    )
    assert customization_from_dict(directory.to_dict()) == directory


def test_tool_definition_and_active_client_round_trip() -> None:
    data = {
        "clientId": "ide",
        "displayName": "IDE",
        "tools": [
            {
                "name": "runTests",
                "title": "Run",
                "description": "d",
                "inputSchema": {"type": "object", "properties": {"p": {"type": "string"}}},
                "annotations": {"readOnlyHint": True},
                "_meta": {"k": 1},
                "future": None,
            }
        ],
        "customizations": [
            {
                "type": "plugin",
                "id": "c",
                "uri": "virtual://c",
                "name": "c",
                "enabled": True,
                "nonce": "n1",
            }
        ],
    }
    client = SessionActiveClient.from_dict(data)
    assert client.tools[0].meta == {"k": 1}
    assert client.to_dict() == data
    with pytest.raises(CustomizationError, match="'tools'"):
        SessionActiveClient.from_dict({"clientId": "x"})
    with pytest.raises(CustomizationError, match="required field 'name'"):
        ToolDefinition.from_dict({"description": "nameless"})
