"""Async tests, cancellation and session events for a tool pack (docs/testing.md)."""

from __future__ import annotations

import anyio
import pytest

from customtools import AbortController
from customtools.testing import ToolPack, assert_cancelled, assert_ok


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.anyio
async def test_countdown_on_both_event_loops(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("countdown", {"steps": 2, "interval": 0})

    assert_ok(call)
    assert len(call.updates) == 2


@pytest.mark.anyio
async def test_countdown_stops_after_the_second_update(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("countdown", {"steps": 20, "interval": 0.01}, abort_after_updates=2)

    assert_cancelled(call, timed_out=False)
    assert call.update_texts == ["countdown: step 1/20", "countdown: step 2/20"]


@pytest.mark.anyio
async def test_a_stop_button(tool_pack: ToolPack, abort_controller: AbortController) -> None:
    async with anyio.create_task_group() as group:

        async def press_stop() -> None:
            await anyio.sleep(0.05)
            abort_controller.abort("user pressed stop")

        group.start_soon(press_stop)
        call = await tool_pack.call(
            "countdown", {"steps": 20, "interval": 0.02}, signal=abort_controller.signal
        )

    assert_cancelled(call, match="user pressed stop")


@pytest.mark.anyio
async def test_a_slow_call_times_out(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("countdown", {"steps": 5, "interval": 5}, timeout=0.05)

    assert_cancelled(call, timed_out=True)


@pytest.mark.anyio
async def test_a_new_session_forgets_the_notes(tool_pack: ToolPack) -> None:
    await tool_pack.call("notes", {"action": "add", "text": "remember me"})

    await tool_pack.send_session_event("start")

    call = await tool_pack.call("notes", {"action": "list"})
    assert call.text == "no notes"
