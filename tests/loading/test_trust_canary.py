"""Nothing from a project runs before trust: canary modules in every project-scope location.

Each canary writes a marker file when imported. Before trust no marker may appear; after trust
every canary loads; after a one-byte edit, an added file, a rename or a symlink swap the changed
source is pending again and its canary does not run. A project that tries to pre-approve
itself (a store inside the project, environment variables, a symlinked store) gets nowhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from customtools._loading._loader import LoadResult, discover_and_load
from customtools._loading._trust import project_sources
from customtools._loading._trust_store import TrustStore

from ._helpers import write

pytestmark = pytest.mark.anyio

CANARY = """\
import os
from customtools import CustomTool

open(os.path.join({markers!r}, {name!r}), "w").close()


def factory(api):
    return CustomTool(
        name={name!r}, description="canary", parameters={{"type": "object"}},
        execute=lambda *args: "ok",
    )
"""


def canary(path: Path, name: str, markers: Path) -> Path:
    return write(path, CANARY.format(markers=str(markers), name=name))


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    path = tmp_path / "markers"
    path.mkdir()
    return path


@pytest.fixture
def planted(home: Path, project: Path, markers: Path) -> dict[str, Path]:
    """A canary in every project-scope location, plus one user tool."""
    files = {
        "canary_native": project / ".customtools" / "tools" / "canary_native.py",
        "canary_claude": project / ".claude" / "tools" / "canary_claude.py",
        "canary_codex": project / ".codex" / "tools" / "canary_codex.py",
        "canary_pkg": project / ".claude" / "tools" / "canary_pkg" / "__init__.py",
        "canary_plugin": project / "plugins" / "acme" / "tools" / "canary_plugin.py",
        "canary_declared": project / "plugins" / "acme" / "extra" / "canary_declared.py",
        "canary_market": home / "cache" / "m" / "tools" / "canary_market.py",
    }
    for name, path in files.items():
        canary(path, name, markers)
    write(project / "plugins" / "acme" / "plugin.json", '{"name": "acme", "tools": ["extra"]}')
    registry = {
        "version": 2,
        "plugins": {
            "market@m": [
                {
                    "scope": "project",
                    "projectPath": str(project),
                    "installPath": str(home / "cache" / "m"),
                }
            ]
        },
    }
    write(home / ".claude" / "plugins" / "installed_plugins.json", json.dumps(registry))
    canary(home / ".customtools" / "tools" / "user_tool.py", "user_tool", markers)
    return files


PROJECT_TOOLS = {
    "canary_native",
    "canary_claude",
    "canary_codex",
    "canary_pkg",
    "canary_plugin",
    "canary_declared",
    "canary_market",
}


async def load(project: Path, home: Path, **options: object) -> LoadResult:
    return await discover_and_load(
        (),
        project,
        home=home,
        entry_points=False,
        plugin_dirs=[project / "plugins" / "acme"],
        **options,  # type: ignore[arg-type]
    )


def written(markers: Path) -> set[str]:
    return {path.name for path in markers.iterdir()}


async def trust_everything(project: Path, home: Path, markers: Path) -> None:
    result = await load(project, home)
    store = TrustStore(home=home)
    for pending in result.pending_trust:
        store.grant(pending)
    for marker in markers.iterdir():
        marker.unlink()


async def test_no_project_canary_runs_before_trust(
    home: Path, project: Path, markers: Path, planted: dict[str, Path]
) -> None:
    result = await load(project, home)
    assert written(markers) == {"user_tool"}
    assert result.tool_names == ("user_tool",)
    assert result.errors == ()
    pending_files = {
        os.path.basename(file.real_path) for item in result.pending_trust for file in item.files
    }
    assert {f"{name}.py" for name in PROJECT_TOOLS - {"canary_pkg"}} <= pending_files
    assert "__init__.py" in pending_files
    assert "plugin.json" in pending_files
    codes = [d.code for d in result.diagnostics if d.code == "pending-trust"]
    # Three provider directories, the plugin root, the project-scoped marketplace install.
    assert len(codes) == len(result.pending_trust) == 5


async def test_every_project_tool_loads_after_trust(
    home: Path, project: Path, markers: Path, planted: dict[str, Path]
) -> None:
    await trust_everything(project, home, markers)
    result = await load(project, home)
    assert set(result.tool_names) == PROJECT_TOOLS | {"user_tool"}
    assert result.pending_trust == ()
    assert written(markers) == PROJECT_TOOLS | {"user_tool"}


def one_byte_edit(planted: dict[str, Path], project: Path) -> tuple[str, str]:
    path = planted["canary_codex"]
    path.write_bytes(path.read_bytes() + b"#")
    return "canary_codex", "canary_codex.py was edited"


def package_file_added(planted: dict[str, Path], project: Path) -> tuple[str, str]:
    write(planted["canary_pkg"].parent / "helpers.py", "X = 1\n")
    return "canary_pkg", "added canary_pkg/helpers.py"


def renamed(planted: dict[str, Path], project: Path) -> tuple[str, str]:
    path = planted["canary_native"]
    path.rename(path.with_name("renamed.py"))
    return "canary_native", "added renamed.py"


def manifest_edited(planted: dict[str, Path], project: Path) -> tuple[str, str]:
    manifest = project / "plugins" / "acme" / "plugin.json"
    manifest.write_text('{"name": "acme", "tools": ["extra"]} ')
    return "canary_plugin", "plugin.json was edited"


@pytest.mark.parametrize("change", [one_byte_edit, package_file_added, renamed, manifest_edited])
async def test_a_change_asks_again_and_says_what_changed(
    home: Path, project: Path, markers: Path, planted: dict[str, Path], change: object
) -> None:
    await trust_everything(project, home, markers)
    tool, what = change(planted, project)  # type: ignore[operator]
    result = await load(project, home)
    assert tool not in written(markers)
    assert tool not in result.tool_names
    (pending,) = result.pending_trust
    assert pending.status == "changed"
    assert what in pending.changes
    assert what in next(d.message for d in result.diagnostics if d.code == "pending-trust")


async def test_a_symlink_swap_asks_again(home: Path, project: Path, markers: Path) -> None:
    first = canary(project / "lib" / "a.py", "swapped", markers)
    second = write(project / "lib" / "b.py", first.read_text())  # same bytes, other file
    link = project / ".claude" / "tools" / "swapped.py"
    link.parent.mkdir(parents=True)
    link.symlink_to(first)
    store = TrustStore(home=home)
    for pending in (await load(project, home)).pending_trust:
        store.grant(pending)
    assert "swapped" in (await load(project, home)).tool_names
    (markers / "swapped").unlink()
    link.unlink()
    link.symlink_to(second)
    result = await load(project, home)
    assert not (markers / "swapped").exists()
    (pending,) = result.pending_trust
    assert pending.changes == (f"swapped.py now points to {second} (was {first})",)


async def test_a_swapped_directory_link_asks_again(
    home: Path, project: Path, markers: Path
) -> None:
    canary(project / "v1" / "tool.py", "dir_swap", markers)
    canary(project / "v2" / "tool.py", "dir_swap", markers)
    tools = project / ".claude" / "tools"
    tools.parent.mkdir()
    tools.symlink_to(project / "v1")
    store = TrustStore(home=home)
    for pending in (await load(project, home)).pending_trust:
        store.grant(pending)
    tools.unlink()
    tools.symlink_to(project / "v2")
    result = await load(project, home)
    assert written(markers) == set()
    (pending,) = result.pending_trust
    assert pending.status == "changed"
    assert pending.changes == (
        f"{tools} now resolves to {project / 'v2'} (trusted: {project / 'v1'})",
    )


async def test_a_grant_store_inside_the_project_has_no_effect(
    home: Path, project: Path, markers: Path, planted: dict[str, Path]
) -> None:
    # A perfectly valid store, with the right digests, but written into the project.
    from customtools._loading._loader import scan

    scanned = scan((), project, home=home, entry_points=False)
    fake = TrustStore(project / ".customtools" / "trust.json")
    for source in project_sources(scanned):
        fake.grant(source)
    write(project / ".customtools" / "config.json", '{"trust": "all", "trustAll": true}')
    write(project / ".env", "CUSTOMTOOLS_TRUST=all\nHOME=.\nCUSTOMTOOLS_HOME=./.customtools\n")
    result = await load(project, home)
    assert written(markers) == {"user_tool"}
    assert result.tool_names == ("user_tool",)


async def test_environment_variables_grant_nothing(
    home: Path,
    project: Path,
    markers: Path,
    planted: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("CUSTOMTOOLS_TRUST", "CUSTOMTOOLS_TRUST_ALL", "CUSTOMTOOLS_TRUST_STORE"):
        monkeypatch.setenv(name, "all")
    result = await load(project, home)
    assert written(markers) == {"user_tool"}
    assert len(result.pending_trust) == 5


async def test_a_store_that_is_a_symlink_trusts_nothing(
    home: Path, project: Path, markers: Path, planted: dict[str, Path]
) -> None:
    from customtools._loading._loader import scan

    planted_store = TrustStore(project / "grants.json")
    for source in project_sources(scan((), project, home=home, entry_points=False)):
        planted_store.grant(source)
    store_path = Path(TrustStore(home=home).path)
    store_path.parent.mkdir(parents=True, exist_ok=True)
    store_path.symlink_to(project / "grants.json")
    result = await load(project, home)
    assert written(markers) == {"user_tool"}
    (error,) = result.errors
    assert error.code == "trust-store-error"
    assert "is a symbolic link" in error.error
    assert str(store_path) in error.error


async def test_a_project_plugin_root_that_symlinks_out_is_still_gated(
    home: Path, project: Path, markers: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    canary(elsewhere / "tools" / "canary_linked.py", "canary_linked", markers)
    (project / "plugins").mkdir(parents=True, exist_ok=True)
    link = project / "plugins" / "linked"
    link.symlink_to(elsewhere, target_is_directory=True)

    result = await discover_and_load((), project, home=home, entry_points=False, plugin_dirs=[link])

    assert written(markers) == set()
    assert result.tool_names == ()
    assert len(result.pending_trust) == 1
