"""``to_dict()`` output validates against the protocol's JSON Schemas."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from customtools.host import (
    ClientPluginCustomization,
    CustomizationLoadState,
    DirectoryCustomization,
    HostSession,
    Icon,
    McpServerCustomization,
    McpServerState,
    PluginCustomization,
    SessionActiveClient,
    ToolDefinition,
    scan_directory,
    scan_plugin,
)

Validate = Callable[[str, str, Any], None]


def _plugin_root(root: Path) -> Path:
    (root / "skills" / "lint").mkdir(parents=True)
    (root / "skills" / "lint" / "SKILL.md").write_text("---\nname: lint\n---\n")
    (root / "agents").mkdir()
    (root / "agents" / "a.md").write_text("---\nname: a\ndescription: d\n---\n")
    (root / "hooks").mkdir()
    (root / "hooks" / "hooks.json").write_text('{"hooks": {"Stop": [{"hooks": []}]}}')
    (root / ".mcp.json").write_text('{"mcpServers": {"fs": {"command": "x"}}}')
    return root


def test_scanned_plugin_validates_as_customization(tmp_path: Path, validate_wire: Validate) -> None:
    plugin = scan_plugin(_plugin_root(tmp_path / "p"), client_id="ide")
    validate_wire("state.schema.json", "Customization", plugin.to_dict())
    validate_wire("state.schema.json", "PluginCustomization", plugin.to_dict())


def test_directory_and_bare_mcp_server_validate(tmp_path: Path, validate_wire: Validate) -> None:
    directory = scan_directory(tmp_path / "missing", contents="skill", writable=True)
    validate_wire("state.schema.json", "DirectoryCustomization", directory.to_dict())
    server = McpServerCustomization(
        id="m",
        uri="file:///m.json",
        name="m",
        state=McpServerState(kind="starting"),
        icons=(Icon(src="https://i/x.png", theme="dark"),),
    )
    validate_wire("state.schema.json", "Customization", server.to_dict())


@pytest.mark.parametrize(
    "state",
    [
        CustomizationLoadState.loading(),
        CustomizationLoadState.degraded("1 part failed"),
        CustomizationLoadState.error("root missing"),
    ],
)
def test_load_states_validate(state: CustomizationLoadState, validate_wire: Validate) -> None:
    validate_wire("state.schema.json", "CustomizationLoadState", state.to_dict())


def test_active_client_and_tools_validate(validate_wire: Validate) -> None:
    client = SessionActiveClient(
        client_id="ide",
        display_name="IDE",
        tools=(
            ToolDefinition(
                name="runTests",
                description="Run",
                input_schema={"type": "object", "properties": {"p": {"type": "string"}}},
                meta={"k": 1},
            ),
        ),
        customizations=(ClientPluginCustomization(id="c", uri="virtual://c", name="c", nonce="n"),),
    )
    validate_wire("state.schema.json", "SessionActiveClient", client.to_dict())
    validate_wire(
        "actions.schema.json",
        "SessionActiveClientSetAction",
        {"type": "session/activeClientSet", "activeClient": client.to_dict()},
    )


def test_host_emitted_actions_validate(validate_wire: Validate) -> None:
    emitted: list[Any] = []
    host = HostSession("s:/1", on_action=lambda _ch, a: emitted.append(a), clock=lambda: 0)
    host.dispatch_from_client(
        {
            "type": "session/activeClientSet",
            "activeClient": {"clientId": "ide", "tools": [{"name": "t"}]},
        },
        client_id="ide",
    )
    host.dispatch(
        {"type": "chat/turnStarted", "turnId": "t1", "message": {"text": "x"}}, chat="c:/1"
    )
    host.dispatch(
        {
            "type": "session/customizationUpdated",
            "customization": PluginCustomization(
                id="p",
                uri="virtual://p",
                name="p",
                client_id="ide",
                load=CustomizationLoadState.loaded(),
                children=(),
            ).to_dict(),
        }
    )
    host.start_tool_call("c:/1", turn_id="t1", tool_call_id="a", tool_name="t")
    host.remove_client("ide")
    names = {
        "chat/toolCallStart": "ChatToolCallStartAction",
        "chat/toolCallReady": "ChatToolCallReadyAction",
        "chat/toolCallComplete": "ChatToolCallCompleteAction",
        "session/activeClientRemoved": "SessionActiveClientRemovedAction",
        "session/customizationRemoved": "SessionCustomizationRemovedAction",
        "session/customizationUpdated": "SessionCustomizationUpdatedAction",
    }
    checked = 0
    for action in emitted:
        if action["type"] in names:
            validate_wire("actions.schema.json", names[action["type"]], action)
            checked += 1
    assert checked == 6


def test_the_patched_schema_still_rejects_invalid_output(validate_wire: Validate) -> None:
    directory = DirectoryCustomization(
        id="d", uri="u", name="d", contents="skill", writable=True
    ).to_dict()
    del directory["writable"]
    with pytest.raises(jsonschema.ValidationError):
        validate_wire("state.schema.json", "DirectoryCustomization", directory)
    with pytest.raises(jsonschema.ValidationError):
        validate_wire("state.schema.json", "CustomizationLoadState", {"kind": "degraded"})
