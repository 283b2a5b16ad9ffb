"""Tools from typed functions: schemas, descriptions, injected arguments, conversion, results."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal, TypedDict

import anyio
import pytest

from customtools import (
    AbortSignal,
    CustomTool,
    CustomToolAdapter,
    ToolContext,
    ToolDefinitionError,
    ToolResult,
    tool,
)
from customtools.export import openai_strict_issues, to_mcp
from customtools.validation import check_schema

pytestmark = pytest.mark.anyio


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


@dataclasses.dataclass
class Box:
    """A rectangle given by two corners."""

    low: Point
    high: Point
    label: str | None = None


class Options(TypedDict, total=False):
    deep: bool
    color: Color


class Required(TypedDict):
    name: str


class Tree:
    """Not a JSON-shaped type."""


@dataclasses.dataclass
class Node:
    children: list[Node]


def props(t: CustomTool) -> dict[str, Any]:
    return dict(t.parameters["properties"])


# -- schemas ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (str, {"type": "string"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Any, {}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
                "items": False,
            },
        ),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "x"], {"enum": [1, "x"]}),
        (Literal["only"], {"type": "string", "const": "only"}),
        (Color, {"type": "string", "enum": ["red", "blue"]}),
        (Level, {"type": "integer", "enum": [1, 2]}),
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (datetime.date, {"type": "string", "format": "date"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (Annotated[str, "a note"], {"type": "string", "description": "a note"}),
        (
            Annotated[int, {"minimum": 1, "maximum": 5}],
            {"type": "integer", "minimum": 1, "maximum": 5},
        ),
        (
            Annotated[str, {"minLength": 2, "pattern": "^[a-z]+$"}],
            {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
        ),
    ],
)
def test_each_annotation_kind_becomes_its_schema(annotation: Any, schema: Any) -> None:
    def fn(value):  # type: ignore[no-untyped-def]
        return "ok"

    fn.__annotations__ = {"value": annotation}
    made = tool(fn)
    assert props(made)["value"] == schema
    assert made.parameters["required"] == ["value"]
    assert made.parameters["additionalProperties"] is False
    check_schema(made.parameters)


def test_constraint_objects_in_annotated_are_read_by_attribute() -> None:
    @dataclasses.dataclass
    class Ge:
        ge: int

    @dataclasses.dataclass
    class MaxLen:
        max_length: int

    def fn(count: Annotated[int, Ge(1)], names: Annotated[list[str], MaxLen(3)]) -> str:
        return "ok"

    fn.__annotations__ = {"count": Annotated[int, Ge(1)], "names": Annotated[list[str], MaxLen(3)]}
    made = tool(fn)
    assert props(made)["count"] == {"type": "integer", "minimum": 1}
    assert props(made)["names"] == {"type": "array", "items": {"type": "string"}, "maxItems": 3}


def test_typeddict_and_dataclass_become_closed_objects() -> None:
    def fn(box: Box, options: Options, who: Required) -> str:
        return "ok"

    made = tool(fn)
    box = props(made)["box"]
    assert box["type"] == "object"
    assert box["required"] == ["low", "high"]
    assert box["additionalProperties"] is False
    assert box["description"] == "A rectangle given by two corners."
    assert box["properties"]["low"]["properties"]["y"] == {"type": "integer", "default": 0}
    assert props(made)["options"] == {
        "type": "object",
        "properties": {
            "deep": {"type": "boolean"},
            "color": {"type": "string", "enum": ["red", "blue"]},
        },
        "additionalProperties": False,
    }
    assert props(made)["who"]["required"] == ["name"]
    check_schema(made.parameters)


def test_defaults_make_parameters_optional_and_are_advertised() -> None:
    def fn(
        query: str, limit: int = 10, color: Color = Color.BLUE, opaque: object = object()
    ) -> str:
        return "ok"

    fn.__annotations__["opaque"] = Any
    made = tool(fn)
    assert made.parameters["required"] == ["query"]
    assert props(made)["limit"]["default"] == 10
    assert props(made)["color"]["default"] == "blue"
    assert "default" not in props(made)["opaque"]  # not JSON: the function's own default applies


@pytest.mark.parametrize("style", ["google", "numpy", "sphinx"])
def test_docstring_styles_give_description_and_parameter_descriptions(style: str) -> None:
    docs = {
        "google": """Find files by name.

            Longer explanation
            over two lines.

            Args:
                pattern (str): A glob
                    pattern.
                limit: At most this many.

            Returns:
                The paths.
            """,
        "numpy": """Find files by name.

            Longer explanation
            over two lines.

            Parameters
            ----------
            pattern : str
                A glob
                pattern.
            limit : int, optional
                At most this many.

            Returns
            -------
            list
                The paths.
            """,
        "sphinx": """Find files by name.

            Longer explanation
            over two lines.

            :param str pattern: A glob
                pattern.
            :param limit: At most this many.
            :returns: The paths.
            """,
    }

    def fn(pattern: str, limit: int = 5) -> str:
        return "ok"

    fn.__doc__ = docs[style]
    made = tool(fn)
    assert made.description == "Find files by name.\n\nLonger explanation over two lines."
    assert props(made)["pattern"]["description"] == "A glob pattern."
    assert props(made)["limit"]["description"] == "At most this many."


def test_name_description_and_options_can_be_overridden() -> None:
    @tool(name="find", description="Finds.", timeout=3, label="Find files")
    def fn(x: int) -> str:
        """Ignored."""
        return "ok"

    assert (fn.name, fn.description, fn.timeout, fn.label) == ("find", "Finds.", 3, "Find files")


def test_injected_arguments_are_left_out_of_the_schema() -> None:
    def fn(
        query: str,
        tool_call_id: str,
        ctx: ToolContext,
        signal: AbortSignal,
        on_update: Any,
        context: ToolContext,
        stop: AbortSignal,
    ) -> str:
        return "ok"

    assert list(props(tool(fn))) == ["query"]


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (Tree, "Tree is not a type a tool parameter can have"),
        (bytes, "bytes is not a type a tool parameter can have"),
        (list, "needs an item type"),
        (dict[int, str], "must have str keys"),
        (Node, "refers to itself"),
        (Color | Point, "mixes types that need converting"),
        (Annotated[int, 3.5], "is not understood in Annotated"),
    ],
)
def test_unsupported_annotations_are_definition_errors(annotation: Any, message: str) -> None:
    def fn(value):  # type: ignore[no-untyped-def]
        return "ok"

    fn.__annotations__ = {"value": annotation}
    with pytest.raises(ToolDefinitionError, match=message) as info:
        tool(fn)
    assert "tool 'fn': parameter 'value'" in str(info.value)


def test_var_arguments_are_refused() -> None:
    def fn(*names: str) -> str:
        return "ok"

    with pytest.raises(ToolDefinitionError, match="a tool takes named parameters only"):
        tool(fn)


def test_unresolvable_annotations_name_the_function() -> None:
    def fn(value: Missing) -> str:  # type: ignore[name-defined]  # noqa: F821
        return "ok"

    with pytest.raises(ToolDefinitionError, match="cannot be resolved"):
        tool(fn)


def test_strict_mode_meets_openai_rules() -> None:
    @tool(strict=True)
    def fn(query: str, limit: int = 10, box: Box | None = None, nothing: int | None = 3) -> str:
        return "ok"

    assert fn.parameters["required"] == ["query", "limit", "box", "nothing"]
    assert props(fn)["limit"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert openai_strict_issues(fn.parameters) == []


# -- calls --------------------------------------------------------------------------------------


async def test_arguments_arrive_converted_to_the_annotated_types() -> None:
    seen: dict[str, Any] = {}

    @tool
    def fn(
        color: Color,
        box: Box,
        when: datetime.date,
        pair: tuple[int, str],
        tags: set[str],
        options: Options | None = None,
        level: Level = Level.LOW,
    ) -> str:
        seen.update(locals())
        return "ok"

    result = await CustomToolAdapter(fn).execute(
        "c",
        {
            "color": "blue",
            "box": {"low": {"x": 1}, "high": {"x": 2, "y": 3}},
            "when": "2026-11-23",
            "pair": [1, "a"],
            "tags": ["x", "y"],
            "options": {"color": "red"},
        },
    )
    assert not result.is_error, result.text
    assert seen["color"] is Color.BLUE
    assert seen["box"] == Box(low=Point(1, 0), high=Point(2, 3))
    assert seen["when"] == datetime.date(2026, 11, 23)
    assert seen["pair"] == (1, "a")
    assert seen["tags"] == {"x", "y"}
    assert seen["options"] == {"color": Color.RED}
    assert seen["level"] is Level.LOW  # the schema default, converted


async def test_invalid_arguments_are_reported_like_any_validation_error() -> None:
    @tool
    async def fn(color: Color, count: Annotated[int, {"minimum": 1}]) -> str:
        return "ok"

    result = await CustomToolAdapter(fn).execute("c", {"color": "green", "count": 0})
    assert result.is_error
    assert "/color" in result.text
    assert "/count: 0 is less than the minimum of 1" in result.text


async def test_a_conversion_that_fails_is_an_argument_error() -> None:
    @tool
    def fn(when: datetime.date) -> str:
        return "ok"

    result = await CustomToolAdapter(fn).execute("c", {"when": "not a date"})
    assert result.is_error
    assert "invalid arguments for tool 'fn'" in result.text
    assert "/when" in result.text


async def test_injected_arguments_receive_the_call_context() -> None:
    seen: dict[str, Any] = {}

    @tool
    async def fn(x: int, tool_call_id: str, signal: AbortSignal, ctx: ToolContext) -> str:
        seen.update(tool_call_id=tool_call_id, signal=signal, ctx=ctx)
        return "ok"

    await CustomToolAdapter(fn).execute("call-7", {"x": 1})
    assert seen["tool_call_id"] == "call-7"
    assert isinstance(seen["signal"], AbortSignal)
    assert isinstance(seen["ctx"], ToolContext)


async def test_strict_null_means_the_default() -> None:
    seen: list[Any] = []

    @tool(strict=True)
    def fn(limit: int = 10, maybe: int | None = 3) -> str:
        seen.append((limit, maybe))
        return "ok"

    await CustomToolAdapter(fn).execute("c", {"limit": None, "maybe": None})
    assert seen == [(10, None)]


async def test_sync_functions_run_in_a_worker_thread() -> None:
    import threading

    threads: list[int] = []

    @tool
    def fn() -> str:
        threads.append(threading.get_ident())
        return "ok"

    result = await CustomToolAdapter(fn).execute("c", {})
    assert result.text == "ok"
    assert threads != [threading.get_ident()]


async def test_results_have_text_and_structured_content() -> None:
    @tool
    def points() -> list[Point]:
        return [Point(1, 2)]

    @tool
    def box() -> Box:
        return Box(low=Point(0), high=Point(1, 1))

    @tool
    def plain() -> str:
        return "hello"

    @tool
    def nothing() -> None:
        return None

    adapter_result = await CustomToolAdapter(points).execute("c", {})
    assert adapter_result.structured_content == {"result": [{"x": 1, "y": 2}]}
    assert adapter_result.text == '[{"x": 1, "y": 2}]'
    assert points.output_schema is not None
    assert points.output_schema["required"] == ["result"]
    boxed = await CustomToolAdapter(box).execute("c", {})
    assert boxed.structured_content == {
        "low": {"x": 0, "y": 0},
        "high": {"x": 1, "y": 1},
        "label": None,
    }
    assert box.output_schema is not None
    assert box.output_schema["type"] == "object"
    assert (await CustomToolAdapter(plain).execute("c", {})).text == "hello"
    assert plain.output_schema is None
    assert (await CustomToolAdapter(nothing).execute("c", {})).text == "null"
    assert to_mcp(box)["outputSchema"] == box.output_schema


async def test_async_generator_yields_stream_as_updates() -> None:
    @tool
    async def count(n: int) -> AsyncIterator[str]:
        for index in range(n):
            yield f"step {index}"

    updates: list[str] = []
    result = await CustomToolAdapter(count).execute(
        "c", {"n": 3}, on_update=lambda partial: updates.append(partial.text)
    )
    assert updates == ["step 0", "step 1", "step 2"]
    assert result.text == "step 2"


async def test_an_aborted_generator_is_closed() -> None:
    closed = anyio.Event()

    @tool
    async def forever() -> AsyncIterator[str]:
        try:
            while True:
                yield "tick"
                await anyio.sleep(0.01)
        finally:
            closed.set()

    result = await CustomToolAdapter(forever).execute("c", {}, timeout=0.1)
    assert result.is_error
    with anyio.fail_after(2):
        await closed.wait()


async def test_a_decorated_tool_returns_tool_results_unchanged() -> None:
    @tool
    def fn() -> ToolResult:
        return ToolResult.from_text("raw", details={"k": 1})

    result = await CustomToolAdapter(fn).execute("c", {})
    assert (result.text, result.details) == ("raw", {"k": 1})
    assert fn.output_schema is None


def test_the_function_stays_callable() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    assert add.execute.__wrapped__(2, 3) == 5


# -- TypedDict key qualifiers --------------------------------------------------------------


class Query(TypedDict, total=False):
    text: typing.Required[str]
    limit: int
    note: Annotated[typing.NotRequired[str], "A note."]


class Filter(TypedDict):
    field: str
    value: typing.NotRequired[int | None]


def test_typeddict_required_and_not_required_keys_are_understood() -> None:
    @tool
    def fn(query: Query, where: Filter) -> str:
        return "ok"

    query = props(fn)["query"]
    assert query["properties"]["text"] == {"type": "string"}
    assert query["properties"]["note"] == {"type": "string", "description": "A note."}
    assert query["required"] == ["text"]
    where = props(fn)["where"]
    assert where["required"] == ["field"]
    assert where["properties"]["value"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    check_schema(fn.parameters)


async def test_typeddict_keys_in_strict_mode_are_required_and_null_means_absent() -> None:
    seen: list[Any] = []

    @tool(strict=True)
    def fn(query: Query, where: Filter) -> str:
        seen.append((query, where))
        return "ok"

    assert openai_strict_issues(fn.parameters) == []
    assert props(fn)["query"]["required"] == ["text", "limit", "note"]
    result = await CustomToolAdapter(fn).execute(
        "c",
        {
            "query": {"text": "x", "limit": None, "note": None},
            "where": {"field": "f", "value": None},
        },
    )
    assert not result.is_error, result.text
    # "value" admits null itself, so its null is passed on; the others mean "absent".
    assert seen == [({"text": "x"}, {"field": "f", "value": None})]
