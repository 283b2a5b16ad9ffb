"""Tools from installed distributions: the ``customtools.tools`` entry point group.

A distribution declares tools in its ``pyproject.toml``::

    [project.entry-points."customtools.tools"]
    mypack = "mypack.tools:factory"

Each entry point becomes a ``Candidate`` of kind ``"entry_point"``; nothing is imported here.
Distributions are walked one by one (not through ``importlib.metadata.entry_points()``), so one
distribution with broken metadata never hides the others, and deduplicated by normalised name:
the first one on ``sys.path`` wins, as it does for ``import``.
"""

from __future__ import annotations

import contextlib
import importlib.metadata as ilm
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from customtools._error_results import LoadCode
from customtools._format import describe_exception
from customtools._loading._paths import display_path, is_inside
from customtools._loading._providers import ProviderItem, ScanContext
from customtools._loading._records import Candidate, Diagnostic, LoadError, ToolSource

__all__ = ["ENTRY_POINTS_ID", "TOOL_ENTRY_POINT_GROUP", "EntryPointsProvider", "entry_point_key"]

TOOL_ENTRY_POINT_GROUP = "customtools.tools"
ENTRY_POINTS_ID = "entry-points"

_VALUE = re.compile(r"^(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+)\s*)?(?:\[[^\]]*\]\s*)?$")
_SUFFIXES = (".dist-info", ".egg-info")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def entry_point_key(distribution: str, name: str) -> str:
    """The ``resolved_path`` of an entry point candidate: ``entry-point:<dist>:<name>``.

    Unique per distribution (normalised name) and entry point name; used as the dedupe key.
    """
    return f"entry-point:{_normalize(distribution)}:{name}"


def _stem_name(dist: ilm.Distribution) -> str | None:
    """The distribution name from its metadata directory name, without reading METADATA."""
    location = getattr(dist, "_path", None)  # set by PathDistribution, the usual kind
    folder = getattr(location, "name", None)  # pathlib.Path, or zipfile.Path inside an egg
    if not isinstance(folder, str):
        return None
    stem, suffix = os.path.splitext(folder)
    if suffix not in _SUFFIXES:
        return None
    return stem.partition("-")[0] or None


def _location(dist: ilm.Distribution) -> str:
    location = getattr(dist, "_path", None)
    return display_path(str(location)) if location is not None else "<unknown location>"


def _installed_dirs() -> frozenset[str]:
    """The interpreter's own installation directories (site-packages, the standard library):
    distributions there were installed, wherever the environment lives."""
    import site
    import sysconfig

    found: set[str] = set()
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        with contextlib.suppress(KeyError):
            found.add(sysconfig.get_paths()[key])
    with contextlib.suppress(Exception):
        found.update(site.getsitepackages())
    with contextlib.suppress(Exception):
        found.add(site.getusersitepackages())
    return frozenset(os.path.realpath(item) for item in found if item)


def _in_project(dist: ilm.Distribution, cwd: str, installed: frozenset[str]) -> bool:
    """Whether ``dist`` was found through a ``sys.path`` entry inside the project: a relative
    entry (``''``, ``'.'``: the process's working directory) or a directory under ``cwd``
    that is not one of the interpreter's installation directories."""
    location = getattr(dist, "_path", None)
    if location is None:
        return False
    text = os.fspath(location) if isinstance(location, os.PathLike) else str(location)
    if not os.path.isabs(text):
        return True
    entry = os.path.realpath(os.path.dirname(text))
    if entry in installed:
        return False
    return is_inside(entry, os.path.realpath(cwd))


def _guarded(dists: Iterable[ilm.Distribution]) -> Iterator[ilm.Distribution]:
    """Iterate distributions; a path entry that breaks the iteration ends it, not the scan."""
    iterator = iter(dists)
    while True:
        try:
            yield next(iterator)
        except StopIteration:
            return
        except Exception:  # a broken sys.path entry; the others were already yielded
            return


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryPointsProvider:
    """Entry points of installed distributions, id ``"entry-points"``, level user.

    Candidates come ordered by distribution name, then entry point name. Their ``path`` and
    ``entry_point`` are the value (``"module:factory"``; a bare ``"module"`` means its
    ``factory``), their ``resolved_path`` is :func:`entry_point_key`. The source carries the
    distribution name and version and, as ``plugin_name``, the entry point name.

    Args:
        group: the entry point group.
        path: directories to search instead of ``sys.path``.
        id: the provider id.
        display_name: the name for people.
    """

    group: str = TOOL_ENTRY_POINT_GROUP
    path: Sequence[str] | None = None
    id: str = ENTRY_POINTS_ID
    display_name: str = "Installed package"

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        """Yield one candidate per entry point of the group, plus reports for broken ones."""
        dists = ilm.distributions() if self.path is None else ilm.distributions(path=[*self.path])
        seen: set[str] = set()
        batches: list[tuple[str, list[ProviderItem]]] = []
        installed = _installed_dirs()
        for dist in _guarded(dists):
            stem = _stem_name(dist)
            if stem is not None:
                if _normalize(stem) in seen:
                    continue  # shadowed by an earlier copy on the path, as for import
                seen.add(_normalize(stem))
            try:
                text = dist.read_text("entry_points.txt")
            except Exception:
                text = None
            if not text or self.group not in text:
                continue  # cheap filter: most distributions declare no tools
            project = _in_project(dist, context.cwd, installed)
            items = list(self._from_distribution(dist, stem, seen, project=project))
            batches.append((_normalize(stem or _first_distribution(items)), items))
        batches.sort(key=lambda batch: batch[0])
        for _key, items in batches:
            yield from items

    def _from_distribution(
        self, dist: ilm.Distribution, stem: str | None, seen: set[str], *, project: bool = False
    ) -> Iterator[ProviderItem]:
        where = _location(dist)
        name: str | None = None
        try:
            raw_name = dist.metadata["Name"]
            name = raw_name if isinstance(raw_name, str) and raw_name.strip() else None
        except Exception:
            name = None
        broken = name is None
        name = name or stem
        if name is None:
            yield LoadError(
                path=where,
                error=f"installed distribution at {where} declares {self.group!r} entry points "
                "but has no readable name (METADATA missing or broken); reinstall it",
                code=LoadCode.INVALID_DISTRIBUTION,
            )
            return
        if stem is None:
            if _normalize(name) in seen:
                return
            seen.add(_normalize(name))
        try:
            version: str | None = dist.version
        except Exception:
            version = None
        base = ToolSource(
            provider=self.id,
            provider_name=self.display_name,
            # Found through the project directory on sys.path (`python -m`, a host started
            # in the checkout): project code, gated by trust like any other.
            level="project" if project else "user",
            plugin_version=version if isinstance(version, str) else None,
            distribution=name,
        )
        if broken:
            yield Diagnostic(
                code=LoadCode.BROKEN_DISTRIBUTION,
                message=f"installed distribution {name!r} at {where} has no readable METADATA; "
                "its entry points are used anyway, reinstall it to fix the metadata",
                path=where,
                source=base,
            )
        try:
            entry_points = sorted(dist.entry_points.select(group=self.group), key=_ep_name)
        except Exception as exc:
            yield LoadError(
                path=where,
                error=f"installed distribution {name!r}: its entry_points.txt cannot be read "
                f"({describe_exception(exc)}); no tools were taken from it, reinstall it",
                source=base,
                code=LoadCode.INVALID_DISTRIBUTION,
            )
            return
        for ep in entry_points:
            source = ToolSource(
                provider=base.provider,
                provider_name=base.provider_name,
                level=base.level,
                plugin_name=ep.name,
                plugin_version=base.plugin_version,
                distribution=name,
            )
            if _VALUE.match(ep.value) is None:
                yield LoadError(
                    path=ep.value,
                    error=f"entry point {ep.name!r} of distribution {name!r} in group "
                    f"{self.group!r} has the value {ep.value!r}; expected 'module:factory'",
                    source=source,
                    resolved_path=entry_point_key(name, ep.name),
                    code=LoadCode.INVALID_ENTRY_POINT,
                )
                continue
            yield Candidate(
                path=ep.value,
                resolved_path=entry_point_key(name, ep.name),
                kind="entry_point",
                source=source,
                entry_point=ep.value,
                root=os.path.abspath(str(getattr(dist, "_path", ""))) if project else None,
            )


def _ep_name(ep: ilm.EntryPoint) -> str:
    return ep.name


def _first_distribution(items: list[ProviderItem]) -> str:
    for item in items:
        if item.source is not None and item.source.distribution:
            return item.source.distribution
    return ""
