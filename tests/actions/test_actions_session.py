"""The reference Session, the SessionLike protocol and merge-patch semantics."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from customtools.actions import (
    REQUEST_PREPARE,
    ActionDispatcher,
    Session,
    SessionLike,
    merge_patch,
)


def test_round_trip_with_meta() -> None:
    session = Session(
        id="s1",
        messages=[{"role": "user", "content": "hi"}],
        metadata={"agent_id": "default", "overrides": {"model": "m"}},
        meta={"origin": "test"},
    )
    data = session.to_dict()
    assert data == {
        "id": "s1",
        "messages": [{"role": "user", "content": "hi"}],
        "metadata": {"agent_id": "default", "overrides": {"model": "m"}},
        "_meta": {"origin": "test"},
    }
    json.dumps(data)
    assert Session.from_dict(data) == session
    assert session.overrides == {"model": "m"}


def test_to_dict_returns_fresh_data() -> None:
    session = Session(id="s", metadata={"overrides": {"a": 1}})
    data = session.to_dict()
    data["metadata"]["overrides"]["a"] = 2
    assert session.metadata == {"overrides": {"a": 1}}


def test_with_changes_leaves_the_original() -> None:
    session = Session(id="s", messages=[{"role": "user", "content": "a"}])
    changed = session.with_changes(metadata={"x": 1})
    assert changed.messages == session.messages
    assert changed.metadata == {"x": 1}
    assert session.metadata == {}
    assert isinstance(changed.messages, tuple)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"messages": []}, "Session id must be a non-empty string"),
        ({"id": "s", "messages": "no"}, "'messages' must be a list of mappings"),
        ({"id": "s", "metadata": []}, "'metadata' must be a mapping"),
        ({"id": "s", "_meta": 1}, "'_meta' must be a mapping"),
        ("s", "needs a mapping, got str"),
    ],
)
def test_from_dict_errors(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Session.from_dict(data)


def test_merge_patch_semantics() -> None:
    target = {"overrides": {"a": 1, "b": 2}, "keep": [1], "scalar": 1}
    patch = {"overrides": {"b": None, "c": {"d": 1}}, "scalar": {"now": "object"}, "new": 5}
    assert merge_patch(target, patch) == {
        "overrides": {"a": 1, "c": {"d": 1}},
        "keep": [1],
        "scalar": {"now": "object"},
        "new": 5,
    }
    assert target == {"overrides": {"a": 1, "b": 2}, "keep": [1], "scalar": 1}


@dataclass(frozen=True)
class HostSession:
    """A host's own session type with an extra field the dispatcher knows nothing about."""

    id: str
    messages: Sequence[Mapping[str, Any]] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    owner: str = "alice"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "metadata": dict(self.metadata), "owner": self.owner}

    def with_changes(self, *, messages=None, metadata=None) -> HostSession:
        return HostSession(
            id=self.id,
            messages=self.messages if messages is None else list(messages),
            metadata=self.metadata if metadata is None else dict(metadata),
            owner=self.owner,
        )


def test_host_session_types_satisfy_the_protocol() -> None:
    assert isinstance(Session(id="s"), SessionLike)
    assert isinstance(HostSession(id="s"), SessionLike)
    assert not isinstance({"id": "s"}, SessionLike)


@pytest.mark.anyio
async def test_dispatcher_works_with_a_host_session_type() -> None:
    class Repair:
        name = "repair"

        def get_actions(self, state):
            return [{"id": "r", "trigger": REQUEST_PREPARE}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            assert context["session"]["owner"] == "alice"
            return {"session_metadata": {"overrides": {"fixed": True}}}

    session = HostSession(id="h", metadata={"overrides": {"other": 1}})
    result = await ActionDispatcher([Repair()]).run_lifecycle(REQUEST_PREPARE, session, {})
    assert isinstance(result.session, HostSession)
    assert result.session.owner == "alice"
    assert result.session.metadata == {"overrides": {"other": 1, "fixed": True}}
    assert result.ok
