"""The execution policy's cost: a valid call with no policy, with caps (uncontended), and a
cache hit, against a bare ``await`` measured alongside.

    python benchmarks/bench_policy.py                      # this tree, one process
    python benchmarks/bench_policy.py --baseline /tmp/old  # and an older tree's adapter

With ``--baseline``, the adapter's valid call is also timed in child processes, this tree's
and the older tree's (an exported checkout put first on ``PYTHONPATH``) taking turns, so the
"policy off" ratio compares the two in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import SCHEMA, VALID, Case, compile_case, fmt_time, measure

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import asyncio, json, sys
sys.path.insert(0, {bench!r})
from _harness import SCHEMA, VALID, Case, compile_case, measure
from customtools import CustomTool, CustomToolAdapter

async def execute(tool_call_id, params, on_update, ctx, signal):
    return "ok"

async def main():
    adapter = CustomToolAdapter(CustomTool(name="read_file", parameters=SCHEMA, execute=execute))
    await adapter.execute("c", VALID)
    case = Case("valid", compile_case('await adapter.execute("c", VALID)', {{"adapter": adapter, "VALID": VALID}}))
    await measure([case], repeats={repeats})
    print(json.dumps(case.best))

asyncio.run(main())
"""


async def bare(path: str, limit: int, mode: str, tags: list[str] | None = None) -> str:
    return "ok"


async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    return "ok"


async def in_process(repeats: int) -> dict[str, Case]:
    from customtools import CustomTool, CustomToolAdapter, ToolContext
    from customtools.policy import Policy

    def adapter(**options: Any) -> CustomToolAdapter:
        annotations = options.pop("annotations", None)
        tool = CustomTool(
            name="read_file", parameters=SCHEMA, execute=execute, annotations=annotations
        )
        return CustomToolAdapter(tool, **options)

    ns: dict[str, Any] = {
        "bare": bare,
        "VALID": VALID,
        "plain": adapter(),
        "cap": adapter(policy=Policy(max_concurrent=8)),
        "caps": adapter(policy=Policy(max_concurrent=8, max_concurrent_host=64)),
        "cached": adapter(
            policy=Policy(),
            annotations={"readOnlyHint": True, "idempotentHint": True},
            context=ToolContext(caller="bench"),
        ),
    }
    for name in ("plain", "cap", "caps", "cached"):
        result = await ns[name].execute("c", VALID)
        assert result.text == "ok", result
    hit = await ns["cached"].execute("c", VALID)
    assert hit.meta["customtools/policy"] == {"cache": "hit"}, hit.meta
    cases = [
        Case("baseline: await fn(**params)", compile_case("await bare(**VALID)", ns)),
        Case("adapter, no policy (valid)", compile_case('await plain.execute("c", VALID)', ns)),
        Case("adapter, one cap, uncontended", compile_case('await cap.execute("c", VALID)', ns)),
        Case("adapter, tool + host caps", compile_case('await caps.execute("c", VALID)', ns)),
        Case("adapter, cache hit", compile_case('await cached.execute("c", VALID)', ns)),
    ]
    await measure(cases, repeats=repeats)
    return {case.name: case for case in cases}


def against_baseline(baseline: str, rounds: int, repeats: int) -> tuple[float, float]:
    """Best valid-call time of this tree and of ``baseline``, child processes taking turns."""
    code = CHILD.format(bench=str(ROOT / "benchmarks"), repeats=repeats)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    best = {"new": float("inf"), "old": float("inf")}
    for _ in range(rounds):
        for label, path in (("new", str(ROOT)), ("old", baseline)):
            out = subprocess.run(
                [sys.executable, "-c", code],
                env={**env, "PYTHONPATH": path},
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            best[label] = min(best[label], float(out.strip().splitlines()[-1]))
    return best["new"], best["old"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--baseline", metavar="DIR", help="an older tree to compare against")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print a JSON summary too")
    args = parser.parse_args()

    cases = asyncio.run(in_process(args.repeats))
    base = cases["baseline: await fn(**params)"].best
    plain = cases["adapter, no policy (valid)"].best
    print(f"Python {sys.version.split()[0]}; best of {args.repeats} round-robin repeats")
    print(f"{'case':40} {'best':>10} {'vs bare':>8} {'vs no policy':>13} {'median':>10}")
    for case in cases.values():
        print(
            f"{case.name:40} {fmt_time(case.best):>10} {case.best / base:>7.2f}x"
            f" {case.best / plain:>12.2f}x {fmt_time(case.median):>10}"
        )
    summary: dict[str, Any] = {
        "one_cap_ratio": cases["adapter, one cap, uncontended"].best / plain,
        "two_caps_ratio": cases["adapter, tool + host caps"].best / plain,
        "cache_hit_vs_bare": cases["adapter, cache hit"].best / base,
    }
    if args.baseline:
        new, old = against_baseline(args.baseline, args.rounds, args.repeats)
        summary["policy_off_vs_baseline"] = new / old
        print(
            f"policy off, this tree {fmt_time(new)} vs baseline {fmt_time(old)}:"
            f" {new / old:.3f}x (child processes taking turns, {args.rounds} rounds)"
        )
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
