"""``customtools init NAME``: scaffold a tool module and its test.

The module goes to ``DIR/NAME.py`` and its test to ``DIR/tests/test_NAME.py``: the test lives
one directory down because every ``*.py`` file directly in a tools directory is loaded as a
tool module (see ``docs/discovery.md``), and a test file there would fail to load. Both pass
``customtools validate --strict`` and ``pytest`` as generated.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from customtools.cli._common import EXIT_OK, UsageError
from customtools.cli._output import REPORT_VERSION, print_json

__all__ = ["add_parser", "command", "render_module", "render_test"]

_MODULE_TEMPLATE = '''\
"""{label}: a customtools tool module (scaffolded by `customtools init`; make it yours)."""

from __future__ import annotations

from typing import Any

from customtools import CustomTool, ToolResult


def factory(api: Any) -> CustomTool:
    """Build the {name!r} tool; the host calls this once per load with its API object."""
    Type = api.typebox  # noqa: N806 - the schema builder, customtools.Type

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        text = params["text"]
        on_update(ToolResult.from_text(f"counting the words of {{len(text)}} characters ..."))
        signal.raise_if_aborted()  # long work should check the signal, or pass it on
        words = len(text.split())
        return ToolResult.from_text(f"{{words}} word(s)", details={{"words": words}})

    return CustomTool(
        name={name!r},
        label={label!r},
        description=(
            "Counts the words in a text. Replace this with what the tool does and when the"
            " model should call it."
        ),
        parameters=Type.Object({{"text": Type.String(description="the text to count")}}),
        execute=execute,
    )
'''

_TEST_TEMPLATE = '''\
"""Tests of the {name!r} tool (scaffolded by `customtools init`; see docs/testing.md)."""

from __future__ import annotations

from pathlib import Path

from customtools.testing import assert_error, assert_ok, load_pack_sync

TOOL_MODULE = (Path(__file__).resolve().parent / {module_file!r}).resolve()


def test_{ident}_counts_words() -> None:
    call = load_pack_sync(TOOL_MODULE).call_sync({name!r}, {{"text": "to be or not to be"}})
    assert_ok(call)
    assert call.result.details == {{"words": 6}}
    assert call.update_texts == ["counting the words of 18 characters ..."]


def test_{ident}_rejects_missing_text() -> None:
    call = load_pack_sync(TOOL_MODULE).call_sync({name!r}, {{}})
    assert_error(call, match="text")
'''


def add_parser(subparsers: Any) -> None:
    """Register ``init``."""
    parser = subparsers.add_parser(
        "init",
        help="scaffold a tool module and its test",
        description="Write DIR/NAME.py (a working tool module) and DIR/tests/test_NAME.py"
        " (its pytest test). Existing files are never overwritten without --force.",
    )
    parser.add_argument("name", metavar="NAME", help="the tool's name (1-64 of a-z A-Z 0-9 _ -)")
    parser.add_argument(
        "--dir", default=".", metavar="D", help="the tools directory (default: the current one)"
    )
    parser.add_argument("--test-dir", metavar="T", help="where the test goes (default: D/tests)")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="report format (default: text)"
    )
    parser.set_defaults(handler=command)


def _label(name: str) -> str:
    words = name.replace("-", " ").replace("_", " ").split()
    return " ".join(words).capitalize() if words else name


def render_module(name: str) -> str:
    """The source of a new tool module called ``name``."""
    return _MODULE_TEMPLATE.format(name=name, label=_label(name))


def render_test(name: str, module_file: str) -> str:
    """The source of the test of tool ``name`` whose module is ``../module_file``."""
    ident = name.replace("-", "_")
    return _TEST_TEMPLATE.format(name=name, ident=ident, module_file=module_file)


def _check_name(name: str) -> None:
    from customtools import ToolDefinitionError, check_tool_name

    try:
        check_tool_name(name)
    except ToolDefinitionError as exc:
        raise UsageError(str(exc)) from None
    if name.startswith(("_", "-")):
        raise UsageError(
            f"tool name {name!r} starts with {name[0]!r}: a module file named so is skipped by"
            " the scan (or reads as an option); start the name with a letter or digit"
        )


def command(args: argparse.Namespace) -> int:
    """Run ``init``; returns the exit status."""
    _check_name(args.name)
    directory = os.path.abspath(args.dir)
    test_dir = os.path.abspath(args.test_dir) if args.test_dir else os.path.join(directory, "tests")
    module_path = os.path.join(directory, f"{args.name}.py")
    test_path = os.path.join(test_dir, f"test_{args.name.replace('-', '_')}.py")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"--dir {args.dir!r} is not a directory")
    existing = [path for path in (module_path, test_path) if os.path.lexists(path)]
    if existing and not args.force:
        raise UsageError(
            "refusing to overwrite " + ", ".join(existing) + "; pass --force to replace"
        )
    module_file = os.path.relpath(module_path, os.path.dirname(test_path))
    files = {module_path: render_module(args.name), test_path: render_test(args.name, module_file)}
    for path, text in files.items():
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc}") from None
    here = os.getcwd()
    shown = [os.path.relpath(path, here) for path in files]
    if args.format == "json":
        print_json({"version": REPORT_VERSION, "created": shown, "tool": args.name})
    else:
        for path in shown:
            print(f"created {path}")
        print(
            f"next: customtools validate --strict {os.path.relpath(directory, here)}"
            f"  and  pytest {shown[1]}",
            file=sys.stderr,
        )
    return EXIT_OK
