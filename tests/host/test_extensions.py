"""ACP-style extensibility (checklist item 35: rules E1-E23 of the reference digest)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from customtools.host import (
    RESERVED_META_KEYS,
    CustomizationError,
    ExtensionRegistry,
    JsonRpcError,
    McpServerState,
    PluginCustomization,
    ToolDefinition,
    UnknownCustomization,
    advertise_capability,
    advertised_capability,
    check_variant,
    child_from_dict,
    classify_variant,
    customization_from_dict,
    merge_meta,
    meta_from,
    supports_capability,
    trace_context,
    with_trace_context,
)

TRACEPARENT = "00-80e1afed08e019fc1110464cfa66635c-7a085853722dc6d2-01"


def test_e1_meta_round_trips_on_nested_types() -> None:
    tool = ToolDefinition.from_dict({"name": "t", "_meta": {"acme.dev/x": [1]}})
    assert tool.to_dict()["_meta"] == {"acme.dev/x": [1]}
    plugin = PluginCustomization(id="p", uri="u", name="p", meta={"k": {"deep": True}})
    assert customization_from_dict(plugin.to_dict()) == plugin


def test_e2_meta_values_are_opaque() -> None:
    odd = {"k": [None, {"x": float("1.5")}], "": 0}
    assert meta_from(odd) == odd


def test_e3_trace_context_keys_are_reserved_and_set_only_by_the_helper() -> None:
    assert {"traceparent", "tracestate", "baggage"} == RESERVED_META_KEYS
    with pytest.raises(ValueError, match="reserved for W3C trace context"):
        merge_meta({}, {"traceparent": "x"})
    meta = with_trace_context({"requestId": "r1"}, traceparent=TRACEPARENT, baggage="a=1")
    assert trace_context(meta) == {"traceparent": TRACEPARENT, "baggage": "a=1"}
    assert meta["requestId"] == "r1"
    with pytest.raises(ValueError, match="not W3C trace context"):
        with_trace_context(None, traceparent="nope")


def test_e4_no_custom_root_fields_are_emitted() -> None:
    plugin = PluginCustomization(id="p", uri="u", name="p", meta={"acme.dev/extra": 1})
    assert set(plugin.to_dict()) == {"type", "id", "uri", "name", "enabled", "_meta"}
    assert merge_meta(None, {"acme.dev/x": 1}) == {"acme.dev/x": 1}


@pytest.mark.parametrize("bad", ["text", 3, [1], True])
def test_e5_non_object_meta_counts_as_absent(bad: Any) -> None:
    assert meta_from(bad) is None
    tool = ToolDefinition.from_dict({"name": "t", "_meta": bad})
    assert tool.meta is None


def test_e6_meta_patch_semantics_in_tool_calls_are_covered_by_fixture_220() -> None:
    # omitted keeps, a value replaces (see test_chat item 21 and fixture 220)
    assert merge_meta({"a": 1}, {"b": 2}) == {"a": 1, "b": 2}


async def _handle(registry: ExtensionRegistry, message: dict[str, Any]) -> Any:
    return await registry.handle(message)


@pytest.mark.anyio
async def test_e7_e8_extension_request_is_answered_with_the_same_id() -> None:
    registry = ExtensionRegistry()

    @registry.request("_acme.dev/echo")
    async def echo(params: dict[str, Any]) -> dict[str, Any]:
        return {"echo": params["text"]}

    response = await registry.handle(
        {"jsonrpc": "2.0", "id": 42, "method": "_acme.dev/echo", "params": {"text": "hi"}}
    )
    assert response == {"jsonrpc": "2.0", "id": 42, "result": {"echo": "hi"}}


def test_e7_names_without_underscore_cannot_be_registered() -> None:
    with pytest.raises(ValueError, match="register it as '_acme'"):
        ExtensionRegistry().add_request("acme", lambda p: None)


@pytest.mark.anyio
async def test_e9_unknown_extension_request_is_method_not_found() -> None:
    response = await ExtensionRegistry().handle({"jsonrpc": "2.0", "id": "a", "method": "_x"})
    assert response == {
        "jsonrpc": "2.0",
        "id": "a",
        "error": {"code": -32601, "message": "Method not found"},
    }


@pytest.mark.anyio
async def test_e10_unknown_notification_is_ignored_and_known_one_never_answered() -> None:
    registry = ExtensionRegistry()
    seen: list[Any] = []
    registry.add_notification("_acme.dev/opened", seen.append)
    assert await registry.handle({"jsonrpc": "2.0", "method": "_unknown"}) is None
    assert (
        await registry.handle(
            {"jsonrpc": "2.0", "method": "_acme.dev/opened", "params": {"path": "a"}}
        )
        is None
    )
    assert seen == [{"path": "a"}]


def test_e11_registered_methods_can_be_advertised() -> None:
    registry = ExtensionRegistry()
    registry.add_request("_acme.dev/a", lambda p: None)
    caps = advertise_capability({}, "acme.dev", dict.fromkeys(registry.methods(), True))
    assert supports_capability(caps, "acme.dev", "_acme.dev/a")


@pytest.mark.anyio
async def test_e12_handler_sees_full_wire_name_and_errors_keep_their_code() -> None:
    registry = ExtensionRegistry()

    def fail(params: dict[str, Any]) -> None:
        raise JsonRpcError(-32042, "custom failure", data={"why": 1})

    registry.add_request("_acme.dev/fail", fail)
    response = await registry.handle({"jsonrpc": "2.0", "id": 1, "method": "_acme.dev/fail"})
    assert response["error"] == {"code": -32042, "message": "custom failure", "data": {"why": 1}}
    bad_params = await registry.handle(
        {"jsonrpc": "2.0", "id": 2, "method": "_acme.dev/fail", "params": [1]}
    )
    assert bad_params["error"]["code"] == -32602


@pytest.mark.anyio
async def test_e13_unknown_non_extension_method_is_method_not_found() -> None:
    response = await ExtensionRegistry().handle({"jsonrpc": "2.0", "id": 1, "method": "foo/bar"})
    assert response["error"]["code"] == -32601


@pytest.mark.anyio
async def test_e14_handler_crash_is_internal_error() -> None:
    registry = ExtensionRegistry()
    registry.add_request("_boom", lambda p: 1 / 0)
    response = await registry.handle({"jsonrpc": "2.0", "id": 1, "method": "_boom"})
    assert response["error"]["code"] == -32603
    assert response["error"]["message"] == (
        "extension _boom failed: ZeroDivisionError: division by zero"
    )


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


@pytest.mark.anyio
async def test_handler_exception_whose_str_raises_still_gets_an_answer() -> None:
    registry = ExtensionRegistry()

    def handler(params: dict[str, Any]) -> None:
        raise Unprintable

    registry.add_request("_odd", handler)
    response = await registry.handle({"jsonrpc": "2.0", "id": 7, "method": "_odd"})
    assert response["error"] == {
        "code": -32603,
        "message": "extension _odd failed: Unprintable (its message could not be read: "
        "__str__ failed)",
    }


def test_e15_e16_underscore_values_are_extensions_others_are_future() -> None:
    known = ["plugin", "directory"]
    assert classify_variant("plugin", known) == "known"
    assert classify_variant("_acme_widget", known) == "extension"
    assert classify_variant("workflow", known) == "future"


def test_e17_closed_unions_reject_future_values_open_ones_keep_them() -> None:
    assert check_variant("workflow", ["a"], field="type") == "workflow"
    assert check_variant("_x", ["a"], field="kind", closed=True) == "_x"
    with pytest.raises(CustomizationError, match="this union is closed"):
        check_variant("workflow", ["a"], field="kind", closed=True)
    with pytest.raises(CustomizationError):
        McpServerState.from_dict({"kind": "sleeping"})


def test_e18_unknown_union_payload_round_trips_byte_for_byte() -> None:
    raw = {"type": "_chart", "title": "Tests", "data": [1, 2, 3], "nested": {"k": None}}
    decoded = child_from_dict(raw)
    assert isinstance(decoded, UnknownCustomization)
    assert json.dumps(decoded.to_dict()) == json.dumps(raw)


def test_e19_known_discriminator_with_malformed_payload_raises() -> None:
    with pytest.raises(CustomizationError):
        customization_from_dict({"type": "directory"})
    with pytest.raises(CustomizationError):
        child_from_dict({"type": "mcpServer", "id": "m", "uri": "u", "name": "m", "enabled": True})


def test_e20_unknown_action_kinds_are_tolerated() -> None:
    from customtools.host import reduce_session

    state = {"activeClients": []}
    assert reduce_session(state, {"type": "session/_acme.dev/custom"}) is state


def test_e21_custom_capabilities_live_in_meta_under_a_domain_key() -> None:
    caps = advertise_capability({"load": {}}, "acme.dev", {"workspace": True})
    caps = advertise_capability(caps, "acme.dev", {"files": {}})
    assert caps == {"load": {}, "_meta": {"acme.dev": {"workspace": True, "files": {}}}}
    assert advertised_capability(caps, "acme.dev") == {"workspace": True, "files": {}}


def test_e22_omitted_capability_is_unsupported() -> None:
    assert not supports_capability({}, "acme.dev", "workspace")
    assert not supports_capability({"_meta": "junk"}, "acme.dev", "workspace")
    assert not supports_capability(None, "acme.dev", "workspace")


def test_e23_capability_markers_are_checked_by_presence() -> None:
    caps = {"_meta": {"acme.dev": {"objectMarker": {}, "off": False, "null": None}}}
    assert supports_capability(caps, "acme.dev", "objectMarker")
    assert not supports_capability(caps, "acme.dev", "off")
    assert not supports_capability(caps, "acme.dev", "null")
