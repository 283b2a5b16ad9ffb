"""``customtools list``: every discovered tool, metadata file and diagnostic.

With ``--scan-only`` nothing is imported: the report lists the tool modules that *would* load
(``customtools.loading.scan``), which is the safe way to look at an untrusted checkout.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

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
    import anyio

    from customtools._loading._loader import load_scan, scan

    cwd = resolve_cwd(args)
    here = os.getcwd()
    args.paths = absolute_paths(args.paths)
    scanned = scan(args.paths, cwd, **scan_options(args))
    report: dict[str, Any] = {"version": REPORT_VERSION, "cwd": cwd, "scanOnly": args.scan_only}
    report["candidates"] = [_candidate(item.to_dict(), here) for item in scanned.candidates]
    if args.scan_only:
        report["tools"] = None
        metadata, diagnostics, errors = scanned.metadata, scanned.diagnostics, scanned.errors
    else:
        try:
            result = anyio.run(load_scan, scanned, cwd, tuple(args.builtins))
        except Exception as exc:  # tool code outwitted the loader
            raise load_failure(exc) from None
        report["tools"] = [_tool(loaded, here) for loaded in result.tools]
        metadata, diagnostics, errors = result.metadata, result.diagnostics, result.errors
    report["metadata"] = [_relative(item.to_dict(), here) for item in metadata]
    report["diagnostics"] = [_relative(item.to_dict(), here) for item in diagnostics]
    report["errors"] = [_relative(item.to_dict(), here) for item in errors]
    if args.format == "json":
        print_json(report)
    else:
        sys.stdout.write(_text(report))
    return EXIT_FINDINGS if errors else EXIT_OK


def _relative(item: dict[str, Any], here: str) -> dict[str, Any]:
    if isinstance(item.get("path"), str):
        item["path"] = display_path(item["path"], here)
    return item


def _candidate(item: dict[str, Any], here: str) -> dict[str, Any]:
    return _relative(item, here) if item["kind"] != "entry_point" else item


def _tool(loaded: Any, here: str) -> dict[str, Any]:
    tool = loaded.tool
    return {
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "provider": loaded.source.provider,
        "level": loaded.source.level,
        "path": display_path(loaded.path, here),
        "resolvedPath": loaded.resolved_path,
        "source": loaded.source.to_dict(),
        "hidden": tool.hidden,
        "strict": tool.strict,
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
    lines: list[str] = []
    report = _escaped(report)
    if report["tools"] is not None:
        rows = [
            [tool["name"], tool["label"], tool["provider"], tool["level"], tool["path"]]
            for tool in report["tools"]
        ]
        if rows:
            lines += _table(rows, ["NAME", "LABEL", "PROVIDER", "LEVEL", "PATH"])
        else:
            lines.append("no tools found")
    else:
        rows = [
            [item["kind"], item["source"]["provider"], item["source"]["level"], item["path"]]
            for item in report["candidates"]
        ]
        lines.append("scan only: these tool modules would load (no tool code was run)")
        if rows:
            lines += _table(rows, ["KIND", "PROVIDER", "LEVEL", "PATH"])
        else:
            lines.append("no tool modules found")
    if report["metadata"]:
        lines += ["", "metadata (described, never imported):"]
        for item in report["metadata"]:
            lines.append(f"  {item['name']}  {item['path']}  {item['description']}".rstrip())
    if report["errors"]:
        lines += ["", "errors:"]
        for item in report["errors"]:
            lines.append(f"  {item['path']}: [{item['code']}] {item['error']}")
    if report["diagnostics"]:
        lines += ["", "diagnostics:"]
        for item in report["diagnostics"]:
            lines.append(f"  [{item['code']}] {item['message']}")
    return "\n".join(lines) + "\n"
