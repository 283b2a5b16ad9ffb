"""docs/trust.md: its host example is a real file, run here, and prints what the page shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "trust.md").read_text(encoding="utf-8")
EXAMPLE = ROOT / "docs" / "examples" / "host_trust.py"


def test_the_trust_host_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout in DOC


def test_the_page_quotes_the_example_file() -> None:
    source = EXAMPLE.read_text(encoding="utf-8")
    start = source.index("    result = await discover_and_load(cwd=project")
    quoted = source[start : source.index("\n\n", start)]
    assert quoted in DOC
