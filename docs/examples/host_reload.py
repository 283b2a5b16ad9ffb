import contextlib
import pathlib
import tempfile

import anyio

from customtools import CustomToolAdapter
from customtools.loading import Reloader

TOOL = """from customtools import CustomTool
def factory(api):
    return CustomTool(name="greet", description="Greets.", execute=lambda *a: {text!r})
"""


async def main() -> None:
    tools = pathlib.Path(tempfile.mkdtemp())
    (tools / "greet.py").write_text(TOOL.format(text="hello"))
    reloader = Reloader([tools], cwd=tools)  # discover_and_load's arguments
    registry = {t.tool.name: CustomToolAdapter(t.tool) for t in (await reloader.load()).tools}
    print((await registry["greet"].execute("c1", {})).text)

    async def edit() -> None:
        await anyio.sleep(0.3)
        (tools / "greet.py").write_text(TOOL.format(text="hello again"))

    async with anyio.create_task_group() as group:
        group.start_soon(edit)
        async with contextlib.aclosing(reloader.watch()) as results:
            async for result in results:  # a new LoadResult after each change
                registry = {t.tool.name: CustomToolAdapter(t.tool) for t in result.tools}
                print((await registry["greet"].execute("c2", {})).text)
                break
    reloader.close()


anyio.run(main)
