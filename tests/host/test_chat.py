"""The tool-call state machine (chat reducer): checklist items 14-21."""

from __future__ import annotations

from typing import Any

import pytest

from customtools.host import reduce_chat, tool_calls

T = "turn-1"
CLIENT = {"kind": "client", "clientId": "ide"}


def chat() -> dict[str, Any]:
    return {
        "turns": [],
        "status": 8,
        "modifiedAt": "x",
        "activeTurn": {"id": T, "message": {"text": "hi"}, "responseParts": []},
    }


def run(state: Any, *actions: dict[str, Any]) -> Any:
    for action in actions:
        state = reduce_chat(state, {"turnId": T, "toolCallId": "tc", **action}, clock=lambda: 0)
    return state


def start(**extra: Any) -> dict[str, Any]:
    return {
        "type": "chat/toolCallStart",
        "toolName": "runTests",
        "displayName": "Run tests",
        **extra,
    }


READY_RUNNING = {
    "type": "chat/toolCallReady",
    "invocationMessage": "Run",
    "toolInput": "{}",
    "confirmed": "not-needed",
}
READY_PENDING = {"type": "chat/toolCallReady", "invocationMessage": "Run?", "toolInput": "{}"}
COMPLETE = {"type": "chat/toolCallComplete", "result": {"success": True, "pastTenseMessage": "Ran"}}


def call(state: Any) -> dict[str, Any]:
    calls = tool_calls(state)
    assert len(calls) == 1
    return dict(calls[0])


def test_item14_start_appends_streaming_part() -> None:
    state = run(chat(), start(contributor=CLIENT))
    assert call(state) == {
        "toolCallId": "tc",
        "toolName": "runTests",
        "displayName": "Run tests",
        "contributor": CLIENT,
        "status": "streaming",
    }


def test_item14_start_without_active_turn_or_wrong_turn_is_identity() -> None:
    idle = {"turns": [], "status": 1}
    assert reduce_chat(idle, {**start(), "turnId": T, "toolCallId": "tc"}) is idle
    state = chat()
    assert reduce_chat(state, {**start(), "turnId": "other", "toolCallId": "tc"}) is state


def test_item15_delta_concatenates_only_while_streaming() -> None:
    delta = {"type": "chat/toolCallDelta", "content": '{"a"'}
    state = run(chat(), start(), delta, {**delta, "content": ": 1}"})
    assert call(state)["partialInput"] == '{"a": 1}'
    running = run(state, READY_RUNNING)
    assert run(running, delta) is running


def test_item16_ready_with_confirmed_runs_without_it_waits() -> None:
    running = run(chat(), start(), READY_RUNNING)
    assert call(running)["status"] == "running"
    assert call(running)["confirmed"] == "not-needed"
    pending = run(chat(), start(), READY_PENDING)
    assert call(pending)["status"] == "pending-confirmation"
    assert pending["status"] == 24  # InputNeeded while a call waits for the user
    again = run(running, READY_PENDING)
    assert call(again)["status"] == "pending-confirmation"


def test_item16_ready_from_other_status_is_identity() -> None:
    pending = run(chat(), start(), READY_PENDING)
    assert run(pending, READY_RUNNING) is pending


def test_item17_confirmed_approved_runs_with_edited_input() -> None:
    state = run(
        chat(),
        start(),
        READY_PENDING,
        {
            "type": "chat/toolCallConfirmed",
            "approved": True,
            "confirmed": "user-action",
            "editedToolInput": '{"edited": true}',
        },
    )
    assert call(state)["status"] == "running"
    assert call(state)["toolInput"] == '{"edited": true}'


def test_item17_confirmed_denied_cancels_with_reason() -> None:
    state = run(
        chat(),
        start(),
        READY_PENDING,
        {"type": "chat/toolCallConfirmed", "approved": False, "reason": "denied"},
    )
    assert call(state)["status"] == "cancelled"
    assert call(state)["reason"] == "denied"


def test_item17_confirmed_outside_pending_confirmation_is_identity() -> None:
    running = run(chat(), start(), READY_RUNNING)
    confirm = {"type": "chat/toolCallConfirmed", "approved": False, "reason": "denied"}
    assert run(running, confirm) is running


def test_item18_complete_from_running_spreads_the_result() -> None:
    state = run(
        chat(),
        start(),
        READY_RUNNING,
        {
            "type": "chat/toolCallComplete",
            "result": {
                "success": False,
                "pastTenseMessage": "Failed",
                "content": [{"type": "text", "text": "x"}],
                "error": {"message": "boom"},
            },
        },
    )
    tc = call(state)
    assert tc["status"] == "completed"
    assert (tc["success"], tc["pastTenseMessage"], tc["error"]) == (
        False,
        "Failed",
        {"message": "boom"},
    )
    assert tc["content"] == [{"type": "text", "text": "x"}]


def test_item18_complete_from_pending_confirmation_defaults_not_needed() -> None:
    tc = call(run(chat(), start(), READY_PENDING, COMPLETE))
    assert (tc["status"], tc["confirmed"]) == ("completed", "not-needed")


def test_item18_complete_with_result_confirmation_waits() -> None:
    state = run(chat(), start(), READY_RUNNING, {**COMPLETE, "requiresResultConfirmation": True})
    assert call(state)["status"] == "pending-result-confirmation"


@pytest.mark.parametrize("setup", ["streaming", "completed", "cancelled"])
def test_item18_complete_from_other_statuses_is_identity(setup: str) -> None:
    steps = {
        "streaming": [start()],
        "completed": [start(), READY_RUNNING, COMPLETE],
        "cancelled": [
            start(),
            READY_PENDING,
            {"type": "chat/toolCallConfirmed", "approved": False, "reason": "skipped"},
        ],
    }
    state = run(chat(), *steps[setup])
    assert run(state, COMPLETE) is state


def test_item19_result_denied_cancels_and_content_changed_replaces() -> None:
    waiting = run(chat(), start(), READY_RUNNING, {**COMPLETE, "requiresResultConfirmation": True})
    denied = run(waiting, {"type": "chat/toolCallResultConfirmed", "approved": False})
    assert (call(denied)["status"], call(denied)["reason"]) == ("cancelled", "result-denied")
    running = run(chat(), start(), READY_RUNNING)
    first = run(running, {"type": "chat/toolCallContentChanged", "content": [{"type": "a"}]})
    second = run(first, {"type": "chat/toolCallContentChanged", "content": [{"type": "b"}]})
    assert call(second)["content"] == [{"type": "b"}]
    assert run(waiting, {"type": "chat/toolCallContentChanged", "content": []}) is waiting


@pytest.mark.parametrize("end", ["chat/turnComplete", "chat/turnCancelled", "chat/error"])
def test_item20_ending_a_turn_skips_every_unfinished_call(end: str) -> None:
    state = chat()
    for n, steps in enumerate([[], [READY_RUNNING], [READY_PENDING], [READY_RUNNING, COMPLETE]]):
        state = run(
            state, *[{**s, "toolCallId": f"tc{n}"} for s in [start(contributor=CLIENT), *steps]]
        )
    state = reduce_chat(
        state, {"type": end, "turnId": T, "error": {"message": "x"}}, clock=lambda: 9999
    )
    parts = state["turns"][0]["responseParts"]
    statuses = [(p["toolCall"]["status"], p["toolCall"].get("reason")) for p in parts]
    assert statuses == [("cancelled", "skipped")] * 3 + [("completed", None)]
    assert parts[0]["toolCall"]["invocationMessage"] == ""
    assert all(p["toolCall"]["contributor"] == CLIENT for p in parts)
    assert state["modifiedAt"] == "1970-01-01T00:00:09.999Z"
    assert "activeTurn" not in state


def test_item21_contributor_and_meta_survive_and_action_meta_overrides_only_when_present() -> None:
    state = run(chat(), start(contributor=CLIENT, _meta={"m": 1}), READY_RUNNING)
    assert (call(state)["contributor"], call(state)["_meta"]) == (CLIENT, {"m": 1})
    state = run(state, {**COMPLETE, "_meta": {"m": 2}})
    assert (call(state)["contributor"], call(state)["_meta"]) == (CLIENT, {"m": 2})


def test_result_fields_cannot_overwrite_the_call_identity() -> None:
    state = run(
        chat(),
        start(contributor=CLIENT),
        READY_RUNNING,
        {
            "type": "chat/toolCallComplete",
            "result": {
                "success": True,
                "pastTenseMessage": "x",
                "toolCallId": "evil",
                "status": "running",
            },
        },
    )
    assert (call(state)["toolCallId"], call(state)["status"]) == ("tc", "completed")
