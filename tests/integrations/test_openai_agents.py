"""The OpenAI Agents SDK adapter, end to end with the SDK's ScriptedModel (no LLM)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from agents import Agent, Runner, ToolCallOutputItem, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from customtools import ToolResult, load_custom_tools, tool
from customtools.export import openai_issues
from customtools.integrations.openai_agents import function_tools
from customtools.isolation import IsolationPool
from tests.integrations.conftest import SlowState, cleanup_tool, make_tools

pytestmark = pytest.mark.anyio

set_tracing_disabled(True)


def scripted(*turns: list[tuple[str, Any]]) -> ScriptedModel:
    steps: list[Any] = [
        [function_call(name, args, call_id=f"call-{t}-{i}") for i, (name, args) in enumerate(turn)]
        for t, turn in enumerate(turns)
    ]
    return ScriptedModel([*steps, [assistant_message("done")]])


def outputs(result: Any) -> list[Any]:
    return [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]


@pytest.fixture
def state() -> SlowState:
    return SlowState()


@pytest.fixture
def ran() -> list[str]:
    return []


def agent_with(model: ScriptedModel, tools: list[Any]) -> Agent[Any]:
    return Agent(name="tester", model=model, tools=tools)


def test_the_declared_schema_is_passed_through(state: SlowState, ran: list[str]) -> None:
    source = make_tools(state, ran)
    converted = {t.name: t for t in function_tools(source)}
    assert converted["echo"].params_json_schema == source[0].parameters
    assert converted["echo"].strict_json_schema is False
    assert converted["wipe"].needs_approval is not False
    assert converted["echo"].needs_approval is False


def test_strict_mode_only_where_the_schema_meets_it() -> None:
    @tool(strict=True)
    def search(query: str, limit: int = 5) -> str:
        """Search."""
        return query

    assert openai_issues(search) == []
    [converted] = function_tools([search])
    assert converted.strict_json_schema is True
    assert converted.params_json_schema == search.parameters


async def test_a_valid_call(state: SlowState, ran: list[str]) -> None:
    tools = function_tools(make_tools(state, ran))
    result = await Runner.run(
        agent_with(scripted([("echo", {"text": "hi", "times": 2})]), tools), "go"
    )
    assert outputs(result) == ["hi hi"]
    assert result.final_output == "done"


async def test_invalid_arguments_reach_the_model_and_it_retries(
    state: SlowState, ran: list[str]
) -> None:
    tools = function_tools(make_tools(state, ran))
    model = scripted(
        [("echo", {"times": "x"})], [("echo", "{not json")], [("echo", {"text": "ok"})]
    )
    result = await Runner.run(agent_with(model, tools), "go")
    first, second, third = outputs(result)
    assert "invalid arguments for tool 'echo'" in first
    assert "/times" in first
    assert "text" in first
    assert "not valid JSON" in second
    assert third == "ok"


async def test_an_error_result_is_tool_output(state: SlowState, ran: list[str]) -> None:
    tools = function_tools(make_tools(state, ran))
    result = await Runner.run(agent_with(scripted([("broken", {"n": 4})]), tools), "go")
    [text] = outputs(result)
    assert "cannot handle 4" in text


async def test_updates_go_to_the_host_callback(state: SlowState, ran: list[str]) -> None:
    seen: list[tuple[str, str, str]] = []

    def on_update(name: str, call_id: str, partial: ToolResult) -> None:
        seen.append((name, call_id, partial.text))

    tools = function_tools(make_tools(state, ran), on_update=on_update)
    result = await Runner.run(agent_with(scripted([("ticker", {"steps": 2})]), tools), "go")
    assert seen == [("ticker", "call-0-0", "tick 1"), ("ticker", "call-0-0", "tick 2")]
    assert outputs(result) == ["tick 2"]


async def test_a_cancelled_run_aborts_a_sync_tools_signal(state: SlowState, ran: list[str]) -> None:
    tools = function_tools(make_tools(state, ran))
    agent = agent_with(scripted([("slow_sync", {})]), tools)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(Runner.run, agent, "go")
            assert await anyio.to_thread.run_sync(state.started.wait, 5)
            group.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(state.finished.wait, 5)
    assert state.aborted
    assert state.reason == "the caller's task was cancelled"


async def test_an_approval_gated_tool_interrupts_then_runs_once_approved(
    state: SlowState, ran: list[str]
) -> None:
    tools = function_tools(make_tools(state, ran))
    agent = agent_with(scripted([("wipe", {"path": "/tmp/x"})]), tools)
    first = await Runner.run(agent, "go")
    [item] = first.interruptions
    assert ran == []
    run_state = first.to_state()
    run_state.approve(item)
    second = await Runner.run(agent, run_state)
    assert ran == ["/tmp/x"]
    assert outputs(second) == ["wiped /tmp/x"]


async def test_a_rejected_call_never_runs(state: SlowState, ran: list[str]) -> None:
    tools = function_tools(make_tools(state, ran))
    agent = agent_with(scripted([("wipe", {"path": "/tmp/x"})]), tools)
    first = await Runner.run(agent, "go")
    [item] = first.interruptions
    run_state = first.to_state()
    run_state.reject(item)
    second = await Runner.run(agent, run_state)
    assert ran == []
    assert second.final_output == "done"


async def test_an_isolated_tool_runs_in_its_worker(isolated_pack: Path) -> None:
    async with IsolationPool(grace=0.3) as pool:
        loaded = await load_custom_tools(
            [str(isolated_pack)], str(isolated_pack.parent), isolation=pool
        )
        assert not loaded.errors, loaded.errors
        tools = function_tools(loaded)
        result = await Runner.run(
            agent_with(scripted([("whoami", {"prefix": "pid"})]), tools), "go"
        )
    [text] = outputs(result)
    prefix, pid = text.split(":")
    assert prefix == "pid"
    assert int(pid) != os.getpid()


@pytest.mark.parametrize("arguments", ["[1, 2]", "null", '"text"'])
async def test_arguments_that_are_not_an_object_are_reported(
    state: SlowState, ran: list[str], arguments: str
) -> None:
    from agents.tool_context import ToolContext as AgentsToolContext

    [echo, *_] = function_tools(make_tools(state, ran))
    ctx = AgentsToolContext(
        context=None, tool_name="echo", tool_call_id="c1", tool_arguments=arguments
    )
    text = await echo.on_invoke_tool(ctx, arguments)
    assert "invalid arguments for tool 'echo'" in text


@tool(requires_approval=lambda args: not args["dry_run"])
def deploy(target: str, dry_run: bool = True) -> str:
    """Deploy to a target; a real (non-dry) deploy needs approval."""
    return f"{'DRY RUN' if dry_run else 'REAL DEPLOY'} to {target}"


@tool(requires_approval=lambda args: args["recursive"])
def remove(path: str, recursive: bool = True) -> str:
    """Remove a path; a recursive removal needs approval (and is the default)."""
    return f"removed {path} recursive={recursive}"


@pytest.mark.parametrize(
    ("gated", "arguments"),
    [
        (deploy, {"target": "prod", "dry_run": False}),
        (deploy, {"target": "prod", "dry_run": "false"}),  # coerced to False
        (remove, {"path": "/srv"}),  # recursive defaults to True
    ],
)
async def test_approval_is_decided_on_the_validated_arguments(
    gated: Any, arguments: dict[str, Any]
) -> None:
    agent = agent_with(scripted([(gated.name, arguments)]), function_tools([gated]))
    first = await Runner.run(agent, "go")
    assert len(first.interruptions) == 1
    assert outputs(first) == []
    run_state = first.to_state()
    run_state.approve(first.interruptions[0])
    second = await Runner.run(agent, run_state)
    [text] = outputs(second)
    assert text.startswith(("REAL DEPLOY", "removed /srv recursive=True"))


async def test_a_call_needing_approval_never_runs_unless_the_sdk_approved_it() -> None:
    ran: list[bool] = []

    # A rule the SDK's pre-check cannot see the same way: it asks only on the call's own
    # evaluation, so the SDK never records an approval.
    answers = iter([False, True])

    @tool(requires_approval=lambda args: next(answers, True))
    def flaky(path: str) -> str:
        """Approval depends on when it is asked."""
        ran.append(True)
        return "ran"

    result = await Runner.run(
        agent_with(scripted([("flaky", {"path": "/x"})]), function_tools([flaky])), "go"
    )
    [text] = outputs(result)
    assert ran == []
    assert "was not run" in text
    assert "denied" in text


async def test_invalid_arguments_of_a_gated_tool_ask_first() -> None:
    agent = agent_with(scripted([("deploy", {"target": 3})]), function_tools([deploy]))
    first = await Runner.run(agent, "go")
    assert len(first.interruptions) == 1


async def test_a_cancelled_run_aborts_an_async_tools_signal_before_its_cleanup(
    state: SlowState,
) -> None:
    agent = agent_with(scripted([("waits", {})]), function_tools([cleanup_tool(state)]))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(Runner.run, agent, "go")
            assert await anyio.to_thread.run_sync(state.started.wait, 5)
            group.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(state.finished.wait, 5)
    assert state.cleanup_saw == (True, "the caller's task was cancelled")
