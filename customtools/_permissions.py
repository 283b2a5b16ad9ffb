"""Declared permissions of a tool pack: :class:`Permissions` and how the host reads them.

A tool module (or a package's ``__init__.py``) declares what its tools need with one
module-level constant::

    from customtools.isolation import Permissions

    PERMISSIONS = Permissions(read=["data"], write=["$TMP"], net=[443], env=["API_KEY"])

The host reads it **statically** (with :mod:`ast`, without importing the module): the worker
that runs the module must be confined before any of its code runs, and the trust listing
shows the permissions before the user trusts the code. So the arguments must be literals
(strings, numbers, lists, tuples, ``True``/``False``/``None``); anything else is a load
error naming the file. Because the declaration is part of the module's source, the trust
grant's digest covers it: any change to it (a widening included) asks for trust again.

Paths: relative paths are relative to the project (the load's ``cwd``), ``~`` and ``~/x``
are the user's home, ``$TMP`` and ``$TMP/x`` are the worker's private temporary directory,
absolute paths are themselves. See ``docs/sandbox.md``.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from customtools._errors import CustomToolsError

__all__ = [
    "DEFAULT_PERMISSIONS",
    "OUTSIDE_DEFAULT",
    "Declarations",
    "Permissions",
    "PermissionsError",
    "read_declarations",
    "resolve_path",
]

NetSpec = Literal["none", "all"] | tuple[int, ...]

_FIELDS: Final = ("read", "write", "net", "run", "env")


class PermissionsError(CustomToolsError, ValueError):
    """A ``PERMISSIONS`` declaration that cannot be read (not literal, wrong type)."""


def _paths(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, Iterable) or not all(isinstance(p, str) and p for p in value):
        raise PermissionsError(
            f"Permissions.{name} must be a list of non-empty path strings, got {value!r}"
        )
    paths: tuple[str, ...] = tuple(value)
    for path in paths:
        if ".." in path.replace("\\", "/").split("/"):
            # `$TMP/..` reads as the temporary directory and grants the shared one above it.
            raise PermissionsError(
                f"Permissions.{name}: {path!r} has a '..' component; declare the path it leads"
                " to, so the user sees what is granted"
            )
    return paths


def _net(value: Any) -> NetSpec:
    if value is None or value is False or value == "none":
        return "none"
    if value is True or value == "all":
        return "all"
    if isinstance(value, int):
        value = (value,)
    if isinstance(value, (list, tuple)) and all(
        isinstance(p, int) and not isinstance(p, bool) and 0 < p < 65536 for p in value
    ):
        return tuple(sorted(set(value)))
    raise PermissionsError(
        "Permissions.net must be 'none', 'all' or a list of TCP port numbers (1-65535),"
        f" got {value!r}"
    )


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Permissions:
    """What a tool pack may do when the host runs it sandboxed (see ``docs/sandbox.md``).

    Args:
        read: paths the pack may read (directories include everything below them):
            relative to the project, ``~/...`` (home), ``$TMP/...`` or absolute. The Python
            installation and the pack's own files are always readable.
        write: paths the pack may create, change and delete files in (also readable). The
            worker's private temporary directory (``$TMP``) is always writable.
        net: ``"none"`` (default), ``"all"``, or TCP ports the pack may connect to and bind.
        run: whether the pack may start programs (``api.exec``, ``subprocess``).
        env: names of the host's environment variables the pack receives (beyond the
            minimal ones: ``PATH``, ``HOME``, ``LANG``, ``LC_*``, ``TMPDIR``).
    """

    read: tuple[str, ...] = (".",)
    write: tuple[str, ...] = ()
    net: NetSpec = "none"
    run: bool = False
    env: tuple[str, ...] = ()

    def __init__(
        self,
        *,
        read: Iterable[str] | str = (".",),
        write: Iterable[str] | str = (),
        net: Any = "none",
        run: bool = False,
        env: Iterable[str] | str = (),
    ) -> None:
        object.__setattr__(self, "read", _paths("read", read))
        object.__setattr__(self, "write", _paths("write", write))
        object.__setattr__(self, "net", _net(net))
        if not isinstance(run, bool):
            raise PermissionsError(f"Permissions.run must be True or False, got {run!r}")
        object.__setattr__(self, "run", run)
        names = (env,) if isinstance(env, str) else tuple(env)
        if not all(isinstance(n, str) and n and "=" not in n for n in names):
            raise PermissionsError(f"Permissions.env must be a list of variable names, got {env!r}")
        object.__setattr__(self, "env", names)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "read": list(self.read),
            "write": list(self.write),
            "net": self.net if isinstance(self.net, str) else list(self.net),
            "run": self.run,
            "env": list(self.env),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Permissions:
        """Inverse of :meth:`to_dict`."""
        return cls(
            read=data.get("read", (".",)),
            write=data.get("write", ()),
            net=data.get("net", "none"),
            run=bool(data.get("run", False)),
            env=data.get("env", ()),
        )

    def describe(self, *, project: str | None = None, home: str | None = None) -> str:
        """The permissions in plain words, for the trust listing and error messages.

        Args:
            project: the project directory: paths are then shown resolved (relative ones
                against it, symlinks followed), as the sandbox grants them.
            home: the home directory (``~`` in what is shown, and what ``~/x`` means).
        """

        def places(paths: tuple[str, ...]) -> str:
            return ", ".join(_place(p, project, home) for p in paths)

        parts = [f"may read {places(self.read) or 'nothing of the project'}"]
        parts.append(
            f"write {places(self.write)} and its temporary directory"
            if self.write
            else "write only its temporary directory"
        )
        parts.append(_NET_WORDS.get(str(self.net), "") or _ports(self.net))
        parts.append("start programs" if self.run else "start no programs")
        if self.env:
            parts.append("receive the environment variable(s) " + ", ".join(self.env))
        return ", ".join(parts)

    def growth(
        self, before: Permissions, *, project: str | None = None, home: str | None = None
    ) -> tuple[str, ...]:
        """What these permissions allow that ``before`` did not, in plain words (one item
        per widening: ``"connect to TCP port(s) 443"``); empty when nothing grew."""
        out = []
        readable = (*before.read, *before.write)
        read = tuple(p for p in self.read if not _covered(p, readable))
        if read:
            out.append("read " + ", ".join(_place(p, project, home) for p in read))
        write = tuple(p for p in self.write if not _covered(p, before.write))
        if write:
            out.append("write " + ", ".join(_place(p, project, home) for p in write))
        if self.net != before.net and before.net != "all":
            if self.net == "all":
                out.append("use the network")
            elif self.net != "none":
                ports = tuple(p for p in self.net if before.net == "none" or p not in before.net)
                if ports:
                    out.append(_ports(ports))
        if self.run and not before.run:
            out.append("start programs")
        env = tuple(name for name in self.env if name not in before.env)
        if env:
            out.append("receive the environment variable(s) " + ", ".join(env))
        return tuple(out)


_NET_WORDS: Final = {"all": "use the network", "none": "no network"}


def _ports(ports: Any) -> str:
    return "connect to TCP port(s) " + ", ".join(str(p) for p in ports)


def _covered(path: str, roots: tuple[str, ...]) -> bool:
    """Whether a declared path lies in one of the declared ``roots`` (as written)."""

    def canonical(item: str) -> str:
        if not item.startswith(("/", "~", "$TMP")):
            item = os.path.join("<project>", item)  # relative: below the project
        return os.path.normpath(item)

    norm = canonical(path)
    return any(
        norm == root or norm.startswith(root.rstrip("/") + "/") for root in map(canonical, roots)
    )


def _place(path: str, project: str | None, home: str | None) -> str:
    """A declared path as the user should read it: resolved (when the project is known),
    home-abbreviated, in backticks; ``"."`` is "the project"."""
    from customtools._format import escape_control

    if project is None or path == "$TMP" or path.startswith("$TMP/"):
        shown = path
    else:
        home = home or os.path.expanduser("~")
        shown = os.path.realpath(resolve_path(path, cwd=project, home=home, tmp=""))
        if home:
            real_home = os.path.realpath(home)
            for base in dict.fromkeys((home.rstrip("/"), real_home.rstrip("/"))):
                if base and (shown == base or shown.startswith(base + "/")):
                    shown = "~" + shown[len(base) :]
                    break
    text = "`" + escape_control(shown).replace("`", "'") + "`"
    return (
        f"the project {text}"
        if path == "." and project is not None
        else ("the project" if path == "." else text)
    )


DEFAULT_PERMISSIONS: Final = Permissions()
"""Used for a sandboxed project pack that declares nothing: read the project, write
``$TMP``."""

OUTSIDE_DEFAULT: Final = Permissions(read=())
"""Used for a sandboxed pack from outside the project (a user-level pack, an installed
distribution, an explicit path elsewhere) that declares nothing: its own files only."""


def resolve_path(path: str, *, cwd: str, home: str, tmp: str) -> str:
    """An absolute path for a declared ``path`` (see the module docstring)."""
    if path == "$TMP" or path.startswith("$TMP/"):
        return os.path.normpath(tmp + path[4:])
    if path == "~" or path.startswith("~/"):
        return os.path.normpath(home + path[1:])
    return os.path.normpath(os.path.join(cwd, path))


def _declaration_file(candidate: Any) -> str | None:
    if candidate.kind == "module":
        return str(candidate.path)
    if candidate.kind == "package":
        return os.path.join(candidate.path, "__init__.py")
    if candidate.entry_point:
        import importlib.util

        module = str(candidate.entry_point).split(":", 1)[0].strip()
        try:
            spec = importlib.util.find_spec(module) if "." not in module else None
        except (ImportError, ValueError):
            return None
        return spec.origin if spec is not None and spec.has_location else None
    return None


def _literal(
    node: ast.expr, where: str, what: str = "PERMISSIONS", kinds: str = "strings, numbers, lists"
) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise PermissionsError(
            f"{where}: {what} arguments must be literals ({kinds}),"
            f" because the host reads them without running the module; got"
            f" {ast.unparse(node)[:80]!r}"
        ) from None


def _called(node: ast.expr | None) -> str | None:
    """The name a call calls (``Permissions``, ``customtools.tool`` -> ``tool``)."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _keywords(
    value: ast.expr, where: str, what: str, usage: str, kinds: str, fields: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The literal keyword arguments of a declaration ``what = usage`` (``POLICY =
    Policy(...)``); ``fields``: the only names it takes (empty: any name)."""
    callee = usage.partition("(")[0]
    if _called(value) != callee or not isinstance(value, ast.Call) or value.args:
        raise PermissionsError(f"{where}: {what} must be a call `{usage}` with keyword arguments")
    kwargs: dict[str, Any] = {}
    for keyword in value.keywords:
        if fields and keyword.arg not in fields:
            raise PermissionsError(
                f"{where}: unknown {callee} argument {keyword.arg!r}; use {', '.join(fields)}"
            )
        if keyword.arg is None:
            raise PermissionsError(f"{where}: {what} arguments must be named, not **unpacked")
        kwargs[keyword.arg] = _literal(keyword.value, where, what, kinds)
    return kwargs


def _permissions_call(value: ast.expr, where: str) -> Permissions:
    usage = "Permissions(read=..., write=..., net=..., run=..., env=...)"
    kwargs = _keywords(value, where, "PERMISSIONS", usage, "strings, numbers, lists", _FIELDS)
    try:
        return Permissions(**kwargs)
    except PermissionsError as exc:
        raise PermissionsError(f"{where}: {exc}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class Declarations:
    """What one module declares: its ``PERMISSIONS``, its tools' ``permissions=`` and its
    execution ``POLICY``.

    Attributes:
        module: the module-level ``PERMISSIONS`` (``None``: not declared).
        module_line: ``"<file>"`` where it is declared, or ``None``.
        tools: tool name -> its own ``@tool(permissions=...)``.
        tool_lines: tool name -> ``"<file>:<line>"`` of that declaration.
        policy: the keyword arguments of a module-level ``POLICY = Policy(...)``, as
            literals (``None``: not declared); :meth:`customtools.policy.Policy.from_dict`
            checks them.
        policy_line: ``"<file>:<line>"`` of that declaration, or ``None``.
        policy_error: why a ``POLICY`` declaration cannot be read (it is then ignored).
    """

    module: Permissions | None = None
    module_line: str | None = None
    tools: Mapping[str, Permissions] = field(default_factory=dict)
    tool_lines: Mapping[str, str] = field(default_factory=dict)
    policy: Mapping[str, Any] | None = None
    policy_line: str | None = None
    policy_error: str | None = None

    def tool_groups(self) -> list[tuple[Permissions, frozenset[str]]]:
        """The tools' own declarations, tools with equal permissions together."""
        groups: dict[Permissions, set[str]] = {}
        for name, permissions in self.tools.items():
            groups.setdefault(permissions, set()).add(name)
        return [(permissions, frozenset(names)) for permissions, names in groups.items()]


def _tool_declaration(node: ast.stmt, path: str) -> tuple[str, Permissions, str] | None:
    """``(tool name, permissions, where)`` for ``@tool(permissions=...)`` on a function."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for decorator in node.decorator_list:
        if _called(decorator) != "tool" or not isinstance(decorator, ast.Call):
            continue
        keywords = {keyword.arg: keyword.value for keyword in decorator.keywords}
        if "permissions" not in keywords:
            return None
        where = f"{path}:{decorator.lineno}"
        name = node.name
        if "name" in keywords:
            given = _literal(keywords["name"], where)
            if not isinstance(given, str):
                raise PermissionsError(f"{where}: a tool with permissions needs a literal name")
            name = given
        return name, _permissions_call(keywords["permissions"], where), where
    return None


def read_declarations(candidate: Any) -> Declarations:
    """Every permission declaration of a candidate's source, read without importing it.

    A source that cannot be found or parsed declares nothing (the import reports it).

    Raises:
        PermissionsError: a declaration that is not a literal ``Permissions(...)`` call, or a
            ``PERMISSIONS`` assigned more than once.
    """
    path = _declaration_file(candidate)
    if path is None:
        return Declarations()
    try:
        with open(path, "rb") as handle:
            source = handle.read(4 << 20)
        tree = ast.parse(source, path)
    except (OSError, SyntaxError, ValueError):
        return Declarations()
    module: Permissions | None = None
    tools: dict[str, Permissions] = {}
    lines: dict[str, str] = {}
    policy: dict[str, Any] | None = None
    policy_line: str | None = None
    policy_error: str | None = None
    for node in tree.body:
        found = _tool_declaration(node, path)
        if found is not None:
            tools[found[0]], lines[found[0]] = found[1], found[2]
            continue
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        if value is not None and "POLICY" in names:
            # Never a load error: a host without an execution policy ignores it, one with
            # logs it, and `customtools validate` reports it.
            where = f"{path}:{node.lineno}"
            try:
                if policy_line is not None:
                    raise PermissionsError(f"{where}: POLICY is assigned more than once")
                usage = "Policy(max_concurrent=..., rate=..., ...)"
                kinds = "numbers, strings, lists, None"
                policy, policy_line = _keywords(value, where, "POLICY", usage, kinds), where
            except PermissionsError as exc:
                policy, policy_line, policy_error = None, where, str(exc)
            continue
        if value is None or "PERMISSIONS" not in names:
            continue
        where = f"{path}:{node.lineno}"
        if module is not None:
            raise PermissionsError(
                f"{where}: PERMISSIONS is assigned more than once; declare it once, at the"
                " top level"
            )
        module = _permissions_call(value, where)
    return Declarations(
        module=module,
        module_line=path if module is not None else None,
        tools=tools,
        tool_lines=lines,
        policy=policy,
        policy_line=policy_line,
        policy_error=policy_error,
    )
