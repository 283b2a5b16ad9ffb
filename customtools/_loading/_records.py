"""Records the loader produces: where a tool came from, what loaded, what failed.

Every record is a frozen value with ``to_dict()`` so CI and hosts can print or ship it, and
``from_dict()`` to read it back (an isolation worker's load reply, a ``validate`` report).
Errors are data here, never exceptions: one bad file never stops a load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass, field, fields
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from customtools._error_results import LoadCode
from customtools._tool import CustomTool

if TYPE_CHECKING:
    from customtools._policy import PackInfo

__all__ = [
    "TRUST_POLICIES",
    "Candidate",
    "Diagnostic",
    "LoadError",
    "LoadedTool",
    "MetadataFile",
    "ScanResult",
    "ToolSource",
    "check_trust_policy",
]

Level = Literal["user", "project"]
CandidateKind = Literal["module", "package", "entry_point"]
_R = TypeVar("_R", bound="_Record")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class _Record:
    """The JSON form of a record, field by field: camelCase keys, ``None`` fields omitted, a
    nested :class:`ToolSource` as its own form. :meth:`from_dict` reads it back."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``None`` fields are omitted."""
        out: dict[str, Any] = {}
        for item in fields(self):  # type: ignore[arg-type]
            value = getattr(self, item.name)
            if value is not None:
                plain = dict(value) if isinstance(value, Mapping) else value
                out[_camel(item.name)] = value.to_dict() if isinstance(value, _Record) else plain
        return out

    @classmethod
    def from_dict(cls: type[_R], data: Mapping[str, Any]) -> _R:
        """The record :meth:`to_dict` wrote (unknown keys are ignored).

        Raises:
            TypeError: a required field is missing (``data`` is not this record's form).
        """
        values: dict[str, Any] = {}
        for item in fields(cls):  # type: ignore[arg-type]
            value = data.get(_camel(item.name))
            if value is not None:
                values[item.name] = ToolSource.from_dict(value) if item.name == "source" else value
        return cls(**values)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSource(_Record):
    """Where a tool module was found.

    Args:
        provider: stable provider id (``"native"``, ``"claude"``, ``"claude-plugins"``,
            ``"codex"``, ``"plugin"``, ``"entry-points"``, ``"configured"``, or a host's own).
        provider_name: display name for people (``"Claude Code"``).
        level: the source's *scope*: ``"user"`` (home directories, the marketplace cache,
            installed packages, paths the host configures explicitly) or ``"project"``
            (found under cwd: provider project directories, plugin roots inside the project,
            project-scoped marketplace installs). Project code is imported only after the user
            trusted it (see ``docs/trust.md``).
        plugin_name: for plugin roots and marketplace plugins, the plugin's name.
        plugin_version: the plugin's version, when its manifest or registry gives one.
        distribution: for entry points, the installed distribution's name.
    """

    provider: str
    provider_name: str
    level: Level
    plugin_name: str | None = None
    plugin_version: str | None = None
    distribution: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate(_Record):
    """A tool module the scan found; importing it is the next step.

    Args:
        path: the path as found (absolute, not resolved); for entry points, ``"<ep value>"``.
        resolved_path: the real path (symlinks resolved), the dedupe key.
        kind: ``"module"`` (a ``.py`` file), ``"package"`` (a directory with ``__init__.py``;
            ``path`` is the directory) or ``"entry_point"``.
        source: where it was found.
        entry_point: for entry points, the value ``"module:factory"``.
        root: for project-scope candidates, the source root they were found under (the tools
            directory, the plugin root or the explicit path, absolute, not resolved): the unit
            the trust gate hashes and the user trusts.
    """

    path: str
    resolved_path: str
    kind: CandidateKind
    source: ToolSource
    entry_point: str | None = None
    root: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataFile(_Record):
    """A ``.md`` or ``.json`` file in a tools directory: described, never imported.

    Args:
        path: the file as found.
        resolved_path: its real path.
        name: the ``name`` from YAML frontmatter or the JSON object, else the file stem.
        description: the ``description`` likewise, else ``""``.
        source: where it was found.
        format: ``"md"`` or ``"json"``.
        data: every field read from the frontmatter or JSON object.
    """

    path: str
    resolved_path: str
    name: str
    description: str
    source: ToolSource
    format: Literal["md", "json"]
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic(_Record):
    """Something a person should know that is not an error: a skipped file, a disabled
    provider, a duplicate path, a missing optional directory.

    Args:
        code: stable kebab-case code (``"skipped-file"``, ...; docs/errors.md lists them).
        message: one line for people.
        path: the file or directory concerned, if any.
        source: the source concerned, if any.
    """

    code: str
    message: str
    path: str | None = None
    source: ToolSource | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadError(_Record):
    """One thing that failed to load: a module, a factory, one tool of a factory, a conflict.

    Args:
        path: the path as found (or the entry point value).
        error: a one-line cause naming the tool or file and what to do.
        source: where it was found (``None`` for a configured path that does not resolve).
        resolved_path: the real path, when known.
        code: stable kebab-case code (``"import-error"``, ...; docs/errors.md lists them).
        tool_name: the tool concerned, when known.
        traceback: a short traceback summary, in its own field so ``error`` stays one line.
    """

    path: str
    error: str
    source: ToolSource | None = None
    resolved_path: str | None = None
    code: str = LoadCode.LOAD_ERROR
    tool_name: str | None = None
    traceback: str | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.error}"

    @classmethod
    def of(cls, candidate: Candidate, error: str, code: str, **more: Any) -> LoadError:
        """The error ``error`` of ``candidate`` (its path, resolved path and source)."""
        where = {"path": candidate.path, "resolved_path": candidate.resolved_path}
        return cls(error=error, code=code, source=candidate.source, **where, **more)


class LoadedTool:
    """A tool that loaded, with where it came from (read-only).

    ``lazy`` is true when the tool came from the manifest cache: its module is imported on
    its first call (see ``docs/discovery.md``), and ``tool`` is built from its stored
    definition on first read, once (a load builds none: ``name`` and ``former_names`` are
    read without building it). ``pack`` is what the execution policy reads about the tool's
    module (its declared ``POLICY`` and permissions, its digest), read on first use; ``None``
    when unknown. Records compare by everything but ``pack``.

    Args:
        tool: the tool; or what builds it, for a lazy record (anything with the tool's
            ``name`` and ``former_names`` and a ``build()`` returning it, every time the same).
    """

    __slots__ = ("_tool", "lazy", "pack", "path", "resolved_path", "source")

    path: str
    resolved_path: str
    source: ToolSource
    lazy: bool
    pack: PackInfo | None
    _tool: CustomTool | Any

    def __init__(
        self,
        *,
        path: str,
        resolved_path: str,
        tool: CustomTool | Any,
        source: ToolSource,
        lazy: bool = False,
        pack: PackInfo | None = None,
    ) -> None:
        init = object.__setattr__
        init(self, "path", path)
        init(self, "resolved_path", resolved_path)
        init(self, "_tool", tool)
        init(self, "source", source)
        init(self, "lazy", lazy)
        init(self, "pack", pack)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        keys = ("path", "resolved_path", "tool", "source", "lazy")
        return all(getattr(self, key) == getattr(other, key) for key in keys)

    __hash__ = None  # type: ignore[assignment]  # a tool holds mappings

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle build it again
        keys = ("path", "resolved_path", "source", "lazy", "pack")
        return partial(LoadedTool, tool=self._tool, **{k: getattr(self, k) for k in keys}), ()

    def __repr__(self) -> str:
        return f"LoadedTool(name={self.name!r}, path={self.path!r}, lazy={self.lazy!r})"

    @property
    def tool(self) -> CustomTool:
        """The tool (a lazy record's is built on first read; any later read is that one)."""
        tool = self._tool
        return tool if isinstance(tool, CustomTool) else tool.build()

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._tool.name

    @property
    def former_names(self) -> tuple[str, ...]:
        """The tool's former names (:attr:`CustomTool.former_names`)."""
        return self._tool.former_names

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the tool's definition plus its origin (``lazy`` only when true)."""
        out: dict[str, Any] = {
            "name": self.tool.name,
            "label": self.tool.label,
            "path": self.path,
            "resolvedPath": self.resolved_path,
            "source": self.source.to_dict(),
        }
        if self.lazy:
            out["lazy"] = True
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanResult:
    """What a scan found, before any tool code runs.

    ``candidates`` are deduplicated by real path (first occurrence kept, later ones reported
    in ``diagnostics`` with code ``"duplicate-path"``) and in precedence order.
    """

    candidates: tuple[Candidate, ...] = ()
    metadata: tuple[MetadataFile, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    errors: tuple[LoadError, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "candidates": [c.to_dict() for c in self.candidates],
            "metadata": [m.to_dict() for m in self.metadata],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "errors": [e.to_dict() for e in self.errors],
        }


TRUST_POLICIES = ("prompt", "all", "none")
"""The trust policies given by name; a callable asked per pending source is the fourth kind."""


def check_trust_policy(policy: Any) -> None:
    """Raise ``ValueError`` unless ``policy`` is a trust policy (see :data:`TRUST_POLICIES`)."""
    if not (policy in TRUST_POLICIES or callable(policy)):
        raise ValueError(
            f"trust must be 'prompt', 'all', 'none' or a callable asked per pending source, "
            f"got {policy!r}"
        )
