"""Run the benchmarks (``make bench``) and, with ``--write-docs``, rewrite their tables.

Every figure in docs/performance.md sits in a generated block, one per entry of `BENCHMARKS`::

    <!-- bench:load -->
    ...written by this script from the tables bench_load.py emitted...
    <!-- /bench:load -->

Each benchmark stays runnable on its own (``python benchmarks/bench_load.py``) and prints the
same tables; run from here, it also records them as JSON lines (`_harness.emit`), which this
script turns into the block, with the machine facts of the run (Python, CPUs, load average,
date, duration). Only a benchmark that ran to its end replaces its block.

    python benchmarks/run.py --write-docs              # everything (what `make bench` runs)
    python benchmarks/run.py --write-docs --only load  # one block
    python benchmarks/run.py --write-docs --quick      # fewer repetitions (noisier figures)
    python benchmarks/run.py --save r.jsonl            # keep the results ...
    python benchmarks/run.py --from r.jsonl            # ... and write the blocks from them later

The benchmarks are not part of the test run: timing targets belong here, measured as ratios
against a baseline taken in the same run. `tests/test_benchmarks.py` checks, without running
anything, that the blocks and this table agree.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _harness import RESULTS_ENV, table_markdown

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "performance.md"


@dataclass(frozen=True)
class Bench:
    """One generated block: the script that fills it, its arguments, and fewer repetitions."""

    script: str
    args: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()


# Block name -> benchmark. Adding a benchmark: a line here, the block's two markers in
# docs/performance.md, and `emit` + `run_main` from _harness in the script (development.md).
BENCHMARKS: dict[str, Bench] = {
    "adapter": Bench("bench_adapter.py", quick=("--repeats", "5")),
    "import": Bench("bench_adapter.py", ("--import-only",), quick=("--import-rounds", "10")),
    "validation": Bench("bench_validation.py", quick=("--chunks", "50")),
    "scan": Bench("bench_scan.py", quick=("--repeat", "50")),
    "load": Bench("bench_load.py", quick=("--repeats", "3")),
    "first-call": Bench("bench_load.py", ("--first-call",), quick=("--repeats", "1")),
    "search": Bench("bench_search.py", quick=("--queries", "200")),
    "trust": Bench("bench_load.py", ("--trust",), quick=("--repeats", "3")),
    "trust-check": Bench("bench_load.py", ("--trust-check",)),
    "authoring": Bench("bench_authoring.py", quick=("--repeats", "5")),
    "frontmatter": Bench("bench_frontmatter.py", quick=("--repeat", "500")),
    "mcp": Bench("bench_mcp.py", quick=("--calls", "100", "--repeats", "3")),
    "talkback": Bench("bench_talkback.py", quick=("--calls", "100", "--repeats", "3")),
    "isolation": Bench("bench_isolation.py", quick=("--calls", "500", "--blocks", "3")),
    "sandbox": Bench("bench_sandbox.py", quick=("--starts", "7", "--blocks", "2")),
    "telemetry": Bench("bench_telemetry.py", quick=("--repeats", "20")),
    "frameworks": Bench("bench_frameworks.py", quick=("--runs", "50", "--repeats", "3")),
    "reload": Bench("bench_reload.py", quick=("--rounds", "10")),
    "cancel": Bench("bench_cancel.py", quick=("--rounds", "2")),
    "contract": Bench("bench_contract.py", quick=("--repeats", "1")),
    "replicas": Bench(
        "bench_replicas.py",
        quick=("--calls", "80", "--clients", "4", "--repeats", "1", "--rounds", "30"),
    ),
    "policy": Bench("bench_policy.py", quick=("--repeats", "15", "--rounds", "2")),
}

_BLOCK = re.compile(r"<!-- (/?)bench:([a-z0-9-]+) -->")


def blocks(text: str) -> dict[str, str]:
    """The generated blocks of ``text``: name -> body. Malformed markers raise ValueError."""
    found: dict[str, str] = {}
    open_name, start = "", 0
    for match in _BLOCK.finditer(text):
        closing, name = match.group(1) == "/", match.group(2)
        if not closing:
            if open_name:
                raise ValueError(f"bench:{name} opens inside bench:{open_name}")
            if name in found:
                raise ValueError(f"bench:{name} appears twice")
            open_name, start = name, match.end()
        elif name != open_name:
            raise ValueError(f"/bench:{name} closes no open block (open: {open_name or 'none'})")
        else:
            found[name] = text[start : match.start()]
            open_name = ""
    if open_name:
        raise ValueError(f"bench:{open_name} is never closed")
    return found


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the body of block ``name`` replaced (the block must exist)."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    head, sep, rest = text.partition(start)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise ValueError(f"{DOC.name} has no block bench:{name}: add its two markers")
    return f"{head}{start}\n{body}\n{end}{tail}"


def render(result: dict[str, Any]) -> str:
    """A block's body: the line of machine facts, then each table."""
    command = " ".join(["python", f"benchmarks/{result['script']}", *result["args"]])
    facts = (
        f"*Generated by `python benchmarks/run.py --write-docs{' --quick' if result['quick'] else ''}`"
        f" on {result['date']}: `{command}`, {result['seconds']:.0f} s; {result['python']},"
        f" {result['cpus']} CPUs, load average {result['load']} at the start.*"
    )
    return "\n\n".join([facts, *(table_markdown(t) for t in result["tables"])])


def run_one(name: str, bench: Bench, *, quick: bool) -> dict[str, Any]:
    """Run one benchmark in a subprocess, its output streaming; return what it recorded."""
    args = [*bench.args, *(bench.quick if quick else ())]
    load = " / ".join(f"{v:.1f}" for v in os.getloadavg())
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.jsonl"
        results.touch()
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, str(HERE / bench.script), *args],
            env={**os.environ, RESULTS_ENV: str(results)},
            check=False,
        )
        seconds = time.monotonic() - start
        records = [json.loads(line) for line in results.read_text("utf-8").splitlines()]
    end = next((r for r in records if "complete" in r), None)
    return {
        "name": name,
        "script": bench.script,
        "args": args,
        "quick": quick,
        "date": date,
        "seconds": seconds,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "cpus": os.cpu_count(),
        "load": load,
        "returncode": proc.returncode,
        "complete": end is not None,
        "missed": end["missed"] if end else [],
        "tables": [r["table"] for r in records if "table" in r],
    }


def write_docs(results: list[dict[str, Any]]) -> None:
    text = DOC.read_text("utf-8")
    for result in results:
        if result["complete"] and result["tables"]:
            text = replace_block(text, result["name"], render(result))
    DOC.write_text(text, "utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-docs", action="store_true", help=f"rewrite the blocks of {DOC}")
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), metavar="NAME")
    parser.add_argument("--quick", action="store_true", help="each benchmark's fewer repetitions")
    parser.add_argument("--save", type=Path, help="append each result as a JSON line to this file")
    parser.add_argument(
        "--from", dest="load", type=Path, help="write the blocks from --save output"
    )
    args = parser.parse_args(argv)
    if args.load:
        results = [json.loads(line) for line in args.load.read_text("utf-8").splitlines()]
        if args.only:
            results = [r for r in results if r["name"] in args.only]
        write_docs(results)
        return 0
    failed: list[str] = []
    missed: list[str] = []
    for name in args.only or BENCHMARKS:
        print(f"\n=== {name} ({BENCHMARKS[name].script}) ===", flush=True)
        result = run_one(name, BENCHMARKS[name], quick=args.quick)
        print(f"=== {name}: {result['seconds']:.0f} s", flush=True)
        if args.save:
            with args.save.open("a", encoding="utf-8") as out:
                out.write(json.dumps(result) + "\n")
        if not result["complete"]:
            failed.append(name)
            continue
        missed += [f"{name}: {target}" for target in result["missed"]]
        if args.write_docs:
            write_docs([result])
    for line in missed:
        print(f"target missed: {line}")
    for name in failed:
        print(f"FAILED (block left as it was): {name}")
    return 1 if failed or missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
