"""Exceptions of the host toolkit and JSON-RPC error codes.

The classes live in :mod:`customtools._errors` with the rest of the tree; they are re-exported
here for the host package's modules.
"""

from __future__ import annotations

from customtools._errors import ActionRejectedError, CustomizationError, JsonRpcError

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
