"""``customtools serve [PATHS...]``: serve the loaded tools over MCP (stdio or streamable HTTP);
``customtools dev``: the same with ``--reload`` and a log of loads and calls on stderr.

Tools load exactly as for ``list`` (discovery options included) plus the positional paths;
load errors and tools MCP cannot offer go to stderr, and the rest are served. Over stdio,
stdout carries only the protocol. The MCP SDK is imported only when this command runs, and a
missing install is one line naming the extra.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from customtools.cli._common import (
    EXIT_OK,
    UsageError,
    absolute_paths,
    add_discovery_arguments,
    add_policy_argument,
    add_sandbox_arguments,
    read_policy,
    resolve_cwd,
    sandbox_load_options,
    scan_options,
    wants_sandbox,
)

__all__ = ["add_parser", "add_serve_arguments", "command", "parse_address"]


def add_parser(subparsers: Any) -> None:
    """Register ``serve`` and ``dev``."""
    parser = subparsers.add_parser(
        "serve",
        help="serve the tools to MCP clients (stdio or streamable HTTP)",
        description="Load the tools (like `list`, plus PATHS) and serve them over MCP until"
        " the client disconnects (stdio) or the process is interrupted (HTTP). Diagnostics go"
        " to stderr. Needs the mcp extra: pip install 'customtools[mcp]'. See docs/mcp.md.",
    )
    add_serve_arguments(parser)
    add_sandbox_arguments(parser)
    parser.add_argument(
        "--reload",
        action="store_true",
        help="watch the loaded sources and serve every change (needs the reload extra)",
    )
    parser.add_argument(
        "--eager",
        action="store_true",
        help="import every tool module at start; by default a module that loaded before,"
        " unchanged, is served from the manifest cache and imported on its first call",
    )
    parser.set_defaults(handler=command, dev=False)
    dev = subparsers.add_parser(
        "dev",
        help="serve with --reload and a readable log of loads and calls on stderr",
        description="`serve --reload` for authors: every load, reload and tool call is logged"
        " to stderr as it happens. Needs the mcp and reload extras. See docs/cli.md.",
    )
    add_serve_arguments(dev)
    # An author wants every module imported (and its errors shown) at every start.
    dev.set_defaults(handler=command, dev=True, reload=True, eager=True)


def add_serve_arguments(parser: Any) -> None:
    """The arguments ``serve`` and ``dev`` share."""
    parser.add_argument(
        "served_paths", nargs="*", metavar="PATH", help="tool files or directories to serve"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--stdio", action="store_true", help="serve one client over stdin/stdout (the default)"
    )
    where.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp (PORT 0 picks a free port)",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="HTTP: a fresh transport per request, for several processes behind a balancer",
    )
    parser.add_argument(
        "--name",
        default="customtools",
        help="the server name shown to clients (default: %(default)s)",
    )
    parser.add_argument("--timeout", type=float, metavar="S", help="abort any call after S seconds")
    parser.add_argument(
        "--tool-search",
        action="store_true",
        help="list only a search_tools tool and the pinned tools; a search lists what it"
        " finds for that client (every tool stays callable by name)",
    )
    parser.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="NAME",
        help="with --tool-search: a tool name or fnmatch pattern always listed (repeatable)",
    )
    token = parser.add_mutually_exclusive_group()
    token.add_argument(
        "--token-file",
        metavar="FILE",
        help="HTTP: require `Authorization: Bearer <token>`, the token read from FILE (mode 600)",
    )
    token.add_argument(
        "--token-env",
        metavar="VAR",
        help="HTTP: require `Authorization: Bearer <token>`, the token read from $VAR",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="HTTP: also accept this Host header (repeatable; loopback names and the bound"
        " host always are); needed with --token-* to bind a non-loopback address",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="HTTP: also accept this Origin header, e.g. https://app.example.com (repeatable)",
    )
    key = parser.add_mutually_exclusive_group()
    key.add_argument(
        "--state-key-file",
        metavar="FILE",
        help="HTTP: seal requestState with the key in FILE (mode 600, at least 32 characters),"
        " the same for every replica behind one endpoint",
    )
    key.add_argument(
        "--state-key-env",
        metavar="VAR",
        help="HTTP: seal requestState with the key in $VAR (at least 32 characters)",
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        help="HTTP: share replay protection, list_changed, tool search, the policy and the event"
        " store with the other replicas through this Redis or Valkey (needs the redis extra)",
    )
    parser.add_argument(
        "--redis-namespace",
        metavar="NAME",
        help="HTTP: this deployment's part of every Redis key (default: the --name)",
    )
    add_policy_argument(parser)
    add_discovery_arguments(parser)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as ``(host, port)``."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise UsageError(f"--http {text!r}: expected HOST:PORT, for example 127.0.0.1:8000")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        raise UsageError(f"--http {text!r}: the port {port_text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise UsageError(f"--http {text!r}: the port must be between 0 and 65535")
    return host, port


def _security(args: argparse.Namespace, address: tuple[str, int] | None) -> Any:
    """The HTTP protection the flags ask for; refuses an unprotected non-loopback bind."""
    flags = [
        flag
        for flag, value in (
            ("--token-file", args.token_file),
            ("--token-env", args.token_env),
            ("--allowed-host", args.allowed_host),
            ("--allowed-origin", args.allowed_origin),
        )
        if value
    ]
    if address is None:
        if flags:
            raise UsageError(f"{flags[0]} applies to --http only")
        return None
    try:
        from customtools.mcp._http import HttpSecurity, read_token
    except ImportError as exc:  # the package imports the SDK first
        raise UsageError(str(exc)) from None
    try:
        token = None
        if args.token_file or args.token_env:
            token = read_token(file=args.token_file, env=args.token_env)
        security = HttpSecurity(
            allowed_hosts=args.allowed_host,
            allowed_origins=args.allowed_origin,
            bearer_token=token,
        )
        security.check_bind(address[0])
    except ValueError as exc:
        raise UsageError(f"--http: {exc}") from None
    return security


MIN_STATE_KEY_LENGTH = 32
"""The fewest characters a ``--state-key-*`` key may have."""


def _shared_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``serve`` options of replicas: the seal key and the Redis they share."""
    flags = [
        flag
        for flag, value in (
            ("--state-key-file", args.state_key_file),
            ("--state-key-env", args.state_key_env),
            ("--redis", args.redis),
            ("--redis-namespace", args.redis_namespace),
        )
        if value
    ]
    if not flags:
        return {}
    if not args.http:
        raise UsageError(f"{flags[0]} applies to --http only")
    if args.redis_namespace and not args.redis:
        raise UsageError("--redis-namespace applies with --redis only")
    options: dict[str, Any] = {}
    if args.state_key_file or args.state_key_env:
        from customtools.mcp._http import read_token

        try:
            key = read_token(file=args.state_key_file, env=args.state_key_env)
        except ValueError as exc:
            raise UsageError(f"--state-key-*: {exc}") from None
        if len(key) < MIN_STATE_KEY_LENGTH:
            where = args.state_key_file or f"${args.state_key_env}"
            raise UsageError(
                f"--state-key-*: the key in {where} has {len(key)} characters; use at least"
                f" {MIN_STATE_KEY_LENGTH}, for example"
                " `python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
            )
        options["state_key"] = key.encode()
    if args.redis:
        try:
            from customtools.mcp._redis import RedisState
        except ImportError as exc:
            raise UsageError(f"--redis: {exc}") from None
        try:  # the URL and namespace are checked before anything starts
            RedisState(args.redis, namespace=args.redis_namespace or args.name)
        except ValueError as exc:
            raise UsageError(f"--redis: {exc}") from None
        options["redis"] = args.redis
        options["redis_namespace"] = args.redis_namespace
    return options


def command(args: argparse.Namespace) -> int:
    """Run ``serve``; returns the exit status."""
    if args.stateless and not args.http:
        raise UsageError("--stateless applies to --http only")
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if args.pin and not args.tool_search:
        raise UsageError("--pin applies to --tool-search only")
    address = parse_address(args.http) if args.http else None
    security = _security(args, address)
    shared = _shared_options(args)
    cwd = resolve_cwd(args)
    try:
        from customtools.mcp import serve
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    import anyio

    def ready(url: str) -> None:
        print(f"customtools serve: listening on {url}", file=sys.stderr, flush=True)

    if args.reload:
        from customtools._loading._reload import require_watchfiles

        try:
            require_watchfiles("--reload (and `customtools dev`)")
        except ImportError as exc:
            raise UsageError(str(exc)) from None
    options: dict[str, Any] = {
        "cwd": cwd,
        "builtin_tool_names": tuple(args.builtins),
        "name": args.name,
        "timeout": args.timeout,
        "reload": args.reload,
        "policy": read_policy(args),
        "lazy": not args.eager,
        "tool_search": args.tool_search,
        "pinned": tuple(args.pin),
        **scan_options(args),
    }
    if args.dev:
        from customtools.cli._devlog import DevLog

        log = DevLog(sys.stderr)
        log.install()
        options["on_load"] = log.loaded
    paths = absolute_paths(list(args.served_paths) + list(args.paths))
    if address is None:
        options["transport"] = "stdio"
    else:
        options.update(
            transport="http",
            host=address[0],
            port=address[1],
            stateless=args.stateless,
            security=security,
            on_ready=ready,
            **shared,
        )
    from customtools.mcp._shared import SharedStateError

    try:
        anyio.run(_serve, args, serve, paths, options)
    except SharedStateError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK


async def _serve(
    args: argparse.Namespace,
    serve: Callable[..., Awaitable[Any]],
    paths: list[str],
    options: dict[str, Any],
) -> None:
    """Serve; with ``--sandbox``, from confined isolation workers that end with the server."""
    if not wants_sandbox(args):
        await serve(paths, **options)
        return
    from customtools._isolation._pool import IsolationPool

    async with IsolationPool() as pool:
        await serve(paths, **options, **sandbox_load_options(args, pool))
