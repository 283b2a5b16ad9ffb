"""The execution adapter: argument order, results, failures, cancellation, timeouts, updates."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import anyio
import pytest
from anchor import INVALID, SCHEMA, VALID

from customtools._abort import AbortController, AbortSignal
from customtools._adapter import COERCIONS_META_KEY, VIOLATIONS_META_KEY, CustomToolAdapter
from customtools._content import ImageContent, TextContent, ToolResult
from customtools._context import DEFAULT_CONTEXT, ToolContext
from customtools._errors import ToolTimeoutError
from customtools._tool import CustomTool

pytestmark = pytest.mark.anyio


def make_tool(execute: Any, **options: Any) -> CustomTool:
    options.setdefault("parameters", {"type": "object", "properties": {"x": {"type": "integer"}}})
    return CustomTool(name="probe", description="test tool", execute=execute, **options)


async def test_execute_receives_arguments_in_documented_order() -> None:
    seen: list[Any] = []

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        seen.extend([tool_call_id, params, on_update, ctx, signal])
        return "ok"

    ctx = ToolContext(model="m1")
    controller = AbortController()
    updates: list[ToolResult] = []
    result = await CustomToolAdapter(make_tool(execute)).execute(
        "call-1", {"x": 1}, signal=controller.signal, on_update=updates.append, ctx=ctx
    )
    assert result.text == "ok"
    assert seen[0] == "call-1"
    assert seen[1] == {"x": 1}
    assert callable(seen[2])
    assert seen[3] is ctx
    # The tool's signal relays the host's (and also fires on the deadline and the caller's
    # cancellation: docs/cancellation.md).
    assert isinstance(seen[4], AbortSignal)
    assert not seen[4].aborted


async def test_tool_without_parameters_accepts_empty_arguments_only() -> None:
    async def execute(*_: Any) -> str:
        return "no params needed"

    adapter = CustomToolAdapter(CustomTool(name="bare", execute=execute))
    assert (await adapter.execute("c", {})).text == "no params needed"
    extra = await adapter.execute("c", {"surprise": 1})
    assert extra.is_error
    assert "surprise" in extra.text


async def test_sync_execute_runs_in_a_worker_thread() -> None:
    threads: list[int] = []

    def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        threads.append(threading.get_ident())
        return f"sync {params['x']}"

    result = await CustomToolAdapter(make_tool(execute)).execute("c", {"x": 2})
    assert result.text == "sync 2"
    assert threads
    assert threads[0] != threading.get_ident()


async def test_defaults_when_host_passes_no_signal_or_context() -> None:
    got: dict[str, Any] = {}

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        got.update(ctx=ctx, signal=signal)
        on_update("ignored: no host callback")
        return "ok"

    await CustomToolAdapter(make_tool(execute)).execute("c", {})
    assert got["ctx"] is DEFAULT_CONTEXT
    assert isinstance(got["signal"], AbortSignal)
    assert not got["signal"].aborted


@pytest.mark.parametrize(
    ("returned", "expected_text", "expected_details"),
    [
        ("plain", "plain", None),
        (ToolResult.from_text("direct", details={"n": 1}), "direct", {"n": 1}),
        (
            {"content": [{"type": "text", "text": "mapped"}], "details": {"k": 2}},
            "mapped",
            {"k": 2},
        ),
        ({"details": {"only": True}}, "", {"only": True}),
        ({"content": ["bare string block"]}, "bare string block", None),
    ],
)
async def test_result_shapes_are_normalized(
    returned: Any, expected_text: str, expected_details: Any
) -> None:
    async def execute(*_: Any) -> Any:
        return returned

    result = await CustomToolAdapter(make_tool(execute)).execute("c", {})
    assert not result.is_error
    assert result.text == expected_text
    assert result.details == expected_details


async def test_image_content_passes_through() -> None:
    async def execute(*_: Any) -> Any:
        return {"content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]}

    result = await CustomToolAdapter(make_tool(execute)).execute("c", {})
    assert result.content == (ImageContent(data="aGk=", mime_type="image/png"),)


@pytest.mark.parametrize(
    ("returned", "named"),
    [(42, "int"), (None, "NoneType"), (object(), "object"), (["x"], "list"), ({"n": 1}, "mapping")],
)
async def test_unusable_return_value_is_an_error_naming_tool_and_type(
    returned: Any, named: str
) -> None:
    async def execute(*_: Any) -> Any:
        return returned

    result = await CustomToolAdapter(make_tool(execute)).execute("c", {})
    assert result.is_error
    assert "'probe'" in result.text
    assert f"returned {named}" in result.text or f"returned a {named}" in result.text


async def test_exception_becomes_error_result_with_type_and_message() -> None:
    async def execute(*_: Any) -> Any:
        raise ValueError("disk is full")

    result = await CustomToolAdapter(make_tool(execute)).execute("c", {})
    assert result.is_error
    assert result.text == "ValueError: disk is full"
    assert result.details == {"error": "ValueError", "message": "disk is full"}


async def test_sync_exception_becomes_error_result() -> None:
    def execute(*_: Any) -> Any:
        raise KeyError("missing")

    result = await CustomToolAdapter(make_tool(execute)).execute("c", {})
    assert result.is_error
    assert result.details["error"] == "KeyError"


async def test_invalid_arguments_report_every_violation_without_calling_the_tool() -> None:
    calls: list[Any] = []

    async def execute(*args: Any) -> str:
        calls.append(args)
        return "should not run"

    tool = make_tool(execute, parameters=SCHEMA)
    result = await CustomToolAdapter(tool).execute("c", INVALID)
    assert result.is_error
    assert not calls
    paths = sorted(v["path"] for v in result.details["violations"])
    assert paths == ["", "/limit", "/mode", "/path"]
    assert "/limit: 0 is less than the minimum of 1" in result.text
    assert "extra" in result.text


async def test_coercions_are_applied_and_recorded_in_meta() -> None:
    seen: list[Any] = []

    async def execute(tool_call_id: str, params: Any, *_: Any) -> str:
        seen.append(params)
        return "ok"

    tool = make_tool(execute, parameters=SCHEMA)
    original = {"path": "a.py", "limit": "10", "tags": '["x", "y"]', "mode": "read"}
    result = await CustomToolAdapter(tool).execute("c", original)
    assert not result.is_error, result.text
    assert seen == [{"path": "a.py", "limit": 10, "tags": ["x", "y"], "mode": "read"}]
    assert original["limit"] == "10"  # the caller's object is untouched
    kinds = {c["path"]: c["kind"] for c in result.meta[COERCIONS_META_KEY]}
    assert kinds == {"/limit": "numeric_string", "/tags": "json_string"}


async def test_coercion_can_be_switched_off_per_adapter_and_per_tool() -> None:
    async def execute(*_: Any) -> str:
        return "ok"

    params = {"path": "a.py", "limit": "10", "mode": "read"}
    off_adapter = CustomToolAdapter(make_tool(execute, parameters=SCHEMA), coerce_args=False)
    assert (await off_adapter.execute("c", params)).is_error
    off_tool = CustomToolAdapter(make_tool(execute, parameters=SCHEMA, coerce_args=False))
    assert (await off_tool.execute("c", params)).is_error
    on_tool = CustomToolAdapter(
        make_tool(execute, parameters=SCHEMA, coerce_args=True), coerce_args=False
    )
    assert not (await on_tool.execute("c", params)).is_error


async def test_true_is_never_coerced_to_an_integer() -> None:
    async def execute(*_: Any) -> str:
        return "ok"

    adapter = CustomToolAdapter(make_tool(execute, parameters=SCHEMA))
    result = await adapter.execute("c", {"path": "a", "limit": True, "mode": "read"})
    assert result.is_error
    result = await adapter.execute("c", {"path": "a", "limit": "60.5", "mode": "read"})
    assert result.is_error


async def test_schema_defaults_are_applied_to_missing_optional_properties() -> None:
    seen: list[Any] = []

    async def execute(tool_call_id: str, params: Any, *_: Any) -> str:
        seen.append(params)
        return "ok"

    schema = {
        "type": "object",
        "properties": {"glob": {"type": "string", "default": "**/*.py"}, "n": {"type": "integer"}},
        "required": ["n"],
    }
    await CustomToolAdapter(make_tool(execute, parameters=schema)).execute("c", {"n": 1})
    await CustomToolAdapter(make_tool(execute, parameters=schema), apply_defaults=False).execute(
        "c", {"n": 1}
    )
    assert seen == [{"n": 1, "glob": "**/*.py"}, {"n": 1}]


async def test_lenient_tool_runs_with_invalid_arguments_and_records_violations() -> None:
    seen: list[Any] = []

    async def execute(tool_call_id: str, params: Any, *_: Any) -> str:
        seen.append(params)
        return "ran"

    tool = make_tool(execute, parameters=SCHEMA, lenient_args=True)
    result = await CustomToolAdapter(tool).execute("c", INVALID)
    assert result.text == "ran"
    assert seen == [INVALID]
    assert len(result.meta[VIOLATIONS_META_KEY]) == 4


async def test_abort_before_start_never_calls_the_tool() -> None:
    calls: list[Any] = []

    async def execute(*args: Any) -> str:
        calls.append(args)
        return "ran"

    controller = AbortController()
    controller.abort("user pressed stop")
    result = await CustomToolAdapter(make_tool(execute)).execute("c", {}, signal=controller.signal)
    assert result.is_error
    assert not calls
    assert result.text == "tool 'probe' was cancelled: user pressed stop"
    assert result.details["cancelled"] is True
    assert result.details["reason"] == "user pressed stop"


async def test_abort_during_an_await_cancels_promptly() -> None:
    started = anyio.Event()
    finished: list[bool] = []

    async def execute(*_: Any) -> str:
        started.set()
        await anyio.sleep(30)
        finished.append(True)
        return "too late"

    controller = AbortController()
    adapter = CustomToolAdapter(make_tool(execute))
    results: list[ToolResult] = []

    async def run() -> None:
        results.append(await adapter.execute("c", {}, signal=controller.signal))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await started.wait()
            controller.abort("stop")
    assert not finished
    assert results[0].is_error
    assert results[0].details["reason"] == "stop"


async def test_abort_during_a_sync_tool_returns_at_once_and_the_tool_sees_the_signal() -> None:
    entered = threading.Event()
    saw_abort = threading.Event()

    def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        entered.set()
        deadline = time.monotonic() + 10
        while not signal.aborted and time.monotonic() < deadline:
            time.sleep(0.005)
        if signal.aborted:
            saw_abort.set()
        return "late result"

    controller = AbortController()
    adapter = CustomToolAdapter(make_tool(execute))
    results: list[ToolResult] = []

    async def run() -> None:
        results.append(await adapter.execute("c", {}, signal=controller.signal))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await anyio.to_thread.run_sync(entered.wait)
            controller.abort("stop sync")
    assert results[0].is_error
    assert results[0].details["cancelled"] is True
    assert await anyio.to_thread.run_sync(saw_abort.wait, 5)


async def test_timeout_cancels_with_a_timeout_reason() -> None:
    seen_signal: list[AbortSignal] = []

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        seen_signal.append(signal)
        await anyio.sleep(30)
        return "never"

    with anyio.fail_after(5):
        result = await CustomToolAdapter(make_tool(execute, timeout=0.05)).execute("c", {})
    assert result.is_error
    assert result.details["timed_out"] is True
    assert "timed out after 0.05 s" in result.text
    assert seen_signal[0].aborted
    assert isinstance(seen_signal[0].reason, ToolTimeoutError)
    assert isinstance(seen_signal[0].reason, TimeoutError)


async def test_smallest_of_call_adapter_and_tool_timeout_applies() -> None:
    async def execute(*_: Any) -> str:
        await anyio.sleep(30)
        return "never"

    adapter = CustomToolAdapter(make_tool(execute, timeout=60), timeout=30)
    with anyio.fail_after(5):
        result = await adapter.execute("c", {}, timeout=0.02)
    assert "0.02 s" in result.text


async def test_timeout_surfaces_as_timeout_error_inside_the_tool() -> None:
    raised: list[BaseException] = []

    def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                signal.raise_if_aborted()
            except TimeoutError as exc:
                raised.append(exc)
                raise
            time.sleep(0.005)
        return "never"

    with anyio.fail_after(5):
        result = await CustomToolAdapter(make_tool(execute), timeout=0.05).execute("c", {})
    assert result.details["timed_out"] is True
    for _ in range(200):
        if raised:
            break
        await anyio.sleep(0.01)
    assert raised
    assert isinstance(raised[0], ToolTimeoutError)


async def test_late_result_of_a_tool_that_swallows_cancellation_is_discarded() -> None:
    async def execute(*_: Any) -> str:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.1)
        return "late result"

    controller = AbortController()
    adapter = CustomToolAdapter(make_tool(execute))
    results: list[ToolResult] = []

    async def run() -> None:
        results.append(await adapter.execute("c", {}, signal=controller.signal))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await anyio.sleep(0.01)
        controller.abort("stop")
    assert results[0].is_error
    assert "late result" not in results[0].text


async def test_callers_own_cancellation_propagates() -> None:
    async def execute(*_: Any) -> str:
        await anyio.sleep(30)
        return "never"

    adapter = CustomToolAdapter(make_tool(execute))
    reached_after: list[bool] = []
    with anyio.move_on_after(0.05) as scope:
        await adapter.execute("c", {})
        reached_after.append(True)
    assert scope.cancelled_caught
    assert not reached_after


async def test_updates_reach_the_host_in_order_as_tool_results() -> None:
    async def execute(tool_call_id: str, params: Any, on_update: Any, *_: Any) -> str:
        for i in range(50):
            on_update({"content": [{"type": "text", "text": f"step {i}"}], "details": {"i": i}})
        on_update("plain text update")
        return "done"

    updates: list[ToolResult] = []
    await CustomToolAdapter(make_tool(execute)).execute("c", {}, on_update=updates.append)
    assert [u.details["i"] for u in updates[:-1]] == list(range(50))
    assert all(isinstance(u, ToolResult) for u in updates)
    assert updates[-1].text == "plain text update"


async def test_sync_tool_updates_run_on_the_event_loop_thread_in_order() -> None:
    def execute(tool_call_id: str, params: Any, on_update: Any, *_: Any) -> str:
        for i in range(20):
            on_update(ToolResult(details=i))
        return "done"

    loop_thread = threading.get_ident()
    seen: list[tuple[int, Any]] = []
    await CustomToolAdapter(make_tool(execute)).execute(
        "c", {}, on_update=lambda u: seen.append((threading.get_ident(), u.details))
    )
    assert [d for _, d in seen] == list(range(20))
    assert {t for t, _ in seen} == {loop_thread}


async def test_raising_update_callback_never_kills_the_call_and_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def execute(tool_call_id: str, params: Any, on_update: Any, *_: Any) -> str:
        for i in range(5):
            on_update(ToolResult(details=i))
        return "finished"

    def broken(update: ToolResult) -> None:
        raise RuntimeError("host UI crashed")

    with caplog.at_level(logging.ERROR, logger="customtools.adapter"):
        result = await CustomToolAdapter(make_tool(execute)).execute("c", {}, on_update=broken)
    assert result.text == "finished"
    records = [r for r in caplog.records if "on_update" in r.getMessage()]
    assert len(records) == 1


async def test_invalid_update_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    async def execute(tool_call_id: str, params: Any, on_update: Any, *_: Any) -> str:
        on_update(12345)
        on_update("fine")
        return "done"

    updates: list[ToolResult] = []
    with caplog.at_level(logging.WARNING, logger="customtools.adapter"):
        await CustomToolAdapter(make_tool(execute)).execute("c", {}, on_update=updates.append)
    assert [u.text for u in updates] == ["fine"]
    assert "int" in caplog.text


async def test_updates_after_the_call_ended_are_dropped() -> None:
    leaked: list[Any] = []

    async def execute(tool_call_id: str, params: Any, on_update: Any, *_: Any) -> str:
        leaked.append(on_update)
        return "done"

    updates: list[ToolResult] = []
    await CustomToolAdapter(make_tool(execute)).execute("c", {}, on_update=updates.append)
    leaked[0]("after the end")
    assert updates == []


async def test_coalescing_mode_delivers_first_and_newest_of_a_burst() -> None:
    async def execute(tool_call_id: str, params: Any, on_update: Any, *_: Any) -> str:
        for i in range(1000):
            on_update(ToolResult(details=i))
        return "done"

    updates: list[ToolResult] = []
    adapter = CustomToolAdapter(make_tool(execute), update_interval=60)
    await adapter.execute("c", {}, on_update=updates.append)
    assert [u.details for u in updates] == [0, 999]


async def test_ctx_abort_reaches_the_host_callback() -> None:
    requests: list[Any] = []

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        ctx.abort("tool wants out")
        return "asked"

    ctx = ToolContext(on_abort=requests.append)
    await CustomToolAdapter(make_tool(execute)).execute("c", {}, ctx=ctx)
    assert requests == ["tool wants out"]


async def test_adapter_context_is_used_when_call_has_none() -> None:
    seen: list[Any] = []

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        seen.append(ctx.model)
        return "ok"

    adapter = CustomToolAdapter(make_tool(execute), context=ToolContext(model="host-model"))
    await adapter.execute("c", {})
    await adapter.execute("c", {}, ctx=ToolContext(model="call-model"))
    assert seen == ["host-model", "call-model"]


async def test_validator_is_compiled_once_and_cached() -> None:
    async def execute(*_: Any) -> str:
        return "ok"

    adapter = CustomToolAdapter(make_tool(execute, parameters=SCHEMA))
    await adapter.execute("c", VALID)
    first = adapter._validator
    await adapter.execute("c", VALID)
    assert first is not None
    assert adapter._validator is first


async def test_async_callable_object_runs_inline() -> None:
    class Tool:
        async def __call__(self, *_: Any) -> str:
            return str(threading.get_ident())

    result = await CustomToolAdapter(make_tool(Tool())).execute("c", {})
    assert result.text == str(threading.get_ident())


def test_adapter_rejects_a_non_tool() -> None:
    with pytest.raises(TypeError, match="needs a CustomTool"):
        CustomToolAdapter({"name": "x"})  # type: ignore[arg-type]


def test_text_content_equality_for_normalized_str() -> None:
    from customtools._content import normalize_result

    assert normalize_result("hi", tool_name="t") == ToolResult(content=(TextContent(text="hi"),))


@pytest.mark.parametrize("policy", ["none", "caps", "cache"])
async def test_the_options_of_execute_are_keyword_only(policy: str) -> None:
    """execute's options follow a positional marker, not ``*`` (a call pays less): a third
    positional argument still raises, and the signature ``inspect`` shows is keyword-only."""
    import inspect

    from customtools.policy import Policy

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        return "ok"

    policies = {"none": None, "caps": Policy(max_concurrent=2), "cache": Policy()}
    annotations = {"readOnlyHint": True, "idempotentHint": True} if policy == "cache" else None
    adapter = CustomToolAdapter(
        make_tool(execute, annotations=annotations),
        policy=policies[policy],
        context=ToolContext(caller="al"),
    )
    for _ in range(2):  # the second is the cache's hit
        assert (await adapter.execute("c", {"x": 1}, ctx=None, signal=None)).text == "ok"
        with pytest.raises(TypeError, match=r"takes two positional arguments.*not None"):
            await adapter.execute("c", {"x": 1}, None)
        with pytest.raises(TypeError, match="unexpected keyword argument 'sigal'"):
            await adapter.execute("c", {"x": 1}, sigal=None)
    signature = inspect.signature(adapter.execute)
    assert list(signature.parameters)[:2] == ["tool_call_id", "params"]
    assert "_keywords" not in signature.parameters
    kinds = {p.name: p.kind for p in list(signature.parameters.values())[2:]}
    assert set(kinds) == {"signal", "on_update", "ctx", "timeout", "approver", "grace"}
    assert set(kinds.values()) == {inspect.Parameter.KEYWORD_ONLY}


async def test_a_subclass_of_the_adapter_gets_the_policy_and_the_observer() -> None:
    """A host's subclass with a policy ran every call, uncached and uncapped: the policy was
    set on the adapter and silently ignored. It now sits above the governed adapter."""
    from customtools import _observe
    from customtools.policy import Policy

    calls: list[Any] = []

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        calls.append(params)
        return "ok"

    class Audited(CustomToolAdapter):
        seen: list[str] = []

        async def execute(self, tool_call_id: str, params: Any, **options: Any) -> ToolResult:
            self.seen.append(tool_call_id)
            return await super().execute(tool_call_id, params, **options)

    tool = make_tool(execute, annotations={"readOnlyHint": True, "idempotentHint": True})
    adapter = Audited(tool, policy=Policy(), context=ToolContext(caller="al"))
    assert isinstance(adapter, Audited)
    first = await adapter.execute("1", {"x": 1})
    again = await adapter.execute("2", {"x": 1})
    assert len(calls) == 1
    assert Audited.seen == ["1", "2"]
    assert (first.meta or {})["customtools/policy"] == {"cache": "stored"}
    assert (again.meta or {})["customtools/policy"] == {"cache": "hit"}

    class Watcher:
        started: list[str] = []

        def tool_observer(self, tool: CustomTool) -> Any:
            return self

        def start(self, tool_call_id: str) -> Any:
            self.started.append(tool_call_id)
            raise RuntimeError("enough")  # an observer never breaks a call

    class Slotted(CustomToolAdapter):
        __slots__ = ("note",)  # a layout of its own: the observed adapter adds none

    previous = _observe.set_observer(Watcher())  # type: ignore[arg-type]
    try:
        watched = Audited(tool, policy=Policy(), context=ToolContext(caller="bo"))
        assert (await watched.execute("3", {"x": 1})).text == "ok"
        for policy in (None, Policy()):
            slotted = Slotted(tool, policy=policy)
            slotted.note = "kept"
            assert (await slotted.execute("4", {"x": 1})).text == "ok"
    finally:
        _observe.set_observer(previous)
    assert Watcher.started == ["3", "4", "4"]
    assert isinstance(watched, Audited)
    assert Audited.seen == ["1", "2", "3"]
    assert len(calls) == 4  # another caller, then no caller: no hit
