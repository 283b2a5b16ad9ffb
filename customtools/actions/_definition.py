"""Action definitions: what ``get_actions(state)`` returns, validated.

An action definition is a mapping::

    {
        "id": "ensure_prompt_cache_key",        # required, unique within the plugin
        "label": "Ensure prompt cache key",     # shown in UIs; defaults to the id
        "description": "...",                   # optional
        "inputs": {"name": {"type": "string", "required": True}},
        "trigger": ["session_create", "request_prepare"],   # absent / None / [] = manual
        "_meta": {...},
    }

Unknown keys are kept in :attr:`ActionDefinition.extra` and written back by ``to_dict``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from customtools.actions._errors import ActionDefinitionError, ActionInputError

__all__ = ["INPUT_TYPES", "ActionDefinition", "check_params", "parse_actions"]

INPUT_TYPES: frozenset[str] = frozenset(
    {"string", "number", "integer", "boolean", "object", "array", "null"}
)
"""Values accepted for ``inputs[name]["type"]`` (JSON Schema primitive type names)."""

_ID = re.compile(r"^\S{1,128}$")
_KNOWN = frozenset({"id", "label", "description", "inputs", "trigger", "_meta"})
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "object": (Mapping,),
    "array": (list, tuple),
    "null": (type(None),),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionDefinition:
    """One action a plugin offers.

    Args:
        id: unique within the plugin; 1-128 characters without whitespace.
        label: human-readable name (defaults to ``id`` when parsed without one).
        description: optional longer text.
        inputs: the params the action accepts, ``{name: {"type": ..., "required": ...}}``.
        trigger: lifecycle names that run the action automatically; empty means manual only.
        extra: unknown keys of the wire form, kept for round trips.
        meta: ``_meta`` on the wire.
    """

    id: str
    label: str
    description: str | None = None
    inputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    trigger: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] | None = None

    @property
    def is_manual(self) -> bool:
        """True when the action has no trigger (it runs only when asked for by id)."""
        return not self.trigger

    def triggered_by(self, lifecycle: str) -> bool:
        """Return True when ``lifecycle`` is one of this action's triggers."""
        return lifecycle in self.trigger

    @classmethod
    def from_dict(cls, data: Any, *, plugin: str | None = None) -> ActionDefinition:
        """Validate one wire-form definition.

        Args:
            data: the mapping a plugin returned (an :class:`ActionDefinition` passes through).
            plugin: plugin name used in error messages.

        Raises:
            ActionDefinitionError: naming the plugin, the action and the field.
        """
        if isinstance(data, ActionDefinition):
            return data
        where = f"plugin {plugin!r}" if plugin else "action definition"
        if not isinstance(data, Mapping):
            raise ActionDefinitionError(
                f"{where}: each action must be a mapping with at least an 'id',"
                f" got {type(data).__name__}",
                plugin=plugin,
            )
        action_id = data.get("id")
        if not isinstance(action_id, str) or not _ID.match(action_id):
            raise ActionDefinitionError(
                f"{where}: action 'id' must be a non-empty string of at most 128 characters"
                f" without whitespace, got {action_id!r}",
                plugin=plugin,
            )
        site = _Site(f"{where}, action {action_id!r}", plugin, action_id)
        label = data.get("label", action_id)
        description = data.get("description")
        for name, value in (("label", label), ("description", description)):
            if value is not None and not isinstance(value, str):
                raise site.error(f"'{name}' must be a string, got {type(value).__name__}")
        meta = data.get("_meta")
        if meta is not None and not isinstance(meta, Mapping):
            raise site.error(f"'_meta' must be a mapping, got {type(meta).__name__}")
        return cls(
            id=action_id,
            label=label,
            description=description,
            inputs=_parse_inputs(data.get("inputs"), site),
            trigger=_parse_trigger(data.get("trigger"), site),
            extra={k: v for k, v in data.items() if k not in _KNOWN},
            meta=dict(meta) if meta is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form; ``trigger`` is a string when there is exactly one."""
        out: dict[str, Any] = dict(self.extra)
        out.update({"id": self.id, "label": self.label})
        if self.description is not None:
            out["description"] = self.description
        out["inputs"] = {name: dict(spec) for name, spec in self.inputs.items()}
        if len(self.trigger) == 1:
            out["trigger"] = self.trigger[0]
        elif self.trigger:
            out["trigger"] = list(self.trigger)
        if self.meta is not None:
            out["_meta"] = dict(self.meta)
        return out


@dataclass(frozen=True, slots=True)
class _Site:
    """The definition being read (``plugin 'p', action 'a'``), for its errors."""

    where: str
    plugin: str | None
    action_id: str

    def error(self, problem: str) -> ActionDefinitionError:
        where, plugin, action_id = self.where, self.plugin, self.action_id
        return ActionDefinitionError(f"{where}: {problem}", plugin=plugin, action_id=action_id)


def _parse_trigger(raw: Any, site: _Site) -> tuple[str, ...]:
    if raw is None:
        return ()
    items: Sequence[Any]
    if isinstance(raw, str):
        items = [raw]
    elif isinstance(raw, (list, tuple)):
        items = raw
    else:
        raise site.error(
            f"'trigger' must be a lifecycle name or a list of them, got {type(raw).__name__};"
            " omit it for a manual action"
        )
    out: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise site.error(f"'trigger[{index}]' must be a non-empty lifecycle name, got {item!r}")
        if item not in out:
            out.append(item)
    return tuple(out)


def _parse_inputs(raw: Any, site: _Site) -> dict[str, Mapping[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise site.error(
            f"'inputs' must be a mapping of input name to spec, got {type(raw).__name__}"
        )
    out: dict[str, Mapping[str, Any]] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not isinstance(spec, Mapping):
            raise site.error(f"input {name!r} must map a string name to a spec mapping")
        kind = spec.get("type")
        if kind is not None and kind not in INPUT_TYPES:
            known = ", ".join(sorted(INPUT_TYPES))
            raise site.error(f"input {name!r} has type {kind!r}; use one of {known}")
        if not isinstance(spec.get("required", False), bool):
            raise site.error(f"input {name!r} 'required' must be true or false")
        out[name] = dict(spec)
    return out


def parse_actions(raw: Any, *, plugin: str | None = None) -> tuple[ActionDefinition, ...]:
    """Validate what a plugin's ``get_actions`` returned, keeping its order.

    Args:
        raw: a list (or tuple) of definition mappings; ``None`` means no actions.
        plugin: plugin name used in error messages.

    Raises:
        ActionDefinitionError: for a malformed definition or a duplicate id.
    """
    if raw is None:
        return ()
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence):
        raise ActionDefinitionError(
            f"plugin {plugin!r}: get_actions must return a list of action definitions,"
            f" got {type(raw).__name__}",
            plugin=plugin,
        )
    seen: set[str] = set()
    out: list[ActionDefinition] = []
    for item in raw:
        action = ActionDefinition.from_dict(item, plugin=plugin)
        if action.id in seen:
            raise ActionDefinitionError(
                f"plugin {plugin!r}: duplicate action id {action.id!r};"
                " action ids must be unique within a plugin",
                plugin=plugin,
                action_id=action.id,
            )
        seen.add(action.id)
        out.append(action)
    return tuple(out)


def check_params(action: ActionDefinition, params: Mapping[str, Any], *, plugin: str) -> None:
    """Check manual-run ``params`` against ``action.inputs`` (required keys and types).

    Params not declared in ``inputs`` are passed through; the plugin owns their meaning.

    Raises:
        ActionInputError: naming the plugin, action and every problem found.
    """
    problems: list[str] = []
    for name, spec in action.inputs.items():
        if name not in params:
            if spec.get("required", False):
                problems.append(f"missing required input {name!r}")
            continue
        kind = spec.get("type")
        value = params[name]
        if kind is None:
            continue
        ok = isinstance(value, _PY_TYPES[kind])
        if kind in {"number", "integer"} and isinstance(value, bool):
            ok = False
        if not ok:
            problems.append(f"input {name!r} must be {kind}, got {type(value).__name__}")
    if problems:
        raise ActionInputError(f"plugin {plugin!r}, action {action.id!r}: " + "; ".join(problems))
