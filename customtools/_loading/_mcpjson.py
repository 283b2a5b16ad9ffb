"""MCP server configurations as data: :class:`McpServerConfig` and ``.mcp.json`` files.

This module belongs to the loader and never imports the MCP SDK. It reads the configuration
files (Claude Code's format: ``{"mcpServers": {name: {...}}}``, or the direct
``{name: {...}}`` form), checks names, and defines the interface through which the MCP edge
(``customtools.mcp``) turns configured servers into tools: :class:`McpToolProvider`, an
object the host passes to ``discover_and_load(..., mcp_servers=provider)`` (for example an
open ``customtools.mcp.McpMount``).

Mounted tools are named ``mcp__<server>__<tool>``. A server name is 1-32 characters from
``[A-Za-z0-9_-]`` with no ``__`` and no leading or trailing ``_``, so the first ``__`` after
``mcp__`` always ends the server name: names from two servers can never collide.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol

from customtools._error_results import LoadCode
from customtools._errors import ToolDefinitionError

if TYPE_CHECKING:
    from customtools._loading._records import Diagnostic, LoadError
    from customtools._tool import CustomTool

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "MCP_JSON",
    "SERVER_NAME_PATTERN",
    "McpServerConfig",
    "McpToolProvider",
    "load_mcp_json_tools",
    "mcp_json_files",
    "mounted_tool_name",
    "parse_mcp_json",
    "read_mcp_json",
]

MCP_JSON = ".mcp.json"
"""The file name looked for in a project root and in plugin roots."""

SERVER_NAME_PATTERN = r"^(?!_)(?!.*__)[A-Za-z0-9_-]{1,32}(?<!_)$"
"""Server names: no ``__`` and no ``_`` at either end, so mounted names split unambiguously."""

_SERVER_NAME_RE = re.compile(SERVER_NAME_PATTERN)

_EMPTY: Mapping[str, str] = MappingProxyType({})

DEFAULT_CALL_TIMEOUT = 300.0
"""Seconds a call of a mounted tool may run unless its server's configuration says otherwise."""

# ``.mcp.json`` spellings of the timeouts (seconds), beside the field each sets.
_TIMEOUT_KEYS = {
    "timeout": "timeout",
    "startupTimeout": "startup_timeout",
    "listTimeout": "list_timeout",
    "shutdownTimeout": "shutdown_timeout",
}
_STDIO_KEYS = frozenset({"type", "command", "args", "env", "cwd", *_TIMEOUT_KEYS})
_HTTP_KEYS = frozenset({"type", "url", "headers", *_TIMEOUT_KEYS})


def mounted_tool_name(server: str, tool: str) -> str:
    """The name a mounted tool gets: ``mcp__<server>__<tool>``."""
    return f"mcp__{server}__{tool}"


def _strings(value: Any, what: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ToolDefinitionError(f"{where}: {what} must be a list of strings")
    return tuple(value)


def _string_map(value: Any, what: str, where: str) -> Mapping[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ToolDefinitionError(f"{where}: {what} must be an object of strings")
    return MappingProxyType(dict(value))


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerConfig:
    """How to reach one MCP server: a command to start (stdio) or a URL (streamable HTTP).

    Args:
        name: the server's name, part of every mounted tool's name (see
            :data:`SERVER_NAME_PATTERN`).
        command: the program to start (stdio); exactly one of ``command`` and ``url``.
        args: its arguments.
        env: variables added to the environment the server starts with (which otherwise
            holds only ``HOME``, ``PATH`` and a few other safe variables).
        cwd: the directory the server starts in.
        url: the endpoint of a streamable HTTP server.
        headers: HTTP headers sent with every request (for example ``Authorization``).
        timeout: seconds any call of this server's tools may run (default
            :data:`DEFAULT_CALL_TIMEOUT`; ``None``: no limit).
        startup_timeout: seconds the server may take to start and answer the handshake.
        list_timeout: seconds the server may take to list its tools (every page).
        shutdown_timeout: seconds closing the connection may take before it is cut (a
            stdio server then gets the SDK's own bounded terminate and kill).
        max_tools: the most tools taken from the server (across pages); the rest are left out
            with a diagnostic.
        origin: where the configuration came from (a file path), for messages.

    Raises:
        ToolDefinitionError: a field breaks a rule; the message names the server and field.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    timeout: float | None = DEFAULT_CALL_TIMEOUT
    startup_timeout: float = 30.0
    list_timeout: float = 30.0
    shutdown_timeout: float = 5.0
    max_tools: int = 1000
    origin: str | None = None

    def __post_init__(self) -> None:
        where = f"MCP server {self.name!r}" + (f" in {self.origin}" if self.origin else "")
        if not isinstance(self.name, str) or _SERVER_NAME_RE.match(self.name) is None:
            raise ToolDefinitionError(
                f"invalid MCP server name {self.name!r}"
                + (f" in {self.origin}" if self.origin else "")
                + ": use 1-32 characters from a-z, A-Z, 0-9, '_' and '-', without '__' and"
                " without '_' at either end"
            )
        if (self.command is None) == (self.url is None):
            raise ToolDefinitionError(f"{where}: give exactly one of 'command' and 'url'")
        if self.command is not None and (not isinstance(self.command, str) or not self.command):
            raise ToolDefinitionError(f"{where}: 'command' must be a non-empty string")
        if self.url is not None and (
            not isinstance(self.url, str) or not self.url.startswith(("http://", "https://"))
        ):
            raise ToolDefinitionError(f"{where}: 'url' must be an http:// or https:// URL")
        object.__setattr__(self, "args", _strings(list(self.args), "'args'", where))
        object.__setattr__(self, "env", _string_map(self.env, "'env'", where))
        object.__setattr__(self, "headers", _string_map(self.headers, "'headers'", where))
        for name in ("timeout", "startup_timeout", "list_timeout", "shutdown_timeout"):
            value = getattr(self, name)
            if (value is not None or name != "timeout") and not (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and 0 < value < float("inf")
            ):
                raise ToolDefinitionError(f"{where}: {name!r} must be a positive number of seconds")
        if not (
            isinstance(self.max_tools, int)
            and not isinstance(self.max_tools, bool)
            and self.max_tools > 0
        ):
            raise ToolDefinitionError(f"{where}: 'max_tools' must be a positive integer")

    @property
    def transport(self) -> str:
        """``"stdio"`` or ``"http"``."""
        return "stdio" if self.command is not None else "http"

    @classmethod
    def from_dict(
        cls, name: str, data: Mapping[str, Any], *, origin: str | None = None
    ) -> McpServerConfig:
        """One entry of ``mcpServers`` (Claude Code's format).

        ``{"command", "args", "env", "cwd"}`` starts a stdio server; ``{"type": "http",
        "url", "headers"}`` reaches a streamable HTTP one. Either may set ``timeout``,
        ``startupTimeout``, ``listTimeout`` and ``shutdownTimeout`` (seconds). A relative
        ``cwd`` is taken from the directory of ``origin``.

        Raises:
            ToolDefinitionError: the entry is malformed; the message names server and field.
        """
        where = f"MCP server {name!r}" + (f" in {origin}" if origin else "")
        if not isinstance(data, Mapping):
            raise ToolDefinitionError(f"{where}: expected an object")
        kind = data.get("type", "http" if "url" in data else "stdio")
        if kind not in ("stdio", "http"):
            raise ToolDefinitionError(
                f"{where}: type {kind!r} is not supported; use 'stdio' or 'http'"
            )
        allowed = _STDIO_KEYS if kind == "stdio" else _HTTP_KEYS
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ToolDefinitionError(
                f"{where}: unknown field(s) {', '.join(map(repr, unknown))} for a {kind} server"
            )
        timeouts: dict[str, Any] = {
            field_name: data[key] for key, field_name in _TIMEOUT_KEYS.items() if key in data
        }
        for key, field_name in _TIMEOUT_KEYS.items():
            value = timeouts.get(field_name)
            if key in data and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
            ):
                raise ToolDefinitionError(f"{where}: {key!r} must be a positive number of seconds")
        if kind == "stdio":
            cwd = data.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                raise ToolDefinitionError(f"{where}: 'cwd' must be a string")
            if cwd is not None and origin is not None and not os.path.isabs(cwd):
                cwd = os.path.join(os.path.dirname(origin), cwd)
            return cls(
                name=name,
                command=data.get("command"),
                args=_strings(data.get("args", []), "'args'", where),
                env=_string_map(data.get("env", {}), "'env'", where),
                cwd=cwd,
                origin=origin,
                **timeouts,
            )
        return cls(
            name=name,
            url=data.get("url"),
            headers=_string_map(data.get("headers", {}), "'headers'", where),
            origin=origin,
            **timeouts,
        )

    def to_dict(self) -> dict[str, Any]:
        """The configuration in Claude Code's ``mcpServers`` entry form."""
        out: dict[str, Any]
        if self.command is not None:
            out = {"command": self.command, "args": list(self.args)}
            if self.env:
                out["env"] = dict(self.env)
            if self.cwd is not None:
                out["cwd"] = self.cwd
        else:
            out = {"type": "http", "url": self.url}
            if self.headers:
                out["headers"] = dict(self.headers)
        defaults = {"timeout": DEFAULT_CALL_TIMEOUT, "startup_timeout": 30.0}
        defaults.update(list_timeout=30.0, shutdown_timeout=5.0)
        for key, field_name in _TIMEOUT_KEYS.items():
            value = getattr(self, field_name)
            if value != defaults[field_name] and value is not None:
                out[key] = value
        return out


def parse_mcp_json(
    data: Any, *, origin: str | None = None
) -> tuple[list[McpServerConfig], list[str]]:
    """The servers of a parsed ``.mcp.json`` document, and one message per bad entry.

    Accepts ``{"mcpServers": {name: {...}}}`` and the direct ``{name: {...}}`` form. One bad
    entry never hides the good ones.
    """
    where = origin or MCP_JSON
    if not isinstance(data, Mapping):
        return [], [f"{where}: expected a JSON object with 'mcpServers'"]
    servers = data.get("mcpServers", data)
    if not isinstance(servers, Mapping):
        return [], [f"{where}: 'mcpServers' must be an object"]
    configs: list[McpServerConfig] = []
    problems: list[str] = []
    for name, entry in servers.items():
        try:
            configs.append(McpServerConfig.from_dict(str(name), entry, origin=origin))
        except ToolDefinitionError as exc:
            problems.append(str(exc))
    return configs, problems


def read_mcp_json(path: str) -> tuple[list[McpServerConfig], list[str]]:
    """:func:`parse_mcp_json` of the file at ``path`` (a missing file has no servers)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return [], []
    except (OSError, ValueError) as exc:
        return [], [f"{path}: not readable as JSON ({type(exc).__name__}: {exc}); fix the file"]
    return parse_mcp_json(data, origin=path)


class McpToolProvider(Protocol):
    """What the MCP edge provides to the loader: tools for configured servers.

    ``await provider(configs)`` returns the tools (named ``mcp__<server>__<tool>``) and one
    message per server that could not be reached or tool that could not be mounted. The
    provider owns the connections; the host closes them (see ``customtools.mcp``).
    """

    async def __call__(
        self, configs: Sequence[McpServerConfig]
    ) -> tuple[Sequence[CustomTool], Sequence[str]]: ...


def _under(path: str, root: str) -> bool:
    """Whether ``path`` lies under ``root`` as found or by its real path: a file in the
    project that is a symlink to somewhere else is still the project's."""
    for candidate, base in (
        (os.path.abspath(path), os.path.abspath(root)),
        (os.path.realpath(path), os.path.realpath(root)),
    ):
        try:
            if os.path.commonpath([candidate, base]) == base:
                return True
        except ValueError:  # another drive on Windows
            continue
    return False


def mcp_json_files(cwd: str, plugin_dirs: Sequence[str | os.PathLike[str]]) -> list[str]:
    """The ``.mcp.json`` files a load looks at, in precedence order: plugin roots the host
    named, then the project root (so a checked-out project cannot take a server name)."""
    files: list[str] = []
    for root in plugin_dirs:
        path = os.path.join(os.path.abspath(os.path.join(cwd, os.fspath(root))), MCP_JSON)
        if os.path.isfile(path) and path not in files:
            files.append(path)
    project = os.path.join(cwd, MCP_JSON)
    if os.path.isfile(project) and project not in files:
        files.append(project)
    return files


def _project_code(path: str) -> tuple[list[str], list[str], list[str]]:
    """What the servers of the project ``.mcp.json`` at ``path`` would run from the project:
    ``(files, trees, notes)``.

    A stdio server starts in its ``cwd``, else in the directory of the ``.mcp.json`` (the
    loader pins it there: :func:`_pinned`). One that starts inside the project may run what
    it finds there without naming it (``python -c "import srvlib"`` and ``python -m`` put
    the directory first on ``sys.path``, ``make`` reads the ``Makefile``, ``npm start`` and
    ``npx`` read ``package.json`` and ``node_modules/.bin``), and which files it reads is not
    knowable from its command line, so the grant covers the whole directory it starts in:
    every file there Python, node or a shell could run (``DATA_SUFFIXES`` aside, but a
    ``package.json`` included: its scripts are commands), bounded like any project source.
    A file inside the project that the command or an argument names (``node
    ./tools/server.js``) adds its own directory. ``notes`` says what is not covered:
    programs outside the project and installed dependency trees (virtual environments,
    ``node_modules``), which the user installs like any program.
    """
    from customtools._loading._trust import is_data_file

    project = os.path.dirname(os.path.abspath(path))
    configs, _problems = read_mcp_json(path)
    files: list[str] = []
    trees: list[str] = []
    outside: list[str] = []
    for config in configs:
        if config.command is None:
            continue  # an HTTP server: nothing is started here
        base = os.path.abspath(os.path.join(project, config.cwd) if config.cwd else project)
        starts_inside = _under(base, project)
        words = (config.command, *config.args)
        for index, word in enumerate(words):
            if not word or word.startswith("-"):
                continue
            named = os.path.normpath(os.path.join(base, os.path.expanduser(word)))
            if _under(named, project) and os.path.isfile(named):
                if named not in files:
                    files.append(named)
                if is_data_file(named):
                    continue  # a config file a server reads: hashed, but it runs nothing
                tree = os.path.dirname(named)
                if tree not in trees:
                    trees.append(tree)
            elif index == 0 and word not in outside:
                outside.append(word)
        if starts_inside:
            if base not in trees:
                trees.append(base)
            manifest = os.path.join(base, "package.json")
            if os.path.isfile(manifest) and manifest not in files:
                files.append(manifest)
    notes: list[str] = []
    if outside:
        notes.append(
            "programs outside the project are not covered by this grant: "
            + ", ".join(repr(item) for item in outside)
        )
    if trees:
        notes.append(
            "installed dependency trees (virtual environments, node_modules) and data files"
            " (.md, .json, ...) are not covered"
        )
    return files, trees, notes


def _pinned(configs: list[McpServerConfig], path: str) -> list[McpServerConfig]:
    """A project ``.mcp.json``'s stdio servers without ``cwd`` start in its directory (what
    the grant covers), never in the host's working directory, wherever the host runs."""
    import dataclasses

    here = os.path.dirname(os.path.abspath(path))
    return [
        dataclasses.replace(config, cwd=here)
        if config.command is not None and config.cwd is None
        else config
        for config in configs
    ]


async def _held_back(path: str, source: Any, trust: Any, store: Any, errors: list[Any]) -> Any:
    """``None`` when the project ``.mcp.json`` at ``path`` may start its servers, else the
    pending source to report (an unreadable store blocks it, with one error)."""
    from customtools._errors import TrustStoreError
    from customtools._loading._records import LoadError
    from customtools._loading._trust import PendingSource, file_source
    from customtools._loading._trust_store import gate_source

    files, trees, notes = _project_code(path)
    project_file = file_source(
        path, provider="mcp", source=source, files=files, trees=trees, notes=notes
    )
    try:
        return await gate_source(project_file, trust, store)
    except TrustStoreError as exc:
        errors.append(LoadError(path=exc.path, error=str(exc), code=LoadCode.TRUST_STORE_ERROR))
        why = "the trust store cannot be used"
        return PendingSource(source=project_file, status="blocked", changes=(why,))


async def load_mcp_json_tools(
    provider: McpToolProvider,
    collected: Any,
    *,
    cwd: str,
    plugin_dirs: Sequence[str | os.PathLike[str]],
    trust_project: bool,
    trust: Any = "prompt",
    trust_store: Any = None,
) -> None:
    """Mount the servers of every ``.mcp.json`` file through ``provider`` into ``collected``
    (the loader's ``Collected``: its tools are claimed there, by the loader's name rule).

    A file under ``cwd`` is project scope: its servers start only when the file is trusted
    under ``trust`` (the loader's policy and store: the grant covers the file's exact
    content, so an edited command asks again) or with ``trust_project``. Until then it is
    a pending source, reported as a ``"pending-trust"`` diagnostic; nothing runs. A server
    name is claimed by the first file.
    """
    from customtools._loading._records import Diagnostic, LoadedTool, LoadError, ToolSource

    errors: list[LoadError] = collected.errors
    diagnostics: list[Diagnostic] = collected.diagnostics
    servers: dict[str, str] = {}
    for path in mcp_json_files(cwd, plugin_dirs):
        level: Literal["user", "project"] = "project" if _under(path, cwd) else "user"
        source = ToolSource(provider="mcp-json", provider_name="MCP (.mcp.json)", level=level)
        if level == "project" and not trust_project:
            held = await _held_back(path, source, trust, trust_store, errors)
            if held is not None:
                collected.pending.append(held)
                diagnostics.append(
                    Diagnostic(
                        code=LoadCode.PENDING_TRUST,
                        message=held.message(),
                        path=path,
                        source=source,
                    )
                )
                continue
        configs, problems = read_mcp_json(path)
        if level == "project":
            configs = _pinned(configs, path)
        for problem in problems:
            errors.append(
                LoadError(path=path, error=problem, source=source, code=LoadCode.INVALID_MCP_JSON)
            )
        fresh: list[McpServerConfig] = []
        for config in configs:
            if config.name in servers:
                errors.append(
                    LoadError(
                        path=path,
                        error=f"MCP server name {config.name!r} is already configured in"
                        f" {servers[config.name]}; this one was not started; rename one of them",
                        source=source,
                        code=LoadCode.NAME_CONFLICT,
                    )
                )
                continue
            servers[config.name] = path
            fresh.append(config)
        if not fresh:
            continue
        tools, messages = await provider(fresh)
        for message in messages:
            diagnostics.append(
                Diagnostic(code=LoadCode.MCP_SERVER, message=message, path=path, source=source)
            )
        for tool in tools:
            collected.claim(LoadedTool(path=path, resolved_path=path, tool=tool, source=source))
