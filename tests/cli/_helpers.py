"""Helpers of the CLI tests: fixture paths, the outcome record, running the real command."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "tools"


@dataclass
class Outcome:
    """What one run of the command produced."""

    code: int
    out: str
    err: str


def subprocess_env() -> dict[str, str]:
    """Our environment, with this checkout importable first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_command(*argv: str, cwd: Path | None = None, timeout: float = 30) -> Outcome:
    """Run ``python -m customtools ARGV`` as a real process."""
    proc = subprocess.run(
        [sys.executable, "-m", "customtools", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=subprocess_env(),
        timeout=timeout,
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)
