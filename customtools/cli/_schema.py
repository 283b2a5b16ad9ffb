"""``customtools schema NAME``: one tool's definition in a provider's tool format."""

from __future__ import annotations

import argparse
import os
from typing import Any

from customtools.cli._common import (
    EXIT_OK,
    add_discovery_arguments,
    resolve_cwd,
    unknown_tool,
    warn,
)
from customtools.cli._output import print_json

__all__ = ["add_parser", "command"]

FORMATS = ("json-schema", "openai", "openai-responses", "anthropic", "mcp", "definition")


def add_parser(subparsers: Any) -> None:
    """Register ``schema``."""
    parser = subparsers.add_parser(
        "schema",
        help="print a tool's definition in a provider's tool format",
        description="Load the tools (like `list`) and print one tool's definition as JSON."
        " Formats: json-schema (the arguments as a JSON Schema document), openai (Chat"
        " Completions function tool), openai-responses (Responses API function tool),"
        " anthropic (Messages API tool), mcp (Model Context Protocol Tool), definition"
        " (customtools' own form).",
    )
    parser.add_argument("name", metavar="NAME", help="the tool's name")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="json-schema",
        help="the output format (default: %(default)s)",
    )
    add_discovery_arguments(parser)
    parser.set_defaults(handler=command)


def export(tool: Any, fmt: str) -> dict[str, Any]:
    """``tool``'s definition in ``fmt`` (one of :data:`FORMATS`)."""
    from customtools import _export

    if fmt == "openai":
        return _export.to_openai(tool)
    if fmt == "openai-responses":
        return _export.to_openai(tool, api="responses")
    if fmt == "anthropic":
        return _export.to_anthropic(tool)
    if fmt == "mcp":
        return _export.to_mcp(tool)
    if fmt == "definition":
        definition: dict[str, Any] = tool.definition()
        return definition
    return _export.to_json_schema(tool)


def command(args: argparse.Namespace) -> int:
    """Run ``schema``; returns the exit status."""
    from customtools.cli._common import load_tools

    cwd = resolve_cwd(args)
    result = load_tools(args, cwd)
    loaded = result.get(args.name)
    if loaded is None:
        raise unknown_tool(args.name, result, os.getcwd())
    if args.format == "openai":
        from customtools._export import openai_strict_issues

        if loaded.tool.strict and openai_strict_issues(loaded.tool.parameters):
            warn(
                f"tool {args.name!r} asks for strict mode but its schema is outside OpenAI's"
                " strict subset; run `customtools validate` for the details"
            )
    print_json(export(loaded.tool, args.format))
    return EXIT_OK
