"""The result budget: an oversized result is trimmed without breaking its output schema (a
property over generated schemas and values), says what was cut, and the whole result can be
read back page by page by its caller only."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from customtools import CustomTool, CustomToolAdapter, ToolContext
from customtools._policy._trim import shrink
from customtools.policy import Policy, read_result_tool
from customtools.validation import compile_validator

# -- generated schemas and values --------------------------------------------------------------

_NAMES = st.text("abcdefgh", min_size=1, max_size=6)


def _strings() -> st.SearchStrategy[dict[str, Any]]:
    plain = st.builds(
        lambda low, extra: {
            "type": "string",
            **({"minLength": low} if low else {}),
            **({"maxLength": low + extra} if extra is not None else {}),
        },
        st.integers(0, 20),
        st.none() | st.integers(0, 400),
    )
    fixed = st.sampled_from(
        [
            {"type": "string", "enum": ["red", "green", "a long enumerated value " * 4]},
            {"type": "string", "pattern": "^a+$"},
            {"type": "string", "format": "date"},
            {"const": "exactly this"},
        ]
    )
    return plain | fixed


def _schemas() -> st.SearchStrategy[dict[str, Any]]:
    leaves = _strings() | st.just({"type": "integer", "minimum": 0}) | st.just({"type": "boolean"})

    def containers(children: st.SearchStrategy[dict[str, Any]]) -> Any:
        arrays = st.builds(
            lambda items, low, unique: {
                "type": "array",
                "items": items,
                **({"minItems": low} if low and not unique else {}),
                **({"uniqueItems": True} if unique else {}),
            },
            children,
            st.integers(0, 3),
            st.sampled_from([False, False, False, True]),
        )
        objects = st.builds(
            lambda props, required, closed: {
                "type": "object",
                "properties": props,
                "required": sorted(set(required) & set(props)),
                **({"additionalProperties": False} if closed else {}),
            },
            st.dictionaries(_NAMES, children, min_size=1, max_size=4),
            st.lists(_NAMES, max_size=4),
            st.booleans(),
        )
        opaque = st.builds(lambda a, b: {"anyOf": [a, b]}, children, children)
        return st.one_of(arrays, arrays, objects, objects, opaque)  # opaque parts: fewer

    return st.recursive(leaves, containers, max_leaves=8)


def _values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "anyOf" in schema:
        return st.one_of(*(_values(option) for option in schema["anyOf"]))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if kind == "integer":
        return st.integers(0, 10**6)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        if "pattern" in schema:
            return st.integers(1, 300).map(lambda n: "a" * n)
        if "format" in schema:
            return st.just("2026-01-01")
        low = schema.get("minLength", 0)
        return st.text(min_size=low, max_size=schema.get("maxLength", low + 200))
    if kind == "array":
        items = _values(schema["items"])
        low = schema.get("minItems", 0)
        if schema.get("uniqueItems"):
            return st.lists(
                items,
                min_size=low,
                max_size=low + 12,
                unique_by=lambda v: json.dumps(v, sort_keys=True),
            )
        return st.lists(items, min_size=low, max_size=low + 12)
    required = schema["required"]
    props = schema["properties"]
    return st.fixed_dictionaries(
        {name: _values(props[name]) for name in required},
        optional={name: _values(s) for name, s in props.items() if name not in required},
    )


def _cases() -> st.SearchStrategy[tuple[dict[str, Any], Any]]:
    return _schemas().flatmap(lambda schema: st.tuples(st.just(schema), _values(schema)))


def _violations(schema: dict[str, Any], value: Any) -> Any:
    validator = compile_validator(schema, tool_name="t", coerce=False, apply_defaults=False)
    return validator.check(value)[2]


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(case=_cases(), share=st.floats(0, 1.2))
def test_shrinking_keeps_every_value_valid_against_its_schema(
    case: tuple[dict[str, Any], Any], share: float
) -> None:
    schema, value = case
    assert _violations(schema, value) is None  # the generator makes valid values
    # A budget of a share of the value's size: most values must shrink, some fit as they are.
    shrunk = shrink(value, schema, int(share * len(json.dumps(value))))
    assert _violations(schema, shrunk) is None


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(case=_cases())
def test_a_trimmed_result_keeps_its_structured_content_valid(
    case: tuple[dict[str, Any], Any],
) -> None:
    schema, value = case
    root = {"type": "object", "properties": {"value": schema}, "required": ["value"]}

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> Any:
        structured = {"value": value}
        return {"content": [{"type": "text", "text": "x" * 3000}], "structuredContent": structured}

    tool = CustomTool(name="big", execute=execute, output_schema=root)
    adapter = CustomToolAdapter(tool, policy=Policy(max_result_bytes=600))
    result = anyio.run(adapter.execute, "1", {})
    assert not result.is_error, result.text
    assert _violations(root, result.structured_content) is None
    assert "trimmed" in result.meta["customtools/policy"]


def test_shrinking_cuts_arrays_and_long_strings_to_about_the_budget() -> None:
    schema = {
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"type": "integer"}, "minItems": 2},
            "body": {"type": "string", "minLength": 5},
            "kind": {"enum": ["full"]},
        },
        "required": ["rows", "body", "kind"],
    }
    value = {"rows": list(range(5000)), "body": "b" * 20000, "kind": "full"}
    shrunk = shrink(value, schema, 2000)
    assert len(json.dumps(shrunk, separators=(",", ":"))) <= 2010  # about the budget
    assert shrunk["rows"] == list(range(len(shrunk["rows"])))
    assert len(shrunk["rows"]) >= 2
    assert shrunk["body"].endswith("…")
    assert shrunk["kind"] == "full"


# -- the trimmed result and read_result --------------------------------------------------------


@pytest.mark.anyio
async def test_a_trimmed_result_says_what_was_cut_and_its_caller_reads_the_rest() -> None:
    text = "".join(f"line {i}\n" for i in range(3000))

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        return text

    policy = Policy(max_result_bytes=2000)
    alice = ToolContext(caller="alice")
    adapter = CustomToolAdapter(CustomTool(name="log", execute=execute), policy=policy)
    result = await adapter.execute("1", {}, ctx=alice)
    record = result.meta["customtools/policy"]["trimmed"]
    assert record["size"] == len(text)
    assert record["bytes"] > len(text) - 2000
    assert record["cut"][0].startswith(f"text {len(text)} -> ")
    assert sum(len(block.text.encode()) for block in result.content) <= 2000
    note = result.content[-1].text
    assert note.startswith(f"[Trimmed to the host's budget of 2000 bytes (it was {len(text)}):")
    assert f"read_result(handle={record['handle']!r}, offset=0)" in note

    reader = CustomToolAdapter(read_result_tool(policy), policy=policy)
    pages, offset = [], 0
    while True:
        page = await reader.execute("r", {"handle": record["handle"], "offset": offset}, ctx=alice)
        body, footer = page.text.rsplit("\n[", 1)
        pages.append(body)
        found = re.search(r"next: offset=(\d+)", footer)
        if found is None:
            assert "that is the end" in footer
            break
        offset = int(found.group(1))
    assert "".join(pages) == text
    assert len(pages) > 1

    bob = await reader.execute("r", {"handle": record["handle"]}, ctx=ToolContext(caller="bob"))
    assert bob.is_error
    assert bob.details["code"] == "invalid-arguments"
    assert "no stored result" in bob.text
