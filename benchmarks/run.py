"""Run every benchmark in turn (``make bench``); each prints its own figures and targets.

The benchmarks are not part of the test run: timing targets belong here, measured as ratios
against a baseline taken in the same run (see docs/performance.md).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    "bench_adapter.py",
    "bench_validation.py",
    "bench_scan.py",
    "bench_load.py",
    "bench_authoring.py",
    "bench_frontmatter.py",
    "bench_mcp.py",
    "bench_isolation.py",
    "bench_sandbox.py",
    "bench_telemetry.py",
    "bench_reload.py",
    "bench_cancel.py",
    "bench_contract.py",
]


def main() -> int:
    failed = 0
    for name in BENCHMARKS:
        print(f"\n=== {name} ===", flush=True)
        failed |= subprocess.run([sys.executable, str(HERE / name)], check=False).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
