"""customtools: model-callable custom tools for Python agent hosts.

Tool authors write modules with a ``factory(api)`` returning :class:`CustomTool` objects whose
``parameters`` are built with :class:`Type`. Hosts discover and load them, then run every tool
through a :class:`CustomToolAdapter`, which validates arguments, streams partial results,
cancels cleanly and turns failures into results a model can read.

The public names are listed in ``__all__``; everything in a ``_``-prefixed module is private.
Heavy dependencies (the validators, YAML) are imported on first use, so ``import customtools``
stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from customtools._abort import AbortController, AbortListener, AbortSignal
from customtools._adapter import (
    COERCIONS_META_KEY,
    VIOLATIONS_META_KEY,
    CustomToolAdapter,
    UpdateCallback,
)
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
    ActionRejectedError,
    ContentError,
    CustomizationError,
    CustomToolsError,
    JsonRpcError,
    LoadFailedError,
    SchemaError,
    ToolAbortedError,
    ToolArgumentsError,
    ToolDefinitionError,
    ToolTimeoutError,
)
from customtools._tool import TOOL_NAME_PATTERN, CustomTool, check_tool_name
from customtools._typebox import Type

if TYPE_CHECKING:
    from customtools._exec import ExecResult, exec_command
    from customtools._export import (
        CompatibilityIssue,
        anthropic_issues,
        openai_issues,
        openai_strict_issues,
        to_anthropic,
        to_json_schema,
        to_mcp,
        to_openai,
    )
    from customtools._loading._api import (
        NO_OP_UI,
        NoOpUIContext,
        PendingAction,
        PendingActionStore,
        ToolAPI,
        UIContext,
    )
    from customtools._loading._entrypoints import ENTRY_POINT_GROUP, EntryPointsProvider
    from customtools._loading._loader import (
        DEFAULT_LOAD_TIMEOUT,
        LoadResult,
        discover_and_load,
        load_custom_tools,
        load_scan,
        scan,
    )
    from customtools._loading._plugins import MANIFEST_LOCATIONS, PluginRootsProvider
    from customtools._loading._providers import (
        ClaudePluginsProvider,
        ConfiguredPathsProvider,
        DirectoryProvider,
        ProviderItem,
        ScanContext,
        ToolLocation,
        ToolProvider,
        claude_provider,
        codex_provider,
        default_providers,
        native_provider,
    )
    from customtools._loading._records import (
        Candidate,
        Diagnostic,
        LoadedTool,
        LoadError,
        MetadataFile,
        ScanResult,
        ToolSource,
    )
    from customtools._loading._scan import BUILTIN_PROVIDER_IDS, explicit_candidates, scan_sources
    from customtools._render import (
        PLAIN_THEME,
        RenderOptions,
        Theme,
        render_call,
        render_result,
    )
    from customtools._session import (
        HookFailure,
        SessionEvent,
        SessionReason,
        dispatch_session_event,
    )
    from customtools._validation import (
        Coercion,
        CompiledValidator,
        ReferenceEngine,
        RustEngine,
        ValidationLimits,
        ValidatorEngine,
        Violation,
        check_schema,
        compile_validator,
        parse_arguments,
    )

_LAZY: dict[str, str] = {
    "BUILTIN_PROVIDER_IDS": "customtools._loading._scan",
    "Candidate": "customtools._loading._records",
    "ClaudePluginsProvider": "customtools._loading._providers",
    "Coercion": "customtools._validation",
    "CompatibilityIssue": "customtools._export",
    "CompiledValidator": "customtools._validation",
    "ConfiguredPathsProvider": "customtools._loading._providers",
    "DEFAULT_LOAD_TIMEOUT": "customtools._loading._loader",
    "Diagnostic": "customtools._loading._records",
    "DirectoryProvider": "customtools._loading._providers",
    "ENTRY_POINT_GROUP": "customtools._loading._entrypoints",
    "EntryPointsProvider": "customtools._loading._entrypoints",
    "ExecResult": "customtools._exec",
    "HookFailure": "customtools._session",
    "LoadError": "customtools._loading._records",
    "LoadResult": "customtools._loading._loader",
    "LoadedTool": "customtools._loading._records",
    "MANIFEST_LOCATIONS": "customtools._loading._plugins",
    "MetadataFile": "customtools._loading._records",
    "NO_OP_UI": "customtools._loading._api",
    "NoOpUIContext": "customtools._loading._api",
    "PLAIN_THEME": "customtools._render",
    "PendingAction": "customtools._loading._api",
    "PendingActionStore": "customtools._loading._api",
    "PluginRootsProvider": "customtools._loading._plugins",
    "ProviderItem": "customtools._loading._providers",
    "ReferenceEngine": "customtools._validation",
    "RenderOptions": "customtools._render",
    "RustEngine": "customtools._validation",
    "ScanContext": "customtools._loading._providers",
    "ScanResult": "customtools._loading._records",
    "SessionEvent": "customtools._session",
    "SessionReason": "customtools._session",
    "Theme": "customtools._render",
    "ToolAPI": "customtools._loading._api",
    "ToolLocation": "customtools._loading._providers",
    "ToolProvider": "customtools._loading._providers",
    "ToolSource": "customtools._loading._records",
    "UIContext": "customtools._loading._api",
    "ValidationLimits": "customtools._validation",
    "ValidatorEngine": "customtools._validation",
    "Violation": "customtools._validation",
    "anthropic_issues": "customtools._export",
    "check_schema": "customtools._validation",
    "claude_provider": "customtools._loading._providers",
    "codex_provider": "customtools._loading._providers",
    "compile_validator": "customtools._validation",
    "default_providers": "customtools._loading._providers",
    "discover_and_load": "customtools._loading._loader",
    "dispatch_session_event": "customtools._session",
    "exec_command": "customtools._exec",
    "explicit_candidates": "customtools._loading._scan",
    "load_custom_tools": "customtools._loading._loader",
    "load_scan": "customtools._loading._loader",
    "native_provider": "customtools._loading._providers",
    "openai_issues": "customtools._export",
    "openai_strict_issues": "customtools._export",
    "parse_arguments": "customtools._validation",
    "render_call": "customtools._render",
    "render_result": "customtools._render",
    "scan": "customtools._loading._loader",
    "scan_sources": "customtools._loading._scan",
    "to_anthropic": "customtools._export",
    "to_json_schema": "customtools._export",
    "to_mcp": "customtools._export",
    "to_openai": "customtools._export",
}
"""Public names whose modules load on first use (the loader, exec, validation, ...)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'customtools' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0.dev0"

__all__ = [
    "BUILTIN_PROVIDER_IDS",
    "COERCIONS_META_KEY",
    "DEFAULT_CONTEXT",
    "DEFAULT_LOAD_TIMEOUT",
    "ENTRY_POINT_GROUP",
    "MANIFEST_LOCATIONS",
    "NO_OP_UI",
    "PLAIN_THEME",
    "TOOL_NAME_PATTERN",
    "VIOLATIONS_META_KEY",
    "AbortController",
    "AbortListener",
    "AbortSignal",
    "ActionRejectedError",
    "AudioContent",
    "Candidate",
    "ClaudePluginsProvider",
    "Coercion",
    "CompatibilityIssue",
    "CompiledValidator",
    "ConfiguredPathsProvider",
    "ContentBlock",
    "ContentError",
    "CustomTool",
    "CustomToolAdapter",
    "CustomToolsError",
    "CustomizationError",
    "Diagnostic",
    "DirectoryProvider",
    "EmbeddedResource",
    "EntryPointsProvider",
    "ExecResult",
    "ExtensionContent",
    "HookFailure",
    "ImageContent",
    "JsonRpcError",
    "LoadError",
    "LoadFailedError",
    "LoadResult",
    "LoadedTool",
    "MetadataFile",
    "NoOpUIContext",
    "PendingAction",
    "PendingActionStore",
    "PluginRootsProvider",
    "ProviderItem",
    "ReferenceEngine",
    "RenderOptions",
    "ResourceLink",
    "RustEngine",
    "ScanContext",
    "ScanResult",
    "SchemaError",
    "SessionEvent",
    "SessionReason",
    "TextContent",
    "Theme",
    "ToolAPI",
    "ToolAbortedError",
    "ToolArgumentsError",
    "ToolContext",
    "ToolDefinitionError",
    "ToolLocation",
    "ToolProvider",
    "ToolResult",
    "ToolSource",
    "ToolTimeoutError",
    "Type",
    "UIContext",
    "UpdateCallback",
    "ValidationLimits",
    "ValidatorEngine",
    "Violation",
    "__version__",
    "anthropic_issues",
    "check_schema",
    "check_tool_name",
    "claude_provider",
    "codex_provider",
    "compile_validator",
    "content_from_dict",
    "default_providers",
    "discover_and_load",
    "dispatch_session_event",
    "exec_command",
    "explicit_candidates",
    "load_custom_tools",
    "load_scan",
    "native_provider",
    "normalize_result",
    "openai_issues",
    "openai_strict_issues",
    "parse_arguments",
    "render_call",
    "render_result",
    "scan",
    "scan_sources",
    "to_anthropic",
    "to_json_schema",
    "to_mcp",
    "to_openai",
]
