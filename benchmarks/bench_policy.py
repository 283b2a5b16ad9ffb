"""The execution policy's cost, three ratios in one run:

- policy off: this tree's valid call against the same call in an older tree (``main`` by
  default), child processes taking turns (target <= 1.02x);
- caps on, uncontended: a valid call under one cap, and under a tool and a host cap, against
  the same call without a policy, in one process (target <= 1.1x);
- a cache hit against a bare ``await fn(**params)``, in one process (target <= 2x).

    python benchmarks/bench_policy.py                          # against `git archive main`
    python benchmarks/bench_policy.py --baseline-rev v0.9.0    # against another revision
    python benchmarks/bench_policy.py --baseline /tmp/old      # against an exported tree
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import SCHEMA, VALID, Case, compile_case, fmt_time, measure

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import asyncio, json, sys, time
sys.path.insert(0, {bench!r})
from _harness import SCHEMA, VALID, Case, compile_case, measure
from customtools import CustomTool, CustomToolAdapter

async def execute(tool_call_id, params, on_update, ctx, signal):
    return "ok"

async def main():
    adapter = CustomToolAdapter(CustomTool(name="read_file", parameters=SCHEMA, execute=execute))
    await adapter.execute("c", VALID)
    case = Case("valid", compile_case('await adapter.execute("c", VALID)', {{"adapter": adapter, "VALID": VALID}}, time.process_time))
    await measure([case], repeats={repeats}, target=0.02)
    print(json.dumps(case.best))

asyncio.run(main())
"""


async def bare(path: str, limit: int, mode: str, tags: list[str] | None = None) -> str:
    return "ok"


async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    return "ok"


async def in_process(repeats: int) -> dict[str, Case]:
    from customtools import CustomTool, CustomToolAdapter, ToolContext
    from customtools._policy._apply import cache_key
    from customtools.policy import Policy

    def adapter(**options: Any) -> CustomToolAdapter:
        annotations = options.pop("annotations", None)
        tool = CustomTool(
            name="read_file", parameters=SCHEMA, execute=execute, annotations=annotations
        )
        return CustomToolAdapter(tool, **options)

    ns: dict[str, Any] = {
        "cache_key": cache_key,
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
    statements = {
        "baseline: await fn(**params)": "await bare(**VALID)",
        "adapter, no policy (valid)": 'await plain.execute("c", VALID)',
        "adapter, one cap, uncontended": 'await cap.execute("c", VALID)',
        "adapter, tool + host caps": 'await caps.execute("c", VALID)',
        "adapter, cache hit": 'await cached.execute("c", VALID)',
        "floor: the arguments' cache key alone": "cache_key(VALID)",
    }
    # CPU time of this process: the machine's other processes do not count.
    cases = [Case(name, compile_case(s, ns, time.process_time)) for name, s in statements.items()]
    await measure(cases, repeats=repeats, target=0.02)
    return {case.name: case for case in cases}


def against_baseline(baseline: str, rounds: int, repeats: int) -> tuple[float, float]:
    """Best valid-call time of this tree and of ``baseline``, child processes taking turns."""
    code = CHILD.format(bench=str(ROOT / "benchmarks"), repeats=repeats)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONHASHSEED"] = "0"  # the same string hashes in both trees
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


def export(rev: str, into: str) -> str:
    """The package of git revision ``rev`` of this repository, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "customtools"],
        check=True,
        capture_output=True,
    ).stdout
    path = Path(into) / "package.tar"
    path.write_bytes(archive)
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")
    return into


TARGETS = {
    "policy_off_vs_baseline": ("policy off vs the baseline's valid call", 1.02),
    "one_cap_ratio": ("one cap, uncontended, vs no policy", 1.1),
    "two_caps_ratio": ("tool + host caps, uncontended, vs no policy", 1.1),
    "cache_hit_vs_bare": ("cache hit vs bare await", 2.0),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--baseline", metavar="DIR", help="an exported older tree")
    parser.add_argument(
        "--baseline-rev", metavar="REV", default="main", help="else this git revision (main)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print a JSON summary too")
    args = parser.parse_args()

    cases = asyncio.run(in_process(args.repeats))
    base = cases["baseline: await fn(**params)"].best
    plain = cases["adapter, no policy (valid)"].best
    print(f"Python {sys.version.split()[0]}; CPU time, best of {args.repeats} round-robin repeats")
    print(f"{'case':42} {'best':>10} {'vs bare':>8} {'vs no policy':>13} {'median':>10}")
    for case in cases.values():
        print(
            f"{case.name:42} {fmt_time(case.best):>10} {case.best / base:>7.2f}x"
            f" {case.best / plain:>12.2f}x {fmt_time(case.median):>10}"
        )
    with tempfile.TemporaryDirectory(prefix="bench-policy-") as scratch:
        baseline = args.baseline or export(args.baseline_rev, scratch)
        new, old = against_baseline(baseline, args.rounds, args.repeats)
    where = args.baseline or f"git {args.baseline_rev}"
    print(
        f"valid call, no policy: this tree {fmt_time(new)}, {where} {fmt_time(old)}"
        f" (child processes taking turns, {args.rounds} rounds)"
    )
    summary = {
        "policy_off_vs_baseline": new / old,
        "one_cap_ratio": cases["adapter, one cap, uncontended"].best / plain,
        "two_caps_ratio": cases["adapter, tool + host caps"].best / plain,
        "cache_hit_vs_bare": cases["adapter, cache hit"].best / base,
    }
    print(f"\n{'ratio':46} {'value':>7} {'target':>7}")
    for key, (label, target) in TARGETS.items():
        value = summary[key]
        print(
            f"{label:46} {value:>6.3f}x {target:>6.2f}x  {'met' if value <= target else 'MISSED'}"
        )
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
