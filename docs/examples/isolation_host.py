"""A host that loads a tool pack in worker processes (docs/isolation.md).

One tool works, one crashes the interpreter: the host survives, the crash is an error result
naming the module and the cause, and the next call runs in a restarted worker.
"""

import tempfile
from pathlib import Path

import anyio

from customtools import CustomToolAdapter, load_custom_tools
from customtools.isolation import IsolationPool

PACK = """
import ctypes, os
from customtools import CustomTool, Type

def factory(api):
    def greet(call_id, params, on_update, ctx, signal):
        return f"Hello, {params['name']}!"

    def crash(call_id, params, on_update, ctx, signal):
        ctypes.string_at(0)  # a segfault: no Python code can catch it

    return [
        CustomTool(name="greet", execute=greet,
                   parameters=Type.Object({"name": Type.String()})),
        CustomTool(name="crash", execute=crash),
    ]
"""


async def main(tools_dir: str) -> None:
    async with IsolationPool(memory_limit_mib=512, restart_limit=3) as pool:
        result = await load_custom_tools([tools_dir], tools_dir, isolation=pool)
        greet = CustomToolAdapter(result.get("greet").tool)
        crash = CustomToolAdapter(result.get("crash").tool)
        print((await greet.execute("1", {"name": "Ada"})).text)
        crashed = await crash.execute("2", {})
        print(crashed.is_error, crashed.details["cause"])
        print((await greet.execute("3", {"name": "Grace"})).text)


with tempfile.TemporaryDirectory() as tools_dir:
    Path(tools_dir, "pack.py").write_text(PACK)
    anyio.run(main, tools_dir)
