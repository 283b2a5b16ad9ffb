"""discover_and_load / load_custom_tools / scan / LoadResult: conflicts, reload, strict mode."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

from customtools._errors import LoadFailedError
from customtools._loading._api import NO_OP_UI, NoOpUIContext
from customtools._loading._loader import (
    LoadResult,
    discover_and_load,
    load_custom_tools,
    load_scan,
    scan,
)

from ._helpers import scan_of, source, tool_module, write

pytestmark = pytest.mark.anyio


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project


async def _discover(project: Path, home: Path, *paths: Path, **options: object) -> LoadResult:
    # These tests are about precedence and conflicts; the trust gate has tests of its own
    # (tests/loading/test_trust*.py), so project code is trusted here.
    options.setdefault("trust", "all")
    return await discover_and_load(
        [str(p) for p in paths],
        project,
        home=home,
        entry_points=False,
        **options,  # type: ignore[arg-type]
    )


async def test_user_tool_wins_over_project_tool_of_the_same_name(home: Path, project: Path) -> None:
    user = write(home / ".customtools" / "tools" / "dup.py", tool_module("shared_name"))
    proj = write(project / ".customtools" / "tools" / "dup.py", tool_module("shared_name"))
    result = await _discover(project, home)
    loaded = result.get("shared_name")
    assert loaded is not None
    assert loaded.path == str(user)
    assert loaded.source.level == "user"
    (error,) = result.errors
    assert error.code == "name-conflict"
    assert error.tool_name == "shared_name"
    assert error.path == str(proj)
    assert str(user) in error.error
    assert str(proj) in error.error
    assert error.error.count("[native]") == 2
    assert "user level" in error.error
    assert "project level" in error.error


async def test_conflict_message_names_both_providers(home: Path, project: Path) -> None:
    write(home / ".claude" / "tools" / "a.py", tool_module("cross_tool"))
    write(project / ".codex" / "tools" / "b.py", tool_module("cross_tool"))
    result = await _discover(project, home)
    (error,) = result.errors
    assert "[claude]" in error.error
    assert "[codex]" in error.error
    assert result.get("cross_tool").source.provider == "claude"  # type: ignore[union-attr]


async def test_nothing_can_take_a_builtin_name(home: Path, project: Path) -> None:
    write(home / ".customtools" / "tools" / "bash.py", tool_module("bash"))
    result = await _discover(project, home, builtin_tool_names=["bash"])
    assert result.tools == ()
    (error,) = result.errors
    assert error.code == "name-conflict"
    where = home / ".customtools" / "tools" / "bash.py"
    assert error.error == (
        "tool name 'bash' is a built-in tool name and cannot be taken; the tool from"
        f" {where} (customtools [native], user level) was left out: rename the tool"
    )


async def test_configured_paths_load_after_providers(
    home: Path, project: Path, tmp_path: Path
) -> None:
    write(project / ".customtools" / "tools" / "p.py", tool_module("from_provider"))
    extra = write(tmp_path / "extra" / "e.py", tool_module("from_config"))
    result = await _discover(project, home, extra.parent)
    assert result.tool_names == ("from_provider", "from_config")
    assert result.get("from_config").source.provider == "configured"  # type: ignore[union-attr]


async def test_names_differing_by_case_are_a_diagnostic(project: Path, tmp_path: Path) -> None:
    write(tmp_path / "t" / "a.py", tool_module("Search"))
    write(tmp_path / "t" / "b.py", tool_module("search"))
    result = await load_scan(scan_of(tmp_path / "t"), project)
    assert set(result.tool_names) == {"Search", "search"}
    (diag,) = [d for d in result.diagnostics if d.code == "similar-name"]
    assert "'search'" in diag.message
    assert "'Search'" in diag.message


async def test_load_custom_tools_loads_only_the_given_paths(
    home: Path, project: Path, tmp_path: Path
) -> None:
    write(home / ".customtools" / "tools" / "ignored.py", tool_module("not_discovered"))
    given = write(tmp_path / "given.py", tool_module("given_tool"))
    result = await load_custom_tools([given], project, home=home)
    assert result.tool_names == ("given_tool",)


async def test_load_custom_tools_reports_metadata_and_missing_paths(
    project: Path, tmp_path: Path
) -> None:
    meta = write(tmp_path / "readme.md", "---\nname: x\n---\n")
    result = await load_custom_tools([meta, tmp_path / "missing.py"], project)
    assert [e.code for e in result.errors] == ["metadata-not-executable", "not-found"]
    assert result.tools == ()


async def test_relative_paths_resolve_from_cwd(project: Path) -> None:
    write(project / "tools" / "rel.py", tool_module("relative_tool"))
    result = await load_custom_tools(["tools/rel.py"], project)
    assert result.tool_names == ("relative_tool",)
    assert result.tools[0].resolved_path == str((project / "tools" / "rel.py").resolve())


async def test_symlink_and_target_load_once(home: Path, project: Path, tmp_path: Path) -> None:
    target = write(tmp_path / "real" / "t.py", tool_module("linked_tool"))
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "t.py").symlink_to(target)
    result = await _discover(project, home, target.parent, link_dir)
    assert result.tool_names == ("linked_tool",)
    assert result.errors == ()


async def test_scan_runs_no_tool_code(home: Path, project: Path) -> None:
    marker = project / "MARKER"
    write(
        project / ".customtools" / "tools" / "canary.py",
        f"open({str(marker)!r}, 'w').close()\n" + tool_module("canary"),
    )
    scanned = scan((), project, home=home, entry_points=False)
    assert [Path(c.path).name for c in scanned.candidates] == ["canary.py"]
    assert not marker.exists()
    await load_scan(scanned, project, trust="all")
    assert marker.exists()


async def test_load_scan_loads_a_filtered_scan(home: Path, project: Path) -> None:
    tools = project / ".customtools" / "tools"
    write(tools / "keep.py", tool_module("kept"))
    write(tools / "drop.py", tool_module("dropped"))
    scanned = scan((), project, home=home, entry_points=False)
    trusted = tuple(c for c in scanned.candidates if not c.path.endswith("drop.py"))
    result = await load_scan(dataclasses.replace(scanned, candidates=trusted), project, trust="all")
    assert result.tool_names == ("kept",)


async def test_reload_picks_up_edited_and_new_files(project: Path, tmp_path: Path) -> None:
    tools = tmp_path / "reload"
    path = write(tools / "t.py", "VERSION = 1\n" + tool_module("versioned"))
    first = await load_custom_tools([tools], project)
    assert first.get("versioned").tool.execute() == "versioned"  # type: ignore[union-attr]
    write(path, "VERSION = 22\n" + tool_module("versioned_v2"))
    os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 5))  # a new mtime, as editors do
    write(tools / "new.py", tool_module("added_later"))
    second = await load_custom_tools([tools], project)
    assert second.tool_names == ("added_later", "versioned_v2")
    assert first.module_names[0] not in second.module_names
    assert sys.modules[second.module_names[1]].VERSION == 22  # type: ignore[attr-defined]
    # the first load's tool still works
    assert first.get("versioned").tool.execute() == "versioned"  # type: ignore[union-attr]


async def test_set_ui_context_reaches_factories_api(project: Path, tmp_path: Path) -> None:
    write(
        tmp_path / "ui" / "keeps_api.py",
        """
        KEPT = []

        def factory(api):
            KEPT.append(api)
            return {"name": "ui_tool", "execute": lambda *a: (api.has_ui, api.ui)}
        """,
    )
    result = await load_custom_tools([tmp_path / "ui"], project)
    execute = result.get("ui_tool").tool.execute  # type: ignore[union-attr]
    assert execute() == (False, NO_OP_UI)
    assert result.has_ui is False

    class HostUI(NoOpUIContext):
        pass

    host_ui = HostUI()
    result.set_ui_context(host_ui)
    assert execute() == (True, host_ui)
    result.set_ui_context(host_ui, has_ui=False)
    assert execute() == (False, host_ui)
    result.set_ui_context(None)
    assert execute() == (False, NO_OP_UI)


async def test_raise_for_errors_returns_self_when_clean(project: Path, tmp_path: Path) -> None:
    write(tmp_path / "ok" / "t.py", tool_module("clean"))
    result = await load_custom_tools([tmp_path / "ok"], project)
    assert result.raise_for_errors() is result
    assert result.ok


async def test_strict_load_raises_load_failed_error(project: Path, tmp_path: Path) -> None:
    write(tmp_path / "s" / "bad.py", "raise RuntimeError('nope')\n")
    write(tmp_path / "s" / "good.py", tool_module("fine"))
    with pytest.raises(LoadFailedError) as caught:
        await load_custom_tools([tmp_path / "s"], project, strict=True)
    (error,) = caught.value.errors
    assert error.code == "import-error"
    assert "RuntimeError: nope" in str(caught.value)


async def test_to_dict_is_json_serializable(project: Path, tmp_path: Path) -> None:
    write(tmp_path / "d" / "bad.py", "raise RuntimeError('nope')\n")
    write(tmp_path / "d" / "good.py", tool_module("dict_tool"))
    write(tmp_path / "d" / "about.md", "---\nname: about\ndescription: hi\n---\n")
    result = await load_custom_tools([tmp_path / "d"], project)
    data = json.loads(json.dumps(result.to_dict()))
    assert [t["name"] for t in data["tools"]] == ["dict_tool"]
    assert data["errors"][0]["code"] == "import-error"
    assert data["errors"][0]["traceback"].startswith("Traceback")
    assert set(data) == {"tools", "errors", "metadata", "diagnostics", "pendingTrust"}


async def test_api_cwd_is_the_load_cwd(project: Path, tmp_path: Path) -> None:
    write(
        tmp_path / "c" / "t.py",
        "def factory(api):\n    return {'name': 'cwd_tool', 'execute': lambda *a: api.cwd}\n",
    )
    result = await load_custom_tools([tmp_path / "c"], project)
    assert result.get("cwd_tool").tool.execute() == str(project)  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", [0, -1, True, "5"])
async def test_load_timeout_must_be_positive(project: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="load_timeout must be a positive number"):
        await load_custom_tools([], project, load_timeout=bad)  # type: ignore[arg-type]


def test_load_result_defaults_are_empty() -> None:
    result = LoadResult()
    assert (result.tools, result.errors, result.metadata, result.diagnostics) == ((), (), (), ())
    assert result.get("anything") is None
    assert repr(result) == "<LoadResult 0 tool(s), 0 error(s)>"
    assert source().provider == "configured"
