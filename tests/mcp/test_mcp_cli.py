"""``customtools serve``'s command line, and what importing customtools costs."""

from __future__ import annotations

import subprocess
import sys

import pytest
from mcp_helpers import ROOT, child_env

from customtools.cli import run
from customtools.cli._common import UsageError
from customtools.cli._serve import parse_address


def test_serve_help_works() -> None:
    assert run(["serve", "--help"]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--http", "nowhere"], "expected HOST:PORT"),
        (["serve", "--http", "127.0.0.1:http"], "is not a number"),
        (["serve", "--http", "127.0.0.1:70000"], "between 0 and 65535"),
        (["serve", "--stateless"], "--stateless applies to --http only"),
        (["serve", "--timeout", "0"], "positive number"),
    ],
)
def test_bad_options_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(argv) == 2
    assert message in capsys.readouterr().err


def test_addresses_parse_ipv4_and_bracketed_ipv6() -> None:
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_address("[::1]:8000") == ("::1", 8000)
    with pytest.raises(UsageError):
        parse_address(":80")


def test_importing_customtools_and_loading_tools_imports_no_web_stack() -> None:
    code = (
        "import sys, anyio, customtools, customtools.cli\n"
        "from customtools import discover_and_load\n"
        "customtools.cli._parser()\n"
        "anyio.run(discover_and_load, ['examples/tools'])\n"
        "heavy = ('mcp', 'mcp_types', 'starlette', 'uvicorn', 'pydantic', 'httpx2')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.strip() == "[]"
