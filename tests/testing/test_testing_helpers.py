"""customtools.testing without pytest machinery: packs, recorded calls, aborts, assertions."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from customtools import (
    AbortController,
    CustomTool,
    ImageContent,
    SessionEvent,
    TextContent,
    ToolResult,
    Type,
)
from customtools.testing import (
    ToolCall,
    ToolPack,
    assert_cancelled,
    assert_error,
    assert_ok,
    assert_text,
    describe_outcome,
    load_pack,
    load_pack_sync,
)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


async def _ticker(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
    for n in range(1, params["n"] + 1):
        on_update(f"tick {n}")
        await anyio.sleep(params["pause"])
    return ToolResult.from_text("done", details={"ticks": params["n"]})


def _sync_echo(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
    on_update({"content": ["echoing"], "details": {"stage": 1}})
    if params["text"] == "boom":
        raise RuntimeError("exploded on purpose")
    return f"{tool_call_id}: {params['text']}"


def _pack(**tool_options: Any) -> ToolPack:
    ticker = CustomTool(
        name="ticker",
        description="ticks",
        parameters=Type.Object(
            {
                "n": Type.Integer(minimum=0),
                "pause": Type.Optional(Type.Number(minimum=0, default=0)),
            }
        ),
        execute=_ticker,
        **tool_options,
    )
    echo = CustomTool(
        name="echo",
        description="echoes",
        parameters=Type.Object({"text": Type.String()}),
        execute=_sync_echo,
    )
    return ToolPack([ticker, echo])


# --- ToolPack and recorded calls -------------------------------------------------------


@pytest.mark.anyio
async def test_call_records_the_result_and_every_update_in_order() -> None:
    call = await _pack().call("ticker", {"n": 3})

    assert isinstance(call, ToolCall)
    assert (call.tool_name, call.tool_call_id, call.params) == ("ticker", "test-call", {"n": 3})
    assert call.update_texts == ["tick 1", "tick 2", "tick 3"]
    assert all(isinstance(update, ToolResult) for update in call.updates)
    assert (call.text, call.is_error, call.details) == ("done", False, {"ticks": 3})
    assert call.cancelled is False
    assert call.aborted_by is None


@pytest.mark.anyio
async def test_sync_tools_updates_are_recorded_normalized() -> None:
    call = await _pack().call("echo", {"text": "hi"}, tool_call_id="call-7")

    assert call.text == "call-7: hi"
    assert [(u.text, u.details) for u in call.updates] == [("echoing", {"stage": 1})]


def test_call_sync_runs_on_the_requested_backend() -> None:
    seen: list[str] = []

    async def which(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        import sniffio

        seen.append(sniffio.current_async_library())
        return "ok"

    pack = ToolPack([CustomTool(name="which", description="d", execute=which)])

    pack.call_sync("which")
    pack.call_sync("which", backend="trio")

    assert seen == ["asyncio", "trio"]


def test_the_callers_params_are_copied_and_never_mutated() -> None:
    params = {"n": 1}

    call = _pack().call_sync("ticker", params)

    assert params == {"n": 1}
    assert call.params == {"n": 1}
    assert call.params is not params


def test_arguments_that_are_not_an_object_reach_the_adapter_as_given() -> None:
    call = _pack().call_sync("echo", ["not", "an", "object"])

    assert call.params == ["not", "an", "object"]
    assert_error(call)


def test_on_update_sees_each_update_as_it_arrives() -> None:
    live: list[str] = []

    _pack().call_sync("ticker", {"n": 2}, on_update=lambda u: live.append(u.text))

    assert live == ["tick 1", "tick 2"]


def test_a_tool_that_raises_gives_an_error_result_not_an_exception() -> None:
    call = _pack().call_sync("echo", {"text": "boom"})

    assert_error(call, match="RuntimeError: exploded on purpose")
    assert call.details == {"error": "RuntimeError", "message": "exploded on purpose"}


@pytest.mark.anyio
async def test_abort_after_updates_aborts_right_after_the_nth_update() -> None:
    call = await _pack().call("ticker", {"n": 100, "pause": 0.01}, abort_after_updates=2)

    assert_cancelled(call, match="aborted by test after 2 update", timed_out=False)
    assert call.update_texts == ["tick 1", "tick 2"]
    assert call.cancelled is True
    assert call.aborted_by == "after 2 update(s)"


@pytest.mark.anyio
async def test_abort_after_a_delay_stops_a_tool_that_would_never_finish() -> None:
    async def forever(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        await anyio.sleep_forever()
        return "unreachable"

    pack = ToolPack([CustomTool(name="forever", description="d", execute=forever)])

    call = await pack.call("forever", abort_after=0.01, abort_reason="enough")

    assert_cancelled(call, match="enough")
    assert call.details["reason"] == "enough"
    assert call.aborted_by == "after 0.01 s"


@pytest.mark.anyio
async def test_scripted_aborts_combine_with_the_tests_own_signal() -> None:
    controller = AbortController()
    controller.abort("stopped by the test itself")

    call = await _pack().call("ticker", {"n": 5}, signal=controller.signal, abort_after_updates=4)

    assert_cancelled(call, match="stopped by the test itself")
    assert call.updates == ()
    assert call.aborted_by is None


@pytest.mark.anyio
async def test_a_call_that_finishes_before_abort_after_is_not_aborted() -> None:
    call = await _pack().call("ticker", {"n": 1}, abort_after=30)

    assert_ok(call)
    assert call.aborted_by is None


@pytest.mark.anyio
async def test_timeout_gives_a_timed_out_cancelled_result() -> None:
    call = await _pack().call("ticker", {"n": 5, "pause": 10}, timeout=0.01)

    assert_cancelled(call, match="timed out", timed_out=True)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"abort_after_updates": 0}, "abort_after_updates must be an integer >= 1, got 0"),
        ({"abort_after_updates": True}, "abort_after_updates must be an integer >= 1"),
        ({"abort_after": -1}, "abort_after must be a number of seconds >= 0, got -1"),
    ],
)
def test_bad_abort_options_are_rejected(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _pack().call_sync("ticker", {"n": 1}, **options)


def test_an_unknown_tool_name_lists_close_matches_and_every_tool() -> None:
    with pytest.raises(KeyError, match=r"no tool 'tickr' in the pack; did you mean 'ticker'"):
        _pack().call_sync("tickr")
    with pytest.raises(KeyError, match=r"\(tools: ticker, echo\)"):
        _pack()["nothing-like-it"]


def test_a_pack_gives_tools_by_name_in_load_order() -> None:
    pack = _pack()

    assert pack.names == ("ticker", "echo")
    assert [tool.name for tool in pack] == ["ticker", "echo"]
    assert len(pack) == 2
    assert "echo" in pack
    assert pack["echo"] is pack.tool("echo")
    assert pack.adapter("echo") is pack.adapter("echo")
    assert (pack.errors, pack.metadata, pack.diagnostics, pack.load_result) == ((), (), (), None)
    assert repr(pack) == "<ToolPack ticker, echo>"


def test_a_pack_refuses_duplicate_names_and_non_tools() -> None:
    tool = _pack()["echo"]
    with pytest.raises(ValueError, match="two tools are named 'echo'"):
        ToolPack([tool, tool])
    with pytest.raises(TypeError, match="ToolPack needs CustomTool objects, got dict"):
        ToolPack([{"name": "x"}])  # type: ignore[list-item]


# --- session events ----------------------------------------------------------------------


def _session_pack(log: list[str]) -> ToolPack:
    def remember(name: str) -> Any:
        def on_session(event: SessionEvent, ctx: Any) -> None:
            log.append(f"{name}:{event.reason}:{event.previous_session_file}")

        return on_session

    def broken(event: SessionEvent, ctx: Any) -> None:
        raise OSError("disk full")

    tools = [
        CustomTool(name="a", description="d", execute=_sync_echo, on_session=remember("a")),
        CustomTool(name="b", description="d", execute=_sync_echo),
        CustomTool(name="c", description="d", execute=_sync_echo, on_session=remember("c")),
        CustomTool(name="bad", description="d", execute=_sync_echo, on_session=broken),
    ]
    return ToolPack(tools)


def test_session_events_reach_the_chosen_hooks_in_order() -> None:
    log: list[str] = []
    pack = _session_pack(log)

    failures = pack.send_session_event_sync("switch", tools=["c", "a"], previous_session_file="s1")

    assert failures == ()
    assert log == ["c:switch:s1", "a:switch:s1"]


@pytest.mark.anyio
async def test_a_hook_that_raises_fails_the_test_with_every_failure_listed() -> None:
    log: list[str] = []
    pack = _session_pack(log)

    with pytest.raises(
        AssertionError,
        match=r"1 on_session hook\(s\) raised on 'start':\n  bad: OSError: disk full",
    ):
        await pack.send_session_event(SessionEvent(reason="start"))
    assert log == ["a:start:None", "c:start:None"]  # the other hooks still ran


def test_check_false_returns_hook_failures_instead() -> None:
    failures = _session_pack([]).send_session_event_sync("shutdown", check=False)

    assert [(f.tool_name, f.reason, type(f.error)) for f in failures] == [
        ("bad", "shutdown", OSError)
    ]


def test_fields_go_with_a_reason_not_with_an_event() -> None:
    with pytest.raises(TypeError, match="pass event fields only with a reason"):
        _session_pack([]).send_session_event_sync(SessionEvent(reason="start"), attempt=1)


# --- loading -----------------------------------------------------------------------------


GOOD = """
    from customtools import CustomTool

    def factory(api):
        def execute(tool_call_id, params, on_update, ctx, signal):
            return api.cwd
        return CustomTool(name="where", description="says where", execute=execute)
"""


def test_relative_pack_paths_come_from_the_working_directory_not_from_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "pack" / "where.py", GOOD)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)

    pack = load_pack_sync("pack", cwd=elsewhere)

    assert pack.call_sync("where").text == str(elsewhere)
    assert pack.paths == (str(tmp_path / "pack"),)


@pytest.mark.anyio
async def test_load_pack_is_awaitable_and_cwd_defaults_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "where.py", GOOD)
    monkeypatch.chdir(tmp_path)

    pack = await load_pack(tmp_path / "where.py")

    assert (await pack.call("where")).text == os.getcwd()


@pytest.mark.anyio
async def test_the_sync_loader_also_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    _write(tmp_path / "where.py", GOOD)

    pack = load_pack_sync(tmp_path / "where.py", cwd=tmp_path)

    assert (await pack.call("where")).text == str(tmp_path)


def test_load_errors_fail_with_every_error_listed(tmp_path: Path) -> None:
    _write(tmp_path / "pack" / "good.py", GOOD)
    _write(tmp_path / "pack" / "broken.py", "import not_a_module_anywhere_xyz\n")
    _write(tmp_path / "pack" / "raises.py", "def factory(api):\n    raise ValueError('nope')\n")

    with pytest.raises(AssertionError) as caught:
        load_pack_sync(tmp_path / "pack")

    message = str(caught.value)
    assert message.startswith(f"tool pack {tmp_path / 'pack'} has 2 load error(s):\n")
    assert "broken.py [missing-dependency]: " in message
    assert "not_a_module_anywhere_xyz" in message
    assert "raises.py [factory-error]: " in message
    assert "nope" in message
    assert message.endswith("(pass allow_errors=True to assert on pack.errors instead)")


def test_allow_errors_keeps_the_good_tools_and_the_errors(tmp_path: Path) -> None:
    _write(tmp_path / "pack" / "good.py", GOOD)
    _write(tmp_path / "pack" / "broken.py", "syntax error here\n")

    pack = load_pack_sync(tmp_path / "pack", allow_errors=True)

    assert pack.names == ("where",)
    assert [(Path(e.path).name, e.code) for e in pack.errors] == [("broken.py", "syntax-error")]


def test_builtin_names_are_load_errors(tmp_path: Path) -> None:
    _write(tmp_path / "where.py", GOOD)

    with pytest.raises(AssertionError, match=r"\[name-conflict\].*'where' is a built-in"):
        load_pack_sync(tmp_path / "where.py", builtin_tool_names=["where"])


def test_a_pack_without_tools_fails(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()

    with pytest.raises(AssertionError, match="loaded no tools: check the path"):
        load_pack_sync(tmp_path / "empty")
    assert len(load_pack_sync(tmp_path / "empty", allow_errors=True)) == 0


def test_a_missing_path_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=r"\[not-found\]"):
        load_pack_sync(tmp_path / "nope")


def test_load_pack_needs_a_path() -> None:
    with pytest.raises(ValueError, match="load_pack\\(\\) needs at least one tool file"):
        load_pack_sync()


# --- assertion helpers -------------------------------------------------------------------


def _failed_call() -> ToolCall:
    return ToolCall(
        tool_name="fetch",
        tool_call_id="c1",
        params={},
        result=ToolResult.from_text("HTTPError: 503", details={"status": 503}, is_error=True),
        updates=tuple(ToolResult.from_text(f"try {n}") for n in range(1, 8)),
    )


def test_assert_ok_shows_the_error_text_details_and_last_updates() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_ok(_failed_call())

    assert str(caught.value) == (
        "tool 'fetch' returned an error result, expected success:\n"
        "  is_error: True\n"
        "  text:\n"
        "    HTTPError: 503\n"
        "  details:\n"
        "    {'status': 503}\n"
        "  updates: 7 (the last 5 shown)\n"
        "    [3] 'try 3'\n"
        "    [4] 'try 4'\n"
        "    [5] 'try 5'\n"
        "    [6] 'try 6'\n"
        "    [7] 'try 7'"
    )


def test_helpers_return_what_they_were_given_so_checks_chain() -> None:
    result = ToolResult.from_text("all good")
    call = _failed_call()

    assert assert_ok(result) is result
    assert assert_text(result, "good") is result
    assert assert_error(call, match=r"\b503\b") is call


def test_assert_error_on_success_and_on_other_text() -> None:
    with pytest.raises(AssertionError, match="the tool succeeded, expected an error result:"):
        assert_error(ToolResult.from_text("fine"))
    with pytest.raises(AssertionError, match="the error text of tool 'fetch' does not match '404'"):
        assert_error(_failed_call(), match="404")


def test_assert_text_names_every_missing_piece() -> None:
    result = ToolResult.from_text("alpha beta")

    with pytest.raises(AssertionError) as caught:
        assert_text(result, contains=["alpha", "gamma", "delta"], match=r"^beta")

    assert str(caught.value).splitlines()[0] == (
        "unexpected text from the tool: it does not contain 'gamma';"
        " it does not contain 'delta'; it does not match '^beta'"
    )
    with pytest.raises(TypeError, match=r"needs contains=\.\.\. or match="):
        assert_text(result)


def test_assert_cancelled_distinguishes_aborts_from_timeouts() -> None:
    aborted = ToolResult.from_text(
        "tool 'x' was cancelled: stop",
        is_error=True,
        details={"cancelled": True, "timed_out": False},
    )

    assert assert_cancelled(aborted, timed_out=False) is aborted
    with pytest.raises(AssertionError, match="was cancelled, but expected a timeout"):
        assert_cancelled(aborted, timed_out=True)
    with pytest.raises(
        AssertionError, match="cancellation text of the tool does not match 'later'"
    ):
        assert_cancelled(aborted, match="later")
    with pytest.raises(AssertionError, match=r"was not cancelled \(no error result with"):
        assert_cancelled(_failed_call())


def test_long_text_is_clipped_and_other_content_named() -> None:
    result = ToolResult(
        content=(TextContent(text="x" * 2500), ImageContent(data="AA==", mime_type="image/png")),
        structured_content={"k": 1},
        is_error=True,
    )

    shown = describe_outcome(result)

    assert "... [500 more characters]" in shown
    assert "  other content: image" in shown
    assert "  structured_content:\n    {'k': 1}" in shown


def test_helpers_reject_what_is_not_a_result() -> None:
    with pytest.raises(
        TypeError, match="assert_ok\\(\\) needs a ToolCall or a ToolResult, got str"
    ):
        assert_ok("done")  # type: ignore[type-var]


def test_a_scripted_abort_is_named_in_failure_messages() -> None:
    call = _pack().call_sync("ticker", {"n": 9, "pause": 0.01}, abort_after_updates=1)

    with pytest.raises(AssertionError, match=r"(?m)^  aborted by the test after 1 update\(s\)$"):
        assert_ok(call)


def test_file_urls_are_accepted_as_pack_paths(tmp_path: Path) -> None:
    _write(tmp_path / "where.py", GOOD)

    pack = load_pack_sync((tmp_path / "where.py").as_uri())

    assert pack.names == ("where",)


def test_the_package_exports_exactly_its_all() -> None:
    import customtools.testing as testing

    assert set(testing.__all__) <= set(dir(testing))
    assert all(getattr(testing, name) is not None for name in testing.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        testing.nothing_here  # noqa: B018
