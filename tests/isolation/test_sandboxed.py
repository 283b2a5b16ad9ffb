"""What a sandboxed pack is granted: the project it may read, the paths as shown, the write
directories it declares.

"The project" is the load's working directory, so a host started in ``/`` or in the home
directory must not hand every pack the whole disk; a pack from outside the project is not
the project's. Declared paths are shown (and checked) as the sandbox grants them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from customtools import CustomToolAdapter
from customtools._isolation._confine import landlock_abi
from customtools._isolation._pool import IsolationPool
from customtools._loading._loader import discover_and_load, load_custom_tools

from ._helpers import options

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or landlock_abi() < 6,
        reason="needs Linux with Landlock ABI >= 6",
    ),
]

READER = """
from customtools import tool
{prelude}

@tool
def {name}(path: str) -> str:
    \"\"\"Read a file.\"\"\"
    with open(path) as handle:
        return handle.read()

@tool
def {name}_write(path: str, text: str) -> str:
    \"\"\"Write a file.\"\"\"
    with open(path, "w") as handle:
        handle.write(text)
    return "written"
"""


def reader(directory: Path, name: str, permissions: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    prelude = (
        f"from customtools.isolation import Permissions\nPERMISSIONS = {permissions}"
        if permissions
        else ""
    )
    path = directory / f"{name}.py"
    path.write_text(READER.format(prelude=prelude, name=name))
    return path


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """``(project, home)``, each with a file that tells them apart."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (project / "notes.txt").write_text("project notes\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SECRET KEY\n")
    return project, home


async def call(result: Any, name: str, **params: Any) -> str:
    tool = result.get(name).tool
    done = await CustomToolAdapter(tool, timeout=30).execute("call", params)
    return "".join(getattr(block, "text", "") for block in done.content)


def records(result: Any) -> list[str]:
    return [d.message for d in result.diagnostics if d.code.startswith("sandbox-")]


@pytest.mark.parametrize(
    ("where", "what"),
    [("root", "the root directory"), ("home", "the home directory"), ("above", "an ancestor")],
)
async def test_a_project_grant_is_refused_when_the_project_is_root_or_home(
    places: tuple[Path, Path], where: str, what: str
) -> None:
    project, home = places
    cwd = {"root": Path("/"), "home": home, "above": home.parent}[where]
    declared = reader(project, "declared", 'Permissions(read=["."])')
    default = reader(project, "default")
    async with IsolationPool(**options()) as pool:
        result = await load_custom_tools(
            [str(declared), str(default)],
            cwd=str(cwd),
            home=str(home),
            isolation=pool,
            sandbox=True,
        )
        assert [error.code for error in result.errors] == ["invalid-permissions"]
        message = result.errors[0].error
        assert message.startswith(f"{declared}: the project-relative permission '.' would grant")
        assert f"({what}" in message
        assert "start the host in the project's own directory" in message
        # Declaring nothing in such a place is not the project's: its own files only.
        assert result.tool_names == ("default", "default_write")
        assert "may read nothing of the project" in records(result)[0]
        denied = await call(result, "default", path=str(home / ".ssh" / "id_rsa"))
        assert denied.startswith("denied reading `~/.ssh/id_rsa`")
        denied = await call(result, "default", path=str(project / "notes.txt"))
        assert denied.startswith("denied reading")


async def test_a_user_level_pack_does_not_read_the_project_by_default(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    reader(home / ".customtools" / "tools", "mine")
    async with IsolationPool(**options()) as pool:
        result = await discover_and_load(
            cwd=project, home=home, entry_points=False, isolation=pool, sandbox=True
        )
        assert result.errors == ()
        (record,) = records(result)
        assert "the pack may read nothing of the project, write only" in record
        denied = await call(result, "mine", path=str(project / "notes.txt"))
        assert denied.startswith(f"denied reading `{project / 'notes.txt'}`")
        own = await call(result, "mine", path=str(home / ".customtools" / "tools" / "mine.py"))
        assert "def mine" in own


async def test_the_record_shows_the_project_and_the_paths_resolved(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    (home / "real").mkdir()
    (home / "link").symlink_to(home / "real")
    (project / "data").mkdir()
    path = reader(project, "shown", 'Permissions(read=[".", "data", "~/link"], write=["$TMP/x"])')
    async with IsolationPool(**options()) as pool:
        result = await load_custom_tools(
            [str(path)], cwd=str(project), home=str(home), isolation=pool, sandbox=True
        )
        assert result.errors == ()
        (record,) = records(result)
        assert (
            f"the pack may read the project `{project}`, `{project / 'data'}`, `~/real`, write"
            " `$TMP/x` and its temporary directory"
        ) in record


async def test_a_dot_dot_path_is_refused_naming_what_it_leads_to(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    path = reader(project, "up", 'Permissions(write=["$TMP/.."])')
    async with IsolationPool(**options()) as pool:
        result = await load_custom_tools(
            [str(path)], cwd=str(project), home=str(home), isolation=pool, sandbox=True
        )
        assert result.tools == ()
        assert [error.code for error in result.errors] == ["invalid-permissions"]
        assert "'$TMP/..' has a '..' component; declare the path it leads to" in (
            result.errors[0].error
        )


async def test_a_missing_write_directory_is_made_in_the_project_and_reported_elsewhere(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    inside = reader(project, "maker", 'Permissions(write=["out/reports", "$TMP/cache"])')
    outside = reader(project, "elsewhere", 'Permissions(write=["~/.cache/newtool"])')
    (project / "away").symlink_to(home)
    escaping = reader(project, "escaping", 'Permissions(write=["away/made"])')
    async with IsolationPool(**options()) as pool:
        result = await load_custom_tools(
            [str(inside), str(outside), str(escaping)],
            cwd=str(project),
            home=str(home),
            isolation=pool,
            sandbox=True,
        )
        assert result.tool_names == ("maker", "maker_write")
        written = await call(
            result, "maker_write", path=str(project / "out" / "reports" / "a.txt"), text="a"
        )
        assert written == "written"
        assert (project / "out" / "reports" / "a.txt").read_text() == "a"
        errors = {Path(error.path).stem: error for error in result.errors}
        assert sorted(errors) == ["elsewhere", "escaping"]
        assert {error.code for error in errors.values()} == {"invalid-permissions"}
        assert (
            f"the write path '~/.cache/newtool' ({home / '.cache' / 'newtool'}) does not exist,"
            " and the sandbox can only grant a path that exists; create it"
        ) in errors["elsewhere"].error
        assert not (home / ".cache").exists()
        assert "'away/made' leads outside the project" in errors["escaping"].error
        assert not (home / "made").exists()
