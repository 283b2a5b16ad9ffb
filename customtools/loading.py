"""Loader plumbing for hosts that need more than :func:`customtools.discover_and_load`.

- Two-step loading: :func:`scan` finds candidates without running any code, a host filters
  or shows them, then :func:`load_scan` imports the chosen ones.
- Providers: where tools are looked for (:func:`default_providers`, :func:`native_provider`,
  :func:`claude_provider`, :func:`codex_provider`, :class:`DirectoryProvider`,
  :class:`PluginRootsProvider`, :class:`ClaudePluginsProvider`, :class:`EntryPointsProvider`,
  :class:`ConfiguredPathsProvider`) and the :class:`ToolProvider` protocol for a host's own.
- Records: :class:`ToolSource`, :class:`Candidate`, :class:`ScanResult`,
  :class:`Diagnostic`, :class:`MetadataFile`.
- The factory API's collaborators: :class:`UIContext`, :data:`NO_OP_UI`,
  :class:`PendingAction`, :class:`PendingActionStore`.

See ``docs/discovery.md`` and ``docs/hosting.md``.
"""

from __future__ import annotations

from customtools._loading._api import (
    NO_OP_UI,
    NoOpUIContext,
    PendingAction,
    PendingActionStore,
    UIContext,
)
from customtools._loading._entrypoints import TOOL_ENTRY_POINT_GROUP, EntryPointsProvider
from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT, load_scan, scan
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
    MetadataFile,
    ScanResult,
    ToolSource,
)
from customtools._loading._scan import BUILTIN_PROVIDER_IDS, explicit_candidates, scan_sources
from customtools._public import rehome as _rehome

__all__ = [
    "BUILTIN_PROVIDER_IDS",
    "DEFAULT_LOAD_TIMEOUT",
    "MANIFEST_LOCATIONS",
    "NO_OP_UI",
    "TOOL_ENTRY_POINT_GROUP",
    "Candidate",
    "ClaudePluginsProvider",
    "ConfiguredPathsProvider",
    "Diagnostic",
    "DirectoryProvider",
    "EntryPointsProvider",
    "MetadataFile",
    "NoOpUIContext",
    "PendingAction",
    "PendingActionStore",
    "PluginRootsProvider",
    "ProviderItem",
    "ScanContext",
    "ScanResult",
    "ToolLocation",
    "ToolProvider",
    "ToolSource",
    "UIContext",
    "claude_provider",
    "codex_provider",
    "default_providers",
    "explicit_candidates",
    "load_scan",
    "native_provider",
    "scan",
    "scan_sources",
]

_rehome(globals(), __name__, __all__)
