"""A host with the trust gate: project tools wait until the user trusts exactly their files."""

import tempfile
from pathlib import Path

import anyio

from customtools import discover_and_load
from customtools._loading._trust import PendingSource
from customtools._loading._trust_store import TrustStore

TOOL = """\
from customtools import CustomTool

def factory(api):
    return CustomTool(name="hello", description="Say hello.", parameters={"type": "object"},
                      execute=lambda *args: "hello")
"""


async def main(project: Path, home: Path) -> None:
    store = TrustStore(home=home)  # ~/.customtools/trust.json: the user's own configuration

    result = await discover_and_load(cwd=project, home=home, entry_points=False)
    print("loaded:", list(result.tool_names))
    for pending in result.pending_trust:  # project code is listed, never imported
        print(
            f"{pending.status}: {pending.source.provider} would run",
            [file.name for file in pending.files],
        )

    def ask(pending: PendingSource) -> bool:  # a real host shows a prompt here
        return all(file.name.endswith(".py") for file in pending.files)

    result = await discover_and_load(cwd=project, home=home, entry_points=False, trust=ask)
    print("loaded after asking:", list(result.tool_names))

    (project / ".claude" / "tools" / "hello.py").write_text(TOOL + "# edited\n")
    result = await discover_and_load(cwd=project, home=home, entry_points=False)
    print("after an edit:", list(result.tool_names), result.pending_trust[0].changes)
    print("grants:", len(store.grants()))


with tempfile.TemporaryDirectory() as tmp:
    project, home = Path(tmp, "project"), Path(tmp, "home")
    (project / ".claude" / "tools").mkdir(parents=True)
    (project / ".claude" / "tools" / "hello.py").write_text(TOOL)
    home.mkdir()
    anyio.run(main, project, home)
