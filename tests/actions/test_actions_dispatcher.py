"""The dispatcher: ordering, merging, contracts, manual runs, state and context hand-off."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from customtools.actions import (
    REQUEST_PREPARE,
    RESPONSE_FINALIZE,
    SESSION_CREATE,
    SESSION_FORK,
    ActionDispatcher,
    ActionFailedError,
    ActionInputError,
    ActionNotFoundError,
    ApplicationResult,
    Display,
    PluginRegistry,
    Session,
    SessionResult,
)

pytestmark = pytest.mark.anyio


class Recorder:
    """A session plugin whose actions append their id to metadata['log']."""

    def __init__(self, name: str, actions: Sequence[Mapping[str, Any]], log: list[str]) -> None:
        self.name = name
        self._actions = list(actions)
        self.log = log

    def get_actions(self, state: dict[str, Any]) -> list[Mapping[str, Any]]:
        return self._actions

    def execute_action(self, action_id, session, native_messages, params, context, state):
        self.log.append(f"{self.name}.{action_id}")
        seen = list(session.metadata.get("log", []))
        return {"session_metadata": {"log": [*seen, f"{self.name}.{action_id}"]}}


class AppRecorder:
    """An application plugin that records the order and returns an updated session."""

    def __init__(self, name: str, actions: Sequence[Mapping[str, Any]], log: list[str]) -> None:
        self.name = name
        self._actions = list(actions)
        self.log = log

    async def get_actions(self, state):
        return self._actions

    async def execute_action(self, app, action_id, params, context, state):
        self.log.append(f"{self.name}.{action_id}")
        current = context["session"]
        metadata = dict(current["metadata"])
        metadata["log"] = [*metadata.get("log", []), f"{self.name}.{action_id}"]
        return {"mutations": {"updated": [{"id": params["session_id"], "metadata": metadata}]}}


async def test_lifecycle_runs_app_plugins_then_session_plugins_in_order() -> None:
    log: list[str] = []
    trig = {"trigger": REQUEST_PREPARE}
    plugins = [
        Recorder("s1", [{"id": "a", **trig}, {"id": "b", **trig}], log),
        AppRecorder("app1", [{"id": "x", **trig}], log),
        Recorder("s2", [{"id": "c", **trig}, {"id": "manual"}], log),
        AppRecorder("app2", [{"id": "y", "trigger": [SESSION_CREATE, REQUEST_PREPARE]}], log),
    ]
    result = await ActionDispatcher(plugins).run_lifecycle(REQUEST_PREPARE, Session(id="s"), {})
    assert log == ["app1.x", "app2.y", "s1.a", "s1.b", "s2.c"]
    # every action saw the changes of the ones before it
    assert result.session.metadata["log"] == log
    assert result.ran() == [
        ("app1", "x"),
        ("app2", "y"),
        ("s1", "a"),
        ("s1", "b"),
        ("s2", "c"),
    ]
    assert result.changed is True
    assert result.lifecycle == REQUEST_PREPARE


async def test_lifecycle_with_no_matching_trigger_changes_nothing() -> None:
    log: list[str] = []
    session = Session(id="s", metadata={"k": 1})
    dispatcher = ActionDispatcher([Recorder("s1", [{"id": "a", "trigger": "other"}], log)])
    result = await dispatcher.run_lifecycle(REQUEST_PREPARE, session, {})
    assert log == []
    assert result.session is session
    assert result.changed is False
    assert result.outcomes == ()


async def test_custom_lifecycle_names_are_dispatched() -> None:
    log: list[str] = []
    dispatcher = ActionDispatcher([Recorder("p", [{"id": "a", "trigger": "my_custom"}], log)])
    result = await dispatcher.run_lifecycle("my_custom", Session(id="s"), {})
    assert log == ["p.a"]
    assert result.lifecycle == "my_custom"


async def test_empty_lifecycle_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="lifecycle name must be a non-empty string"):
        await ActionDispatcher([]).run_lifecycle(" ", Session(id="s"), {})


async def test_caller_session_is_not_mutated() -> None:
    log: list[str] = []
    original = Session(id="s", metadata={"log": ["before"]})
    dispatcher = ActionDispatcher([Recorder("p", [{"id": "a", "trigger": REQUEST_PREPARE}], log)])
    result = await dispatcher.run_lifecycle(REQUEST_PREPARE, original, {})
    assert original.metadata == {"log": ["before"]}
    assert result.session.metadata == {"log": ["before", "p.a"]}


async def test_idempotent_repair_reports_unchanged() -> None:
    class SetKey:
        name = "setkey"

        def get_actions(self, state):
            return [{"id": "set", "trigger": REQUEST_PREPARE}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            return {"session_metadata": {"overrides": {"k": "v"}}}

    session = Session(id="s", metadata={"overrides": {"k": "v"}})
    result = await ActionDispatcher([SetKey()]).run_lifecycle(REQUEST_PREPARE, session, {})
    assert result.changed is False
    assert result.ok


async def test_native_messages_replace_the_transcript_via_the_codec() -> None:
    class Compact:
        name = "compact"

        def get_actions(self, state):
            return [{"id": "compact", "trigger": REQUEST_PREPARE}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            assert native_messages == [dict(m) for m in session.messages]
            native_messages.append({"role": "ignored"})  # in-place edits are not applied
            return {"native_messages": [{"role": "system", "content": "summary"}]}

    class Codec:
        def __init__(self) -> None:
            self.applied: list[Any] = []

        def to_native(self, session, config):
            return [dict(m) for m in session.messages]

        def apply_native(self, session, native_messages, config):
            self.applied.append((list(native_messages), dict(config)))
            return session.with_changes(messages=[{**m, "rebuilt": True} for m in native_messages])

    codec = Codec()
    session = Session(id="s", messages=[{"role": "user", "content": "a"}] * 3)
    dispatcher = ActionDispatcher([Compact()], codec=codec)
    result = await dispatcher.run_lifecycle(REQUEST_PREPARE, session, {"model": "m"})
    assert result.session.messages == ({"role": "system", "content": "summary", "rebuilt": True},)
    assert codec.applied == [([{"role": "system", "content": "summary"}], {"model": "m"})]


async def test_application_mutations_are_merged() -> None:
    class Manager:
        name = "manager"

        def get_actions(self, state):
            return [{"id": "one", "trigger": "t"}, {"id": "two", "trigger": "t"}]

        def execute_action(self, app, action_id, params, context, state):
            if action_id == "one":
                return {
                    "mutations": {
                        "created": [Session(id="new")],
                        "updated": [{"id": "other", "metadata": {"v": 1}}],
                        "deleted": ["gone"],
                    },
                    "ui_effects": {"type": "reload_sessions"},
                    "display": {"body": "one done"},
                    "count": 1,
                }
            return {
                "mutations": {
                    "updated": [
                        {"id": "other", "metadata": {"v": 2}},
                        Session(id="s", metadata={"replaced": True}),
                    ],
                    "deleted": ["gone", "gone2"],
                },
                "ui_effects": [{"type": "navigate", "to": "new"}],
                "display": {"body": "two done"},
                "count": 2,
            }

    result = await ActionDispatcher([Manager()], app=object()).run_lifecycle(
        "t", Session(id="s"), {}
    )
    assert [entry.id for entry in result.created] == ["new"]
    assert result.updated == ({"id": "other", "metadata": {"v": 2}},)
    assert result.deleted == ("gone", "gone2")
    assert result.ui_effects == ({"type": "reload_sessions"}, {"type": "navigate", "to": "new"})
    assert [d.body for d in result.displays] == ["one done", "two done"]
    assert result.display == Display(body="two done")
    assert result.payload == {"count": 2}
    assert result.session == Session(id="s", metadata={"replaced": True})
    assert isinstance(result.outcomes[0].result, ApplicationResult)


async def test_application_plugin_receives_app_and_session_id() -> None:
    seen: dict[str, Any] = {}

    class Probe:
        name = "probe"

        def get_actions(self, state):
            return [{"id": "p", "trigger": SESSION_FORK}]

        def execute_action(self, app, action_id, params, context, state):
            seen.update(app=app, params=params, context=context)

    app = object()
    original = Session(id="src", messages=[{"role": "user", "content": "hi"}])
    dispatcher = ActionDispatcher([Probe()], app=app, app_config={"agents": ["a"]})
    await dispatcher.run_lifecycle(
        SESSION_FORK, Session(id="fork"), {"model": "m"}, original_session=original
    )
    assert seen["app"] is app
    assert seen["params"] == {"session_id": "fork"}
    context = seen["context"]
    assert context["lifecycle"] == SESSION_FORK
    assert context["trigger_source"] == "application"
    assert context["original_session"] == original.to_dict()
    assert context["base_config"] == {"agents": ["a"]}
    assert context["app"] is app
    assert context["application"] is app
    assert context["core"] is dispatcher


async def test_core_only_mode_has_no_application_layer() -> None:
    seen: dict[str, Any] = {}

    class Probe:
        name = "probe"

        def get_actions(self, state):
            return [{"id": "p", "trigger": "t"}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            seen.update(context)

    await ActionDispatcher([Probe()]).run_lifecycle("t", Session(id="s"), {"m": 1})
    assert seen["trigger_source"] == "core"
    assert seen["config"] == {"m": 1}
    assert "app" not in seen
    assert "base_config" not in seen


async def test_session_plugin_state_flows_through_init() -> None:
    calls: list[tuple[dict[str, Any], dict[str, Any]]] = []

    class Counter:
        name = "counter"

        async def init(self, config, state):
            calls.append((config, dict(state)))
            return {"runs": state.get("runs", 0) + 1}

        def get_actions(self, state):
            return [{"id": "c", "trigger": "t"}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            return {"session_metadata": {"runs": state["runs"]}}

    dispatcher = ActionDispatcher([Counter()])
    first = await dispatcher.run_lifecycle("t", Session(id="s"), {"model": "a"})
    second = await dispatcher.run_lifecycle("t", first.session, {"model": "b"})
    assert second.session.metadata == {"runs": 2}
    assert calls == [({"model": "a"}, {}), ({"model": "b"}, {"runs": 1})]


async def test_application_plugin_init_runs_once_with_app_config() -> None:
    inits: list[dict[str, Any]] = []

    class Once:
        name = "once"

        def init(self, app_config):
            inits.append(app_config)
            return {"token": "t"}

        def get_actions(self, state):
            return [{"id": "a", "trigger": "t"}]

        def execute_action(self, app, action_id, params, context, state):
            return {"token": state["token"]}

    dispatcher = ActionDispatcher([Once()], app_config={"x": 1})
    await dispatcher.run_lifecycle("t", Session(id="s"), {})
    result = await dispatcher.run_lifecycle("t", Session(id="s"), {})
    assert inits == [{"x": 1}]
    assert result.payload == {"token": "t"}


async def test_resolver_selects_and_orders_session_plugins() -> None:
    log: list[str] = []
    a = Recorder("a", [{"id": "x", "trigger": "t"}], log)
    b = Recorder("b", [{"id": "x", "trigger": "t"}], log)
    c = Recorder("c", [{"id": "x", "trigger": "t"}], log)

    def resolve(plugins, config):
        by_name = {p.name: p for p in plugins}
        return [by_name[name] for name in config["enabled"]]

    dispatcher = ActionDispatcher(PluginRegistry([a, b, c]), resolve_session_plugins=resolve)
    await dispatcher.run_lifecycle("t", Session(id="s"), {"enabled": ["c", "a"]})
    assert log == ["c.x", "a.x"]


async def test_response_finalize_can_replace_final_messages() -> None:
    class Finalizer:
        name = "fin"

        def get_actions(self, state):
            return [{"id": "f", "trigger": RESPONSE_FINALIZE}, {"id": "g", "trigger": "other"}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            finals = context["final_messages"]
            return {"final_messages": [{**m, "content": m["content"].upper()} for m in finals]}

    dispatcher = ActionDispatcher([Finalizer()])
    result = await dispatcher.run_lifecycle(
        RESPONSE_FINALIZE,
        Session(id="s"),
        {},
        final_messages=[{"role": "assistant", "content": "done"}],
    )
    assert result.final_messages == ({"role": "assistant", "content": "DONE"},)
    assert isinstance(result.outcomes[0].result, SessionResult)
    # outside response_finalize, final_messages breaks the contract
    other = await dispatcher.run_lifecycle("other", Session(id="s"), {}, final_messages=[])
    assert "only be returned during response_finalize" in other.failures[0].error["message"]


class Actions:
    """An application plugin with a manual action that needs inputs."""

    name = "tools"

    def get_actions(self, state):
        return [
            {
                "id": "rename",
                "label": "Rename",
                "inputs": {"title": {"type": "string", "required": True}},
            },
            {"id": "auto", "trigger": REQUEST_PREPARE},
        ]

    def execute_action(self, app, action_id, params, context, state):
        if action_id == "auto":
            return {"display": {"body": "auto ran"}}
        return {
            "display": {"body": f"Renamed to **{params['title']}**", "variant": "success"},
            "mutations": {"updated": [{"id": context["session"]["id"], "metadata": params}]},
            "trigger_source": context["trigger_source"],
            "lifecycle_present": "lifecycle" in context,
        }


async def test_manual_action_runs_through_the_same_pipeline() -> None:
    dispatcher = ActionDispatcher([Actions()], app=object())
    result = await dispatcher.execute_action(
        "tools", "rename", Session(id="s"), {}, {"title": "New"}
    )
    assert result.trigger_source == "manual"
    assert result.lifecycle is None
    assert result.display is not None
    assert result.display.body == "Renamed to **New**"
    assert result.payload == {"trigger_source": "manual", "lifecycle_present": False}
    assert result.session.metadata == {"title": "New"}


async def test_triggered_action_can_also_run_manually() -> None:
    dispatcher = ActionDispatcher([Actions()])
    result = await dispatcher.execute_action("tools", "auto", Session(id="s"), {})
    assert result.display == Display(body="auto ran")


async def test_manual_action_checks_inputs() -> None:
    dispatcher = ActionDispatcher([Actions()])
    with pytest.raises(ActionInputError, match=r"'tools', action 'rename': missing required"):
        await dispatcher.execute_action("tools", "rename", Session(id="s"), {})


async def test_manual_unknown_plugin_or_action() -> None:
    dispatcher = ActionDispatcher([Actions()])
    with pytest.raises(ActionNotFoundError, match=r"no plugin named 'nope' .*registered: tools"):
        await dispatcher.execute_action("nope", "x", Session(id="s"), {})
    with pytest.raises(ActionNotFoundError, match=r"has no action 'x' \(actions: rename, auto\)"):
        await dispatcher.execute_action("tools", "x", Session(id="s"), {})


async def test_manual_failure_raises_with_plugin_and_action() -> None:
    class Broken:
        name = "broken"

        def get_actions(self, state):
            return [{"id": "boom"}]

        async def execute_action(self, app, action_id, params, context, state):
            raise RuntimeError("disk full")

    dispatcher = ActionDispatcher([Broken()])
    with pytest.raises(ActionFailedError) as info:
        await dispatcher.execute_action("broken", "boom", Session(id="s"), {})
    assert (
        str(info.value) == "plugin 'broken', action 'boom' (execute) raised RuntimeError: disk full"
    )
    assert isinstance(info.value.__cause__, RuntimeError)
    assert info.value.error == {"type": "RuntimeError", "message": "disk full"}


async def test_list_actions_in_run_order() -> None:
    log: list[str] = []
    dispatcher = ActionDispatcher(
        [Recorder("s", [{"id": "a", "trigger": "t"}, {"id": "m"}], log), Actions()]
    )
    listed = await dispatcher.list_actions({})
    assert [(x.plugin, x.action.id, x.kind) for x in listed] == [
        ("tools", "rename", "application"),
        ("tools", "auto", "application"),
        ("s", "a", "session"),
        ("s", "m", "session"),
    ]
    manual = await dispatcher.list_actions({}, manual_only=True)
    assert [(x.plugin, x.action.id) for x in manual] == [("tools", "rename"), ("s", "m")]


async def test_failed_get_actions_is_logged_and_skipped_in_listing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Dup:
        name = "dup"

        def get_actions(self, state):
            return [{"id": "a"}, {"id": "a"}]

        def execute_action(self, app, action_id, params, context, state):
            return None

    with caplog.at_level(logging.WARNING, logger="customtools.actions"):
        listed = await ActionDispatcher([Dup(), Actions()]).list_actions({})
    assert [x.action.id for x in listed] == ["rename", "auto"]
    assert "plugin 'dup': duplicate action id 'a'" in caplog.text


def test_dispatcher_rejects_bad_options() -> None:
    with pytest.raises(ValueError, match="on_failure must be 'continue' or 'raise'"):
        ActionDispatcher([], on_failure="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be positive"):
        ActionDispatcher([], timeout=0)


async def test_hook_styles_sync_async_and_awaitable_returning() -> None:
    class AsyncCallable:
        async def __call__(self, action_id, session, native_messages, params, context, state):
            return {"session_metadata": {"via": "awaitable"}}

    class Styles:
        name = "styles"
        kind = "session"
        execute_action = AsyncCallable()

        def init(self, config, state):
            return None  # keep the previous state

        def get_actions(self, state):
            return [{"id": "a", "trigger": "t"}]

    result = await ActionDispatcher([Styles()]).run_lifecycle("t", Session(id="s"), {})
    assert result.ok
    assert result.session.metadata == {"via": "awaitable"}

    async def later() -> dict[str, Any]:
        return {"session_metadata": {"via": "returned coroutine"}}

    class ReturnsAwaitable(Styles):
        def execute_action(self, action_id, session, native_messages, params, context, state):
            return later()

    result = await ActionDispatcher([ReturnsAwaitable()]).run_lifecycle("t", Session(id="s"), {})
    assert result.ok
    assert result.session.metadata == {"via": "returned coroutine"}


async def test_default_codec_passes_copies_of_the_messages() -> None:
    seen: list[Any] = []

    class Echo:
        name = "echo"

        def get_actions(self, state):
            return [{"id": "e", "trigger": "t"}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            seen.append(native_messages)
            native_messages[0]["content"] = "edited in place"
            return {"native_messages": [*native_messages, {"role": "assistant", "content": "b"}]}

    session = Session(id="s", messages=[{"role": "user", "content": "a"}])
    result = await ActionDispatcher([Echo()]).run_lifecycle("t", session, {})
    assert session.messages == ({"role": "user", "content": "a"},)
    assert result.session.messages == (
        {"role": "user", "content": "edited in place"},
        {"role": "assistant", "content": "b"},
    )


async def test_listing_skips_a_plugin_whose_init_fails(caplog: pytest.LogCaptureFixture) -> None:
    class NoInit(Actions):
        name = "noinit"

        def init(self, app_config):
            raise RuntimeError("offline")

    with caplog.at_level(logging.WARNING, logger="customtools.actions"):
        listed = await ActionDispatcher([NoInit(), Actions()]).list_actions({})
    assert [x.plugin for x in listed] == ["tools", "tools"]
    assert "plugin 'noinit' (init) raised RuntimeError: offline" in caplog.text
