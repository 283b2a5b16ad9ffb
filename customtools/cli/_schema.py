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
        " anthropic (Messages API tool), mcp (Model Context Protocol Tool, as `serve` lists"
        " it), definition (customtools' own wire form, CustomTool.to_dict()).",
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
        wire: dict[str, Any] = tool.to_dict()
        return wire
    return _export.to_json_schema(tool)


def command(args: argparse.Namespace) -> int:
    """Run ``schema``; returns the exit status."""
    from customtools import ToolRegistry
    from customtools.cli._common import load_tools

    cwd = resolve_cwd(args)
    result = load_tools(args, cwd)
    entry = ToolRegistry(result).lookup(args.name)  # a former name: its deprecated alias
    if entry is None:
        raise unknown_tool(args.name, result, os.getcwd())
    tool = entry.tool
    if args.format == "openai":
        from customtools._export import openai_strict_issues

        if tool.strict and openai_strict_issues(tool.parameters):
            warn(
                f"tool {args.name!r} asks for strict mode but its schema is outside OpenAI's"
                " strict subset; run `customtools validate` for the details"
            )
    print_json(export(tool, args.format))
    return EXIT_OK
