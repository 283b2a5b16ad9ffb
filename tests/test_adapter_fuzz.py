"""Property tests: whatever the arguments, no exception escapes the adapter."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from anchor import SCHEMA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from customtools import CustomTool, CustomToolAdapter, ToolResult, Type

SCHEMAS: list[dict[str, Any]] = [
    SCHEMA,
    Type.Object(
        {
            "query": Type.String(minLength=1, maxLength=50),
            "filters": Type.Optional(
                Type.Object({"lang": Type.Optional(Type.StringEnum(["py", "ts"], default="py"))})
            ),
            "page": Type.Optional(Type.Integer(minimum=0, default=0)),
            "ratio": Type.Optional(Type.Number(exclusiveMinimum=0, maximum=1)),
            "flags": Type.Optional(Type.Array(Type.Boolean(), maxItems=4)),
            "choice": Type.Optional(Type.Union([Type.Literal("a"), Type.Integer()])),
        }
    ),
]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)

seen_params: list[Any] = []


async def echo(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
    seen_params.append(params)
    return {"content": [{"type": "text", "text": "ok"}], "details": params}


# Defaults off so the tool must receive exactly what was sent (defaults have their own tests).
ADAPTERS = [
    CustomToolAdapter(
        CustomTool(name=f"fuzz_{i}", parameters=s, execute=echo), apply_defaults=False
    )
    for i, s in enumerate(SCHEMAS)
]


def run_call(adapter: CustomToolAdapter, params: Any, backend: str) -> ToolResult:
    async def call() -> ToolResult:
        return await adapter.execute("fuzz", params)

    return anyio.run(call, backend=backend)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_valid_params_from_the_schema_always_reach_the_tool(index: int, backend: str) -> None:
    adapter = ADAPTERS[index]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(from_schema(SCHEMAS[index]))
    def check(params: Any) -> None:
        result = run_call(adapter, params, backend)
        assert isinstance(result, ToolResult)
        assert not result.is_error, result.text
        assert result.details == params

    check()


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_arbitrary_values_never_raise_out_of_the_adapter(index: int) -> None:
    adapter = ADAPTERS[index]

    @settings(max_examples=150, deadline=None)
    @given(JSON)
    def check(params: Any) -> None:
        result = run_call(adapter, params, "asyncio")
        assert isinstance(result, ToolResult)
        if result.is_error:
            assert result.details["error"] == "ToolArgumentsError"
            assert result.details["violations"]

    check()
