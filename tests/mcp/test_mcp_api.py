"""The ``customtools.mcp`` namespace: its ``__all__``, public homes, and a missing SDK."""

from __future__ import annotations

import inspect
import subprocess
import sys

from mcp_helpers import ROOT, child_env

import customtools.mcp


def test_all_lists_exactly_the_public_names() -> None:
    for name in customtools.mcp.__all__:  # the Redis names load on first use
        getattr(customtools.mcp, name)
    public = {name for name in vars(customtools.mcp) if not name.startswith("_")}
    modules = {name for name in public if inspect.ismodule(getattr(customtools.mcp, name))}
    assert sorted(customtools.mcp.__all__) == sorted(public - modules - {"annotations"})


def test_classes_and_functions_say_customtools_mcp_is_their_home() -> None:
    for name in customtools.mcp.__all__:
        obj = getattr(customtools.mcp, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__ == "customtools.mcp", name


def _without_sdk(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['mcp'] = None\n" + code],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_the_sdk_the_import_error_names_the_extra() -> None:
    out = _without_sdk("import customtools.mcp")
    assert out.returncode == 1
    assert "pip install 'customtools[mcp]'" in out.stderr.splitlines()[-1]


def test_without_the_sdk_serve_is_one_line_and_exit_2() -> None:
    out = _without_sdk("from customtools.cli import run; sys.exit(run(['serve']))")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "customtools serve: customtools.mcp needs the MCP SDK, which is not installed:"
        " pip install 'customtools[mcp]'"
    ]
