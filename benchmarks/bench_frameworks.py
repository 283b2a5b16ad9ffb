"""Framework adapters: per-call overhead against each framework's native tool, and MCP stdio.

Run with ``python benchmarks/bench_frameworks.py`` (needs the ``pydantic-ai``, ``langchain``,
``openai-agents`` and ``mcp`` extras: ``make bench``). Everything is measured in one process, in
one run; figures are best-of-repeats and the ratios compare cases of the same run:

- **per call**, through the framework's own tool-call path (LangChain: ``tool.ainvoke(call)``,
  what ``ToolNode`` calls; Agents SDK: ``FunctionTool.on_invoke_tool(ctx, json)``), the adapter's
  tool against the framework's native tool wrapping the same async function;
- **per agent run** (one tool call, then a final answer, offline scripted model), the adapter
  against the native tool against the tool served by ``customtools serve --stdio`` through MCP
  (the Agents SDK's own MCP client; for pydantic-ai and LangChain, the MCP SDK's client session,
  since their MCP clients are not installable here: pydantic-ai's needs FastMCP, LangChain's
  pins ``mcp<2``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _harness import Table, emit, ratio, run_main

from customtools import tool

PACK = '''
from customtools import tool


@tool
async def echo(text: str) -> str:
    """Echo a text."""
    return text


def factory(api):
    return echo
'''


async def echo_fn(text: str) -> str:
    """Echo a text.

    Args:
        text: the text.
    """
    return text


def ours() -> Any:
    return tool(echo_fn, name="echo")


async def compare(
    cases: dict[str, Callable[[], Awaitable[Any]]], n: int, repeats: int
) -> dict[str, float]:
    """Best seconds per call of each case: a warm-up, then repeats run round-robin (repeat r
    of every case, then repeat r+1) so the machine's drift hits every case alike."""
    times: dict[str, list[float]] = {label: [] for label in cases}
    for fn in cases.values():
        for _ in range(max(1, n // 10)):
            await fn()
    for _ in range(repeats):
        for label, fn in cases.items():
            start = time.perf_counter()
            for _ in range(n):
                await fn()
            times[label].append((time.perf_counter() - start) / n)
    return {label: min(values) for label, values in times.items()}


# -- per call ------------------------------------------------------------------------------------


async def langchain_calls(n: int, repeats: int) -> dict[str, float]:
    from langchain_core.tools import tool as lc_tool

    from customtools.integrations.langchain import langchain_tools

    native = lc_tool("echo")(echo_fn)
    [adapted] = langchain_tools([ours()])
    call = {"name": "echo", "args": {"text": "hi"}, "id": "c1", "type": "tool_call"}
    return await compare(
        {"native": lambda: native.ainvoke(call), "adapter": lambda: adapted.ainvoke(call)},
        n,
        repeats,
    )


async def openai_calls(n: int, repeats: int) -> dict[str, float]:
    from agents import function_tool
    from agents.tool_context import ToolContext

    from customtools.integrations.openai_agents import function_tools

    native = function_tool(echo_fn, name_override="echo")
    [adapted] = function_tools([ours()])
    args = '{"text": "hi"}'
    ctx = ToolContext(context=None, tool_name="echo", tool_call_id="c1", tool_arguments=args)
    return await compare(
        {
            "native": lambda: native.on_invoke_tool(ctx, args),
            "adapter": lambda: adapted.on_invoke_tool(ctx, args),
        },
        n,
        repeats,
    )


# -- per agent run -------------------------------------------------------------------------------


class McpEcho:
    """One ``customtools serve --stdio`` process and an MCP SDK client session to it."""

    def __init__(self, pack: Path) -> None:
        self.pack = pack
        self.session: Any = None

    async def __aenter__(self) -> McpEcho:
        from contextlib import AsyncExitStack

        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self._stack = AsyncExitStack()
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "customtools", "serve", "--stdio", str(self.pack)]
        )
        read, write = await self._stack.enter_async_context(stdio_client(params))
        self.session = await self._stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.aclose()

    async def echo(self, text: str) -> str:
        result = await self.session.call_tool("echo", {"text": text})
        return str(result.content[0].text)


async def pydantic_ai_runs(n: int, repeats: int, mcp: McpEcho) -> dict[str, float]:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from customtools.integrations.pydantic_ai import CustomToolset

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("echo", {"text": "hi"}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("done")])

    async def echo(text: str) -> str:
        """Echo a text (over MCP)."""
        return await mcp.echo(text)

    model = FunctionModel(respond)
    agents: dict[str, Any] = {
        "native": Agent(model, tools=[Tool(echo_fn, name="echo")]),
        "adapter": Agent(model, toolsets=[CustomToolset([ours()])]),
        "mcp": Agent(model, tools=[Tool(echo, name="echo")]),
    }
    for label, agent in agents.items():  # every path really ran the tool
        messages = (await agent.run("go")).all_messages()
        assert messages[2].parts[0].content == "hi", (label, messages)
    return await compare(
        {label: (lambda a=agent: a.run("go")) for label, agent in agents.items()}, n, repeats
    )


async def langgraph_runs(n: int, repeats: int, mcp: McpEcho) -> dict[str, float]:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool as lc_tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from customtools.integrations.langchain import langchain_tools

    class Scripted(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatResult:
            if isinstance(messages[-1], HumanMessage):
                call = {"name": "echo", "args": {"text": "hi"}, "id": "c1", "type": "tool_call"}
                message = AIMessage(content="", tool_calls=[call])
            else:
                message = AIMessage(content="done")
            return ChatResult(generations=[ChatGeneration(message=message)])

    model = Scripted()

    @lc_tool
    async def echo(text: str) -> str:
        """Echo a text (over MCP)."""
        return await mcp.echo(text)

    def build(tools: list[Any]) -> Any:
        graph = StateGraph(MessagesState)

        async def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        graph.add_node("model", call_model)
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", tools_condition)
        graph.add_edge("tools", "model")
        return graph.compile()

    graphs = {
        "native": build([lc_tool("echo")(echo_fn)]),
        "adapter": build(langchain_tools([ours()])),
        "mcp": build([echo]),
    }
    start = {"messages": [("user", "go")]}
    for label, compiled in graphs.items():  # every path really ran the tool
        result = await compiled.ainvoke(start)
        assert result["messages"][-2].content == "hi", (label, result)
    return await compare(
        {label: (lambda g=graph: g.ainvoke(start)) for label, graph in graphs.items()}, n, repeats
    )


async def openai_runs(n: int, repeats: int, pack: Path) -> dict[str, float]:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.mcp import MCPServerStdio
    from agents.testing import ScriptedModel, assistant_message, function_call

    from customtools.integrations.openai_agents import function_tools

    set_tracing_disabled(True)

    def script() -> ScriptedModel:
        return ScriptedModel(
            [[function_call("echo", {"text": "hi"}, call_id="c1")], [assistant_message("done")]]
        )

    server = MCPServerStdio(
        params={
            "command": sys.executable,
            "args": ["-m", "customtools", "serve", "--stdio", str(pack)],
        },
        cache_tools_list=True,
    )
    async with server:
        kinds = {
            "native": {"tools": [function_tool(echo_fn, name_override="echo")]},
            "adapter": {"tools": function_tools([ours()])},
            "mcp": {"mcp_servers": [server]},
        }
        runs: dict[str, Callable[[], Awaitable[Any]]] = {}
        for label, kwargs in kinds.items():

            async def run(kwargs: dict[str, Any] = kwargs) -> Any:
                return await Runner.run(Agent(name="b", model=script(), **kwargs), "go")

            output = (await run()).new_items[-2].output  # every path really ran the tool
            assert "hi" in str(output), (label, output)
            runs[label] = run
        return await compare(runs, n, repeats)


def show(table: Table, title: str, figures: dict[str, float]) -> None:
    def cell(key: str) -> str:
        return f"{figures[key] * 1e6:,.1f}" if key in figures else ""

    def share(top: str, bottom: str) -> str:
        return ratio(figures[top] / figures[bottom]) if top in figures else ""

    table.row(
        title,
        cell("native"),
        cell("adapter"),
        cell("mcp"),
        share("adapter", "native"),
        share("mcp", "adapter"),
    )
    value = figures["adapter"] / figures["native"]
    table.target(f"{title}: adapter ≤ 1.2× native", ratio(value), value <= 1.2)


async def main_async(calls: int, runs: int, repeats: int) -> Table:
    table = Table(
        [
            "µs per call or per run",
            "native",
            "adapter",
            "MCP stdio",
            "adapter / native",
            "MCP / adapter",
        ],
        note=f"Best of {repeats} round-robin repeats of {calls} calls or {runs} agent runs.",
    )
    show(table, "LangChain, per call (`tool.ainvoke`)", await langchain_calls(calls, repeats))
    show(
        table,
        "Agents SDK, per call (`on_invoke_tool`)",
        await openai_calls(calls, repeats),
    )
    with tempfile.TemporaryDirectory() as tmp:
        pack = Path(tmp) / "echo_pack.py"
        pack.write_text(PACK)
        async with McpEcho(pack) as mcp:
            show(table, "pydantic-ai, per agent run", await pydantic_ai_runs(runs, repeats, mcp))
            show(table, "LangGraph, per agent run", await langgraph_runs(runs, repeats, mcp))
        show(table, "Agents SDK, per agent run", await openai_runs(runs, repeats, pack))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per repeat (per call)")
    parser.add_argument("--runs", type=int, default=200, help="agent runs per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    emit(asyncio.run(main_async(options.calls, options.runs, options.repeats)))


if __name__ == "__main__":
    run_main(main)
