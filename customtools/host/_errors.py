"""The host toolkit's branch of the exception tree, and the protocol logic tied to it::

    CustomToolsError                       (customtools)
    ├── CustomizationError (ValueError)    a customization or tool payload is malformed
    ├── ActionRejectedError                a client's action must be refused (AHP echo)
    └── JsonRpcError                       an extension request fails with a JSON-RPC code

:meth:`ActionRejectedError.envelope` builds the protocol's rejection echo and
:meth:`JsonRpcError.to_dict` the JSON-RPC ``error`` object; the standard codes the toolkit
answers with are :data:`METHOD_NOT_FOUND`, :data:`INVALID_PARAMS` and :data:`INTERNAL_ERROR`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from customtools._errors import CustomToolsError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "ActionRejectedError",
    "CustomizationError",
    "JsonRpcError",
]

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class CustomizationError(CustomToolsError, ValueError):
    """A wire payload of the customization or tool model is malformed.

    Raised by ``from_dict`` when a *known* discriminator carries a payload that does not fit its
    shape (a ``directory`` without ``contents``, a ``degraded`` load state without ``message``).
    Unknown discriminators are never an error in open unions; they decode to opaque values.

    Attributes:
        where: the JSON path of the offending value (``customizations[1].load``).
    """

    def __init__(self, message: str, *, where: str = "") -> None:
        super().__init__(message)
        self.where = where


class ActionRejectedError(CustomToolsError):
    """The host refuses an action a client dispatched.

    The protocol's answer is to echo the action back in an ``ActionEnvelope`` with
    ``rejectionReason`` set; :meth:`envelope` builds that echo.

    Attributes:
        reason: the ``rejectionReason`` text (also the exception message).
        action: the rejected action, as dispatched.
        client_id: the client that dispatched it.
    """

    def __init__(self, reason: str, *, action: Mapping[str, Any], client_id: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.action = dict(action)
        self.client_id = client_id

    def envelope(self, *, channel: str, server_seq: int, client_seq: int) -> dict[str, Any]:
        """Return the rejection echo: ``{channel, action, serverSeq, origin, rejectionReason}``."""
        return {
            "channel": channel,
            "action": dict(self.action),
            "serverSeq": server_seq,
            "origin": {"clientId": self.client_id, "clientSeq": client_seq},
            "rejectionReason": self.reason,
        }


class JsonRpcError(CustomToolsError):
    """A JSON-RPC error: raise it from an extension handler to answer with a specific code.

    Attributes:
        code: the JSON-RPC error code (any integer survives a round trip).
        data: optional ``data`` member of the error object.
    """

    def __init__(self, code: int, message: str, *, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-RPC ``error`` object."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out
