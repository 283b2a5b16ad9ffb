"""``ctx.ask`` maps to the protocol's chat input requests in a HostSession."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from customtools import CustomTool, Type
from customtools._abort import AbortController
from customtools.host import HostSession
from customtools.host._input import answer_values, input_request
from customtools.talkback import TalkBackError, check_form_schema

pytestmark = pytest.mark.anyio

CHAT = "ahp://chat/1"
INPUT_NEEDED, ACTIVITY = 24, 31
Validate = Callable[[str, str, Any], None]

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Who are you?", "maxLength": 20},
        "email": {"type": "string", "format": "email"},
        "count": {"type": "integer", "minimum": 1, "maximum": 9, "default": 2},
        "ratio": {"type": "number"},
        "sure": {"type": "boolean", "default": False},
        "color": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
    },
    "required": ["name", "count"],
}


async def ask_once(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    timeout = params.get("timeout")
    try:
        answer = await ctx.ask("Tell me about you", FORM, timeout=timeout)
    except TalkBackError as exc:
        return f"error {exc.code}"
    return json.dumps({"action": answer.action, "values": dict(answer.values)}, sort_keys=True)


TOOL = CustomTool(
    name="survey",
    description="Ask the user a few questions.",
    parameters=Type.Object({"timeout": Type.Optional(Type.Number())}),
    execute=ask_once,
)


class Host:
    """A session with one turn running, recording every action it applies."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.session = HostSession(
            "ahp://session/1", on_action=lambda ch, action: self.seen.append(dict(action))
        )
        self.session.dispatch(
            {"type": "chat/turnStarted", "turnId": "t1", "userMessage": {"text": "hi"}}, chat=CHAT
        )
        self.adapter = self.session.adapter(TOOL, CHAT, turn_id="t1")

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [a for a in self.seen if a["type"] == kind]

    async def requested(self) -> dict[str, Any]:
        while not self.of("chat/inputRequested"):
            await anyio.sleep(0.005)
        request: dict[str, Any] = self.of("chat/inputRequested")[-1]["request"]
        return request

    def complete(self, request_id: str, response: str, **extra: Any) -> None:
        self.session.dispatch_from_client(
            {"type": "chat/inputCompleted", "requestId": request_id, "response": response, **extra},
            client_id="ide",
            chat=CHAT,
        )

    @property
    def chat(self) -> Any:
        return self.session.chats[CHAT]


async def run_with(host: Host, client: Any, params: Any = None) -> str:
    out: list[str] = []

    async def call() -> None:
        result = await host.adapter.execute("tc1", params or {})
        out.append(result.text)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await client()
    return out[0]


def submitted(kind: str, value: Any) -> dict[str, Any]:
    return {"state": "submitted", "value": {"kind": kind, "value": value}}


async def test_an_accepted_answer_reaches_the_tool(validate_wire: Validate) -> None:
    host = Host()

    async def client() -> None:
        request = await host.requested()
        validate_wire("actions.schema.json", "ChatInputRequestedAction", host.seen[-1])
        assert host.chat["inputRequests"] == [request]
        assert host.chat["status"] & ACTIVITY == INPUT_NEEDED
        questions = {q["id"]: q for q in request["questions"]}
        assert list(questions) == list(FORM["properties"])
        assert request["message"] == "Tell me about you"
        assert questions["name"] == {
            "id": "name",
            "title": "Name",
            "message": "Who are you?",
            "required": True,
            "kind": "text",
            "max": 20,
        }
        assert questions["email"]["format"] == "email"
        assert questions["count"] == {
            "id": "count",
            "message": "count",
            "required": True,
            "kind": "integer",
            "min": 1,
            "max": 9,
            "defaultValue": 2,
        }
        assert questions["ratio"]["kind"] == "number"
        assert questions["sure"] == {
            "id": "sure",
            "message": "sure",
            "kind": "boolean",
            "defaultValue": False,
        }
        assert questions["color"]["kind"] == "single-select"
        assert questions["color"]["options"] == [
            {"id": "red", "label": "red"},
            {"id": "blue", "label": "blue", "recommended": True},
        ]
        assert questions["size"]["options"] == [
            {"id": "s", "label": "Small"},
            {"id": "l", "label": "Large"},
        ]
        assert questions["tags"]["kind"] == "multi-select"
        assert [o["id"] for o in questions["tags"]["options"]] == ["a", "b", "c"]
        answers = {
            "name": submitted("text", "Ada"),
            "email": submitted("text", "ada@example.com"),
            "count": submitted("number", 3),
            "ratio": submitted("number", 0.5),
            "sure": submitted("boolean", True),
            "color": submitted("selected", "red"),
            "size": submitted("selected", "l"),
            "tags": submitted("selected-many", ["a", "c"]),
        }
        completed = {
            "type": "chat/inputCompleted",
            "requestId": request["id"],
            "response": "accept",
            "answers": answers,
        }
        validate_wire("actions.schema.json", "ChatInputCompletedAction", completed)
        host.complete(request["id"], "accept", answers=answers)

    text = await run_with(host, client)
    assert json.loads(text) == {
        "action": "accept",
        "values": {
            "name": "Ada",
            "email": "ada@example.com",
            "count": 3,
            "ratio": 0.5,
            "sure": True,
            "color": "red",
            "size": "l",
            "tags": ["a", "c"],
        },
    }
    assert "inputRequests" not in host.chat
    assert host.chat["status"] & ACTIVITY != INPUT_NEEDED


async def test_synced_drafts_are_the_answers_when_completion_carries_none() -> None:
    host = Host()

    async def client() -> None:
        request = await host.requested()
        for question, answer in (
            ("name", {"state": "draft", "value": {"kind": "text", "value": "Bo"}}),
            ("count", submitted("number", 4)),
            ("ratio", {"state": "skipped"}),
        ):
            host.session.dispatch_from_client(
                {
                    "type": "chat/inputAnswerChanged",
                    "requestId": request["id"],
                    "questionId": question,
                    "answer": answer,
                },
                client_id="ide",
                chat=CHAT,
            )
        assert set(host.chat["inputRequests"][0]["answers"]) == {"name", "count", "ratio"}
        host.complete(request["id"], "accept", answers={"count": submitted("number", 5)})

    text = await run_with(host, client)
    values = json.loads(text)["values"]
    assert values["name"] == "Bo"
    assert values["count"] == 5  # the completion's answer replaces the synced one
    assert "ratio" not in values  # skipped


@pytest.mark.parametrize(
    ("response", "answers", "expected"),
    [
        ("decline", None, "decline"),
        ("cancel", None, "cancel"),
        ("accept", {"name": {"state": "skipped"}, "count": {"state": "skipped"}}, "decline"),
        ("whatever", None, "cancel"),
    ],
)
async def test_declined_skipped_and_cancelled_answers(
    response: str, answers: Any, expected: str
) -> None:
    host = Host()

    async def client() -> None:
        request = await host.requested()
        extra = {} if answers is None else {"answers": answers}
        host.complete(request["id"], response, **extra)

    text = await run_with(host, client)
    assert json.loads(text) == {"action": expected, "values": {}}
    assert "inputRequests" not in host.chat


async def test_answers_to_questions_never_asked_are_dropped() -> None:
    host = Host()

    async def client() -> None:
        request = await host.requested()
        answers = {
            "name": submitted("text", "Ada"),
            "count": submitted("number", 1),
            "__class__": submitted("text", "x"),
            "admin": submitted("boolean", True),
        }
        host.complete(request["id"], "accept", answers=answers)

    values = json.loads(await run_with(host, client))["values"]
    assert values == {"name": "Ada", "count": 1, "color": "blue", "sure": False}  # + defaults


async def test_a_client_cannot_ask_and_other_chats_do_not_answer() -> None:
    from customtools.host import ActionRejectedError

    host = Host()

    async def client() -> None:
        request = await host.requested()
        with pytest.raises(ActionRejectedError):
            host.session.dispatch_from_client(
                {"type": "chat/inputRequested", "request": {"id": "x", "message": "m"}},
                client_id="ide",
                chat=CHAT,
            )
        host.session.dispatch_from_client(
            {"type": "chat/inputCompleted", "requestId": request["id"], "response": "accept"},
            client_id="ide",
            chat="ahp://chat/other",
        )
        await anyio.sleep(0.02)
        assert host.chat["inputRequests"][0]["id"] == request["id"]  # still pending
        host.complete(request["id"], "decline")

    assert json.loads(await run_with(host, client))["action"] == "decline"


def sync_tool_execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    answer = ctx.ask_sync("Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    return f"{answer.action} {dict(answer.values)}"


async def test_a_sync_tool_asks_from_its_thread() -> None:
    host = Host()
    sync_tool = CustomTool(
        name="sure",
        description="Ask from a thread.",
        parameters=Type.Object({}),
        execute=sync_tool_execute,
    )
    host.adapter = host.session.adapter(sync_tool, CHAT, turn_id="t1")

    async def client() -> None:
        request = await host.requested()
        host.complete(request["id"], "accept", answers={"ok": submitted("boolean", True)})

    assert await run_with(host, client) == "accept {'ok': True}"


def test_the_schema_check_rejects_a_bad_kind(validate_wire: Validate) -> None:
    import jsonschema

    with pytest.raises(jsonschema.ValidationError):
        validate_wire(
            "actions.schema.json", "ChatInputQuestion", {"id": "q", "message": "m", "kind": "date"}
        )
    with pytest.raises(jsonschema.ValidationError):
        validate_wire(
            "actions.schema.json",
            "ChatInputCompletedAction",
            {"type": "chat/inputCompleted", "requestId": "r", "response": "maybe"},
        )


async def test_an_answer_that_breaks_the_form_is_an_invalid_answer() -> None:
    host = Host()

    async def client() -> None:
        request = await host.requested()
        host.complete(
            request["id"], "accept", answers={"name": submitted("text", "Ada")}
        )  # 'count' is required

    assert await run_with(host, client) == "error invalid-answer"


async def test_a_client_that_never_answers_times_out_and_the_request_is_withdrawn() -> None:
    host = Host()

    async def client() -> None:
        await host.requested()

    assert await run_with(host, client, {"timeout": 0.05}) == "error input-timeout"
    [withdrawn] = host.of("chat/inputCompleted")
    assert withdrawn["response"] == "cancel"
    assert "inputRequests" not in host.chat
    assert not host.session._inputs


async def test_cancelling_the_call_withdraws_a_pending_question() -> None:
    host = Host()
    controller = AbortController()
    out: list[Any] = []

    async def call() -> None:
        out.append(await host.adapter.execute("tc1", {}, signal=controller.signal))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            request = await host.requested()
            assert host.chat["status"] & ACTIVITY == INPUT_NEEDED
            controller.abort("user pressed stop")
    [result] = out
    assert result.is_error
    [withdrawn] = host.of("chat/inputCompleted")
    assert withdrawn == {
        "type": "chat/inputCompleted",
        "requestId": request["id"],
        "response": "cancel",
    }
    assert "inputRequests" not in host.chat
    assert not host.session._inputs
    host.complete(request["id"], "accept", answers={})  # a late answer changes nothing
    assert len(host.of("chat/inputCompleted")) == 2
    assert "inputRequests" not in host.chat


async def test_ending_the_turn_cancels_a_pending_question() -> None:
    host = Host()

    async def client() -> None:
        await host.requested()
        host.session.dispatch_from_client(
            {"type": "chat/turnCancelled", "turnId": "t1"}, client_id="ide", chat=CHAT
        )

    text = await run_with(host, client)
    assert json.loads(text) == {"action": "cancel", "values": {}}
    assert not host.of("chat/inputCompleted")  # the turn end already cleared the request


async def test_two_questions_at_once_are_answered_separately() -> None:
    host = Host()
    handler = host.session.input_handler(CHAT)
    from customtools.talkback import InputRequest

    form = check_form_schema({"type": "object", "properties": {"x": {"type": "string"}}})
    got: dict[str, Any] = {}

    async def ask(name: str) -> None:
        got[name] = await handler(InputRequest(message=name, schema=form))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "one")
            tg.start_soon(ask, "two")
            while len(host.of("chat/inputRequested")) < 2:
                await anyio.sleep(0.005)
            ids = {
                a["request"]["message"]: a["request"]["id"] for a in host.of("chat/inputRequested")
            }
            assert ids["one"] != ids["two"]
            host.complete(ids["two"], "accept", answers={"x": submitted("text", "2")})
            host.complete(ids["one"], "decline")
    assert got["one"].action == "decline"
    assert got["two"].action == "accept"
    assert dict(got["two"].values) == {"x": "2"}


async def test_a_context_from_the_session_asks_its_clients() -> None:
    host = Host()
    ctx = host.session.tool_context(CHAT, cwd="/tmp")
    assert ctx.can_ask
    assert ctx.cwd == "/tmp"

    async def client() -> None:
        request = await host.requested()
        host.complete(request["id"], "accept", answers={"ok": submitted("boolean", True)})

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client)
            answer = await ctx.ask(
                "Go?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            )
    assert answer.accepted
    assert dict(answer.values) == {"ok": True}


def test_the_request_validates_for_every_question_kind(validate_wire: Validate) -> None:
    request = input_request("r1", "m", check_form_schema(FORM))
    validate_wire("actions.schema.json", "ChatInputRequest", request)
    for question in request["questions"]:
        validate_wire("actions.schema.json", "ChatInputQuestion", question)


def test_malformed_answers_give_nothing() -> None:
    assert answer_values(None) == ({}, 0)
    assert answer_values(
        {
            "a": "x",
            "b": {"state": "submitted"},
            "c": {"state": "bogus", "value": {"kind": "text", "value": "v"}},
            "d": {"state": "skipped"},
            "e": {"state": "submitted", "value": {"kind": "text", "value": "ok"}},
        }
    ) == ({"e": "ok"}, 1)


@pytest.mark.parametrize(
    "action",
    [
        {"type": "chat/inputRequested"},
        {"type": "chat/inputRequested", "request": "not an object"},
        {"type": "chat/inputRequested", "request": {"message": "no id"}},
        {"type": "chat/inputAnswerChanged", "requestId": "r1", "questionId": 3},
        {"type": "chat/inputCompleted", "requestId": "missing", "response": "accept"},
    ],
)
def test_malformed_input_actions_change_nothing(action: dict[str, Any]) -> None:
    from customtools.host import reduce_chat

    state = {"status": 24, "inputRequests": [{"id": "r1", "message": "m"}]}
    assert reduce_chat(state, action, clock=lambda: 0) is state


def test_a_replaced_request_keeps_its_drafts_unless_it_brings_answers() -> None:
    from customtools.host import reduce_chat

    draft = {"q": {"state": "draft", "value": {"kind": "text", "value": "d"}}}
    state = {"inputRequests": [{"id": "r1", "message": "old", "answers": draft}]}
    kept = reduce_chat(
        state, {"type": "chat/inputRequested", "request": {"id": "r1", "message": "new"}}
    )
    assert kept["inputRequests"] == [{"id": "r1", "message": "new", "answers": draft}]
    assert kept["status"] & ACTIVITY == INPUT_NEEDED
    done = reduce_chat(
        kept, {"type": "chat/inputCompleted", "requestId": "r1", "response": "cancel"}
    )
    assert "inputRequests" not in done
    assert done["status"] & ACTIVITY != INPUT_NEEDED
