"""Schema analysis and :func:`check_schema`: is a ``parameters`` schema usable, and how risky?"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from customtools._errors import SchemaError
from customtools._jsonpointer import escape_token
from customtools._validation._engines import RustEngine, ValidatorEngine, resolve_engine
from customtools._violations import DEFAULT_LIMITS, ValidationLimits

__all__ = ["SchemaInfo", "analyze_schema", "canonical_key", "check_schema"]

# Keywords whose value is a map of names to subschemas: its keys are names, not keywords.
_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
# Keywords whose value is data, never a schema.
_DATA = frozenset({"enum", "const", "default", "examples"})


# Keywords whose value is one subschema that values in the instance must satisfy. ``not``,
# ``if``, ``contains`` and ``propertyNames`` are left out: a free-form schema there opens
# nothing (the parent still decides what its values are).
_APPLIES = frozenset(
    {
        "additionalProperties",
        "unevaluatedProperties",
        "items",
        "additionalItems",
        "unevaluatedItems",
        "then",
        "else",
    }
)
_APPLIES_EACH = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_APPLIES_BY_NAME = _NAME_MAPS | {"dependencies"}
# A subschema without ``type`` built only from these is judged by what it refers to.
_DEFERS = frozenset({"$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf"})


@dataclass(frozen=True, slots=True)
class SchemaInfo:
    """What compile time learns about a schema so the hot path can skip work.

    Attributes:
        nodes: number of JSON values in the schema.
        depth: deepest nesting of the schema.
        guarded: check the argument limits and JSON-ness with an iterative walk before the
            engine runs: validation can descend deeper than the schema (recursive ``$ref``,
            ``$dynamicRef``, remote references, ``uniqueItems``), or ``open_values``.
        has_defaults: some subschema declares a ``default``.
        open_values: some value can reach the tool without the engine looking at it: a
            free-form field (``{}``, ``true``, an object schema without
            ``additionalProperties``, an array schema without ``items``, a schema with no
            ``type``), or a place accepting ``null``, which the compiled engine also reads
            ``NaN`` and ``Infinity`` as.
        only_nulls: the only reason to guard is places accepting ``null``: valid arguments
            then need just a check for non-finite numbers, not the whole walk.
    """

    nodes: int
    depth: int
    guarded: bool
    has_defaults: bool
    open_values: bool = False
    only_nulls: bool = False


def canonical_key(schema: Any) -> str:
    """Return the canonical JSON text of ``schema`` (the cache key); raise if it is not JSON."""
    return json.dumps(schema, sort_keys=True, allow_nan=False, separators=(",", ":"))


def _refs_cycle(refs: list[tuple[str, str]]) -> bool:
    """Whether local ``$ref`` edges (location, target pointer) can reach themselves again."""

    def inside(location: str, target: str) -> bool:
        return location == target or location.startswith(target + "/") or target == ""

    edges = {
        index: [j for j, (loc, _) in enumerate(refs) if inside(loc, target)]
        for index, (_, target) in enumerate(refs)
    }
    state: dict[int, int] = {}  # 1 = on the current path, 2 = finished
    for start in edges:
        if start in state:
            continue
        stack = [(start, iter(edges[start]))]
        state[start] = 1
        while stack:
            node, successors = stack[-1]
            for nxt in successors:
                if state.get(nxt) == 1:
                    return True
                if nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(edges[nxt])))
                    break
            else:
                state[node] = 2
                stack.pop()
    return False


_NULL_ONLY = "null"
"""What :func:`_opens_values` says of a subschema that is closed but accepts ``null``."""


def _opens_values(node: Any) -> bool | str:
    """Whether this one subschema lets values through unexamined (see ``open_values``):
    ``True`` for a free-form place, :data:`_NULL_ONLY` for a closed one that accepts
    ``null`` (where the compiled engine also reads ``NaN`` and ``Infinity``), else ``False``."""
    if node is True:
        return True
    if not isinstance(node, dict):
        return False
    if "enum" in node or "const" in node:
        values = node["enum"] if "enum" in node else [node["const"]]
        return _NULL_ONLY if isinstance(values, list) and any(v is None for v in values) else False
    declared = node.get("type")
    if declared is None:
        return not any(key in node for key in _DEFERS)
    types = [declared] if isinstance(declared, str) else declared
    if not isinstance(types, list):
        return True
    if "object" in types and not (
        "additionalProperties" in node or "unevaluatedProperties" in node
    ):
        return True
    if "array" in types:
        items = node.get("items")
        if (isinstance(items, list) or items is None) and not (
            "additionalItems" in node or "unevaluatedItems" in node
        ):
            return True
    return _NULL_ONLY if "null" in types else False


def open_values_kind(schema: Any) -> str | None:
    """``"free"`` when some value valid for ``schema`` can hold anything, ``"null"`` when
    the only such places accept ``null`` (and so ``NaN``/``Infinity`` in the compiled
    engine), ``None`` when every value is examined.

    Walks every subschema that applies to values (``properties``, ``items``, combinators,
    ``$defs``, ...) without recursion; a subschema it cannot judge counts as open.
    """
    kind: str | None = None
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        opens = _opens_values(node)
        if opens is True:
            return "free"
        if opens:
            kind = "null"
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in _APPLIES:
                if isinstance(value, list):  # ``items`` as an array (drafts before 2020-12)
                    stack.extend(value)
                else:
                    stack.append(value)
            elif key in _APPLIES_EACH and isinstance(value, list):
                stack.extend(value)
            elif key in _APPLIES_BY_NAME and isinstance(value, dict):
                stack.extend(v for v in value.values() if isinstance(v, (dict, bool)))
    return kind


def analyze_schema(schema: Any) -> SchemaInfo:
    """Walk ``schema`` once, without recursion, and summarise it (see :class:`SchemaInfo`)."""
    nodes = 0
    max_depth = 0
    dynamic = False
    nested_id = False
    has_defaults = False
    refs: list[tuple[str, str]] = []
    # (value, pointer, depth, mode): mode 0 = schema, 1 = map of names to schemas, 2 = data
    stack: list[tuple[Any, str, int, int]] = [(schema, "", 1, 0)]
    while stack:
        value, pointer, depth, mode = stack.pop()
        nodes += 1
        if depth > max_depth:
            max_depth = depth
        if isinstance(value, dict):
            if mode == 0:
                if "$ref" in value:
                    refs.append((pointer, value["$ref"]))
                if "default" in value:
                    has_defaults = True
                if "$id" in value and pointer:
                    nested_id = True
                dynamic = dynamic or (
                    value.get("uniqueItems") is True
                    or "$dynamicRef" in value
                    or "$recursiveRef" in value
                )
            for key, item in value.items():
                if mode == 0:
                    child_mode = 1 if key in _NAME_MAPS else 2 if key in _DATA else 0
                else:
                    child_mode = 2 if mode == 2 else 0
                stack.append((item, f"{pointer}/{escape_token(str(key))}", depth + 1, child_mode))
        elif isinstance(value, (list, tuple)):
            child_mode = 2 if mode == 2 else 0
            for index, item in enumerate(value):
                stack.append((item, f"{pointer}/{index}", depth + 1, child_mode))
    guarded = dynamic
    if refs and not guarded:
        local: list[tuple[str, str]] = []
        for location, ref in refs:
            if not isinstance(ref, str) or nested_id or not ref.startswith("#") or "%" in ref:
                guarded = True  # remote, anchor or re-based reference: assume it can recurse
                break
            target = ref[1:]
            if target and not target.startswith("/"):
                guarded = True
                break
            local.append((location, target))
        else:
            guarded = _refs_cycle(local)
    kind = open_values_kind(schema)
    return SchemaInfo(
        nodes=nodes,
        depth=max_depth,
        guarded=guarded or kind is not None,
        has_defaults=has_defaults,
        open_values=kind is not None,
        only_nulls=kind == "null" and not guarded,
    )


_INFO_CACHE: dict[str, SchemaInfo] = {}


def cached_info(schema: Any, key: str | None) -> SchemaInfo:
    """Return :func:`analyze_schema` of ``schema``, cached by its canonical ``key``."""
    if key is None:
        return analyze_schema(schema)
    info = _INFO_CACHE.get(key)
    if info is None:
        if len(_INFO_CACHE) >= 4096:
            _INFO_CACHE.clear()
        info = _INFO_CACHE[key] = analyze_schema(schema)
    return info


def _root_allows_object(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    if declared is None:
        return True
    if isinstance(declared, str):
        return declared == "object"
    return isinstance(declared, list) and "object" in declared


def check_schema(
    schema: Any,
    *,
    where: str = "parameters",
    limits: ValidationLimits | None = None,
    engine: ValidatorEngine | str | None = None,
) -> None:
    """Check that ``schema`` can serve as a tool's ``parameters``.

    Requirements: ``schema`` is a JSON mapping (tool arguments are always an object, so a
    root ``"type"``, if any, must allow ``"object"``; writing ``"type": "object"`` is
    recommended); it is a valid Draft 2020-12 schema (checked against the meta-schema); every
    ``pattern`` compiles in the engine's regex engine (the default is linear-time, so
    lookaround and backreferences are rejected); every ``$ref`` resolves without the network;
    and it stays within ``limits.max_schema_nodes`` and ``limits.max_schema_depth``.

    Results are cached by the schema's canonical JSON, so checking the same schema again
    (and compiling it later with :func:`compile_validator`) costs a few microseconds.

    Args:
        schema: the candidate schema.
        where: what the schema is, for the message (``"parameters of tool 'grep'"``).
        limits: size limits; :class:`ValidationLimits` defaults when omitted.
        engine: the engine whose rules apply (default: the Rust engine).

    Raises:
        SchemaError: the schema is unusable; ``.path`` points into the schema.
    """
    limits = limits or DEFAULT_LIMITS
    if not isinstance(schema, dict):
        raise SchemaError(
            f"{where}: the schema must be a JSON object (a dict), not {type(schema).__name__}; "
            'use {"type": "object", "properties": {...}}',
            path="",
        )
    if not _root_allows_object(schema):
        raise SchemaError(
            f"{where} at /type: tool arguments are an object, so the root schema must have "
            f'"type": "object", not {schema.get("type")!r}',
            path="/type",
        )
    try:
        key = canonical_key(schema)
    except RecursionError:
        raise SchemaError(f"{where}: the schema is nested too deeply", path="") from None
    except (TypeError, ValueError) as exc:
        raise SchemaError(
            f"{where}: the schema is not plain JSON ({exc}); use only dict, list, str, "
            "int, float, bool and None with string keys and finite numbers",
            path="",
        ) from None
    info = cached_info(schema, key)
    if info.nodes > limits.max_schema_nodes:
        raise SchemaError(
            f"{where}: the schema has {info.nodes} values, more than the limit of "
            f"{limits.max_schema_nodes}; simplify it",
            path="",
        )
    if info.depth > limits.max_schema_depth:
        raise SchemaError(
            f"{where}: the schema is nested {info.depth} levels deep, more than the limit of "
            f"{limits.max_schema_depth}; flatten it or use $defs and $ref",
            path="",
        )
    resolved = resolve_engine(engine)
    try:
        if isinstance(resolved, RustEngine):
            resolved.compile_keyed(schema, key)
        else:
            resolved.compile(schema)
    except SchemaError as exc:
        location = exc.path or "(root)"
        raise SchemaError(
            f"{where}: invalid JSON Schema at {location}: {exc}", path=exc.path
        ) from None
