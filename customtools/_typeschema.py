"""JSON Schema from Python annotations, and converters from validated JSON back to the types.

:class:`SchemaDeriver` turns each annotation into a plain Draft 2020-12 schema with closed
objects and, where the function expects something other than JSON data (an ``Enum``, a
dataclass, a ``TypedDict`` with such fields, a pydantic model, a ``tuple``, a ``date``), a
converter that builds it from the validated arguments. Supported:

``int``, ``float``, ``str``, ``bool``, ``None``, ``Any``, ``list[T]``, ``set[T]``,
``tuple[A, B]``, ``tuple[T, ...]``, ``dict[str, T]``, ``Literal[...]``, ``Enum``, ``X | None``
and other unions, ``Annotated[T, ...]`` (a description string, a ``Type.*`` schema fragment,
or constraint objects with ``ge``/``gt``/``le``/``lt``/``multiple_of``/``min_length``/
``max_length``/``pattern``/``description`` attributes, as ``annotated_types`` and pydantic's
``Field`` carry them), ``TypedDict``, dataclasses, pydantic models (duck-typed: pydantic is
never imported here), ``datetime``/``date``/``time``, ``UUID`` and ``Path`` (strings).

Anything else is a :class:`~customtools.ToolDefinitionError` naming the tool, the parameter
and the type: nothing is silently turned into a free-form field.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import inspect
import pathlib
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from customtools._errors import ToolDefinitionError

__all__ = [
    "NO_DEFAULT",
    "RESULT_KEY",
    "Converter",
    "SchemaDeriver",
    "derive_output_schema",
    "to_jsonable",
]

Converter = Callable[[Any], Any]
"""Turns one validated JSON value into the annotated Python type."""

RESULT_KEY = "result"
"""The key a non-object return value is wrapped under in ``structured_content``."""

NO_DEFAULT: Any = inspect.Parameter.empty
"""Stands for "no default" (the same marker :mod:`inspect` uses)."""

_SCALARS: dict[Any, dict[str, Any]] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    type(None): {"type": "null"},
}
_STRINGS: dict[Any, tuple[dict[str, Any], Converter]] = {
    datetime.datetime: ({"type": "string", "format": "date-time"}, datetime.datetime.fromisoformat),
    datetime.date: ({"type": "string", "format": "date"}, datetime.date.fromisoformat),
    datetime.time: ({"type": "string", "format": "time"}, datetime.time.fromisoformat),
    uuid.UUID: ({"type": "string", "format": "uuid"}, uuid.UUID),
    pathlib.Path: ({"type": "string"}, pathlib.Path),
}
_CONSTRAINTS = (
    ("gt", "exclusiveMinimum"),
    ("ge", "minimum"),
    ("lt", "exclusiveMaximum"),
    ("le", "maximum"),
    ("multiple_of", "multipleOf"),
    ("pattern", "pattern"),
    ("description", "description"),
)
_LENGTHS = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems")}
_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


def _json_type(value: Any) -> str | None:
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return name
    return "null" if value is None else None


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds = {_json_type(value) for value in values}
    schema: dict[str, Any] = {"enum": values} if len(values) != 1 else {"const": values[0]}
    if len(kinds) == 1 and None not in kinds:
        schema = {"type": kinds.pop(), **schema}
    return schema


def _is_pydantic_model(tp: Any) -> bool:
    return isinstance(tp, type) and all(
        callable(getattr(tp, name, None)) for name in ("model_json_schema", "model_validate")
    )


def _closed_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An object schema of ``properties`` (``required`` listed when not empty) that refuses
    other keys."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _close(schema: dict[str, Any]) -> None:
    """Mark object schemas closed where they say nothing about extra keys (pydantic's)."""
    if schema.get("type") == "object" and "additionalProperties" not in schema:
        schema["additionalProperties"] = False


def to_jsonable(value: Any) -> Any:
    """``value`` as JSON data: dataclasses, pydantic models, enums, tuples and sets unpacked."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, (datetime.date, datetime.time, uuid.UUID, pathlib.PurePath)):
        return value.isoformat() if hasattr(value, "isoformat") else str(value)
    return value


class SchemaDeriver:
    """Derives schemas and converters for one tool, collecting shared ``$defs``."""

    def __init__(self, *, tool_name: str, strict: bool = False) -> None:
        self.tool_name = tool_name
        self.strict = strict
        self.defs: dict[str, Any] = {}
        self._stack: list[Any] = []
        self.where = ""

    # -- entry points ---------------------------------------------------------------------

    def parameter(
        self, name: str, hint: Any, default: Any, docs: Mapping[str, str]
    ) -> tuple[dict[str, Any], Converter | None]:
        """The schema and converter of one function parameter."""
        self.where = f"parameter {name!r}"
        schema, convert = self.derive(hint)
        if name in docs and docs[name] and "description" not in schema:
            schema = {**schema, "description": docs[name]}
        if default is not NO_DEFAULT and not self.strict:
            encoded = to_jsonable(default)
            if _plain_json(encoded):
                schema = {**schema, "default": encoded}
        elif default is not NO_DEFAULT and not self.admits_null(hint):
            schema = {"anyOf": [schema, {"type": "null"}]}
        return schema, convert

    def object_schema(self, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        """The root ``parameters`` schema, with the ``$defs`` the properties refer to."""
        schema = _closed_object(properties, required)
        if self.defs:
            schema["$defs"] = self.defs
        return schema

    def admits_null(self, hint: Any) -> bool:
        """Whether ``hint`` accepts ``None`` (``X | None``, ``Optional[X]``, ``Any``)."""
        if hint is Any or hint is None or hint is type(None):
            return True
        origin = typing.get_origin(hint)
        if origin is typing.Annotated or _is_qualifier(origin):
            return self.admits_null(typing.get_args(hint)[0])
        if origin in (typing.Union, types.UnionType):
            return any(self.admits_null(arg) for arg in typing.get_args(hint))
        return False

    # -- the walk -------------------------------------------------------------------------

    def fail(self, tp: Any, why: str) -> ToolDefinitionError:
        shown = getattr(tp, "__qualname__", None) or repr(tp)
        return ToolDefinitionError(f"tool {self.tool_name!r}: {self.where}: {shown} {why}")

    def derive(self, tp: Any) -> tuple[dict[str, Any], Converter | None]:
        """Schema and converter (``None`` when the JSON value is already right) for ``tp``."""
        if tp is Any or tp is object:
            return {}, None
        origin = typing.get_origin(tp)
        if origin is None and (tp is None or tp in _SCALARS):
            return dict(_SCALARS[type(None) if tp is None else tp]), None
        if origin is None and tp in _STRINGS:
            schema, convert = _STRINGS[tp]
            return dict(schema), convert
        if origin is typing.Annotated:
            return self._annotated(tp)
        if _is_qualifier(origin):  # Required[...] / NotRequired[...] / ReadOnly[...]
            return self.derive(typing.get_args(tp)[0])
        if origin is typing.Literal:
            return _enum_schema([to_jsonable(v) for v in typing.get_args(tp)]), None
        if origin in (typing.Union, types.UnionType):
            return self._union(tp)
        if origin is not None:
            return self._generic(tp, origin)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return _enum_schema([to_jsonable(member.value) for member in tp]), tp
        if isinstance(tp, type) and typing.is_typeddict(tp):
            return self._nested(tp, self._typeddict)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self._nested(tp, self._dataclass)
        if _is_pydantic_model(tp):
            return self._pydantic(tp)
        if tp in (list, tuple, set, frozenset, dict):
            raise self.fail(tp, "needs an item type, e.g. list[str] or dict[str, int]")
        raise self.fail(tp, "is not a type a tool parameter can have; use JSON-shaped types")

    def _annotated(self, tp: Any) -> tuple[dict[str, Any], Converter | None]:
        base, *metadata = typing.get_args(tp)
        schema, convert = self.derive(base)
        schema = dict(schema)
        for item in metadata:
            self._apply(schema, item)
        return schema, convert

    def _apply(self, schema: dict[str, Any], item: Any) -> None:
        if isinstance(item, str):
            schema["description"] = item
            return
        if isinstance(item, Mapping):
            schema.update(item)
            return
        known = False
        for attribute, keyword in _CONSTRAINTS:
            value = getattr(item, attribute, None)
            if value is not None and not callable(value):
                schema[keyword] = value
                known = True
        for attribute, index in (("min_length", 0), ("max_length", 1)):
            value = getattr(item, attribute, None)
            if value is not None:
                kind = schema.get("type", "string")
                schema[_LENGTHS.get(kind, _LENGTHS["string"])[index]] = value
                known = True
        nested = getattr(item, "metadata", None)
        if isinstance(nested, list):  # pydantic's FieldInfo carries annotated_types objects
            for inner in nested:
                self._apply(schema, inner)
            known = True
        if not known:
            raise self.fail(
                item,
                "is not understood in Annotated[...]: use a description string, a Type.*"
                " schema, or constraint objects (ge, le, min_length, pattern, ...)",
            )

    def _union(self, tp: Any) -> tuple[dict[str, Any], Converter | None]:
        members = [arg for arg in typing.get_args(tp) if arg is not type(None)]
        nullable = len(members) < len(typing.get_args(tp))
        derived = [self.derive(member) for member in members]
        converters = [convert for _, convert in derived if convert is not None]
        if len(converters) > 1 or (converters and len(members) > 1):
            raise self.fail(
                tp, "mixes types that need converting; use one model type, or plain JSON types"
            )
        schemas = [schema for schema, _ in derived] + ([{"type": "null"}] if nullable else [])
        schema = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
        convert = converters[0] if converters else None
        if convert is not None and nullable:
            inner = convert

            def convert_optional(value: Any) -> Any:
                return None if value is None else inner(value)

            convert = convert_optional
        return schema, convert

    def _generic(self, tp: Any, origin: Any) -> tuple[dict[str, Any], Converter | None]:
        args = typing.get_args(tp)
        if origin in (list, set, frozenset) or _is_abc(origin, "Sequence", "Iterable", "Set"):
            item, convert = self.derive(args[0] if args else Any)
            schema: dict[str, Any] = {"type": "array", "items": item}
            if origin in (set, frozenset) or _is_abc(origin, "Set"):
                schema["uniqueItems"] = True
            build = origin if origin in (set, frozenset) else list
            return schema, _each(convert, build) if convert or build is not list else None
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                item, convert = self.derive(args[0])
                return {"type": "array", "items": item}, _each(convert, tuple)
            parts = [self.derive(arg) for arg in args]
            schema = {
                "type": "array",
                "prefixItems": [part for part, _ in parts],
                "minItems": len(parts),
                "maxItems": len(parts),
                "items": False,
            }
            converters = [convert for _, convert in parts]
            return schema, lambda value: tuple(
                c(v) if c else v for c, v in zip(converters, value, strict=True)
            )
        if origin is dict or _is_abc(origin, "Mapping", "MutableMapping"):
            key = args[0] if args else str
            if key is not str and typing.get_origin(key) is not typing.Literal:
                raise self.fail(tp, "must have str keys (JSON object keys are strings)")
            value, convert = self.derive(args[1] if len(args) > 1 else Any)
            schema = {"type": "object", "additionalProperties": value}
            if convert is None:
                return schema, None
            return schema, lambda data: {k: convert(v) for k, v in data.items()}
        raise self.fail(tp, "is not a type a tool parameter can have; use JSON-shaped types")

    def _nested(
        self, tp: type, build: Callable[[type], tuple[dict[str, Any], Converter | None]]
    ) -> tuple[dict[str, Any], Converter | None]:
        if tp in self._stack:
            raise self.fail(tp, "refers to itself; recursive types are not supported")
        self._stack.append(tp)
        try:
            return build(tp)
        finally:
            self._stack.pop()

    def _fields(
        self, tp: type, fields: list[tuple[str, Any, bool, Any]]
    ) -> tuple[dict[str, Any], dict[str, Converter]]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        converters: dict[str, Converter] = {}
        for name, hint, is_required, default in fields:
            schema, convert = self.derive(hint)
            if not is_required and default is not NO_DEFAULT and not self.strict:
                encoded = to_jsonable(default)
                if _plain_json(encoded):
                    schema = {**schema, "default": encoded}
            if is_required or self.strict:
                required.append(name)
            if self.strict and not is_required and not self.admits_null(hint):
                schema = {"anyOf": [schema, {"type": "null"}]}
            properties[name] = schema
            if convert is not None:
                converters[name] = convert
        schema = _closed_object(properties, required)
        doc = (tp.__doc__ or "").strip()
        if doc and not doc.startswith(f"{tp.__name__}("):  # dataclasses' generated doc
            schema["description"] = doc.split("\n\n")[0].replace("\n", " ")
        return schema, converters

    def _typeddict(self, tp: type) -> tuple[dict[str, Any], Converter | None]:
        hints = typing.get_type_hints(tp, include_extras=True)
        required_keys = getattr(tp, "__required_keys__", frozenset(hints))
        fields = [
            (name, hint, _qualified_required(hint, name in required_keys), NO_DEFAULT)
            for name, hint in hints.items()
        ]
        schema, converters = self._fields(tp, fields)
        # Strict mode: null for a key that may be absent (and does not admit null) means absent.
        absent = frozenset(
            name
            for name, hint, is_required, _ in fields
            if self.strict and not is_required and not self.admits_null(hint)
        )
        if not converters and not absent:
            return schema, None
        return schema, lambda data: {
            k: converters[k](v) if k in converters else v
            for k, v in data.items()
            if not (v is None and k in absent)
        }

    def _dataclass(self, tp: type) -> tuple[dict[str, Any], Converter | None]:
        hints = typing.get_type_hints(tp, include_extras=True)
        fields = []
        for item in dataclasses.fields(tp):
            if not item.init:
                continue
            has_default = item.default is not dataclasses.MISSING
            has_factory = item.default_factory is not dataclasses.MISSING
            default = item.default if has_default else NO_DEFAULT
            fields.append((item.name, hints[item.name], not (has_default or has_factory), default))
        schema, converters = self._fields(tp, fields)
        strict = self.strict
        optional = {name for name, _, is_required, _ in fields if not is_required}

        def build(data: Mapping[str, Any]) -> Any:
            values = {k: converters[k](v) if k in converters else v for k, v in data.items()}
            if strict:  # null stands for "use the default" in strict schemas
                values = {k: v for k, v in values.items() if not (v is None and k in optional)}
            return tp(**values)

        return schema, build

    def _pydantic(self, tp: Any) -> tuple[dict[str, Any], Converter | None]:
        schema = dict(tp.model_json_schema(ref_template="#/$defs/{model}"))
        defs = dict(schema.pop("$defs", {}))
        for definition in defs.values():
            _close(definition)
        config = getattr(tp, "model_config", {}) or {}
        if config.get("extra") != "allow":
            _close(schema)
        schema.pop("title", None)
        if not self.strict:
            for name, definition in defs.items():
                self.defs.setdefault(name, definition)
            return schema, tp.model_validate
        # Strict mode: every field required, defaulted ones nullable and without "default";
        # null then stands for "use the model's default", so it is dropped before validating.
        loose = {"schema": schema, "defs": defs}
        schema = _strictify(schema)
        for name, definition in defs.items():
            self.defs.setdefault(name, _strictify(definition))
        validate = tp.model_validate

        def convert_strict(value: Any) -> Any:
            return validate(_drop_defaulted_nulls(value, loose["schema"], loose["defs"]))

        return schema, convert_strict


_QUALIFIERS = frozenset({"Required", "NotRequired", "ReadOnly"})


def _is_qualifier(origin: Any) -> bool:
    """Whether ``origin`` is a ``TypedDict`` key qualifier (``typing`` or ``typing_extensions``)."""
    return origin is not None and getattr(origin, "_name", None) in _QUALIFIERS


def _qualified_required(hint: Any, default: bool) -> bool:
    """Whether a ``TypedDict`` key is required, reading ``Required``/``NotRequired`` itself.

    ``__required_keys__`` misses the qualifiers when the annotations are strings (``from
    __future__ import annotations``), so the resolved hint has the last word.
    """
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated or getattr(origin, "_name", None) == "ReadOnly":
            hint = typing.get_args(hint)[0]
            continue
        name = getattr(origin, "_name", None)
        if name == "Required":
            return True
        if name == "NotRequired":
            return False
        return default


def _admits_null_schema(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_admits_null_schema(branch) for branch in schema.get("anyOf", ()))


_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def _strictify(schema: Any) -> Any:
    """A copy of ``schema`` in OpenAI strict form: every property required, none defaulted.

    A property that was optional becomes a union with ``null`` (unless it already admits
    ``null``) and loses its ``default``; nested objects, items and unions are rewritten too.
    """
    if not isinstance(schema, Mapping):
        return schema
    out = {key: value for key, value in schema.items() if key != "default"}
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        required = set(schema.get("required", ()))
        rewritten: dict[str, Any] = {}
        for name, sub in properties.items():
            sub = _strictify(sub)
            if name not in required and not _admits_null_schema(sub):
                sub = {"anyOf": [sub, {"type": "null"}]}
            rewritten[name] = sub
        out["properties"] = rewritten
        out["required"] = list(properties)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), Mapping):
            out[key] = _strictify(schema[key])
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            out[key] = [_strictify(branch) for branch in schema[key]]
    return out


def _drop_defaulted_nulls(value: Any, schema: Any, defs: Mapping[str, Any]) -> Any:
    """``value`` without the ``null``s strict mode sent for fields that have a default.

    ``schema`` is the model's own (non-strict) schema: a key it does not require and whose
    schema does not admit ``null`` was made nullable only by :func:`_strictify`.
    """
    if not isinstance(schema, Mapping):
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _drop_defaulted_nulls(value, defs.get(ref[len("#/$defs/") :]), defs)
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        properties = schema["properties"]
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = properties.get(key)
            if item is None and key not in required and not _admits_null_schema(sub):
                continue
            out[key] = _drop_defaulted_nulls(item, sub, defs)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_drop_defaulted_nulls(item, schema["items"], defs) for item in value]
    branches = [b for b in schema.get("anyOf", ()) if not _admits_null_schema(b)]
    if value is not None and len(branches) == 1:
        return _drop_defaulted_nulls(value, branches[0], defs)
    return value


def _plain_json(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_plain_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(v) for k, v in value.items())
    return False


def _is_abc(origin: Any, *names: str) -> bool:
    import collections.abc

    return any(origin is getattr(collections.abc, name) for name in names)


def _each(convert: Converter | None, build: Callable[[Any], Any]) -> Converter:
    if convert is None:
        return build
    return lambda items: build(convert(item) for item in items)


_NO_OUTPUT = (str, type(None))


def derive_output_schema(deriver: SchemaDeriver, hint: Any) -> tuple[dict[str, Any] | None, bool]:
    """The ``output_schema`` for a return annotation, and whether results are wrapped.

    ``str``, ``None``, ``Any`` and :class:`~customtools.ToolResult` returns have no output
    schema. An object-shaped return is the schema itself; anything else (a list, a number) is
    wrapped as ``{"result": ...}`` because structured content must be a JSON object.
    """
    from customtools._content import ToolResult

    base = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
    if base is Any or base in _NO_OUTPUT or base is ToolResult or base is None:
        return None, False
    if typing.get_origin(base) in (typing.Union, types.UnionType) and ToolResult in (
        typing.get_args(base)
    ):
        return None, False
    deriver.where = "return value"
    schema, _ = deriver.derive(hint)
    if schema.get("type") == "object":
        if deriver.defs and "$defs" not in schema:
            schema = {**schema, "$defs": dict(deriver.defs)}
        return schema, False
    wrapped = _closed_object({RESULT_KEY: schema}, [RESULT_KEY])
    if deriver.defs:
        wrapped["$defs"] = dict(deriver.defs)
    return wrapped, True
