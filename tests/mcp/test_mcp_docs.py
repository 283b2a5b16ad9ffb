"""docs/mcp.md: its examples are real files, and they run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_helpers import ROOT

DOC = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
EXAMPLES = ROOT / "docs" / "examples"


def run_example(name: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


@pytest.mark.parametrize("name", ["mcp_embed.py", "mcp_mount.py"])
def test_the_code_blocks_are_the_example_files(name: str) -> None:
    source = (EXAMPLES / name).read_text(encoding="utf-8")
    body = source.split('"""', 2)[2].strip()
    blocks = [b.strip() for b in re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)]
    assert body in blocks


def test_the_embedding_example_serves_and_calls(tmp_path: Path) -> None:
    out = run_example("mcp_embed.py", tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("tools: countdown, notes, ")
    assert lines[1:] == [
        "progress 1: countdown: step 1/2",
        "progress 2: countdown: step 2/2",
        "result: countdown: finished 2 steps",
        "error result: True",
    ]


def test_the_mount_example_mounts_the_served_examples(tmp_path: Path) -> None:
    out = run_example("mcp_mount.py", tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("mounted: mcp__examples__")
    assert "mcp__examples__countdown" in lines[0]
    assert lines[1] == "result: a 32x32 swatch of #336699"
    assert "problem:" not in out.stderr
