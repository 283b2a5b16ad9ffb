"""Lifecycle names and trigger sources.

Lifecycle names are open strings: any non-empty string is a valid lifecycle and a valid
``trigger``. The constants below are the standard vocabulary a host is expected to use for
its own flows, so plugins written against one host work with another.
"""

from __future__ import annotations

__all__ = [
    "AGENT_SWITCH_COMPLETE",
    "AGENT_SWITCH_PREPARE",
    "REQUEST_COMPLETE",
    "REQUEST_ERROR",
    "REQUEST_PREPARE",
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
]

SESSION_CREATE = "session_create"
"""A brand-new session exists and has not been persisted yet."""

SESSION_SAVE_PREPARE = "session_save_prepare"
"""A session is about to be written to the session store."""

REQUEST_PREPARE = "request_prepare"
"""Config is resolved and a request is about to start: repair or initialize session state."""

REQUEST_COMPLETE = "request_complete"
"""A request succeeded and a final session exists, before post-request persistence."""

REQUEST_ERROR = "request_error"
"""A request failed; context carries the serialized ``error``."""

SESSION_FORK = "session_fork"
"""Runs on a new fork; context carries the serialized ``original_session``."""

AGENT_SWITCH_PREPARE = "agent_switch_prepare"
"""A session is about to move from ``previous_agent_id`` to ``next_agent_id``."""

AGENT_SWITCH_COMPLETE = "agent_switch_complete"
"""A session has been assigned to its new agent."""

SESSION_DELETE_PREPARE = "session_delete_prepare"
"""A session is about to be deleted: last chance for session-scoped bookkeeping."""

RESPONSE_FINALIZE = "response_finalize"
"""Core-owned: the final messages of a turn exist but have not been emitted yet."""

SESSION_LIST = "session_list"
"""A host is building session-list summaries (read path; not in the standard mutating set)."""

STANDARD_LIFECYCLES: tuple[str, ...] = (
    SESSION_CREATE,
    SESSION_SAVE_PREPARE,
    REQUEST_PREPARE,
    REQUEST_COMPLETE,
    REQUEST_ERROR,
    SESSION_FORK,
    AGENT_SWITCH_PREPARE,
    AGENT_SWITCH_COMPLETE,
    SESSION_DELETE_PREPARE,
)
"""The application-owned mutating lifecycles, in the order a session usually meets them."""

TRIGGER_MANUAL = "manual"
"""``trigger_source`` of an action a user or UI ran by hand."""

TRIGGER_APPLICATION = "application"
"""``trigger_source`` of a lifecycle run dispatched with an application object."""

TRIGGER_CORE = "core"
"""``trigger_source`` of a lifecycle run dispatched without an application (core-only mode)."""
