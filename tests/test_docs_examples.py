"""The examples in README.md and docs/ are real files: run them and check what they print."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from customtools import CustomToolAdapter, load_custom_tools

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def run_python(args: list[str], tmp_path: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(tmp_path)}  # keep the developer's own tools out
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        **kwargs,
    )


def test_readme_example_runs_and_greets(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", readme, re.DOTALL)
    assert block is not None
    out = run_python(["-c", block.group(1)], tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "Hello, Ada!"
    assert "thinking..." in lines[0]


def test_readme_example_is_the_quickstart_file() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = (DOCS / "examples" / "quickstart.py").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", readme, re.DOTALL)
    assert block is not None
    code_lines = [line.strip() for line in quickstart.splitlines()]
    for line in block.group(1).splitlines():
        if line.strip():
            assert any(line.strip() in c or c in line.strip() for c in code_lines if c), line


def test_quickstart_runs(tmp_path: Path) -> None:
    out = run_python([str(DOCS / "examples" / "quickstart.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "Hello, Ada!"


def test_ten_line_host_runs_against_the_example_pack(tmp_path: Path) -> None:
    out = run_python([str(DOCS / "examples" / "host_minimal.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "tool failed to load" not in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "countdown: finished 2 steps"


def test_hosting_doc_shows_the_tested_file() -> None:
    hosting = (DOCS / "hosting.md").read_text(encoding="utf-8")
    assert (DOCS / "examples" / "host_minimal.py").read_text(encoding="utf-8") in hosting


def test_reload_host_example_sees_an_edit(tmp_path: Path) -> None:
    pytest.importorskip("watchfiles")
    out = run_python([str(DOCS / "examples" / "host_reload.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["hello", "hello again"]
    hosting = (DOCS / "hosting.md").read_text(encoding="utf-8")
    assert (DOCS / "examples" / "host_reload.py").read_text(encoding="utf-8") in hosting


def test_demo_runs(tmp_path: Path) -> None:
    out = run_python([str(ROOT / "examples" / "demo.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "update: countdown: step 4/4" in out.stdout
    assert "(metadata only: weather.md)" in out.stdout


@pytest.mark.anyio
async def test_authoring_guide_module_loads_and_runs() -> None:
    result = await load_custom_tools([DOCS / "examples" / "authoring_tool.py"], ROOT)
    assert result.errors == ()
    tools = {loaded.tool.name: CustomToolAdapter(loaded.tool) for loaded in result.tools}
    assert sorted(tools) == ["shout", "word_count"]

    updates: list[Any] = []
    counted = await tools["word_count"].execute(
        "c1", {"text": "To be or not to be", "report_every": 2}, on_update=updates.append
    )
    assert counted.text == "be=2, to=2, not=1"
    assert counted.details == {"total": 6, "distinct": 4}
    assert [u.text for u in updates] == ["2/6 words", "4/6 words", "6/6 words"]

    assert (await tools["shout"].execute("c2", {"text": "hi"})).text == "HI"
    blank = await tools["shout"].execute("c3", {"text": "  "})
    assert blank.is_error
    assert blank.text == "ValueError: nothing to shout: 'text' is blank"
    missing = await tools["shout"].execute("c4", {})
    assert missing.is_error
    assert '(root): "text" is a required property' in missing.text
