"""Action results per plugin kind, and the merged result of a dispatch.

Application plugins return (any subset of)::

    {
        "mutations": {"created": [session, ...], "updated": [session, ...], "deleted": [id, ...]},
        "ui_effects": [{"type": "reload_sessions"}, ...],   # or a single mapping
        "display": {...},                                    # see Display
        "anything_else": ...,                                # kept in ``payload``
    }

where a session is a :class:`SessionLike` or its serialized mapping (with an ``id``).
Session plugins return only ``native_messages`` and/or ``session_metadata`` (plus
``final_messages`` during ``response_finalize``). ``None`` means "no change" for both kinds.
Anything else is an :class:`ActionResultError` naming the plugin and the action.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from customtools.actions._display import Display
from customtools.actions._errors import ActionResultError, DisplayError
from customtools.actions._lifecycle import RESPONSE_FINALIZE
from customtools.actions._plugins import PluginKind
from customtools.actions._session import SessionLike

__all__ = ["ActionOutcome", "ApplicationResult", "DispatchResult", "SessionResult"]

S = TypeVar("S", bound=SessionLike)
SessionEntry = Any  # a SessionLike or a mapping with an "id"
_APP_ONLY = frozenset({"mutations", "ui_effects", "display"})
_SESSION_ONLY = frozenset({"native_messages", "session_metadata", "final_messages"})


def _fail(plugin: str, action_id: str, message: str) -> ActionResultError:
    return ActionResultError(
        f"plugin {plugin!r}, action {action_id!r}: {message}", plugin=plugin, action_id=action_id
    )


def _message_list(value: Any, key: str, plugin: str, action_id: str) -> tuple[Any, ...] | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(m, Mapping) for m in value):
        return tuple(value)
    raise _fail(plugin, action_id, f"{key!r} must be a list of message mappings")


def entry_id(entry: SessionEntry) -> str | None:
    """Return the id of a session object or serialized session (``None`` if it has none)."""
    value = entry.get("id") if isinstance(entry, Mapping) else getattr(entry, "id", None)
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplicationResult:
    """A validated application-plugin result.

    Args:
        created: sessions the action created (objects or serialized mappings).
        updated: sessions the action changed; one with the current session's id replaces it.
        deleted: ids of sessions the action deleted.
        ui_effects: frontend instructions (reload, navigate, ...), kept as given.
        display: a validated display payload.
        payload: every other key of the result, for HTTP, terminal or mobile flows.
    """

    created: tuple[SessionEntry, ...] = ()
    updated: tuple[SessionEntry, ...] = ()
    deleted: tuple[str, ...] = ()
    ui_effects: tuple[Mapping[str, Any], ...] = ()
    display: Display | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_value(cls, value: Any, *, plugin: str, action_id: str) -> ApplicationResult:
        """Validate what an application plugin's ``execute_action`` returned.

        Raises:
            ActionResultError: naming the plugin, the action and the offending key.
        """
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise _fail(plugin, action_id, f"result must be a mapping, got {type(value).__name__}")
        session_keys = sorted(_SESSION_ONLY & set(value))
        if session_keys:
            raise _fail(
                plugin,
                action_id,
                f"{', '.join(map(repr, session_keys))} is a session-plugin result key; an"
                " application plugin returns the changed session in mutations['updated']",
            )
        created, updated, deleted = _mutations(value.get("mutations"), plugin, action_id)
        effects = value.get("ui_effects", ())
        if isinstance(effects, Mapping):
            effects = (effects,)
        if not isinstance(effects, (list, tuple)) or not all(
            isinstance(e, Mapping) for e in effects
        ):
            raise _fail(plugin, action_id, "'ui_effects' must be a mapping or a list of them")
        display = None
        if value.get("display") is not None:
            try:
                display = Display.from_dict(value["display"])
            except DisplayError as exc:
                raise _fail(plugin, action_id, f"invalid display payload: {exc}") from exc
        return cls(
            created=created,
            updated=updated,
            deleted=deleted,
            ui_effects=tuple(dict(e) for e in effects),
            display=display,
            payload={k: v for k, v in value.items() if k not in _APP_ONLY},
        )


def _mutations(
    raw: Any, plugin: str, action_id: str
) -> tuple[tuple[SessionEntry, ...], tuple[SessionEntry, ...], tuple[str, ...]]:
    if raw is None:
        return (), (), ()
    if not isinstance(raw, Mapping):
        raise _fail(plugin, action_id, "'mutations' must be a mapping")
    unknown = sorted(set(raw) - {"created", "updated", "deleted"})
    if unknown:
        raise _fail(
            plugin,
            action_id,
            f"unknown mutations key(s) {', '.join(map(repr, unknown))};"
            " use 'created', 'updated' and 'deleted'",
        )
    out: list[tuple[Any, ...]] = []
    for key in ("created", "updated"):
        entries = raw.get(key, ())
        if not isinstance(entries, (list, tuple)):
            raise _fail(plugin, action_id, f"mutations[{key!r}] must be a list of sessions")
        for index, entry in enumerate(entries):
            if entry_id(entry) is None:
                raise _fail(
                    plugin,
                    action_id,
                    f"mutations[{key!r}][{index}] must be a session or a mapping with an 'id'",
                )
        out.append(tuple(entries))
    deleted = raw.get("deleted", ())
    if not isinstance(deleted, (list, tuple)) or not all(isinstance(d, str) and d for d in deleted):
        raise _fail(plugin, action_id, "mutations['deleted'] must be a list of session ids")
    return out[0], out[1], tuple(deleted)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionResult:
    """A validated session-plugin result.

    Args:
        native_messages: replacement provider-native history (the transcript is rebuilt).
        session_metadata: a JSON Merge Patch for ``session.metadata``.
        final_messages: replacement final messages (``response_finalize`` only).
    """

    native_messages: tuple[Mapping[str, Any], ...] | None = None
    session_metadata: Mapping[str, Any] | None = None
    final_messages: tuple[Mapping[str, Any], ...] | None = None

    @classmethod
    def from_value(
        cls, value: Any, *, plugin: str, action_id: str, lifecycle: str | None
    ) -> SessionResult:
        """Validate what a session plugin's ``execute_action`` returned.

        Raises:
            ActionResultError: naming the plugin, the action and the offending key.
        """
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise _fail(plugin, action_id, f"result must be a mapping, got {type(value).__name__}")
        app_keys = sorted(_APP_ONLY & set(value))
        if app_keys:
            raise _fail(
                plugin,
                action_id,
                f"{', '.join(map(repr, app_keys))} is application-level; a session plugin"
                " returns only 'native_messages' and/or 'session_metadata' (move the action"
                " to an application plugin)",
            )
        unknown = sorted(set(value) - _SESSION_ONLY - {"_meta"})
        if unknown:
            raise _fail(
                plugin,
                action_id,
                f"unknown result key(s) {', '.join(map(repr, unknown))}; a session plugin"
                " returns only 'native_messages' and/or 'session_metadata'",
            )
        metadata = value.get("session_metadata")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise _fail(plugin, action_id, "'session_metadata' must be a mapping (a merge patch)")
        native = value.get("native_messages")
        final = value.get("final_messages")
        if final is not None and lifecycle != RESPONSE_FINALIZE:
            raise _fail(
                plugin, action_id, "'final_messages' may only be returned during response_finalize"
            )
        return cls(
            native_messages=_message_list(native, "native_messages", plugin, action_id),
            session_metadata=dict(metadata) if metadata is not None else None,
            final_messages=_message_list(final, "final_messages", plugin, action_id),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionOutcome:
    """What happened to one plugin hook call during a dispatch.

    Args:
        plugin: the plugin name.
        kind: the plugin kind.
        action_id: the action (``None`` when ``init`` or ``get_actions`` failed).
        stage: ``"init"``, ``"get_actions"`` or ``"execute"``.
        ok: whether the call succeeded and its result was valid.
        result: the validated result of a successful ``execute``.
        error: serialized failure (``{"type", "message"}``) when not ok.
        timed_out: whether the failure was the dispatcher's timeout.
        exception: the exception itself (not compared, not serialized).
    """

    plugin: str
    kind: PluginKind
    action_id: str | None
    stage: Literal["init", "get_actions", "execute"]
    ok: bool
    result: ApplicationResult | SessionResult | None = None
    error: Mapping[str, Any] | None = None
    timed_out: bool = False
    exception: BaseException | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class DispatchResult(Generic[S]):
    """The merged result of a lifecycle run or a manual action.

    Args:
        lifecycle: the lifecycle name (``None`` for a manual run).
        trigger_source: who started the run.
        session: the session after every successful action, in order.
        changed: whether any action changed the session.
        outcomes: one record per action run (and per failed ``init``/``get_actions``).
        created: sessions created by application actions, in order.
        updated: other sessions updated by application actions (last update per id wins).
        deleted: session ids deleted by application actions.
        ui_effects: every ``ui_effects`` entry, in order.
        displays: every display payload, in order.
        final_messages: the replaced final messages of a ``response_finalize`` run.
    """

    lifecycle: str | None
    trigger_source: str
    session: S
    changed: bool = False
    outcomes: tuple[ActionOutcome, ...] = ()
    created: tuple[SessionEntry, ...] = ()
    updated: tuple[SessionEntry, ...] = ()
    deleted: tuple[str, ...] = ()
    ui_effects: tuple[Mapping[str, Any], ...] = ()
    displays: tuple[Display, ...] = ()
    final_messages: tuple[Mapping[str, Any], ...] | None = None

    @property
    def failures(self) -> tuple[ActionOutcome, ...]:
        """The outcomes that failed (raised, timed out, or broke the result contract)."""
        return tuple(o for o in self.outcomes if not o.ok)

    @property
    def ok(self) -> bool:
        """True when nothing failed."""
        return all(o.ok for o in self.outcomes)

    @property
    def display(self) -> Display | None:
        """The last display payload, or ``None`` (convenient for manual runs)."""
        return self.displays[-1] if self.displays else None

    @property
    def payload(self) -> Mapping[str, Any]:
        """The merged ``payload`` of every application result (later keys win)."""
        out: dict[str, Any] = {}
        for outcome in self.outcomes:
            if isinstance(outcome.result, ApplicationResult):
                out.update(outcome.result.payload)
        return out

    def ran(self) -> Sequence[tuple[str, str]]:
        """Return ``(plugin, action_id)`` of every successful action, in run order."""
        return [(o.plugin, o.action_id) for o in self.outcomes if o.ok and o.action_id is not None]
