"""PluginRegistry and plugin kind detection."""

from __future__ import annotations

import pytest

from customtools.actions import (
    ActionNotFoundError,
    PluginError,
    PluginRegistry,
    RegisteredPlugin,
    plugin_kind,
)


class App:
    name = "app"
    version = "2.0"

    def get_actions(self, state):
        return []

    def execute_action(self, app, action_id, params, context, state):
        return None


class Sess:
    name = "sess"

    async def get_actions(self, state):
        return []

    async def execute_action(self, action_id, session, native_messages, params, context, state):
        return None


def test_kind_from_arity_and_from_attribute() -> None:
    assert plugin_kind(App()) == "application"
    assert plugin_kind(Sess()) == "session"

    class Declared(App):
        kind = "session"

    assert plugin_kind(Declared()) == "session"


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"kind": "feature"}, "kind must be 'application' or 'session', got 'feature'"),
        ({"execute_action": lambda self, a: None}, "execute_action takes 1 positional"),
        ({"execute_action": lambda self, *a: None}, "execute_action takes 0 positional"),
        ({"get_actions": None}, "missing get_actions()"),
    ],
)
def test_unusable_plugins(attrs: dict[str, object], message: str) -> None:
    cls = type("Odd", (App,), {"name": "odd", **attrs})
    with pytest.raises(PluginError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plugin_kind(cls())


def test_registration_order_split_by_kind() -> None:
    registry = PluginRegistry([Sess(), App()])
    assert [p.name for p in registry.application_plugins] == ["app"]
    assert [p.name for p in registry.session_plugins] == ["sess"]
    assert dict(registry.names()) == {"sess": "session", "app": "application"}
    assert [p.name for p in registry] == ["sess", "app"]
    assert len(registry) == 2
    assert "app" in registry
    assert registry.get("app").version == "2.0"


def test_duplicate_names_name_both_sources() -> None:
    registry = PluginRegistry()
    registry.register(App(), source="first.py")
    with pytest.raises(PluginError) as info:
        registry.register(App(), source="second.py")
    assert str(info.value) == (
        "plugin name 'app' from second.py is already registered from first.py;"
        " plugin names must be unique"
    )


def test_explicit_name_and_kind() -> None:
    registry = PluginRegistry()
    record = registry.register(App(), name="renamed", kind="application")
    assert record == registry.get("renamed")
    with pytest.raises(PluginError, match="kind must be 'application' or 'session'"):
        registry.register(App(), name="x", kind="other")  # type: ignore[arg-type]


def test_missing_name() -> None:
    class NoName(App):
        name = ""

    with pytest.raises(PluginError, match="needs a non-empty string 'name' attribute"):
        PluginRegistry([NoName()])


def test_unregister_and_unknown_names() -> None:
    registry = PluginRegistry([App()])
    assert registry.unregister("app").name == "app"
    with pytest.raises(ActionNotFoundError, match=r"no plugin named 'app' .*registered: none"):
        registry.get("app")


def test_registered_plugins_pass_through() -> None:
    record = RegisteredPlugin.of(App(), source="somewhere")
    assert RegisteredPlugin.of(record) is record
    assert PluginRegistry([record]).get("app").source == "somewhere"
