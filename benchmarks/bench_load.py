"""Loading 1,000 tool modules: ``discover_and_load`` against a bare importlib loop.

Generates 10 directories x 100 tool modules (each a tiny factory returning a ``CustomTool`` with
a two-property schema) and times, each run in a fresh interpreter:

* ``bare``: for every file, ``spec_from_file_location`` + ``module_from_spec`` +
  ``exec_module`` + ``factory(api)``, in sorted order (no scan, no checks beyond what
  ``CustomTool`` itself does, which is in both);
* ``loader``: ``discover_and_load(dirs, home=<empty dir>, entry_points=False)``: the scan of
  every provider, realpath dedupe, guarded import, result checks, conflicts, records.

Trust variant (``--trust``): the same 1,000 modules as *project* directories (under ``cwd``),
loaded with the trust gate on (every source trusted beforehand) against the gate off
(``trust="all"``), warm, in the same run: ``gate_on`` checks each file by its stat key (the
stat cache, see docs/trust.md), ``gate_on_hash`` reads and hashes every file
(``TrustStore(stat_cache=False)``). Target: on/off <= 1.1x. Each directory also holds a
``_helpers.py``, a ``lib/util.py`` and a ``notes.json``, which the grant covers (the first
two) or leaves out (data). ``user_cached`` loads the same modules as user scope, from
their ``__pycache__``: ``gate_off/user_cached`` is the cost of compiling project code from
the reviewed source (project code never runs from bytecode caches).

``warm``: valid ``__pycache__``; ``cold``: every ``__pycache__`` deleted before the run (so the
run compiles and writes ``.pyc`` files). Times are measured inside the child process around the
load only (interpreter and ``import customtools`` excluded). Peak memory is the growth of
``ru_maxrss`` (resident set high-water mark, KiB on Linux) over the load, measured in the same
runs; ``tracemalloc`` is not used because it would slow the timed runs several-fold.

Usage::

    python benchmarks/bench_load.py [--repeats 7] [--json] [--trust | --trust-check]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

DIRS = 10
PER_DIR = 100

TOOL_SOURCE = """\
from customtools import CustomTool


def _execute(tool_call_id, params, on_update, ctx, signal):
    return params["text"] * params.get("times", 1)


def factory(api):
    return CustomTool(
        name="tool_{index:04d}",
        description="Tool number {index}.",
        parameters={{
            "type": "object",
            "properties": {{
                "text": {{"type": "string", "description": "what to repeat"}},
                "times": {{"type": "integer", "minimum": 1}},
            }},
            "required": ["text"],
            "additionalProperties": False,
        }},
        execute=_execute,
    )
"""

CHILD = textwrap.dedent(
    """
    import json, os, resource, sys, time
    import customtools, customtools._tool, customtools._validation
    mode, root, home = sys.argv[1], sys.argv[2], sys.argv[3]
    dirs = sorted(os.path.join(root, d) for d in os.listdir(root))

    def bare():
        import importlib.util
        from types import SimpleNamespace
        api = SimpleNamespace(cwd=root)
        tools = []
        for n, d in enumerate(dirs):
            for name in sorted(os.listdir(d)):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(d, name)
                spec = importlib.util.spec_from_file_location(f"bench_{n}_{name[:-3]}", path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = module
                spec.loader.exec_module(module)
                tools.append(module.factory(api))
        return len(tools), 0

    def loader():
        import anyio
        from customtools._loading._loader import discover_and_load

        async def main():
            return await discover_and_load(dirs, root, home=home, entry_points=False)

        result = anyio.run(main)
        return len(result.tools), len(result.errors)

    def project(trust, stat_cache=True):
        import anyio
        from customtools._loading._loader import discover_and_load
        from customtools._loading._trust_store import TrustStore

        store = TrustStore(home=home, stat_cache=stat_cache)

        async def main():
            return await discover_and_load(
                (), root, home=home, entry_points=False, native_dirs=((), dirs), trust=trust,
                trust_store=store,
            )

        result = anyio.run(main)
        return len(result.tools), len(result.errors) + len(result.pending_trust)

    if mode == "grant":
        from customtools._loading._loader import scan
        from customtools._loading._trust import project_sources
        from customtools._loading._trust_store import TrustStore

        store = TrustStore(home=home)
        scanned = scan((), root, home=home, entry_points=False, native_dirs=((), dirs))
        for source in project_sources(scanned):
            store.grant(source)
        print(json.dumps({"s": 0, "rss_kib": 0, "tools": 1000, "errors": 0}))
        sys.exit(0)
    if mode != "bare":
        # A host calls discover_and_load from a running event loop: import the loader and
        # start anyio's backend once outside the timed region.
        import anyio, customtools._loading._loader, customtools._loading._scan  # noqa
        # ... and the gate's modules, imported once per process by a host that loads project
        # code (both modes: the comparison is the per-load cost of the check).
        import customtools._loading._trust_store, customtools._loading._reviewed  # noqa

        async def _noop():
            pass

        anyio.run(_noop)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    run = {"bare": bare, "loader": loader, "user_cached": loader,
           "gate_on": lambda: project("prompt"),
           "gate_on_hash": lambda: project("prompt", stat_cache=False),
           "gate_off": lambda: project("all")}[mode]
    tools, errors = run()
    elapsed = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"s": elapsed, "rss_kib": rss1 - rss0, "tools": tools, "errors": errors}))
    """
)


def generate(root: Path) -> None:
    index = 0
    for d in range(DIRS):
        directory = root / f"dir_{d:02d}"
        directory.mkdir(parents=True)
        for _ in range(PER_DIR):
            (directory / f"tool_{index:04d}.py").write_text(TOOL_SOURCE.format(index=index))
            index += 1
        (directory / "README.md").write_text(f"---\nname: readme_{d}\n---\n")


def clear_caches(root: Path) -> None:
    for cache in root.glob("*/__pycache__"):
        shutil.rmtree(cache)


def run_child(mode: str, root: Path, home: Path) -> dict[str, float]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(root), str(home)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=str(root),
    )
    data: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    if data["tools"] != DIRS * PER_DIR or data["errors"]:
        raise SystemExit(f"{mode}: expected {DIRS * PER_DIR} tools, got {data}")
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--trust-check",
        action="store_true",
        help="time the trust check alone, in process (best of 30)",
    )
    parser.add_argument(
        "--trust", action="store_true", help="time the trust gate (on vs off) instead"
    )
    args = parser.parse_args()
    if args.trust_check:
        trust_check_benchmark()
        return
    if args.trust:
        trust_benchmark(args.repeats, args.json)
        return
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="ct-bench-load-") as tmp:
        root, home = Path(tmp) / "tools", Path(tmp) / "home"
        home.mkdir()
        generate(root)
        run_child("bare", root, home)  # populate __pycache__ and the page cache
        for temperature in ("warm", "cold"):
            for _ in range(args.repeats):
                for mode in ("bare", "loader"):  # round-robin so drift hits both
                    if temperature == "cold":
                        clear_caches(root)
                    data = run_child(mode, root, home)
                    key = f"{mode}/{temperature}"
                    slot = results.setdefault(key, {"s": [], "rss_kib": []})
                    slot["s"].append(data["s"])
                    slot["rss_kib"].append(data["rss_kib"])
    summary = {
        key: {
            "median_ms": statistics.median(v["s"]) * 1000,
            "min_ms": min(v["s"]) * 1000,
            "max_ms": max(v["s"]) * 1000,
            "peak_rss_growth_kib": statistics.median(v["rss_kib"]),
        }
        for key, v in results.items()
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"1,000 tool modules in {DIRS} dirs, {args.repeats} fresh processes per cell")
    print(f"{'case':<16}{'median':>10}{'min':>10}{'max':>10}{'RSS growth':>14}")
    for key, row in summary.items():
        print(
            f"{key:<16}{row['median_ms']:>8.1f}ms{row['min_ms']:>8.1f}ms{row['max_ms']:>8.1f}ms"
            f"{row['peak_rss_growth_kib'] / 1024:>11.1f}MiB"
        )
    for temperature, target in (("warm", 1.3), ("cold", 1.2)):
        ratio = (
            summary[f"loader/{temperature}"]["median_ms"]
            / summary[f"bare/{temperature}"]["median_ms"]
        )
        verdict = "ok" if ratio <= target else "MISSED"
        print(f"time ratio {temperature}: {ratio:.2f}x (target <= {target}x) {verdict}")
    mem = (
        summary["loader/warm"]["peak_rss_growth_kib"] / summary["bare/warm"]["peak_rss_growth_kib"]
    )
    print(f"peak RSS growth ratio (warm): {mem:.2f}x (target <= 1.3x)")


def trust_benchmark(repeats: int, as_json: bool) -> None:
    """Gate on (trusted, hashed) vs gate off, warm, same run, round-robin."""
    modes = ("user_cached", "gate_off", "gate_on", "gate_on_hash")
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(prefix="ct-bench-trust-") as tmp:
        root, home = Path(tmp) / "tools", Path(tmp) / "home"
        home.mkdir()
        generate(root)
        add_helpers(root)
        time.sleep(2.1)  # files changed in the last 2 s are never stat-cached (docs/trust.md)
        run_child("grant", root, home)
        run_child("gate_off", root, home)  # the page cache
        run_child("user_cached", root, home)  # populate __pycache__ (user scope uses it)
        for _ in range(repeats):
            for mode in modes:
                times[mode].append(run_child(mode, root, home)["s"])
    median = {mode: statistics.median(times[mode]) for mode in modes}
    if as_json:
        print(json.dumps({f"{mode}_ms": value * 1000 for mode, value in median.items()}))
        return
    print(f"1,000 project tool modules in {DIRS} dirs, {repeats} fresh processes per cell, warm")
    for mode in modes:
        best = min(times[mode]) * 1000
        print(f"{mode:<14} median {median[mode] * 1000:7.1f}ms  min {best:7.1f}ms")
    compile_cost = median["gate_off"] / median["user_cached"]
    print(
        f"gate_off/user_cached (reviewed loader + user code cache vs __pycache__): {compile_cost:.2f}x"
    )
    for mode in ("gate_on", "gate_on_hash"):
        ratio = median[mode] / median["gate_off"]
        best = min(times[mode]) / min(times["gate_off"])
        verdict = "ok" if ratio <= 1.1 else "MISSED"
        print(f"{mode}/gate_off: median {ratio:.2f}x, min {best:.2f}x (target <= 1.1x) {verdict}")


def add_helpers(root: Path) -> None:
    """Files the wider hashing covers (``_helpers.py``, ``lib/util.py``) or leaves out."""
    for directory in sorted(root.iterdir()):
        (directory / "_helpers.py").write_text("def greet(name):\n    return name\n")
        (directory / "lib").mkdir()
        (directory / "lib" / "util.py").write_text("X = 1\n")
        (directory / "notes.json").write_text("{}\n")


def trust_check_benchmark() -> None:
    """The trust check alone (store read, walk, stat or hash per file), in process."""
    from customtools._loading._loader import scan
    from customtools._loading._trust import project_sources
    from customtools._loading._trust_store import TrustStore

    with tempfile.TemporaryDirectory(prefix="ct-bench-check-") as tmp:
        root, home = Path(tmp) / "tools", Path(tmp) / "home"
        home.mkdir()
        generate(root)
        add_helpers(root)
        time.sleep(2.1)  # files changed in the last 2 s are never stat-cached
        dirs = sorted(str(path) for path in root.iterdir())
        scanned = scan((), root, home=home, entry_points=False, native_dirs=((), dirs))
        for source in project_sources(scanned):
            TrustStore(home=home).grant(source)
        for label, stat_cache in (("stat cache", True), ("hash every file", False)):
            store = TrustStore(home=home, stat_cache=stat_cache)
            best = float("inf")
            for _ in range(30):
                t0 = time.perf_counter()
                pending = store.pending(scanned)
                best = min(best, time.perf_counter() - t0)
                assert pending == ()
            print(f"trust check, {label:<15} best of 30: {best * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
