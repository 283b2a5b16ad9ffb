"""ToolContext."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from customtools._context import DEFAULT_CONTEXT, ToolContext
from customtools.loading import NoOpUIContext


def test_session_is_a_read_only_copy() -> None:
    session = {"messages": [1]}
    ctx = ToolContext(session=session)
    session["other"] = 2
    assert "other" not in ctx.session
    with pytest.raises(TypeError):
        ctx.session["x"] = 1  # type: ignore[index]


def test_abort_calls_the_host_and_swallows_its_errors(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[Any] = []
    ToolContext(on_abort=calls.append).abort("why")
    assert calls == ["why"]

    def broken(reason: Any) -> None:
        raise RuntimeError("host bug")

    with caplog.at_level(logging.ERROR, logger="customtools.context"):
        ToolContext(on_abort=broken).abort()
    assert "host bug" in caplog.text


def test_default_context_is_headless() -> None:
    assert not DEFAULT_CONTEXT.has_ui
    assert isinstance(DEFAULT_CONTEXT.ui, NoOpUIContext)
    DEFAULT_CONTEXT.abort("nothing to abort")  # logs at debug, never raises


@pytest.mark.parametrize("caller", [["alice"], {"id": 1}, 5, b"alice"])
def test_a_caller_that_is_not_a_name_is_refused_where_it_is_given(caller: object) -> None:
    """A list as the caller made a cached tool's call raise "unhashable type" out of
    ``execute`` (which promises a result); an int was kept as a cache key. The context says
    what it wants instead, when it is built."""
    with pytest.raises(TypeError, match=r"caller=\.\.\.\) must be a str or None, not "):
        ToolContext(caller=caller)  # type: ignore[arg-type]
    assert ToolContext(caller="alice").caller == "alice"
    assert ToolContext().caller is None
