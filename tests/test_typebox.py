"""Tests for customtools._typebox: the ``Type`` JSON Schema builder."""

from __future__ import annotations

import copy
import doctest
import enum
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import customtools
from customtools import _typebox
from customtools._errors import CustomToolsError, SchemaError
from customtools._typebox import _SNAKE_TO_CAMEL, Type

Draft = jsonschema.Draft202012Validator


def assert_plain_json(value: Any, where: str = "") -> None:
    """Every node is exactly dict/list/str/int/float/bool/None (no subclasses, no markers)."""
    assert type(value) in (dict, list, str, int, float, bool, type(None)), (where, type(value))
    if isinstance(value, dict):
        for key, item in value.items():
            assert type(key) is str
            assert_plain_json(item, f"{where}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            assert_plain_json(item, f"{where}/{index}")


def is_valid(schema: dict[str, Any], instance: Any) -> bool:
    return Draft(schema).is_valid(instance)


# --- each builder's exact output ---------------------------------------------------------------

EXACT: list[tuple[str, Callable[[], Any], Any]] = [
    ("string", lambda: Type.String(), {"type": "string"}),
    ("number", lambda: Type.Number(), {"type": "number"}),
    ("integer", lambda: Type.Integer(), {"type": "integer"}),
    ("boolean", lambda: Type.Boolean(), {"type": "boolean"}),
    ("null", lambda: Type.Null(), {"type": "null"}),
    ("any", lambda: Type.Any(), {}),
    ("any-described", lambda: Type.Any(description="x"), {"description": "x"}),
    ("never", lambda: Type.Never(), {"not": {}}),
    ("array", lambda: Type.Array(Type.String()), {"type": "array", "items": {"type": "string"}}),
    (
        "array-options",
        lambda: Type.Array(Type.Integer(), min_items=1, unique_items=True),
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "uniqueItems": True},
    ),
    (
        "tuple",
        lambda: Type.Tuple([Type.String(), Type.Number()]),
        {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "number"}],
            "items": False,
            "minItems": 2,
            "maxItems": 2,
        },
    ),
    ("tuple-empty", lambda: Type.Tuple([]), {"type": "array", "maxItems": 0}),
    (
        "record",
        lambda: Type.Record(Type.String(), Type.Integer()),
        {"type": "object", "additionalProperties": {"type": "integer"}},
    ),
    (
        "record-annotated-key",
        lambda: Type.Record(Type.String(description="name"), Type.Integer()),
        {"type": "object", "additionalProperties": {"type": "integer"}},
    ),
    (
        "record-pattern-key",
        lambda: Type.Record(Type.String(pattern="^x-"), Type.Boolean()),
        {
            "type": "object",
            "propertyNames": {"type": "string", "pattern": "^x-"},
            "additionalProperties": {"type": "boolean"},
        },
    ),
    (
        "record-enum-key",
        lambda: Type.Record(Type.StringEnum(["a", "b"]), Type.Null()),
        {
            "type": "object",
            "propertyNames": {"type": "string", "enum": ["a", "b"]},
            "additionalProperties": {"type": "null"},
        },
    ),
    (
        "record-integer-key",
        lambda: Type.Record(Type.Integer(), Type.String()),
        {
            "type": "object",
            "propertyNames": {"type": "string", "pattern": "^(?:0|-?[1-9][0-9]*)$"},
            "additionalProperties": {"type": "string"},
        },
    ),
    ("literal-str", lambda: Type.Literal("add"), {"type": "string", "const": "add"}),
    ("literal-int", lambda: Type.Literal(3), {"type": "integer", "const": 3}),
    ("literal-float", lambda: Type.Literal(1.5), {"type": "number", "const": 1.5}),
    ("literal-bool", lambda: Type.Literal(False), {"type": "boolean", "const": False}),
    ("literal-none", lambda: Type.Literal(None), {"type": "null", "const": None}),
    (
        "union",
        lambda: Type.Union([Type.String(), Type.Null()]),
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
    ),
    ("enum", lambda: Type.Enum([1, "a", None, True]), {"enum": [1, "a", None, True]}),
    (
        "string-enum",
        lambda: Type.StringEnum(["read", "write"]),
        {"type": "string", "enum": ["read", "write"]},
    ),
    ("ref", lambda: Type.Ref("#/$defs/p"), {"$ref": "#/$defs/p"}),
    (
        "unsafe",
        lambda: Type.Unsafe({"type": "string", "x-kind": "path"}, description="d"),
        {"type": "string", "x-kind": "path", "description": "d"},
    ),
    (
        "object",
        lambda: Type.Object({"b": Type.String(), "a": Type.Optional(Type.Integer())}),
        {
            "type": "object",
            "properties": {"b": {"type": "string"}, "a": {"type": "integer"}},
            "required": ["b"],
            "additionalProperties": False,
        },
    ),
    (
        "object-empty",
        lambda: Type.Object(),
        {"type": "object", "properties": {}, "additionalProperties": False},
    ),
    (
        "object-defs",
        lambda: Type.Object(
            {"p": Type.Ref("#/$defs/point")},
            **{"$defs": {"point": Type.Tuple([Type.Number(), Type.Number()])}},
        ),
        {
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/point"}},
            "required": ["p"],
            "additionalProperties": False,
            "$defs": {
                "point": {
                    "type": "array",
                    "prefixItems": [{"type": "number"}, {"type": "number"}],
                    "items": False,
                    "minItems": 2,
                    "maxItems": 2,
                }
            },
        },
    ),
]
BUILDERS = [pytest.param(build, id=name) for name, build, _ in EXACT]


@pytest.mark.parametrize(("build", "expected"), [pytest.param(b, e, id=n) for n, b, e in EXACT])
def test_builder_output_is_exact(build: Callable[[], Any], expected: Any) -> None:
    schema = build()
    assert schema == expected
    assert json.dumps(schema) == json.dumps(expected)  # key order too


@pytest.mark.parametrize("build", BUILDERS)
def test_every_builder_output_is_a_valid_draft_2020_12_schema(build: Callable[[], Any]) -> None:
    Draft.check_schema(build())


@pytest.mark.parametrize("build", BUILDERS)
def test_every_builder_output_round_trips_through_json(build: Callable[[], Any]) -> None:
    schema = build()
    assert_plain_json(schema)
    assert json.loads(json.dumps(schema)) == schema


def test_builders_return_a_fresh_dict_each_call() -> None:
    first, second = Type.String(), Type.String()
    first["minLength"] = 3
    assert second == {"type": "string"}


def test_object_keeps_property_order() -> None:
    names = ["zeta", "alpha", "mid", "beta"]
    schema = Type.Object({name: Type.String() for name in names})
    assert list(schema["properties"]) == names
    assert schema["required"] == names


def test_object_accepts_any_mapping() -> None:
    schema = Type.Object(MappingProxyType({"a": Type.Boolean()}))
    assert schema["properties"] == {"a": {"type": "boolean"}}


def test_bool_schemas_are_accepted_as_values() -> None:
    schema = Type.Object({"anything": True, "nothing": Type.Optional(False)})
    assert schema["properties"] == {"anything": True, "nothing": {"not": {}}}
    assert schema["required"] == ["anything"]
    assert Type.Array(False) == {"type": "array", "items": False}


# --- Optional --------------------------------------------------------------------------------


def test_optional_adds_nothing_to_the_property_schema() -> None:
    inner = Type.String(min_length=1, description="glob")
    schema = Type.Object({"glob": Type.Optional(inner)})
    assert schema["properties"]["glob"] == inner
    assert type(schema["properties"]["glob"]) is dict
    assert_plain_json(schema)


def test_required_is_omitted_when_every_property_is_optional() -> None:
    schema = Type.Object({"a": Type.Optional(Type.String()), "b": Type.Optional(Type.Null())})
    assert "required" not in schema
    assert is_valid(schema, {})


def test_required_lists_only_non_optional_keys_in_order() -> None:
    schema = Type.Object(
        {
            "c": Type.String(),
            "a": Type.Optional(Type.String()),
            "b": Type.Integer(),
        }
    )
    assert schema["required"] == ["c", "b"]
    assert is_valid(schema, {"c": "x", "b": 1})
    assert not is_valid(schema, {"c": "x"})


def test_optional_in_nested_objects_applies_per_level() -> None:
    schema = Type.Object(
        {
            "outer": Type.Optional(
                Type.Object({"x": Type.Integer(), "y": Type.Optional(Type.Integer())})
            )
        }
    )
    assert "required" not in schema
    assert schema["properties"]["outer"]["required"] == ["x"]
    assert_plain_json(schema)
    assert is_valid(schema, {})
    assert is_valid(schema, {"outer": {"x": 1}})
    assert not is_valid(schema, {"outer": {"y": 1}})


def test_optional_outside_an_object_is_just_the_schema() -> None:
    marked = Type.Optional(Type.String())
    assert marked == {"type": "string"}
    assert json.loads(json.dumps(marked)) == {"type": "string"}
    wrapped = Type.Array(marked)
    assert wrapped == {"type": "array", "items": {"type": "string"}}
    assert_plain_json(wrapped)
    union = Type.Union([marked, Type.Null()])
    assert_plain_json(union)


def test_optional_is_idempotent_and_does_not_mutate_its_input() -> None:
    inner = Type.Integer()
    twice = Type.Optional(Type.Optional(inner))
    assert twice == inner
    assert Type.Object({"n": twice}).get("required") is None
    assert type(inner) is dict


def test_optional_mark_is_lost_by_a_plain_copy() -> None:
    # dict(...) makes a plain dict, so the property becomes required: documented behaviour.
    schema = Type.Object({"n": dict(Type.Optional(Type.Integer()))})
    assert schema["required"] == ["n"]


# --- options ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snake", "camel"),
    [
        ("min_length", "minLength"),
        ("max_length", "maxLength"),
        ("min_items", "minItems"),
        ("max_properties", "maxProperties"),
        ("multiple_of", "multipleOf"),
        ("exclusive_minimum", "exclusiveMinimum"),
    ],
)
def test_snake_case_options_become_camel_case(snake: str, camel: str) -> None:
    assert Type.Any(**{snake: 2}) == {camel: 2}
    assert Type.Any(**{camel: 2}) == {camel: 2}


def test_annotation_options_pass_through() -> None:
    schema = Type.String(
        title="Path",
        description="a file",
        default="a.txt",
        examples=["b.txt"],
        format="uri-reference",
        pattern=r"\.txt$",
        read_only=True,
        deprecated=False,
    )
    assert schema == {
        "type": "string",
        "title": "Path",
        "description": "a file",
        "default": "a.txt",
        "examples": ["b.txt"],
        "format": "uri-reference",
        "pattern": r"\.txt$",
        "readOnly": True,
        "deprecated": False,
    }
    Draft.check_schema(schema)


def test_non_identifier_keywords_go_through_a_dict() -> None:
    schema = Type.Object({}, **{"$id": "urn:tool:x", "x-origin": "test", "$comment": "c"})
    assert schema["$id"] == "urn:tool:x"
    assert schema["x-origin"] == "test"
    assert schema["$comment"] == "c"


def test_unknown_snake_case_keywords_pass_through_unchanged() -> None:
    assert Type.String(x_ui_hint="multiline") == {"type": "string", "x_ui_hint": "multiline"}


def test_both_spellings_of_one_keyword_is_an_error() -> None:
    with pytest.raises(SchemaError, match=r"'min_length' and 'minLength' are the same keyword"):
        Type.String(min_length=1, minLength=2)


def test_schema_error_is_a_value_error_and_a_customtools_error() -> None:
    with pytest.raises(ValueError) as info:
        Type.Enum([])
    assert isinstance(info.value, CustomToolsError)


def test_tuple_options_use_prefix_items_values() -> None:
    schema = Type.Tuple([Type.String()], description="pair")
    assert schema["description"] == "pair"


def test_schema_valued_options_are_copied_plain() -> None:
    schema = Type.Array(Type.Integer(), contains=Type.Optional(Type.Literal(0)))
    assert schema["contains"] == {"type": "integer", "const": 0}
    assert_plain_json(schema)
    both = Type.Any(all_of=[Type.Optional(Type.String()), True])
    assert both == {"allOf": [{"type": "string"}, True]}
    assert_plain_json(both)


def test_option_values_are_converted_to_plain_json() -> None:
    class Mode(enum.Enum):
        FAST = "fast"

    schema = Type.Any(default=(1, {"k": Mode.FAST}), examples=((1, 2),))
    assert schema == {"default": [1, {"k": "fast"}], "examples": [[1, 2]]}
    assert_plain_json(schema)


# --- additionalProperties --------------------------------------------------------------------


def test_object_rejects_undeclared_properties_by_default() -> None:
    schema = Type.Object({"a": Type.String()})
    assert schema["additionalProperties"] is False
    assert not is_valid(schema, {"a": "x", "extra": 1})


@pytest.mark.parametrize("spelling", ["additional_properties", "additionalProperties"])
def test_object_additional_properties_can_be_allowed(spelling: str) -> None:
    schema = Type.Object({"a": Type.String()}, **{spelling: True})
    assert schema["additionalProperties"] is True
    assert is_valid(schema, {"a": "x", "extra": 1})


def test_object_additional_properties_can_be_a_schema() -> None:
    schema = Type.Object({}, additional_properties=Type.Integer())
    assert schema["additionalProperties"] == {"type": "integer"}
    assert is_valid(schema, {"n": 1})
    assert not is_valid(schema, {"n": "x"})


# --- semantics under a validator --------------------------------------------------------------


def test_tuple_fixes_length_and_positions() -> None:
    schema = Type.Tuple([Type.String(), Type.Integer()])
    assert is_valid(schema, ["a", 1])
    assert not is_valid(schema, ["a"])
    assert not is_valid(schema, ["a", 1, 2])
    assert not is_valid(schema, [1, "a"])
    assert is_valid(Type.Tuple([]), [])
    assert not is_valid(Type.Tuple([]), [1])


def test_record_key_constraints_apply_to_property_names() -> None:
    by_pattern = Type.Record(Type.String(pattern="^x-"), Type.Integer())
    assert is_valid(by_pattern, {"x-a": 1})
    assert not is_valid(by_pattern, {"y": 1})
    by_int = Type.Record(Type.Integer(), Type.Boolean())
    assert is_valid(by_int, {"0": True, "12": False, "-3": True})
    assert not is_valid(by_int, {"01": True})
    assert not is_valid(by_int, {"-0": True})
    by_union = Type.Record(Type.Union([Type.Literal("a"), Type.Literal("b")]), Type.Null())
    assert is_valid(by_union, {"a": None})
    assert not is_valid(by_union, {"c": None})


def test_record_accepts_any_key_forms_that_describe_strings() -> None:
    value = Type.Integer()
    assert Type.Record(True, value) == {"type": "object", "additionalProperties": value}
    assert Type.Record(Type.Any(), value) == {"type": "object", "additionalProperties": value}
    by_enum = Type.Record(Type.Enum(["a", "b"]), value)
    assert by_enum["propertyNames"] == {"enum": ["a", "b"]}
    by_const = Type.Record(Type.Unsafe({"const": "k"}), value)
    assert by_const["propertyNames"] == {"const": "k"}
    assert is_valid(by_const, {"k": 1})
    assert not is_valid(by_const, {"j": 1})


@pytest.mark.parametrize(
    "key",
    [
        pytest.param(Type.Ref("#/$defs/k"), id="ref"),
        pytest.param(Type.Unsafe({"const": 1}), id="int-const"),
        pytest.param(Type.Enum(["a", 1]), id="mixed-enum"),
        pytest.param(Type.Union([Type.String(), Type.Number()]), id="mixed-union"),
    ],
)
def test_record_rejects_keys_that_are_not_strings(key: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match=r"Type\.Record\(key\): object keys are strings"):
        Type.Record(key, Type.String())


def test_str_and_int_subclasses_become_plain_values() -> None:
    class Name(str):
        pass

    class Count(int):
        pass

    schema = Type.Any(default={"n": Name("x"), "c": Count(2)}, title=Name("T"))
    assert schema == {"default": {"n": "x", "c": 2}, "title": "T"}
    assert_plain_json(schema)
    assert_plain_json(Type.Object({Name("p"): Type.Unsafe({Name("k"): 1})}))


def test_enum_of_an_enum_class_uses_member_values() -> None:
    class Color(enum.Enum):
        RED = "red"
        GREEN = "green"

    assert Type.StringEnum(Color) == {"type": "string", "enum": ["red", "green"]}
    assert Type.Enum(Color) == {"enum": ["red", "green"]}
    assert Type.Literal(Color.RED) == {"type": "string", "const": "red"}


# --- inputs are never mutated ----------------------------------------------------------------


def test_builders_do_not_mutate_or_share_their_inputs() -> None:
    inner = Type.Object({"a": Type.Optional(Type.String())})
    props = {"inner": inner, "list": Type.Array(inner)}
    before = copy.deepcopy(props)
    schema = Type.Object(props, examples=[{"inner": {}}])
    assert props == before
    schema["properties"]["inner"]["properties"]["a"]["minLength"] = 1
    assert inner == before["inner"]
    raw = {"type": "string", "enum": ["a"]}
    unsafe = Type.Unsafe(raw, description="d")
    unsafe["enum"].append("b")
    assert raw == {"type": "string", "enum": ["a"]}


# --- bad input -------------------------------------------------------------------------------

BAD_INPUT: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    (
        "non-str-property-name",
        lambda: Type.Object({1: Type.String()}),
        TypeError,
        r"Type\.Object\(properties\): property names must be str, got int 1",
    ),
    (
        "non-schema-property",
        lambda: Type.Object({"n": 3}),
        TypeError,
        r"Type\.Object\(properties\)\['n'\] must be a JSON Schema .* got int",
    ),
    (
        "uncalled-builder",
        lambda: Type.Object({"n": Type.String}),
        TypeError,
        r"\['n'\] must be a JSON Schema .*did you forget to call it",
    ),
    (
        "properties-not-a-mapping",
        lambda: Type.Object([("a", Type.String())]),
        TypeError,
        r"Type\.Object\(properties\) must be a dict of name -> schema, got list",
    ),
    ("enum-empty", lambda: Type.Enum([]), SchemaError, r"Type\.Enum\(values\) must hold"),
    ("enum-duplicate", lambda: Type.Enum([1, 1.0]), SchemaError, r"lists 1\.0 more than once"),
    (
        "enum-non-scalar",
        lambda: Type.Enum([{"a": 1}]),
        TypeError,
        r"Type\.Enum\(values\)\[0\] must be a str, int, float, bool or None, got dict",
    ),
    (
        "enum-string",
        lambda: Type.Enum("abc"),
        TypeError,
        r"Type\.Enum\(values\) must be a list of values or an enum\.Enum class, got str",
    ),
    (
        "string-enum-mixed",
        lambda: Type.StringEnum(["a", 1]),
        TypeError,
        r"Type\.StringEnum\(values\)\[1\] must be a str, got int",
    ),
    ("string-enum-empty", lambda: Type.StringEnum([]), SchemaError, r"at least one value"),
    (
        "union-empty",
        lambda: Type.Union([]),
        SchemaError,
        r"Type\.Union\(schemas\) must hold at least one schema",
    ),
    (
        "union-not-a-list",
        lambda: Type.Union(Type.String()),
        TypeError,
        r"Type\.Union\(schemas\) must be a list of schemas",
    ),
    (
        "union-member",
        lambda: Type.Union([Type.String(), "null"]),
        TypeError,
        r"Type\.Union\(schemas\)\[1\] must be a JSON Schema",
    ),
    ("array-items", lambda: Type.Array(str), TypeError, r"Type\.Array\(items\) must be a JSON"),
    ("tuple-items", lambda: Type.Tuple(None), TypeError, r"Type\.Tuple\(items\) must be a list"),
    (
        "literal-list",
        lambda: Type.Literal([1]),
        TypeError,
        r"Type\.Literal\(value\) must be a str, int, float, bool or None, got list",
    ),
    ("literal-nan", lambda: Type.Literal(float("nan")), SchemaError, r"nan is not a JSON number"),
    (
        "record-number-key",
        lambda: Type.Record(Type.Number(), Type.String()),
        TypeError,
        r"Type\.Record\(key\): object keys are strings",
    ),
    (
        "record-constrained-int-key",
        lambda: Type.Record(Type.Integer(minimum=0), Type.String()),
        SchemaError,
        r"an integer key takes no constraints",
    ),
    (
        "record-key-not-schema",
        lambda: Type.Record("string", Type.String()),
        TypeError,
        r"Type\.Record\(key\) must be a key schema",
    ),
    ("record-value", lambda: Type.Record(Type.String(), 1), TypeError, r"Type\.Record\(value\)"),
    ("optional-str", lambda: Type.Optional("x"), TypeError, r"Type\.Optional\(schema\) must be"),
    ("ref-empty", lambda: Type.Ref(""), SchemaError, r"Type\.Ref\(ref\) must not be empty"),
    ("ref-type", lambda: Type.Ref(1), TypeError, r"Type\.Ref\(ref\) must be a str"),
    ("unsafe-type", lambda: Type.Unsafe(True), TypeError, r"Type\.Unsafe\(schema\) must be a dict"),
    (
        "reserved-type",
        lambda: Type.String(type="integer"),
        SchemaError,
        r"Type\.String: the 'type' keyword is set by the builder",
    ),
    (
        "reserved-required",
        lambda: Type.Object({}, required=["a"]),
        SchemaError,
        r"'required' keyword is set by the builder.*Type\.Optional",
    ),
    (
        "reserved-prefix-items-snake",
        lambda: Type.Tuple([Type.String()], prefix_items=[Type.String()]),
        SchemaError,
        r"Type\.Tuple: the 'prefixItems' keyword is set by the builder",
    ),
    (
        "count-type",
        lambda: Type.String(min_length="1"),
        TypeError,
        r"Type\.String\(min_length\) must be an int, got str",
    ),
    ("count-negative", lambda: Type.Array(True, max_items=-1), SchemaError, r"must be >= 0"),
    (
        "draft4-exclusive",
        lambda: Type.Number(exclusive_minimum=True),
        TypeError,
        r"exclusive_minimum\) must be a number, got bool .*exclusive_minimum=0",
    ),
    (
        "bool-bound",
        lambda: Type.Number(minimum=True),
        TypeError,
        r"Type\.Number\(minimum\) must be a number, got bool$",
    ),
    ("multiple-of-zero", lambda: Type.Number(multiple_of=0), SchemaError, r"must be > 0"),
    (
        "min-above-max",
        lambda: Type.Integer(minimum=5, maximum=1),
        SchemaError,
        r"Type\.Integer: minimum=5 is greater than maximum=1",
    ),
    (
        "description-type",
        lambda: Type.String(description=3),
        TypeError,
        r"Type\.String\(description\) must be a str, got int",
    ),
    ("bool-keyword", lambda: Type.Array(True, unique_items=1), TypeError, r"must be a bool"),
    (
        "examples-not-list",
        lambda: Type.String(examples="a"),
        TypeError,
        r"Type\.String\(examples\) must be a list of example values",
    ),
    (
        "defs-not-mapping",
        lambda: Type.Any(**{"$defs": [1]}),
        TypeError,
        r"Type\.Any\(\$defs\) must be a dict of name -> schema",
    ),
    (
        "default-not-json",
        lambda: Type.String(default={"a"}),
        TypeError,
        r"Type\.String\(default\): set is not a JSON value",
    ),
    (
        "default-infinite",
        lambda: Type.Number(default=float("inf")),
        SchemaError,
        r"Type\.Number\(default\): inf is not a JSON number",
    ),
    (
        "nested-non-str-key",
        lambda: Type.Unsafe({"properties": {"a": {1: 2}}}),
        TypeError,
        r"Type\.Unsafe\(schema\) at '/properties/a': object keys must be str, got int 1",
    ),
]


@pytest.mark.parametrize(
    ("build", "error", "message"), [pytest.param(b, e, m, id=n) for n, b, e, m in BAD_INPUT]
)
def test_bad_input_raises_a_clear_error(
    build: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()


def test_cyclic_input_is_rejected() -> None:
    loop: dict[str, Any] = {"type": "object"}
    loop["not"] = loop
    with pytest.raises(SchemaError, match=r"nested deeper than 256 levels \(a cycle\?\)"):
        Type.Unsafe(loop)


# --- random compositions ---------------------------------------------------------------------

names = st.text(min_size=1, max_size=6)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=4),
)


@st.composite
def bounds(draw: st.DrawFn, low: str, high: str) -> dict[str, Any]:
    picked = sorted(draw(st.lists(st.integers(0, 9), min_size=0, max_size=2)))
    return dict(zip([low, high][: len(picked)], picked, strict=True))


@st.composite
def leaves(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["str", "num", "int", "bool", "null", "any", "lit", "enum", "se"]))
    if kind == "str":
        options = draw(bounds("min_length", "maxLength"))
        if draw(st.booleans()):
            options["pattern"] = draw(st.sampled_from(["^a", "[0-9]+", r"\.py$"]))
        return Type.String(**options)
    if kind == "num":
        return Type.Number(**draw(bounds("minimum", "maximum")))
    if kind == "int":
        return Type.Integer(**draw(bounds("minimum", "maximum")))
    if kind == "bool":
        return Type.Boolean(description=draw(st.text(max_size=5)))
    if kind == "null":
        return Type.Null()
    if kind == "any":
        return Type.Any()
    if kind == "lit":
        return Type.Literal(draw(scalars))
    if kind == "enum":
        return Type.Enum(draw(st.lists(st.text(max_size=3), min_size=1, max_size=4, unique=True)))
    return Type.StringEnum(draw(st.lists(names, min_size=1, max_size=3, unique=True)))


def composites(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    maybe_optional = st.tuples(st.booleans(), children).map(
        lambda pair: Type.Optional(pair[1]) if pair[0] else pair[1]
    )
    return st.one_of(
        st.builds(lambda c, o: Type.Array(c, **o), children, bounds("min_items", "max_items")),
        st.builds(Type.Tuple, st.lists(children, max_size=3)),
        st.builds(Type.Union, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda v: Type.Record(Type.String(), v), children),
        st.builds(lambda v: Type.Record(Type.Integer(), v), children),
        st.builds(
            lambda props, extra: Type.Object(props, additional_properties=extra),
            st.dictionaries(names, maybe_optional, max_size=4),
            st.booleans(),
        ),
        st.builds(lambda c: Type.Optional(c), children),
    )


schemas = st.recursive(leaves(), composites, max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas)
def test_random_compositions_are_valid_plain_schemas(schema: dict[str, Any]) -> None:
    Draft.check_schema(schema)
    assert json.loads(json.dumps(schema)) == schema


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        names,
        # dict() drops a mark the strategy itself may have put on the top-level schema.
        st.tuples(st.booleans(), schemas.map(dict)),
        max_size=5,
    )
)
def test_random_objects_require_exactly_the_unmarked_keys(
    spec: dict[str, tuple[bool, dict[str, Any]]],
) -> None:
    snapshot = json.dumps(spec, sort_keys=True)
    props = {name: Type.Optional(s) if optional else s for name, (optional, s) in spec.items()}
    schema = Type.Object(props)
    Draft.check_schema(schema)
    assert_plain_json(schema)
    expected_required = [name for name, (optional, _) in spec.items() if not optional]
    assert schema.get("required", []) == expected_required
    assert ("required" in schema) == bool(expected_required)
    assert schema["properties"] == {name: s for name, (_, s) in spec.items()}
    assert json.dumps(spec, sort_keys=True) == snapshot


# --- docs/schema-builder.md ------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent / "docs" / "schema-builder.md"


def test_doc_code_blocks_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # The page imports ``from customtools import Type``; make that work even before the
    # package re-exports it.
    monkeypatch.setattr(customtools, "Type", Type, raising=False)
    text = DOC.read_text(encoding="utf-8")
    blocks = list(re.finditer(r"```python\n(.*?)```", text, re.DOTALL))
    assert len(blocks) >= 4
    namespace: dict[str, Any] = {"__name__": "schema_builder_doc"}
    for block in blocks:
        # Pad with newlines so a failure points at the right line of the page.
        padding = "\n" * text.count("\n", 0, block.start(1))
        code = compile(padding + block.group(1), str(DOC), "exec", dont_inherit=True)
        exec(code, namespace)
    assert customtools.Type is Type


def test_module_docstring_examples_run() -> None:
    # `Type` is re-homed to `customtools`, so `doctest.testmod` no longer counts it as part of
    # the private module: look in the module and in the class explicitly.
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    globs = vars(_typebox)
    tests = [*finder.find(_typebox, globs=globs), *finder.find(Type, module=False, globs=globs)]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 1
    assert result.failed == 0


def test_doc_lists_exactly_the_snake_case_keywords() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("<!-- snake-case-keywords -->")[1].split("<!-- /snake-case-keywords -->")[
        0
    ]
    documented = re.findall(r"`([a-z_]+)`", section)
    assert documented == sorted(_SNAKE_TO_CAMEL)
    for snake, camel in _SNAKE_TO_CAMEL.items():
        assert snake.replace("_", "") == camel.lower()
