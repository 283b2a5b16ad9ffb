"""Benchmark the discovery scan: 1,000 tool files in 10 directories.

Compares ``scan_sources`` (entry points off, every file a candidate, deduplicated on the real
path) with a bare ``os.scandir`` walk of the same directories that only collects ``*.py`` names.
Target: the scan of 1,000 files <= 5 ms.

Run: ``.venv/bin/python benchmarks/bench_scan.py [--files 1000] [--dirs 10] [--repeat 200]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from _harness import Table, emit, ratio, run_main

from customtools._loading._scan import scan_sources


def build_tree(root: str, files: int, dirs: int) -> tuple[str, list[str]]:
    """Create ``files`` tool modules spread over ``dirs`` directories; return (home, dirs)."""
    home = os.path.join(root, "home")
    project = os.path.join(root, "project")
    os.makedirs(project)
    tool_dirs = [os.path.join(root, "packs", f"pack{index:02d}", "tools") for index in range(dirs)]
    # The first directory is the user's native directory, so the default providers run too.
    tool_dirs[0] = os.path.join(home, ".customtools", "tools")
    for index in range(files):
        directory = tool_dirs[index % dirs]
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"tool_{index:04d}.py"), "w") as handle:
            handle.write("def factory(api):\n    return []\n")
    return home, tool_dirs


def bare_walk(tool_dirs: list[str]) -> list[str]:
    """The floor: list each directory and keep the ``.py`` paths."""
    found: list[str] = []
    for directory in tool_dirs:
        with os.scandir(directory) as iterator:
            for entry in iterator:
                if entry.name.endswith(".py") and entry.is_file():
                    found.append(entry.path)
    return found


def timings_ms(func: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(median, best) wall time of ``func`` over ``repeat`` runs in ms, after one warm-up.

    The best run is printed too: on a shared machine the median moves with the load of other
    processes, the best run much less.
    """
    func()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000, min(samples) * 1000


def main(argv: list[str] | None = None) -> None:
    """Build the tree, time both walks, print medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--dirs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as root:
        home, tool_dirs = build_tree(root, args.files, args.dirs)
        project = os.path.join(root, "project")
        # Directories 1..n are configured paths; directory 0 is found by the native provider.
        configured = tool_dirs[1:]

        def scan() -> object:
            return scan_sources(configured, project, home=home, entry_points=False)

        result = scan_sources(configured, project, home=home, entry_points=False)
        assert len(result.candidates) == args.files, len(result.candidates)
        assert len(bare_walk(tool_dirs)) == args.files
        scan_ms, scan_best = timings_ms(scan, args.repeat)
        bare_ms, bare_best = timings_ms(lambda: bare_walk(tool_dirs), args.repeat)
        ep_ms, ep_best = timings_ms(
            lambda: scan_sources((), project, home=home, entry_points=True),
            max(5, args.repeat // 10),
        )
    table = Table(
        ["case", "median", "best"],
        note=f"{args.files} files in {args.dirs} directories, {args.repeat} scans of each.",
    )
    table.row("`scan_sources` (entry points off)", f"{scan_ms:.2f} ms", f"{scan_best:.2f} ms")
    table.row("bare `os.scandir` walk", f"{bare_ms:.2f} ms", f"{bare_best:.2f} ms")
    table.row("scan / bare walk", ratio(scan_ms / bare_ms), ratio(scan_best / bare_best))
    table.row("empty scan, entry points on (this venv)", f"{ep_ms:.2f} ms", f"{ep_best:.2f} ms")
    table.target("scan of 1,000 files ≤ 5 ms (best)", f"{scan_best:.2f} ms", scan_best <= 5.0)
    emit(table)


if __name__ == "__main__":
    run_main(main)
