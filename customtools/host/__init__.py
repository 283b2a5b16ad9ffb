"""Host toolkit for the Agent Host Protocol: customizations, active clients, client tools.

Hosts that load custom tools also show users what is installed and take tools from clients
(an IDE, a web UI). This package gives them:

* the customization tree as value objects (:class:`PluginCustomization`,
  :class:`DirectoryCustomization`, children, load states) with lossless ``to_dict`` /
  ``*_from_dict``;
* :func:`scan_plugin` / :func:`scan_directory` to build that tree from files on disk, and
  :func:`load_states_from_loader` to show the tool loader's report the same way;
* pure reducers over session and chat wire state (:func:`reduce_session`,
  :func:`reduce_chat`) that pass the protocol's own fixtures;
* :class:`ActiveClientToolSet` and :class:`SessionToolRegistry` to merge several clients'
  tools with the host's own into one namespace;
* :class:`HostSession` for the host's duties around client tool calls and departing clients,
  and :class:`ClientPresence` for the disconnect grace window;
* ``_meta`` helpers and :class:`ExtensionRegistry` for ``_``-prefixed extension methods.

See ``docs/host-toolkit.md``.
"""

from __future__ import annotations

from customtools.host._chat import reduce_chat, tool_calls
from customtools.host._disk import (
    customization_id,
    parse_frontmatter,
    plugin_parser,
    scan_directory,
    scan_plugin,
)
from customtools.host._errors import ActionRejectedError, CustomizationError, JsonRpcError
from customtools.host._extensions import (
    ExtensionRegistry,
    advertise_capability,
    advertised_capability,
    check_variant,
    classify_variant,
    supports_capability,
)
from customtools.host._host import HostSession, check_create_session_client, deny_unknown_tool
from customtools.host._loadstate import load_states_from_loader, source_key
from customtools.host._meta import (
    RESERVED_META_KEYS,
    merge_meta,
    meta_from,
    trace_context,
    with_trace_context,
)
from customtools.host._model import (
    CHILD_TYPES,
    AgentCustomization,
    ChildCustomization,
    ClientPluginCustomization,
    Customization,
    DirectoryCustomization,
    HookCustomization,
    McpServerCustomization,
    PluginCustomization,
    PromptCustomization,
    RuleCustomization,
    SkillCustomization,
    UnknownCustomization,
    child_from_dict,
    client_plugin_from_dict,
    customization_from_dict,
)
from customtools.host._parts import CustomizationLoadState, Icon, McpServerState, TextRange
from customtools.host._presence import ClientPresence
from customtools.host._reducer import CLIENT_DISPATCHABLE, is_client_dispatchable, reduce_session
from customtools.host._registry import SessionToolRegistry, ToolRoute
from customtools.host._tooldefs import SessionActiveClient, ToolDefinition
from customtools.host._toolset import (
    ActiveClientToolSet,
    json_equal,
    prefix_tools,
    structural_tools_equal,
)

__all__ = [
    "CHILD_TYPES",
    "CLIENT_DISPATCHABLE",
    "RESERVED_META_KEYS",
    "ActionRejectedError",
    "ActiveClientToolSet",
    "AgentCustomization",
    "ChildCustomization",
    "ClientPluginCustomization",
    "ClientPresence",
    "Customization",
    "CustomizationError",
    "CustomizationLoadState",
    "DirectoryCustomization",
    "ExtensionRegistry",
    "HookCustomization",
    "HostSession",
    "Icon",
    "JsonRpcError",
    "McpServerCustomization",
    "McpServerState",
    "PluginCustomization",
    "PromptCustomization",
    "RuleCustomization",
    "SessionActiveClient",
    "SessionToolRegistry",
    "SkillCustomization",
    "TextRange",
    "ToolDefinition",
    "ToolRoute",
    "UnknownCustomization",
    "advertise_capability",
    "advertised_capability",
    "check_create_session_client",
    "check_variant",
    "child_from_dict",
    "classify_variant",
    "client_plugin_from_dict",
    "customization_from_dict",
    "customization_id",
    "deny_unknown_tool",
    "is_client_dispatchable",
    "json_equal",
    "load_states_from_loader",
    "merge_meta",
    "meta_from",
    "parse_frontmatter",
    "plugin_parser",
    "prefix_tools",
    "reduce_chat",
    "reduce_session",
    "scan_directory",
    "scan_plugin",
    "source_key",
    "structural_tools_equal",
    "supports_capability",
    "tool_calls",
    "trace_context",
    "with_trace_context",
]

from customtools._public import rehome as _rehome

_rehome(globals(), __name__, __all__)
