"""Tool-call spans and metrics follow the GenAI conventions, on asyncio and trio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from customtools import (
    AbortController,
    CustomTool,
    CustomToolAdapter,
    ToolContext,
    ToolResult,
    Type,
    _observe,
)
from customtools.talkback import InputAnswer, InputRequest, SampleRequest, SampleResult
from customtools.telemetry import classify, instrument

from .conftest import Telemetry

pytestmark = pytest.mark.anyio

PARAMS = Type.Object({"name": Type.String(minLength=1)})


async def greet(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    return f"hi {params['name']}"


async def sleepy(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    await anyio.sleep(30)
    return "late"


def sync_greet(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    # A sync tool runs in a worker thread: the call's span is current there too.
    span = trace.get_current_span().get_span_context()
    return f"{span.trace_id:032x}-{span.span_id:016x}"


def adapter(execute: Any, name: str = "greet", **options: Any) -> CustomToolAdapter:
    return CustomToolAdapter(
        CustomTool(name=name, description="d", parameters=PARAMS, execute=execute), **options
    )


async def test_a_valid_call_is_one_execute_tool_span(telemetry: Telemetry) -> None:
    result = await adapter(greet).execute("call-1", {"name": "a"})
    assert not result.is_error
    span = telemetry.span("execute_tool greet")
    assert span.kind is SpanKind.INTERNAL
    assert span.status.status_code is StatusCode.UNSET
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "greet",
        "gen_ai.tool.call.id": "call-1",
        "gen_ai.tool.type": "function",
        "customtools.outcome": "ok",
    }
    # No argument or result attributes: they are opt-in and may be sensitive.
    assert not any("arguments" in key or "result" in key for key in span.attributes or {})


async def test_the_span_is_a_child_of_the_callers_span(telemetry: Telemetry) -> None:
    tracer = telemetry.tracer_provider.get_tracer("host")
    with tracer.start_as_current_span("invoke_agent host") as parent:
        await adapter(greet).execute("call-1", {"name": "a"})
    span = telemetry.span("execute_tool greet")
    assert span.parent is not None
    assert span.parent.span_id == parent.get_span_context().span_id


async def test_an_invalid_call_records_the_violations(telemetry: Telemetry) -> None:
    result = await adapter(greet).execute("call-2", {"name": ""})
    assert result.is_error
    span = telemetry.span("execute_tool greet")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes["error.type"] == "ToolArgumentsError"
    assert span.attributes["customtools.outcome"] == "invalid_arguments"
    [event] = span.events
    assert event.name == "customtools.invalid_arguments"
    assert event.attributes == {"customtools.violations": 1}


async def test_a_timeout_is_error_type_timeout(telemetry: Telemetry) -> None:
    with anyio.fail_after(10):
        result = await adapter(sleepy, name="sleepy").execute("c", {"name": "a"}, timeout=0.05)
    assert result.details is not None
    assert result.details["timed_out"] is True
    span = telemetry.span("execute_tool sleepy")
    assert span.attributes is not None
    assert span.attributes["error.type"] == "timeout"
    assert span.attributes["customtools.outcome"] == "timeout"
    assert span.status.status_code is StatusCode.ERROR
    assert [e.name for e in span.events] == ["customtools.cancelled"]


async def abort_call(reason: str) -> Any:
    controller = AbortController()

    async def abort_soon() -> None:
        await anyio.sleep(0.05)
        controller.abort(reason)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(abort_soon)
            return await adapter(sleepy, name="sleepy").execute(
                "c", {"name": "a"}, signal=controller.signal
            )


async def test_an_abort_is_error_type_cancelled_without_its_reason(telemetry: Telemetry) -> None:
    result = await abort_call("user pressed stop; token=SECRET")
    assert result.details is not None
    assert result.details["cancelled"] is True
    span = telemetry.span("execute_tool sleepy")
    assert span.attributes is not None
    assert span.attributes["error.type"] == "cancelled"
    [event] = span.events
    assert event.name == "customtools.cancelled"
    # The reason is the host's text: recorded only when the application opts in.
    assert dict(event.attributes or {}) == {}


async def test_the_cancel_reason_is_recorded_when_opted_in(telemetry: Telemetry) -> None:
    previous = _observe.current_observer()
    instrument(tracer_provider=telemetry.tracer_provider, record_cancel_reason=True)
    try:
        await abort_call("user pressed stop")
    finally:
        _observe.set_observer(previous)
    [event] = telemetry.span("execute_tool sleepy").events
    assert event.attributes == {"customtools.cancel.reason": "user pressed stop"}


async def test_a_tool_that_raises_is_error_type_other(telemetry: Telemetry) -> None:
    class SecretError(KeyError):
        pass

    async def broken(*args: Any) -> str:
        raise SecretError("missing")

    result = await adapter(broken, name="broken").execute("c", {"name": "a"})
    assert result.is_error
    span = telemetry.span("execute_tool broken")
    assert span.attributes is not None
    # The class is the tool's (its name may say anything): not in the error-results table.
    assert span.attributes["error.type"] == "_OTHER"
    assert span.attributes["customtools.outcome"] == "error"
    assert span.status.description == "_OTHER"


async def test_tool_controlled_details_never_reach_spans_or_metrics(
    telemetry: Telemetry,
) -> None:
    async def leaky(*args: Any) -> Any:
        return ToolResult.from_text(
            "no", details={"error": "Leak-SECRET", "code": "code-SECRET"}, is_error=True
        )

    async def refused(*args: Any) -> Any:
        return ToolResult.from_text(
            "no", details={"error": "ApprovalDenied", "code": ["SECRET"]}, is_error=True
        )

    await adapter(leaky, name="leaky").execute("c", {"name": "a"})
    await adapter(refused, name="refused").execute("c", {"name": "a"})
    leaked = telemetry.span("execute_tool leaky")
    assert (leaked.attributes or {})["error.type"] == "_OTHER"
    assert (telemetry.span("execute_tool refused").attributes or {})["error.type"] == (
        "ApprovalDenied"
    )
    recorded = repr(
        [
            (s.attributes, s.status.description, [e.attributes for e in s.events])
            for s in telemetry.spans()
        ]
    ) + repr([p.attributes for p in telemetry.points("customtools.tool.calls")])
    assert "SECRET" not in recorded


async def test_the_callers_cancellation_ends_the_span(telemetry: Telemetry) -> None:
    with anyio.move_on_after(0.05):
        await adapter(sleepy, name="sleepy").execute("c", {"name": "a"})
    span = telemetry.span("execute_tool sleepy")
    assert span.attributes is not None
    assert span.attributes["customtools.outcome"] == "cancelled"
    assert span.status.status_code is StatusCode.ERROR
    # The context was detached: nothing of the call is current afterwards.
    assert not trace.get_current_span().get_span_context().is_valid


async def test_a_sync_tool_sees_the_call_span_in_its_thread(telemetry: Telemetry) -> None:
    result = await adapter(sync_greet, name="sync").execute("c", {"name": "a"})
    span = telemetry.span("execute_tool sync")
    context = span.get_span_context()
    assert result.content[0].text == f"{context.trace_id:032x}-{context.span_id:016x}"  # type: ignore[union-attr]


async def test_an_approval_wait_is_a_child_span(telemetry: Telemetry) -> None:
    async def approver(request: Any) -> bool:
        await anyio.sleep(0)
        return False

    tool = CustomTool(
        name="rm", description="d", parameters=PARAMS, execute=greet, requires_approval=True
    )
    result = await CustomToolAdapter(tool, approver=approver).execute("c", {"name": "a"})
    assert result.details is not None
    assert result.details["code"] == "approval-denied"
    call = telemetry.span("execute_tool rm")
    wait = telemetry.span("customtools.wait approval")
    assert wait.parent is not None
    assert wait.parent.span_id == call.context.span_id
    assert call.attributes is not None
    assert call.attributes["error.type"] == "approval-denied"
    assert call.attributes["customtools.outcome"] == "refused"


async def test_talk_back_waits_are_child_spans(telemetry: Telemetry) -> None:
    async def handler(request: InputRequest) -> InputAnswer:
        await anyio.sleep(0)
        return InputAnswer(action="accept", values={"ok": True})

    async def sampler(request: SampleRequest) -> SampleResult:
        await anyio.sleep(0)
        return SampleResult(text="a summary")

    async def talk(tool_call_id: Any, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        answer = await ctx.ask("Go on?", Type.Object({"ok": Type.Boolean()}))
        summary = await ctx.sample("Summarise", max_tokens=10)
        return f"{answer.action} {summary.text}"

    tool = CustomTool(name="talk", description="d", parameters=Type.Object({}), execute=talk)
    context = ToolContext(input_handler=handler, sampler=sampler)
    result = await CustomToolAdapter(tool).execute("c", {}, ctx=context)
    assert result.text == "accept a summary"
    call = telemetry.span("execute_tool talk")
    for what in ("input", "sampling"):
        wait = telemetry.span(f"customtools.wait {what}")
        assert wait.parent is not None
        assert wait.parent.span_id == call.context.span_id


async def test_metrics_count_calls_and_durations_by_outcome(telemetry: Telemetry) -> None:
    tool = adapter(greet)
    await tool.execute("1", {"name": "a"})
    await tool.execute("2", {"name": "b"})
    await tool.execute("3", {"name": ""})
    counts = {
        (p.attributes["customtools.outcome"], p.attributes.get("error.type")): p.value
        for p in telemetry.points("customtools.tool.calls")
    }
    assert counts == {("ok", None): 2, ("invalid_arguments", "ToolArgumentsError"): 1}
    durations = telemetry.points("customtools.tool.call.duration")
    assert sum(p.count for p in durations) == 3
    assert all(p.attributes["gen_ai.tool.name"] == "greet" for p in durations)
    assert all(p.min >= 0 for p in durations)


async def test_an_enclosing_execute_tool_span_is_enriched_not_nested(
    telemetry: Telemetry,
) -> None:
    tracer = telemetry.tracer_provider.get_tracer("framework")
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "greet"}
    with tracer.start_as_current_span("execute_tool greet", attributes=attributes):
        await adapter(greet).execute("call-9", {"name": ""})
    [span] = telemetry.spans()
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "framework"
    assert span.attributes is not None
    assert span.attributes["gen_ai.tool.call.id"] == "call-9"
    assert span.attributes["customtools.enriched"] is True
    assert span.attributes["error.type"] == "ToolArgumentsError"


async def test_a_tool_calling_a_tool_nests_its_own_span(telemetry: Telemetry) -> None:
    inner = adapter(greet)

    async def outer(call_id: str, params: Any, *rest: Any) -> Any:
        return await inner.execute("inner", params)

    await adapter(outer, name="outer").execute("outer", {"name": "a"})
    inner_span = telemetry.span("execute_tool greet")
    outer_span = telemetry.span("execute_tool outer")
    assert inner_span.parent is not None
    assert inner_span.parent.span_id == outer_span.context.span_id


async def test_enrich_false_always_opens_a_span(telemetry: Telemetry) -> None:
    from customtools.telemetry import instrument

    instrument(tracer_provider=telemetry.tracer_provider, enrich=False)
    tracer = telemetry.tracer_provider.get_tracer("framework")
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "greet"}
    with tracer.start_as_current_span("execute_tool greet", attributes=attributes):
        await adapter(greet).execute("call-9", {"name": "a"})
    assert sorted(s.instrumentation_scope.name for s in telemetry.spans()) == [  # type: ignore[union-attr]
        "customtools",
        "framework",
    ]


async def test_an_observer_that_fails_never_breaks_a_call(telemetry: Telemetry) -> None:
    tool = adapter(greet)

    class Broken:
        def start(self, tool_call_id: str) -> Any:
            raise RuntimeError("observer bug")

    tool._watcher = Broken()  # type: ignore[attr-defined]
    result = await tool.execute("c", {"name": "a"})
    assert result.content[0].text == "hi a"  # type: ignore[union-attr]


def test_adapters_are_plain_without_an_observer() -> None:
    tool = CustomTool(name="greet", description="d", parameters=PARAMS, execute=greet)
    assert type(CustomToolAdapter(tool)) is CustomToolAdapter


def test_adapters_are_plain_when_no_provider_is_set() -> None:
    # The API without an SDK: nothing would be recorded, so calls are not observed at all.
    from customtools import _observe
    from customtools.telemetry import OpenTelemetryObserver

    observer = OpenTelemetryObserver()
    previous = _observe.set_observer(observer)
    try:
        if observer.enabled():  # pragma: no cover - a global provider was set by another test
            pytest.skip("a global tracer provider is set in this process")
        tool = CustomTool(name="greet", description="d", parameters=PARAMS, execute=greet)
        assert type(CustomToolAdapter(tool)) is CustomToolAdapter
    finally:
        _observe.set_observer(previous)


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        (
            {"error": "ToolTimeoutError", "cancelled": True, "timed_out": True},
            ("timeout", "timeout"),
        ),
        ({"error": "ToolAbortedError", "cancelled": True}, ("cancelled", "cancelled")),
        ({"error": "ThreadLimit", "code": "thread-limit"}, ("error", "thread-limit")),
        ({"error": "WorkerLost"}, ("error", "WorkerLost")),
        ({"error": "McpServerError", "code": "refused"}, ("error", "refused")),
        ({"error": "ApprovalDenied", "code": "no-approver"}, ("refused", "no-approver")),
        ({"error": "ApprovalDenied", "code": "mine"}, ("refused", "ApprovalDenied")),
        ({"error": "KeyError"}, ("error", "_OTHER")),
        ({"error": "Leak-SECRET", "code": "code-SECRET"}, ("error", "_OTHER")),
        ({"error": {"not": "text"}, "code": ["x"]}, ("error", "_OTHER")),
        (None, ("error", "_OTHER")),
    ],
)
def test_classify_maps_error_results_to_low_cardinality_types(
    details: Any, expected: tuple[str, str]
) -> None:
    from customtools import ToolResult

    assert classify(ToolResult(content=(), details=details, is_error=True), None) == expected


async def test_telemetry_records_queue_time_cache_hits_retries_and_trims(
    tmp_path: Path, telemetry: Any
) -> None:
    from customtools import ToolContext, ToolRegistry, load_custom_tools
    from customtools.policy import Policy
    from tests.policy.test_modes import PACK

    (tmp_path / "governed.py").write_text(PACK)
    loaded = await load_custom_tools([str(tmp_path / "governed.py")], cwd=str(tmp_path))
    registry = ToolRegistry(loaded, policy=Policy(), context=ToolContext(caller="alice"))
    await registry.call("big", "b", {})
    await registry.call("lookup", "l1", {"q": "x"})
    await registry.call("lookup", "l2", {"q": "x"})
    big = telemetry.span("execute_tool big")
    assert big.attributes["customtools.policy.trimmed_bytes"] > 4000
    cached = list(telemetry.spans("execute_tool lookup"))
    assert [s.attributes["customtools.policy.cache"] for s in cached] == ["stored", "hit"]
    decisions = {
        point.attributes["customtools.policy.decision"]: point.value
        for point in telemetry.points("customtools.policy.decisions")
    }
    assert decisions == {"trimmed": 1, "cache_hit": 1}
