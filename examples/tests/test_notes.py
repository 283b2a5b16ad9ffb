"""notes: state lives in the factory's closure and on_session resets it."""

from __future__ import annotations

import pytest

from customtools import SessionEvent
from customtools.testing import ToolPack, assert_error, assert_ok


def test_keeps_notes_between_calls(tool_pack: ToolPack) -> None:
    tool_pack.call_sync("notes", {"action": "add", "text": "buy milk"})
    tool_pack.call_sync("notes", {"action": "add", "text": "call Ada"})

    call = assert_ok(tool_pack.call_sync("notes", {"action": "list"}))

    assert call.text == "1. buy milk\n2. call Ada"
    assert call.details == {"notes": ["buy milk", "call Ada"]}


@pytest.mark.anyio
async def test_a_start_event_resets_the_notes(tool_pack: ToolPack) -> None:
    await tool_pack.call("notes", {"action": "add", "text": "old session"})

    failures = await tool_pack.send_session_event("start")

    assert failures == ()
    call = await tool_pack.call("notes", {"action": "list"})
    assert call.text == "no notes"


@pytest.mark.parametrize("reason", ["switch", "branch", "tree"])
def test_switching_or_branching_resets_the_notes(tool_pack: ToolPack, reason: str) -> None:
    tool_pack.call_sync("notes", {"action": "add", "text": "kept?"})

    tool_pack.send_session_event_sync(reason)

    assert tool_pack.call_sync("notes", {"action": "list"}).details == {"notes": []}


def test_other_session_events_keep_the_notes(tool_pack: ToolPack) -> None:
    tool_pack.call_sync("notes", {"action": "add", "text": "survives"})

    tool_pack.send_session_event_sync(
        SessionEvent(reason="auto_compaction_start", trigger="threshold", action="context-full")
    )
    tool_pack.send_session_event_sync("shutdown")

    assert tool_pack.call_sync("notes", {"action": "list"}).text == "1. survives"


def test_clear_empties_the_list(tool_pack: ToolPack) -> None:
    tool_pack.call_sync("notes", {"action": "add", "text": "x"})

    assert tool_pack.call_sync("notes", {"action": "clear"}).text == "no notes"


def test_add_without_text_is_an_error(tool_pack: ToolPack) -> None:
    assert_error(tool_pack.call_sync("notes", {"action": "add"}), match="needs 'text'")


def test_each_test_gets_a_fresh_pack(tool_pack: ToolPack) -> None:
    # The fixture loads the pack again for every test, so no note leaks in from another test.
    assert tool_pack.call_sync("notes", {"action": "list"}).text == "no notes"
