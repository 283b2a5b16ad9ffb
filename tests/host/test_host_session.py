"""Host duties around active clients and client tool calls: checklist items 22-25, section 5."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from customtools.host import (
    ActionRejectedError,
    ClientPluginCustomization,
    HostSession,
    JsonRpcError,
    PluginCustomization,
    SkillCustomization,
    check_create_session_client,
    deny_unknown_tool,
    tool_calls,
)

CHAT, CHAT2, T = "chat:/1", "chat:/2", "turn-1"


def client(cid: str, *tools: str, plugins: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"clientId": cid, "tools": [{"name": t} for t in tools]}
    if plugins is not None:
        entry["customizations"] = plugins
    return entry


def host_with_clients(log: list[tuple[str, Any]] | None = None) -> HostSession:
    host = HostSession(
        "session:/1",
        on_action=(lambda ch, a: log.append((ch, a))) if log is not None else None,
        clock=lambda: 0,
    )
    for cid, tools in (("ide", ("runTests", "open")), ("web", ("runTests", "share"))):
        host.dispatch_from_client(
            {"type": "session/activeClientSet", "activeClient": client(cid, *tools)}, client_id=cid
        )
    for chat in (CHAT, CHAT2):
        host.dispatch(
            {"type": "chat/turnStarted", "turnId": T, "message": {"text": "go"}}, chat=chat
        )
    return host


def ready(host: HostSession, chat: str, call_id: str, confirmed: str | None = "not-needed") -> None:
    action: dict[str, Any] = {
        "type": "chat/toolCallReady",
        "turnId": T,
        "toolCallId": call_id,
        "invocationMessage": "Run",
        "toolInput": "{}",
    }
    if confirmed:
        action["confirmed"] = confirmed
    host.dispatch(action, chat=chat)


def status(host: HostSession, chat: str, call_id: str) -> dict[str, Any]:
    return dict(next(c for c in tool_calls(host.chats[chat]) if c["toolCallId"] == call_id))


def test_client_call_lifecycle_start_delta_ready_content_complete() -> None:
    host = host_with_clients()
    owner = host.start_tool_call(CHAT, turn_id=T, tool_call_id="tc", tool_name="share")
    assert owner == "web"
    host.dispatch(
        {"type": "chat/toolCallDelta", "turnId": T, "toolCallId": "tc", "content": "{}"}, chat=CHAT
    )
    assert status(host, CHAT, "tc")["partialInput"] == "{}"
    ready(host, CHAT, "tc")
    base = {"turnId": T, "toolCallId": "tc"}
    host.dispatch_from_client(
        {
            "type": "chat/toolCallContentChanged",
            **base,
            "content": [{"type": "text", "text": "50%"}],
        },
        client_id="web",
        chat=CHAT,
    )
    host.dispatch_from_client(
        {
            "type": "chat/toolCallComplete",
            **base,
            "result": {"success": True, "pastTenseMessage": "Shared"},
        },
        client_id="web",
        chat=CHAT,
    )
    assert status(host, CHAT, "tc")["status"] == "completed"


def test_item22_non_owner_completion_and_content_are_rejected_owner_accepted() -> None:
    host = host_with_clients()
    host.start_tool_call(CHAT, turn_id=T, tool_call_id="tc", tool_name="runTests")
    ready(host, CHAT, "tc")
    base = {"turnId": T, "toolCallId": "tc"}
    complete = {
        "type": "chat/toolCallComplete",
        **base,
        "result": {"success": True, "pastTenseMessage": "x"},
    }
    for action in (complete, {"type": "chat/toolCallContentChanged", **base, "content": []}):
        with pytest.raises(ActionRejectedError, match="belongs to client 'ide'") as info:
            host.dispatch_from_client(action, client_id="web", chat=CHAT)
        echo = info.value.envelope(channel=CHAT, server_seq=7, client_seq=3)
        assert echo["origin"] == {"clientId": "web", "clientSeq": 3}
        assert "belongs to client 'ide'" in echo["rejectionReason"]
    assert status(host, CHAT, "tc")["status"] == "running"
    host.dispatch_from_client(complete, client_id="ide", chat=CHAT)
    assert status(host, CHAT, "tc")["status"] == "completed"


def test_item22_completing_a_server_tool_call_is_rejected() -> None:
    host = host_with_clients()
    assert host.start_tool_call(CHAT, turn_id=T, tool_call_id="s", tool_name="bash") is None
    ready(host, CHAT, "s")
    with pytest.raises(ActionRejectedError, match="not a client tool call"):
        host.dispatch_from_client(
            {
                "type": "chat/toolCallComplete",
                "turnId": T,
                "toolCallId": "s",
                "result": {"success": True, "pastTenseMessage": "x"},
            },
            client_id="ide",
            chat=CHAT,
        )


@pytest.mark.parametrize(
    "kind",
    [
        "session/customizationUpdated",
        "chat/toolCallStart",
        "session/customizationsChanged",
        "session/serverToolsChanged",
    ],
)
def test_item23_client_dispatched_server_only_actions_are_rejected(kind: str) -> None:
    host = host_with_clients()
    with pytest.raises(ActionRejectedError, match="dispatched by the host only"):
        host.dispatch_from_client({"type": kind}, client_id="ide")


def test_item23_a_client_cannot_publish_or_remove_another_client() -> None:
    host = host_with_clients()
    with pytest.raises(ActionRejectedError, match="cannot publish an active-client entry"):
        host.dispatch_from_client(
            {"type": "session/activeClientSet", "activeClient": client("web")}, client_id="ide"
        )
    with pytest.raises(ActionRejectedError, match="cannot remove another client"):
        host.dispatch_from_client(
            {"type": "session/activeClientRemoved", "clientId": "web"}, client_id="ide"
        )


def test_item24_create_session_with_another_client_id_is_invalid_params() -> None:
    check_create_session_client({"clientId": "ide", "tools": []}, "ide")
    with pytest.raises(JsonRpcError, match="does not match") as info:
        check_create_session_client({"clientId": "web", "tools": []}, "ide")
    assert info.value.code == -32602


def test_item25_removing_a_client_fails_its_calls_in_every_chat_then_cleans_up() -> None:
    log: list[tuple[str, Any]] = []
    host = host_with_clients(log)
    host.dispatch(
        {
            "type": "session/customizationUpdated",
            "customization": {
                "type": "plugin",
                "id": "ide-plugin",
                "uri": "virtual://p",
                "name": "p",
                "enabled": True,
                "clientId": "ide",
            },
        }
    )
    host.start_tool_call(CHAT, turn_id=T, tool_call_id="streaming", tool_name="open")
    host.start_tool_call(CHAT, turn_id=T, tool_call_id="running", tool_name="runTests")
    ready(host, CHAT, "running")
    host.start_tool_call(CHAT2, turn_id=T, tool_call_id="pending", tool_name="open")
    ready(host, CHAT2, "pending", confirmed=None)
    host.start_tool_call(CHAT2, turn_id=T, tool_call_id="others", tool_name="share")
    log.clear()
    host.remove_client("ide")
    kinds = [
        (ch, a["type"], a.get("toolCallId") or a.get("id") or a.get("clientId")) for ch, a in log
    ]
    assert kinds == [
        (CHAT, "chat/toolCallReady", "streaming"),
        (CHAT, "chat/toolCallComplete", "streaming"),
        (CHAT, "chat/toolCallComplete", "running"),
        (CHAT2, "chat/toolCallComplete", "pending"),
        ("session:/1", "session/activeClientRemoved", "ide"),
        ("session:/1", "session/customizationRemoved", "ide-plugin"),
    ]
    for chat, call_id in ((CHAT, "streaming"), (CHAT, "running"), (CHAT2, "pending")):
        tc = status(host, chat, call_id)
        assert (tc["status"], tc["success"]) == ("completed", False)
        assert "Client ide disconnected before completing" in tc["error"]["message"]
    assert status(host, CHAT2, "others")["status"] == "streaming"  # web's call untouched
    # runTests is also offered by 'web': the model is told it may call it again.
    assert "may call it again" in status(host, CHAT, "running")["content"][0]["text"]
    assert "ide" not in host.tools
    assert host.state["customizations"] == []


def test_cancelling_a_turn_cancels_every_unfinished_call() -> None:
    host = host_with_clients()
    host.start_tool_call(CHAT, turn_id=T, tool_call_id="a", tool_name="open")
    host.start_tool_call(CHAT, turn_id=T, tool_call_id="b", tool_name="bash")
    ready(host, CHAT, "b")
    host.cancel_turn(CHAT, T)
    parts = host.chats[CHAT]["turns"][0]["responseParts"]
    assert [p["toolCall"]["status"] for p in parts] == ["cancelled", "cancelled"]


def test_unknown_tool_is_denied_and_running_unknown_tool_fails() -> None:
    pending = {"toolCallId": "x", "toolName": "gone", "status": "pending-confirmation"}
    action = deny_unknown_tool(pending, turn_id=T)
    assert action is not None
    assert (action["type"], action["approved"], action["reason"]) == (
        "chat/toolCallConfirmed",
        False,
        "denied",
    )
    running = deny_unknown_tool({**pending, "status": "running"}, turn_id=T)
    assert running is not None
    assert running["type"] == "chat/toolCallComplete"
    assert running["result"]["success"] is False
    assert deny_unknown_tool({**pending, "status": "completed"}, turn_id=T) is None


def _published(cid: str, nonce: str | None) -> dict[str, Any]:
    plugin: dict[str, Any] = {
        "type": "plugin",
        "id": f"{cid}-p",
        "uri": "virtual://w",
        "name": "Workspace",
        "enabled": True,
    }
    if nonce is not None:
        plugin["nonce"] = nonce
    return client(cid, plugins=[plugin])


def _parsed(plugin: ClientPluginCustomization) -> PluginCustomization:
    return PluginCustomization(
        id="ignored",
        uri=plugin.uri,
        name=plugin.name,
        children=(SkillCustomization(id="s", uri="virtual://w/s", name="s"),),
    )


@pytest.mark.anyio
async def test_client_plugin_is_parsed_once_per_nonce() -> None:
    host = HostSession("session:/1")
    calls: list[str] = []

    def parse(plugin: ClientPluginCustomization) -> PluginCustomization:
        calls.append(plugin.id)
        return _parsed(plugin)

    for nonce in ("n1", "n1", "n2"):
        host.dispatch_from_client(
            {"type": "session/activeClientSet", "activeClient": _published("ide", nonce)},
            client_id="ide",
        )
        assert await host.sync_client_plugins("ide", parse)
    assert calls == ["ide-p", "ide-p"]
    entry = host.state["customizations"][0]
    assert (entry["id"], entry["clientId"], entry["children"][0]["name"]) == ("ide-p", "ide", "s")


@pytest.mark.anyio
async def test_late_parse_cannot_republish_a_removed_clients_plugins() -> None:
    host = HostSession("session:/1")
    host.dispatch_from_client(
        {"type": "session/activeClientSet", "activeClient": _published("ide", "n1")},
        client_id="ide",
    )
    started, release = anyio.Event(), anyio.Event()

    async def slow_parse(plugin: ClientPluginCustomization) -> PluginCustomization:
        started.set()
        await release.wait()
        return _parsed(plugin)

    outcome: list[bool] = []
    async with anyio.create_task_group() as tg:

        async def sync() -> None:
            outcome.append(await host.sync_client_plugins("ide", slow_parse))

        tg.start_soon(sync)
        await started.wait()
        host.remove_client("ide")
        release.set()
    assert outcome == [False]
    assert not host.state.get("customizations")
    # Rejoining with the same nonce parses again: the stale parse left no cache entry.
    host.dispatch_from_client(
        {"type": "session/activeClientSet", "activeClient": _published("ide", "n1")},
        client_id="ide",
    )
    assert await host.sync_client_plugins("ide", _parsed)
    assert [c["id"] for c in host.state["customizations"]] == ["ide-p"]


def test_a_client_removing_itself_gets_the_same_cleanup_as_a_host_removal() -> None:
    log: list[tuple[str, Any]] = []
    host = host_with_clients(log)
    host.dispatch(
        {
            "type": "session/customizationUpdated",
            "customization": {
                "type": "plugin",
                "id": "web-plugin",
                "uri": "virtual://w",
                "name": "w",
                "enabled": True,
                "clientId": "web",
            },
        }
    )
    host.start_tool_call(CHAT, turn_id=T, tool_call_id="call", tool_name="share")
    ready(host, CHAT, "call")
    revision = host.revision("web")
    log.clear()
    leave = {"type": "session/activeClientRemoved", "clientId": "web"}
    host.dispatch_from_client(leave, client_id="web")
    assert [(a["type"]) for _, a in log] == [
        "chat/toolCallComplete",
        "session/activeClientRemoved",
        "session/customizationRemoved",
    ]
    assert log[1][1] is leave  # the client's own action is the one applied and forwarded
    call = status(host, CHAT, "call")
    assert (call["status"], call["success"]) == ("completed", False)
    assert "Client web left the session before completing" in call["error"]["message"]
    assert "web" not in host.tools
    assert [c["clientId"] for c in host.state["activeClients"]] == ["ide"]
    assert host.state["customizations"] == []
    assert host.revision("web") != revision  # a late plugin parse cannot publish for it
