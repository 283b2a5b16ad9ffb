"""A project `.mcp.json` spawns nothing before the user trusts its exact content."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from customtools import discover_and_load
from customtools.loading import TrustStore
from customtools.mcp import McpMount

pytestmark = pytest.mark.anyio


def write_config(project: Path, marker: Path, flavour: str) -> None:
    # A "server" that proves it was spawned by writing the marker, then exits.
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text({flavour!r})"
    config = {"mcpServers": {"canary": {"command": sys.executable, "args": ["-c", code]}}}
    (project / ".mcp.json").write_text(json.dumps(config))


async def test_the_canary_command_runs_only_after_trust(tmp_path: Path) -> None:
    project, marker = tmp_path / "project", tmp_path / "marker"
    project.mkdir()
    write_config(project, marker, "one")
    store = TrustStore(home=tmp_path / "home")
    options = {"home": str(tmp_path / "home"), "entry_points": False, "trust_store": store}

    async with McpMount(backoff=30) as mount:
        untrusted = await discover_and_load([], project, mcp_servers=mount, **options)
    assert not marker.exists()
    [pending] = untrusted.pending_trust
    assert [Path(f.real_path).name for f in pending.files] == [".mcp.json"]

    store.grant(pending)
    async with McpMount(backoff=30) as mount:
        await discover_and_load([], project, mcp_servers=mount, **options)
    assert marker.read_text() == "one"  # spawned once trusted (it is no real server)

    marker.unlink()
    write_config(project, marker, "two")  # a one-byte change to what would run
    async with McpMount(backoff=30) as mount:
        edited = await discover_and_load([], project, mcp_servers=mount, **options)
    assert not marker.exists()
    assert [p.status for p in edited.pending_trust] == ["changed"]


async def test_editing_a_server_script_the_config_names_asks_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    script = project / "tools" / "server.py"
    script.write_text("print('v1')\n")
    config = {"mcpServers": {"local": {"command": sys.executable, "args": ["tools/server.py"]}}}
    (project / ".mcp.json").write_text(json.dumps(config))
    store = TrustStore(home=tmp_path / "home")
    options = {"home": str(tmp_path / "home"), "entry_points": False, "trust_store": store}

    async with McpMount(backoff=30) as mount:
        first = await discover_and_load([], project, mcp_servers=mount, **options)
    [pending] = first.pending_trust
    assert sorted(Path(f.real_path).name for f in pending.files) == [".mcp.json", "server.py"]
    store.grant(pending)
    script.write_text("print('v2')\n")
    async with McpMount(backoff=30) as mount:
        edited = await discover_and_load([], project, mcp_servers=mount, **options)
    assert [p.status for p in edited.pending_trust] == ["changed"]
    assert any("server.py" in change for change in edited.pending_trust[0].changes)


async def test_a_project_mcp_json_symlinked_elsewhere_is_still_gated(tmp_path: Path) -> None:
    project, marker, elsewhere = tmp_path / "project", tmp_path / "marker", tmp_path / "else"
    project.mkdir()
    elsewhere.mkdir()
    write_config(elsewhere, marker, "one")
    (project / ".mcp.json").symlink_to(elsewhere / ".mcp.json")
    options = {"home": str(tmp_path / "home"), "entry_points": False}

    async with McpMount(backoff=30) as mount:
        result = await discover_and_load([], project, mcp_servers=mount, **options)

    assert not marker.exists()
    assert len(result.pending_trust) == 1


def write_project_servers(project: Path, marker: Path) -> None:
    """The review's M3 layout: a script importing a project module, and a ``-m`` package."""
    (project / "srvpkg").mkdir(parents=True)
    (project / "srv.py").write_text("import srvlib\n")
    (project / "srvlib.py").write_text("X = 1\n")
    (project / "srvpkg" / "__main__.py").write_text("X = 1\n")
    (project / "README.md").write_text("# servers\n")
    config = {
        "mcpServers": {
            "local": {"command": sys.executable, "args": ["srv.py"]},
            "modsrv": {"command": sys.executable, "args": ["-m", "srvpkg"]},
        }
    }
    (project / ".mcp.json").write_text(json.dumps(config))


@pytest.mark.parametrize("edit", ["srvlib.py", "srvpkg/__init__.py", "srvpkg/__main__.py"])
async def test_code_a_server_imports_from_the_project_is_covered(tmp_path: Path, edit: str) -> None:
    project, marker = tmp_path / "project", tmp_path / "PWNED_MCP"
    write_project_servers(project, marker)
    store = TrustStore(home=tmp_path / "home")
    options = {"home": str(tmp_path / "home"), "entry_points": False, "trust_store": store}
    async with McpMount(backoff=30) as mount:
        first = await discover_and_load([], project, mcp_servers=mount, **options)
    [pending] = first.pending_trust
    names = {Path(f.real_path).name for f in pending.files}
    assert {".mcp.json", "srv.py", "srvlib.py", "__main__.py"} <= names
    assert "README.md" not in names
    assert "programs outside the project are not covered" in pending.message()
    assert sys.executable in pending.message()
    store.grant(pending)
    target = project / edit
    code = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
    target.write_text(code + (target.read_text() if target.exists() else ""))
    async with McpMount(backoff=30) as mount:
        edited = await discover_and_load([], project, mcp_servers=mount, **options)
    assert not marker.exists()
    [changed] = edited.pending_trust
    assert changed.status == "changed"
    assert edited.tools == ()


async def test_a_data_file_beside_a_server_does_not_ask_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project_servers(project, tmp_path / "marker")
    store = TrustStore(home=tmp_path / "home")
    from customtools._loading._mcpjson import _project_code
    from customtools._loading._trust import file_source

    def source() -> object:
        files, trees, _notes = _project_code(str(project / ".mcp.json"))
        return file_source(project / ".mcp.json", provider="mcp", files=files, trees=trees)

    first = source()
    store.grant(first)  # type: ignore[arg-type]
    (project / "README.md").write_text("# edited\n")
    assert store.check(source()) is None  # type: ignore[arg-type]
    (project / "srvlib.py").write_text("X = 2\n")
    assert store.check(source()) is not None  # type: ignore[arg-type]


def test_a_server_started_in_the_project_covers_the_code_there(tmp_path: Path) -> None:
    from customtools._loading._mcpjson import _project_code

    project = tmp_path / "project"
    project.mkdir()
    (project / "cfg.json").write_text("{}")
    (project / "package.json").write_text('{"scripts": {"start": "node srv.js"}}')
    config = {
        "mcpServers": {
            "web": {"command": sys.executable, "args": ["-m", "http.server"]},
            "cfg": {"command": "npx", "args": ["some-server", "--config", "cfg.json"]},
            "away": {"command": "npx", "args": ["other-server"], "cwd": str(tmp_path)},
        }
    }
    (project / ".mcp.json").write_text(json.dumps(config))
    files, trees, notes = _project_code(str(project / ".mcp.json"))
    # `python -m` and `npx` started in the project may run what they find there.
    assert files == [str(project / "package.json"), str(project / "cfg.json")]
    assert trees == [str(project)]  # not tmp_path: a server started outside adds nothing
    assert "'npx'" in notes[0]


async def test_a_server_without_cwd_covers_the_project_code_it_runs_implicitly(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    markers = {"py": tmp_path / "PWNED_C", "mk": tmp_path / "PWNED_MAKE"}
    config = {
        "mcpServers": {
            "py": {"command": sys.executable, "args": ["-c", "import srvlib; srvlib.main()"]},
            "mk": {"command": "make", "args": ["-s", "serve"]},
        }
    }
    (project / ".mcp.json").write_text(json.dumps(config))
    (project / "srvlib.py").write_text("def main():\n    pass\n")
    (project / "Makefile").write_text("serve:\n\t@true\n")
    store = TrustStore(home=tmp_path / "home")
    options = {"home": str(tmp_path / "home"), "entry_points": False, "trust_store": store}

    async def yes(pending: object) -> bool:
        return True

    async with McpMount(backoff=30) as mount:
        trusted = await discover_and_load([], project, mcp_servers=mount, trust=yes, **options)
    assert trusted.pending_trust == ()
    (project / "srvlib.py").write_text(
        f"import pathlib\npathlib.Path({str(markers['py'])!r}).write_text('x')\n"
        "def main():\n    pass\n"
    )
    (project / "Makefile").write_text(f"serve:\n\t@touch {markers['mk']}\n")

    async with McpMount(backoff=30) as mount:
        edited = await discover_and_load([], project, mcp_servers=mount, **options)

    [pending] = edited.pending_trust
    assert pending.status == "changed"
    edited_files = {f"{project / 'Makefile'} was edited", f"{project / 'srvlib.py'} was edited"}
    assert set(pending.changes) == edited_files
    assert not any(marker.exists() for marker in markers.values())


async def test_a_trusted_server_without_cwd_starts_in_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "where"
    code = f"import os, pathlib; pathlib.Path({str(marker)!r}).write_text(os.getcwd())"
    config = {"mcpServers": {"here": {"command": sys.executable, "args": ["-c", code]}}}
    (project / ".mcp.json").write_text(json.dumps(config))
    options = {"home": str(tmp_path / "home"), "entry_points": False}
    async with McpMount(backoff=30) as mount:
        await discover_and_load([], project, mcp_servers=mount, trust="all", **options)
    assert marker.read_text() == str(project)  # not the host's working directory
