"""The rulebook's checks of a pack: one in-process load (:func:`check_load_result`), names
across separately loaded tools (:func:`check_names`), metadata, and an empty pack."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from customtools._format import find_invisible
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
    """``name-conflict`` and ``similar-name`` across tools loaded separately, in order.

    The first tool to claim a name keeps it (as a host would); each later claim, and any claim
    of a ``builtins`` name, is a ``name-conflict``. Names that differ only by letter case are a
    ``similar-name``. Returns each finding with the site it is about.
    """
    claims: dict[str, ToolSite | None] = dict.fromkeys(builtins)
    folded: dict[str, str] = {name.casefold(): name for name in claims}
    out: list[tuple[ToolSite, Finding]] = []

    def add(site: ToolSite, code: str, message: str) -> None:
        finding = Finding(
            severity=severity_for(code, strict=strict),
            code=code,
            message=message,
            path=site.path,
            tool_name=site.name,
            line=site.line,
        )
        out.append((site, finding))

    for site in sites:
        name = site.name
        if name in claims:
            first = claims[name]
            if first is None:
                message = f"tool name {name!r} is a built-in tool name; rename the tool"
            else:
                other = "this pack" if first.pack == site.pack else f"pack {first.pack}"
                message = (
                    f"tool name {name!r} is already taken by {first.path} ({other});"
                    " a host loads only the first; rename one of them"
                )
            add(site, "name-conflict", message)
            continue
        claims[name] = site
        similar = folded.setdefault(name.casefold(), name)
        if similar != name:
            add(
                site,
                "similar-name",
                f"tool {name!r} differs from {similar!r} only by letter case; models may"
                " confuse them",
            )
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
