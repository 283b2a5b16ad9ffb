"""The host toolkit owns its branch of the exception tree (customtools.host._errors)."""

from __future__ import annotations

import customtools._errors as core_errors
from customtools import CustomToolsError
from customtools.host import ActionRejectedError, CustomizationError, JsonRpcError


def test_host_errors_live_in_the_host_package_and_derive_from_the_base() -> None:
    for cls in (ActionRejectedError, CustomizationError, JsonRpcError):
        assert cls.__module__ == "customtools.host"
        assert issubclass(cls, CustomToolsError)
        assert cls.__name__ not in core_errors.__all__
    assert issubclass(CustomizationError, ValueError)


def test_rejection_echo_and_json_rpc_error_object() -> None:
    error = ActionRejectedError(
        "not yours", action={"type": "chat/toolCallComplete"}, client_id="web"
    )
    assert error.envelope(channel="chat:/1", server_seq=4, client_seq=2) == {
        "channel": "chat:/1",
        "action": {"type": "chat/toolCallComplete"},
        "serverSeq": 4,
        "origin": {"clientId": "web", "clientSeq": 2},
        "rejectionReason": "not yours",
    }
    assert JsonRpcError(-32601, "Method not found").to_dict() == {
        "code": -32601,
        "message": "Method not found",
    }
    assert JsonRpcError(1, "m", data={"k": None}).to_dict()["data"] == {"k": None}
