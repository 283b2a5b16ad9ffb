"""The tool-call state machine of a chat, as a pure reducer over the chat's wire state.

A tool call lives as a ``toolCall`` response part of the chat's ``activeTurn`` and moves
through these statuses (every transition is an action; anything else is an identity no-op)::

    toolCallStart ──> streaming ──toolCallDelta──> streaming (partialInput grows)
                         │
               toolCallReady (confirmed set) ───────────> running ──toolCallContentChanged──┐
                         │                                  │  ^                             │
               toolCallReady (no confirmed)                 │  └─────────────────────────────┘
                         v                                  │
                 pending-confirmation ──confirmed(approved)─┘     toolCallComplete
                         │ └─confirmed(denied)──> cancelled          │
                         └──────toolCallComplete──────────┐          v
                                                          ├──> completed
                      pending-result-confirmation <───────┘   (or pending-result-confirmation
                         │ approved -> completed; denied -> cancelled (result-denied))

Ending the turn (``chat/turnComplete``, ``chat/turnCancelled``, ``chat/error``) turns every
unfinished call into ``cancelled`` with reason ``skipped``, whoever owns it. ``contributor`` and
``_meta`` travel through every transition; an action's ``_meta`` replaces the stored one only
when present. The chat's ``status`` activity bits are recomputed (``InputNeeded`` while a call
waits for confirmation).

Input requests (``chat/inputRequested``, ``chat/inputAnswerChanged``, ``chat/inputCompleted``)
live in the chat's ``inputRequests``: a request is upserted by ``id`` (its answer drafts kept
unless the new request carries ``answers``), an answer is set or (without ``answer``) removed,
and a completed request is removed; the list disappears when it empties, and ending the turn
clears it. Any outstanding request makes the chat ``InputNeeded``.

The reducer never mutates its input and never raises; malformed actions are no-ops.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

__all__ = ["PENDING_STATUSES", "TERMINAL_STATUSES", "reduce_chat", "tool_calls"]

logger = logging.getLogger("customtools.host")

IDLE, ERROR, IN_PROGRESS, INPUT_NEEDED, IS_READ = 1, 2, 8, 24, 32
_ACTIVITY_MASK = 31
TERMINAL_STATUSES = frozenset({"completed", "cancelled"})
"""Statuses a tool call never leaves."""
PENDING_STATUSES = frozenset({"streaming", "pending-confirmation", "running"})
"""Statuses in which a client-owned call is still waiting on its client."""
_AWAITING_INPUT = frozenset({"pending-confirmation", "pending-result-confirmation"})
_BASE_KEYS = ("toolCallId", "toolName", "displayName", "contributor", "_meta")

State = Mapping[str, Any]
Clock = Callable[[], float]


def _iso(ms: float) -> str:
    stamp = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _active_turn(state: State, turn_id: Any) -> Mapping[str, Any] | None:
    turn = state.get("activeTurn")
    if isinstance(turn, Mapping) and isinstance(turn_id, str) and turn.get("id") == turn_id:
        return turn
    return None


def _parts(turn: Mapping[str, Any]) -> list[Any]:
    parts = turn.get("responseParts")
    return list(parts) if isinstance(parts, list) else []


def _tool_call_of(part: Any) -> Mapping[str, Any] | None:
    if isinstance(part, Mapping) and part.get("kind") == "toolCall":
        tc = part.get("toolCall")
        if isinstance(tc, Mapping):
            return tc
    return None


def tool_calls(state: State) -> list[Mapping[str, Any]]:
    """Return the tool calls of ``state``'s active turn, in order."""
    turn = state.get("activeTurn")
    if not isinstance(turn, Mapping):
        return []
    return [tc for part in _parts(turn) if (tc := _tool_call_of(part)) is not None]


def _status(state: State, terminal: int | None = None) -> int:
    raw = state.get("status")
    current = raw if isinstance(raw, int) and not isinstance(raw, bool) else 0
    requests = state.get("inputRequests")
    if terminal is not None:
        activity = terminal
    elif (isinstance(requests, list) and requests) or any(
        tc.get("status") in _AWAITING_INPUT for tc in tool_calls(state)
    ):
        activity = INPUT_NEEDED
    elif isinstance(state.get("activeTurn"), Mapping):
        activity = IN_PROGRESS
    else:
        activity = IDLE
    return (current & ~_ACTIVITY_MASK) | activity


def _refresh(state: State) -> State:
    status = _status(state)
    return state if status == state.get("status") else {**state, "status": status}


def _base(tc: Mapping[str, Any], action: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: tc[k] for k in _BASE_KEYS if tc.get(k) is not None}
    if action.get("_meta") is not None:
        out["_meta"] = action["_meta"]
    return out


def _put(out: dict[str, Any], **values: Any) -> dict[str, Any]:
    out.update({k: v for k, v in values.items() if v is not None})
    return out


def _update(state: State, action: Mapping[str, Any], updater: Callable[..., Any]) -> State:
    turn = _active_turn(state, action.get("turnId"))
    if turn is None:
        return state
    found = False
    parts = _parts(turn)
    for index, part in enumerate(parts):
        tc = _tool_call_of(part)
        if tc is None or tc.get("toolCallId") != action.get("toolCallId"):
            continue
        updated = updater(tc, action)
        if updated is not tc:
            found = True
            parts[index] = {**part, "toolCall": updated}
    if not found:
        return state
    return {**state, "activeTurn": {**turn, "responseParts": parts}}


def _start(state: State, action: Mapping[str, Any]) -> State:
    turn = _active_turn(state, action.get("turnId"))
    if turn is None or not isinstance(action.get("toolCallId"), str):
        return state
    tc = _put({}, **{k: action.get(k) for k in _BASE_KEYS})
    tc["status"] = "streaming"
    parts = [*_parts(turn), {"kind": "toolCall", "toolCall": tc}]
    return {**state, "activeTurn": {**turn, "responseParts": parts}}


def _delta(tc: Mapping[str, Any], action: Mapping[str, Any]) -> Any:
    content = action.get("content")
    if tc.get("status") != "streaming" or not isinstance(content, str):
        return tc
    previous = tc.get("partialInput")
    out = {**tc, "partialInput": (previous if isinstance(previous, str) else "") + content}
    if "_meta" in action:
        out["_meta"] = action["_meta"]
    if action.get("invocationMessage") is not None:
        out["invocationMessage"] = action["invocationMessage"]
    return out


def _ready(tc: Mapping[str, Any], action: Mapping[str, Any]) -> Any:
    if tc.get("status") not in ("streaming", "running"):
        return tc
    out = _base(tc, action)
    _put(out, invocationMessage=action.get("invocationMessage"), toolInput=action.get("toolInput"))
    if action.get("confirmed"):
        return {"status": "running", **out, "confirmed": action["confirmed"]}
    _put(
        out,
        confirmationTitle=action.get("confirmationTitle"),
        edits=action.get("edits"),
        editable=action.get("editable"),
        options=action.get("options") or None,
    )
    return {"status": "pending-confirmation", **out}


def _selected(tc: Mapping[str, Any], option_id: Any) -> Any:
    options = tc.get("options")
    if not option_id or not isinstance(options, list):
        return None
    return next((o for o in options if isinstance(o, Mapping) and o.get("id") == option_id), None)


def _confirmed(tc: Mapping[str, Any], action: Mapping[str, Any]) -> Any:
    if tc.get("status") != "pending-confirmation":
        return tc
    out = _put(_base(tc, action), invocationMessage=tc.get("invocationMessage"))
    selected = _selected(tc, action.get("selectedOptionId"))
    if action.get("approved"):
        tool_input = action.get("editedToolInput")
        _put(
            out,
            toolInput=tool_input if tool_input is not None else tc.get("toolInput"),
            confirmed=action.get("confirmed"),
            selectedOption=selected,
        )
        return {"status": "running", **out}
    _put(
        out,
        toolInput=tc.get("toolInput"),
        reason=action.get("reason"),
        reasonMessage=action.get("reasonMessage"),
        userSuggestion=action.get("userSuggestion"),
        selectedOption=selected,
    )
    return {"status": "cancelled", **out}


def _complete(tc: Mapping[str, Any], action: Mapping[str, Any]) -> Any:
    result = action.get("result")
    if tc.get("status") not in ("running", "pending-confirmation") or not isinstance(
        result, Mapping
    ):
        return tc
    running = tc.get("status") == "running"
    out = _put(
        _base(tc, action),
        invocationMessage=tc.get("invocationMessage"),
        toolInput=tc.get("toolInput"),
        confirmed=tc.get("confirmed") if running else "not-needed",
        selectedOption=tc.get("selectedOption") if running else None,
    )
    # The result's fields are spread into the state, but never over the call's identity.
    out.update({k: v for k, v in result.items() if k not in (*_BASE_KEYS, "status")})
    status = (
        "pending-result-confirmation" if action.get("requiresResultConfirmation") else ("completed")
    )
    return {"status": status, **out}


def _result_confirmed(tc: Mapping[str, Any], action: Mapping[str, Any]) -> Any:
    if tc.get("status") != "pending-result-confirmation":
        return tc
    out = _put(
        _base(tc, action),
        invocationMessage=tc.get("invocationMessage"),
        toolInput=tc.get("toolInput"),
    )
    if action.get("approved"):
        _put(
            out,
            confirmed=tc.get("confirmed"),
            selectedOption=tc.get("selectedOption"),
            success=tc.get("success"),
            pastTenseMessage=tc.get("pastTenseMessage"),
            content=tc.get("content"),
            structuredContent=tc.get("structuredContent"),
            error=tc.get("error"),
        )
        return {"status": "completed", **out}
    _put(out, reason="result-denied", selectedOption=tc.get("selectedOption"))
    return {"status": "cancelled", **out}


def _content_changed(tc: Mapping[str, Any], action: Mapping[str, Any]) -> Any:
    if tc.get("status") != "running" or not isinstance(action.get("content"), list):
        return tc
    out = {**tc, "content": action["content"]}
    if "_meta" in action:
        out["_meta"] = action["_meta"]
    return out


def _skip(part: Any) -> Any:
    tc = _tool_call_of(part)
    if tc is None or tc.get("status") in TERMINAL_STATUSES:
        return part
    streaming = tc.get("status") == "streaming"
    message = tc.get("invocationMessage")
    out = _put(
        {k: tc[k] for k in _BASE_KEYS if tc.get(k) is not None},
        invocationMessage="" if streaming and message is None else message,
        toolInput=None if streaming else tc.get("toolInput"),
    )
    return {"kind": "toolCall", "toolCall": {"status": "cancelled", **out, "reason": "skipped"}}


def _end_turn(state: State, action: Mapping[str, Any], clock: Clock) -> State:
    turn = _active_turn(state, action.get("turnId"))
    if turn is None:
        return state
    kind = action["type"]
    turn_state = {"chat/turnComplete": "complete", "chat/turnCancelled": "cancelled"}.get(
        kind, "error"
    )
    finished = _put(
        {
            "id": turn.get("id"),
            "message": turn.get("message"),
            "responseParts": [_skip(p) for p in _parts(turn)],
        },
        usage=turn.get("usage"),
        state=turn_state,
        error=action.get("error") if turn_state == "error" else None,
    )
    turns = state.get("turns")
    rest = {k: v for k, v in state.items() if k not in ("activeTurn", "inputRequests")}
    nxt: dict[str, Any] = {
        **rest,
        "turns": [*(turns if isinstance(turns, list) else []), finished],
        "modifiedAt": _iso(clock()),
    }
    nxt["status"] = _status(nxt, ERROR if turn_state == "error" else None)
    return nxt


def _turn_started(state: State, action: Mapping[str, Any], clock: Clock) -> State:
    if not isinstance(action.get("turnId"), str):
        return state
    turn = {"id": action["turnId"], "message": action.get("message"), "responseParts": []}
    nxt = {**state, "activeTurn": turn}
    nxt["status"] = _status(nxt) & ~IS_READ
    nxt["modifiedAt"] = _iso(clock())
    return nxt


def _requests(state: State) -> list[Any]:
    requests = state.get("inputRequests")
    return list(requests) if isinstance(requests, list) else []


def _with_requests(state: State, requests: list[Any]) -> State:
    nxt = {k: v for k, v in state.items() if k != "inputRequests"}
    if requests:
        nxt["inputRequests"] = requests
    return _refresh(nxt)


def _request_index(requests: list[Any], request_id: Any) -> int | None:
    return next(
        (i for i, r in enumerate(requests) if isinstance(r, Mapping) and r.get("id") == request_id),
        None,
    )


def _input_requested(state: State, action: Mapping[str, Any]) -> State:
    request = action.get("request")
    if not isinstance(request, Mapping) or not isinstance(request.get("id"), str):
        return state
    requests = _requests(state)
    index = _request_index(requests, request["id"])
    if index is None:
        requests.append(dict(request))
    else:
        previous = requests[index]
        new = dict(request)
        if "answers" not in new and isinstance(previous.get("answers"), Mapping):
            new["answers"] = previous["answers"]  # drafts survive a replaced request
        requests[index] = new
    return _with_requests(state, requests)


def _input_answer_changed(state: State, action: Mapping[str, Any]) -> State:
    requests = _requests(state)
    index = _request_index(requests, action.get("requestId"))
    question = action.get("questionId")
    if index is None or not isinstance(question, str):
        return state
    request = requests[index]
    answers = dict(request.get("answers") or {})
    if action.get("answer") is None:
        answers.pop(question, None)
    else:
        answers[question] = action["answer"]
    updated = {k: v for k, v in request.items() if k != "answers"}
    if answers:
        updated["answers"] = answers
    requests[index] = updated
    return _with_requests(state, requests)


def _input_completed(state: State, action: Mapping[str, Any]) -> State:
    requests = _requests(state)
    index = _request_index(requests, action.get("requestId"))
    if index is None:
        return state
    del requests[index]
    return _with_requests(state, requests)


_INPUT = {
    "chat/inputRequested": _input_requested,
    "chat/inputAnswerChanged": _input_answer_changed,
    "chat/inputCompleted": _input_completed,
}

_TOOL_CALL = {
    "chat/toolCallDelta": (_delta, False),
    "chat/toolCallReady": (_ready, True),
    "chat/toolCallConfirmed": (_confirmed, True),
    "chat/toolCallComplete": (_complete, True),
    "chat/toolCallResultConfirmed": (_result_confirmed, True),
    "chat/toolCallContentChanged": (_content_changed, False),
}
_END_TURN = ("chat/turnComplete", "chat/turnCancelled", "chat/error")


def reduce_chat(state: State, action: Mapping[str, Any], *, clock: Clock | None = None) -> State:
    """Apply one chat action (turn start/end, tool-call and input-request actions) to a chat state.

    Args:
        state: the chat state as wire JSON (never mutated).
        action: the action as wire JSON.
        clock: milliseconds since the epoch, for ``modifiedAt`` (defaults to wall time).

    Returns:
        The next state, or ``state`` itself when the action changes nothing.
    """
    now = clock or (lambda: time.time() * 1000)
    kind = action.get("type") if isinstance(action, Mapping) else None
    if not isinstance(kind, str):
        logger.warning("ignoring a chat action without a string 'type': %r", action)
        return state
    if kind == "chat/toolCallStart":
        return _start(state, action)
    if kind in _TOOL_CALL:
        updater, refresh = _TOOL_CALL[kind]
        nxt = _update(state, action, updater)
        return _refresh(nxt) if refresh else nxt
    if kind in _INPUT:
        nxt = _INPUT[kind](state, action)
        return nxt if nxt is state else {**nxt, "modifiedAt": _iso(now())}
    if kind in _END_TURN:
        return _end_turn(state, action, now)
    if kind == "chat/turnStarted":
        return _turn_started(state, action, now)
    logger.warning("ignoring %r: not a chat action this reducer handles", kind)
    return state
