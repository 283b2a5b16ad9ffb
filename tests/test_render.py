"""Rendering hooks and their fallbacks."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from customtools import _render
from customtools._content import (
    EmbeddedResource,
    ExtensionContent,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
)
from customtools._render import (
    COLLAPSED_LINES,
    MAX_ARGS,
    MAX_VALUE_CHARS,
    PLAIN_THEME,
    RenderOptions,
    Theme,
    format_call,
    format_result,
    render_call,
    render_result,
)
from customtools._tool import CustomTool

LOGGER = "customtools.render"


def _noop(*_: Any) -> None:
    return None


def _tool(name: str = "read_file", **hooks: Any) -> CustomTool:
    return CustomTool(name=name, execute=_noop, **hooks)


class TagTheme:
    """A theme that makes styling visible in assertions."""

    def fg(self, color: str, text: str) -> str:
        return f"<{color}>{text}</{color}>"

    def bold(self, text: str) -> str:
        return f"<b>{text}</b>"


@pytest.fixture(autouse=True)
def _forget_warnings() -> Iterator[None]:
    _render._warned.clear()
    yield
    _render._warned.clear()


def _records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER]


# ---------------------------------------------------------------- hooks present


def test_render_call_hook_gets_args_and_theme_exactly() -> None:
    got: list[tuple[Any, ...]] = []
    args = {"path": "a.py"}
    theme = TagTheme()
    widget = object()

    def hook(*received: Any) -> Any:
        got.append(received)
        return widget

    assert render_call(_tool(render_call=hook), args, theme) is widget
    assert len(got) == 1
    assert got[0][0] is args
    assert got[0][1] is theme
    assert len(got[0]) == 2


def test_render_result_hook_gets_result_options_theme_and_args() -> None:
    got: list[tuple[Any, ...]] = []
    result = ToolResult.from_text("ok")
    options = RenderOptions(expanded=True, is_partial=True, spinner_frame=7)
    args = {"path": "a.py"}

    def hook(*received: Any) -> str:
        got.append(received)
        return "drawn"

    tool = _tool(render_result=hook)
    assert render_result(tool, result, options, PLAIN_THEME, args) == "drawn"
    assert render_result(tool, result, options) == "drawn"
    assert got[0] == (result, options, PLAIN_THEME, args)
    assert got[0][0] is result
    assert got[0][1] is options
    assert got[0][3] is args
    assert got[1] == (result, options, PLAIN_THEME, None)  # args always passed


def test_hooks_may_return_any_non_none_value() -> None:
    tool = _tool(render_call=lambda a, t: "", render_result=lambda r, o, t, a: 0)
    assert render_call(tool, {"x": 1}) == ""
    assert render_result(tool, ToolResult.from_text("t"), RenderOptions()) == 0


# ---------------------------------------------------------------- fallbacks


def test_missing_hooks_fall_back_to_default_text() -> None:
    tool = _tool()
    assert (
        render_call(tool, {"path": "src/a.py", "limit": 10}) == 'read_file path="src/a.py" limit=10'
    )
    assert render_result(tool, ToolResult.from_text("hello"), RenderOptions()) == "hello"


def test_fallback_call_uses_the_label_in_bold() -> None:
    tool = CustomTool(name="read_file", label="Read", execute=_noop)
    assert render_call(tool, {"path": "x"}, TagTheme()) == '<b>Read</b> path="x"'


def test_none_from_a_hook_falls_back_without_logging(caplog: pytest.LogCaptureFixture) -> None:
    tool = _tool(render_call=lambda a, t: None, render_result=lambda r, o, t, a: None)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert render_call(tool, {"n": 1}) == "read_file n=1"
        assert render_result(tool, ToolResult.from_text("x"), RenderOptions()) == "x"
    assert _records(caplog) == []


def test_raising_hook_falls_back_and_logs_once(caplog: pytest.LogCaptureFixture) -> None:
    def broken_call(args: Any, theme: Theme) -> str:
        raise ZeroDivisionError("division by zero in renderer")

    def broken_result(result: Any, options: Any, theme: Any, args: Any) -> str:
        raise KeyError("details")

    tool = _tool("flaky", render_call=broken_call, render_result=broken_result)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        for _ in range(5):
            assert render_call(tool, {"a": 1}) == "flaky a=1"
            assert render_result(tool, ToolResult.from_text("t"), RenderOptions()) == "t"
    records = _records(caplog)
    assert len(records) == 2  # once per (tool, hook), not once per frame
    first, second = records
    assert first.levelno == logging.WARNING
    assert "'flaky'" in first.getMessage()
    assert "render_call" in first.getMessage()
    assert "ZeroDivisionError" in first.getMessage()
    assert first.exc_info is not None
    assert isinstance(first.exc_info[1], ZeroDivisionError)
    assert "render_result" in second.getMessage()


def test_failures_are_remembered_per_tool_name(caplog: pytest.LogCaptureFixture) -> None:
    def broken(args: Any, theme: Theme) -> str:
        raise RuntimeError("x")

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        render_call(_tool("one", render_call=broken), {})
        render_call(_tool("two", render_call=broken), {})
        render_call(_tool("one", render_call=broken), {})
    assert ["'one'" in r.getMessage() for r in _records(caplog)] == [True, False]


def test_remembered_failures_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    def broken(args: Any, theme: Theme) -> str:
        raise RuntimeError("x")

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for i in range(_render._MAX_WARNED + 50):
            render_call(_tool(f"t{i}", render_call=broken), {})
    assert len(_render._warned) == _render._MAX_WARNED
    assert ("t0", "render_call") not in _render._warned  # the oldest was forgotten
    assert (f"t{_render._MAX_WARNED + 49}", "render_call") in _render._warned


def test_async_hook_falls_back_and_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    async def hook(args: Any, theme: Theme) -> str:
        return "never"

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert render_call(_tool("asyncy", render_call=hook), {}) == "asyncy"
        gc.collect()  # a leaked coroutine would warn "never awaited" (an error under pytest)
    records = _records(caplog)
    assert len(records) == 1
    assert "must be sync" in records[0].getMessage()


# ---------------------------------------------------------------- call fallback format


def test_no_args_shows_just_the_label() -> None:
    assert format_call(_tool(), {}) == "read_file"
    assert format_call(_tool(), None) == "read_file"


def test_values_are_compact_json() -> None:
    line = format_call(
        _tool(),
        {"s": 'say "hi"\n', "n": None, "b": True, "f": 1.5, "l": [1, "a"], "d": {"k": 2}},
    )
    assert line == 'read_file s="say \\"hi\\"\\n" n=null b=true f=1.5 l=[1,"a"] d={"k":2}'


def test_long_values_are_truncated() -> None:
    line = format_call(_tool(), {"content": "x" * 10_000, "items": list(range(10_000))})
    content, items = line.split(" ")[1:]
    assert content.startswith('content="xxx')
    assert content.endswith("…")
    assert len(content) == len("content=") + MAX_VALUE_CHARS
    assert items.startswith("items=[0,1,2")
    assert items.endswith("…")
    assert len(items) <= len("items=") + MAX_VALUE_CHARS


def test_many_args_are_counted_not_listed() -> None:
    line = format_call(_tool(), {f"k{i}": i for i in range(MAX_ARGS + 3)})
    assert line.endswith(f"k{MAX_ARGS - 1}={MAX_ARGS - 1} …(+3 more)")
    assert f"k{MAX_ARGS}=" not in line


def test_odd_keys_are_quoted() -> None:
    assert format_call(_tool(), {"a key": 1, "ok_key": 2}) == 'read_file "a key"=1 ok_key=2'


def test_hostile_values_stay_bounded() -> None:
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    line = format_call(
        _tool(),
        {"deep": deep, "cyclic": cyclic, "huge": 10**5000, "nan": float("nan"), "obj": object()},
    )
    assert "deep=[[[[[…]]]]]" in line
    assert 'cyclic={"self":{"self":' in line
    assert "huge=<int of 16610 bits>" in line
    assert "nan=nan" in line
    assert "obj=<object object at" in line
    assert len(line) < 400


def test_control_characters_in_args_are_escaped() -> None:
    line = format_call(_tool(), {"s": "a\x1b[2Jb\x9bc\ud800"})
    assert "\x1b" not in line
    assert "\x9b" not in line
    assert line == 'read_file s="a\\u001b[2Jb\\u009bc\\ud800"'


def test_non_mapping_args_are_shown_compactly() -> None:
    assert format_call(_tool(), "raw text") == 'read_file "raw text"'
    assert format_call(_tool(), [1, 2]) == "read_file [1,2]"


# ---------------------------------------------------------------- result fallback format


def test_error_marker() -> None:
    result = ToolResult.from_text("file not found: src/a.py", is_error=True)
    assert format_result(result, RenderOptions()) == "[error] file not found: src/a.py"
    assert format_result(result, RenderOptions(), TagTheme()) == (
        "<error>[error]</error> file not found: src/a.py"
    )


def test_partial_marker_and_spinner() -> None:
    result = ToolResult.from_text("scanning...")
    assert format_result(result, RenderOptions(is_partial=True)) == "[partial] scanning..."
    frames = [
        format_result(result, RenderOptions(is_partial=True, spinner_frame=i)).split(" ")[0]
        for i in range(5)
    ]
    assert frames == ["|", "/", "-", "\\", "|"]
    assert format_result(result, RenderOptions(is_partial=True), TagTheme()) == (
        "<muted>[partial]</muted> scanning..."
    )


def test_error_and_partial_together() -> None:
    result = ToolResult.from_text("x", is_error=True)
    assert format_result(result, RenderOptions(is_partial=True)) == "[error] [partial] x"


def test_spinner_ignored_for_final_results() -> None:
    result = ToolResult.from_text("done")
    assert format_result(result, RenderOptions(spinner_frame=3)) == "done"


def test_empty_result_says_so() -> None:
    assert format_result(ToolResult(), RenderOptions()) == "(no output)"
    assert format_result(ToolResult(), RenderOptions(), TagTheme()) == "<muted>(no output)</muted>"


def test_collapsed_shows_the_first_lines_and_counts_the_rest() -> None:
    text = "\n".join(f"line {i}" for i in range(25))
    result = ToolResult.from_text(text)
    collapsed = format_result(result, RenderOptions())
    lines = collapsed.split("\n")
    assert lines[:COLLAPSED_LINES] == [f"line {i}" for i in range(COLLAPSED_LINES)]
    assert lines[COLLAPSED_LINES:] == [f"… (+{25 - COLLAPSED_LINES} lines)"]
    assert format_result(result, RenderOptions(expanded=True)) == text


def test_collapsed_at_exactly_the_limit_adds_no_count() -> None:
    text = "\n".join(str(i) for i in range(COLLAPSED_LINES))
    assert format_result(ToolResult.from_text(text), RenderOptions()) == text
    one_more = text + "\nlast"
    assert format_result(ToolResult.from_text(one_more), RenderOptions()).endswith("… (+1 line)")


def test_collapsed_cuts_very_long_lines() -> None:
    out = format_result(ToolResult.from_text("y" * 100_000), RenderOptions())
    assert len(out) == _render._MAX_LINE_CHARS
    assert out.endswith("…")
    full = format_result(ToolResult.from_text("y" * 100_000), RenderOptions(expanded=True))
    assert len(full) == 100_000


def test_result_control_characters_are_escaped_but_newlines_and_tabs_kept() -> None:
    result = ToolResult.from_text("\x1b[31mred\x1b[0m\r\nnext\tcol\rover")
    out = format_result(result, RenderOptions())
    assert out == "\\u001b[31mred\\u001b[0m\nnext\tcol\\u000dover"
    expanded = format_result(result, RenderOptions(expanded=True))
    assert expanded == out


def test_non_text_blocks_get_placeholders() -> None:
    result = ToolResult(
        content=(
            TextContent(text="see:"),
            ImageContent(data="AAAA", mime_type="image/png"),
            ResourceLink(uri="file:///a.txt", name="a"),
            EmbeddedResource(resource={"uri": "file:///b.txt", "text": "b"}),
            EmbeddedResource(resource={"blob": "AA"}),
            ExtensionContent(type="_acme.chart", data={"type": "_acme.chart"}),
        )
    )
    assert format_result(result, RenderOptions(expanded=True)).split("\n") == [
        "see:",
        "[image image/png]",
        "[resource_link file:///a.txt]",
        "[resource file:///b.txt]",
        "[resource]",
        "[_acme.chart]",
    ]


def test_render_result_fallback_matches_format_result() -> None:
    result = ToolResult.from_text("boom", is_error=True)
    options = RenderOptions(is_partial=True)
    assert render_result(_tool(), result, options) == format_result(result, options)


# ---------------------------------------------------------------- value types


def test_render_options_defaults_and_frozen() -> None:
    options = RenderOptions()
    assert (options.expanded, options.is_partial, options.spinner_frame) == (False, False, None)
    with pytest.raises(AttributeError):
        options.expanded = True  # type: ignore[misc]


def test_plain_theme_changes_nothing_and_satisfies_the_protocol() -> None:
    assert PLAIN_THEME.fg("error", "x") == "x"
    assert PLAIN_THEME.bold("y") == "y"
    assert isinstance(PLAIN_THEME, Theme)
    assert isinstance(TagTheme(), Theme)


# ---------------------------------------------------------------- hooks' BaseExceptions (H1, M5)


class _Outcome(BaseException):
    """Like pytest's OutcomeException: a BaseException a test helper raises."""


class _BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("boom")


@pytest.mark.parametrize(
    "exc", [SystemExit(1), GeneratorExit(), _Outcome("skip"), _BadStr()], ids=type
)
def test_a_hook_raising_any_base_exception_falls_back(
    exc: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_call(args: Any, theme: Theme) -> str:
        raise exc

    def broken_result(result: Any, options: Any, theme: Any, args: Any) -> str:
        raise exc

    tool = _tool("flaky", render_call=broken_call, render_result=broken_result)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert render_call(tool, {"a": 1}) == "flaky a=1"
        assert render_result(tool, ToolResult.from_text("t"), RenderOptions()) == "t"
    messages = [r.getMessage() for r in _records(caplog)]
    assert len(messages) == 2
    assert type(exc).__name__ in messages[0]


def test_an_unprintable_exception_is_logged_as_such(caplog: pytest.LogCaptureFixture) -> None:
    def broken_call(args: Any, theme: Theme) -> str:
        raise _BadStr

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert render_call(_tool("flaky", render_call=broken_call), {}) == "flaky"
    assert "__str__ failed" in _records(caplog)[0].getMessage()


def test_keyboard_interrupt_in_a_hook_is_the_users_and_propagates() -> None:
    def broken_call(args: Any, theme: Theme) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        render_call(_tool("flaky", render_call=broken_call), {})


def test_fallback_survives_values_and_keys_whose_repr_and_str_fail() -> None:
    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

        def __str__(self) -> str:
            raise RuntimeError("no str")

        def __hash__(self) -> int:
            return 1

    text = format_call(_tool("t"), {"v": Hostile(), Hostile(): 1})
    assert text.startswith("t v=<")  # the stand-in "<...Hostile object (repr failed)>"
    assert text.endswith("=1")
