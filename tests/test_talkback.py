"""Tools that talk back in process: ctx.ask (forms), ctx.sample (the host's model), ctx.log."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from customtools import CustomTool, CustomToolAdapter, ToolContext, Type, tool
from customtools._abort import AbortController
from customtools._errors import ToolAbortedError
from customtools.talkback import (
    InputAnswer,
    InputRequest,
    SampleRequest,
    SampleResult,
    TalkBackError,
    check_form_schema,
)

pytestmark = pytest.mark.anyio

FORM = Type.Object(
    {
        "name": Type.String(),
        "age": Type.Optional(Type.Integer(minimum=0, default=30)),
        "colour": Type.Union([Type.Literal("red"), Type.Literal("blue")]),
    }
)
SIMPLE = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0, "default": 30},
        "plan": {"type": "string", "enum": ["free", "pro"]},
    },
    "required": ["name"],
}


def answering(action: str, values: Mapping[str, Any] | None = None) -> Any:
    seen: list[InputRequest] = []

    async def handler(request: InputRequest) -> InputAnswer:
        seen.append(request)
        return InputAnswer(action=action, values=values or {})  # type: ignore[arg-type]

    handler.seen = seen  # type: ignore[attr-defined]
    return handler


async def never(_request: Any) -> Any:
    await anyio.sleep_forever()


async def test_an_accepted_form_returns_validated_values_with_defaults() -> None:
    handler = answering("accept", {"name": "Ada", "plan": "pro"})
    answer = await ToolContext(input_handler=handler).ask("Who are you?", SIMPLE)
    assert answer.accepted
    assert dict(answer.values) == {"name": "Ada", "plan": "pro", "age": 30}
    assert handler.seen[0].message == "Who are you?"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_declined_and_cancelled_forms_are_typed_outcomes(action: str) -> None:
    answer = await ToolContext(input_handler=answering(action)).ask("Go on?", SIMPLE)
    assert answer.action == action
    assert not answer.accepted
    assert dict(answer.values) == {}


async def test_answers_to_questions_that_were_not_asked_never_reach_the_tool() -> None:
    extra = {"name": "Ada", "plan": "pro", "is_admin": True, "__class__": "x"}
    answer = await ToolContext(input_handler=answering("accept", extra)).ask("Who?", SIMPLE)
    assert dict(answer.values) == {"name": "Ada", "plan": "pro", "age": 30}


async def test_an_answer_that_breaks_the_form_is_an_invalid_answer() -> None:
    ctx = ToolContext(input_handler=answering("accept", {"plan": "gold"}), tool_name="setup")
    with pytest.raises(TalkBackError) as caught:
        await ctx.ask("Plan?", SIMPLE)
    assert caught.value.code == "invalid-answer"
    assert "'setup'" in str(caught.value)


async def test_asking_without_a_handler_says_who_cannot_answer() -> None:
    with pytest.raises(TalkBackError) as caught:
        await ToolContext(tool_name="wipe").ask("Delete?", SIMPLE)
    assert caught.value.code == "no-input-handler"
    assert "'wipe'" in str(caught.value)
    assert "input handler" in str(caught.value)


async def test_an_unanswered_form_times_out() -> None:
    with anyio.fail_after(5):
        with pytest.raises(TalkBackError) as caught:
            await ToolContext(input_handler=never).ask("Hello?", SIMPLE, timeout=0.05)
    assert caught.value.code == "input-timeout"


async def test_aborting_the_signal_stops_a_pending_question() -> None:
    controller = AbortController()
    ctx = ToolContext(input_handler=never)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.sleep, 0.02)
            tg.start_soon(_abort_soon, controller)
            with pytest.raises(ToolAbortedError):
                await ctx.ask("Hello?", SIMPLE, signal=controller.signal)


async def _abort_soon(controller: AbortController) -> None:
    await anyio.sleep(0.02)
    controller.abort("user pressed stop")


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "string"}, "root must be an object"),
        ({"type": "object", "properties": {}}, "at least one property"),
        (
            {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}},
            "property 'a' has type 'object'",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}},
            "property 'a' is an array",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "format": "password"}}},
            "format 'password'",
        ),
    ],
)
def test_a_schema_that_is_not_a_form_is_refused_naming_the_property(
    schema: Any, fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        check_form_schema(schema)


def test_a_type_object_of_primitives_and_enums_is_a_form() -> None:
    form = check_form_schema(FORM)
    assert set(form["properties"]) == {"name", "age", "colour"}


async def test_sampling_goes_to_the_hosts_sampler() -> None:
    seen: list[SampleRequest] = []

    async def sampler(request: SampleRequest) -> SampleResult:
        seen.append(request)
        return SampleResult(text="Paris", model="m", stop_reason="endTurn")

    result = await ToolContext(sampler=sampler).sample("Capital of France?", max_tokens=20)
    assert result.text == "Paris"
    assert seen[0].messages == ({"role": "user", "content": "Capital of France?"},)
    assert seen[0].max_tokens == 20


async def test_sampling_without_a_sampler_is_a_typed_error() -> None:
    with pytest.raises(TalkBackError) as caught:
        await ToolContext().sample("hi", max_tokens=5)
    assert caught.value.code == "no-sampler"


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
async def test_sampling_needs_a_positive_token_limit(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        await ToolContext().sample("hi", max_tokens=bad)


async def test_a_sampler_that_hangs_is_bounded() -> None:
    with anyio.fail_after(5), pytest.raises(TalkBackError) as caught:
        await ToolContext(sampler=never).sample("hi", max_tokens=5, timeout=0.05)
    assert caught.value.code == "sampling-timeout"


def test_log_reaches_the_sink_at_each_level() -> None:
    got: list[tuple[str, str, dict[str, Any]]] = []
    ctx = ToolContext(log_sink=lambda level, message, data: got.append((level, message, data)))
    for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
        ctx.log(level, f"at {level}", n=1)  # type: ignore[arg-type]
    assert [g[0] for g in got][:2] == ["debug", "info"]
    assert len(got) == 8
    assert got[0][2] == {"n": 1}


def test_log_without_a_sink_goes_to_the_tools_logger(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="customtools.tools"):
        ToolContext().log("warning", "disk almost full")
    assert "disk almost full" in caplog.text


def test_a_broken_sink_never_breaks_the_tool(caplog: pytest.LogCaptureFixture) -> None:
    def sink(*_args: Any) -> None:
        raise OSError("pipe closed")

    ToolContext(log_sink=sink).log("info", "hello")
    assert "log sink raised" in caplog.text


def test_an_unknown_level_is_a_bug_in_the_tool() -> None:
    with pytest.raises(ValueError, match="'loud'"):
        ToolContext().log("loud", "x")  # type: ignore[arg-type]


async def test_an_unhandled_question_is_an_error_result_the_model_reads() -> None:
    async def execute(_id: str, _params: Any, _update: Any, ctx: Any, _signal: Any) -> str:
        answer = await ctx.ask("Delete 40 files?", SIMPLE)
        return answer.action  # type: ignore[no-any-return]

    probe = CustomTool(
        name="cleanup", description="d", parameters={"type": "object"}, execute=execute
    )
    result = await CustomToolAdapter(probe).execute("c1", {}, ctx=ToolContext(tool_name="cleanup"))
    assert result.is_error
    assert result.details["error"] == "TalkBackError"
    assert "cannot ask" in result.text


async def test_a_tool_function_gets_ctx_injected_and_asks() -> None:
    @tool
    async def rename(path: str, ctx: ToolContext) -> str:
        """Rename a file after asking for the new name."""
        answer = await ctx.ask(f"New name for {path}?", SIMPLE)
        return answer.values["name"] if answer.accepted else answer.action

    ctx = ToolContext(input_handler=answering("accept", {"name": "b.txt"}))
    result = await CustomToolAdapter(rename).execute("c1", {"path": "a.txt"}, ctx=ctx)
    assert result.text == "b.txt"


async def test_a_sync_tool_asks_from_its_thread() -> None:
    @tool
    def confirm_sync(ctx: ToolContext) -> str:
        """A sync tool."""
        answer = ctx.ask_sync("Sure?", SIMPLE)
        sample = ctx.sample_sync("why?", max_tokens=3)
        return f"{answer.action}/{sample.text}"

    async def sampler(_request: SampleRequest) -> SampleResult:
        return SampleResult(text="because")

    ctx = ToolContext(input_handler=answering("decline"), sampler=sampler)
    with anyio.fail_after(10):
        result = await CustomToolAdapter(confirm_sync).execute("c1", {}, ctx=ctx)
    assert result.text == "decline/because"


async def test_a_handler_returning_the_wrong_type_is_reported() -> None:
    async def handler(_request: Any) -> Any:
        return {"action": "accept"}

    with pytest.raises(TalkBackError) as caught:
        await ToolContext(input_handler=handler).ask("x", SIMPLE)
    assert caught.value.code == "talkback-failed"


def test_the_wire_form_round_trips_every_data_field_and_meta() -> None:
    import json

    def rule(_args: Any) -> bool:
        return True

    async def execute(*_args: Any) -> str:
        return "ok"

    original = CustomTool(
        name="full",
        label="Full",
        description="d",
        parameters={"type": "object", "properties": {"a": {"type": "string"}}},
        output_schema={"type": "object"},
        execute=execute,
        timeout=3.5,
        coerce_args=False,
        apply_defaults=True,
        lenient_args=True,
        hidden=True,
        deferrable=True,
        strict=True,
        concurrency="exclusive",
        annotations={"destructiveHint": True},
        meta={"x/y": [1, 2]},
        requires_approval=rule,
    )
    wire = original.to_dict()
    assert json.loads(json.dumps(wire)) == wire  # JSON-safe
    assert wire["_meta"] == {"x/y": [1, 2]}
    assert wire["requiresApproval"] is True  # a rule cannot travel: ask every time
    back = CustomTool.from_dict({**wire, "futureField": 1}, execute=execute)
    for name in (
        "name", "label", "description", "parameters", "output_schema", "timeout",
        "coerce_args", "apply_defaults", "lenient_args", "hidden", "deferrable", "strict",
        "concurrency", "annotations", "meta",
    ):  # fmt: skip
        assert getattr(back, name) == getattr(original, name), name
    assert back.to_dict() == wire


def test_a_minimal_tool_has_a_minimal_wire_form() -> None:
    async def execute(*_args: Any) -> str:
        return "ok"

    wire = CustomTool(name="tiny", execute=execute).to_dict()
    assert set(wire) == {"name", "label", "description", "parameters"}


def test_a_wire_form_without_a_name_is_refused() -> None:
    from customtools import ToolDefinitionError

    with pytest.raises(ToolDefinitionError, match="'name'"):
        CustomTool.from_dict({"label": "x"}, execute=lambda *a: None)


async def test_an_in_process_ui_answers_ask_field_by_field() -> None:
    class UI:
        def notify(self, message: str, level: str = "info") -> None: ...

        async def confirm(self, title: str, message: str = "") -> bool:
            return True

        async def select(self, title: str, options: Any) -> str | None:
            return list(options)[-1]

        async def input(self, title: str, placeholder: str | None = None) -> str | None:
            return "41" if "age" in title else "Ada"

        def set_status(self, key: str, text: str | None) -> None: ...

    ctx = ToolContext(ui=UI(), has_ui=True)
    assert ctx.can_ask
    answer = await ctx.ask("About you", SIMPLE)
    assert dict(answer.values) == {"name": "Ada", "age": 41, "plan": "pro"}


async def test_the_guides_example_asks_samples_and_logs() -> None:
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "docs" / "examples" / "talkback_tool.py"
    spec = importlib.util.spec_from_file_location("talkback_example", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    logged: list[str] = []

    async def sampler(_request: SampleRequest) -> SampleResult:
        return SampleResult(text="old files go away")

    ctx = ToolContext(
        input_handler=answering("accept", {"mode": "trash"}),
        sampler=sampler,
        log_sink=lambda level, message, data: logged.append(f"{level}:{message}"),
    )
    adapter = CustomToolAdapter(module.cleanup)
    done = await adapter.execute("c1", {"folder": "/tmp/x"}, ctx=ctx)
    assert done.text == "trash after 30 days: old files go away"
    assert logged == ["info:cleanup asked"]
    headless = await adapter.execute("c2", {"folder": "/tmp/x"})
    assert headless.text == "not cleaned: no-input-handler"
    guide = (path.parents[1] / "authoring.md").read_text(encoding="utf-8")
    assert "examples/talkback_tool.py" in guide


async def test_a_load_result_carries_the_hosts_ui_and_handlers(tmp_path: Any) -> None:
    from customtools import load_custom_tools

    (tmp_path / "asker.py").write_text(
        "from customtools import ToolContext, tool\n\n"
        "@tool\n"
        "async def asker(ctx: ToolContext) -> str:\n"
        '    """Ask, then sample, then log."""\n'
        '    ok = await ctx.ui.confirm("Go?")\n'
        '    said = await ctx.sample("hi", max_tokens=5)\n'
        '    ctx.log("notice", "done")\n'
        '    return f"{ok}/{said.text}"\n'
    )
    result = await load_custom_tools([str(tmp_path)], str(tmp_path))
    assert result.ok, result.errors

    class UI:
        def notify(self, message: str, level: str = "info") -> None: ...

        async def confirm(self, title: str, message: str = "") -> bool:
            return True

        async def select(self, title: str, options: Any) -> str | None:
            return None

        async def input(self, title: str, placeholder: str | None = None) -> str | None:
            return None

        def set_status(self, key: str, text: str | None) -> None: ...

    async def sampler(_request: SampleRequest) -> SampleResult:
        return SampleResult(text="hello")

    logged: list[str] = []
    result.set_ui_context(UI())
    result.set_talkback(sampler=sampler, log_sink=lambda level, msg, data: logged.append(level))
    ctx = result.context(model="m")
    assert ctx.has_ui
    assert ctx.model == "m"
    assert ctx.cwd == str(tmp_path)
    done = await CustomToolAdapter(result.get("asker").tool, context=ctx).execute("c1", {})  # type: ignore[union-attr]
    assert done.text == "True/hello"
    assert logged == ["notice"]


async def test_a_sync_tools_log_reaches_the_sink_on_the_loop_thread() -> None:
    import threading

    loop_thread = threading.get_ident()
    seen: list[int] = []

    @tool
    def logs(ctx: ToolContext) -> str:
        """Log from a worker thread."""
        ctx.log("info", "from a thread")
        return "ok"

    ctx = ToolContext(log_sink=lambda *_: seen.append(threading.get_ident()))
    with anyio.fail_after(10):
        await CustomToolAdapter(logs).execute("c1", {}, ctx=ctx)
    assert seen == [loop_thread]


def test_log_from_a_foreign_thread_calls_the_sink_there() -> None:
    import threading

    seen: list[str] = []
    ctx = ToolContext(log_sink=lambda level, message, data: seen.append(message))
    worker = threading.Thread(target=ctx.log, args=("info", "plain thread"))
    worker.start()
    worker.join(5)
    assert seen == ["plain thread"]


async def test_a_pending_question_ends_the_run_past_except_exception_and_is_contained() -> None:
    from customtools._talkback import QuestionPending

    fell_back: list[str] = []

    async def pending(_request: Any) -> Any:
        raise QuestionPending("waiting for the answer")

    @tool
    async def careful(ctx: ToolContext) -> str:
        """Ask, with an `except Exception` fallback."""
        try:
            await ctx.ask("Sure?", SIMPLE)
        except Exception:
            fell_back.append("fallback")
        return "done"

    adapter = CustomToolAdapter(careful, context=ToolContext(input_handler=pending))
    result = await adapter.execute("c1", {}, signal=AbortController().signal)
    assert fell_back == []
    assert result.is_error is True
    assert result.details["error"] == "ToolAbortedError"
    assert "waiting for the answer" in result.content[0].text  # type: ignore[union-attr]


async def test_an_approver_whose_answer_is_pending_gives_a_cancelled_result() -> None:
    from customtools._talkback import QuestionPending

    ran: list[str] = []

    async def approver(_request: Any) -> bool:
        raise QuestionPending("waiting for the approval")

    @tool(requires_approval=True)
    def wipe() -> str:
        """Needs approval."""
        ran.append("wipe")
        return "wiped"

    result = await CustomToolAdapter(wipe, approver=approver).execute("c1", {})
    assert ran == []
    assert result.is_error is True
    assert result.details["error"] == "ToolAbortedError"


@pytest.mark.parametrize("key", ["", 3, "k" * 129])
async def test_a_question_key_must_be_a_short_string(key: Any) -> None:
    async def handler(_request: InputRequest) -> InputAnswer:
        raise AssertionError("not asked")

    ctx = ToolContext(input_handler=handler)
    with pytest.raises(ValueError, match="ask: key must be a string of 1 to 128 characters"):
        await ctx.ask("Who?", SIMPLE, key=key)


async def test_a_question_key_reaches_the_input_handler() -> None:
    seen: list[InputRequest] = []

    async def handler(request: InputRequest) -> InputAnswer:
        seen.append(request)
        return InputAnswer(action="decline")

    await ToolContext(input_handler=handler).ask("Who?", SIMPLE, key="user_name")
    await ToolContext(input_handler=handler).ask("Who?", SIMPLE)
    assert [request.key for request in seen] == ["user_name", None]
