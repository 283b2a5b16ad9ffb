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

from customtools._public import rehome as _rehome
from customtools.host import (
    _extensions,
    _host,
    _loadstate,
    _model,
    _presence,
    _reducer,
    _registry,
    _tooldefs,
    _toolset,
)
from customtools.host._chat import reduce_chat, tool_calls
from customtools.host._disk import (
    customization_id,
    parse_frontmatter,
    plugin_parser,
    scan_directory,
    scan_plugin,
)
from customtools.host._errors import ActionRejectedError, CustomizationError, JsonRpcError
from customtools.host._extensions import *  # noqa: F403 - each module's __all__ is public
from customtools.host._host import *  # noqa: F403
from customtools.host._loadstate import *  # noqa: F403
from customtools.host._meta import (
    RESERVED_META_KEYS,
    merge_meta,
    meta_from,
    trace_context,
    with_trace_context,
)
from customtools.host._model import *  # noqa: F403 - with the value types of _parts
from customtools.host._presence import *  # noqa: F403
from customtools.host._reducer import *  # noqa: F403
from customtools.host._registry import *  # noqa: F403
from customtools.host._tooldefs import *  # noqa: F403
from customtools.host._toolset import *  # noqa: F403

__all__ = [
    *_extensions.__all__,
    *_host.__all__,
    *_loadstate.__all__,
    *_model.__all__,
    *_presence.__all__,
    *_reducer.__all__,
    *_registry.__all__,
    *_tooldefs.__all__,
    *_toolset.__all__,
    "RESERVED_META_KEYS",
    "ActionRejectedError",
    "CustomizationError",
    "JsonRpcError",
    "customization_id",
    "merge_meta",
    "meta_from",
    "parse_frontmatter",
    "plugin_parser",
    "reduce_chat",
    "scan_directory",
    "scan_plugin",
    "tool_calls",
    "trace_context",
    "with_trace_context",
]

_rehome(globals(), __name__, __all__)
