"""Plugin actions: manual and lifecycle-triggered actions, and their dispatcher.

Plugins offer *actions* through ``get_actions(state)`` and run them through
``execute_action(...)``. An action without a ``trigger`` runs when a user or UI asks for it;
an action with ``trigger: "request_prepare"`` (or any lifecycle name, or a list) also runs
automatically when a host calls :meth:`ActionDispatcher.run_lifecycle` with that name.

Two plugin kinds share the concept: *application plugins* return application-level results
(session mutations, ``ui_effects``, ``display``), *session plugins* (provider extensions,
features) return only ``native_messages`` and ``session_metadata`` patches for one session.

Quick start::

    from customtools.actions import ActionDispatcher, REQUEST_PREPARE, Session, find_plugins

    found = find_plugins(["~/.customtools/plugins/my-pack"])
    dispatcher = ActionDispatcher(found.registry(), app=my_app, app_config=config)
    result = await dispatcher.run_lifecycle(REQUEST_PREPARE, Session(id="s1"), config)
    session = result.session

See ``docs/actions.md`` for the walkthrough, the failure policy and the plugin module contract.
"""

from __future__ import annotations

from customtools.actions._context import (
    APPLICATION_CONTEXT_KEYS,
    CORE_CONTEXT_KEYS,
    RESERVED_CONTEXT_KEYS,
    build_context,
    ensure_serializable,
    serialize_error,
    serialize_session,
)
from customtools.actions._definition import (
    INPUT_TYPES,
    ActionDefinition,
    check_params,
    parse_actions,
)
from customtools.actions._dispatcher import ActionDispatcher
from customtools.actions._display import (
    DISPLAY_FORMATS,
    DISPLAY_PRESENTATIONS,
    DISPLAY_VARIANTS,
    CopyTextAction,
    Display,
    DisplayAction,
    ExtensionDisplayAction,
    OpenUrlAction,
    RunActionAction,
)
from customtools.actions._errors import (
    ActionDefinitionError,
    ActionError,
    ActionFailedError,
    ActionInputError,
    ActionNotFoundError,
    ActionResultError,
    ActionTimeoutError,
    ContextError,
    DisplayError,
    PluginError,
    ReservedContextKeyWarning,
)
from customtools.actions._finder import (
    PLUGIN_ENTRY_POINT_GROUP,
    PluginDiscovery,
    PluginLoadError,
    find_plugins,
)
from customtools.actions._invoke import IdentityCodec, NativeCodec
from customtools.actions._lifecycle import (
    AGENT_SWITCH_COMPLETE,
    AGENT_SWITCH_PREPARE,
    REQUEST_COMPLETE,
    REQUEST_ERROR,
    REQUEST_PREPARE,
    RESPONSE_FINALIZE,
    SESSION_CREATE,
    SESSION_DELETE_PREPARE,
    SESSION_FORK,
    SESSION_LIST,
    SESSION_SAVE_PREPARE,
    STANDARD_LIFECYCLES,
    TRIGGER_APPLICATION,
    TRIGGER_CORE,
    TRIGGER_MANUAL,
)
from customtools.actions._merge import ListedAction
from customtools.actions._plugins import (
    ApplicationPlugin,
    PluginKind,
    PluginRegistry,
    RegisteredPlugin,
    SessionPlugin,
    plugin_kind,
)
from customtools.actions._results import (
    ActionOutcome,
    ApplicationResult,
    DispatchResult,
    SessionResult,
)
from customtools.actions._session import Session, SessionLike, merge_patch

__all__ = [
    "AGENT_SWITCH_COMPLETE",
    "AGENT_SWITCH_PREPARE",
    "APPLICATION_CONTEXT_KEYS",
    "CORE_CONTEXT_KEYS",
    "DISPLAY_FORMATS",
    "DISPLAY_PRESENTATIONS",
    "DISPLAY_VARIANTS",
    "INPUT_TYPES",
    "PLUGIN_ENTRY_POINT_GROUP",
    "REQUEST_COMPLETE",
    "REQUEST_ERROR",
    "REQUEST_PREPARE",
    "RESERVED_CONTEXT_KEYS",
    "RESPONSE_FINALIZE",
    "SESSION_CREATE",
    "SESSION_DELETE_PREPARE",
    "SESSION_FORK",
    "SESSION_LIST",
    "SESSION_SAVE_PREPARE",
    "STANDARD_LIFECYCLES",
    "TRIGGER_APPLICATION",
    "TRIGGER_CORE",
    "TRIGGER_MANUAL",
    "ActionDefinition",
    "ActionDefinitionError",
    "ActionDispatcher",
    "ActionError",
    "ActionFailedError",
    "ActionInputError",
    "ActionNotFoundError",
    "ActionOutcome",
    "ActionResultError",
    "ActionTimeoutError",
    "ApplicationPlugin",
    "ApplicationResult",
    "ContextError",
    "CopyTextAction",
    "DispatchResult",
    "Display",
    "DisplayAction",
    "DisplayError",
    "ExtensionDisplayAction",
    "IdentityCodec",
    "ListedAction",
    "NativeCodec",
    "OpenUrlAction",
    "PluginDiscovery",
    "PluginError",
    "PluginKind",
    "PluginLoadError",
    "PluginRegistry",
    "RegisteredPlugin",
    "ReservedContextKeyWarning",
    "RunActionAction",
    "Session",
    "SessionLike",
    "SessionPlugin",
    "SessionResult",
    "build_context",
    "check_params",
    "ensure_serializable",
    "find_plugins",
    "merge_patch",
    "parse_actions",
    "plugin_kind",
    "serialize_error",
    "serialize_session",
]

from customtools._public import rehome as _rehome

_rehome(globals(), __name__, __all__)
