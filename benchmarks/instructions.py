"""Instructions per call of the policy's hot paths, counted by cachegrind: deterministic where
a shared machine's clock is not. The figures quoted in docs/performance.md's policy prose.

    python benchmarks/instructions.py            # needs valgrind; takes about a minute

Each case runs in a child process twice, with 0 and with N calls after a warm-up, under
``valgrind --tool=cachegrind`` and ``PYTHONHASHSEED=0``; the difference over N is one call.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import asyncio, sys
sys.path.insert(0, {bench!r})
from _harness import SCHEMA, VALID
from customtools import CustomTool, CustomToolAdapter, ToolContext
from customtools.policy import Policy

async def execute(tool_call_id, params, on_update, ctx, signal):
    return "ok"

async def bare(path, limit, mode, tags=None):
    return "ok"

case, n = sys.argv[1], int(sys.argv[2])
policies = {{
    "valid call, no policy": None,
    "one cap": Policy(max_concurrent=8),
    "tool and host caps": Policy(max_concurrent=8, max_concurrent_host=64),
    "tool, pack and host caps": Policy(
        max_concurrent=8, max_concurrent_pack=16, max_concurrent_host=64
    ),
    "cache hit": Policy(),
}}
hints = {{"readOnlyHint": True, "idempotentHint": True}} if case == "cache hit" else None
tool = CustomTool(name="read_file", parameters=SCHEMA, execute=execute, annotations=hints)
options = {{"policy": policies[case]}} if policies.get(case) else {{}}
adapter = CustomToolAdapter(tool, context=ToolContext(caller="bench"), **options)

async def main():
    for _ in range(2):
        await adapter.execute("c", VALID)
    if case == "bare await":
        for _ in range(n):
            await bare(**VALID)
    else:
        for _ in range(n):
            await adapter.execute("c", VALID)

asyncio.run(main())
"""

CASES = (
    "bare await",
    "valid call, no policy",
    "one cap",
    "tool and host caps",
    "tool, pack and host caps",
    "cache hit",
)


def count(case: str, calls: int) -> int:
    """Instructions of one child process that makes ``calls`` calls of ``case``."""
    code = CHILD.format(bench=str(ROOT / "benchmarks"))
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT)}
    valgrind = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
    ]
    out = subprocess.run(
        [*valgrind, sys.executable, "-c", code, case, str(calls)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    found = re.search(r"I\s+refs:\s+([\d,]+)", out)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind for {case!r}:\n{out[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    jobs = [(case, calls) for case in CASES for calls in (0, args.calls)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        totals = dict(zip(jobs, pool.map(lambda job: count(*job), jobs), strict=True))
    per_call = {case: (totals[case, args.calls] - totals[case, 0]) // args.calls for case in CASES}
    plain, bare = per_call["valid call, no policy"], per_call["bare await"]
    print("| case | instructions per call | × valid call | × bare await |")
    print("|---|---:|---:|---:|")
    for case, value in per_call.items():
        print(f"| {case} | {value:,} | {value / plain:.3f} | {value / bare:.2f} |")


if __name__ == "__main__":
    main()
