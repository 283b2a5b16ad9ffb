"""The example in docs/host-toolkit.md runs and prints what the page says it prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "host-toolkit.md"


def test_host_toolkit_example_runs_and_prints_what_its_comments_say(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert blocks, "docs/host-toolkit.md lost its example"
    source = "\n".join(blocks)
    script = tmp_path / "example.py"
    script.write_text(source, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "HOME": str(tmp_path)},  # only the example pack is discovered
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Each print is followed by a "# <output>" comment line, or a trailing "# <output>".
    promised = re.findall(r"^# (\[.*\])$|print\(.*\)\s+# (.*)$", source, re.M)
    expected = [a or b for a, b in promised]
    assert done.stdout.splitlines() == expected
    assert expected[2] == "client web runTests"
