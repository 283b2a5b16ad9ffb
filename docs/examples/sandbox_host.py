"""A host that loads a tool pack sandboxed (docs/sandbox.md).

The pack declares what it needs; the kernel holds it to that: it may read its project and
write `out/`, but reading a key in the home directory is an error result naming the permission.
"""

import tempfile
from pathlib import Path

import anyio

from customtools import CustomToolAdapter, load_custom_tools
from customtools.isolation import IsolationPool

PACK = """
from customtools import tool
from customtools.isolation import Permissions

PERMISSIONS = Permissions(read=["."], write=["out"])

@tool
def save(name: str, text: str) -> str:
    '''Save a note under out/.'''
    with open(f"out/{name}", "w") as handle:
        handle.write(text)
    return f"saved out/{name}"

@tool
def peek(path: str) -> str:
    '''Read any file.'''
    with open(path) as handle:
        return handle.read()
"""


async def main(project: Path, home: Path) -> None:
    async with IsolationPool() as pool:
        result = await load_custom_tools(
            [project / "notes.py"], project, home=home, isolation=pool, sandbox=True
        )
        print([d.code for d in result.diagnostics if d.code.startswith("sandbox-")])
        save = CustomToolAdapter(result.get("save").tool)
        peek = CustomToolAdapter(result.get("peek").tool)
        print((await save.execute("1", {"name": "a.txt", "text": "hi"})).text)
        denied = await peek.execute("2", {"path": str(home / ".ssh" / "id_rsa")})
        print(denied.is_error, denied.details["permission"])
        print(denied.text.split(":")[0])


with tempfile.TemporaryDirectory() as tmp:
    project, home = Path(tmp, "project"), Path(tmp, "home")
    (project / "out").mkdir(parents=True)
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("not for tools")
    (project / "notes.py").write_text(PACK)
    anyio.run(main, project, home)
