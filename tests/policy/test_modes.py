"""One policy, every entry point: a pack's declared POLICY under the host's, in process, in an
isolation worker, over MCP (both eras), in a framework adapter, and in telemetry."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from customtools import ToolContext, ToolRegistry, load_custom_tools
from customtools.policy import Policy

pytestmark = pytest.mark.anyio

PACK = """
import os
import anyio
from customtools import CustomTool, Type
from customtools.policy import Policy

POLICY = Policy(max_concurrent=1, queue_timeout=0.05, max_result_bytes=600, retries=0)
HELD = []
LOOKUPS = []

def factory(api):
    async def hold(call_id, params, on_update, ctx, signal):
        HELD.append(call_id)
        await anyio.sleep(3600)

    async def big(call_id, params, on_update, ctx, signal):
        return f"pid {os.getpid()} " + "z" * 5000

    async def lookup(call_id, params, on_update, ctx, signal):
        LOOKUPS.append(call_id)
        return f"pid {os.getpid()} looked up {params['q']} for {ctx.caller}, #{len(LOOKUPS)}"

    return [
        CustomTool(name="hold", execute=hold),
        CustomTool(name="big", execute=big),
        CustomTool(
            name="lookup",
            parameters=Type.Object({"q": Type.String()}),
            execute=lookup,
            annotations={"readOnlyHint": True, "idempotentHint": True},
        ),
    ]
"""


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    path = tmp_path / "governed.py"
    path.write_text(PACK)
    return path


async def check_the_pack_policy_holds(registry: ToolRegistry) -> None:
    """The pack's cap of one, its budget, and the host's queue timeout over the pack's."""
    big = await registry.call("big", "b", {})
    assert big.meta["customtools/policy"]["trimmed"]["size"] > 5000
    assert sum(len(block.text) for block in big.content) <= 600
    async with anyio.create_task_group() as group:
        group.start_soon(registry.call, "hold", "h1", {})
        with anyio.fail_after(30):
            while registry.adapter("hold")._plan.gates[0][0].used == 0:  # type: ignore[union-attr]
                await anyio.sleep(0.01)
        refused = await registry.call("hold", "h2", {})
        group.cancel_scope.cancel()
    assert refused.details["code"] == "queue-timeout"
    assert "at most 1 running per tool" in refused.text


async def test_in_process_a_pack_declaration_applies_under_the_host_policy(pack: Path) -> None:
    loaded = await load_custom_tools([str(pack)], cwd=str(pack.parent))
    await check_the_pack_policy_holds(ToolRegistry(loaded, policy=Policy()))
    # The host's settings win: its budget replaces the pack's.
    wide = ToolRegistry(loaded, policy=Policy(max_result_bytes=100_000))
    assert "trimmed" not in ((await wide.call("big", "b", {})).meta or {}).get(
        "customtools/policy", {}
    )


async def test_a_lazy_tool_obeys_its_pack_policy_from_its_first_call(
    pack: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    options: dict[str, Any] = {"cwd": str(pack.parent), "home": str(home), "lazy": True}
    await load_custom_tools([str(pack)], **options)  # warms the manifest cache

    async def lazily(**fields: Any) -> ToolRegistry:
        loaded = await load_custom_tools([str(pack)], **options)
        assert [t.lazy for t in loaded.tools] == [True, True, True]  # nothing imported yet
        return ToolRegistry(loaded, policy=Policy(), **fields)

    # Each load imports the module on its first call: the budget, then the cap.
    await check_the_pack_policy_holds(await lazily())
    registry = await lazily(context=ToolContext(caller="alice"))
    first = await registry.call("lookup", "l1", {"q": "x"})
    again = await registry.call("lookup", "l2", {"q": "x"})
    assert first.meta["customtools/policy"] == {"cache": "stored"}
    assert again.meta["customtools/policy"] == {"cache": "hit"}
    assert again.text == first.text  # the tool ran once


async def test_without_a_host_policy_nothing_is_applied(pack: Path) -> None:
    loaded = await load_custom_tools([str(pack)], cwd=str(pack.parent))
    big = await ToolRegistry(loaded).call("big", "b", {})
    assert len(big.text) > 5000
    assert big.meta is None


# One worker kind per event loop keeps this cheap: isolated on asyncio, sandboxed on trio.
@pytest.mark.parametrize(("anyio_backend", "sandbox"), [("asyncio", False), ("trio", True)])
async def test_in_an_isolation_worker_the_same_policy_holds(
    pack: Path, sandbox: bool, tmp_path: Path
) -> None:
    from customtools.isolation import IsolationPool

    home = tmp_path / "home"
    home.mkdir()
    async with IsolationPool(grace=0.3) as pool:
        loaded = await load_custom_tools(
            [str(pack)], cwd=str(pack.parent), home=str(home), isolation=pool, sandbox=sandbox
        )
        assert not loaded.errors, loaded.errors
        registry = ToolRegistry(loaded, policy=Policy())
        found = await registry.call("lookup", "l", {"q": "x"})
        assert int(found.text.split()[1]) != os.getpid()  # it ran in the worker
        await check_the_pack_policy_holds(registry)


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_over_mcp_the_same_policy_holds_with_read_result_and_callers_apart(
    pack: Path, mode: str
) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from customtools.mcp import ToolServer

    loaded = await load_custom_tools([str(pack)], cwd=str(pack.parent))
    server = ToolServer(loaded.tools, policy=Policy())
    async with Client(server.server, mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"hold", "big", "lookup", "read_result"}
        big = await client.call_tool("big", {})
        record = big.meta["customtools/policy"]["trimmed"]
        assert sum(len(block.text) for block in big.content) <= 600  # type: ignore[union-attr]
        page = await client.call_tool("read_result", {"handle": record["handle"], "length": 50})
        assert page.is_error is False
        assert page.content[0].text.startswith("pid ")  # type: ignore[union-attr]
        first = await client.call_tool("lookup", {"q": "x"})
        again = await client.call_tool("lookup", {"q": "x"})
    async with Client(server.server, mode=mode) as other:
        theirs = await other.call_tool("lookup", {"q": "x"})
        stolen = await other.call_tool("read_result", {"handle": record["handle"]})
    if mode == "auto":  # sessionless and no principal: no caller, so nothing is cached
        assert first.meta is None or "customtools/policy" not in first.meta
        assert theirs.meta is None or "customtools/policy" not in theirs.meta
        return
    # One connection, one caller: its repeat is answered from the cache, never another's.
    assert first.meta["customtools/policy"] == {"cache": "stored"}
    assert again.meta["customtools/policy"] == {"cache": "hit"}
    assert theirs.meta["customtools/policy"] == {"cache": "stored"}
    assert theirs.content[0].text != first.content[0].text  # type: ignore[union-attr]
    assert stolen.is_error is True


async def test_with_tool_search_read_result_is_listed_to_every_client(pack: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from customtools.mcp import ToolServer

    loaded = await load_custom_tools([str(pack)], cwd=str(pack.parent))
    server = ToolServer(loaded.tools, policy=Policy(), tool_search=True)
    async with Client(server.server) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
    assert listed == ["search_tools", "read_result"]  # a trimmed result names read_result


# -- the framework adapters (they drive their runs on asyncio) -----------------------------------

CALLS = [("lookup", {"q": "x"}), ("lookup", {"q": "x"}), ("big", {})]


async def _through_pydantic_ai(loaded: Any, context: ToolContext) -> list[str]:
    from pydantic_ai import Agent

    from customtools.integrations.pydantic_ai import CustomToolset
    from tests.integrations.test_pydantic_ai import scripted, tool_parts

    toolset = CustomToolset(loaded, policy=Policy(), context=context)
    result = await Agent(scripted(*([call] for call in CALLS)), toolsets=[toolset]).run("go")
    return [str(part.content) for part in tool_parts(result.all_messages())]


async def _through_langchain(loaded: Any, context: ToolContext) -> list[str]:
    from customtools.integrations.langchain import langchain_tools

    tools = {t.name: t for t in langchain_tools(loaded, policy=Policy(), context=context)}
    out = []
    for index, (name, args) in enumerate(CALLS):
        call = {"name": name, "args": args, "id": f"c{index}", "type": "tool_call"}
        out.append(str((await tools[name].ainvoke(call)).content))
    return out


async def _through_openai_agents(loaded: Any, context: ToolContext) -> list[str]:
    from agents.tool_context import ToolContext as AgentsToolContext

    from customtools.integrations.openai_agents import function_tools

    tools = {t.name: t for t in function_tools(loaded, policy=Policy(), context=context)}
    out = []
    for index, (name, args) in enumerate(CALLS):
        arguments = json.dumps(args)
        ctx = AgentsToolContext(
            context=None, tool_name=name, tool_call_id=f"c{index}", tool_arguments=arguments
        )
        out.append(str(await tools[name].on_invoke_tool(ctx, arguments)))
    return out


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize(
    "through",
    [
        pytest.param(_through_pydantic_ai, id="pydantic-ai"),
        pytest.param(_through_langchain, id="langchain"),
        pytest.param(_through_openai_agents, id="openai-agents"),
    ],
)
async def test_in_a_framework_adapter_the_same_policy_holds(pack: Path, through: Any) -> None:
    loaded = await load_custom_tools([str(pack)], cwd=str(pack.parent))
    first, again, big = await through(loaded, ToolContext(caller="alice"))
    assert first.endswith("for alice, #1")
    assert again == first  # answered from alice's cache: the tool ran once
    assert len(big) <= 700  # the pack's budget of 600 bytes, and the framework's wrapping
    assert "[Trimmed to the host's budget of 600 bytes" in big
    assert "read_result(handle='r-" in big
