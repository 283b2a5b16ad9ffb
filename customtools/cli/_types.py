"""``customtools types``: ``TypedDict`` classes for every tool's params and structured result."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from customtools.cli._common import EXIT_FINDINGS, EXIT_OK, UsageError, add_discovery_arguments

__all__ = ["add_parser", "command"]


def add_parser(subparsers: Any) -> None:
    """Register ``types``."""
    parser = subparsers.add_parser(
        "types",
        help="write TypedDict classes for the tools' parameters and results",
        description="Load the tools (like `list`) and write a Python module with a"
        " <Tool>Params TypedDict per tool (and <Tool>Result for tools with an output schema),"
        " for annotating `execute`'s params so a type checker knows each key's type."
        " With --check, compare with the file instead and exit 1 if it is out of date.",
    )
    parser.add_argument(
        "--output", "-o", metavar="FILE", help="write to FILE (default: standard output)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 (and say so) when --output differs from what would be written",
    )
    add_discovery_arguments(parser)
    parser.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """Run ``types``; returns the exit status."""
    from customtools._typegen import render_types
    from customtools.cli._common import load_tools, resolve_cwd

    if args.check and not args.output:
        raise UsageError("--check needs --output FILE: the file to compare with")
    result = load_tools(args, resolve_cwd(args))
    for error in result.errors:
        print(f"customtools types: {error.path}: {error.error}", file=sys.stderr)
    text = render_types(loaded.tool for loaded in result.tools)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as handle:
                current = handle.read()
        except OSError as exc:
            print(f"customtools types: cannot read {args.output}: {exc.strerror}", file=sys.stderr)
            return EXIT_FINDINGS
        if current != text:
            print(
                f"customtools types: {args.output} is out of date; run `customtools types"
                f" -o {args.output}` with the same options and commit the result",
                file=sys.stderr,
            )
            return EXIT_FINDINGS
        return EXIT_OK
    tmp = f"{args.output}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, args.output)
    return EXIT_OK
