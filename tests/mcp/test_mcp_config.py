"""MCP server configurations and ``.mcp.json`` files as a source of ``discover_and_load``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import ROOT
from zygote import python_argv

from customtools import CustomTool, ToolDefinitionError, discover_and_load
from customtools.mcp import McpMount, McpServerConfig, mounted_tool_name, parse_mcp_json

SERVERS = Path(__file__).resolve().parent / "servers"


def test_both_file_forms_parse_and_a_bad_entry_hides_nothing(tmp_path: Path) -> None:
    origin = str(tmp_path / ".mcp.json")
    wrapped, problems = parse_mcp_json(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server"], "env": {"K": "v"}},
                "remote": {
                    "type": "http",
                    "url": "https://example.invalid/mcp",
                    "headers": {"Authorization": "Bearer t"},
                },
                "bad__name": {"command": "x"},
                "odd": {"command": "x", "colour": "red"},
                "empty": {},
            }
        },
        origin=origin,
    )
    direct, none = parse_mcp_json({"local": {"command": "srv", "cwd": "sub"}}, origin=origin)
    assert [c.name for c in wrapped] == ["files", "remote"]
    assert wrapped[0].to_dict() == {"command": "npx", "args": ["-y", "server"], "env": {"K": "v"}}
    assert wrapped[1].transport == "http"
    assert wrapped[1].headers == {"Authorization": "Bearer t"}
    assert len(problems) == 3
    assert "invalid MCP server name 'bad__name'" in problems[0]
    assert "unknown field(s) 'colour'" in problems[1]
    assert "exactly one of 'command' and 'url'" in problems[2]
    assert none == []
    assert direct[0].cwd == str(tmp_path / "sub")


@pytest.mark.parametrize("name", ["a__b", "_a", "b_", "", "x" * 33, "dot.ted"])
def test_server_names_that_could_collide_are_refused(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match="invalid MCP server name"):
        McpServerConfig(name=name, command="x")


def test_mounted_names_split_unambiguously() -> None:
    assert mounted_tool_name("my-server_1", "read__file") == "mcp__my-server_1__read__file"


def test_a_config_needs_exactly_one_transport_and_positive_timeouts() -> None:
    with pytest.raises(ToolDefinitionError, match="exactly one"):
        McpServerConfig(name="s", command="x", url="http://h/mcp")
    with pytest.raises(ToolDefinitionError, match="http:// or https://"):
        McpServerConfig(name="s", url="ftp://h")
    with pytest.raises(ToolDefinitionError, match="'timeout' must be a positive number"):
        McpServerConfig(name="s", command="x", timeout=0)


class FakeProvider:
    """Stands in for the MCP edge: one tool per server, and a record of what was asked."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    async def __call__(
        self, configs: Sequence[McpServerConfig]
    ) -> tuple[list[CustomTool], list[str]]:
        self.asked.append([c.name for c in configs])
        tools = [
            CustomTool(name=mounted_tool_name(c.name, "ping"), execute=lambda *a: "pong")
            for c in configs
        ]
        return tools, ["server 'noisy' said hello"] if "noisy" in self.asked[-1] else []


def _write(path: Path, servers: dict[str, Any]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


@pytest.mark.anyio
async def test_project_servers_start_only_when_trusted(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project, {"proj": {"command": "x"}})
    provider = FakeProvider()
    options: dict[str, Any] = {"home": str(tmp_path / "home"), "entry_points": False}
    untrusted = await discover_and_load([], project, mcp_servers=provider, **options)
    trusted = await discover_and_load(
        [], project, mcp_servers=provider, project_mcp_servers=True, **options
    )
    trusting = await discover_and_load([], project, mcp_servers=provider, trust="all", **options)
    assert [loaded.tool.name for loaded in trusting.tools] == ["mcp__proj__ping"]
    assert untrusted.tools == ()
    assert [d.code for d in untrusted.diagnostics] == ["pending-trust"]
    assert [p.root for p in untrusted.pending_trust] == [str(project / ".mcp.json")]
    assert provider.asked == [["proj"], ["proj"]]
    (loaded,) = trusted.tools
    assert loaded.tool.name == "mcp__proj__ping"
    assert loaded.source.level == "project"
    assert loaded.source.provider == "mcp-json"
    assert trusted.get("mcp__proj__ping") is loaded


@pytest.mark.anyio
async def test_a_project_mcp_json_is_trusted_by_its_content(tmp_path: Path) -> None:
    from customtools.loading import TrustStore

    project = tmp_path / "project"
    _write(project, {"proj": {"command": "x"}})
    provider = FakeProvider()
    store = TrustStore(home=tmp_path / "home")
    options: dict[str, Any] = {
        "home": str(tmp_path / "home"),
        "entry_points": False,
        "mcp_servers": provider,
        "trust_store": store,
    }
    first = await discover_and_load([], project, **options)
    assert provider.asked == []
    store.grant(first.pending_trust[0])
    granted = await discover_and_load([], project, **options)
    assert [loaded.tool.name for loaded in granted.tools] == ["mcp__proj__ping"]
    _write(project, {"proj": {"command": "y"}})  # the command changed: ask again
    edited = await discover_and_load([], project, **options)
    assert edited.tools == ()
    assert [p.status for p in edited.pending_trust] == ["changed"]
    asked = await discover_and_load([], project, **{**options, "trust": lambda p: True})
    assert [loaded.tool.name for loaded in asked.tools] == ["mcp__proj__ping"]
    assert provider.asked == [["proj"], ["proj"]]


@pytest.mark.anyio
async def test_plugin_roots_come_first_and_names_follow_the_loader_rules(tmp_path: Path) -> None:
    project = tmp_path / "project"
    plugin = tmp_path / "plugin"
    _write(plugin, {"shared": {"command": "a"}, "noisy": {"command": "b"}})
    _write(project, {"shared": {"command": "c"}, "own": {"command": "d"}})
    provider = FakeProvider()
    result = await discover_and_load(
        [],
        project,
        ["mcp__own__ping"],
        mcp_servers=provider,
        project_mcp_servers=True,
        plugin_dirs=[str(plugin)],
        home=str(tmp_path / "home"),
        entry_points=False,
    )
    assert provider.asked == [["shared", "noisy"], ["own"]]
    assert [t.tool.name for t in result.tools] == ["mcp__shared__ping", "mcp__noisy__ping"]
    assert result.tools[0].source.level == "user"
    codes = [(e.code, e.tool_name) for e in result.errors]
    assert codes == [("name-conflict", None), ("name-conflict", "mcp__own__ping")]
    assert any("already configured in" in e.error for e in result.errors)
    assert [d.message for d in result.diagnostics if d.code == "mcp-server"] == [
        "server 'noisy' said hello"
    ]


@pytest.mark.anyio
async def test_a_real_mcp_json_server_loads_through_an_open_mount(tmp_path: Path) -> None:
    project = tmp_path / "project"
    log = tmp_path / "calls.jsonl"
    server = python_argv(str(SERVERS / "lowlevel_server.py"), str(log))
    _write(
        project,
        {
            "low": {
                "command": server[0],
                "args": server[1:],
                "cwd": str(ROOT),
            }
        },
    )
    async with McpMount() as mcp_servers:
        result = await discover_and_load(
            [],
            project,
            mcp_servers=mcp_servers,
            project_mcp_servers=True,
            home=str(tmp_path / "home"),
            entry_points=False,
        )
        from customtools import CustomToolAdapter

        answer = await CustomToolAdapter(result.get("mcp__low__shout").tool).execute(
            "c", {"word": "loud"}
        )
    assert answer.text == "LOUD"
    assert [d.code for d in result.diagnostics if d.code == "mcp-server"] == ["mcp-server"]
