"""Plugin kinds, their Protocols, and the registry that keeps them in a stable order.

Both kinds offer actions through ``get_actions(state)`` and run them through
``execute_action(...)``; they differ in what ``execute_action`` receives and may return:

* an **application plugin** gets the application object and returns application-level
  results (session mutations, ``ui_effects``, ``display``, other payload);
* a **session plugin** (provider extension, feature) gets one session and its native
  messages and returns only ``native_messages`` and/or ``session_metadata``.

Every hook may be a plain function or ``async def``; ``init`` is optional (state starts as
``{}``). The kind is read from a ``kind`` attribute (``"application"`` or ``"session"``) when
the plugin has one, otherwise from the number of positional parameters of ``execute_action``
(5 for application plugins, 6 for session plugins).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from customtools.actions._errors import ActionNotFoundError, PluginError
from customtools.actions._session import Session

__all__ = [
    "ApplicationPlugin",
    "PluginKind",
    "PluginRegistry",
    "RegisteredPlugin",
    "SessionPlugin",
    "plugin_kind",
]

PluginKind = Literal["application", "session"]
_KINDS: tuple[PluginKind, ...] = ("application", "session")
_ARITY: dict[int, PluginKind] = {5: "application", 6: "session"}


class ApplicationPlugin(Protocol):
    """An application plugin (hooks may also be ``async def``)."""

    name: str

    def init(self, app_config: dict[str, Any]) -> dict[str, Any]:
        """Return the plugin's initial state; called once, before its first action."""
        ...

    def get_actions(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        """Return the action definitions, in the order they should run."""
        ...

    def execute_action(
        self,
        app: Any,
        action_id: str,
        params: dict[str, Any],
        context: dict[str, Any] | None,
        state: dict[str, Any],
    ) -> dict[str, Any] | None:
        """Run one action; return an application-level result."""
        ...


class SessionPlugin(Protocol):
    """A session-scoped plugin: provider extension or feature (hooks may be ``async def``)."""

    name: str

    def init(self, config: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
        """Return the state for this run; gets the effective config and the previous state."""
        ...

    def get_actions(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        """Return the action definitions, in the order they should run."""
        ...

    def execute_action(
        self,
        action_id: str,
        session: Session,
        native_messages: list[dict[str, Any]],
        params: dict[str, Any],
        context: dict[str, Any] | None,
        state: dict[str, Any],
    ) -> dict[str, Any] | None:
        """Run one action; return ``native_messages`` and/or ``session_metadata``."""
        ...


def plugin_kind(plugin: Any) -> PluginKind:
    """Return the kind of ``plugin``: its ``kind`` attribute, else the ``execute_action`` arity.

    Raises:
        PluginError: when the hooks are missing or the kind cannot be told.
    """
    label = getattr(plugin, "name", None) or type(plugin).__name__
    for hook in ("get_actions", "execute_action"):
        if not callable(getattr(plugin, hook, None)):
            raise PluginError(
                f"plugin {label!r}: missing {hook}(); a plugin needs get_actions(state) and"
                " execute_action(...)"
            )
    declared = getattr(plugin, "kind", None)
    if declared is not None:
        if declared not in _KINDS:
            raise PluginError(
                f"plugin {label!r}: kind must be 'application' or 'session', got {declared!r}"
            )
        return declared  # type: ignore[no-any-return]
    try:
        signature = inspect.signature(plugin.execute_action)
    except (TypeError, ValueError) as exc:
        raise PluginError(
            f"plugin {label!r}: cannot read execute_action's signature; set kind ="
            " 'application' or 'session'"
        ) from exc
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    kind = _ARITY.get(len(positional))
    if kind is None or any(p.kind is p.VAR_POSITIONAL for p in signature.parameters.values()):
        raise PluginError(
            f"plugin {label!r}: execute_action takes {len(positional)} positional parameters;"
            " expected 5 (app, action_id, params, context, state) for an application plugin"
            " or 6 (action_id, session, native_messages, params, context, state) for a"
            " session plugin; or set kind = 'application' or 'session'"
        )
    return kind


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredPlugin:
    """A plugin with the facts the registry keeps about it.

    Args:
        name: unique plugin name.
        kind: ``"application"`` or ``"session"``.
        plugin: the plugin object.
        source: where it came from (``"entry point 'x' from dist 'y'"``, a path, ...).
        version: the plugin's ``version`` attribute, if any.
    """

    name: str
    kind: PluginKind
    plugin: Any
    source: str = "registered"
    version: str | None = None

    @classmethod
    def of(
        cls,
        plugin: Any,
        *,
        name: str | None = None,
        kind: PluginKind | None = None,
        source: str = "registered",
    ) -> RegisteredPlugin:
        """Describe ``plugin``, reading ``name``, ``kind`` and ``version`` from it if not given.

        Raises:
            PluginError: for a missing or invalid name, missing hooks or an unknown kind.
        """
        if isinstance(plugin, RegisteredPlugin):
            return plugin
        name = name if name is not None else getattr(plugin, "name", None)
        if not isinstance(name, str) or not name.strip():
            raise PluginError(
                f"plugin from {source}: needs a non-empty string 'name' attribute, got {name!r}"
            )
        if kind is not None and kind not in _KINDS:
            raise PluginError(f"plugin {name!r}: kind must be 'application' or 'session'")
        version = getattr(plugin, "version", None)
        return cls(
            name=name,
            kind=kind if kind is not None else plugin_kind(plugin),
            plugin=plugin,
            source=source,
            version=version if isinstance(version, str) else None,
        )


class PluginRegistry:
    """Plugins in registration order, unique by name.

    Application plugins run before session plugins in a lifecycle run; within a kind the
    registration order is the run order.

    Args:
        plugins: plugins (or :class:`RegisteredPlugin` records) to register in order.
    """

    def __init__(self, plugins: Iterable[Any] = ()) -> None:
        self._plugins: dict[str, RegisteredPlugin] = {}
        for plugin in plugins:
            self.register(plugin)

    def register(
        self,
        plugin: Any,
        *,
        name: str | None = None,
        kind: PluginKind | None = None,
        source: str = "registered",
    ) -> RegisteredPlugin:
        """Add a plugin at the end of the order and return its record.

        Raises:
            PluginError: when the plugin is unusable or its name is already registered.
        """
        record = RegisteredPlugin.of(plugin, name=name, kind=kind, source=source)
        existing = self._plugins.get(record.name)
        if existing is not None:
            raise PluginError(
                f"plugin name {record.name!r} from {record.source} is already registered"
                f" from {existing.source}; plugin names must be unique"
            )
        self._plugins[record.name] = record
        return record

    def unregister(self, name: str) -> RegisteredPlugin:
        """Remove and return the plugin called ``name``.

        Raises:
            ActionNotFoundError: when no plugin has that name.
        """
        record = self.get(name)
        del self._plugins[name]
        return record

    def get(self, name: str) -> RegisteredPlugin:
        """Return the plugin called ``name``.

        Raises:
            ActionNotFoundError: naming the plugin and listing the registered ones.
        """
        try:
            return self._plugins[name]
        except KeyError:
            known = ", ".join(self._plugins) or "none"
            raise ActionNotFoundError(
                f"no plugin named {name!r} is registered (registered: {known})"
            ) from None

    @property
    def application_plugins(self) -> tuple[RegisteredPlugin, ...]:
        """Application plugins in registration order."""
        return tuple(p for p in self._plugins.values() if p.kind == "application")

    @property
    def session_plugins(self) -> tuple[RegisteredPlugin, ...]:
        """Session plugins in registration order."""
        return tuple(p for p in self._plugins.values() if p.kind == "session")

    def names(self) -> Mapping[str, PluginKind]:
        """Return ``{name: kind}`` in registration order."""
        return {name: p.kind for name, p in self._plugins.items()}

    def __iter__(self) -> Iterator[RegisteredPlugin]:
        return iter(tuple(self._plugins.values()))

    def __len__(self) -> int:
        return len(self._plugins)

    def __contains__(self, name: object) -> bool:
        return name in self._plugins
