"""``customtools trust [PATH]``: show what a project would run, and trust exactly that.

PATH is the project directory (default: the current directory). The project's tool sources
are scanned as data (no tool code runs), each is listed with every file that would be imported
and its state (``trusted``, ``untrusted``, ``changed`` with what changed); the untrusted ones are
then granted, after a ``[y/N]`` question on a terminal or with ``--yes``. ``--revoke`` forgets
the grants of PATH and of every source below it; ``--list`` prints every grant in the store.
The store is ``~/.<app-name>/trust.json`` (see ``docs/trust.md``).

Exit status: 0 done (or nothing to trust), 1 something was left untrusted (declined, not
confirmed, or not trustable), 2 usage error or unreadable trust store.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from customtools.cli._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_discovery_arguments,
    display_path,
)
from customtools.cli._output import REPORT_VERSION, print_json

__all__ = ["add_parser", "command"]


def add_parser(subparsers: Any) -> None:
    """Register ``trust``."""
    parser = subparsers.add_parser(
        "trust",
        help="show the code a project would run and trust it",
        description="List every project tool source under PATH (default: the current"
        " directory) with the files that would run, then trust the untrusted ones (asks on a"
        " terminal; --yes to skip the question). Trust is kept in ~/.APP-NAME/trust.json and"
        " keyed by content: any edit asks again. Exit status: 0 ok, 1 something left"
        " untrusted, 2 usage error or unreadable trust store.",
    )
    parser.add_argument("path", nargs="?", metavar="PATH", help="the project directory")
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--revoke", action="store_true", help="forget the grants of PATH and every source below"
    )
    action.add_argument("--list", action="store_true", help="list every grant in the store")
    parser.add_argument(
        "--yes", "-y", action="store_true", help="trust without asking (after listing)"
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="report format (default: text)"
    )
    add_discovery_arguments(parser, project=True)
    parser.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """Run ``trust``; returns the exit status."""
    from customtools._errors import TrustStoreError
    from customtools._loading._trust_store import TrustStore

    try:
        store = TrustStore(app_name=args.app_name)
    except ValueError as exc:
        raise UsageError(f"--app-name: {exc}") from None
    try:
        if args.list:
            return _list(store, args)
        project = os.path.abspath(os.path.expanduser(args.path or "."))
        if args.revoke:
            return _revoke(store, project, args)
        if not os.path.isdir(project):
            raise UsageError(f"PATH {args.path!r} is not a directory")
        return _grant(store, project, args)
    except TrustStoreError as exc:
        print(f"customtools trust: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _list(store: Any, args: argparse.Namespace) -> int:
    grants = store.grants()
    if args.format == "json":
        print_json(
            {
                "version": REPORT_VERSION,
                "store": store.path,
                "grants": [g.to_dict() for g in grants],
            }
        )
        return EXIT_OK
    print(f"trust store: {store.path}")
    if not grants:
        print("no project sources are trusted")
    here = os.getcwd()
    for grant in grants:
        count = len(grant.files)
        where = display_path(grant.root, here)
        print(f"  {where}  ({grant.provider}, {count} file(s), trusted {grant.granted})")
    return EXIT_OK


def _revoke(store: Any, project: str, args: argparse.Namespace) -> int:
    real = os.path.realpath(project)
    prefix = real.rstrip(os.sep) + os.sep
    revoked = [
        grant.root
        for grant in store.grants()
        if (grant.root == real or grant.root.startswith(prefix)) and store.revoke(grant.root)
    ]
    if args.format == "json":
        print_json({"version": REPORT_VERSION, "store": store.path, "revoked": revoked})
    elif revoked:
        for root in revoked:
            print(f"revoked {display_path(root, os.getcwd())}")
    else:
        print(f"nothing was trusted under {display_path(real, os.getcwd())}")
    return EXIT_OK


def _grant(store: Any, project: str, args: argparse.Namespace) -> int:
    from customtools._loading._loader import scan
    from customtools._loading._trust import project_sources

    scanned = scan(
        (),
        project,
        app_name=args.app_name,
        plugin_dirs=tuple(args.plugin_dirs),
        disabled_providers=frozenset(args.disabled),
        entry_points=False,
    )
    sources = project_sources(scanned, project=project)
    pending = store.pending(sources, metadata=scanned.metadata)
    waiting = {item.source.real_root: item for item in pending}
    trustable = [item for item in pending if item.source.trustable]
    granted: list[str] = []
    if trustable and (args.yes or _confirm(len(trustable))):
        for item in trustable:
            store.grant(item)
            granted.append(item.source.real_root)
    here = os.getcwd()
    if args.format == "json":
        rows = []
        for source in sources:
            item = waiting.get(source.real_root)
            row = item.to_dict() if item is not None else {**source.to_dict(), "status": "trusted"}
            row["granted"] = source.real_root in granted
            rows.append(row)
        print_json({"version": REPORT_VERSION, "project": project, "sources": rows})
    else:
        sys.stdout.write(_text(project, sources, waiting, granted, here))
    left = [item for item in pending if item.source.real_root not in granted]
    if left and trustable and not granted and not args.yes:
        print(
            "customtools trust: nothing was trusted; run again with --yes to trust the files"
            " listed above",
            file=sys.stderr,
        )
    return EXIT_FINDINGS if left else EXIT_OK


def _confirm(count: int) -> bool:
    if not sys.stdin.isatty():
        return False
    print(f"Trust the {count} source(s) above? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except (OSError, KeyboardInterrupt):
        return False
    return answer.strip().lower() in ("y", "yes")


def _text(
    project: str, sources: Any, waiting: dict[str, Any], granted: list[str], here: str
) -> str:
    from customtools._loading._trust import bytecode_warnings, printable

    lines = [f"project tool sources under {display_path(project, here) or '.'}:"]
    if not sources:
        lines.append("  none: no project tool code would run")
    for source in sources:
        item = waiting.get(source.real_root)
        status = "trusted" if item is None else item.status
        if source.real_root in granted:
            status = "granted now"
        where = display_path(source.root, here)
        lines.append(f"  [{status}] {where} ({source.provider}), {len(source.files)} file(s):")
        for file in source.files:
            lines.append(f"      {printable(file.name)}  sha256:{file.sha256[:16]}")
        lines += [f"    when sandboxed: {line}" for line in source.permissions]
        lines += [f"    execution policy: {line}" for line in source.policies]
        if item is not None:
            lines += [f"    changed: {change}" for change in item.changes]
            lines += [f"    cannot be trusted: {problem}" for problem in source.problems]
            lines += [f"    WARNING: {warning}" for warning in item.warnings]
        else:
            lines += [f"    note: {warning}" for warning in bytecode_warnings(source)]
    return "\n".join(lines) + "\n"
