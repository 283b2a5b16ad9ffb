"""Loader plumbing for hosts that need more than :func:`customtools.discover_and_load`.

- Options: :class:`DiscoveryOptions`, every discovery and trust option of
  :func:`customtools.discover_and_load` and :func:`scan` as one frozen value.
- Two-step loading: :func:`scan` finds candidates without running any code, a host filters
  or shows them, then :func:`load_scan` imports the chosen ones.
- Providers: where tools are looked for (:func:`default_providers`, :func:`native_provider`,
  :func:`claude_provider`, :func:`codex_provider`, :class:`DirectoryProvider`,
  :class:`PluginRootsProvider`, :class:`ClaudePluginsProvider`, :class:`EntryPointsProvider`,
  :class:`ConfiguredPathsProvider`) and the :class:`ToolProvider` protocol for a host's own.
- Records: :class:`ToolSource`, :class:`Candidate`, :class:`ScanResult`,
  :class:`Diagnostic`, :class:`MetadataFile`.
- The trust gate: :class:`TrustStore` (the user's grants, keyed by real path and content
  hash), :class:`PendingSource` (what would run, and what changed), :data:`TrustPolicy` and
  :data:`TrustCallback`, :func:`project_sources` / :func:`file_source` to hash a source
  yourself. See ``docs/trust.md``.
- The factory API's collaborators: :class:`UIContext`, :data:`NO_OP_UI`,
  :class:`PendingAction`, :class:`PendingActionStore`.

See ``docs/discovery.md`` and ``docs/hosting.md``.
"""

from __future__ import annotations

from customtools._errors import TrustStoreError
from customtools._loading._api import (
    NO_OP_UI,
    NoOpUIContext,
    PendingAction,
    PendingActionStore,
    UIContext,
)
from customtools._loading._entrypoints import TOOL_ENTRY_POINT_GROUP, EntryPointsProvider
from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT, load_scan, scan
from customtools._loading._options import DiscoveryOptions
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
from customtools._loading._reload import RELOAD_KEPT_PREVIOUS, Reloader
from customtools._loading._scan import BUILTIN_PROVIDER_IDS, explicit_candidates, scan_sources
from customtools._loading._trust import (
    PendingSource,
    ProjectSource,
    SourceFile,
    file_source,
    project_sources,
)
from customtools._loading._trust_store import (
    TrustCallback,
    TrustGrant,
    TrustPolicy,
    TrustStore,
    default_store_path,
)
from customtools._public import rehome as _rehome
from customtools._registry import RegisteredTool, ToolConflict

__all__ = [
    "BUILTIN_PROVIDER_IDS",
    "DEFAULT_LOAD_TIMEOUT",
    "MANIFEST_LOCATIONS",
    "NO_OP_UI",
    "RELOAD_KEPT_PREVIOUS",
    "TOOL_ENTRY_POINT_GROUP",
    "Candidate",
    "ClaudePluginsProvider",
    "ConfiguredPathsProvider",
    "Diagnostic",
    "DirectoryProvider",
    "DiscoveryOptions",
    "EntryPointsProvider",
    "MetadataFile",
    "NoOpUIContext",
    "PendingAction",
    "PendingActionStore",
    "PendingSource",
    "PluginRootsProvider",
    "ProjectSource",
    "ProviderItem",
    "RegisteredTool",
    "Reloader",
    "ScanContext",
    "ScanResult",
    "SourceFile",
    "ToolConflict",
    "ToolLocation",
    "ToolProvider",
    "ToolSource",
    "TrustCallback",
    "TrustGrant",
    "TrustPolicy",
    "TrustStore",
    "TrustStoreError",
    "UIContext",
    "claude_provider",
    "codex_provider",
    "default_providers",
    "default_store_path",
    "explicit_candidates",
    "file_source",
    "load_scan",
    "native_provider",
    "project_sources",
    "scan",
    "scan_sources",
]

_rehome(globals(), __name__, __all__)
