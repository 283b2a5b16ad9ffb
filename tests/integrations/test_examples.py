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


@pytest.mark.parametrize(
    ("heading", "name"),
    [
        ("## pydantic-ai", "pydantic_ai_agent.py"),
        ("## LangChain / LangGraph", "langgraph_agent.py"),
        ("## OpenAI Agents SDK", "openai_agents_agent.py"),
    ],
)
def test_the_five_line_versions_are_lines_of_the_tested_examples(heading: str, name: str) -> None:
    doc = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = doc.split(heading, 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None
    example = (ROOT / "examples" / "integrations" / name).read_text(encoding="utf-8")
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    assert len(lines) <= 6
    for line in lines:
        assert line in example, line
