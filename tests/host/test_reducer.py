"""The session reducer: checklist items 7-13, plus a property test that it never raises."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from customtools.host import reduce_session


def plugin(
    pid: str,
    *,
    enabled: bool = True,
    children: list[Any] | None = None,
    client_id: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "plugin",
        "id": pid,
        "uri": f"https://p/{pid}",
        "name": pid,
        "enabled": enabled,
    }
    if children is not None:
        out["children"] = children
    if client_id is not None:
        out["clientId"] = client_id
    return out


def skill(sid: str) -> dict[str, Any]:
    return {"type": "skill", "id": sid, "uri": f"https://p#{sid}", "name": sid}


def mcp(mid: str) -> dict[str, Any]:
    return {
        "type": "mcpServer",
        "id": mid,
        "uri": "file:///m.json",
        "name": mid,
        "enabled": True,
        "state": {"kind": "starting"},
    }


def directory(did: str) -> dict[str, Any]:
    return {
        "type": "directory",
        "id": did,
        "uri": f"file:///{did}",
        "name": did,
        "enabled": True,
        "contents": "skill",
        "writable": True,
        "children": [skill("s9")],
    }


def session(**fields: Any) -> dict[str, Any]:
    return {
        "summary": {"resource": "s:/1"},
        "lifecycle": "ready",
        "activeClients": [],
        "chats": [],
        **fields,
    }


def test_item7_customizations_changed_replaces_even_with_empty() -> None:
    state = session(customizations=[plugin("a")])
    nxt = reduce_session(state, {"type": "session/customizationsChanged", "customizations": []})
    assert nxt["customizations"] == []
    nxt = reduce_session(
        state, {"type": "session/customizationsChanged", "customizations": [plugin("b")]}
    )
    assert [c["id"] for c in nxt["customizations"]] == ["b"]


def test_item8_toggle_without_list_returns_same_object() -> None:
    state = session()
    assert (
        reduce_session(state, {"type": "session/customizationToggled", "id": "a", "enabled": False})
        is state
    )


def test_item8_toggle_unknown_or_child_id_returns_same_object() -> None:
    state = session(customizations=[plugin("a", children=[skill("s1")])])
    for target in ("nope", "s1"):
        action = {"type": "session/customizationToggled", "id": target, "enabled": False}
        assert reduce_session(state, action) is state


@pytest.mark.parametrize("target", ["p", "d", "m"])
def test_item8_toggle_top_level_changes_only_that_enabled(target: str) -> None:
    entries = [plugin("p"), directory("d"), mcp("m")]
    state = session(customizations=entries)
    nxt = reduce_session(
        state, {"type": "session/customizationToggled", "id": target, "enabled": False}
    )
    for before, after in zip(entries, nxt["customizations"], strict=True):
        if before["id"] == target:
            assert after == {**before, "enabled": False}
        else:
            assert after is before
    assert state["customizations"][0]["enabled"] is True  # input untouched


def test_item9_updated_creates_list_replaces_in_place_and_appends() -> None:
    state = reduce_session(
        session(),
        {
            "type": "session/customizationUpdated",
            "customization": plugin("a", children=[skill("s")]),
        },
    )
    assert state["customizations"] == [plugin("a", children=[skill("s")])]
    state = reduce_session(
        state, {"type": "session/customizationUpdated", "customization": plugin("b")}
    )
    state = reduce_session(
        state, {"type": "session/customizationUpdated", "customization": plugin("a", enabled=False)}
    )
    assert [c["id"] for c in state["customizations"]] == ["a", "b"]
    assert state["customizations"][0] == plugin("a", enabled=False)  # children not merged


def test_item9_updated_with_a_child_id_appends_at_top_level() -> None:
    state = session(customizations=[plugin("a", children=[skill("s")])])
    nxt = reduce_session(
        state, {"type": "session/customizationUpdated", "customization": {**plugin("s")}}
    )
    assert [c["id"] for c in nxt["customizations"]] == ["a", "s"]


def test_item10_removed_top_level_cascades() -> None:
    state = session(customizations=[plugin("a", children=[skill("s")]), plugin("b")])
    nxt = reduce_session(state, {"type": "session/customizationRemoved", "id": "a"})
    assert nxt["customizations"] == [plugin("b")]


def test_item10_removed_child_goes_from_every_container() -> None:
    state = session(
        customizations=[
            plugin("a", children=[skill("s"), skill("t")]),
            plugin("b", children=[skill("s")]),
            plugin("c"),
        ]
    )
    nxt = reduce_session(state, {"type": "session/customizationRemoved", "id": "s"})
    assert nxt["customizations"] == [
        plugin("a", children=[skill("t")]),
        plugin("b", children=[]),
        plugin("c"),
    ]


def test_item10_removed_unknown_or_without_list_is_identity() -> None:
    state = session(customizations=[plugin("a", children=[skill("s")])])
    assert reduce_session(state, {"type": "session/customizationRemoved", "id": "x"}) is state
    bare = session()
    assert reduce_session(bare, {"type": "session/customizationRemoved", "id": "x"}) is bare


def test_item10_top_level_mcp_server_is_never_searched_for_children() -> None:
    odd = {**mcp("m"), "children": [skill("s")]}
    state = session(customizations=[odd])
    assert reduce_session(state, {"type": "session/customizationRemoved", "id": "s"}) is state


def test_item11_active_client_set_appends_then_replaces_in_place() -> None:
    state = session()
    for cid in ("ide", "web"):
        state = reduce_session(
            state,
            {
                "type": "session/activeClientSet",
                "activeClient": {"clientId": cid, "displayName": cid.upper(), "tools": []},
            },
        )
    state = reduce_session(
        state,
        {
            "type": "session/activeClientSet",
            "activeClient": {"clientId": "ide", "tools": [{"name": "open"}]},
        },
    )
    assert state["activeClients"] == [
        {"clientId": "ide", "tools": [{"name": "open"}]},
        {"clientId": "web", "displayName": "WEB", "tools": []},
    ]


def test_item12_active_client_removed_touches_nothing_else() -> None:
    client = {"clientId": "ide", "tools": []}
    state = session(activeClients=[client], customizations=[plugin("c", client_id="ide")])
    assert (
        reduce_session(state, {"type": "session/activeClientRemoved", "clientId": "other"}) is state
    )
    nxt = reduce_session(state, {"type": "session/activeClientRemoved", "clientId": "ide"})
    assert nxt["activeClients"] == []
    assert nxt["customizations"] is state["customizations"]


def test_item13_unknown_action_is_identity_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    state = session()
    with caplog.at_level(logging.WARNING, logger="customtools.host"):
        assert reduce_session(state, {"type": "session/somethingNew", "x": 1}) is state
    assert "session/somethingNew" in caplog.text


def test_legacy_active_client_tools_changed_patches_tools() -> None:
    state = session(activeClients=[{"clientId": "ide", "displayName": "IDE", "tools": []}])
    nxt = reduce_session(
        state,
        {"type": "session/activeClientToolsChanged", "clientId": "ide", "tools": [{"name": "t"}]},
    )
    assert nxt["activeClients"] == [
        {"clientId": "ide", "displayName": "IDE", "tools": [{"name": "t"}]}
    ]
    assert (
        reduce_session(
            state, {"type": "session/activeClientToolsChanged", "clientId": "x", "tools": []}
        )
        is state
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
ids = st.sampled_from(["a", "b", "s", "m", "ide", "web"])
actions = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                [
                    "session/customizationsChanged",
                    "session/customizationToggled",
                    "session/customizationUpdated",
                    "session/customizationRemoved",
                    "session/activeClientSet",
                    "session/activeClientRemoved",
                    "session/activeClientToolsChanged",
                    "session/serverToolsChanged",
                    "session/mcpServerStateChanged",
                    "session/x",
                    "chat/toolCallStart",
                ]
            ),
            "id": ids | json_values,
            "enabled": st.booleans() | json_values,
            "clientId": ids | json_values,
            "customization": st.sampled_from(
                [plugin("a"), plugin("b", children=[skill("s")]), mcp("m"), directory("d")]
            )
            | json_values,
            "customizations": st.lists(
                st.sampled_from([plugin("a", children=[skill("s")]), mcp("m"), 3, None])
            )
            | json_values,
            "activeClient": st.fixed_dictionaries({"clientId": ids, "tools": st.just([])})
            | json_values,
            "state": json_values,
            "tools": json_values,
        }
    ),
    json_values,
)


@settings(max_examples=80, deadline=None)
@given(st.lists(actions, max_size=12))
def test_reducer_never_raises_on_arbitrary_action_sequences(seq: list[Any]) -> None:
    state: Any = session(customizations=[plugin("a", children=[skill("s")]), mcp("m")])
    for action in seq:
        state = reduce_session(state, action)
    assert isinstance(state["activeClients"], list)
