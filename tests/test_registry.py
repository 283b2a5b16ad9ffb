"""ToolRegistry: the one name -> tool map, with one kept adapter per tool."""

from __future__ import annotations

import pathlib

import pytest

from customtools import CustomTool, CustomToolAdapter, ToolRegistry, Type, load_custom_tools, tool
from customtools.loading import ToolConflict

pytestmark = pytest.mark.anyio


def make(name: str, text: str = "ok") -> CustomTool:
    return CustomTool(
        name=name,
        description=f"{name} tool",
        parameters=Type.Object({"n": Type.Integer()}),
        execute=lambda tool_call_id, params, on_update, ctx, signal: f"{text}:{params['n']}",
    )


def test_first_tool_keeps_the_name_and_the_second_is_reported() -> None:
    registry = ToolRegistry()
    assert registry.add(make("echo"), origin="a.py") is None
    conflict = registry.add(make("echo", "late"), origin="b.py")
    assert isinstance(conflict, ToolConflict)
    assert conflict.code == "name-conflict"
    assert conflict.origin == "b.py"
    assert conflict.taken_by == "a.py"
    assert "'echo' is already taken by the tool from a.py" in conflict.error
    assert conflict.error == (
        "tool name 'echo' is already taken by the tool from a.py; the tool from b.py was left"
        " out: rename one of them"
    )
    assert registry.conflicts == (conflict,)
    assert conflict.to_dict() == {
        "error": conflict.error,
        "code": "name-conflict",
        "toolName": "echo",
        "path": "b.py",
        "takenBy": "a.py",
    }
    assert len(registry) == 1


def test_reserved_names_are_never_taken() -> None:
    registry = ToolRegistry([make("read")], reserved_names=["read"])
    assert "read" not in registry
    assert "built-in tool name" in registry.conflicts[0].error


def test_functions_become_tools() -> None:
    def double(n: int) -> int:
        """Double a number."""
        return n * 2

    registry = ToolRegistry([double, make("echo")])
    assert registry.names == ("double", "echo")
    assert registry["double"].description == "Double a number."


def test_other_things_are_refused_with_their_type() -> None:
    with pytest.raises(TypeError, match="got int"):
        ToolRegistry([3])  # type: ignore[list-item]


def test_one_adapter_is_kept_per_tool_with_the_options() -> None:
    registry = ToolRegistry([make("echo")], timeout=5)
    adapter = registry.adapter("echo")
    assert isinstance(adapter, CustomToolAdapter)
    assert registry.adapter("echo") is adapter


def test_an_unknown_name_lists_close_matches() -> None:
    registry = ToolRegistry([make("echo")])
    assert registry.get("ecko") is None
    with pytest.raises(KeyError, match="did you mean 'echo'"):
        registry.adapter("ecko")


async def test_call_runs_the_tool_through_its_adapter() -> None:
    registry = ToolRegistry([make("echo")])
    assert (await registry.call("echo", "c1", {"n": "3"})).text == "ok:3"
    invalid = await registry.call("echo", "c2", {"n": "x"})
    assert invalid.is_error
    assert "/n" in invalid.text


async def test_a_load_result_keeps_paths_as_origins(tmp_path: pathlib.Path) -> None:
    (tmp_path / "one.py").write_text(
        "from customtools import tool\n\n@tool\ndef ping() -> str:\n    '''Ping.'''\n"
        "    return 'pong'\n\ndef factory(api):\n    return ping\n"
    )
    result = await load_custom_tools([str(tmp_path)], str(tmp_path), [])
    registry = ToolRegistry(result)
    assert registry.names == ("ping",)
    assert registry.lookup("ping").origin.endswith("one.py")  # type: ignore[union-attr]
    registry.extend([tool(lambda: "x", name="ping")])
    assert registry.conflicts[0].taken_by.endswith("one.py")  # type: ignore[union-attr]
    assert registry.remove("ping") is not None
    assert "ping" not in registry


def test_the_host_registry_keeps_server_tools_in_a_tool_registry() -> None:
    from customtools.host import SessionToolRegistry

    first, second = make("echo"), make("echo", "late")
    session = SessionToolRegistry(server_tools=[first, second])
    assert [route.tool for route in session.routes()] == [first]
    assert session.conflicts[0].tool_name == "echo"
    adapter = session.adapter("echo")
    assert adapter is not None
    assert adapter.tool is first
    assert session.adapter("echo") is adapter
    assert session.adapter("nope") is None
    shared = ToolRegistry([second])
    session.set_server_tools(shared)
    assert session.adapter("echo") is shared.adapter("echo")


def test_the_test_pack_runs_each_tool_through_one_kept_adapter() -> None:
    from customtools.testing import ToolPack

    pack = ToolPack([make("echo")])
    assert pack.adapter("echo") is pack.adapter("echo")
    with pytest.raises(ValueError, match="two tools are named 'echo'"):
        ToolPack([make("echo"), make("echo")])
    with pytest.raises(KeyError, match="no tool 'ecko' in the pack; did you mean 'echo'"):
        pack.adapter("ecko")


def test_a_name_differing_only_by_case_is_kept_and_recorded() -> None:
    registry = ToolRegistry([make("read")], reserved_names=["Bash"])
    assert registry.add(make("Read"), origin="b.py") is None
    assert registry.add(make("bash"), origin="c.py") is None
    assert registry.names == ("read", "Read", "bash")
    assert [(n.code, n.tool_name) for n in registry.similar_names] == [
        ("similar-name", "Read"),
        ("similar-name", "bash"),
    ]
    assert registry.similar_names[0].error == (
        "tool 'Read' from b.py differs from 'read' only by letter case; models may confuse them"
    )
    assert registry.conflicts == ()


def test_one_rule_for_the_loader_the_rulebook_and_the_mcp_bridge(tmp_path: pathlib.Path) -> None:
    from customtools._registry import NameRule
    from customtools._rules import ToolSite, check_names

    rule = NameRule(["bash"])
    assert rule.claim("echo", "a.py") is None
    taken = rule.claim("echo", "a.py")
    assert taken is not None
    assert taken.error == (
        "tool name 'echo' is already taken by another tool from a.py; the tool from a.py was"
        " left out: rename one of them"
    )
    builtin = rule.claim("bash")
    assert builtin is not None
    assert builtin.error == (
        "tool name 'bash' is a built-in tool name and cannot be taken; this tool was left out:"
        " rename the tool"
    )
    [(_, finding)] = check_names(
        [ToolSite(name="echo", path="a.py"), ToolSite(name="echo", path="b.py")]
    )
    assert finding.message == (
        "tool name 'echo' is already taken by the tool from a.py; the tool from b.py was left"
        " out: rename one of them"
    )


def test_removing_a_tool_frees_its_name() -> None:
    registry = ToolRegistry([make("echo")])
    registry.remove("echo")
    assert registry.add(make("Echo")) is None
    assert registry.similar_names == ()
    assert registry.add(make("echo", "again")) is None  # not a conflict with the removed one


# -- former names ---------------------------------------------------------------------------------


def renamed() -> CustomTool:
    return CustomTool(
        name="find",
        description="Find things.",
        parameters=Type.Object({"n": Type.Integer()}),
        execute=lambda tool_call_id, params, on_update, ctx, signal: f"found:{params['n']}",
        former_names=["search", "lookup"],
    )


async def test_a_former_name_stays_callable_as_a_deprecated_alias() -> None:
    registry = ToolRegistry([renamed()])

    assert registry.names == ("find", "search", "lookup")
    assert (await registry.call("search", "c1", {"n": 2})).text == "found:2"
    alias = registry["search"]
    assert alias.meta == {"customtools/deprecated": {"renamedTo": "find"}}
    assert alias.description == "Deprecated: renamed to 'find'; call that instead. Find things."
    assert registry.lookup("search").alias_of == "find"  # type: ignore[union-attr]
    assert registry.lookup("find").alias_of is None  # type: ignore[union-attr]


def test_an_alias_gives_way_to_a_tool_that_really_has_the_name() -> None:
    registry = ToolRegistry([renamed()])

    assert registry.add(make("search"), origin="other.py") is None

    assert registry["search"].description == "search tool"
    assert registry.conflicts[0].tool_name == "search"
    assert "former name of 'find'" in registry.conflicts[0].error


def test_an_alias_never_takes_a_name_already_registered() -> None:
    registry = ToolRegistry([make("search"), renamed()], reserved_names=["lookup"])

    assert registry["search"].description == "search tool"
    assert "lookup" not in registry
    assert {conflict.tool_name for conflict in registry.conflicts} == {"search", "lookup"}


def test_removing_a_tool_removes_its_aliases() -> None:
    registry = ToolRegistry([renamed()])

    registry.remove("find")

    assert registry.names == ()
