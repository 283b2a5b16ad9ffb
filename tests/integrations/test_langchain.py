"""The LangChain adapter, end to end in LangGraph graphs with a scripted chat model (no LLM)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command

from customtools import ToolResult, load_custom_tools
from customtools.integrations.langchain import langchain_tools
from customtools.isolation import IsolationPool
from tests.integrations.conftest import SlowState, cleanup_tool, make_tools

pytestmark = pytest.mark.anyio


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, able to take tools (it ignores them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def script(*turns: list[tuple[str, dict[str, Any]]]) -> ScriptedChatModel:
    def messages() -> Iterator[BaseMessage]:
        for t, turn in enumerate(turns):
            yield AIMessage(
                content="",
                tool_calls=[
                    {"name": name, "args": args, "id": f"call-{t}-{i}", "type": "tool_call"}
                    for i, (name, args) in enumerate(turn)
                ],
            )
        yield AIMessage(content="done")

    return ScriptedChatModel(messages=messages())


def graph(model: ScriptedChatModel, tools: list[Any], *, checkpointer: Any = None) -> Any:
    builder = StateGraph(MessagesState)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=checkpointer)


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


@pytest.fixture
def state() -> SlowState:
    return SlowState()


@pytest.fixture
def ran() -> list[str]:
    return []


@pytest.fixture
def tools(state: SlowState, ran: list[str]) -> list[Any]:
    return langchain_tools(make_tools(state, ran))


def test_the_declared_schema_is_the_args_schema(state: SlowState, ran: list[str]) -> None:
    source = make_tools(state, ran)
    [echo, *_] = langchain_tools(source)
    assert echo.args_schema == source[0].parameters
    assert echo.name == "echo"
    assert echo.description == "Repeat a text."


async def test_a_valid_call(tools: list[Any]) -> None:
    result = await graph(script([("echo", {"text": "hi", "times": 2})]), tools).ainvoke(
        {"messages": [("user", "go")]}
    )
    [message] = tool_messages(result)
    assert message.content == "hi hi"
    assert message.status == "success"
    assert message.tool_call_id == "call-0-0"
    assert isinstance(message.artifact, ToolResult)
    assert result["messages"][-1].content == "done"


async def test_an_invalid_call_is_an_error_message_and_the_model_retries(
    tools: list[Any],
) -> None:
    model = script([("echo", {"times": "x"})], [("echo", {"text": "ok"})])
    result = await graph(model, tools).ainvoke({"messages": [("user", "go")]})
    first, second = tool_messages(result)
    assert first.status == "error"
    assert "invalid arguments for tool 'echo'" in str(first.content)
    assert "/times" in str(first.content)
    assert second.status == "success"
    assert second.content == "ok"


async def test_an_error_result_keeps_its_text(tools: list[Any]) -> None:
    result = await graph(script([("broken", {"n": 5})]), tools).ainvoke(
        {"messages": [("user", "go")]}
    )
    [message] = tool_messages(result)
    assert message.status == "error"
    assert "cannot handle 5" in str(message.content)


async def test_updates_stream_through_the_graph_writer(tools: list[Any]) -> None:
    chunks = [
        chunk
        async for chunk in graph(script([("ticker", {"steps": 3})]), tools).astream(
            {"messages": [("user", "go")]}, stream_mode="custom"
        )
    ]
    assert [chunk["text"] for chunk in chunks] == ["tick 1", "tick 2", "tick 3"]
    assert {chunk["tool_call_id"] for chunk in chunks} == {"call-0-0"}
    assert {chunk["event"] for chunk in chunks} == {"customtools_update"}


async def test_outside_a_graph_updates_are_custom_events(tools: list[Any]) -> None:
    ticker = next(t for t in tools if t.name == "ticker")
    call = {"name": "ticker", "args": {"steps": 2}, "id": "c9", "type": "tool_call"}
    events = [
        event
        async for event in ticker.astream_events(call, version="v2")
        if event["event"] == "on_custom_event"
    ]
    assert [event["data"]["result"]["content"][0]["text"] for event in events] == [
        "tick 1",
        "tick 2",
    ]
    assert {event["name"] for event in events} == {"customtools_update"}


async def test_a_cancelled_run_aborts_a_sync_tools_signal(
    tools: list[Any], state: SlowState
) -> None:
    app = graph(script([("slow_sync", {})]), tools)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(app.ainvoke, {"messages": [("user", "go")]})
            assert await anyio.to_thread.run_sync(state.started.wait, 5)
            group.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(state.finished.wait, 5)
    assert state.aborted
    assert state.reason == "the caller's task was cancelled"


@pytest.mark.parametrize(("answer", "runs"), [(True, ["/tmp/x"]), ({"approved": False}, [])])
async def test_approval_interrupts_the_graph_and_the_answer_decides(
    tools: list[Any], ran: list[str], answer: Any, runs: list[str]
) -> None:
    app = graph(script([("wipe", {"path": "/tmp/x"})]), tools, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    first = await app.ainvoke({"messages": [("user", "go")]}, config)
    [pause] = first["__interrupt__"]
    assert pause.value["tool"] == "wipe"
    assert pause.value["arguments"] == {"path": "/tmp/x"}
    assert ran == []
    second = await app.ainvoke(Command(resume=answer), config)
    assert ran == runs  # the body ran at most once, after the answer
    [message] = tool_messages(second)
    if runs:
        assert message.content == "wiped /tmp/x"
    else:
        assert message.status == "error"
        assert "denied" in str(message.content)


async def test_outside_a_graph_approval_is_the_adapters_approver(
    state: SlowState, ran: list[str]
) -> None:
    async def approver(request: Any) -> bool:
        return request.arguments["path"] == "/tmp/ok"

    tools = langchain_tools(make_tools(state, ran), approver=approver)
    wipe = next(t for t in tools if t.name == "wipe")
    ok = await wipe.ainvoke(
        {"name": "wipe", "args": {"path": "/tmp/ok"}, "id": "a", "type": "tool_call"}
    )
    no = await wipe.ainvoke(
        {"name": "wipe", "args": {"path": "/etc"}, "id": "b", "type": "tool_call"}
    )
    assert ok.content == "wiped /tmp/ok"
    assert no.status == "error"
    assert ran == ["/tmp/ok"]


async def test_the_prebuilt_react_agent_runs_the_tools(tools: list[Any]) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated for langchain's
        from langgraph.prebuilt import create_react_agent

        agent = create_react_agent(script([("echo", {"text": "hey"})]), tools)
    result = await agent.ainvoke({"messages": [("user", "go")]})
    [message] = tool_messages(result)
    assert message.content == "hey"


async def test_an_isolated_tool_runs_in_its_worker(isolated_pack: Path) -> None:
    async with IsolationPool(grace=0.3) as pool:
        loaded = await load_custom_tools(
            [str(isolated_pack)], str(isolated_pack.parent), isolation=pool
        )
        assert not loaded.errors, loaded.errors
        app = graph(script([("whoami", {"prefix": "pid"})]), langchain_tools(loaded))
        result = await app.ainvoke({"messages": [("user", "go")]})
    [message] = tool_messages(result)
    prefix, pid = str(message.content).split(":")
    assert prefix == "pid"
    assert int(pid) != os.getpid()


def test_sync_invoke_runs_the_call_on_its_own_loop(state: SlowState, ran: list[str]) -> None:
    [echo, *_] = langchain_tools(make_tools(state, ran))
    assert echo.invoke({"text": "hi", "times": 3}) == "hi hi hi"
    message = echo.invoke({"name": "echo", "args": {"times": 1}, "id": "s1", "type": "tool_call"})
    assert message.status == "error"
    assert "text" in str(message.content)


async def test_a_cancelled_run_aborts_an_async_tools_signal_before_its_cleanup(
    state: SlowState,
) -> None:
    app = graph(script([("waits", {})]), langchain_tools([cleanup_tool(state)]))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(app.ainvoke, {"messages": [("user", "go")]})
            assert await anyio.to_thread.run_sync(state.started.wait, 5)
            group.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(state.finished.wait, 5)
    assert state.cleanup_saw == (True, "the caller's task was cancelled")
