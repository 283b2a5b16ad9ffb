"""``customtools list``: every discovered tool, metadata file and diagnostic.

With ``--scan-only`` nothing is imported: the report lists the tool modules that *would* load
(``customtools.loading.scan``), which is the safe way to look at an untrusted checkout. Either
way each tool or module shows its trust state (``user``, ``trusted``, ``pending``), and project
sources that are not trusted are listed with the files that would run (``customtools trust``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from customtools._error_results import LoadCode
from customtools._format import escape_control
from customtools.cli._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    absolute_paths,
    add_discovery_arguments,
    display_path,
    load_failure,
    resolve_cwd,
    scan_options,
)
from customtools.cli._output import REPORT_VERSION, print_json

__all__ = ["add_parser", "command"]


def add_parser(subparsers: Any) -> None:
    """Register ``list``."""
    parser = subparsers.add_parser(
        "list",
        help="list discovered tools, metadata files and diagnostics",
        description="List every tool found in the provider directories, plugin roots,"
        " installed packages and --path entries, with where it came from. Exit status: 0 ok,"
        " 1 when something failed to load, 2 usage error.",
    )
    parser.add_argument(
        "--scan-only",
        action="store_true",
        help="list the tool modules that would load, without running any tool code",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="report format (default: text)"
    )
    add_discovery_arguments(parser)
    parser.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """Run ``list``; returns the exit status."""
    import functools

    import anyio

    from customtools._errors import TrustStoreError
    from customtools._loading._loader import load_scan, scan
    from customtools._loading._records import LoadError
    from customtools._loading._trust_store import TrustStore

    cwd = resolve_cwd(args)
    here = os.getcwd()
    args.paths = absolute_paths(args.paths)
    scanned = scan(args.paths, cwd, **scan_options(args))
    store = TrustStore(app_name=args.app_name)
    report: dict[str, Any] = {"version": REPORT_VERSION, "cwd": cwd, "scanOnly": args.scan_only}
    if args.scan_only:
        report["tools"] = None
        metadata, diagnostics, errors = scanned.metadata, scanned.diagnostics, scanned.errors
        try:
            pending = store.pending(scanned)
        except TrustStoreError as exc:
            errors += (LoadError(path=exc.path, error=str(exc), code=LoadCode.TRUST_STORE_ERROR),)
            pending = ()
            blocked = {id(c) for c in scanned.candidates if c.source.level == "project"}
        else:
            blocked = {id(c) for item in pending for c in item.source.candidates}
    else:
        load = functools.partial(load_scan, trust_store=store)
        try:
            result = anyio.run(load, scanned, cwd, tuple(args.builtins))
        except Exception as exc:  # tool code outwitted the loader
            raise load_failure(exc) from None
        report["tools"] = [_tool(loaded, here) for loaded in result.tools]
        metadata, diagnostics, errors = result.metadata, result.diagnostics, result.errors
        pending = result.pending_trust
        blocked = {id(c) for item in pending for c in item.source.candidates}
    report["candidates"] = [
        _candidate(item.to_dict(), here, _state(item.source.level, id(item) in blocked))
        for item in scanned.candidates
    ]
    report["pendingTrust"] = [_relative(item.to_dict(), here, "root") for item in pending]
    report["metadata"] = [_relative(item.to_dict(), here) for item in metadata]
    report["diagnostics"] = [_relative(item.to_dict(), here) for item in diagnostics]
    report["errors"] = [_relative(item.to_dict(), here) for item in errors]
    if args.format == "json":
        print_json(report)
    else:
        sys.stdout.write(_text(report))
    return EXIT_FINDINGS if errors else EXIT_OK


def _relative(item: dict[str, Any], here: str, key: str = "path") -> dict[str, Any]:
    if isinstance(item.get(key), str):
        item[key] = display_path(item[key], here)
    return item


def _state(level: str, blocked: bool) -> str:
    if level != "project":
        return "user"
    return "pending" if blocked else "trusted"


def _candidate(item: dict[str, Any], here: str, trust: str) -> dict[str, Any]:
    item["trust"] = trust
    return _relative(item, here) if item["kind"] != "entry_point" else item


def _tool(loaded: Any, here: str) -> dict[str, Any]:
    tool = loaded.tool
    return {
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "provider": loaded.source.provider,
        "level": loaded.source.level,
        "trust": _state(loaded.source.level, blocked=False),
        "path": display_path(loaded.path, here),
        "resolvedPath": loaded.resolved_path,
        "source": loaded.source.to_dict(),
        "hidden": tool.hidden,
        "strict": tool.strict,
        "formerNames": list(tool.former_names),
    }


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return escape_control(value)
    if isinstance(value, list):
        return [_escaped(item) for item in value]
    if isinstance(value, dict):
        return {key: _escaped(item) for key, item in value.items()}
    return value


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        out.append("  ".join(cells).rstrip())
    return out


def _text(report: dict[str, Any]) -> str:
    """The text report; every value is escaped (a file may be named ``a\\n::error::x.py``)."""
    from customtools._loading._trust import printable

    lines: list[str] = []
    report = _escaped(report)
    if report["tools"] is not None:
        rows = []
        for tool in report["tools"]:
            cells = [tool["provider"], tool["level"], tool["trust"], tool["path"]]
            rows.append([tool["name"], tool["label"], *cells])
            for former in tool["formerNames"]:  # deprecated aliases: still callable
                rows.append([former, f"(deprecated: renamed to {tool['name']})", *cells])
        if rows:
            lines += _table(rows, ["NAME", "LABEL", "PROVIDER", "LEVEL", "TRUST", "PATH"])
        else:
            lines.append("no tools found")
    else:
        rows = [
            [
                item["kind"],
                item["source"]["provider"],
                item["source"]["level"],
                item["trust"],
                item["path"],
            ]
            for item in report["candidates"]
        ]
        lines.append("scan only: these tool modules would load (no tool code was run)")
        if rows:
            lines += _table(rows, ["KIND", "PROVIDER", "LEVEL", "TRUST", "PATH"])
        else:
            lines.append("no tool modules found")
    if report["pendingTrust"]:
        lines += ["", "pending trust (not loaded; review and trust with `customtools trust`):"]
        for item in report["pendingTrust"]:
            lines.append(f"  [{item['status']}] {item['root']} ({item['provider']}):")
            lines += [f"      {printable(file['name'])}" for file in item["files"]]
            lines += [f"    changed: {change}" for change in item["changes"]]
            lines += [f"    cannot be trusted: {problem}" for problem in item.get("problems", ())]
            lines += [f"    WARNING: {warning}" for warning in item["warnings"]]
    if report["metadata"]:
        lines += ["", "metadata (described, never imported):"]
        for item in report["metadata"]:
            lines.append(f"  {item['name']}  {item['path']}  {item['description']}".rstrip())
    if report["errors"]:
        lines += ["", "errors:"]
        for item in report["errors"]:
            lines.append(f"  {item['path']}: [{item['code']}] {item['error']}")
    # Pending trust has its own section above.
    shown = [item for item in report["diagnostics"] if item["code"] != LoadCode.PENDING_TRUST]
    if shown:
        lines += ["", "diagnostics:"]
        for item in shown:
            lines.append(f"  [{item['code']}] {item['message']}")
    return "\n".join(lines) + "\n"
