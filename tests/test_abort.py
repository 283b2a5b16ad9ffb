"""AbortController and AbortSignal."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from customtools._abort import AbortController, AbortSignal
from customtools._errors import ToolAbortedError, ToolTimeoutError


def test_new_signal_is_not_aborted() -> None:
    signal = AbortController().signal
    assert not signal.aborted
    assert signal.reason is None
    signal.raise_if_aborted()


def test_abort_sets_reason_once_and_later_aborts_are_ignored() -> None:
    controller = AbortController()
    controller.abort("first")
    controller.abort("second")
    assert controller.signal.aborted
    assert controller.signal.reason == "first"


def test_listeners_run_once_with_the_reason_and_a_raising_one_does_not_stop_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    controller = AbortController()
    calls: list[Any] = []

    def broken(reason: Any) -> None:
        raise RuntimeError("listener bug")

    controller.signal.add_listener(calls.append)
    controller.signal.add_listener(broken)
    controller.signal.add_listener(lambda r: calls.append(("second", r)))
    with caplog.at_level(logging.ERROR, logger="customtools.abort"):
        controller.abort("why")
        controller.abort("again")
    assert calls == ["why", ("second", "why")]
    assert "listener bug" in caplog.text


def test_removed_listener_is_not_called_and_removing_twice_is_fine() -> None:
    controller = AbortController()
    calls: list[Any] = []
    controller.signal.add_listener(calls.append)
    controller.signal.remove_listener(calls.append)
    controller.signal.remove_listener(calls.append)
    controller.abort()
    assert calls == []


def test_raise_if_aborted_raises_the_reason_when_it_is_an_exception() -> None:
    controller = AbortController()
    controller.abort(ToolTimeoutError("took too long"))
    with pytest.raises(TimeoutError, match="took too long"):
        controller.signal.raise_if_aborted()


def test_raise_if_aborted_wraps_other_reasons() -> None:
    controller = AbortController()
    controller.abort("user stop")
    with pytest.raises(ToolAbortedError, match="user stop") as info:
        controller.signal.raise_if_aborted()
    assert info.value.reason == "user stop"


def test_any_follows_the_first_signal_to_abort() -> None:
    a, b = AbortController(), AbortController()
    combined = AbortSignal.any([a.signal, b.signal])
    assert not combined.aborted
    b.abort("b went")
    assert combined.aborted
    assert combined.reason == "b went"


def test_any_of_an_already_aborted_signal_is_aborted() -> None:
    a = AbortController()
    a.abort("early")
    assert AbortSignal.any([a.signal, AbortController().signal]).reason == "early"


@pytest.mark.anyio
async def test_wait_returns_when_aborted() -> None:
    controller = AbortController()
    woke: list[bool] = []

    async def waiter() -> None:
        await controller.signal.wait()
        woke.append(True)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            await anyio.sleep(0.01)
            assert not woke
            controller.abort()
    assert woke == [True]
    await controller.signal.wait()  # already aborted: returns at once


def test_repr_shows_state() -> None:
    controller = AbortController()
    assert "active" in repr(controller)
    controller.abort("x")
    assert "aborted" in repr(controller.signal)
