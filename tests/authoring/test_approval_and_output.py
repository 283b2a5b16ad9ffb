"""Approval before a tool runs, and output schemas enforced on every result."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from customtools import AbortController, CustomTool, CustomToolAdapter, ToolResult, Type, tool
from customtools._approval import ApprovalRequest

pytestmark = pytest.mark.anyio

ran: list[str] = []


async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    ran.append(params["path"])
    return "deleted"


def make(**options: Any) -> CustomTool:
    return CustomTool(
        name="delete_file",
        description="Delete a file.",
        parameters=Type.Object({"path": Type.String()}),
        execute=execute,
        **options,
    )


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


async def test_an_approved_call_runs_and_the_approver_sees_the_arguments() -> None:
    seen: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> bool:
        seen.append(request)
        return True

    adapter = CustomToolAdapter(make(requires_approval=True), approver=approver)
    result = await adapter.execute("c1", {"path": "a.txt"})
    assert result.text == "deleted"
    assert ran == ["a.txt"]
    assert (seen[0].tool_call_id, dict(seen[0].arguments)) == ("c1", {"path": "a.txt"})


@pytest.mark.parametrize("answer", [False, None, "yes", 1])
async def test_anything_but_true_is_a_denial_the_model_can_read(answer: Any) -> None:
    async def approver(request: ApprovalRequest) -> Any:
        return answer

    result = await CustomToolAdapter(make(requires_approval=True), approver=approver).execute(
        "c", {"path": "a.txt"}
    )
    assert result.is_error
    assert "denied by the user" in result.text
    assert result.details["code"] == "approval-denied"
    assert ran == []


async def test_no_approver_fails_closed() -> None:
    result = await CustomToolAdapter(make(requires_approval=True)).execute("c", {"path": "x"})
    assert result.is_error
    assert result.details["code"] == "no-approver"
    assert ran == []


async def test_no_answer_in_time_is_a_denial() -> None:
    async def slow(request: ApprovalRequest) -> bool:
        await anyio.sleep(30)
        return True

    adapter = CustomToolAdapter(make(requires_approval=True), approver=slow, approval_timeout=0.05)
    with anyio.fail_after(5):
        result = await adapter.execute("c", {"path": "x"})
    assert result.details["code"] == "approval-timeout"
    assert ran == []


async def test_an_abort_while_waiting_cancels_the_call() -> None:
    controller = AbortController()

    async def waits(request: ApprovalRequest) -> bool:
        controller.abort("user pressed stop")
        await anyio.sleep(30)
        return True

    adapter = CustomToolAdapter(make(requires_approval=True), approver=waits)
    with anyio.fail_after(5):
        result = await adapter.execute("c", {"path": "x"}, signal=controller.signal)
    assert result.details["error"] == "ToolAbortedError"
    assert ran == []


async def test_an_approver_that_raises_is_a_refusal() -> None:
    async def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("prompt crashed")

    result = await CustomToolAdapter(make(requires_approval=True), approver=broken).execute(
        "c", {"path": "x"}
    )
    assert result.details["code"] == "approval-error"
    assert "prompt crashed" in result.text
    assert ran == []


async def test_a_rule_of_the_arguments_decides_per_call_and_a_per_call_approver_wins() -> None:
    asked: list[str] = []

    async def adapter_level(request: ApprovalRequest) -> bool:
        asked.append("adapter")
        return False

    async def per_call(request: ApprovalRequest) -> bool:
        asked.append("call")
        return True

    rule = make(requires_approval=lambda args: not args["path"].startswith("tmp/"))
    adapter = CustomToolAdapter(rule, approver=adapter_level)
    assert (await adapter.execute("c", {"path": "tmp/x"})).text == "deleted"
    assert (await adapter.execute("c", {"path": "etc/x"})).is_error
    assert (await adapter.execute("c", {"path": "etc/y"}, approver=per_call)).text == "deleted"
    assert asked == ["adapter", "call"]
    assert ran == ["tmp/x", "etc/y"]


async def test_a_rule_sees_the_defaults_a_function_tool_gets_and_so_does_the_approver() -> None:
    seen: list[ApprovalRequest] = []

    @tool(requires_approval=lambda args: args.get("recursive") is not False)
    def remove(path: str, recursive: bool = True) -> str:
        """Remove a path; a recursive removal (the default) needs approval."""
        ran.append(path)
        return f"removed {path} recursive={recursive}"

    async def deny(request: ApprovalRequest) -> bool:
        seen.append(request)
        return False

    adapter = CustomToolAdapter(remove, approver=deny)
    # Leaving the flag out must not skip the rule: the function runs with its default.
    left_out = await adapter.execute("c1", {"path": "/srv"})
    assert left_out.is_error
    assert left_out.details == {"error": "ApprovalDenied", "code": "approval-denied"}
    assert seen[0].arguments == {"path": "/srv", "recursive": True}
    assert adapter.needs_approval({"path": "/srv"}) is True
    assert adapter.needs_approval({"path": "/srv", "recursive": "false"}) is False
    assert adapter.needs_approval({"path": 3}) is True  # invalid: fails closed
    flat = await adapter.execute("c2", {"path": "/srv", "recursive": False})
    assert flat.text == "removed /srv recursive=False"
    assert ran == ["/srv"]


async def test_mcp_annotations_drive_the_default() -> None:
    destructive = make(annotations={"destructiveHint": True})
    read_only = make(annotations={"destructiveHint": True, "readOnlyHint": True})
    assert (await CustomToolAdapter(destructive).execute("c", {"path": "x"})).is_error
    assert (await CustomToolAdapter(read_only).execute("c", {"path": "x"})).text == "deleted"
    assert (await CustomToolAdapter(make()).execute("c", {"path": "y"})).text == "deleted"


def test_requires_approval_must_be_a_bool_or_a_function() -> None:
    from customtools import ToolDefinitionError

    with pytest.raises(ToolDefinitionError, match="requires_approval must be callable"):
        make(requires_approval="always")


# -- output schemas ---------------------------------------------------------------------------


def structured_tool(returned: Any) -> CustomTool:
    async def run(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        return returned

    return CustomTool(
        name="stats",
        description="Stats.",
        execute=run,
        output_schema=Type.Object({"count": Type.Integer(minimum=0)}),
    )


async def test_matching_structured_content_passes() -> None:
    result = await CustomToolAdapter(
        structured_tool(ToolResult(structured_content={"count": 3}))
    ).execute("c", {})
    assert not result.is_error
    assert result.structured_content == {"count": 3}


async def test_mismatched_structured_content_is_an_error_that_says_so() -> None:
    bad = ToolResult(structured_content={"count": -1, "extra": True})
    result = await CustomToolAdapter(structured_tool(bad)).execute("c", {})
    assert result.is_error
    assert result.details["code"] == "invalid-structured-content"
    assert "/count" in result.text
    assert "does not match its output schema" in result.text


async def test_missing_structured_content_is_an_error() -> None:
    result = await CustomToolAdapter(structured_tool("just text")).execute("c", {})
    assert result.details["code"] == "missing-structured-content"


async def test_a_decorated_tool_whose_result_breaks_its_annotation_is_caught() -> None:
    @tool
    def count() -> int:
        return "many"  # type: ignore[return-value]

    result = await CustomToolAdapter(count).execute("c", {})
    assert result.is_error  # a str passes through as text, so the structured part is missing
    assert result.details["code"] == "missing-structured-content"


async def test_output_is_checked_with_a_timeout_and_on_sync_tools_too() -> None:
    @tool(timeout=5)
    def listing() -> list[str]:
        return [1, 2]  # type: ignore[list-item]

    result = await CustomToolAdapter(listing).execute("c", {})
    assert result.details["code"] == "invalid-structured-content"
    assert "/result/0" in result.text


async def test_an_error_result_keeps_its_text_and_loses_its_unchecked_structured_content() -> None:
    failed = ToolResult.from_text("no stats today", details={"why": "offline"}, is_error=True)
    returned = ToolResult(
        content=failed.content,
        details=failed.details,
        is_error=True,
        structured_content={"count": "many"},
    )
    result = await CustomToolAdapter(structured_tool(returned)).execute("c", {})
    assert result.is_error
    assert result.text == "no stats today"
    assert result.details == {"why": "offline"}
    assert result.structured_content is None


async def test_an_approval_rule_that_exits_is_contained() -> None:
    def rule(args: Any) -> bool:
        raise SystemExit(2)

    async def approver(request: ApprovalRequest) -> bool:
        return True

    result = await CustomToolAdapter(make(requires_approval=rule), approver=approver).execute(
        "c", {"path": "x"}
    )
    assert result.details["code"] == "approval-error"
    assert "SystemExit" in result.text
    assert ran == []
