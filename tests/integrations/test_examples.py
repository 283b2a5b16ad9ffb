"""The framework examples under examples/integrations run and use the example pack."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name", ["pydantic_ai_agent.py", "langgraph_agent.py", "openai_agents_agent.py"]
)
def test_the_framework_example_runs_the_tool(name: str, tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}  # keep the developer's own tools out
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "integrations" / name)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("counted: ")
    assert re.search(r"""["']words["']: 5""", last), last
