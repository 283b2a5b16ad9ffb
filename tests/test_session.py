"""Session events: the value type, its wire form, and the on_session fan-out."""

from __future__ import annotations

import importlib.util
import logging
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from customtools._content import ToolResult
from customtools._context import DEFAULT_CONTEXT, ToolContext
from customtools._errors import ContentError
from customtools._render import PLAIN_THEME, RenderOptions, render_result
from customtools._session import (
    REASON_FIELDS,
    HookFailure,
    SessionEvent,
    SessionReason,
    dispatch_session_event,
)
from customtools._tool import CustomTool

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "session_counter.py"


def _noop(*_: Any) -> None:
    return None


def _tool(name: str, **hooks: Any) -> CustomTool:
    return CustomTool(name=name, execute=_noop, **hooks)


# One valid event per standard reason, with every field it may carry.
VALID: dict[str, dict[str, Any]] = {
    "start": {},
    "switch": {"previous_session_file": "/s/old.jsonl"},
    "branch": {"previous_session_file": "/s/old.jsonl"},
    "tree": {},
    "shutdown": {},
    "auto_compaction_start": {"trigger": "threshold", "action": "context-full"},
    "auto_compaction_end": {
        "action": "handoff",
        "result": {"summary": "s", "tokensBefore": 10},
        "aborted": False,
        "will_retry": True,
        "error_message": "too big",
    },
    "auto_retry_start": {
        "attempt": 2,
        "max_attempts": 5,
        "delay_ms": 1500,
        "error_message": "overloaded",
    },
    "auto_retry_end": {"success": False, "attempt": 5, "final_error": "gave up"},
    "ttsr_triggered": {"rules": ({"name": "no-todo"},)},
    "todo_reminder": {
        "todos": ({"content": "write docs", "status": "pending"},),
        "attempt": 1,
        "max_attempts": "unlimited",
    },
}


# ---------------------------------------------------------------- the value type


def test_every_standard_reason_has_a_valid_example() -> None:
    assert set(VALID) == set(SessionReason.ALL) == set(REASON_FIELDS)


@pytest.mark.parametrize("reason", SessionReason.ALL)
def test_each_reason_constructs_and_round_trips(reason: str) -> None:
    event = SessionEvent(reason=reason, meta={"trace": "t1"}, **VALID[reason])
    wire = event.to_dict()
    assert wire["reason"] == reason
    assert wire["_meta"] == {"trace": "t1"}
    assert SessionEvent.from_dict(wire) == event
    assert event.is_standard


@pytest.mark.parametrize("reason", SessionReason.ALL)
def test_each_reason_builds_with_required_fields_only(reason: str) -> None:
    required = REASON_FIELDS[reason][0]
    event = SessionEvent(reason=reason, **{k: VALID[reason][k] for k in required})
    assert SessionEvent.from_dict(event.to_dict()) == event


def test_wire_keys_are_camel_case() -> None:
    event = SessionEvent(reason="auto_retry_start", **VALID["auto_retry_start"])
    assert event.to_dict() == {
        "reason": "auto_retry_start",
        "attempt": 2,
        "maxAttempts": 5,
        "delayMs": 1500,
        "errorMessage": "overloaded",
    }
    switch = SessionEvent(reason="switch", previous_session_file="/a")
    assert switch.to_dict() == {"reason": "switch", "previousSessionFile": "/a"}
    end = SessionEvent(reason="auto_compaction_end", **VALID["auto_compaction_end"])
    assert {"willRetry", "errorMessage", "aborted", "result"} <= set(end.to_dict())


def test_unset_optional_fields_are_left_off_the_wire() -> None:
    assert SessionEvent(reason="start").to_dict() == {"reason": "start"}
    assert (
        "finalError" not in SessionEvent(reason="auto_retry_end", success=True, attempt=1).to_dict()
    )


def test_lists_are_stored_as_tuples_and_written_as_lists() -> None:
    event = SessionEvent(reason="ttsr_triggered", rules=[{"name": "a"}, {"name": "b"}])
    assert event.rules == ({"name": "a"}, {"name": "b"})
    assert event.to_dict()["rules"] == [{"name": "a"}, {"name": "b"}]


def test_from_dict_reads_snake_case_and_treats_null_as_absent() -> None:
    event = SessionEvent.from_dict(
        {"reason": "auto_retry_end", "success": True, "attempt": 3, "final_error": None}
    )
    assert event == SessionEvent(reason="auto_retry_end", success=True, attempt=3)
    snake = SessionEvent.from_dict({"reason": "switch", "previous_session_file": "/x"})
    assert snake.previous_session_file == "/x"
    assert snake.extra == {}


def test_unknown_reason_is_preserved_with_its_payload_in_extra() -> None:
    wire = {"reason": "plan_mode_changed", "enabled": True, "attempt": 4, "_meta": {"v": 2}}
    event = SessionEvent.from_dict(wire)
    assert event.reason == "plan_mode_changed"
    assert not event.is_standard
    assert event.attempt is None
    assert event.extra == {"enabled": True, "attempt": 4}
    assert event.meta == {"v": 2}
    assert event.to_dict() == wire


def test_unknown_keys_of_a_standard_reason_survive_a_round_trip() -> None:
    wire = {
        "reason": "auto_retry_start",
        **SessionEvent(reason="auto_retry_start", **VALID["auto_retry_start"]).to_dict(),
        "errorDetails": {"status": 529},
    }
    event = SessionEvent.from_dict(wire)
    assert event.extra == {"errorDetails": {"status": 529}}
    assert event.to_dict() == wire


def test_extra_is_read_only() -> None:
    event = SessionEvent(reason="custom", extra={"a": 1})
    with pytest.raises(TypeError):
        event.extra["a"] = 2  # type: ignore[index]


def test_missing_required_field_is_named() -> None:
    with pytest.raises(ContentError, match=r"'auto_retry_end': field 'attempt' is required"):
        SessionEvent(reason="auto_retry_end", success=True)


def test_missing_required_field_on_the_wire_is_named() -> None:
    with pytest.raises(ContentError, match=r"'todo_reminder': field 'todos' is required"):
        SessionEvent.from_dict({"reason": "todo_reminder", "attempt": 1, "maxAttempts": 3})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"reason": "auto_retry_end", "success": "yes", "attempt": 1},
            r"field 'success' must be true or false, got str",
        ),
        (
            {"reason": "auto_retry_end", "success": True, "attempt": True},
            r"field 'attempt' must be an integer, got bool",
        ),
        (
            {"reason": "todo_reminder", "todos": (), "attempt": 1, "max_attempts": "lots"},
            r"field 'max_attempts' must be an integer or 'unlimited', got str",
        ),
        ({"reason": "ttsr_triggered", "rules": "no-todo"}, r"field 'rules' must be a list"),
        (
            {"reason": "switch", "previous_session_file": 3},
            r"field 'previous_session_file' must be a string, got int",
        ),
    ],
)
def test_wrong_field_type_is_named(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ContentError, match=message):
        SessionEvent(**kwargs)


def test_field_of_another_reason_is_rejected() -> None:
    with pytest.raises(ContentError, match=r"'start': field 'attempt' does not belong"):
        SessionEvent(reason="start", attempt=1)


def test_typed_field_on_unknown_reason_points_to_extra() -> None:
    with pytest.raises(ContentError, match=r"carries its payload in 'extra'"):
        SessionEvent(reason="custom", attempt=1)


@pytest.mark.parametrize("key", ["reason", "_meta", "previousSessionFile", "previous_session_file"])
def test_extra_key_shadowing_a_field_is_rejected(key: str) -> None:
    with pytest.raises(ContentError, match=rf"extra key {key!r} clashes with a field"):
        SessionEvent(reason="switch", extra={key: "x"})


def test_extra_keys_must_be_strings() -> None:
    with pytest.raises(ContentError, match=r"extra key 1 is not a string"):
        SessionEvent(reason="custom", extra={1: "x"})


@pytest.mark.parametrize("bad", ["", None, 3])
def test_reason_must_be_a_non_empty_string(bad: Any) -> None:
    with pytest.raises(ContentError, match=r"'reason' must be a non-empty string"):
        SessionEvent(reason=bad)
    with pytest.raises(ContentError, match=r"'reason' must be a non-empty string"):
        SessionEvent.from_dict({"reason": bad})


def test_from_dict_rejects_non_objects_and_bad_meta() -> None:
    with pytest.raises(ContentError, match=r"session event: expected an object, got list"):
        SessionEvent.from_dict([])  # type: ignore[arg-type]
    with pytest.raises(ContentError, match=r"'_meta' must be an object"):
        SessionEvent.from_dict({"reason": "start", "_meta": 1})


def test_repr_shows_only_set_fields() -> None:
    event = SessionEvent(reason="switch", previous_session_file="/a", extra={"k": 1})
    assert (
        repr(event) == "SessionEvent(reason='switch', previous_session_file='/a', extra={'k': 1})"
    )


def test_events_match_on_reason_in_a_match_statement() -> None:
    def describe(event: SessionEvent) -> str:
        match event:
            case SessionEvent(reason=SessionReason.AUTO_RETRY_START, attempt=n, max_attempts=m):
                return f"retry {n}/{m}"
            case SessionEvent(reason=SessionReason.SHUTDOWN):
                return "bye"
            case _:
                return "other"

    assert describe(SessionEvent(reason="auto_retry_start", **VALID["auto_retry_start"])) == (
        "retry 2/5"
    )
    assert describe(SessionEvent(reason="shutdown")) == "bye"
    assert describe(SessionEvent(reason="start")) == "other"


def test_reason_constants_are_plain_strings() -> None:
    assert SessionReason.TODO_REMINDER == "todo_reminder"
    assert type(SessionReason.START) is str
    assert SessionEvent(reason=SessionReason.START).to_dict() == {"reason": "start"}


# ---------------------------------------------------------------- dispatch

START = SessionEvent(reason="start")


@pytest.mark.anyio
async def test_hooks_run_in_order_sync_and_async_and_tools_without_hooks_are_skipped() -> None:
    seen: list[tuple[str, str]] = []

    def sync_hook(event: SessionEvent, ctx: ToolContext) -> None:
        seen.append(("a", event.reason))

    async def async_hook(event: SessionEvent, ctx: ToolContext) -> None:
        await anyio.sleep(0)
        seen.append(("b", event.reason))

    def returns_awaitable(event: SessionEvent, ctx: ToolContext) -> Any:
        async def later() -> None:
            seen.append(("d", event.reason))

        return later()

    tools = [
        _tool("a", on_session=sync_hook),
        _tool("plain"),
        _tool("b", on_session=async_hook),
        _tool("c", on_session=lambda e, c: seen.append(("c", e.reason))),
        _tool("d", on_session=returns_awaitable),
    ]
    failures = await dispatch_session_event(tools, START)
    assert failures == []
    assert seen == [("a", "start"), ("b", "start"), ("c", "start"), ("d", "start")]


@pytest.mark.anyio
async def test_an_async_hook_finishes_before_the_next_starts() -> None:
    log: list[str] = []

    async def slow(event: SessionEvent, ctx: ToolContext) -> None:
        log.append("slow start")
        for _ in range(5):
            await anyio.sleep(0)
        log.append("slow end")

    tools = [
        _tool("slow", on_session=slow),
        _tool("next", on_session=lambda e, c: log.append("next")),
    ]
    await dispatch_session_event(tools, START)
    assert log == ["slow start", "slow end", "next"]


@pytest.mark.anyio
async def test_hooks_receive_the_event_and_context() -> None:
    got: list[tuple[Any, Any]] = []
    ctx = ToolContext(cwd="/work")
    tools = [_tool("t", on_session=lambda e, c: got.append((e, c)))]
    await dispatch_session_event(tools, START, ctx)
    await dispatch_session_event(tools, START)
    assert got[0][0] is START
    assert got[0][1] is ctx
    assert got[1][1] is DEFAULT_CONTEXT


@pytest.mark.anyio
async def test_raising_hook_is_logged_and_returned_and_the_rest_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []
    boom = RuntimeError("disk full")

    def bad(event: SessionEvent, ctx: ToolContext) -> None:
        raise boom

    async def bad_async(event: SessionEvent, ctx: ToolContext) -> None:
        await anyio.sleep(0)
        raise KeyError("gone")

    tools = [
        _tool("first", on_session=lambda e, c: ran.append("first")),
        _tool("broken", on_session=bad),
        _tool("broken_async", on_session=bad_async),
        _tool("last", on_session=lambda e, c: ran.append("last")),
    ]
    event = SessionEvent(reason="shutdown")
    with caplog.at_level(logging.WARNING, logger="customtools.session"):
        failures = await dispatch_session_event(tools, event)
    assert ran == ["first", "last"]
    assert [(f.tool_name, f.reason) for f in failures] == [
        ("broken", "shutdown"),
        ("broken_async", "shutdown"),
    ]
    assert failures[0].error is boom
    assert isinstance(failures[1].error, KeyError)
    records = [r for r in caplog.records if r.name == "customtools.session"]
    assert [r.levelno for r in records] == [logging.WARNING, logging.WARNING]
    assert "'broken'" in records[0].getMessage()
    assert "'shutdown'" in records[0].getMessage()
    assert "disk full" in records[0].getMessage()
    assert records[0].exc_info is not None
    assert records[0].exc_info[1] is boom


@pytest.mark.anyio
async def test_failures_go_to_the_given_logger(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("host.tools")

    def bad(event: SessionEvent, ctx: ToolContext) -> None:
        raise ValueError("nope")

    with caplog.at_level(logging.WARNING):
        failures = await dispatch_session_event([_tool("x", on_session=bad)], START, logger=logger)
    assert failures == [HookFailure(tool_name="x", reason="start", error=failures[0].error)]
    assert [r.name for r in caplog.records] == ["host.tools"]


@pytest.mark.anyio
async def test_a_hook_shared_by_several_tools_runs_once_per_tool() -> None:
    calls: list[str] = []

    def shared(event: SessionEvent, ctx: ToolContext) -> None:
        calls.append(event.reason)

    tools = [_tool("one", on_session=shared), _tool("two", on_session=shared)]
    await dispatch_session_event(tools, START)
    assert calls == ["start", "start"]


@pytest.mark.anyio
async def test_cancellation_propagates_and_stops_the_dispatch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = anyio.Event()
    later: list[str] = []
    reached_end = False

    async def blocking(event: SessionEvent, ctx: ToolContext) -> None:
        started.set()
        await anyio.sleep_forever()

    tools = [
        _tool("blocking", on_session=blocking),
        _tool("later", on_session=lambda e, c: later.append("ran")),
    ]

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_when_started() -> None:
                await started.wait()
                scope.cancel()

            tg.start_soon(cancel_when_started)
            await dispatch_session_event(tools, START)
            reached_end = True
    assert scope.cancelled_caught
    assert not reached_end
    assert later == []
    assert not [r for r in caplog.records if r.name == "customtools.session"]


@pytest.mark.anyio
async def test_hook_timeout_records_a_timeout_failure_and_moves_on() -> None:
    ran: list[str] = []

    async def hangs(event: SessionEvent, ctx: ToolContext) -> None:
        await anyio.sleep_forever()

    tools = [
        _tool("hangs", on_session=hangs),
        _tool("next", on_session=lambda e, c: ran.append("n")),
    ]
    failures = await dispatch_session_event(tools, START, hook_timeout=0.01)
    assert ran == ["n"]
    assert len(failures) == 1
    assert isinstance(failures[0].error, TimeoutError)
    assert "'hangs' did not finish within 0.01 s" in str(failures[0].error)


@pytest.mark.anyio
async def test_hook_timeout_does_not_touch_hooks_that_finish() -> None:
    async def quick(event: SessionEvent, ctx: ToolContext) -> None:
        await anyio.sleep(0)

    failures = await dispatch_session_event([_tool("q", on_session=quick)], START, hook_timeout=30)
    assert failures == []


@pytest.mark.anyio
async def test_sync_hooks_run_on_the_loop_thread_unless_asked() -> None:
    threads: list[int] = []
    tools = [_tool("t", on_session=lambda e, c: threads.append(threading.get_ident()))]
    await dispatch_session_event(tools, START)
    await dispatch_session_event(tools, START, sync_hooks_in_thread=True)
    assert threads[0] == threading.get_ident()
    assert threads[1] != threading.get_ident()


@pytest.mark.anyio
async def test_async_hooks_stay_on_the_loop_with_threads_enabled() -> None:
    threads: list[int] = []

    async def hook(event: SessionEvent, ctx: ToolContext) -> None:
        threads.append(threading.get_ident())

    await dispatch_session_event([_tool("t", on_session=hook)], START, sync_hooks_in_thread=True)
    assert threads == [threading.get_ident()]


# ---------------------------------------------------------------- the docs example


class _Manager:
    def __init__(self) -> None:
        self.branch: list[dict[str, Any]] = []

    def get_branch(self) -> list[dict[str, Any]]:
        return list(self.branch)


@pytest.fixture
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_docs_example_session_counter", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.anyio
async def test_session_counter_example_rebuilds_state_from_the_branch(example: ModuleType) -> None:
    tool = example.factory(None)
    manager = _Manager()
    ctx = ToolContext(session_manager=manager)

    async def call() -> ToolResult:
        result = await tool.execute("id", {}, None, ctx, None)
        manager.branch.append({"tool_name": tool.name, "details": result.details})
        return result

    assert await dispatch_session_event([tool], START, ctx) == []
    await call()
    await call()
    third = await call()
    assert third.text == "call number 3 in this branch"

    # Branch from a point after the first two calls: the count follows the branch.
    manager.branch = manager.branch[:2]
    await dispatch_session_event([tool], SessionEvent(reason="branch"), ctx)
    assert (await call()).details == {"count": 3}

    # A fresh session with no history starts from zero; shutdown resets too.
    manager.branch = []
    await dispatch_session_event(
        [tool], SessionEvent(reason="switch", previous_session_file="/s/a.jsonl"), ctx
    )
    assert (await call()).details == {"count": 1}
    await dispatch_session_event([tool], SessionEvent(reason="shutdown"), ctx)
    assert (await call()).details == {"count": 1}


def test_session_counter_example_renders_its_result(example: ModuleType) -> None:
    tool = example.factory(None)
    result = ToolResult.from_text("call number 2", details={"count": 2})
    assert render_result(tool, result, RenderOptions(), PLAIN_THEME) == "#2"
    error = ToolResult.from_text("boom", is_error=True)
    assert render_result(tool, error, RenderOptions(), PLAIN_THEME) == "[error] boom"


# ---------------------------------------------------------------- hooks' BaseExceptions (H1, M5)


class _Outcome(BaseException):
    """Like pytest's OutcomeException: a BaseException a test helper raises."""


class _BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("boom")


@pytest.mark.anyio
@pytest.mark.parametrize("in_thread", [False, True], ids=["loop", "thread"])
@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (SystemExit(2), "tool-exit"),
        (GeneratorExit(), "tool-base-exception"),
        (_Outcome("skip"), "tool-base-exception"),
        (_BadStr(), None),
    ],
    ids=["SystemExit", "GeneratorExit", "Outcome", "unprintable"],
)
async def test_a_hooks_base_exception_is_a_failure_and_the_rest_still_run(
    in_thread: bool, kind: str, exc: BaseException, code: str | None
) -> None:
    ran: list[str] = []

    def sync_hook(event: SessionEvent, ctx: ToolContext) -> None:
        raise exc

    async def async_hook(event: SessionEvent, ctx: ToolContext) -> None:
        raise exc

    tools = [
        _tool("broken", on_session=sync_hook if kind == "sync" else async_hook),
        _tool("last", on_session=lambda e, c: ran.append("last")),
    ]
    with anyio.fail_after(5):
        failures = await dispatch_session_event(
            tools, START, sync_hooks_in_thread=in_thread, hook_timeout=5 if in_thread else None
        )
    assert ran == ["last"]
    assert [(f.tool_name, f.code) for f in failures] == [("broken", code)]
    assert failures[0].error is exc


@pytest.mark.anyio
async def test_a_hook_raising_a_cancellation_of_its_own_is_a_failure() -> None:
    import asyncio

    def hook(event: SessionEvent, ctx: ToolContext) -> None:
        raise asyncio.CancelledError("the hook's own")

    failures = await dispatch_session_event([_tool("x", on_session=hook)], START)
    assert [f.code for f in failures] == ["tool-base-exception"]


@pytest.mark.anyio
async def test_keyboard_interrupt_from_a_hook_on_the_loop_thread_propagates() -> None:
    def hook(event: SessionEvent, ctx: ToolContext) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await dispatch_session_event([_tool("x", on_session=hook)], START)


@pytest.mark.anyio
async def test_keyboard_interrupt_from_a_hook_in_a_worker_thread_is_a_failure() -> None:
    def hook(event: SessionEvent, ctx: ToolContext) -> None:
        raise KeyboardInterrupt

    failures = await dispatch_session_event(
        [_tool("x", on_session=hook)], START, sync_hooks_in_thread=True
    )
    assert isinstance(failures[0].error, KeyboardInterrupt)
    assert failures[0].code == "tool-base-exception"


@pytest.mark.anyio
async def test_an_unprintable_failure_is_logged_without_raising(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def hook(event: SessionEvent, ctx: ToolContext) -> None:
        raise _BadStr

    with caplog.at_level(logging.WARNING, logger="customtools.session"):
        failures = await dispatch_session_event([_tool("x", on_session=hook)], START)
    assert len(failures) == 1
    messages = [r.getMessage() for r in caplog.records if r.name == "customtools.session"]
    assert "__str__ failed" in messages[0]
