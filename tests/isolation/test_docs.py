"""docs/isolation.md's example is a real file: run it and check what it prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ROOT / "docs"


@pytest.mark.skipif(os.name != "posix", reason="process isolation needs POSIX")
def test_the_isolation_example_survives_a_segfault_and_prints_what_the_doc_says(
    tmp_path: Path,
) -> None:
    out = subprocess.run(
        [sys.executable, str(DOCS / "examples" / "isolation_host.py")],
        cwd=ROOT,
        env={**os.environ, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    doc = (DOCS / "isolation.md").read_text(encoding="utf-8")
    printed = re.search(r"it prints:\n\n```text\n(.*?)```", doc, re.DOTALL)
    assert printed is not None
    assert out.stdout.splitlines() == printed.group(1).splitlines()


def test_the_doc_snippet_is_taken_from_the_example() -> None:
    doc = (DOCS / "isolation.md").read_text(encoding="utf-8")
    example = (DOCS / "examples" / "isolation_host.py").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", doc, re.DOTALL)
    assert block is not None
    lines = [line.strip() for line in example.splitlines()]
    for line in block.group(1).splitlines():
        if line.strip():
            assert line.strip() in lines, line


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock is Linux only")
def test_the_sandbox_example_prints_what_the_doc_says(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(DOCS / "examples" / "sandbox_host.py")],
        cwd=ROOT,
        env={**os.environ, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    doc = (DOCS / "sandbox.md").read_text(encoding="utf-8")
    printed = re.search(r"it prints:\n\n```text\n(.*?)```", doc, re.DOTALL)
    assert printed is not None
    assert out.stdout.splitlines() == printed.group(1).splitlines()
    example = (DOCS / "examples" / "sandbox_host.py").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", doc, re.DOTALL)
    assert block is not None
    lines = [line.strip() for line in example.splitlines()]
    for line in block.group(1).splitlines():
        if line.strip():
            assert line.strip() in lines, line
