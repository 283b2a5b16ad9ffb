"""The loader's options as frozen values: :class:`DiscoveryOptions` (where tools are looked
for, which project code may load) and :class:`LoadOptions` (how the candidates are imported).

Inside the package only these objects travel. The public doors (``discover_and_load``,
``load_custom_tools``, ``load_scan``, ``scan``, ``Reloader``, ``customtools.mcp.serve``) also
take each option as a keyword; a discovery keyword defaults to :data:`UNSET`, so one passed
explicitly always wins over ``options=``, even when it equals the default (the "not given"
sentinel of httpx's ``USE_CLIENT_DEFAULT``). Each value is checked once, when it is built.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from customtools._loading._isolating import IsolationRequest
from customtools._loading._records import check_trust_policy

if TYPE_CHECKING:
    from customtools._loading._api import PendingActionStore
    from customtools._loading._mcpjson import McpToolProvider
    from customtools._loading._providers import ToolProvider
    from customtools._loading._trust_store import TrustPolicy, TrustStore

__all__ = [
    "DEFAULT_LOAD_TIMEOUT",
    "UNSET",
    "DiscoveryOptions",
    "LoadOptions",
    "Unset",
    "door_options",
]

PathArg = str | os.PathLike[str]

DEFAULT_LOAD_TIMEOUT = 10.0
"""Seconds an awaitable factory may take before it becomes a ``"timeout"`` load error."""


class Unset:
    """The type of :data:`UNSET`, the default of the public doors' discovery keywords: "not
    given"."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final[Any] = Unset()


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveryOptions:
    """Where tools are looked for and which project code may load, as one frozen value.

    Pass it as ``discover_and_load(options=...)`` or ``scan(options=...)``; derive variants
    with :meth:`replace`. Every field is also a keyword of those functions (see
    ``docs/hosting.md``); a keyword passed explicitly wins over the field.

    Args:
        home: the home directory (default: ``Path.home()``).
        app_name: the host's app directory name: ``~/.<app_name>/tools``,
            ``<cwd>/.<app_name>/tools`` and the trust store ``~/.<app_name>/trust.json``.
        native_dirs: ``(user_dirs, project_dirs)`` replacing the native directories.
        plugin_dirs: plugin roots, in order (project scope when inside ``cwd``).
        providers: replaces the built-in directory providers.
        disabled_providers: provider ids to switch off (each reported).
        entry_points: whether to scan the ``customtools.tools`` entry point group.
        trust: ``"prompt"`` (default: trusted project sources load, the others are pending),
            ``"none"`` (no project code), ``"all"`` (everything, unasked) or a callable asked
            per pending source (return ``True`` to grant it in the store and load it).
        trust_store: the grants (default: ``TrustStore(home=home, app_name=app_name)``).
        project_mcp_servers: start the servers of the project's ``.mcp.json`` without
            asking the trust store (they run programs from the project: pass ``True`` only
            when the user trusts it; ``trust="all"`` implies it). Otherwise the file is a
            project source like any other: trusted by content, else pending.

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


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadOptions:
    """How a load imports its candidates, as one frozen value: the loader keywords of
    ``discover_and_load`` (which describes them), ``isolation``, ``sandbox`` and
    ``require_sandbox`` as one :class:`~customtools._loading._isolating.IsolationRequest`,
    and ``lazy`` (serve modules from the manifest cache, imported on first call).

    Raises:
        ValueError: ``load_timeout`` is not a positive number or ``None``.
    """

    strict: bool = False
    load_timeout: float | None = DEFAULT_LOAD_TIMEOUT
    pending_actions: PendingActionStore | None = None
    isolation: IsolationRequest | None = None
    mcp_servers: McpToolProvider | None = None
    lazy: bool = False

    def __post_init__(self) -> None:
        timeout = self.load_timeout
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
        ):
            raise ValueError(
                f"load_timeout must be a positive number of seconds or None, got {timeout!r}"
            )


_DISCOVERY_FIELDS = frozenset(field.name for field in dataclasses.fields(DiscoveryOptions))
_LOAD_KEYWORDS = frozenset(field.name for field in dataclasses.fields(LoadOptions)) | {
    "sandbox",
    "require_sandbox",
}


def door_options(
    door: str, options: DiscoveryOptions | None, keywords: Mapping[str, Any]
) -> tuple[DiscoveryOptions, LoadOptions]:
    """A public door's keywords (those of ``discover_and_load``) as the two values.

    Raises:
        TypeError: a keyword ``discover_and_load`` does not take (the message names ``door``).
        ValueError: an option is not valid, or ``sandbox`` without ``isolation``.
    """
    unknown = sorted(set(keywords) - _DISCOVERY_FIELDS - _LOAD_KEYWORDS)
    if unknown:
        raise TypeError(f"{door}() got unexpected keyword argument(s): {', '.join(unknown)}")
    changes = {k: v for k, v in keywords.items() if k in _DISCOVERY_FIELDS and v is not UNSET}
    discovery = options if options is not None else DiscoveryOptions()
    discovery = dataclasses.replace(discovery, **changes) if changes else discovery
    given = {k: v for k, v in keywords.items() if k in _LOAD_KEYWORDS and v is not UNSET}
    pool = given.pop("isolation", None)
    sandbox, require = given.pop("sandbox", False), given.pop("require_sandbox", False)
    if (sandbox or require) and pool is None:
        raise ValueError(
            "sandbox=True needs process isolation: pass isolation=IsolationPool() (the"
            " sandbox confines each module's worker process; see docs/sandbox.md)"
        )
    if pool is not None:
        home = os.path.abspath(discovery.home) if discovery.home is not None else None
        given["isolation"] = IsolationRequest(
            pool=pool, sandbox=bool(sandbox or require), require=require, home=home
        )
    return discovery, LoadOptions(**given)
