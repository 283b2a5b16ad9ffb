"""Tools in isolation workers talk back over ``ToolServer`` as in-process tools do: in the
2026-07-28 era a question ends the first run with ``input_required`` and the retry answers
it; no ``except Exception`` fallback acts before the answer."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from customtools._isolation._pool import IsolationPool
from customtools._loading._loader import load_custom_tools
from customtools.mcp import ToolServer

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(os.name != "posix", reason="process isolation needs POSIX"),
]

PACK = """
from pathlib import Path
from customtools import ToolContext, tool

FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@tool
async def sign_up(ctx: ToolContext) -> str:
    \"\"\"Ask for a name.\"\"\"
    answer = await ctx.ask("Who are you?", FORM, key="who")
    return f"{answer.action}:{answer.values.get('name')}"


@tool
async def cleanup(ctx: ToolContext, path: str) -> str:
    \"\"\"Delete after asking; the usual fallback deletes when nobody answers.\"\"\"
    try:
        ok = await ctx.ui.confirm(f"Delete {path}?")
    except Exception:
        ok = True
    if ok:
        Path(path).unlink()
        return "deleted"
    return "kept"
"""


@pytest.fixture
async def server(tmp_path: Path) -> Any:
    (tmp_path / "pack.py").write_text(PACK)
    home = tmp_path / "home"
    home.mkdir()
    async with IsolationPool() as pool:
        result = await load_custom_tools(
            [str(tmp_path / "pack.py")], cwd=str(tmp_path), home=str(home), isolation=pool
        )
        assert not result.errors, result.errors
        yield ToolServer([loaded.tool for loaded in result.tools])


async def test_a_question_ends_the_first_run_with_input_required(server: ToolServer) -> None:
    async def unused(_ctx: Any, _params: Any) -> types.ElicitResult:
        raise AssertionError("the retry is driven by hand")

    async with Client(server.server, mode="auto", elicitation_callback=unused) as client:
        with anyio.fail_after(30):
            first = await client.session.call_tool("sign_up", {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult)
            assert list(first.input_requests or ()) == ["who"]
            done = await client.session.call_tool(
                "sign_up",
                {},
                request_state=first.request_state,
                input_responses={
                    "who": types.ElicitResult(action="accept", content={"name": "ada"})
                },
                allow_input_required=True,
            )
    assert isinstance(done, types.CallToolResult)
    assert done.content[0].text == "accept:ada"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_fallback_never_acts_before_the_answer(
    server: ToolServer, tmp_path: Path, mode: str
) -> None:
    victim = tmp_path / "data.txt"
    victim.write_text("keep me")

    asked: list[str] = []

    async def refuse(_ctx: Any, params: Any) -> types.ElicitResult:
        assert victim.exists()  # the first run (2026-07-28) ended at the question
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": False})

    async with Client(server.server, mode=mode, elicitation_callback=refuse) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("cleanup", {"path": str(victim)})
    assert result.content[0].text == "kept"  # type: ignore[union-attr]
    assert victim.exists()
    assert asked == [f"Delete {victim}?"]  # the worker's question reached the client
