"""The MCP bridge, both directions (needs the ``mcp`` extra: ``pip install 'customtools[mcp]'``).

* **Serve** custom tools to MCP clients: :class:`ToolServer` (the tools on the SDK's low-level
  server, over stdio or streamable HTTP) and :func:`serve` (load as ``discover_and_load`` does,
  then serve; what ``customtools serve`` runs).
* **Mount** MCP servers as custom tools: :class:`McpServerConfig` and :func:`mount`.
* **Scale out**: replicas share state through Redis (:class:`RedisState`, the ``redis``
  extra; ``docs/deploy.md``), the execution policy's too (:class:`RedisPolicyBackend`).

Importing this package imports the MCP SDK (about half a second); nothing else in
``customtools`` does. The Redis client is imported only when :class:`RedisState` or
:class:`RedisPolicyBackend` is first used. The guide is ``docs/mcp.md``.
"""

from __future__ import annotations

import importlib
import typing as _typing

try:
    import mcp as _sdk  # noqa: F401 - fail early, with one line naming the extra
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "customtools.mcp needs the MCP SDK, which is not installed: pip install 'customtools[mcp]'"
    ) from exc

from customtools._loading._mcpjson import (
    DEFAULT_CALL_TIMEOUT,
    SERVER_NAME_PATTERN,
    McpServerConfig,
    mounted_tool_name,
    parse_mcp_json,
    read_mcp_json,
)
from customtools._public import rehome as _rehome
from customtools.mcp import _mount, _server
from customtools.mcp._http import MIN_TOKEN_LENGTH, HttpSecurity, is_loopback, read_token
from customtools.mcp._mount import *  # noqa: F403 - its __all__ is public
from customtools.mcp._mount import ORIGIN_META_KEY
from customtools.mcp._results import DETAILS_META_KEY
from customtools.mcp._serve import serve, serve_http
from customtools.mcp._server import *  # noqa: F403 - its __all__ is public
from customtools.mcp._shared import SharedStateError, VisibilityStore
from customtools.mcp._transports import MAX_STDERR_LINE

if _typing.TYPE_CHECKING:
    from customtools.mcp._redis import RedisPolicyBackend, RedisState

__all__ = [
    *_mount.__all__,
    *_server.__all__,
    "DEFAULT_CALL_TIMEOUT",
    "DETAILS_META_KEY",
    "MAX_STDERR_LINE",
    "MIN_TOKEN_LENGTH",
    "ORIGIN_META_KEY",
    "SERVER_NAME_PATTERN",
    "HttpSecurity",
    "McpServerConfig",
    "RedisPolicyBackend",
    "RedisState",
    "SharedStateError",
    "VisibilityStore",
    "is_loopback",
    "mounted_tool_name",
    "parse_mcp_json",
    "read_mcp_json",
    "read_token",
    "serve",
    "serve_http",
]

_rehome(globals(), __name__, __all__)  # the public home of each class and function


def __getattr__(name: str) -> _typing.Any:
    # These import the Redis client: only on that path (serve --redis).
    if name not in ("RedisPolicyBackend", "RedisState"):
        raise AttributeError(f"module 'customtools.mcp' has no attribute {name!r}")
    value = getattr(importlib.import_module("customtools.mcp._redis"), name)
    _rehome({name: value}, __name__, [name])
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
