"""The rulebook's checks of a pack: one in-process load (:func:`check_load_result`), names
across separately loaded tools (:func:`check_names`), metadata, and an empty pack."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from customtools._format import find_invisible
from customtools._registry import NameRule
from customtools._rules._table import Finding, severity_for
from customtools._rules._tool import check_tool, describe_invisible

if TYPE_CHECKING:
    from customtools._loading._loader import LoadResult
    from customtools._loading._records import MetadataFile

__all__ = ["ToolSite", "check_load_result", "check_metadata", "check_names", "empty_pack"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSite:
    """A tool's name and where it was defined, for :func:`check_names`.

    Attributes:
        name: the tool name.
        path: the file, for findings and messages.
        line: the line in ``path``, when known.
        pack: a label for the pack it belongs to (``None``: the only pack).
    """

    name: str
    path: str | None = None
    line: int | None = None
    pack: str | None = None


def check_names(
    sites: Iterable[ToolSite], *, builtins: Iterable[str] = (), strict: bool = False
) -> list[tuple[ToolSite, Finding]]:
    """``name-conflict`` and ``similar-name`` across tools loaded separately, in order: the
    registry's :class:`~customtools._registry.NameRule`, as a host applies it. Returns each
    finding with the site it is about."""
    rule = NameRule(builtins)
    out: list[tuple[ToolSite, Finding]] = []
    for site in sites:
        origin = f"{site.path} (pack {site.pack})" if site.pack else site.path
        found = rule.claim(site.name, origin)
        if found is not None:
            finding = Finding(
                severity=severity_for(found.code, strict=strict),
                code=found.code,
                message=found.error,
                path=site.path,
                tool_name=site.name,
                line=site.line,
            )
            out.append((site, finding))
    return out


def check_metadata(
    metadata: Iterable[MetadataFile], tool_paths: Mapping[str, str], *, strict: bool = False
) -> list[Finding]:
    """The rules on a pack's metadata files: ``metadata-name-taken`` (a metadata file named
    like a tool; ``tool_paths`` maps each tool name to its file) and ``invisible-unicode`` in
    a metadata description."""
    found: list[Finding] = []
    for item in metadata:
        owner = tool_paths.get(item.name)
        if owner is not None:
            found.append(
                Finding(
                    severity=severity_for("metadata-name-taken", strict=strict),
                    code="metadata-name-taken",
                    message=f"metadata file names {item.name!r}, which is also a tool from"
                    f" {owner}; the tool is used and the metadata is not: rename or remove one",
                    path=item.path,
                    tool_name=item.name,
                )
            )
        if find_invisible(item.description):
            found.append(
                Finding(
                    severity=severity_for("invisible-unicode", strict=strict),
                    code="invisible-unicode",
                    message=describe_invisible(
                        f"the description of metadata {item.name!r}", item.description
                    ),
                    path=item.path,
                )
            )
    return found


def empty_pack(where: str, *, path: str | None = None, strict: bool = False) -> Finding:
    """The ``empty-pack`` finding for a pack (``where``, its display name) that loaded no
    tool and reported no error."""
    return Finding(
        severity=severity_for("empty-pack", strict=strict),
        code="empty-pack",
        message=f"no tool loaded from {where}: check the path (a tools directory contributes"
        " its <name>.py files and package directories, and a factory must return tools)",
        path=path,
    )


def check_load_result(
    result: LoadResult, *, where: str = "the pack", path: str | None = None, strict: bool = False
) -> list[Finding]:
    """Every rule on one in-process load of a pack.

    Load errors keep their loader codes (always errors); diagnostics get their severity from
    :data:`RULES` (unknown ones are notices); then ``empty-pack``, :func:`check_tool` on each
    tool, and :func:`check_metadata`.

    Args:
        result: the load.
        where: the pack, as named in an ``empty-pack`` message.
        path: the pack's path, for an ``empty-pack`` finding.
        strict: the strict policy.
    """
    found = [
        Finding(
            severity="error",
            code=error.code,
            message=error.error,
            path=error.path,
            tool_name=error.tool_name,
            detail=error.traceback,
        )
        for error in result.errors
    ]
    if not result.tools and not result.errors:
        found.append(empty_pack(where, path=path, strict=strict))
    for loaded in result.tools:
        found += check_tool(loaded.tool, path=loaded.path, strict=strict)
    found += [
        Finding(
            severity=severity_for(item.code, strict=strict),
            code=item.code,
            message=item.message,
            path=item.path,
        )
        for item in result.diagnostics
    ]
    found += check_metadata(
        result.metadata, {loaded.tool.name: loaded.path for loaded in result.tools}, strict=strict
    )
    return found
