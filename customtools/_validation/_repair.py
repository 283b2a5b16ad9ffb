"""LLM-friendly repairs of tool arguments (coercions) and schema defaults, copy-on-write.

Nothing here mutates the caller's value: a container is copied the first time something
inside it changes, and untouched branches are shared with the original.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from customtools._validation._guard import find_limit_violation, reject_constant
from customtools._violations import Coercion, ValidationLimits, Violation, json_pointer

__all__ = ["Repairer", "replaced", "without"]

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_MAX_NUMERIC_CHARS = 64
_MAX_REF_HOPS = 16
_NOTHING: Any = object()
# Keywords that only ever fail on strings: a non-empty string failing one cannot be parsed into
# another type (its schema wants a string), so only the "" / "null" drop can apply.
_STRING_ONLY = frozenset(
    {"pattern", "minLength", "maxLength", "format", "contentEncoding", "contentMediaType"}
)

# Keywords that only ever fail on numbers, objects or arrays, or on our own guards: the value
# they point at is never a string or null, so no coercion or drop can repair it.
_NEVER_ON_STRINGS = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "required",
        "additionalProperties",
        "unevaluatedProperties",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "propertyNames",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
        "additionalItems",
        "limits",
        "json",
    }
)
_JSON_TYPES: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    dict: "object",
    list: "array",
}


def without(value: Any, parts: Sequence[str | int]) -> Any:
    """Return a copy of ``value`` with the key at ``parts`` removed (copying along the path)."""
    head = parts[0]
    new: Any = dict(value) if isinstance(value, dict) else list(value)
    if len(parts) == 1:
        del new[head]
    else:
        new[head] = without(value[head], parts[1:])
    return new


def replaced(value: Any, parts: Sequence[str | int], item: Any) -> Any:
    """Return a copy of ``value`` with ``item`` at ``parts`` (copying along the path)."""
    if not parts:
        return item
    head = parts[0]
    new: Any = dict(value) if isinstance(value, dict) else list(value)
    new[head] = replaced(value[head], parts[1:], item)
    return new


class Repairer:
    """Applies coercions and defaults as directed by one root schema."""

    __slots__ = ("_keeps_strings", "_limits", "_objects", "_root", "_types_memo")

    def __init__(self, root: Any, limits: ValidationLimits) -> None:
        self._root = root
        self._limits = limits
        # Declared top-level properties whose schema accepts strings: a string there is never
        # parsed into another type, so only "" or "null" can be repaired (dropped).
        self._keeps_strings: dict[str, bool] = {}
        # Memos keyed by id() of schema nodes: the root keeps every node alive and unchanged.
        self._types_memo: dict[int, frozenset[str] | None] = {}
        self._objects: dict[int, tuple[dict[str, Any], frozenset[str], bool, Any]] = {}

    def _object_info(self, node: Any) -> tuple[dict[str, Any], frozenset[str], bool, Any]:
        """(properties, required names, has patternProperties, additionalProperties)."""
        info = self._objects.get(id(node))
        if info is None:
            properties = self._lookup(node, "properties")
            required = self._lookup(node, "required")
            info = (
                properties if isinstance(properties, dict) else {},
                frozenset(r for r in required if isinstance(r, str))
                if isinstance(required, list)
                else frozenset(),
                bool(self._lookup(node, "patternProperties")),
                self._lookup(node, "additionalProperties"),
            )
            self._objects[id(node)] = info
        return info

    # -- schema lookups ---------------------------------------------------------------------

    def _target(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        node: Any = self._root
        if ref in ("#", "#/"):
            return node
        if not ref.startswith("#/"):
            return None
        for raw in ref[2:].split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    def _lookup(self, node: Any, key: str, absent: Any = None) -> Any:
        """``node[key]``, following local ``$ref``s when the node does not say it itself;
        ``absent`` when no node on the way has the key."""
        for _ in range(_MAX_REF_HOPS):
            if not isinstance(node, dict):
                return absent
            if key in node:
                return node[key]
            if "$ref" not in node:
                return absent
            node = self._target(node["$ref"])
        return absent

    def _types(self, node: Any, hops: int = 0) -> frozenset[str] | None:
        key = id(node)
        if key in self._types_memo:
            return self._types_memo[key]
        types = self._types_uncached(node, hops)
        self._types_memo[key] = types
        return types

    def _types_uncached(self, node: Any, hops: int) -> frozenset[str] | None:
        declared = self._lookup(node, "type")
        if isinstance(declared, str):
            return frozenset((declared,))
        if isinstance(declared, list):
            return frozenset(t for t in declared if isinstance(t, str))
        if hops > _MAX_REF_HOPS:
            return None
        for keyword in ("anyOf", "oneOf"):
            branches = self._lookup(node, keyword)
            if isinstance(branches, list) and branches:
                found: set[str] = set()
                for branch in branches:
                    branch_types = self._types(branch, hops + 1)
                    if branch_types is None:
                        return None
                    found |= branch_types
                return frozenset(found)
        const = self._lookup(node, "const")
        if const is not None:
            return frozenset((_JSON_TYPES.get(type(const), "?"),))
        enum = self._lookup(node, "enum")
        if isinstance(enum, list) and enum:
            return frozenset(_JSON_TYPES.get(type(v), "?") for v in enum)
        return None

    # -- coercions --------------------------------------------------------------------------

    def _from_string(self, text: str, types: frozenset[str]) -> tuple[Any, str] | None:
        # Numbers and booleans must be the whole string (" 1 " and "\u00a02" stay strings);
        # a JSON text may carry JSON whitespace around it, nothing else.
        if len(text) <= _MAX_NUMERIC_CHARS:
            if "integer" in types and _INTEGER.fullmatch(text):
                return int(text), "numeric_string"
            if "number" in types and _NUMBER.fullmatch(text):
                if _INTEGER.fullmatch(text):
                    return int(text), "numeric_string"
                number = float(text)
                if math.isfinite(number):
                    return number, "numeric_string"
            if "boolean" in types and text in ("true", "false"):
                return text == "true", "boolean_string"
        stripped = text.strip(" \t\n\r")
        if ("object" in types or "array" in types) and stripped[:1] in ("{", "["):
            try:
                parsed = json.loads(stripped, parse_constant=reject_constant)
            except (ValueError, RecursionError):
                return None
            wanted = "object" if isinstance(parsed, dict) else "array"
            if wanted in types and find_limit_violation(parsed, self._limits) is None:
                return parsed, "json_string"
        return None

    def repair(
        self, value: Any, violations: Sequence[Violation], out: list[Coercion]
    ) -> tuple[Any, bool]:
        """Repair the values at the violations' paths; record each repair in ``out``.

        Only values the engine rejected are touched, so the cost follows the number of
        violations, not the size of the arguments. A repair can reveal more (the items of a
        parsed JSON string): the caller validates again and calls this again.

        Returns:
            ``(value, changed)``: a copy with the repairs applied, or ``value`` unchanged.
        """
        changed = False
        seen: set[str] = set()
        top = value if type(value) is dict else None
        for violation in violations:
            path = violation.path
            keyword = violation.keyword
            if keyword in _NEVER_ON_STRINGS or path in seen:
                continue
            if not path and value is not None and type(value) is not str:
                continue  # the root object itself (additionalProperties, required, ...)
            if top is not None and path.count("/") == 1 and "~" not in path:
                # Both repairs start from a string or a null: a top-level value of any other
                # type needs no schema walk. A top-level string failing a string keyword can
                # only be dropped, and only when it is "" or "null".
                current = top.get(path[1:])
                if current is not None and type(current) is not str:
                    continue
                if current not in ("", "null") and (
                    keyword in _STRING_ONLY or self._keeps_string(path[1:])
                ):
                    continue
            seen.add(path)
            located = self._locate(value, path)
            if located is None:
                continue
            parts, current, node, optional = located
            if isinstance(current, str) and parts:  # never the root: "{}" is not an object
                types = self._types(node)
                if types and "string" not in types:
                    repaired = self._from_string(current, types)
                    if repaired is not None:
                        new, kind = repaired
                        out.append(Coercion(path=path, kind=kind, original=current, value=new))
                        value = replaced(value, parts, new)
                        changed = True
                        continue
            if optional and (current is None or current in ("", "null")):
                out.append(Coercion(path=path, kind="dropped_null", original=current, value=None))
                value = without(value, parts)
                changed = True
        return value, changed

    def _keeps_string(self, key: str) -> bool:
        """Whether the root schema declares property ``key`` with a type including string."""
        known = self._keeps_strings.get(key)
        if known is None:
            properties = self._object_info(self._root)[0]
            if key not in properties:
                return False  # not memoized: keys outside the schema come from the input
            types = self._types(properties[key])
            known = self._keeps_strings[key] = types is not None and "string" in types
        return known

    def _locate(self, value: Any, path: str) -> tuple[tuple[str | int, ...], Any, Any, bool] | None:
        """Find the value at ``path`` and its subschema; ``None`` if the schema is unclear.

        Returns ``(parts, value, subschema, optional)`` where ``optional`` says the value is
        a declared property its object does not require.
        """
        node: Any = self._root
        parts: list[str | int] = []
        optional = False
        if not path:
            return (), value, node, False
        for raw in path[1:].split("/"):
            key = raw.replace("~1", "/").replace("~0", "~") if "~" in raw else raw
            if isinstance(value, dict):
                if key not in value:
                    return None
                properties, required, patterned, additional = self._object_info(node)
                if key in properties:
                    optional = key not in required
                    node = properties[key]
                elif patterned:
                    return None
                else:
                    optional = False
                    node = additional
                value = value[key]
                parts.append(key)
            elif isinstance(value, (list, tuple)):
                if not key.isdigit() or int(key) >= len(value):
                    return None
                index = int(key)
                prefix = self._lookup(node, "prefixItems")
                if isinstance(prefix, list) and index < len(prefix):
                    node = prefix[index]
                else:
                    node = self._lookup(node, "items")
                optional = False
                value = value[index]
                parts.append(index)
            else:
                return None
            if not isinstance(node, dict):
                return None
        return tuple(parts), value, node, optional

    # -- defaults ---------------------------------------------------------------------------

    def apply_defaults(self, value: Any, out: list[Coercion]) -> Any:
        """Return ``value`` with missing optional properties set to their schema defaults."""
        return self._defaults(value, self._root, (), out, 0)

    def _defaults(
        self, value: Any, node: Any, parts: tuple[str | int, ...], out: list[Coercion], depth: int
    ) -> Any:
        if not isinstance(value, dict) or depth > self._limits.max_depth:
            return value
        properties = self._lookup(node, "properties")
        if not isinstance(properties, dict):
            return value
        required = self._lookup(node, "required")
        required = required if isinstance(required, list) else ()
        result: Any = value
        for key, sub in properties.items():
            if key in value:
                item = value[key]
                new = self._defaults(item, sub, (*parts, key), out, depth + 1)
            elif key not in required:
                new = self._lookup(sub, "default", _NOTHING)
                if new is _NOTHING:
                    continue
                new = copy.deepcopy(new) if isinstance(new, (dict, list)) else new
                out.append(
                    Coercion(
                        path=json_pointer((*parts, key)), kind="default", original=None, value=new
                    )
                )
                item = _NOTHING
            else:
                continue
            if new is not item:
                if result is value:
                    result = dict(value)
                result[key] = new
        return result
