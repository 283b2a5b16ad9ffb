"""docs/actions.md: its examples are real files, and running them gives what the page says."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from customtools.actions import ActionDispatcher, Display, Session, find_plugins

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "actions.md"
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("actions_*.py"))
FIXTURE_ROOTS = Path(__file__).parent / "fixtures" / "roots"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_docs_example_{path.stem}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def _in_file(block: str, path: Path) -> bool:
    want = textwrap.dedent(block).rstrip().splitlines()
    lines = path.read_text().splitlines()
    return any(
        textwrap.dedent("\n".join(lines[i : i + len(want)])).splitlines() == want
        for i in range(len(lines) - len(want) + 1)
    )


def test_every_python_block_is_taken_from_an_executed_example() -> None:
    blocks = _python_blocks(DOC.read_text())
    assert len(blocks) >= 6
    for block in blocks:
        assert any(_in_file(block, path) for path in EXAMPLES), block[:200]


def test_documented_output_matches_the_walkthrough() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "examples" / "actions_walkthrough.py")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert proc.stdout.strip()
    assert proc.stdout.strip() in DOC.read_text()


@pytest.mark.anyio
async def test_walkthrough_manual_display_and_request_prepare_repair() -> None:
    result: dict[str, Any] = await _load(EXAMPLES_BY_NAME["actions_walkthrough"]).main()
    assert result["overrides"]["model"] == "small"
    assert result["overrides"]["prompt_cache_key"].startswith("pc-")
    assert result["changed_again"] is False
    display = Display.from_dict(result["display"])
    assert display.title == "Log in"
    assert [a.kind for a in display.actions] == ["open_url", "copy_text", "run_action"]
    assert result["payload"] == {"login_code": "ABCD-EFGH"}
    assert result["trigger_source"] == "manual"


@pytest.mark.anyio
async def test_display_follow_up_action_runs_the_named_action() -> None:
    module = _load(EXAMPLES_BY_NAME["actions_walkthrough"])
    dispatcher = ActionDispatcher(module.plugins())
    first = await dispatcher.execute_action("device_login", "start_login", Session(id="s"), {})
    assert first.display is not None
    follow = first.display.actions[2]
    second = await dispatcher.execute_action(follow.plugin, follow.action_id, Session(id="s"), {})
    assert second.display is not None
    assert second.display.body == "Still waiting for you to log in."


def test_walkthrough_file_is_a_valid_plugin_module(tmp_path: Path) -> None:
    root = tmp_path / "pack"
    root.mkdir()
    shutil.copy(EXAMPLES_BY_NAME["actions_walkthrough"], root / "actions.py")
    found = find_plugins([root], entry_points=False)
    assert found.errors == ()
    assert [(p.name, p.kind) for p in found.plugins] == [
        ("device_login", "application"),
        ("prompt_cache", "session"),
    ]


@pytest.mark.anyio
async def test_host_example_runs_lifecycles_and_reports_load_errors() -> None:
    module = _load(EXAMPLES_BY_NAME["actions_host"])
    result = await module.main([str(FIXTURE_ROOTS / "flat_pack"), str(FIXTURE_ROOTS / "exits")])
    assert result["plugins"] == ["flat_auth", "flat_cache"]
    assert len(result["errors"]) == 1
    assert "SystemExit: 3" in result["errors"][0]
    assert result["manual_actions"] == ["flat_auth.login"]
    assert result["saved"]["s-1"]["metadata"] == {"overrides": {"cache": "on"}}


EXAMPLES_BY_NAME = {path.stem: path for path in EXAMPLES}
