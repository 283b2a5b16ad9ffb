"""Isolated project code runs only as it was trusted, at the load and at every restart.

The host hashes a project source when the user trusts it and sends those hashes with each
``load``; the worker checks every import against them. A file edited after the grant is
refused when a crashed or killed worker is started again: the module's tools answer
``changed-since-trusted`` instead of running the edit, plain and sandboxed.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from customtools import CustomToolAdapter, discover_and_load
from customtools._isolation._confine import landlock_abi
from customtools._isolation._pool import IsolationPool

from ._helpers import options

pytestmark = pytest.mark.anyio

TOOL = textwrap.dedent(
    """
    import os
    from customtools import tool

    @tool
    def hello() -> str:
        \"\"\"Say hello.\"\"\"
        return "reviewed"

    @tool
    def crash() -> str:
        \"\"\"End the worker.\"\"\"
        os._exit(3)
    """
)

EDIT = textwrap.dedent(
    """
    @tool
    def hello() -> str:
        \"\"\"Say hello.\"\"\"
        return "UNREVIEWED"
    """
)


async def _yes(pending: object) -> bool:
    return True


@pytest.mark.parametrize(
    "sandbox",
    [
        False,
        pytest.param(
            True,
            marks=pytest.mark.skipif(
                not sys.platform.startswith("linux") or landlock_abi() < 4,
                reason="needs Linux with Landlock ABI >= 4",
            ),
        ),
    ],
    ids=["plain", "sandboxed"],
)
async def test_a_restarted_worker_refuses_a_module_edited_after_the_grant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: bool
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    tools = project / ".claude" / "tools"
    tools.mkdir(parents=True)
    module = tools / "t.py"
    module.write_text(TOOL)
    async with IsolationPool(**options()) as pool:
        result = await discover_and_load(
            cwd=project, home=home, entry_points=False, trust=_yes, isolation=pool, sandbox=sandbox
        )
        assert sorted(result.tool_names) == ["crash", "hello"], result.errors
        hello = CustomToolAdapter(result.get("hello").tool)  # type: ignore[union-attr]
        crash = CustomToolAdapter(result.get("crash").tool)  # type: ignore[union-attr]
        assert (await hello.execute("1", {})).text == "reviewed"
        module.write_text(TOOL + EDIT)  # after the grant: an agent's edit, a git pull
        crashed = await crash.execute("2", {})
        assert crashed.details["code"] == "worker-crashed"

        after = await hello.execute("3", {})

        assert after.is_error
        assert after.details["error"] == "UnreviewedCode"
        assert after.details["code"] == "changed-since-trusted"
        assert after.details["path"] == str(module.resolve())
        assert "changed since it was trusted" in after.text
        assert "to be asked to trust it again" in after.text
        assert not pool.pids  # no worker runs the edit
        again = await hello.execute("4", {})  # dead: nothing is started again
        assert again.details["code"] == "changed-since-trusted"
        assert not pool.pids


async def test_a_restart_still_imports_the_module_as_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    tools = project / ".claude" / "tools"
    tools.mkdir(parents=True)
    (tools / "t.py").write_text(TOOL)
    async with IsolationPool(**options()) as pool:
        result = await discover_and_load(
            cwd=project, home=home, entry_points=False, trust=_yes, isolation=pool
        )
        hello = CustomToolAdapter(result.get("hello").tool)  # type: ignore[union-attr]
        crash = CustomToolAdapter(result.get("crash").tool)  # type: ignore[union-attr]
        assert (await crash.execute("1", {})).details["code"] == "worker-crashed"
        assert (await hello.execute("2", {})).text == "reviewed"
