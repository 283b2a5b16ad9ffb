"""A pure reducer over a session's wire state (customizations, active clients, server tools).

:func:`reduce_session` takes the session state as the protocol's JSON (a mapping) and one
action, and returns the next state. It never mutates its input and never raises: an action it
does not handle, or one whose payload is malformed, is a no-op that logs a warning on the
``customtools.host`` logger. "No-op" means the *same object* comes back, so ``next is state``
tells a host nothing changed.

Rules, matching the protocol's reference reducer and its fixtures:

* ``session/customizationsChanged`` replaces the whole list (even with ``[]``).
* ``session/customizationToggled`` sets ``enabled`` on the *top-level* entry with that id
  (plugin, directory or bare MCP server). A child id, an unknown id, or no list: no-op.
* ``session/customizationUpdated`` upserts a top-level entry by id: a match is replaced whole
  (children included), anything else is appended. No list yet: the list is created.
* ``session/customizationRemoved`` removes a top-level entry with its children; otherwise the
  child with that id is removed from every container that holds it. Top-level MCP servers are
  never searched. No match: no-op.
* ``session/activeClientSet`` upserts by ``clientId``: a known client keeps its position and is
  replaced whole; a new one is appended. ``session/activeClientRemoved`` removes that entry
  only -- the host removes the client's customizations and fails its calls separately (see
  :class:`~customtools.host.HostSession`).
* ``session/serverToolsChanged`` replaces ``serverTools``; ``session/mcpServerStateChanged``
  replaces an MCP server's ``state`` and ``channel`` wherever it sits.
* Legacy ``session/activeClientToolsChanged {clientId, tools}`` (removed from the final
  protocol) is accepted and patches that client's ``tools``; hosts never emit it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

__all__ = ["CLIENT_DISPATCHABLE", "is_client_dispatchable", "reduce_session"]

logger = logging.getLogger("customtools.host")

CLIENT_DISPATCHABLE: frozenset[str] = frozenset(
    {
        "session/activeClientSet",
        "session/activeClientRemoved",
        "session/customizationToggled",
        "chat/toolCallConfirmed",
        "chat/toolCallComplete",
        "chat/toolCallResultConfirmed",
        "chat/toolCallContentChanged",
        "chat/turnCancelled",
        "chat/inputAnswerChanged",
        "chat/inputCompleted",
    }
)
"""Action types a client may dispatch in the scope of this toolkit; the host produces the rest."""

State = Mapping[str, Any]


def is_client_dispatchable(action_type: str) -> bool:
    """Return True if a client may dispatch ``action_type`` (extension ``_`` actions: False)."""
    return action_type in CLIENT_DISPATCHABLE


def _ignore(state: State, action: Mapping[str, Any], why: str) -> State:
    logger.warning("ignoring %r: %s", action.get("type"), why)
    return state


def _entries(state: State, key: str) -> list[Any] | None:
    value = state.get(key)
    return list(value) if isinstance(value, list) else None


def _with(state: State, **changes: Any) -> dict[str, Any]:
    return {**state, **changes}


def _key_of(entry: Any, key: str) -> Any:
    return entry.get(key) if isinstance(entry, Mapping) else None


def _upsert(state: State, field: str, key: str, item: Mapping[str, Any]) -> State:
    """Replace the entry of ``state[field]`` whose ``key`` matches ``item``'s, keeping its
    position; append ``item`` when there is none."""
    entries = _entries(state, field) or []
    for index, existing in enumerate(entries):
        if _key_of(existing, key) == item[key]:
            entries[index] = item
            return _with(state, **{field: entries})
    entries.append(item)
    return _with(state, **{field: entries})


def _patch(state: State, field: str, key: str, value: str, change: Any) -> State:
    """Replace the entry of ``state[field]`` whose ``key`` is ``value`` with ``change(entry)``;
    ``state`` itself when there is none."""
    entries = _entries(state, field) or []
    for index, existing in enumerate(entries):
        if _key_of(existing, key) == value:
            entries[index] = change(existing)
            return _with(state, **{field: entries})
    return state


def _remove_top(state: State, field: str, key: str, value: str) -> State | None:
    """Remove the entry of ``state[field]`` whose ``key`` is ``value``; ``None`` when absent."""
    entries = _entries(state, field)
    if entries is None:
        return None
    for index, existing in enumerate(entries):
        if _key_of(existing, key) == value:
            del entries[index]
            return _with(state, **{field: entries})
    return None


def _toggled(state: State, action: Mapping[str, Any]) -> State:
    target, enabled = action.get("id"), action.get("enabled")
    if not isinstance(target, str) or not isinstance(enabled, bool):
        return _ignore(state, action, "needs string 'id' and boolean 'enabled'")
    return _patch(state, "customizations", "id", target, lambda e: {**e, "enabled": enabled})


def _updated(state: State, action: Mapping[str, Any]) -> State:
    entry = action.get("customization")
    if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
        return _ignore(state, action, "needs a 'customization' object with a string 'id'")
    return _upsert(state, "customizations", "id", entry)


def _removed(state: State, action: Mapping[str, Any]) -> State:
    target = action.get("id")
    if not isinstance(target, str):
        return _ignore(state, action, "needs a string 'id'")
    removed = _remove_top(state, "customizations", "id", target)
    if removed is not None:
        return removed
    entries = _entries(state, "customizations")
    if entries is None:
        return state
    changed = False
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or entry.get("type") == "mcpServer":
            continue
        children = entry.get("children")
        if not isinstance(children, list):
            continue
        for pos, child in enumerate(children):
            if _key_of(child, "id") == target:
                entries[index] = {**entry, "children": children[:pos] + children[pos + 1 :]}
                changed = True
                break
    return _with(state, customizations=entries) if changed else state


def _client_set(state: State, action: Mapping[str, Any]) -> State:
    client = action.get("activeClient")
    if not isinstance(client, Mapping) or not isinstance(client.get("clientId"), str):
        return _ignore(state, action, "needs an 'activeClient' object with a string 'clientId'")
    return _upsert(state, "activeClients", "clientId", client)


def _client_removed(state: State, action: Mapping[str, Any]) -> State:
    client_id = action.get("clientId")
    if not isinstance(client_id, str):
        return _ignore(state, action, "needs a string 'clientId'")
    return _remove_top(state, "activeClients", "clientId", client_id) or state


def _legacy_client_tools(state: State, action: Mapping[str, Any]) -> State:
    client_id, tools = action.get("clientId"), action.get("tools")
    if not isinstance(client_id, str) or not isinstance(tools, list):
        return _ignore(state, action, "legacy action needs 'clientId' and a 'tools' array")
    return _patch(state, "activeClients", "clientId", client_id, lambda c: {**c, "tools": tools})


def _mcp_state(state: State, action: Mapping[str, Any]) -> State:
    target, new_state = action.get("id"), action.get("state")
    if not isinstance(target, str) or not isinstance(new_state, Mapping):
        return _ignore(state, action, "needs a string 'id' and a 'state' object")

    def patch(entry: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in entry.items() if k != "channel"}
        out["state"] = new_state
        if action.get("channel") is not None:
            out["channel"] = action["channel"]
        return out

    entries = _entries(state, "customizations")
    if entries is None:
        return state
    for index, entry in enumerate(entries):
        if _key_of(entry, "id") == target:
            if entry.get("type") != "mcpServer":
                return state
            entries[index] = patch(entry)
            return _with(state, customizations=entries)
    for index, entry in enumerate(entries):
        children = entry.get("children") if isinstance(entry, Mapping) else None
        if not isinstance(children, list):
            continue
        for pos, child in enumerate(children):
            if _key_of(child, "id") == target:
                if child.get("type") != "mcpServer":
                    return state
                new_children = list(children)
                new_children[pos] = patch(child)
                entries[index] = {**entry, "children": new_children}
                return _with(state, customizations=entries)
    return state


def _list_replace(key: str, payload: str) -> Any:
    def reduce(state: State, action: Mapping[str, Any]) -> State:
        value = action.get(payload)
        if not isinstance(value, list):
            return _ignore(state, action, f"needs a '{payload}' array")
        return _with(state, **{key: list(value)})

    return reduce


_HANDLERS = {
    "session/customizationsChanged": _list_replace("customizations", "customizations"),
    "session/customizationToggled": _toggled,
    "session/customizationUpdated": _updated,
    "session/customizationRemoved": _removed,
    "session/activeClientSet": _client_set,
    "session/activeClientRemoved": _client_removed,
    "session/activeClientToolsChanged": _legacy_client_tools,
    "session/serverToolsChanged": _list_replace("serverTools", "tools"),
    "session/mcpServerStateChanged": _mcp_state,
}


def reduce_session(state: State, action: Mapping[str, Any]) -> State:
    """Apply one session action to the session state; return the next state.

    Args:
        state: the session state as wire JSON (never mutated).
        action: the action as wire JSON (``{"type": "session/...", ...}``).

    Returns:
        A new mapping when something changed, otherwise ``state`` itself.
    """
    action_type = action.get("type") if isinstance(action, Mapping) else None
    handler = _HANDLERS.get(action_type) if isinstance(action_type, str) else None
    if handler is None:
        logger.warning("ignoring %r: not a session action this reducer handles", action_type)
        return state
    result: State = handler(state, action)
    return result
