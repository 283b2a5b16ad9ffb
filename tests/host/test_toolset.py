"""ActiveClientToolSet (checklist items 31-34), the session tool registry, and properties."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from customtools import CustomTool, Type
from customtools.export import to_mcp
from customtools.host import (
    ActiveClientToolSet,
    SessionToolRegistry,
    ToolDefinition,
    prefix_tools,
    structural_tools_equal,
)


def tool(
    name: str, description: str | None = None, schema: Any = None, **kw: Any
) -> ToolDefinition:
    return ToolDefinition(name=name, description=description, input_schema=schema, **kw)


def names(tools: Any) -> list[str]:
    return [t.name for t in tools]


def test_item31_set_keeps_position_remove_then_set_moves_to_end() -> None:
    s = ActiveClientToolSet()
    s.set("a", [tool("x")])
    s.set("b", [tool("y")])
    s.set("a", [tool("z")])
    assert s.client_ids() == ("a", "b")
    assert s.remove("a") is True
    assert s.remove("a") is False
    s.set("a", [tool("z")])
    assert s.client_ids() == ("b", "a")
    assert s.get("nobody") == ()


def test_item32_merged_is_client_order_then_tool_order_first_wins() -> None:
    s = ActiveClientToolSet()
    s.set("c1", [tool("shared", "from c1"), tool("a"), tool("a", "dup")])
    s.set("c2", [tool("shared", "from c2"), tool("b")])
    merged = s.merged()
    assert names(merged) == ["shared", "a", "b"]
    assert merged[0].description == "from c1"
    assert merged[1].description is None


def test_item33_owner_of_preference_and_fallback() -> None:
    s = ActiveClientToolSet()
    s.set("c1", [tool("shared"), tool("a")])
    s.set("c2", [tool("shared"), tool("b")])
    assert s.owner_of("shared") == "c1"
    assert s.owner_of("shared", "c2") == "c2"
    assert s.owner_of("a", "c2") == "c1"  # preferred client lacks the tool
    assert s.owner_of("shared", "unknown") == "c1"
    assert s.owner_of("shared", "") == "c1"
    assert s.owner_of("nope") is None


def test_item34_structural_equality_rules() -> None:
    schema = {"type": "object", "properties": {"p": {"type": "string"}}}
    assert structural_tools_equal(None, [])
    assert structural_tools_equal([tool("a"), tool("b")], [tool("b"), tool("a")])
    assert structural_tools_equal(
        [tool("a", "d", schema, title="T1", meta={"x": 1})],
        [tool("a", "d", schema, title="T2", annotations={"r": 1})],
    )
    assert not structural_tools_equal([tool("a", "d")], [tool("b", "d")])
    assert not structural_tools_equal([tool("a", "d")], [tool("a", "e")])
    assert not structural_tools_equal([tool("a", schema=schema)], [tool("a", schema={})])
    assert not structural_tools_equal([tool("a", schema={"a": None})], [tool("a", schema={})])
    assert not structural_tools_equal([tool("a")], [tool("a", schema={})])
    assert not structural_tools_equal([tool("a", schema={"x": True})], [tool("a", schema={"x": 1})])


def test_structural_equals_against_merged() -> None:
    s = ActiveClientToolSet()
    s.set("c1", [])
    assert s.structural_equals(None)
    s.set("c1", [tool("a", "d")])
    assert not s.structural_equals([])
    assert s.structural_equals([tool("a", "d", title="new title")])


def host_tool(name: str, description: str) -> CustomTool:
    return CustomTool(name=name, description=description, label="Host tool", execute=lambda *a: "")


def test_registry_server_tools_shadow_clients_without_prefix() -> None:
    clients = ActiveClientToolSet()
    clients.set("ide", [tool("search"), tool("open")])
    registry = SessionToolRegistry(
        server_tools=[host_tool("search", "server search")], client_tools=clients
    )
    assert names(registry.definitions()) == ["search", "open"]
    assert registry.shadowed() == (("ide", "search"),)
    route = registry.resolve("search")
    assert route is not None
    assert (route.origin, route.client_id) == ("server", None)
    assert registry.definitions()[0].input_schema == CustomTool(name="x", execute=print).parameters


def test_registry_prefix_per_client_keeps_both_clients_tools() -> None:
    clients = ActiveClientToolSet()
    clients.set("ide", [tool("run")])
    clients.set("web", [tool("run")])
    registry = SessionToolRegistry(client_tools=clients, client_prefix=lambda c: f"{c}__")
    assert names(registry.definitions()) == ["ide__run", "web__run"]
    route = registry.resolve("web__run")
    assert route is not None
    assert (route.tool_name, route.client_id) == ("run", "web")


def test_registry_shared_prefix_resolves_with_turn_preference() -> None:
    clients = ActiveClientToolSet()
    clients.set("ide", [tool("run", "ide run")])
    clients.set("web", [tool("run", "web run")])
    registry = SessionToolRegistry(client_tools=clients, client_prefix="client_")
    assert names(registry.definitions()) == ["client_run"]
    preferred = registry.resolve("client_run", preferred_client="web")
    assert preferred is not None
    assert (preferred.client_id, preferred.tool.description) == ("web", "web run")
    assert registry.resolve("run") is None
    assert names(prefix_tools([tool("a")], "p_")) == ["p_a"]


tool_lists = st.lists(
    st.builds(tool, st.sampled_from("abcde"), st.sampled_from([None, "d"])), max_size=5
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["c1", "c2", "c3"]), tool_lists), max_size=6))
def test_merged_is_deterministic_and_unique(ops: list[tuple[str, list[ToolDefinition]]]) -> None:
    first, second = ActiveClientToolSet(), ActiveClientToolSet()
    for cid, tools in ops:
        first.set(cid, tools)
        second.set(cid, list(tools))
    merged = first.merged()
    assert merged == second.merged() == first.merged()
    assert len(set(names(merged))) == len(merged)
    for t in merged:
        owner = first.owner_of(t.name)
        assert owner is not None
        assert t in first.get(owner)
    assert first.structural_equals(list(reversed(merged)))


def test_from_tool_keeps_what_the_mcp_export_keeps() -> None:
    custom = CustomTool(
        name="grep",
        label="Search files",
        description="Search text",
        parameters=Type.Object({"pattern": Type.String()}),
        execute=lambda *a: "",
        annotations={"readOnlyHint": True},
        meta={"example.com/owner": "search-team"},
    )
    definition = ToolDefinition.from_tool(custom)
    assert definition.title == "Search files"
    assert definition.annotations == {"readOnlyHint": True}
    assert definition.meta == {"example.com/owner": "search-team"}
    assert definition.to_dict() == to_mcp(custom)


def test_registry_advertises_server_tools_with_their_annotations() -> None:
    custom = CustomTool(name="rm", execute=lambda *a: "", annotations={"destructiveHint": True})
    ready = ToolDefinition(name="ping", description="host-run tool")
    registry = SessionToolRegistry(server_tools=[custom, ready])
    first, second = registry.definitions()
    assert first.annotations == {"destructiveHint": True}
    assert second is ready


def test_prefixed_client_tool_keeps_explicit_nulls() -> None:
    clients = ActiveClientToolSet()
    clients.set("ide", [ToolDefinition.from_dict({"name": "open", "description": None})])
    registry = SessionToolRegistry(client_tools=clients, client_prefix="c_")
    assert registry.definitions()[0].to_dict() == {"name": "c_open", "description": None}


def test_null_description_or_schema_is_not_an_absent_one() -> None:
    absent = ToolDefinition.from_dict({"name": "a"})
    null_description = ToolDefinition.from_dict({"name": "a", "description": None})
    null_schema = ToolDefinition.from_dict({"name": "a", "inputSchema": None})
    assert structural_tools_equal([absent], [ToolDefinition.from_dict({"name": "a"})])
    assert not structural_tools_equal([absent], [null_description])
    assert not structural_tools_equal([null_description], [absent])
    assert not structural_tools_equal([absent], [null_schema])
    assert structural_tools_equal([null_schema], [ToolDefinition.from_dict(null_schema.to_dict())])
    assert not structural_tools_equal([absent], [ToolDefinition(name="a", input_schema={})])
