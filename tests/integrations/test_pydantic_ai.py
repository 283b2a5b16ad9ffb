"""The pydantic-ai adapter, end to end with pydantic-ai's FunctionModel (no LLM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDenied

from customtools import ToolRegistry, load_custom_tools
from customtools.integrations.pydantic_ai import CustomToolset, CustomToolUpdate
from customtools.isolation import IsolationPool
from tests.integrations.conftest import SlowState, cleanup_tool, make_tools

pytestmark = pytest.mark.anyio


def scripted(*turns: list[tuple[str, dict[str, Any]]]) -> FunctionModel:
    """A model calling the tools of each turn in order, then answering "done"."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        if turn < len(turns):
            return ModelResponse(
                parts=[
                    ToolCallPart(tool_name=name, args=args, tool_call_id=f"call-{turn}-{i}")
                    for i, (name, args) in enumerate(turns[turn])
                ]
            )
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def tool_parts(messages: list[ModelMessage]) -> list[Any]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, (ToolReturnPart, RetryPromptPart))
    ]


@pytest.fixture
def state() -> SlowState:
    return SlowState()


@pytest.fixture
def ran() -> list[str]:
    return []


@pytest.fixture
def toolset(state: SlowState, ran: list[str]) -> CustomToolset:
    return CustomToolset(make_tools(state, ran))


async def test_the_declared_schema_is_what_the_model_sees(toolset: CustomToolset) -> None:
    seen: list[Any] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return ModelResponse(parts=[TextPart("done")])

    await Agent(FunctionModel(respond), toolsets=[toolset]).run("hi")
    by_name = {definition.name: definition for definition in seen}
    assert by_name["echo"].parameters_json_schema == toolset.registry["echo"].parameters
    assert by_name["echo"].description == "Repeat a text."


async def test_a_valid_call_returns_the_tool_text(toolset: CustomToolset) -> None:
    agent = Agent(scripted([("echo", {"text": "hi", "times": 2})]), toolsets=[toolset])
    result = await agent.run("go")
    [part] = tool_parts(result.all_messages())
    assert isinstance(part, ToolReturnPart)
    assert part.content == "hi hi"
    assert part.tool_call_id == "call-0-0"


async def test_an_invalid_call_is_a_retry_with_customtools_message(
    toolset: CustomToolset,
) -> None:
    model = scripted([("echo", {"times": "x", "extra": 1})], [("echo", {"text": "ok"})])
    result = await Agent(model, toolsets=[toolset]).run("go")
    retry, answer = tool_parts(result.all_messages())
    assert retry.outcome == "retried"  # pydantic-ai's retry prompt, counted against retries
    assert "invalid arguments for tool 'echo'" in str(retry.content)
    assert "/times" in str(retry.content)
    assert "extra" in str(retry.content)
    assert isinstance(answer, ToolReturnPart)
    assert answer.content == "ok"


async def test_an_error_result_reaches_the_model_with_its_text(toolset: CustomToolset) -> None:
    result = await Agent(scripted([("broken", {"n": 3})]), toolsets=[toolset]).run("go")
    [part] = tool_parts(result.all_messages())
    assert "cannot handle 3" in str(part.content)


async def test_updates_stream_as_custom_events(toolset: CustomToolset) -> None:
    events: list[Any] = []
    agent = Agent(scripted([("ticker", {"steps": 3})]), toolsets=[toolset])
    async with agent.iter("go") as run:
        async for node in run:
            if Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as stream:
                    events.extend([event async for event in stream])
    assert run.result is not None
    updates = [event for event in events if isinstance(event, CustomToolUpdate)]
    assert [update.text for update in updates] == ["tick 1", "tick 2", "tick 3"]
    assert {update.tool_call_id for update in updates} == {"call-0-0"}
    assert updates[0].result["content"] == [{"type": "text", "text": "tick 1"}]
    [part] = tool_parts(run.result.all_messages())
    assert part.content == "tick 3"


async def test_a_cancelled_run_aborts_a_sync_tools_signal(
    toolset: CustomToolset, state: SlowState
) -> None:
    agent = Agent(scripted([("slow_sync", {})]), toolsets=[toolset])
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "go")
            assert await anyio.to_thread.run_sync(state.started.wait, 5)
            group.cancel_scope.cancel()
        # The worker thread saw the abort and ended: no thread is left running.
        assert await anyio.to_thread.run_sync(state.finished.wait, 5)
    assert state.aborted
    assert state.reason == "the caller's task was cancelled"


async def test_an_approval_gated_tool_defers_then_runs_once_approved(
    toolset: CustomToolset, ran: list[str]
) -> None:
    agent = Agent(
        scripted([("wipe", {"path": "/tmp/x"})]),
        toolsets=[toolset],
        output_type=[str, DeferredToolRequests],
    )
    first = await agent.run("go")
    assert isinstance(first.output, DeferredToolRequests)
    [call] = first.output.approvals
    assert call.tool_name == "wipe"
    assert first.output.metadata[call.tool_call_id]["arguments"] == {"path": "/tmp/x"}
    assert ran == []
    second = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={call.tool_call_id: True}),
    )
    assert ran == ["/tmp/x"]
    assert second.output == "done"
    assert "wiped /tmp/x" in [p.content for p in tool_parts(second.all_messages())]


async def test_a_denied_call_never_runs(toolset: CustomToolset, ran: list[str]) -> None:
    agent = Agent(
        scripted([("wipe", {"path": "/tmp/x"})]),
        toolsets=[toolset],
        output_type=[str, DeferredToolRequests],
    )
    first = await agent.run("go")
    assert isinstance(first.output, DeferredToolRequests)
    [call] = first.output.approvals
    second = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(
            approvals={call.tool_call_id: ToolDenied("not today")}
        ),
    )
    assert ran == []
    assert "not today" in [p.content for p in tool_parts(second.all_messages())]


async def test_an_isolated_tool_runs_in_its_worker(isolated_pack: Path) -> None:
    import os

    async with IsolationPool(grace=0.3) as pool:
        loaded = await load_custom_tools(
            [str(isolated_pack)], str(isolated_pack.parent), isolation=pool
        )
        assert not loaded.errors, loaded.errors
        toolset = CustomToolset(ToolRegistry(loaded))
        result = await Agent(scripted([("whoami", {"prefix": "pid"})]), toolsets=[toolset]).run(
            "go"
        )
    [part] = tool_parts(result.all_messages())
    prefix, pid = str(part.content).split(":")
    assert prefix == "pid"
    assert int(pid) != os.getpid()


async def test_arguments_that_are_not_an_object_are_a_retry(toolset: CustomToolset) -> None:
    model = scripted([("echo", "[1, 2]")], [("echo", {"text": "ok"})])  # type: ignore[list-item]
    result = await Agent(model, toolsets=[toolset]).run("go")
    retry, answer = tool_parts(result.all_messages())
    assert retry.outcome == "retried"
    assert "invalid arguments for tool 'echo'" in str(retry.content)
    assert answer.content == "ok"


async def test_the_toolset_follows_its_registry(state: SlowState, ran: list[str]) -> None:
    registry = ToolRegistry(make_tools(state, ran)[:1])
    toolset = CustomToolset(registry)
    seen: list[set[str]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append({definition.name for definition in info.function_tools})
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), toolsets=[toolset])
    await agent.run("hi")
    registry.extend(make_tools(state, ran)[1:2])
    await agent.run("hi")
    assert seen == [{"echo"}, {"echo", "ticker"}]


async def test_a_cancelled_run_aborts_an_async_tools_signal_before_its_cleanup(
    state: SlowState,
) -> None:
    agent = Agent(scripted([("waits", {})]), toolsets=[CustomToolset([cleanup_tool(state)])])
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "go")
            assert await anyio.to_thread.run_sync(state.started.wait, 5)
            group.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(state.finished.wait, 5)
    assert state.cleanup_saw == (True, "the caller's task was cancelled")
