"""The ``Type`` schema builder: TypeBox-style constructors for plain JSON Schema (Draft 2020-12).

Every builder returns a fresh, plain ``dict`` that ``json.dumps`` accepts and that is a valid
Draft 2020-12 schema. Inputs are copied, never mutated, so one schema can be reused in many
places. Keyword options become JSON Schema keywords; the known multi-word keywords may also be
spelled in snake_case (``min_length=1`` is ``minLength: 1``).

Rules worth knowing (the reference is ``docs/schema-builder.md``):

* :meth:`Type.Optional` only means something as a value of :meth:`Type.Object`'s properties: it
  keeps that key out of ``required`` and adds nothing else. Anywhere else it is just the schema.
* :meth:`Type.Object` writes ``additionalProperties: false`` unless told otherwise, so arguments
  the tool did not declare are rejected instead of silently reaching it.
* Wrong argument types raise :class:`TypeError`; wrong values (an empty enum, one keyword given
  in two spellings, ``minLength`` above ``maxLength``) raise :class:`~customtools.SchemaError`,
  which is a :class:`ValueError`.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from customtools._errors import SchemaError
from customtools._jsonpointer import escape_token

__all__ = ["Type"]

_Schema = dict[str, Any]
_SchemaLike = Mapping[str, Any] | bool
# ``Type.Any`` shadows ``typing.Any`` inside the class body, so annotations there use this.
_Value = Any

_COUNT_KEYWORDS: Final = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
    | {"minContains", "maxContains"}
)
_NUMBER_KEYWORDS: Final = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
_STRING_KEYWORDS: Final = frozenset(
    {"title", "description", "pattern", "format", "contentMediaType", "contentEncoding"}
    | {"$comment", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$schema"}
)
_BOOLEAN_KEYWORDS: Final = frozenset({"uniqueItems", "readOnly", "writeOnly", "deprecated"})
_SCHEMA_KEYWORDS: Final = frozenset(
    {"additionalProperties", "unevaluatedProperties", "unevaluatedItems", "items", "contains"}
    | {"propertyNames", "not", "if", "then", "else", "contentSchema"}
)
_SCHEMA_MAP_KEYWORDS: Final = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "$defs"}
)
_SCHEMA_LIST_KEYWORDS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# Every known multi-word keyword is also accepted in snake_case (``min_length=1``).
_SNAKE_TO_CAMEL: Final[Mapping[str, str]] = {
    re.sub("([A-Z])", r"_\1", keyword).lower(): keyword
    for keyword in _COUNT_KEYWORDS
    | _NUMBER_KEYWORDS
    | _STRING_KEYWORDS
    | _BOOLEAN_KEYWORDS
    | _SCHEMA_KEYWORDS
    | _SCHEMA_MAP_KEYWORDS
    | _SCHEMA_LIST_KEYWORDS
    | {"dependentRequired"}
    if not keyword.startswith("$") and not keyword.islower()
}
_RANGES: Final = (
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
    ("minContains", "maxContains"),
    ("minimum", "maximum"),
)
# Keywords that only annotate; a record key schema made of these and a type has no constraint.
_ANNOTATIONS: Final = frozenset(
    {"title", "description", "$comment", "examples", "default", "deprecated"}
)
_INTEGER_KEY_PATTERN: Final = "^(?:0|-?[1-9][0-9]*)$"
_MAX_DEPTH: Final = 256


class _OptionalSchema(dict[str, Any]):
    """A schema marked by :meth:`Type.Optional`; :meth:`Type.Object` unwraps it."""

    __slots__ = ()


def _kind(value: object) -> str:
    if callable(value) and not isinstance(value, type):
        return f"{type(value).__name__} {getattr(value, '__qualname__', value)!r}"
    return type(value).__name__


def _copy_json(value: object, where: str, pointer: str = "", depth: int = 0) -> Any:
    """Deep-copy ``value`` into plain JSON types (dict, list, str, int, float, bool, None)."""
    at = f"{where} at '{pointer}'" if pointer else where
    if depth > _MAX_DEPTH:
        raise SchemaError(f"{at}: nested deeper than {_MAX_DEPTH} levels (a cycle?)", path=pointer)
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or type(value) in (str, int, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SchemaError(f"{at}: {value!r} is not a JSON number", path=pointer)
        return float(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{at}: object keys must be str, got {_kind(key)} {key!r}")
            key = str.__str__(key)
            out[key] = _copy_json(item, where, f"{pointer}/{escape_token(key)}", depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [
            _copy_json(item, where, f"{pointer}/{index}", depth + 1)
            for index, item in enumerate(value)
        ]
    raise TypeError(
        f"{at}: {_kind(value)} is not a JSON value (use dict, list, str, int, float, bool, None)"
    )


def _schema(value: object, where: str) -> _Schema | bool:
    """Check that ``value`` is a schema (a mapping or a bool) and return a plain copy."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Mapping):
        copied: _Schema = _copy_json(value, where)
        return copied
    hint = ""
    if callable(value):
        hint = " (did you forget to call it, e.g. Type.String()?)"
    raise TypeError(
        f"{where} must be a JSON Schema (a dict such as Type.String(), or a bool),"
        f" got {_kind(value)}{hint}"
    )


def _schema_list(value: object, where: str, *, allow_empty: bool = False) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise TypeError(
            f"{where} must be a list of schemas, e.g. [Type.String(), Type.Null()],"
            f" got {_kind(value)}"
        )
    if not value and not allow_empty:
        raise SchemaError(f"{where} must hold at least one schema, got an empty list")
    return [_schema(item, f"{where}[{index}]") for index, item in enumerate(value)]


def _keyword_value(where: str, key: str, keyword: str, value: object) -> Any:
    """Check the type of a known keyword's value and return a plain copy."""
    if keyword in _COUNT_KEYWORDS:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{where} must be an int, got {_kind(value)}")
        if value < 0:
            raise SchemaError(f"{where} must be >= 0, got {value}")
        return int(value)
    if keyword in _NUMBER_KEYWORDS:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            hint = ""
            if isinstance(value, bool) and keyword.startswith("exclusive"):
                hint = (
                    f" (in Draft 2020-12 {keyword} is the bound itself, e.g. {key}=0, not a flag)"
                )
            raise TypeError(f"{where} must be a number, got {_kind(value)}{hint}")
        number = _copy_json(value, where)
        if keyword == "multipleOf" and number <= 0:
            raise SchemaError(f"{where} must be > 0, got {value}")
        return number
    if keyword in _STRING_KEYWORDS:
        if not isinstance(value, str):
            raise TypeError(f"{where} must be a str, got {_kind(value)}")
        return str.__str__(value)
    if keyword in _BOOLEAN_KEYWORDS:
        if not isinstance(value, bool):
            raise TypeError(f"{where} must be a bool, got {_kind(value)}")
        return value
    if keyword in _SCHEMA_KEYWORDS:
        return _schema(value, where)
    if keyword in _SCHEMA_LIST_KEYWORDS:
        return _schema_list(value, where)
    if keyword in _SCHEMA_MAP_KEYWORDS:
        if not isinstance(value, Mapping):
            raise TypeError(f"{where} must be a dict of name -> schema, got {_kind(value)}")
        return {
            _name(name, where): _schema(item, f"{where}[{name!r}]") for name, item in value.items()
        }
    if keyword == "examples" and (isinstance(value, str) or not isinstance(value, (list, tuple))):
        raise TypeError(f"{where} must be a list of example values, got {_kind(value)}")
    return _copy_json(value, where)


def _name(name: object, where: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{where}: property names must be str, got {_kind(name)} {name!r}")
    return str.__str__(name)


def _options(builder: str, options: Mapping[str, Any], *reserved: str) -> _Schema:
    """Turn keyword options into JSON Schema keywords.

    Args:
        builder: the builder's name, for messages (``"String"``).
        options: the ``**options`` the caller gave.
        *reserved: keywords the builder sets itself, so they cannot be options.
    """
    out: _Schema = {}
    spelled: dict[str, str] = {}
    for key, value in options.items():
        keyword = _SNAKE_TO_CAMEL.get(key, key)
        if keyword in spelled:
            raise SchemaError(
                f"Type.{builder}: {spelled[keyword]!r} and {key!r} are the same keyword"
                f" ({keyword}); give it once"
            )
        if keyword in reserved:
            hint = _RESERVED_HINTS.get(keyword, "use the builder's own arguments")
            raise SchemaError(
                f"Type.{builder}: the {keyword!r} keyword is set by the builder and cannot be"
                f" given as an option; {hint}"
            )
        spelled[keyword] = key
        out[keyword] = _keyword_value(f"Type.{builder}({key})", key, keyword, value)
    for low, high in _RANGES:
        if low in out and high in out and out[low] > out[high]:
            raise SchemaError(
                f"Type.{builder}: {spelled[low]}={out[low]} is greater than"
                f" {spelled[high]}={out[high]}; no value could match"
            )
    return out


_RESERVED_HINTS: Final[Mapping[str, str]] = {
    "type": "use another builder (or Type.Unsafe) for another type",
    "properties": "pass them as the first argument",
    "required": "mark optional properties with Type.Optional(...)",
}


def _typed(type_name: str, builder: str, options: Mapping[str, Any]) -> _Schema:
    return {"type": type_name, **_options(builder, options, "type")}


def _scalar(value: object, where: str) -> tuple[str, Any]:
    """Return (JSON type name, plain value) for a JSON scalar, else raise TypeError."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None:
        return "null", None
    if isinstance(value, bool):
        return "boolean", value
    if isinstance(value, int):
        return "integer", int(value)
    if isinstance(value, float):
        return "number", _copy_json(value, where)
    if isinstance(value, str):
        return "string", str.__str__(value)
    raise TypeError(f"{where} must be a str, int, float, bool or None, got {_kind(value)}")


def _enum_values(values: object, builder: str) -> list[tuple[str, Any]]:
    where = f"Type.{builder}(values)"
    items: Iterable[object]
    if isinstance(values, type) and issubclass(values, enum.Enum):
        items = [member.value for member in values]
    elif isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
        raise TypeError(
            f"{where} must be a list of values or an enum.Enum class, got {_kind(values)}"
        )
    else:
        items = values
    scalars = [_scalar(item, f"{where}[{index}]") for index, item in enumerate(items)]
    if not scalars:
        raise SchemaError(f"{where} must hold at least one value, got none")
    seen: set[tuple[str, Any]] = set()
    for type_name, value in scalars:
        # JSON Schema compares numbers by value: 1 and 1.0 are the same enum member.
        key = ("number" if type_name == "integer" else type_name, value)
        if key in seen:
            raise SchemaError(f"{where} lists {value!r} more than once")
        seen.add(key)
    return scalars


def _record_key_names(key: object) -> _Schema | None:
    """Return the ``propertyNames`` schema for a record key schema (None: any string)."""
    where = "Type.Record(key)"
    if key is True:
        return None
    if not isinstance(key, Mapping):
        raise TypeError(
            f"{where} must be a key schema such as Type.String() or Type.Integer(),"
            f" got {_kind(key)}"
        )
    constraints = {name: value for name, value in key.items() if name not in _ANNOTATIONS}
    if constraints in ({}, {"type": "string"}):
        return None
    if constraints.get("type") == "integer":
        if len(constraints) > 1:
            raise SchemaError(
                f"{where}: an integer key takes no constraints (keys are strings on the wire);"
                " use Type.String(pattern=...) to constrain keys"
            )
        return {"type": "string", "pattern": _INTEGER_KEY_PATTERN}
    if not _describes_strings(key):
        raise TypeError(
            f"{where}: object keys are strings, so the key schema must be Type.String(...),"
            " Type.Integer(), a string Literal/StringEnum or a Union of those"
        )
    names: _Schema = _copy_json(key, where)
    return names


def _describes_strings(schema: Mapping[str, Any]) -> bool:
    if "type" in schema:
        return bool(schema["type"] == "string")
    if "const" in schema:
        return isinstance(schema["const"], str)
    if "enum" in schema:
        values = schema["enum"]
        return isinstance(values, (list, tuple)) and all(isinstance(v, str) for v in values)
    branches = schema.get("anyOf")
    if isinstance(branches, (list, tuple)) and branches:
        return all(isinstance(b, Mapping) and _describes_strings(b) for b in branches)
    return False


class Type:
    """Builders for plain JSON Schema (Draft 2020-12), in the style of TypeBox.

    The method names are PascalCase on purpose, so tool code reads like the TypeBox schemas it
    is often ported from. Every method returns a new plain ``dict``.

    Example:
        >>> Type.Object({"path": Type.String(min_length=1), "limit": Type.Optional(Type.Integer())})
        ... # doctest: +NORMALIZE_WHITESPACE
        {'type': 'object', 'properties': {'path': {'type': 'string', 'minLength': 1},
         'limit': {'type': 'integer'}}, 'required': ['path'], 'additionalProperties': False}
    """

    __slots__ = ()

    @staticmethod
    def Object(  # noqa: N802
        properties: Mapping[str, _SchemaLike] | None = None, /, **options: _Value
    ) -> _Schema:
        """An object with named properties, in the order given.

        Keys whose value is wrapped in :meth:`Optional` are left out of ``required``; the
        others are listed in order. ``required`` is omitted when nothing is required.

        Args:
            properties: property name -> schema. Omit it for a tool that takes no arguments.
            **options: more keywords. ``additionalProperties`` defaults to ``False``; pass
                ``additional_properties=True`` (or a schema) to accept undeclared keys.

        Returns:
            ``{"type": "object", "properties": {...}, "required": [...],
            "additionalProperties": False, ...}``.

        Raises:
            TypeError: a property name is not a str, or a value is not a schema.
            SchemaError: ``type``, ``properties`` or ``required`` given as an option.
        """
        if properties is None:
            properties = {}
        if not isinstance(properties, Mapping):
            raise TypeError(
                f"Type.Object(properties) must be a dict of name -> schema, got {_kind(properties)}"
            )
        props: _Schema = {}
        required: list[str] = []
        for name, value in properties.items():
            key = _name(name, "Type.Object(properties)")
            props[key] = _schema(value, f"Type.Object(properties)[{key!r}]")
            if not isinstance(value, _OptionalSchema):
                required.append(key)
        extra = _options("Object", options, "type", "properties", "required")
        out: _Schema = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        out["additionalProperties"] = extra.pop("additionalProperties", False)
        out.update(extra)
        return out

    @staticmethod
    def Optional(schema: _SchemaLike, /) -> _Schema:  # noqa: N802
        """Mark an :meth:`Object` property as not required. Adds nothing to the schema.

        The result is the schema itself (a private ``dict`` subclass that compares equal to
        it). Only :meth:`Object` reads the mark, and it stores a plain ``dict``; used anywhere
        else, the mark has no effect. A bool schema becomes ``{}`` (``True``) or
        ``{"not": {}}`` (``False``) so that it can carry the mark.

        Raises:
            TypeError: ``schema`` is not a schema.
        """
        copied = _schema(schema, "Type.Optional(schema)")
        if isinstance(copied, bool):
            copied = {} if copied else {"not": {}}
        return _OptionalSchema(copied)

    @staticmethod
    def String(**options: _Value) -> _Schema:  # noqa: N802
        """A string: ``{"type": "string"}``. Options: ``min_length``, ``pattern``, ``format``..."""
        return _typed("string", "String", options)

    @staticmethod
    def Number(**options: _Value) -> _Schema:  # noqa: N802
        """Any JSON number: ``{"type": "number"}``. Options: ``minimum``, ``multiple_of``..."""
        return _typed("number", "Number", options)

    @staticmethod
    def Integer(**options: _Value) -> _Schema:  # noqa: N802
        """A whole number: ``{"type": "integer"}``. Options: ``minimum``, ``maximum``..."""
        return _typed("integer", "Integer", options)

    @staticmethod
    def Boolean(**options: _Value) -> _Schema:  # noqa: N802
        """``true`` or ``false``: ``{"type": "boolean"}``."""
        return _typed("boolean", "Boolean", options)

    @staticmethod
    def Null(**options: _Value) -> _Schema:  # noqa: N802
        """Only ``null``: ``{"type": "null"}``."""
        return _typed("null", "Null", options)

    @staticmethod
    def Any(**options: _Value) -> _Schema:  # noqa: N802
        """Any JSON value: ``{}`` plus the options (``description=...``)."""
        return _options("Any", options)

    @staticmethod
    def Never(**options: _Value) -> _Schema:  # noqa: N802
        """No value at all: ``{"not": {}}``."""
        return {"not": {}, **_options("Never", options, "not")}

    @staticmethod
    def Array(items: _SchemaLike, /, **options: _Value) -> _Schema:  # noqa: N802
        """A list whose every item matches ``items``: ``{"type": "array", "items": items}``.

        Options: ``min_items``, ``max_items``, ``unique_items``, ``contains``...

        Raises:
            TypeError: ``items`` is not a schema.
        """
        item_schema = _schema(items, "Type.Array(items)")
        extra = _options("Array", options, "type", "items")
        return {"type": "array", "items": item_schema, **extra}

    @staticmethod
    def Tuple(items: Sequence[_SchemaLike], /, **options: _Value) -> _Schema:  # noqa: N802
        """A fixed-length list with one schema per position.

        ``Tuple([a, b])`` is ``{"type": "array", "prefixItems": [a, b], "items": False,
        "minItems": 2, "maxItems": 2}``. ``Tuple([])`` is ``{"type": "array", "maxItems": 0}``
        (the meta-schema forbids an empty ``prefixItems``).

        Raises:
            TypeError: ``items`` is not a list of schemas.
        """
        schemas = _schema_list(items, "Type.Tuple(items)", allow_empty=True)
        extra = _options("Tuple", options, "type", "prefixItems", "items", "minItems", "maxItems")
        if not schemas:
            return {"type": "array", "maxItems": 0, **extra}
        count = len(schemas)
        return {
            "type": "array",
            "prefixItems": schemas,
            "items": False,
            "minItems": count,
            "maxItems": count,
            **extra,
        }

    @staticmethod
    def Record(key: _SchemaLike, value: _SchemaLike, /, **options: _Value) -> _Schema:  # noqa: N802
        """An object used as a map: any number of keys, each value matching ``value``.

        ``Record(Type.String(), V)`` is ``{"type": "object", "additionalProperties": V}``. A key
        schema with constraints (``Type.String(pattern=...)``, a string Literal, StringEnum or
        Union of those) is written as ``propertyNames``; ``Type.Integer()`` keys become
        ``propertyNames: {"type": "string", "pattern": "^(?:0|-?[1-9][0-9]*)$"}``.

        Raises:
            TypeError: ``key`` cannot describe object keys (e.g. ``Type.Number()``), or
                ``value`` is not a schema.
        """
        names = _record_key_names(key)
        value_schema = _schema(value, "Type.Record(value)")
        reserved = ("type", "additionalProperties", "propertyNames", "patternProperties")
        out: _Schema = {"type": "object"}
        if names is not None:
            out["propertyNames"] = names
        out["additionalProperties"] = value_schema
        out.update(_options("Record", options, *reserved, "properties", "required"))
        return out

    @staticmethod
    def Literal(value: str | int | float | bool | None, /, **options: _Value) -> _Schema:  # noqa: N802
        """Exactly one value: ``Literal("add")`` is ``{"type": "string", "const": "add"}``.

        The ``type`` is written too, because some model providers want a type on every node.
        An ``enum.Enum`` member stands for its ``.value``.

        Raises:
            TypeError: ``value`` is not a str, int, float, bool or None.
        """
        type_name, plain = _scalar(value, "Type.Literal(value)")
        return {"type": type_name, "const": plain, **_options("Literal", options, "type", "const")}

    @staticmethod
    def Union(schemas: Sequence[_SchemaLike], /, **options: _Value) -> _Schema:  # noqa: N802
        """A value matching at least one of ``schemas``: ``{"anyOf": [...]}``.

        Raises:
            TypeError: ``schemas`` is not a list of schemas.
            SchemaError: ``schemas`` is empty.
        """
        branches = _schema_list(schemas, "Type.Union(schemas)")
        return {"anyOf": branches, **_options("Union", options, "anyOf")}

    @staticmethod
    def Enum(values: Sequence[_Value] | type[enum.Enum], /, **options: _Value) -> _Schema:  # noqa: N802
        """One of a fixed set of JSON scalars: ``{"enum": [...]}``.

        Args:
            values: a list of str/int/float/bool/None values, or an ``enum.Enum`` class (its
                members' values are used, in definition order).
            **options: more keywords.

        Raises:
            TypeError: a value is not a JSON scalar.
            SchemaError: ``values`` is empty or lists a value twice.
        """
        plain = [value for _, value in _enum_values(values, "Enum")]
        return {"enum": plain, **_options("Enum", options, "enum")}

    @staticmethod
    def StringEnum(values: Sequence[str] | type[enum.Enum], /, **options: _Value) -> _Schema:  # noqa: N802
        """One of a fixed set of strings: ``{"type": "string", "enum": [...]}``.

        Prefer it to :meth:`Enum` for string choices: every provider understands it.

        Raises:
            TypeError: a value is not a str.
            SchemaError: ``values`` is empty or lists a value twice.
        """
        scalars = _enum_values(values, "StringEnum")
        for index, (type_name, value) in enumerate(scalars):
            if type_name != "string":
                raise TypeError(
                    f"Type.StringEnum(values)[{index}] must be a str, got {type(value).__name__}"
                    " (use Type.Enum for mixed values)"
                )
        extra = _options("StringEnum", options, "type", "enum")
        return {"type": "string", "enum": [value for _, value in scalars], **extra}

    @staticmethod
    def Ref(ref: str, /, **options: _Value) -> _Schema:  # noqa: N802
        """A reference to another schema: ``{"$ref": ref}`` (e.g. ``"#/$defs/point"``).

        Raises:
            TypeError: ``ref`` is not a str.
            SchemaError: ``ref`` is empty.
        """
        if not isinstance(ref, str):
            raise TypeError(f"Type.Ref(ref) must be a str, got {_kind(ref)}")
        if not ref:
            raise SchemaError("Type.Ref(ref) must not be empty (e.g. '#/$defs/point')")
        return {"$ref": str.__str__(ref), **_options("Ref", options, "$ref")}

    @staticmethod
    def Unsafe(schema: Mapping[str, _Value], /, **options: _Value) -> _Schema:  # noqa: N802
        """A raw schema fragment, copied as given, with the options merged over it.

        Use it for keywords no builder covers. The fragment is copied into plain JSON types
        but its keywords are not checked here; the tool's schema is checked when it loads.

        Raises:
            TypeError: ``schema`` is not a dict of JSON values.
        """
        if not isinstance(schema, Mapping):
            raise TypeError(f"Type.Unsafe(schema) must be a dict, got {_kind(schema)}")
        raw: _Schema = _copy_json(schema, "Type.Unsafe(schema)")
        raw.update(_options("Unsafe", options))
        return raw
