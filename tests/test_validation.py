"""Tests of the argument validation engine (customtools._validation)."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from typing import Any, ClassVar

import pytest
from anchor import INVALID, VALID
from anchor import SCHEMA as READ_FILE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from customtools._errors import SchemaError, ToolArgumentsError
from customtools._validation import (
    Coercion,
    ReferenceEngine,
    RustEngine,
    SchemaValidator,
    ValidationLimits,
    ValidatorEngine,
    Violation,
    check_schema,
    compile_validator,
    parse_arguments,
)

OPTIONS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "count": {"type": "integer", "minimum": 0},
        "ratio": {"type": "number"},
        "exact": {"type": "boolean"},
        "filters": {
            "type": "object",
            "properties": {"lang": {"type": "string"}, "max": {"type": "integer"}},
        },
        "ids": {"type": "array", "items": {"type": "integer"}},
        "state": {"type": "string", "enum": ["open", "closed"]},
    },
    "required": ["query"],
}
RECURSIVE = {
    "type": "object",
    "properties": {"a": {"type": "array", "items": {"$ref": "#/properties/a"}}},
}
ENGINES = ["rust", "reference"]


def nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def violations_of(validator: Any, params: Any) -> tuple[Violation, ...]:
    with pytest.raises(ToolArgumentsError) as info:
        validator.validate(params)
    return info.value.violations


# -- the hot path ----------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_valid_arguments_come_back_as_the_same_object(engine: str) -> None:
    validator = compile_validator(READ_FILE, tool_name="read_file", engine=engine)
    params, coercions = validator.validate(VALID)
    assert params is VALID
    assert coercions == ()


def test_is_valid_never_repairs_or_raises() -> None:
    validator = compile_validator(READ_FILE)
    assert validator.is_valid(VALID)
    assert not validator.is_valid({**VALID, "limit": "10"})
    assert not validator.is_valid({"path": {1, 2}})


# -- violations and the message --------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_every_violation_is_reported_with_its_path(engine: str) -> None:
    validator = compile_validator(READ_FILE, tool_name="read_file", engine=engine)
    found = violations_of(validator, INVALID)
    assert sorted((v.path, v.keyword) for v in found) == [
        ("", "additionalProperties"),
        ("/limit", "minimum"),
        ("/mode", "enum"),
        ("/path", "pattern"),
    ]


def test_message_lists_violations_one_per_line_and_ends_with_a_hint() -> None:
    validator = compile_validator(READ_FILE, tool_name="read_file")
    with pytest.raises(ToolArgumentsError) as info:
        validator.validate(INVALID)
    lines = str(info.value).splitlines()
    assert lines[0] == "invalid arguments for tool 'read_file':"
    assert lines[1:5] == [
        '  - /path: "bad path!" does not match "^[A-Za-z0-9_./-]+$"',
        "  - /limit: 0 is less than the minimum of 1",
        '  - /mode: "delete" is not one of "read", "write" or "append"',
        "  - (root): Additional properties are not allowed ('extra' was unexpected)",
    ]
    assert "call the tool again" in lines[-1]
    assert info.value.tool_name == "read_file"
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("engine", ENGINES)
def test_unexpected_property_is_named(engine: str) -> None:
    validator = compile_validator(READ_FILE, engine=engine)
    (violation,) = violations_of(validator, {**VALID, "colour": "red"})
    assert violation.keyword == "additionalProperties"
    assert "'colour'" in violation.message


def test_message_without_tool_name() -> None:
    with pytest.raises(ToolArgumentsError, match=r"^invalid tool arguments:\n  - /limit: "):
        compile_validator(READ_FILE).validate({**VALID, "limit": 0})


def test_violation_str_and_dict() -> None:
    root = Violation(path="", message="boom", keyword="type")
    nested = Violation(path="/tags/2", message="bad", keyword="type")
    assert str(root) == "(root): boom"
    assert str(nested) == "/tags/2: bad"
    assert nested.to_dict() == {"path": "/tags/2", "message": "bad", "keyword": "type"}


def test_paths_escape_pointer_characters_and_index_arrays() -> None:
    schema = {
        "type": "object",
        "properties": {"a/b~c": {"type": "array", "items": {"type": "string"}}},
    }
    (violation,) = violations_of(compile_validator(schema), {"a/b~c": ["x", "y", 3]})
    assert violation.path == "/a~1b~0c/2"


def test_violations_are_capped_by_the_limit() -> None:
    schema = {
        "type": "object",
        "properties": {"xs": {"type": "array", "items": {"type": "string"}}},
    }
    validator = compile_validator(schema, limits=ValidationLimits(max_violations=3))
    with pytest.raises(ToolArgumentsError) as info:
        validator.validate({"xs": [1, 2, 3, 4, 5]})
    assert len(info.value.violations) == 3
    assert "only the first 3 shown" in str(info.value)


# -- coercions -------------------------------------------------------------------------------


def test_numeric_string_becomes_an_integer_and_is_recorded() -> None:
    params, coercions = compile_validator(READ_FILE).validate({**VALID, "limit": "10"})
    assert params == VALID
    assert coercions == (Coercion(path="/limit", kind="numeric_string", original="10", value=10),)
    assert coercions[0].to_dict() == {
        "path": "/limit",
        "kind": "numeric_string",
        "original": "10",
        "value": 10,
    }


def test_numeric_string_becomes_a_float_for_number() -> None:
    params, coercions = compile_validator(OPTIONS).validate({"query": "q", "ratio": "2.5"})
    assert params["ratio"] == 2.5
    assert [c.kind for c in coercions] == ["numeric_string"]


@pytest.mark.parametrize("text", ["60.5", "60.0", "1e3", " ", "ten", "0x10", "1_000"])
def test_non_integer_strings_are_never_made_integers(text: str) -> None:
    (violation,) = violations_of(compile_validator(READ_FILE), {**VALID, "limit": text})
    assert violation.path == "/limit"
    assert violation.keyword == "type"


@pytest.mark.parametrize("text", ["1e400", "-1e400", "NaN", "Infinity", "nan"])
def test_overflowing_or_non_numbers_are_never_accepted(text: str) -> None:
    (violation,) = violations_of(compile_validator(OPTIONS), {"query": "q", "ratio": text})
    assert violation.path == "/ratio"


@pytest.mark.parametrize("engine", ENGINES)
def test_true_is_not_an_integer_even_with_coercion(engine: str) -> None:
    validator = compile_validator(READ_FILE, engine=engine)
    (violation,) = violations_of(validator, {**VALID, "limit": True})
    assert (violation.path, violation.keyword) == ("/limit", "type")


def test_float_with_fraction_is_not_an_integer() -> None:
    (violation,) = violations_of(compile_validator(READ_FILE), {**VALID, "limit": 60.5})
    assert violation.path == "/limit"


def test_json_string_becomes_the_expected_array_or_object() -> None:
    params, coercions = compile_validator(OPTIONS).validate(
        {"query": "q", "ids": "[1, 2]", "filters": '{"lang": "py"}'}
    )
    assert params == {"query": "q", "ids": [1, 2], "filters": {"lang": "py"}}
    assert sorted((c.path, c.kind) for c in coercions) == [
        ("/filters", "json_string"),
        ("/ids", "json_string"),
    ]


def test_json_string_of_the_wrong_type_is_not_used() -> None:
    (violation,) = violations_of(compile_validator(OPTIONS), {"query": "q", "ids": '{"a": 1}'})
    assert (violation.path, violation.keyword) == ("/ids", "type")


def test_repairs_inside_a_parsed_json_string_are_applied_too() -> None:
    params, coercions = compile_validator(OPTIONS).validate({"query": "q", "ids": '["1", 2]'})
    assert params["ids"] == [1, 2]
    assert [(c.path, c.kind) for c in coercions] == [
        ("/ids", "json_string"),
        ("/ids/0", "numeric_string"),
    ]


def test_nested_object_properties_are_coerced() -> None:
    params, coercions = compile_validator(OPTIONS).validate(
        {"query": "q", "filters": {"lang": "py", "max": "3"}}
    )
    assert params["filters"] == {"lang": "py", "max": 3}
    assert [c.path for c in coercions] == ["/filters/max"]


def test_boolean_string_is_coerced() -> None:
    params, coercions = compile_validator(OPTIONS).validate({"query": "q", "exact": "false"})
    assert params["exact"] is False
    assert coercions[0].kind == "boolean_string"


@pytest.mark.parametrize("sent", [None, "null", ""])
def test_null_like_optional_property_is_dropped(sent: Any) -> None:
    params, coercions = compile_validator(OPTIONS).validate({"query": "q", "count": sent})
    assert params == {"query": "q"}
    assert coercions == (Coercion(path="/count", kind="dropped_null", original=sent, value=None),)


def test_null_like_value_rejected_by_an_enum_is_dropped() -> None:
    params, _ = compile_validator(OPTIONS).validate({"query": "q", "state": "null"})
    assert params == {"query": "q"}


def test_null_for_a_required_property_is_reported_not_dropped() -> None:
    schema = {**OPTIONS, "required": ["query", "count"]}
    (violation,) = violations_of(compile_validator(schema), {"query": "q", "count": None})
    assert violation.path == "/count"


def test_null_accepted_by_the_schema_is_kept() -> None:
    schema = {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}
    params, coercions = compile_validator(schema).validate({"n": None})
    assert params == {"n": None}
    assert coercions == ()


def test_coercion_never_mutates_the_callers_arguments() -> None:
    sent = {"query": "q", "filters": {"max": "3"}, "ids": ["1"], "count": None}
    before = copy.deepcopy(sent)
    params, coercions = compile_validator(OPTIONS).validate(sent)
    assert sent == before
    assert params == {"query": "q", "filters": {"max": 3}, "ids": [1]}
    assert len(coercions) == 3


def test_coerce_false_reports_instead_of_repairing() -> None:
    validator = compile_validator(OPTIONS, coerce=False)
    found = violations_of(validator, {"query": "q", "count": "3", "ids": "[1]", "ratio": None})
    assert sorted(v.path for v in found) == ["/count", "/ids", "/ratio"]


def test_remaining_violations_are_reported_after_coercion() -> None:
    found = violations_of(compile_validator(READ_FILE), {**VALID, "limit": "0", "mode": "x"})
    assert sorted((v.path, v.keyword) for v in found) == [("/limit", "minimum"), ("/mode", "enum")]
    assert "0 is less than the minimum of 1" in [v.message for v in found]


# -- defaults --------------------------------------------------------------------------------

WITH_DEFAULTS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "default": 20},
        "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        "opts": {
            "type": "object",
            "properties": {"case": {"type": "boolean", "default": False}},
        },
        "must": {"type": "string", "default": "unused"},
    },
    "required": ["query", "must"],
}


@pytest.mark.parametrize("engine", ENGINES)
def test_defaults_fill_missing_optional_properties(engine: str) -> None:
    sent = {"query": "q", "must": "m", "opts": {}}
    before = copy.deepcopy(sent)
    params, coercions = compile_validator(WITH_DEFAULTS, engine=engine).validate(sent)
    assert params == {"query": "q", "must": "m", "limit": 20, "tags": [], "opts": {"case": False}}
    assert sent == before
    assert sorted((c.path, c.kind, c.value) for c in coercions) == [
        ("/limit", "default", 20),
        ("/opts/case", "default", False),
        ("/tags", "default", []),
    ]


def test_defaults_never_override_a_given_value() -> None:
    sent = {"query": "q", "must": "m", "limit": 5, "tags": ["x"], "opts": {"case": True}}
    params, coercions = compile_validator(WITH_DEFAULTS).validate(sent)
    assert params is sent
    assert coercions == ()


def test_defaults_are_not_applied_when_turned_off() -> None:
    sent = {"query": "q", "must": "m"}
    params, coercions = compile_validator(WITH_DEFAULTS, apply_defaults=False).validate(sent)
    assert params is sent
    assert coercions == ()


def test_default_of_a_required_property_does_not_excuse_its_absence() -> None:
    (violation,) = violations_of(compile_validator(WITH_DEFAULTS), {"query": "q"})
    assert violation.keyword == "required"
    assert "must" in violation.message


def test_mutable_defaults_are_fresh_copies_each_call() -> None:
    validator = compile_validator(WITH_DEFAULTS)
    first, _ = validator.validate({"query": "q", "must": "m"})
    first["tags"].append("changed")
    second, _ = validator.validate({"query": "q", "must": "m"})
    assert second["tags"] == []
    assert WITH_DEFAULTS["properties"]["tags"]["default"] == []


def test_dropped_null_is_then_filled_by_its_default() -> None:
    params, coercions = compile_validator(WITH_DEFAULTS).validate(
        {"query": "q", "must": "m", "limit": None}
    )
    assert params["limit"] == 20
    assert [c.kind for c in coercions if c.path == "/limit"] == ["dropped_null", "default"]


def test_defaults_reached_through_a_ref() -> None:
    schema = {
        "type": "object",
        "properties": {"page": {"$ref": "#/$defs/page"}},
        "$defs": {"page": {"type": "integer", "default": 1}},
    }
    params, _ = compile_validator(schema).validate({})
    assert params == {"page": 1}


# -- limits: depth, size, non-JSON values ----------------------------------------------------


def test_recursive_schema_with_deep_value_is_rejected_by_the_depth_limit() -> None:
    validator = compile_validator(RECURSIVE, tool_name="nest")
    assert validator.guarded
    (violation,) = violations_of(validator, {"a": nested_list(100_000)})
    assert violation.keyword == "limits"
    assert "nested more than 64 levels deep" in violation.message


def test_recursive_schema_accepts_values_within_the_limit() -> None:
    params = {"a": nested_list(30)}
    assert compile_validator(RECURSIVE).validate(params)[0] is params


def test_deep_value_never_crashes_the_process() -> None:
    script = (
        "from customtools._validation import compile_validator\n"
        "from customtools._errors import ToolArgumentsError\n"
        "schema = {'type': 'object', 'properties': {'a': {'type': 'array', "
        "'items': {'$ref': '#/properties/a'}}}}\n"
        "deep = []\n"
        "for _ in range(100_000): deep = [deep]\n"
        "try:\n"
        "    compile_validator(schema).validate({'a': deep})\n"
        "except ToolArgumentsError as exc:\n"
        "    print(exc.violations[0].keyword)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "limits"


def test_non_recursive_schema_with_deep_invalid_value_reports_the_limit() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    (violation,) = violations_of(compile_validator(schema), {"a": nested_list(100_000)})
    assert (violation.path, violation.keyword) == ("/a/0/0/0/0/0/0/0/0/0/0" + "/0" * 53, "limits")


def test_node_limit_for_guarded_schemas() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}
    validator = compile_validator(schema, limits=ValidationLimits(max_nodes=100))
    assert validator.guarded
    (violation,) = violations_of(validator, {"xs": list(range(200))})
    assert violation.keyword == "limits"
    assert "more than 100 values" in violation.message


@pytest.mark.parametrize(
    "params",
    [{"query": {1, 2}}, {1: "x"}, {"query": object()}, {"ids": ["\ud800"]}],
    ids=["set", "int-key", "object", "lone-surrogate-in-error"],
)
def test_values_json_cannot_carry_become_argument_errors(params: Any) -> None:
    violations = violations_of(compile_validator(OPTIONS), params)
    assert violations
    assert all(isinstance(v, Violation) for v in violations)


def test_limits_must_be_positive_integers() -> None:
    with pytest.raises(ValueError, match="max_depth must be a positive integer"):
        ValidationLimits(max_depth=0)
    with pytest.raises(ValueError, match="max_nodes"):
        ValidationLimits(max_nodes=True)


# -- catastrophic patterns -------------------------------------------------------------------


@pytest.mark.timeout(20)
def test_catastrophic_pattern_finishes_with_the_linear_engine() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    check_schema(schema)
    (violation,) = violations_of(compile_validator(schema), {"s": "a" * 40 + "!"})
    assert violation.keyword == "pattern"
    params = {"s": "a" * 100_000}
    assert compile_validator(schema).validate(params)[0] is params


@pytest.mark.parametrize(
    "pattern",
    [r"^(?=a)(a+)+$", r"^(a+)+\1$", r"^(?!b)(a|a)*$", r"^(a|aa)+(?<=a)$"],
    ids=["lookahead", "backreference", "negative-lookahead", "lookbehind"],
)
def test_lookaround_and_backreferences_are_rejected_by_the_linear_engine(pattern: str) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    with pytest.raises(SchemaError) as info:
        check_schema(schema, where="parameters of tool 'grep'")
    assert info.value.path == "/properties/s/pattern"
    assert "linear-time regex engine" in str(info.value)
    assert str(info.value).startswith("parameters of tool 'grep'")


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "pattern",
    [r"^(a+)+$", r"^(?=a)(a+)+$", r"^(a+)+\1$", r"^(a|aa)+(?<=a)$", r"(?=(a|a)+)(a|a)+!$"],
)
def test_backtracking_engine_bounds_catastrophic_patterns(pattern: str) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    engine = RustEngine(regex="backtracking", backtrack_limit=10_000)
    check_schema(schema, engine=engine)
    validator = compile_validator(schema, engine=engine)
    for text in ["a" * 40 + "!", "a" * 2000 + "b"]:
        # Whatever the verdict, it arrives (the timeout mark guards against a hang), and a
        # rejection is a pattern violation.
        assert verdict(validator, {"s": text}) in (True, False)
        if not validator.is_valid({"s": text}):
            assert violations_of(validator, {"s": text})[0].keyword == "pattern"


@pytest.mark.timeout(20)
def test_backtrack_limit_is_reported_as_a_clear_violation() -> None:
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^(a|aa)+(?<=a)$"}},
    }
    validator = compile_validator(
        schema, engine=RustEngine(regex="backtracking", backtrack_limit=1000)
    )
    (violation,) = violations_of(validator, {"s": "a" * 40 + "!"})
    assert violation.keyword == "pattern"
    assert "backtracking limit" in violation.message


def test_rust_engine_rejects_unknown_regex_mode() -> None:
    with pytest.raises(ValueError, match="regex must be"):
        RustEngine(regex="pcre")  # type: ignore[arg-type]


# -- check_schema ----------------------------------------------------------------------------


def test_check_schema_accepts_a_tool_schema_repeatedly() -> None:
    check_schema(READ_FILE)
    check_schema(copy.deepcopy(READ_FILE))


@pytest.mark.parametrize(
    ("schema", "path", "fragment"),
    [
        ([], "", "must be a JSON object"),
        (True, "", "must be a JSON object"),
        ({"type": "string"}, "/type", '"type": "object"'),
        ({"type": "object", "properties": {"n": {"type": "int"}}}, "/properties/n/type", ""),
        ({"type": "object", "properties": {"n": {"minimum": "1"}}}, "/properties/n/minimum", ""),
        ({"type": "object", "required": "name"}, "/required", ""),
        (
            {"type": "object", "properties": {"s": {"pattern": "(("}}},
            "/properties/s/pattern",
            "regex",
        ),
        ({"type": "object", "properties": {"s": {"$ref": "#/$defs/missing"}}}, "", "missing"),
        ({"type": "object", "properties": {"s": {"$ref": "https://example.com/s.json"}}}, "", ""),
        ({"type": "object", "enum": [{1, 2}]}, "", "not plain JSON"),
        ({"type": "object", "default": float("nan")}, "", "not plain JSON"),
    ],
    ids=[
        "list",
        "boolean",
        "root-type",
        "bad-type",
        "bad-minimum",
        "bad-required",
        "bad-pattern",
        "dangling-ref",
        "remote-ref",
        "set",
        "nan",
    ],
)
def test_check_schema_rejects_with_a_path(schema: Any, path: str, fragment: str) -> None:
    with pytest.raises(SchemaError) as info:
        check_schema(schema, where="parameters of tool 'demo'")
    assert info.value.path == path
    assert str(info.value).startswith("parameters of tool 'demo'")
    assert fragment in str(info.value)


def test_check_schema_enforces_size_limits() -> None:
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(50)}}
    with pytest.raises(SchemaError, match="more than the limit of 20"):
        check_schema(wide, limits=ValidationLimits(max_schema_nodes=20))
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(40):
        deep = {"type": "object", "properties": {"x": deep}}
    with pytest.raises(SchemaError, match=r"nested .* levels deep"):
        check_schema(deep)


def test_check_schema_with_the_reference_engine() -> None:
    check_schema({"type": "object", "properties": {"s": {"pattern": "^(?=a)"}}}, engine="reference")
    with pytest.raises(SchemaError) as info:
        check_schema({"type": "object", "properties": {"n": {"type": 5}}}, engine="reference")
    assert info.value.path == "/properties/n/type"


def test_schema_analysis_flags_only_schemas_that_can_recurse() -> None:
    flat_refs = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/a"}, "b": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"type": "string"}},
        "additionalProperties": False,
    }
    cycle = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/node"}},
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
    }
    assert not compile_validator(READ_FILE).guarded
    assert not compile_validator(flat_refs).guarded
    assert compile_validator(cycle).guarded
    assert compile_validator({"$ref": "#"}).guarded
    assert compile_validator({"$dynamicRef": "#", "$dynamicAnchor": "x"}).guarded


def test_property_named_like_a_keyword_is_not_a_keyword() -> None:
    schema = {
        "type": "object",
        "properties": {"default": {"type": "string"}, "$ref": {"type": "string"}},
        "additionalProperties": False,
    }
    validator = compile_validator(schema)
    assert not validator.has_defaults
    assert not validator.guarded


# -- engines ---------------------------------------------------------------------------------


def test_engine_selection() -> None:
    assert compile_validator(READ_FILE).engine.name == "rust"
    assert compile_validator(READ_FILE, engine="reference").engine.name == "reference"
    with pytest.raises(ValueError, match="unknown validator engine 'fast'"):
        compile_validator(READ_FILE, engine="fast")
    with pytest.raises(TypeError, match="ValidatorEngine"):
        compile_validator(READ_FILE, engine=42)  # type: ignore[arg-type]


class CountingEngine:
    """A custom engine: wraps the reference engine and counts compiles."""

    def __init__(self) -> None:
        self.compiled = 0
        self._inner = ReferenceEngine()

    @property
    def name(self) -> str:
        return "counting"

    def compile(self, schema: Any) -> SchemaValidator:
        self.compiled += 1
        return self._inner.compile(schema)


def test_custom_engine_through_the_protocol() -> None:
    engine = CountingEngine()
    assert isinstance(engine, ValidatorEngine)
    validator = compile_validator(READ_FILE, engine=engine)
    assert engine.compiled == 1
    assert validator.validate(VALID)[0] is VALID
    assert len(violations_of(validator, INVALID)) == 4


def test_remote_refs_resolve_only_from_given_resources() -> None:
    schema = {"type": "object", "properties": {"n": {"$ref": "https://example.com/int.json"}}}
    resources = {"https://example.com/int.json": {"type": "integer"}}
    for engine in (RustEngine(resources=resources), ReferenceEngine(resources=resources)):
        validator = compile_validator(schema, engine=engine)
        assert validator.guarded
        assert validator.validate({"n": 1}) == ({"n": 1}, ())
        assert violations_of(validator, {"n": "x"})[0].path == "/n"
    with pytest.raises(SchemaError):
        compile_validator(schema)


def test_importing_the_package_imports_no_engine() -> None:
    script = (
        "import sys, customtools._validation\n"
        "print('jsonschema_rs' in sys.modules, 'jsonschema' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False", "False"]


# -- parse_arguments -------------------------------------------------------------------------


def test_parse_arguments_accepts_json_text_and_bytes() -> None:
    assert parse_arguments('{"a": [1, 2.5, "x", null, true]}') == {"a": [1, 2.5, "x", None, True]}
    assert parse_arguments(b'{"a": 1}') == {"a": 1}
    assert parse_arguments(bytearray(b"[1]")) == [1]


@pytest.mark.parametrize("text", ["", "   ", b"", "\n"])
def test_parse_arguments_empty_text_means_no_arguments(text: str | bytes) -> None:
    assert parse_arguments(text) == {}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"a": NaN}', "NaN is not valid JSON"),
        ('{"a": -Infinity}', "-Infinity is not valid JSON"),
        ('{"a": 1e400}', "not a JSON number"),
        ('{"a": ' + "9" * 5000 + "}", "too many digits"),
        ('{"a": ', "not valid JSON"),
        ("{'a': 1}", "not valid JSON"),
        (b'{"a": "\xff"}', "not valid UTF-8"),
        ("[" * 100_000, "nested too deeply"),
        ("[" * 100 + "]" * 100, "nested more than 64 levels deep"),
    ],
    ids=["nan", "infinity", "overflow", "huge-int", "truncated", "quotes", "utf8", "deep", "depth"],
)
def test_parse_arguments_rejects_with_a_clear_message(text: str | bytes, fragment: str) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        parse_arguments(text, tool_name="t")
    assert fragment in str(info.value)
    assert str(info.value).startswith("invalid arguments for tool 't':")
    assert len(info.value.violations) == 1


def test_parse_arguments_size_limit_is_checked_before_parsing() -> None:
    limits = ValidationLimits(max_text_length=10)
    with pytest.raises(ToolArgumentsError, match="11 characters long, more than the limit of 10"):
        parse_arguments('{"a": "xx"}', limits=limits)
    with pytest.raises(ToolArgumentsError, match="11 bytes long"):
        parse_arguments(b'{"a": "xx"}', limits=limits)


def test_parse_arguments_node_limit() -> None:
    with pytest.raises(ToolArgumentsError, match="more than 10 values"):
        parse_arguments(json.dumps(list(range(20))), limits=ValidationLimits(max_nodes=10))


def test_parse_arguments_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="must be str or bytes"):
        parse_arguments(42)  # type: ignore[arg-type]


# -- differential: the two engines agree -----------------------------------------------------

TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "read_file": READ_FILE,
    "search": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 50},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 100},
            "threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "sort": {"anyOf": [{"type": "string", "enum": ["asc", "desc"]}, {"type": "null"}]},
            "filters": {
                "type": "array",
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {"field": {"type": "string"}, "value": {"type": "string"}},
                    "required": ["field"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "edit": {
        "type": "object",
        "properties": {
            "file": {"$ref": "#/$defs/path"},
            "edits": {
                "type": "array",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                    "required": ["old", "new"],
                },
            },
            "dry_run": {"type": "boolean"},
        },
        "required": ["file", "edits"],
        "$defs": {"path": {"type": "string", "pattern": "^[a-z/]+$", "maxLength": 30}},
    },
}
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["read", "asc", "src/a.py", "a/b", "", "10"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["path", "limit", "mode", "tags", "query", "sort", "file", "edits", "x"]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def engine_pairs() -> dict[str, tuple[Any, Any]]:
    return {
        name: tuple(  # type: ignore[misc]
            compile_validator(schema, coerce=False, apply_defaults=False, engine=engine)
            for engine in ENGINES
        )
        for name, schema in TOOL_SCHEMAS.items()
    }


def verdict(validator: Any, value: Any) -> bool:
    try:
        validator.validate(value)
    except ToolArgumentsError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(TOOL_SCHEMAS))
def test_generated_valid_instances_pass_both_engines(
    name: str, engine_pairs: dict[str, tuple[Any, Any]]
) -> None:
    rust, reference = engine_pairs[name]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(from_schema(TOOL_SCHEMAS[name]))
    def check(instance: Any) -> None:
        assert verdict(rust, instance)
        assert verdict(reference, instance)

    check()


@pytest.mark.parametrize("name", sorted(TOOL_SCHEMAS))
def test_random_json_gets_the_same_verdict_from_both_engines(
    name: str, engine_pairs: dict[str, tuple[Any, Any]]
) -> None:
    rust, reference = engine_pairs[name]

    @settings(max_examples=150, deadline=None)
    @given(JSON_VALUES)
    def check(value: Any) -> None:
        assert verdict(rust, value) == verdict(reference, value)

    check()


def test_string_keyword_violations_are_repaired_only_by_dropping_empty_optional_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "p": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2},
            "q": {"type": "integer"},
        },
        "required": ["q"],
    }
    validator = compile_validator(schema, tool_name="t")
    args, coercions = validator.validate({"q": 1, "p": ""})
    assert args == {"q": 1}
    assert [c.kind for c in coercions] == ["dropped_null"]
    with pytest.raises(ToolArgumentsError) as info:
        validator.validate({"q": "2", "p": "BAD"})  # q is repaired, p cannot be
    assert [v.path for v in info.value.violations] == ["/p"]


# -- adversarial review 2026-11: L3, L5, L6, L10 ---------------------------------------------

FREE_FORM = {"type": "object", "properties": {"x": {}}}
OPEN_SCHEMAS = {
    "empty-schema": FREE_FORM,
    "true-schema": {"type": "object", "properties": {"x": True}, "additionalProperties": False},
    "untyped-array": {
        "type": "object",
        "properties": {"x": {"type": "array"}},
        "additionalProperties": False,
    },
    "open-additional": {"type": "object", "additionalProperties": True},
    "record-of-any": {"type": "object", "additionalProperties": {}},
}


@pytest.mark.parametrize("name", sorted(OPEN_SCHEMAS))
def test_deep_value_in_a_free_form_field_is_nested_too_deeply(name: str) -> None:
    validator = compile_validator(OPEN_SCHEMAS[name], tool_name="t")
    assert validator.guarded
    (violation,) = violations_of(validator, {"x": nested_list(10_000)})
    assert violation.keyword == "limits"
    assert "nested more than 64 levels deep" in violation.message


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({1, 2}, "a set is not JSON data; send an array"),
        (b"ab", "a bytes value is not JSON data; send a string"),
        (object(), "a value of type object is not JSON data"),
        ({1: "a"}, "the key 1 (int) is not a string"),
        ({(1, 2): "a"}, "the key (1, 2) (tuple) is not a string"),
        (float("nan"), "NaN is not a JSON number"),
        ([float("-inf")], "-Infinity is not a JSON number"),
        ("\ud800", "lone surrogate (\\ud800)"),
        ({"\udc00": 1}, "the key holds a lone surrogate"),
    ],
    ids=["set", "bytes", "object", "int-key", "tuple-key", "nan", "inf", "surrogate", "key-sur"],
)
@pytest.mark.parametrize("engine", ENGINES)
def test_values_json_cannot_carry_in_a_free_form_field_are_named(
    value: Any, fragment: str, engine: str
) -> None:
    validator = compile_validator(FREE_FORM, tool_name="t", engine=engine)
    (violation,) = violations_of(validator, {"x": value})
    assert violation.keyword == "json"
    assert violation.path.startswith("/x")
    assert fragment in violation.message
    assert not validator.is_valid({"x": value})


@pytest.mark.anyio
async def test_adapter_turns_a_deep_free_form_value_into_an_error_result() -> None:
    from customtools import CustomTool, CustomToolAdapter

    seen: list[Any] = []
    tool = CustomTool(
        name="free",
        description="d",
        parameters=FREE_FORM,
        execute=lambda *args: seen.append(args[1]) or "ran",
    )
    adapter = CustomToolAdapter(tool)
    result = await adapter.execute("c1", {"x": nested_list(10_000)})
    assert result.is_error
    assert "nested more than 64 levels deep" in result.content[0].text  # type: ignore[union-attr]
    result = await adapter.execute("c2", {"x": {"a": float("nan")}})
    assert result.is_error
    assert "/x/a: NaN is not a JSON number" in result.content[0].text  # type: ignore[union-attr]
    assert seen == []
    ok = await adapter.execute("c3", {"x": {"a": [1, "b", None]}})
    assert not ok.is_error
    assert seen == [{"x": {"a": [1, "b", None]}}]


def test_closed_schemas_skip_the_walk() -> None:
    from customtools import Type

    closed = Type.Object(
        {
            "a": Type.String(),
            "b": Type.Array(Type.Integer()),
            "c": Type.Optional(Type.Number()),
            "d": Type.Record(Type.String(), Type.Boolean()),
        }
    )
    validator = compile_validator(closed)
    assert not validator.guarded
    assert validator.fast_check is not None
    assert not compile_validator(READ_FILE).guarded


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"x": {"type": ["number", "null"]}}},
        {"type": "object", "properties": {"x": {"enum": [1, None]}}},
        {"type": "object", "properties": {"x": {"not": {"type": "string"}}}},
        {"type": "object", "properties": {"x": {"type": "array", "prefixItems": [True]}}},
    ],
    ids=["nullable", "enum-with-null", "not-only", "prefix-items-only"],
)
def test_schemas_that_let_values_through_unexamined_are_walked(schema: dict[str, Any]) -> None:
    schema = {**schema, "additionalProperties": False}
    validator = compile_validator(schema)
    assert validator.guarded
    (violation,) = violations_of(validator, {"x": float("nan")})
    assert "NaN is not a JSON number" in violation.message


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("value", "name"), [(float("nan"), "NaN"), (float("inf"), "Infinity")], ids=["nan", "inf"]
)
def test_non_finite_number_is_named_not_called_null(engine: str, value: float, name: str) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number"}}}
    schema["additionalProperties"] = False
    validator = compile_validator(schema, engine=engine)
    (violation,) = violations_of(validator, {"n": value})
    assert violation.path == "/n"
    assert violation.message.startswith(name + " is not")
    assert "null" not in violation.message


@pytest.mark.parametrize("text", [" 1 ", "1 ", "\u00a02", "\t3", "2\n", " true"])
def test_numbers_and_booleans_with_surrounding_whitespace_are_not_coerced(text: str) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "number"}, "b": {"type": "boolean"}},
    }
    key = "b" if "true" in text else "n"
    (violation,) = violations_of(compile_validator(schema), {key: text})
    assert violation.path == f"/{key}"


def test_json_text_may_keep_json_whitespace_but_not_nbsp() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array"}}}
    args, coercions = compile_validator(schema).validate({"xs": " [1, 2]\n"})
    assert args == {"xs": [1, 2]}
    assert [c.kind for c in coercions] == ["json_string"]
    violations_of(compile_validator(schema), {"xs": "\u00a0[1]"})


def test_root_level_json_string_is_not_parsed_as_the_arguments() -> None:
    (violation,) = violations_of(compile_validator(READ_FILE), json.dumps(VALID))
    assert violation.path == ""
    assert "object" in violation.message


@pytest.mark.parametrize(
    "text", ['{"x":"\\ud800"}', '{"x":["a\\udfffb"]}', '{"\\ud800":1}', '{"x":"\ud800"}']
)
def test_parse_arguments_rejects_lone_surrogates(text: str) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        parse_arguments(text, tool_name="t")
    (violation,) = info.value.violations
    assert violation.keyword == "json"
    assert "lone surrogate" in violation.message
    assert "not valid Unicode" in str(info.value)


def test_parse_arguments_keeps_surrogate_pairs() -> None:
    assert parse_arguments('{"x":"\\ud83d\\ude00"}') == {"x": "\U0001f600"}


def test_missing_rust_engine_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)  # what a failed import looks like
    schema = {"type": "object", "properties": {"fresh": {"type": "string", "maxLength": 77}}}
    fresh = RustEngine()
    for engine in (None, "rust", fresh):
        with pytest.raises(ModuleNotFoundError) as info:
            compile_validator(schema, engine=engine)
        assert "pip install jsonschema-rs" in str(info.value)
        assert "engine='reference'" in str(info.value)
    with pytest.raises(ModuleNotFoundError, match="jsonschema-rs"):
        check_schema(schema)
    assert compile_validator(schema, engine="reference").engine.name == "reference"


def test_tool_definition_fails_loudly_without_the_rust_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from customtools import CustomTool

    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)
    with pytest.raises(ModuleNotFoundError, match="pip install jsonschema-rs"):
        CustomTool(
            name="t",
            description="d",
            parameters={"type": "object", "properties": {"only_here": {"type": "integer"}}},
            execute=lambda *args: "ran",
        )


@pytest.mark.parametrize("engine", ENGINES)
def test_dollar_matches_only_at_the_very_end(engine: str) -> None:
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^[a-z]+$"}},
        "patternProperties": {"^k[0-9]$": {"type": "integer"}},
        "additionalProperties": False,
    }
    validator = compile_validator(schema, engine=engine)
    assert validator.validate({"s": "abc", "k1": 1})[0] == {"s": "abc", "k1": 1}
    (violation,) = violations_of(validator, {"s": "abc\n"})
    assert violation.path == "/s"
    assert "^[a-z]+$" in violation.message  # the schema's own pattern, not the translation
    assert violations_of(validator, {"k1\n": 1})


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("^a$", "^a\\Z"),
        ("a\\$", "a\\$"),
        ("[$]$", "[$]\\Z"),
        ("[\\]$]x", "[\\]$]x"),
        ("(a|b$)", "(a|b\\Z)"),
    ],
)
def test_ecma_anchor_translation(pattern: str, expected: str) -> None:
    from customtools._validation._engines import ecma_anchors

    assert ecma_anchors(pattern) == expected


def test_reference_engine_leaves_data_that_looks_like_a_pattern_alone() -> None:
    schema = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "default": "x$", "const": "x$"}},
        "additionalProperties": False,
    }
    validator = compile_validator(schema, engine="reference")
    assert validator.validate({"pattern": "x$"})[0] == {"pattern": "x$"}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"a": {1, 2}}, "/a: a set is not JSON data; send an array"),
        ({"s": b"x"}, "/s: a bytes value is not JSON data; send a string"),
        ({"s": object()}, "/s: a value of type object is not JSON data"),
        ({1: "x"}, "(root): the key 1 (int) is not a string"),
        ({"a": [float("nan")]}, '/a/0: NaN is not of type "integer"'),
    ],
    ids=["set", "bytes", "object", "int-key", "nan-item"],
)
def test_closed_schema_names_values_json_cannot_carry(params: Any, expected: str) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer"}}, "s": {}},
        "additionalProperties": False,
    }
    schema["properties"]["s"] = {"type": "string"}
    validator = compile_validator(schema)
    assert not validator.guarded
    (violation,) = violations_of(validator, params)
    assert str(violation).startswith(expected)


class TestNullableSchemasKeepAFastCheck:
    """Schemas whose only open places accept null skip the full walk but never let NaN in."""

    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "x": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "xs": {"type": "array", "items": {"type": ["number", "null"]}},
        },
        "additionalProperties": False,
    }

    def test_valid_arguments_take_the_fast_check(self) -> None:
        from customtools.validation import compile_validator

        validator = compile_validator(self.SCHEMA)
        assert validator.fast_check is not None
        assert validator.fast_check({"x": None, "xs": [1.5, None]})

    @pytest.mark.parametrize(
        "params", [{"x": math.nan}, {"xs": [1, math.inf]}, {"xs": [None, -math.inf]}]
    )
    def test_non_finite_numbers_are_still_refused(self, params: dict[str, Any]) -> None:
        from customtools.validation import compile_validator

        validator = compile_validator(self.SCHEMA)
        assert validator.fast_check is not None
        assert not validator.fast_check(params)
        _, _, violations, _ = validator.check(params)
        assert violations is not None
        assert any("NaN" in v.message or "Infinity" in v.message for v in violations)

    def test_a_free_form_field_still_gets_the_whole_walk(self) -> None:
        from customtools.validation import compile_validator

        free = {"type": "object", "properties": {"x": {}, "y": {"type": ["string", "null"]}}}
        assert compile_validator(free).fast_check is None
