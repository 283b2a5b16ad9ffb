"""The public surface: each namespace's __all__ matches its real exports, every export is
documented and lives (by ``__module__``) in the namespace users import it from."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types
import typing

import pytest

PUBLIC_MODULES = [
    "customtools",
    "customtools.actions",
    "customtools.cli",
    "customtools.export",
    "customtools.host",
    "customtools.integrations",
    "customtools.integrations.langchain",
    "customtools.integrations.openai_agents",
    "customtools.integrations.pydantic_ai",
    "customtools.isolation",
    "customtools.loading",
    "customtools.mcp",
    "customtools.policy",
    "customtools.rendering",
    "customtools.talkback",
    "customtools.telemetry",
    "customtools.testing",
    "customtools.validation",
]

# The pinned surface of each namespace: adding or removing a public name is a decision that
# shows up in this file's diff (and in CHANGELOG.md).
ROOT_NAMES = {
    "COERCIONS_META_KEY", "DEFAULT_CONTEXT", "TOOL_NAME_PATTERN", "VIOLATIONS_META_KEY",
    "AbortController", "AbortListener", "AbortSignal", "ApprovalRequest", "Approver",
    "AudioContent", "ContentBlock",
    "ContentError", "CustomTool", "CustomToolAdapter", "CustomToolsError", "EmbeddedResource",
    "ExecResult", "ExtensionContent", "HookFailure", "ImageContent", "LoadError",
    "LoadFailedError", "LoadResult", "LoadedTool", "ResourceLink", "SchemaError",
    "SessionEvent", "SessionReason", "TextContent", "ToolAPI", "ToolAbortedError",
    "ToolArgumentsError", "ToolContext", "ToolDefinitionError", "ToolRegistry", "ToolResult",
    "ToolTimeoutError", "Type", "UpdateCallback", "__version__", "check_tool_name",
    "content_from_dict", "discover_and_load", "dispatch_session_event", "exec_command",
    "load_custom_tools", "normalize_result", "tool",
}  # fmt: skip
PINNED = {
    "customtools": ROOT_NAMES,
    "customtools.cli": {"main", "run"},
    "customtools.telemetry": {"OpenTelemetryObserver", "classify", "instrument", "uninstrument"},
    "customtools.export": {
        "CompatibilityIssue", "anthropic_issues", "openai_issues", "openai_strict_issues",
        "to_anthropic", "to_json_schema", "to_mcp", "to_openai",
    },
    "customtools.talkback": {
        "DEFAULT_ASK_TIMEOUT", "DEFAULT_SAMPLE_TIMEOUT", "LOG_LEVELS", "InputAnswer",
        "InputHandler", "InputRequest", "LogLevel", "LogSink", "SampleRequest", "SampleResult",
        "Sampler", "TalkBackError", "check_form_schema",
    },
    "customtools.rendering": {
        "PLAIN_THEME", "RenderOptions", "Theme", "render_call", "render_result",
    },
    "customtools.validation": {
        "Coercion", "CompiledValidator", "ReferenceEngine", "RustEngine", "SchemaValidator",
        "ValidationLimits", "ValidatorEngine", "Violation", "check_schema",
        "compile_validator", "parse_arguments",
    },
    "customtools.testing": {
        "Finding", "PackReport", "ToolCall", "ToolPack", "assert_cancelled", "assert_error",
        "assert_ok", "assert_text", "check_pack", "describe_outcome", "load_pack",
        "load_pack_sync", "validate_pack",
    },
    "customtools.host": {
        "ActionRejectedError", "ActiveClientToolSet", "AgentCustomization", "CHILD_TYPES",
        "CLIENT_DISPATCHABLE", "ChildCustomization", "ClientPluginCustomization",
        "ClientPresence", "Customization", "CustomizationError", "CustomizationLoadState",
        "DirectoryCustomization", "ExtensionRegistry", "HookCustomization", "HostSession",
        "Icon", "JsonRpcError", "McpServerCustomization", "McpServerState",
        "PluginCustomization", "PromptCustomization", "RESERVED_META_KEYS",
        "RuleCustomization", "SessionActiveClient", "SessionToolRegistry",
        "SkillCustomization", "TextRange", "ToolDefinition", "ToolRoute",
        "UnknownCustomization", "advertise_capability", "advertised_capability",
        "check_create_session_client", "check_variant", "child_from_dict",
        "classify_variant", "client_plugin_from_dict", "customization_from_dict",
        "customization_id", "deny_unknown_tool", "is_client_dispatchable", "json_equal",
        "load_states_from_loader", "merge_meta", "meta_from", "parse_frontmatter",
        "plugin_parser", "prefix_tools", "reduce_chat", "reduce_session", "scan_directory",
        "scan_plugin", "source_key", "structural_tools_equal", "supports_capability",
        "tool_calls", "trace_context", "with_trace_context",
    },
    "customtools.actions": {
        "AGENT_SWITCH_COMPLETE", "AGENT_SWITCH_PREPARE", "APPLICATION_CONTEXT_KEYS",
        "ActionDefinition", "ActionDefinitionError", "ActionDispatcher", "ActionError",
        "ActionFailedError", "ActionInputError", "ActionNotFoundError", "ActionOutcome",
        "ActionResultError", "ActionTimeoutError", "ApplicationPlugin", "ApplicationResult",
        "CORE_CONTEXT_KEYS", "ContextError", "CopyTextAction", "DISPLAY_FORMATS",
        "DISPLAY_PRESENTATIONS", "DISPLAY_VARIANTS", "DispatchResult", "Display",
        "DisplayAction", "DisplayError", "ExtensionDisplayAction", "INPUT_TYPES",
        "IdentityCodec", "ListedAction", "NativeCodec", "OpenUrlAction",
        "PLUGIN_ENTRY_POINT_GROUP", "PluginDiscovery", "PluginError", "PluginKind",
        "PluginLoadError", "PluginRegistry", "REQUEST_COMPLETE", "REQUEST_ERROR",
        "REQUEST_PREPARE", "RESERVED_CONTEXT_KEYS", "RESPONSE_FINALIZE", "RegisteredPlugin",
        "ReservedContextKeyWarning", "RunActionAction", "SESSION_CREATE",
        "SESSION_DELETE_PREPARE", "SESSION_FORK", "SESSION_LIST", "SESSION_SAVE_PREPARE",
        "STANDARD_LIFECYCLES", "Session", "SessionLike", "SessionPlugin", "SessionResult",
        "TRIGGER_APPLICATION", "TRIGGER_CORE", "TRIGGER_MANUAL", "build_context",
        "check_params", "ensure_serializable", "find_plugins", "merge_patch",
        "parse_actions", "plugin_kind", "serialize_error", "serialize_session",
    },
    "customtools.mcp": {
        "DEFAULT_CALL_TIMEOUT", "DEFAULT_CANCEL_GRACE", "DEFAULT_PROGRESS_INTERVAL",
        "DETAILS_META_KEY", "HttpSecurity", "LIST_CHANGED_DEBOUNCE", "MAX_STDERR_LINE",
        "MCP_TOOL_NAME_PATTERN", "MIN_TOKEN_LENGTH", "McpMount", "McpServerConfig",
        "MountChange", "MountChanges", "MountDiagnostic",
        "MountedServer", "ORIGIN_META_KEY", "RedisPolicyBackend", "RedisState",
        "SERVER_NAME_PATTERN", "ServeDiagnostic", "SharedStateError", "ToolServer",
        "VisibilityStore", "is_loopback", "mount", "mounted_tool_name", "parse_mcp_json",
        "read_mcp_json", "read_token", "serve", "serve_http",
    },
    "customtools.isolation": {
        "IsolationOptions", "IsolationPool", "Permissions", "PermissionsError",
    },
    "customtools.policy": {
        "POLICY_META_KEY", "Gate", "MemoryBackend", "MemoryCache", "MemoryGate", "MemoryRates",
        "MemorySlots", "MemoryStore", "Policy", "PolicyBackend", "PolicyError", "Rates",
        "ResultCache", "ResultStore", "Slots", "TransientToolError", "read_result_tool",
    },
    "customtools.integrations": set(),
    "customtools.integrations.pydantic_ai": {"CustomToolset", "CustomToolUpdate"},
    "customtools.integrations.openai_agents": {"function_tools"},
    "customtools.integrations.langchain": {"UPDATE_EVENT", "CustomToolsTool", "langchain_tools"},
    "customtools.loading": {
        "BUILTIN_PROVIDER_IDS", "DEFAULT_LOAD_TIMEOUT", "MANIFEST_LOCATIONS", "NO_OP_UI",
        "TOOL_ENTRY_POINT_GROUP", "Candidate", "ClaudePluginsProvider",
        "ConfiguredPathsProvider", "Diagnostic", "DirectoryProvider", "EntryPointsProvider",
        "MetadataFile", "NoOpUIContext", "PendingAction", "PendingActionStore",
        "PluginRootsProvider", "ProviderItem", "ScanContext", "ScanResult", "ToolLocation",
        "ToolProvider", "ToolSource", "UIContext", "claude_provider", "codex_provider",
        "default_providers", "explicit_candidates", "load_scan", "native_provider", "scan",
        "scan_sources", "PendingSource", "ProjectSource", "SourceFile", "file_source",
        "project_sources", "TrustCallback", "TrustGrant", "TrustPolicy", "TrustStore",
        "default_store_path", "TrustStoreError", "RegisteredTool", "ToolConflict",
        "RELOAD_KEPT_PREVIOUS", "Reloader",
        "DiscoveryOptions",
    },
}  # fmt: skip

_HELPERS = {"annotations", "TYPE_CHECKING", "Any", "importlib"}


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_matches_the_public_attributes(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = set(module.__all__)
    public = {
        name
        for name in dir(module)  # includes names the package loads lazily
        if name.isidentifier()  # pytest's assertion rewriting adds "@py_builtins"
        and not name.startswith("_")
        and not isinstance(getattr(module, name), types.ModuleType)
        and name not in _HELPERS
    }
    assert exported - {"__version__"} == public
    assert len(module.__all__) == len(exported), "duplicates in __all__"
    for name in module.__all__:
        getattr(module, name)  # every lazy name resolves


@pytest.mark.parametrize("module_name", sorted(PINNED))
def test_namespace_exports_exactly_the_pinned_names(module_name: str) -> None:
    assert set(importlib.import_module(module_name).__all__) == PINNED[module_name]


def test_the_root_stays_small() -> None:
    """At most 48 names, and docs/design.md says how many there are."""
    import pathlib

    assert len(ROOT_NAMES) <= 48
    design = pathlib.Path(__file__).parents[1] / "docs" / "design.md"
    assert f"({len(ROOT_NAMES)} names with `__version__`" in design.read_text(encoding="utf-8")


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_export_lives_in_its_public_namespace(module_name: str) -> None:
    module = importlib.import_module(module_name)
    misplaced = {
        name: obj.__module__
        for name in module.__all__
        if (inspect.isclass(obj := getattr(module, name)) or inspect.isfunction(obj))
        and obj.__module__ != module_name
    }
    assert misplaced == {}


def test_a_name_is_exported_from_one_namespace_only() -> None:
    homes: dict[int, list[str]] = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                homes.setdefault(id(obj), []).append(f"{module_name}.{name}")
    assert [names for names in homes.values() if len(names) > 1] == []


def test_reprs_show_the_public_path() -> None:
    import customtools

    assert repr(customtools.LoadResult) == "<class 'customtools.LoadResult'>"
    assert repr(customtools.CustomToolAdapter) == "<class 'customtools.CustomToolAdapter'>"


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_exported_class_and_function_has_a_docstring(module_name: str) -> None:
    module = importlib.import_module(module_name)
    undocumented = [
        name
        for name in module.__all__
        if (inspect.isclass(obj := getattr(module, name)) or inspect.isfunction(obj))
        and typing.get_origin(obj) is None  # type aliases (a class on 3.10) document in source
        and not (obj.__doc__ or "").strip()
    ]
    assert undocumented == []


def test_import_does_not_load_heavy_dependencies() -> None:
    code = (
        "import sys, customtools, customtools.telemetry\n"
        "heavy = [m for m in ('jsonschema', 'jsonschema_rs', 'yaml', 'mcp', 'pydantic',"
        " 'starlette', 'uvicorn', 'opentelemetry') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# What `import customtools` and the core a host uses must not load: the root loads no module
# of the package until a name is used, and the package imports `logging` (with `traceback`)
# and `difflib` on the paths that log or suggest a name.
ROOT_IMPORT_NEVER = ("logging", "traceback", "difflib", "inspect", "dataclasses", "threading")
CORE_IMPORT_NEVER = ("logging", "traceback", "difflib")


def _new_modules(statement: str) -> list[str]:
    code = (
        "import sys\nbefore = set(sys.modules)\n"
        f"{statement}\n"
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_customtools_loads_no_module_of_the_package_until_a_name_is_used() -> None:
    loaded = _new_modules("import customtools")
    ours = [m for m in loaded if m.startswith("customtools")]
    assert ours == ["customtools", "customtools._public"]
    assert [m for m in ROOT_IMPORT_NEVER if m in loaded] == []
    assert "anyio" not in loaded


def test_the_core_a_host_uses_loads_no_logging_traceback_or_difflib() -> None:
    loaded = _new_modules(
        "from customtools import CustomTool, CustomToolAdapter, ToolContext, ToolRegistry, Type"
    )
    assert "customtools._adapter" in loaded  # the statement did load the core
    assert [m for m in CORE_IMPORT_NEVER if m in loaded] == []


def test_import_does_not_load_any_agent_framework() -> None:
    code = (
        "import sys, customtools, customtools.integrations\n"
        "from customtools import ToolRegistry\n"
        "heavy = [m for m in ('pydantic_ai', 'langchain_core', 'langgraph', 'agents', 'openai')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_package_imports_no_asyncio_module_directly() -> None:
    import pathlib

    import customtools

    root = pathlib.Path(customtools.__file__).parent
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith(("import asyncio", "from asyncio"))
    ]
    assert offenders == []
