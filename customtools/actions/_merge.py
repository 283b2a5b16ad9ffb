"""Bookkeeping of one dispatch: the current session and the results merged so far."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from customtools.actions._context import ContextTemplate
from customtools.actions._definition import ActionDefinition
from customtools.actions._display import Display
from customtools.actions._invoke import NativeCodec
from customtools.actions._plugins import PluginKind
from customtools.actions._results import (
    ActionOutcome,
    ApplicationResult,
    DispatchResult,
    SessionResult,
    entry_id,
)
from customtools.actions._session import SessionLike, merge_patch

__all__ = ["FAILED", "ListedAction", "RunState"]

S = TypeVar("S", bound=SessionLike)

FAILED: Any = object()
"""Sentinel a guarded hook call returns after recording its failure."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedAction:
    """One action as offered by a plugin (see ``ActionDispatcher.list_actions``)."""

    plugin: str
    kind: PluginKind
    action: ActionDefinition


def _field(entry: Any, key: str) -> Any:
    return entry.get(key) if isinstance(entry, Mapping) else getattr(entry, key, None)


class RunState:
    """One dispatch: what it runs with, the session as left so far, and every merged result.

    Args:
        session: the session the run starts from (``None`` when listing actions).
        template: the checked execution context, without the session.
        config: the effective config of the run.
        lifecycle: the lifecycle name (``None`` for manual runs and listings).
        final: the turn's final messages (``response_finalize`` runs).
        raise_on_failure: stop at the first failure with ``ActionFailedError``.
    """

    def __init__(
        self,
        session: Any,
        template: ContextTemplate,
        *,
        config: Mapping[str, Any],
        lifecycle: str | None = None,
        final: Sequence[Mapping[str, Any]] | None = None,
        raise_on_failure: bool,
    ) -> None:
        self.session = session
        self.template = template
        self.config = config
        self.lifecycle = lifecycle
        self.raise_on_failure = raise_on_failure
        self.final_messages: tuple[Mapping[str, Any], ...] | None = (
            tuple(final) if final is not None else None
        )
        self.outcomes: list[ActionOutcome] = []
        self.created: list[Any] = []
        self.updated: dict[str, Any] = {}
        self.deleted: list[str] = []
        self.effects: list[Mapping[str, Any]] = []
        self.displays: list[Display] = []

    def apply(self, result: ApplicationResult | SessionResult, codec: NativeCodec) -> None:
        """Apply one validated result; raises (and changes nothing) if the host code fails."""
        session = self.session
        config = self.config
        if isinstance(result, SessionResult):
            if result.native_messages is not None:
                session = codec.apply_native(session, result.native_messages, config)
            if result.session_metadata is not None:
                patched = merge_patch(session.metadata, result.session_metadata)
                session = session.with_changes(metadata=patched)
            if result.final_messages is not None:
                self.final_messages = result.final_messages
            self.session = session
            return
        for entry in result.updated:
            ident = entry_id(entry)
            if ident != session.id:
                self.updated[ident or ""] = entry
            elif isinstance(entry, type(session)):
                session = entry
            else:
                session = session.with_changes(
                    messages=_field(entry, "messages"), metadata=_field(entry, "metadata")
                )
        self.session = session
        self.created.extend(result.created)
        self.deleted.extend(d for d in result.deleted if d not in self.deleted)
        self.effects.extend(result.ui_effects)
        if result.display is not None:
            self.displays.append(result.display)

    def finish(self, original: S, *, trigger_source: str) -> DispatchResult[S]:
        """Return the merged :class:`DispatchResult`."""
        session: S = self.session
        changed = session is not original and session.to_dict() != original.to_dict()
        return DispatchResult(
            lifecycle=self.lifecycle,
            trigger_source=trigger_source,
            session=session,
            changed=changed,
            outcomes=tuple(self.outcomes),
            created=tuple(self.created),
            updated=tuple(self.updated.values()),
            deleted=tuple(self.deleted),
            ui_effects=tuple(self.effects),
            displays=tuple(self.displays),
            final_messages=self.final_messages,
        )
