"""Execution context: layers, reserved keys, serializability and the helpers."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from customtools.actions import (
    AGENT_SWITCH_PREPARE,
    REQUEST_ERROR,
    RESERVED_CONTEXT_KEYS,
    SESSION_FORK,
    ActionDispatcher,
    ContextError,
    ReservedContextKeyWarning,
    Session,
    build_context,
    ensure_serializable,
    serialize_error,
    serialize_session,
)

LIVE = {"core", "app", "application", "session_asset_store", "request_runtime"}


def test_reserved_keys_are_the_documented_ones() -> None:
    assert RESERVED_CONTEXT_KEYS == (
        "lifecycle",
        "trigger_source",
        "original_session",
        "previous_agent_id",
        "next_agent_id",
        "error",
    )


def test_core_layer_only() -> None:
    core = object()
    context = build_context(
        session=Session(id="s"),
        config={"model": "m"},
        trigger_source="core",
        lifecycle="request_prepare",
        core=core,
        request_context={"turn": 1},
    )
    assert context == {
        "config": {"model": "m"},
        "trigger_source": "core",
        "lifecycle": "request_prepare",
        "request_context": {"turn": 1},
        "session": {"id": "s", "messages": [], "metadata": {}},
        "core": core,
    }


def test_application_layer_and_caller_objects() -> None:
    app, store, runtime, terminal = object(), object(), object(), object()
    context = build_context(
        session=Session(id="s"),
        config={"model": "m"},
        trigger_source="terminal",
        app=app,
        base_config={"agents": {"a": {}}},
        session_asset_store=store,
        request_runtime=runtime,
        extra={"request_id": "r1"},
        objects={"terminal": terminal},
    )
    assert context["app"] is app
    assert context["application"] is app
    assert context["base_config"] == {"agents": {"a": {}}}
    assert context["session_asset_store"] is store
    assert context["request_runtime"] is runtime
    assert context["terminal"] is terminal
    assert context["request_id"] == "r1"
    assert "lifecycle" not in context
    data = {k: v for k, v in context.items() if k not in LIVE | {"terminal"}}
    json.dumps(data)


def test_base_config_defaults_to_config_with_an_app() -> None:
    context = build_context(session=Session(id="s"), config={"m": 1}, trigger_source="x", app=1)
    assert context["base_config"] == {"m": 1}


def test_lifecycle_extras_are_serialized() -> None:
    try:
        try:
            raise OSError("disk")
        except OSError as inner:
            raise RuntimeError("tool loop failed") from inner
    except RuntimeError as exc:
        error = exc
    context = build_context(
        session=Session(id="s"),
        config={},
        trigger_source="application",
        lifecycle=REQUEST_ERROR,
        original_session={"id": "src", "messages": [], "metadata": {}},
        previous_agent_id="a",
        next_agent_id="b",
        error=error,
    )
    assert context["error"] == {
        "type": "RuntimeError",
        "message": "tool loop failed",
        "cause": {"type": "OSError", "message": "disk"},
    }
    assert context["original_session"]["id"] == "src"
    assert (context["previous_agent_id"], context["next_agent_id"]) == ("a", "b")


OWNED_WITH_A_VALUE = {
    "lifecycle": "request_prepare",
    "trigger_source": "core",
    "original_session": {"id": "src", "messages": [], "metadata": {}},
    "previous_agent_id": "a",
    "next_agent_id": "b",
    "error": {"type": "RuntimeError", "message": "builder's"},
}


@pytest.mark.parametrize("key", [*RESERVED_CONTEXT_KEYS, "config", "session", "app", "core"])
def test_caller_value_for_a_key_the_builder_set_is_dropped_with_a_warning(key: str) -> None:
    builder_args = {k: v for k, v in OWNED_WITH_A_VALUE.items() if k != "trigger_source"}
    with pytest.warns(ReservedContextKeyWarning, match=f"context key '{key}' is owned"):
        context = build_context(
            session=Session(id="s"),
            config={"c": 1},
            trigger_source="core",
            app=object(),
            core=object(),
            **builder_args,
            extra={key: "caller value", "mine": 1},
        )
    assert context.get(key) != "caller value"
    assert context["mine"] == 1
    if key in OWNED_WITH_A_VALUE:
        assert context[key] == OWNED_WITH_A_VALUE[key]


@pytest.mark.parametrize(
    "key", ["lifecycle", "original_session", "previous_agent_id", "next_agent_id", "error"]
)
def test_caller_lifecycle_value_passes_when_the_builder_has_none(
    key: str, recwarn: pytest.WarningsRecorder
) -> None:
    value = OWNED_WITH_A_VALUE[key]
    context = build_context(
        session=Session(id="s"), config={}, trigger_source="manual", extra={key: value}
    )
    assert context[key] == value
    assert not [w for w in recwarn if issubclass(w.category, ReservedContextKeyWarning)]


@pytest.mark.parametrize("key", ["config", "session", "app", "core", "base_config"])
def test_layer_keys_stay_owned_even_without_a_builder_value(key: str) -> None:
    with pytest.warns(ReservedContextKeyWarning, match=f"context key '{key}' is owned"):
        context = build_context(
            session=Session(id="s"), config={}, trigger_source="core", extra={key: "caller"}
        )
    assert context.get(key) != "caller"


def test_caller_lifecycle_data_must_be_json() -> None:
    with pytest.raises(ContextError, match=r"context\['original_session'\]"):
        build_context(
            session=Session(id="s"),
            config={},
            trigger_source="manual",
            extra={"original_session": {"id": "o", "tags": {1, 2}}},
        )


def test_caller_object_for_an_owned_key_is_dropped_with_a_warning() -> None:
    with pytest.warns(ReservedContextKeyWarning, match="context object key 'app' is owned"):
        context = build_context(
            session=Session(id="s"), config={}, trigger_source="core", objects={"app": "fake"}
        )
    assert "app" not in context


def test_same_key_as_data_and_object_is_an_error() -> None:
    with pytest.raises(ContextError, match=r"context\['server'\] is given both"):
        build_context(
            session=Session(id="s"),
            config={},
            trigger_source="core",
            extra={"server": 1},
            objects={"server": object()},
        )


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"extra": {"when": datetime.date(2024, 1, 1)}}, "context['when']"),
        ({"config": {"models": [{"limit": float("nan")}]}}, "context['config']['models'][0]"),
        ({"request_context": {"deep": {1.5: {"x": {object()}}}}}, "context['request_context']"),
        ({"original_session": Session(id="o", metadata={"s": {1, 2}})}, "['metadata']['s']"),
    ],
)
def test_non_serializable_data_names_the_key_path(kwargs: dict[str, Any], path: str) -> None:
    base: dict[str, Any] = {"session": Session(id="s"), "config": {}, "trigger_source": "core"}
    with pytest.raises(ContextError) as info:
        build_context(**{**base, **kwargs})
    assert path in info.value.key_path
    assert str(info.value).startswith(info.value.key_path + ": ")
    assert "must be JSON data" in str(info.value)


def test_non_string_key_is_reported() -> None:
    with pytest.raises(ContextError, match=r"the key \(1, 2\) \(tuple\) is not a JSON object key"):
        ensure_serializable({"ok": {(1, 2): "v"}}, name="context['x']")


def test_ensure_serializable_returns_compact_json() -> None:
    assert ensure_serializable({"a": [1, 2.5, None, True]}) == '{"a":[1,2.5,null,true]}'


def test_serialize_helpers() -> None:
    assert serialize_error(ValueError("bad")) == {"type": "ValueError", "message": "bad"}
    assert serialize_error({"type": "X", "message": "m"}) == {"type": "X", "message": "m"}
    assert serialize_session(Session(id="s", metadata={"a": 1}))["metadata"] == {"a": 1}
    with pytest.raises(ContextError, match=r"session\['metadata'\]\['when'\]"):
        serialize_session({"id": "s", "metadata": {"when": object()}})


@pytest.mark.anyio
async def test_dispatcher_context_is_fresh_per_action_and_validated_up_front() -> None:
    seen: list[dict[str, Any]] = []

    class Greedy:
        name = "greedy"

        def get_actions(self, state):
            return [{"id": "a", "trigger": AGENT_SWITCH_PREPARE}, {"id": "b", "trigger": "x"}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            seen.append({**context, "shared": dict(context["shared"])})
            context["shared"]["polluted"] = True  # must not leak into the next action
            return {"session_metadata": {"step": action_id}}

    class Second(Greedy):
        name = "second"

    dispatcher = ActionDispatcher([Greedy(), Second()])
    await dispatcher.run_lifecycle(
        AGENT_SWITCH_PREPARE,
        Session(id="s"),
        {},
        {"shared": {}},
        previous_agent_id="default",
        next_agent_id="research",
    )
    assert [c["shared"] for c in seen] == [{}, {}]
    assert seen[1]["session"]["metadata"] == {"step": "a"}  # sees the earlier mutation
    assert (seen[0]["previous_agent_id"], seen[0]["next_agent_id"]) == ("default", "research")

    seen.clear()
    with pytest.raises(ContextError, match=r"context\['handle'\]"):
        await dispatcher.run_lifecycle("x", Session(id="s"), {}, {"handle": object()})
    assert seen == []  # nothing ran


class ForkAware:
    """A session plugin recording the fork context it sees (seed 004's fork example)."""

    name = "fork_aware"

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def get_actions(self, state):
        return [{"id": "adjust_fork_settings", "trigger": SESSION_FORK}]

    def execute_action(self, action_id, session, native_messages, params, context, state):
        self.seen.append({k: context.get(k) for k in ("lifecycle", "original_session")})
        return


@pytest.mark.anyio
async def test_fork_source_passed_as_caller_context_reaches_the_plugin(
    recwarn: pytest.WarningsRecorder,
) -> None:
    plugin = ForkAware()
    source = Session(id="src", metadata={"model": "m"}).to_dict()
    result = await ActionDispatcher([plugin]).run_lifecycle(
        SESSION_FORK, Session(id="fork"), {}, {"original_session": source}
    )
    assert result.ok
    assert plugin.seen == [{"lifecycle": SESSION_FORK, "original_session": source}]
    assert not [w for w in recwarn if issubclass(w.category, ReservedContextKeyWarning)]


@pytest.mark.anyio
async def test_builder_fork_source_wins_over_the_callers_with_a_warning() -> None:
    plugin = ForkAware()
    owned = Session(id="src")
    with pytest.warns(ReservedContextKeyWarning) as caught:
        await ActionDispatcher([plugin]).run_lifecycle(
            SESSION_FORK,
            Session(id="fork"),
            {},
            {"original_session": {"id": "caller"}, "lifecycle": "other"},
            original_session=owned,
        )
    messages = sorted(str(w.message) for w in caught)
    assert [m.split(" is owned")[0] for m in messages] == [
        "context key 'lifecycle'",
        "context key 'original_session'",
    ]
    assert plugin.seen == [{"lifecycle": SESSION_FORK, "original_session": owned.to_dict()}]
