"""Retries: only idempotent tools, only transient failures, never a destructive tool, and
they stop at once when the call is aborted."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from customtools import AbortController, CustomTool, CustomToolAdapter, ToolResult
from customtools.policy import Policy, TransientToolError

pytestmark = pytest.mark.anyio

IDEMPOTENT = {"idempotentHint": True}


def failing_tool(failures: int, **fields: Any) -> tuple[CustomTool, list[int]]:
    calls: list[int] = []

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise TransientToolError("the service is busy")
        return f"worked on attempt {len(calls)}"

    return CustomTool(name="fetch", execute=execute, **fields), calls


async def test_an_idempotent_tool_is_retried_after_a_transient_failure() -> None:
    tool, calls = failing_tool(2, annotations=IDEMPOTENT)
    result = await CustomToolAdapter(tool, policy=Policy(retry_backoff=0)).execute("1", {})
    assert result.text == "worked on attempt 3"
    assert result.meta["customtools/policy"] == {"retries": 2}
    assert len(calls) == 3


async def test_retries_stop_at_the_limit_and_return_the_last_failure() -> None:
    tool, calls = failing_tool(5, annotations=IDEMPOTENT)
    result = await CustomToolAdapter(tool, policy=Policy(retries=1, retry_backoff=0)).execute(
        "1", {}
    )
    assert result.is_error
    assert result.details["error"] == "TransientToolError"
    assert result.meta["customtools/policy"] == {"retries": 1}
    assert len(calls) == 2


@pytest.mark.parametrize(
    "annotations",
    [
        {"idempotentHint": True, "destructiveHint": True},
        {"destructiveHint": True},
        {},  # nothing says a second run is harmless
    ],
)
async def test_a_destructive_or_unannotated_tool_is_never_repeated(
    annotations: dict[str, Any],
) -> None:
    tool, calls = failing_tool(1, annotations=annotations)
    adapter = CustomToolAdapter(tool, policy=Policy(retries=5, retry_backoff=0), approver=_yes)
    result = await adapter.execute("1", {})
    assert result.is_error
    assert len(calls) == 1


async def _yes(request: Any) -> bool:
    return True


async def test_a_failure_that_is_not_transient_is_not_retried() -> None:
    calls: list[int] = []

    async def broken(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        calls.append(1)
        raise KeyError("a bug")

    tool = CustomTool(name="broken", execute=broken, annotations=IDEMPOTENT)
    result = await CustomToolAdapter(tool, policy=Policy(retry_backoff=0)).execute("1", {})
    assert result.details["error"] == "KeyError"
    assert len(calls) == 1


async def test_the_tool_and_the_host_mark_what_is_transient() -> None:
    calls: list[str] = []

    async def tool_marks(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> Any:
        calls.append("tool")
        if len(calls) == 1:
            return ToolResult.from_text("try again", is_error=True, details={"transient": True})
        return "ok"

    marked = CustomTool(name="marked", execute=tool_marks, annotations=IDEMPOTENT)
    assert (
        await CustomToolAdapter(marked, policy=Policy(retry_backoff=0)).execute("1", {})
    ).text == "ok"

    async def times_out(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        calls.append("host")
        if calls.count("host") == 1:
            raise ConnectionResetError("reset by peer")
        return "ok"

    reset = CustomTool(name="reset", execute=times_out, annotations=IDEMPOTENT)
    host = Policy(retry_backoff=0, transient=["ConnectionResetError"])
    assert (await CustomToolAdapter(reset, policy=host).execute("1", {})).text == "ok"
    assert calls == ["tool", "tool", "host", "host"]


async def test_an_abort_stops_retrying_at_once() -> None:
    tool, calls = failing_tool(10, annotations=IDEMPOTENT)
    adapter = CustomToolAdapter(tool, policy=Policy(retries=10, retry_backoff=3600))
    controller = AbortController()
    outcome: list[ToolResult] = []

    async def run() -> None:
        outcome.append(await adapter.execute("1", {}, signal=controller.signal))

    with anyio.fail_after(30):  # a backoff of an hour: only the abort can end the wait
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            while not calls:
                await anyio.sleep(0)
            controller.abort("enough")
    assert len(calls) == 1
    assert outcome[0].is_error
    assert outcome[0].meta["customtools/policy"] == {"retriesStopped": "aborted"}
