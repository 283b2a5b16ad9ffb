"""Benchmark frontmatter reading: the PyYAML-free fast reader against the guarded PyYAML loader.

The figures decide whether the fast reader earns its keep (see the docstring of
``customtools/_loading/_frontmatter.py``):

- the cost of ``import yaml`` in a fresh interpreter (paid once per process, and only when a
  block is more than flat ``key: plain text`` lines), against ``import customtools``;
- per block: the fast reader, the guarded loader (C parser, Python composer with the alias,
  depth and node checks), and plain ``yaml.load(..., CSafeLoader)`` as the floor.

Figures are printed as ratios against a baseline measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_frontmatter.py [--repeat 2000]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import yaml
from _harness import Table, emit, ratio, run_main

from customtools._loading._frontmatter import _load_yaml, _plain_mapping

BLOCK = "name: weather\ndescription: Looks up the forecast for a city (it's cached)."


def import_ms(module: str, runs: int = 7) -> float:
    """Median wall time of ``import <module>`` in a fresh interpreter, in ms."""
    samples = []
    for _ in range(runs):
        code = (
            f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        samples.append(float(out.stdout) * 1000)
    return statistics.median(samples)


def per_call_us(func: Callable[[], object], repeat: int) -> float:
    """Best-of-five mean time of one call in microseconds."""
    func()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            func()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def guarded() -> object:
    return _load_yaml(BLOCK)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    assert _plain_mapping(BLOCK) == guarded() == yaml.safe_load(BLOCK)
    c_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    fast = per_call_us(lambda: _plain_mapping(BLOCK), args.repeat)
    slow = per_call_us(guarded, args.repeat)
    floor = per_call_us(lambda: yaml.load(BLOCK, Loader=c_loader), args.repeat)
    yaml_import = import_ms("yaml")
    package_import = import_ms("customtools")
    table = Table(["case", "per block", "ratio"], note=f"{args.repeat} reads of each.")
    table.row("fast reader (flat `key: value`)", f"{fast:.1f} µs", ratio(1))
    table.row("guarded PyYAML", f"{slow:.1f} µs", ratio(slow / fast))
    table.row(
        "`CSafeLoader` alone (floor)", f"{floor:.1f} µs", ratio(slow / floor) + " guard overhead"
    )
    table.row("`import yaml`", f"{yaml_import:.1f} ms", "")
    table.row("`import customtools`", f"{package_import:.1f} ms", "")
    table.target(
        "blocks read before the saved import pays off",
        f"{yaml_import * 1000 / (slow - fast):.0f}",
        None,
    )
    emit(table)


if __name__ == "__main__":
    run_main(main)
