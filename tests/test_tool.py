"""CustomTool construction rules."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from customtools._errors import SchemaError, ToolDefinitionError
from customtools._tool import CustomTool, check_tool_name


def run(*_: Any) -> str:
    return "ok"


async def arun(*_: Any) -> str:
    return "ok"


@pytest.mark.parametrize("name", ["a", "read_file", "Tool-2", "x" * 64, "A_b-C_9"])
def test_valid_names(name: str) -> None:
    assert CustomTool(name=name, execute=run).name == name


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "it is empty"),
        ("x" * 65, "65 characters long"),
        ("read file", "' '"),
        ("mcp.tool", "'.'"),
        ("ünïcode", "'ï', 'ü'"),
        ("ok\n", "'\\\\n'"),
    ],
)
def test_invalid_names_say_why(name: str, problem: str) -> None:
    with pytest.raises(ToolDefinitionError, match=problem):
        CustomTool(name=name, execute=run)


def test_non_string_name() -> None:
    with pytest.raises(ToolDefinitionError, match="must be a string"):
        check_tool_name(3)


def test_label_defaults_to_name() -> None:
    assert CustomTool(name="grep", execute=run).label == "grep"
    assert CustomTool(name="grep", label="Grep files", execute=run).label == "Grep files"


def test_execute_must_be_callable() -> None:
    with pytest.raises(ToolDefinitionError, match="tool 'grep': execute must be callable"):
        CustomTool(name="grep", execute="not callable")


@pytest.mark.parametrize("hook", ["on_session", "render_call", "render_result"])
def test_hooks_must_be_callable(hook: str) -> None:
    with pytest.raises(ToolDefinitionError, match=f"{hook} must be callable"):
        CustomTool(name="grep", execute=run, **{hook: 5})


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), True, "5"])
def test_timeout_must_be_positive_seconds(timeout: Any) -> None:
    with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
        CustomTool(name="grep", execute=run, timeout=timeout)


def test_concurrency_values() -> None:
    with pytest.raises(ToolDefinitionError, match="concurrency must be"):
        CustomTool(name="grep", execute=run, concurrency="parallel")  # type: ignore[arg-type]


def test_parameters_must_be_a_mapping() -> None:
    with pytest.raises(ToolDefinitionError, match="parameters must be a JSON Schema object"):
        CustomTool(name="grep", execute=run, parameters=[1])  # type: ignore[arg-type]


def test_invalid_schema_is_rejected_at_construction() -> None:
    with pytest.raises(SchemaError, match="tool 'grep' parameters"):
        CustomTool(name="grep", execute=run, parameters={"type": "object", "minProperties": -1})


def test_async_detection() -> None:
    assert CustomTool(name="a", execute=arun).execute_is_async
    assert not CustomTool(name="a", execute=run).execute_is_async


def test_async_detection_reads_markers_on_plain_functions() -> None:
    from customtools._tool import AWAITABLE_MARKER, is_async_callable

    def marked(*args: Any) -> Any:
        return None

    setattr(marked, AWAITABLE_MARKER, True)

    async def with_attribute(*args: Any) -> None:
        return None

    with_attribute.note = 1  # type: ignore[attr-defined]

    class Callable:
        async def __call__(self, *args: Any) -> None:
            return None

    assert is_async_callable(marked)
    assert is_async_callable(with_attribute)
    assert is_async_callable(Callable())
    assert not is_async_callable(lambda *args: None)
    assert not is_async_callable(functools.partial(lambda *args: None, 1))


def test_tools_are_frozen() -> None:
    tool = CustomTool(name="grep", execute=run)
    with pytest.raises(AttributeError):
        tool.name = "other"  # type: ignore[misc]


def test_former_names_travel_in_the_wire_form() -> None:
    tool = CustomTool(name="find", execute=lambda *a: None, former_names=["search"])

    wire = tool.to_dict()

    assert wire["formerNames"] == ["search"]
    assert CustomTool.from_dict(wire, execute=lambda *a: None).former_names == ("search",)
    assert "formerNames" not in CustomTool(name="x", execute=lambda *a: None).to_dict()


@pytest.mark.parametrize(
    ("former", "message"),
    [
        (["find"], "must be distinct and differ from the name"),
        (["a", "a"], "must be distinct"),
        ("search", "must be a list of names"),
        (["bad name"], "invalid tool name 'bad name'"),
    ],
)
def test_former_names_are_checked(former: Any, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        CustomTool(name="find", execute=lambda *a: None, former_names=former)


def test_an_alias_keeps_the_session_hook_with_the_tool() -> None:
    tool = CustomTool(
        name="find", execute=lambda *a: None, on_session=lambda *a: None, former_names=["old"]
    )

    (alias,) = tool.deprecated_aliases()

    assert alias.name == "old"
    assert alias.on_session is None
    assert alias.former_names == ()
    assert alias.execute is tool.execute
