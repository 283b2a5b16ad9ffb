"""The per-call context a host hands to tools: :class:`ToolContext`.

A tool receives it as the fourth argument of ``execute(tool_call_id, params, on_update, ctx,
signal)`` and as the second of ``on_session(event, ctx)``. It is a read-only view: tools read the
session and model, and may *ask* the host to abort through :meth:`ToolContext.abort`.

When a host passes no context, tools get :data:`DEFAULT_CONTEXT`: empty session, no model, no
UI, and an ``abort()`` that only logs, because there is no host operation to stop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["DEFAULT_CONTEXT", "ToolContext"]

_log = logging.getLogger("customtools.context")

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _no_host_abort(reason: Any) -> None:
    _log.debug("ctx.abort(%r) ignored: no host is attached to this tool context", reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """What a tool may know about the host while it runs.

    Args:
        session: a read-only view of the session (messages, metadata, ...). Any mapping given
            is wrapped in a read-only proxy.
        session_manager: the host's session object, for tools that rebuild state from history
            (for example on ``branch``); ``None`` when the host has none.
        model: the model currently answering (a name or the host's model object).
        cwd: the host's working directory.
        ui: the host's UI object (see ``LoadResult.set_ui_context``); ``None`` headless.
        has_ui: whether ``ui`` is a real interactive UI.
        is_idle: whether the host's agent is idle (no turn running).
        has_queued_messages: whether the user queued messages while tools run.
        on_abort: the host's callback behind :meth:`abort`.
        extra: anything else a host wants to pass, read-only.
        meta: ``_meta`` for protocol bridges.
    """

    session: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    session_manager: Any = None
    model: Any = None
    cwd: str | None = None
    ui: Any = None
    has_ui: bool = False
    is_idle: bool = True
    has_queued_messages: bool = False
    on_abort: Callable[[Any], None] = field(default=_no_host_abort, repr=False)
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.session, MappingProxyType):
            object.__setattr__(self, "session", MappingProxyType(dict(self.session)))
        if not isinstance(self.extra, MappingProxyType):
            object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def abort(self, reason: Any = None) -> None:
        """Ask the host to abort its current operation (the whole agent turn, not just this call).

        The request is fire-and-forget: the host decides what to stop. Errors raised by the
        host's callback are logged, never raised into the tool.
        """
        try:
            self.on_abort(reason)
        except Exception:
            _log.exception("the host's on_abort callback raised")


DEFAULT_CONTEXT = ToolContext()
"""The context tools see when the host passes none."""
