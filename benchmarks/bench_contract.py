"""``customtools contract check`` against ``customtools validate`` on the same 1,000 modules.

Generates one pack of 1,000 tool modules (each a factory returning one ``CustomTool`` with a
three-property schema, an enum and an output schema), exports its contract to a file, changes
every tenth module compatibly (a new optional parameter) so the gate has schemas to compare,
then times, alternately in the same run, each as a fresh ``python -m customtools`` process:

* ``validate``: ``customtools validate PACK``;
* ``contract``: ``customtools contract check --baseline FILE PACK``.

Both load every module in a child process of its own (the same loader), so the figure is the
cost the gate adds: reading the baseline, building the current contract and comparing 1,000
tools. Target: contract / validate <= 1.5 (best of the repeats, as in the other benchmarks).

Usage::

    python benchmarks/bench_contract.py [--repeats 3] [--modules 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 1.5

SOURCE = """\
from customtools import CustomTool, Type


def factory(api):
    return CustomTool(
        name="tool_{index}",
        description="Tool {index} looks things up.",
        parameters=Type.Object(
            {{
                "query": Type.String(minLength=1),
                "limit": Type.Optional(Type.Integer(minimum=1, maximum=100, default=10)),
                "mode": Type.Optional(Type.Enum(["fast", "full"])),{extra}
            }}
        ),
        output_schema=Type.Object({{"hits": Type.Array(Type.String()), "total": Type.Integer()}}),
        execute=lambda *args: "ok",
    )
"""


def write_pack(root: Path, modules: int, *, changed: bool) -> Path:
    pack = root / "tools"
    pack.mkdir(exist_ok=True)
    for index in range(modules):
        extra = '\n                "tag": Type.Optional(Type.String()),'
        text = SOURCE.format(index=index, extra=extra if changed and index % 10 == 0 else "")
        (pack / f"tool_{index}.py").write_text(text, encoding="utf-8")
    return pack


def run(argv: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "customtools", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - started, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modules", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-contract-") as tmp:
        root = Path(tmp)
        write_pack(root, args.modules, changed=False)
        seconds, done = run(["contract", "export", "tools", "-o", "base.json"], root)
        assert done.returncode == 0, done.stderr
        write_pack(root, args.modules, changed=True)
        times: dict[str, list[float]] = {"validate": [], "contract": []}
        for _ in range(args.repeats):
            seconds, done = run(["validate", "tools"], root)
            assert done.returncode == 0, done.stdout[-2000:]
            times["validate"].append(seconds)
            seconds, done = run(["contract", "check", "--baseline", "base.json", "tools"], root)
            assert done.returncode == 0, done.stdout[-2000:]
            assert f"{args.modules // 10} compatible" in done.stdout, done.stdout[-500:]
            times["contract"].append(seconds)
    best = {name: min(values) for name, values in times.items()}
    ratio = best["contract"] / best["validate"]
    if args.json:
        print(json.dumps({"modules": args.modules, "seconds": times, "ratio": ratio}))
    else:
        print(f"{args.modules} modules, best of {args.repeats} (seconds):")
        for name, values in times.items():
            shown = ", ".join(f"{value:.2f}" for value in values)
            print(f"  {name:<9} best {best[name]:7.2f}   all: {shown}")
        verdict = "ok" if ratio <= TARGET else "OVER TARGET"
        print(f"contract check / validate = {ratio:.2f} (target <= {TARGET}) {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
