"""Tool search: ``ToolRegistry.search`` over 10,000 tools.

Generates 10,000 tools whose names, descriptions and parameters are drawn from a vocabulary
of 3,000 words with a Zipf-like distribution (a few common words, a long tail, as real tool
descriptions have), then times 1,000 queries of one to four words drawn the same way (and
every 10th query an exact tool name), after one untimed search that builds the index. The
index build is timed on its own. Target: p50 <= 1 ms per query.

Run: ``.venv/bin/python benchmarks/bench_search.py [--tools 10000] [--queries 1000]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import time

from _harness import Table, emit, run_main

from customtools import CustomTool, ToolRegistry


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 10))))
    return sorted(words)


def sampler(words: list[str], rng: random.Random):
    weights = [1 / (rank + 1) for rank in range(len(words))]

    def draw(count: int) -> list[str]:
        return rng.choices(words, weights=weights, k=count)

    return draw


def make_tools(count: int, draw, rng: random.Random) -> list[CustomTool]:
    tools = []
    for index in range(count):
        name = "_".join(draw(2)) + f"_{index}"
        properties = {
            "_".join(draw(1)) + f"_{n}": {"type": "string", "description": " ".join(draw(6))}
            for n in range(rng.randint(1, 4))
        }
        tools.append(
            CustomTool(
                name=name[:64],
                description=" ".join(draw(rng.randint(8, 30))).capitalize() + ".",
                parameters={"type": "object", "properties": properties},
                execute=lambda *args: "ok",
            )
        )
    return tools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=1_000)
    args = parser.parse_args()
    rng = random.Random(7)
    draw = sampler(vocabulary(3_000, rng), rng)
    tools = make_tools(args.tools, draw, rng)
    registry = ToolRegistry(tools)
    queries = [
        tools[rng.randrange(len(tools))].name if n % 10 == 0 else " ".join(draw(rng.randint(1, 4)))
        for n in range(args.queries)
    ]
    t0 = time.perf_counter()
    registry.search("warm up")  # builds the index
    build = time.perf_counter() - t0
    times = []
    found = 0
    for query in queries:
        t0 = time.perf_counter()
        found += bool(registry.search(query, limit=8))
        times.append(time.perf_counter() - t0)
    times.sort()
    p50 = statistics.median(times) * 1000
    p95 = times[int(len(times) * 0.95)] * 1000
    table = Table(
        ["case", "time"],
        note=f"`ToolRegistry.search` over {args.tools:,} tools, {args.queries:,} queries"
        f" (`limit=8`); {found} of them found something.",
    )
    table.row("index build (the first search)", f"{build * 1000:.1f} ms")
    table.row("per query, p50", f"{p50:.3f} ms")
    table.row("per query, p95", f"{p95:.3f} ms")
    table.row("per query, max", f"{times[-1] * 1000:.3f} ms")
    table.target("per query, p50 ≤ 1 ms", f"{p50:.3f} ms", p50 <= 1.0)
    emit(table)


if __name__ == "__main__":
    run_main(main)
