"""countdown: streams one update per step, in order, and stops when aborted."""

from __future__ import annotations

import anyio
import pytest

from customtools import AbortController
from customtools.testing import ToolPack, assert_cancelled, assert_error, assert_ok, assert_text


def test_streams_one_update_per_step_in_order(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("countdown", {"steps": 4, "interval": 0, "label": "launch"})

    assert_ok(call)
    assert call.update_texts == [f"launch: step {n}/4" for n in range(1, 5)]
    assert [update.details for update in call.updates] == [
        {"step": n, "of": 4} for n in range(1, 5)
    ]
    assert call.text == "launch: finished 4 steps"
    assert call.details == {"steps": 4}


@pytest.mark.anyio
async def test_defaults_fill_the_label(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("countdown", {"steps": 2, "interval": 0})

    assert_text(assert_ok(call), "countdown: finished 2 steps")
    assert call.update_texts == ["countdown: step 1/2", "countdown: step 2/2"]


@pytest.mark.anyio
async def test_abort_after_some_updates_stops_the_countdown_midway(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("countdown", {"steps": 50, "interval": 0.01}, abort_after_updates=3)

    assert_cancelled(call, match="after 3 update", timed_out=False)
    assert call.update_texts == [f"countdown: step {n}/50" for n in range(1, 4)]
    assert call.aborted_by == "after 3 update(s)"


@pytest.mark.anyio
async def test_the_test_can_abort_through_its_own_controller(
    tool_pack: ToolPack, abort_controller: AbortController
) -> None:
    seen = anyio.Event()

    def on_update(partial: object) -> None:
        seen.set()

    async with anyio.create_task_group() as group:

        async def stop_after_first_update() -> None:
            await seen.wait()
            abort_controller.abort("user pressed stop")

        group.start_soon(stop_after_first_update)
        call = await tool_pack.call(
            "countdown",
            {"steps": 50, "interval": 0.05},
            signal=abort_controller.signal,
            on_update=on_update,
        )

    assert_cancelled(call, match="user pressed stop")
    assert 1 <= len(call.updates) < 50
    assert call.aborted_by is None


@pytest.mark.anyio
async def test_a_timeout_cancels_a_long_countdown(tool_pack: ToolPack) -> None:
    call = await tool_pack.call("countdown", {"steps": 100, "interval": 5}, timeout=0.05)

    assert_cancelled(call, match="timed out", timed_out=True)
    assert call.update_texts == ["countdown: step 1/100"]


def test_steps_out_of_range_are_rejected_before_the_tool_runs(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("countdown", {"steps": 0})

    assert_error(call, match=r"/steps: 0 is less than the minimum of 1")
    assert call.updates == ()
