"""What ``customtools serve`` lists is what ``customtools schema --format mcp`` prints: one MCP
mapping of a tool (``customtools.export.to_mcp``), former-name aliases and ``_meta`` included."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_helpers import child_env, serve_argv

from customtools.cli import run

pytestmark = pytest.mark.anyio

PACK = """
from customtools import CustomTool

def factory(api):
    def run(*args):
        return "ok"

    return [
        CustomTool(name="plain", execute=run),
        CustomTool(
            name="labelled",
            label="A labelled tool",
            description="Has a label.",
            execute=run,
            annotations={"readOnlyHint": True},
            meta={"vendor/x": 1},
            output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        ),
        CustomTool(
            name="search_files", former_names=("search",), meta={"vendor/y": 2}, execute=run
        ),
        CustomTool(name="wipe", annotations={"destructiveHint": True}, execute=run),
        CustomTool(name="judged", requires_approval=lambda params: True, execute=run),
    ]
"""


async def schema_mcp(
    name: str, pack: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, object]:
    capsys.readouterr()
    argv = ["schema", name, "--format", "mcp", "--no-entry-points", "--path", str(pack)]
    code = await anyio.to_thread.run_sync(run, argv)  # the command runs its own event loop
    out, err = capsys.readouterr()
    assert code == 0, err
    printed: dict[str, object] = json.loads(out)
    return printed


async def test_the_serve_listing_is_what_schema_format_mcp_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "tools.py").write_text(textwrap.dedent(PACK))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    argv = serve_argv(str(pack), "--stdio")
    env = {**child_env(), "HOME": str(home)}
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(tmp_path))
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            listed = (await client.list_tools()).tools
    served = {
        tool.name: tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in listed
    }
    assert set(served) == {"plain", "labelled", "search_files", "search", "wipe", "judged"}
    for name, entry in served.items():
        assert entry == await schema_mcp(name, pack, capsys), name
    # one rule for the title: left out when the label is the name
    assert "title" not in served["plain"]
    assert served["labelled"]["title"] == "A labelled tool"
    assert served["search"]["_meta"]["customtools/deprecated"] == {"renamedTo": "search_files"}
    assert served["wipe"]["_meta"] == {"customtools/approval": "always"}
    assert served["judged"]["_meta"] == {"customtools/approval": "conditional"}
