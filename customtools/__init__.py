"""customtools: model-callable custom tools for Python agent hosts.

Tool authors write modules with a ``factory(api)`` returning :class:`CustomTool` objects whose
``parameters`` are built with :class:`Type`. Hosts discover and load them, then run every tool
through a :class:`CustomToolAdapter`, which validates arguments, streams partial results,
cancels cleanly and turns failures into results a model can read.

The root holds what tool authors and ordinary hosts use; plumbing lives in public
namespaces that follow the architecture's layers:

- ``customtools.validation``: schema checks, compiled validators, limits, engines;
- ``customtools.rendering``: render hooks with fallbacks, themes;
- ``customtools.export``: tool definitions in provider formats (OpenAI, Anthropic, MCP);
- ``customtools.loading``: scan/load in two steps, providers, load records;
- ``customtools.host``, ``customtools.actions``: the host toolkit and plugin actions;
- ``customtools.testing``, ``customtools.cli``: the pytest plugin's helpers and the command.

Everything in a ``_``-prefixed module is private. Every module, and every dependency (the
validators, YAML), is imported on first use, so ``import customtools`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from customtools._public import rehome as _rehome

if TYPE_CHECKING:
    from customtools._abort import AbortController, AbortListener, AbortSignal
    from customtools._adapter import (
        COERCIONS_META_KEY,
        VIOLATIONS_META_KEY,
        CustomToolAdapter,
        UpdateCallback,
    )
    from customtools._approval import ApprovalRequest, Approver
    from customtools._content import (
        AudioContent,
        ContentBlock,
        EmbeddedResource,
        ExtensionContent,
        ImageContent,
        ResourceLink,
        TextContent,
        ToolResult,
        content_from_dict,
        normalize_result,
    )
    from customtools._context import DEFAULT_CONTEXT, ToolContext
    from customtools._errors import (
        ContentError,
        CustomToolsError,
        LoadFailedError,
        SchemaError,
        ToolAbortedError,
        ToolArgumentsError,
        ToolDefinitionError,
        ToolTimeoutError,
    )
    from customtools._exec import ExecResult, exec_command
    from customtools._function import tool
    from customtools._loading._api import ToolAPI
    from customtools._loading._loader import LoadResult, discover_and_load, load_custom_tools
    from customtools._loading._records import LoadedTool, LoadError
    from customtools._registry import ToolRegistry
    from customtools._session import (
        HookFailure,
        SessionEvent,
        SessionReason,
        dispatch_session_event,
    )
    from customtools._tool import TOOL_NAME_PATTERN, CustomTool, check_tool_name
    from customtools._typebox import Type

_HOMES: dict[str, tuple[str, ...]] = {
    "_abort": ("AbortController", "AbortListener", "AbortSignal"),
    "_adapter": (
        "COERCIONS_META_KEY",
        "VIOLATIONS_META_KEY",
        "CustomToolAdapter",
        "UpdateCallback",
    ),
    "_approval": ("ApprovalRequest", "Approver"),
    "_content": (
        "AudioContent",
        "ContentBlock",
        "EmbeddedResource",
        "ExtensionContent",
        "ImageContent",
        "ResourceLink",
        "TextContent",
        "ToolResult",
        "content_from_dict",
        "normalize_result",
    ),
    "_context": ("DEFAULT_CONTEXT", "ToolContext"),
    "_errors": (
        "ContentError",
        "CustomToolsError",
        "LoadFailedError",
        "SchemaError",
        "ToolAbortedError",
        "ToolArgumentsError",
        "ToolDefinitionError",
        "ToolTimeoutError",
    ),
    "_exec": ("ExecResult", "exec_command"),
    "_function": ("tool",),
    "_loading._api": ("ToolAPI",),
    "_loading._loader": ("LoadResult", "discover_and_load", "load_custom_tools"),
    "_loading._records": ("LoadError", "LoadedTool"),
    "_registry": ("ToolRegistry",),
    "_session": ("HookFailure", "SessionEvent", "SessionReason", "dispatch_session_event"),
    "_tool": ("TOOL_NAME_PATTERN", "CustomTool", "check_tool_name"),
    "_typebox": ("Type",),
}
"""Where each public name is defined. Each module loads when one of its names is first used,
so ``import customtools`` imports none of them (a test pins what it does import)."""

_LAZY = {name: f"customtools.{module}" for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'customtools' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    _rehome({name: value}, __name__, [name])
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0.dev0"

__all__ = [
    "COERCIONS_META_KEY",
    "DEFAULT_CONTEXT",
    "TOOL_NAME_PATTERN",
    "VIOLATIONS_META_KEY",
    "AbortController",
    "AbortListener",
    "AbortSignal",
    "ApprovalRequest",
    "Approver",
    "AudioContent",
    "ContentBlock",
    "ContentError",
    "CustomTool",
    "CustomToolAdapter",
    "CustomToolsError",
    "EmbeddedResource",
    "ExecResult",
    "ExtensionContent",
    "HookFailure",
    "ImageContent",
    "LoadError",
    "LoadFailedError",
    "LoadResult",
    "LoadedTool",
    "ResourceLink",
    "SchemaError",
    "SessionEvent",
    "SessionReason",
    "TextContent",
    "ToolAPI",
    "ToolAbortedError",
    "ToolArgumentsError",
    "ToolContext",
    "ToolDefinitionError",
    "ToolRegistry",
    "ToolResult",
    "ToolTimeoutError",
    "Type",
    "UpdateCallback",
    "__version__",
    "check_tool_name",
    "content_from_dict",
    "discover_and_load",
    "dispatch_session_event",
    "exec_command",
    "load_custom_tools",
    "normalize_result",
    "tool",
]
