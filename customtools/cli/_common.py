"""What every subcommand shares: discovery options, the usage error, paths for people."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from customtools._loading._loader import LoadResult
    from customtools._policy import Policy

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "absolute_paths",
    "add_discovery_arguments",
    "add_policy_argument",
    "close_matches",
    "display_path",
    "load_failure",
    "load_tools",
    "read_policy",
    "resolve_cwd",
    "scan_options",
    "unknown_tool",
    "warn",
]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A problem with what the user asked for; the command prints it and exits 2."""


def warn(message: str) -> None:
    """Print a diagnostic line on stderr (never on stdout, which carries only the report)."""
    print(f"customtools: {message}", file=sys.stderr, flush=True)


def add_discovery_arguments(
    parser: argparse.ArgumentParser, *, paths: bool = True, project: bool = False
) -> None:
    """The options that say where tools are looked for (see ``docs/discovery.md``);
    ``project``: only those that decide a project's sources (``trust``)."""
    group = parser.add_argument_group("where tools are found")
    if not project:
        group.add_argument(
            "--cwd",
            metavar="DIR",
            help="the project directory (default: the current directory)",
        )
        if paths:
            group.add_argument(
                "--path",
                dest="paths",
                action="append",
                default=[],
                metavar="P",
                help="a tool file or directory to load after the discovered ones (repeatable)",
            )
        group.add_argument(
            "--builtin",
            dest="builtins",
            action="append",
            default=[],
            metavar="NAME",
            help="a tool name the host already uses; no tool may take it (repeatable)",
        )
        group.add_argument(
            "--no-entry-points",
            dest="entry_points",
            action="store_false",
            help="do not load tools declared by installed packages",
        )
    group.add_argument(
        "--plugin-dir",
        dest="plugin_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="a plugin root to scan (repeatable; inside the project it is a project source)",
    )
    group.add_argument(
        "--disable",
        dest="disabled",
        action="append",
        default=[],
        metavar="PROVIDER",
        help="switch a provider off: native, claude, claude-plugins, codex, plugin,"
        " entry-points, configured (repeatable)",
    )
    group.add_argument(
        "--app-name",
        default="customtools",
        metavar="NAME",
        help="the host's app directory name: ~/.NAME/tools and .NAME/tools, and the trust"
        " store ~/.NAME/trust.json (default: %(default)s)",
    )


def absolute_paths(paths: list[str]) -> list[str]:
    """Command-line paths are relative to where the command runs, not to ``--cwd``."""
    return [p if p.startswith(("~", "file:")) else os.path.abspath(p) for p in paths]


def resolve_cwd(args: argparse.Namespace) -> str:
    """The project directory from ``--cwd`` (absolute), checked to be a directory."""
    cwd = os.path.abspath(os.path.expanduser(args.cwd)) if args.cwd else os.getcwd()
    if not os.path.isdir(cwd):
        raise UsageError(f"--cwd {args.cwd!r} is not a directory")
    return cwd


def scan_options(args: argparse.Namespace) -> dict[str, Any]:
    """``{"options": DiscoveryOptions(...)}``: the discovery options the flags ask for, as the
    ``options=`` keyword of the loader's doors."""
    from customtools._loading._options import DiscoveryOptions

    return {
        "options": DiscoveryOptions(
            app_name=args.app_name,
            plugin_dirs=args.plugin_dirs,
            disabled_providers=args.disabled,
            entry_points=args.entry_points,
        )
    }


def add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sandbox`` and ``--require-sandbox`` (``serve``, ``dev`` and ``run``)."""
    group = parser.add_argument_group("least privilege (docs/sandbox.md)")
    group.add_argument(
        "--sandbox",
        action="store_true",
        help="run each tool module in a worker process confined by the kernel to the"
        " permissions it declares (PERMISSIONS); the load reports what is enforced",
    )
    group.add_argument(
        "--require-sandbox",
        action="store_true",
        help="like --sandbox, and refuse a module whose sandbox this kernel cannot fully enforce",
    )


def add_policy_argument(parser: argparse.ArgumentParser) -> None:
    """``--policy JSON`` (``serve``, ``dev`` and ``run``)."""
    parser.add_argument(
        "--policy",
        metavar="JSON",
        help="apply an execution policy: a JSON object of its settings, e.g."
        """ '{"maxConcurrent": 4, "maxResultBytes": 100000}' ('{}': the defaults and what"""
        " each pack declares); see docs/policy.md",
    )


def read_policy(args: argparse.Namespace) -> Policy | None:
    """The :class:`~customtools.policy.Policy` ``--policy`` gives, or ``None``.

    Raises:
        UsageError: the text is not JSON, or not a policy (the message names the setting).
    """
    text = getattr(args, "policy", None)
    if text is None:
        return None
    import json

    from customtools._policy import Policy, PolicyError

    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--policy is not valid JSON: {exc}") from None
    try:
        return Policy.from_dict(data, where="--policy")
    except PolicyError as exc:
        raise UsageError(str(exc)) from None


def sandbox_load_options(args: argparse.Namespace, pool: Any) -> dict[str, Any]:
    """The loader's keywords for ``--sandbox``/``--require-sandbox`` with ``pool``."""
    if pool is None:
        return {}
    return {"isolation": pool, "sandbox": True, "require_sandbox": args.require_sandbox}


def wants_sandbox(args: argparse.Namespace) -> bool:
    """Whether ``--sandbox`` or ``--require-sandbox`` was given."""
    return bool(getattr(args, "sandbox", False) or getattr(args, "require_sandbox", False))


def load_tools(args: argparse.Namespace, cwd: str, pool: Any = None) -> LoadResult:
    """Discover and load every tool the options point at (tool code runs here, or in the
    workers of ``pool`` when sandboxed)."""
    import anyio

    from customtools._loading._loader import discover_and_load

    async def load() -> LoadResult:
        return await discover_and_load(
            absolute_paths(args.paths),
            cwd,
            list(args.builtins),
            **scan_options(args),
            **sandbox_load_options(args, pool),
        )

    try:
        return anyio.run(load)
    except Exception as exc:  # the loader contains tool code; never a traceback
        raise load_failure(exc) from None


def load_failure(exc: Exception) -> UsageError:
    """The error for a load that raised instead of reporting (tool code outwitted the loader)."""
    from customtools._format import describe_exception

    return UsageError(
        f"loading the tools failed: {describe_exception(exc)}; `customtools validate` loads"
        " each module in a process of its own and names the one at fault"
    )


def display_path(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, else unchanged.

    Bytes that are not UTF-8 show as ``\\xNN``, so the result can be encoded; control
    characters and newlines are kept (JSON reports escape them): text output passes the
    result through :func:`customtools._format.escape_control`.
    """
    from customtools._loading._paths import encodable_path as printable

    if os.path.isabs(path):
        try:
            relative = os.path.relpath(path, cwd)
        except ValueError:  # another drive on Windows
            relative = path
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            path = relative
    return printable(path)


def close_matches(name: str, known: Iterable[str]) -> list[str]:
    """Up to five known names that look like ``name`` (for "did you mean")."""
    known = list(known)
    folded = {candidate.casefold(): candidate for candidate in known}
    matches = difflib.get_close_matches(name.casefold(), list(folded), n=5, cutoff=0.6)
    out = [folded[match] for match in matches]
    out += [k for k in known if name.casefold() in k.casefold() and k not in out]
    return out[:5]


def unknown_tool(name: str, result: LoadResult, cwd: str) -> UsageError:
    """The usage error for a tool name that did not load: why, and close matches."""
    failed = [error for error in result.errors if error.tool_name == name]
    if failed:
        error = failed[0]
        return UsageError(
            f"tool {name!r} failed to load: {display_path(error.path, cwd)}: {error.error}"
        )
    lines = [f"no tool named {name!r}"]
    suggestions = close_matches(name, result.tool_names)
    if suggestions:
        lines[0] += "; did you mean " + ", ".join(map(repr, suggestions)) + "?"
    elif result.tool_names:
        lines.append("tools found: " + ", ".join(result.tool_names))
    else:
        lines.append("no tools were found; pass --path DIR or see `customtools list`")
    if result.errors:
        lines.append(
            f"{len(result.errors)} tool module(s) failed to load; `customtools list` shows why"
        )
    if result.pending_trust:
        lines.append(
            f"{len(result.pending_trust)} project tool source(s) are not trusted and were not"
            " loaded; `customtools trust` shows what they would run"
        )
    return UsageError("\n".join(lines))
