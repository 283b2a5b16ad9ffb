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
from customtools._exec import ExecResult, exec_command
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
from customtools._tool import TOOL_NAME_PATTERN, CustomTool, check_tool_name
from customtools._typebox import Type
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
    "parse_arguments",
    "render_call",
    "render_result",
    "scan",
    "scan_sources",
]
