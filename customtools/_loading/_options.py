"""Discovery and trust options as one value: :class:`DiscoveryOptions`.

``discover_and_load`` and ``scan`` took each option as a keyword and handed it on through
several layers; an option is now a field here and is read where it is used, so adding one
touches two places: this class and its consumer. The keywords still work: a keyword left at
its default takes the value from ``options``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from customtools._loading._records import check_trust_policy

if TYPE_CHECKING:
    from customtools._loading._providers import ToolProvider
    from customtools._loading._trust_store import TrustPolicy, TrustStore

__all__ = ["DiscoveryOptions", "merge_options"]

PathArg = str | os.PathLike[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveryOptions:
    """Where tools are looked for and which project code may load, as one frozen value.

    Pass it as ``discover_and_load(options=...)`` or ``scan(options=...)``; derive variants
    with :meth:`replace`. Every field is also a keyword of those functions (see
    ``docs/hosting.md``).

    Args:
        home: the home directory (default: ``Path.home()``).
        app_name: the host's app directory name (``~/.<app_name>/tools``, the trust store
            ``~/.<app_name>/trust.json``).
        native_dirs: ``(user_dirs, project_dirs)`` replacing the native directories.
        plugin_dirs: plugin roots, in order (project scope when inside ``cwd``).
        providers: replaces the built-in directory providers.
        disabled_providers: provider ids to switch off (each reported).
        entry_points: whether to scan the ``customtools.tools`` entry point group.
        trust: ``"prompt"``, ``"none"``, ``"all"`` or a callback (see ``docs/trust.md``).
        trust_store: the grants (default: ``TrustStore(home=home, app_name=app_name)``).
        project_mcp_servers: start the project ``.mcp.json``'s servers without asking the
            trust store.

    Raises:
        ValueError: ``trust`` is not a trust policy.
    """

    home: PathArg | None = None
    app_name: str = "customtools"
    native_dirs: tuple[Sequence[PathArg], Sequence[PathArg]] | None = None
    plugin_dirs: Sequence[PathArg] = ()
    providers: Sequence[ToolProvider] | None = None
    disabled_providers: Collection[str] = ()
    entry_points: bool = True
    trust: TrustPolicy = "prompt"
    trust_store: TrustStore | None = None
    project_mcp_servers: bool = False

    def __post_init__(self) -> None:
        check_trust_policy(self.trust)
        object.__setattr__(self, "plugin_dirs", tuple(self.plugin_dirs))
        if self.providers is not None:
            object.__setattr__(self, "providers", tuple(self.providers))
        object.__setattr__(self, "disabled_providers", frozenset(self.disabled_providers))

    def replace(self, **changes: Any) -> DiscoveryOptions:
        """A copy with ``changes`` applied (``options.replace(trust="none")``)."""
        return dataclasses.replace(self, **changes)


_DEFAULTS = DiscoveryOptions()


def merge_options(options: DiscoveryOptions | None, **keywords: Any) -> DiscoveryOptions:
    """``options`` (or the defaults) with every keyword that is not at its default applied."""
    base = options if options is not None else _DEFAULTS
    changes: dict[str, Any] = {}
    for name, value in keywords.items():
        default = getattr(_DEFAULTS, name)
        if value is default:
            continue
        if isinstance(default, (tuple, frozenset)) and not value and not isinstance(value, str):
            continue  # an empty sequence is the default
        if value == default and not callable(value):
            continue
        changes[name] = value
    return dataclasses.replace(base, **changes) if changes else base
