"""The trust store and the trust policies of discover_and_load."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from customtools._errors import TrustStoreError
from customtools._loading._loader import discover_and_load, load_scan, scan
from customtools._loading._trust import PendingSource, file_source, project_sources
from customtools._loading._trust_store import TrustStore

from ._helpers import write

pytestmark = pytest.mark.anyio


def tool_module(name: str, description: str = "d") -> str:
    return (
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        f"    return CustomTool(name={name!r}, description={description!r},"
        " parameters={'type': 'object'}, execute=lambda *a: 'ok')\n"
    )


@pytest.fixture
def tools(project: Path) -> Path:
    path = project / ".claude" / "tools"
    write(path / "one.py", tool_module("one"))
    return path


def sources(project: Path, home: Path) -> tuple:
    return project_sources(scan((), project, home=home, entry_points=False))


async def test_default_store_lives_in_the_users_app_directory(home: Path) -> None:
    assert TrustStore(home=home).path == str(home / ".customtools" / "trust.json")
    assert TrustStore(home=home, app_name="myagent").path == str(home / ".myagent" / "trust.json")


async def test_grant_is_written_atomically_with_mode_0600(
    home: Path, project: Path, tools: Path
) -> None:
    store = TrustStore(home=home)
    (source,) = sources(project, home)
    assert not store.is_trusted(source)
    store.grant(source)
    assert store.is_trusted(source)
    path = Path(store.path)
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["trust.json"]  # no temporary left
    data = json.loads(path.read_text())
    record = data["sources"][str(tools.resolve())]
    assert record["digest"] == source.digest
    assert set(record["files"]) == {"one.py"}


async def test_revoke_forgets_a_grant(home: Path, project: Path, tools: Path) -> None:
    store = TrustStore(home=home)
    (source,) = sources(project, home)
    store.grant(source)
    assert store.revoke(tools) is True
    assert store.revoke(tools) is False
    assert not store.is_trusted(source)
    assert store.grants() == ()


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"version": 99, "sources": {}}', b'{"version": 1, "sources": {"/x": 5}}'],
)
async def test_a_corrupt_store_is_an_error_naming_the_file_never_trust(
    home: Path, project: Path, tools: Path, content: bytes
) -> None:
    store = TrustStore(home=home)
    Path(store.path).parent.mkdir(parents=True)
    Path(store.path).write_bytes(content)
    os.chmod(store.path, 0o600)
    (source,) = sources(project, home)
    with pytest.raises(TrustStoreError, match=r"trust store .*trust\.json") as caught:
        store.is_trusted(source)
    assert caught.value.path == store.path
    write(home / ".customtools" / "tools" / "mine.py", tool_module("mine"))
    result = await discover_and_load((), project, home=home, entry_points=False)
    assert result.tool_names == ("mine",)  # the user's own tools still load
    (error,) = result.errors
    assert error.code == "trust-store-error"
    assert error.path == store.path
    assert [p.status for p in result.pending_trust] == ["blocked"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
async def test_a_store_writable_by_others_is_refused(
    home: Path, project: Path, tools: Path
) -> None:
    store = TrustStore(home=home)
    (source,) = sources(project, home)
    store.grant(source)
    os.chmod(store.path, 0o666)
    with pytest.raises(TrustStoreError, match="writable by other users"):
        store.is_trusted(source)


async def test_prompt_lists_pending_sources_with_the_files_that_would_run(
    home: Path, project: Path, tools: Path
) -> None:
    write(tools / "pkg" / "__init__.py", tool_module("pkg"))
    write(tools / "pkg" / "helper.py", "X = 1\n")
    write(tools / "pkg" / "__pycache__" / "junk.pyc", "x")
    write(tools / "notes.txt", "not run")
    result = await discover_and_load((), project, home=home, entry_points=False)
    assert result.tools == ()
    (pending,) = result.pending_trust
    assert isinstance(pending, PendingSource)
    assert pending.status == "untrusted"
    assert [f.name for f in pending.files] == ["one.py", "pkg/__init__.py", "pkg/helper.py"]
    (diag,) = [d for d in result.diagnostics if d.code == "pending-trust"]
    assert "3 file(s) would run: one.py, pkg/__init__.py, pkg/helper.py" in diag.message
    assert result.to_dict()["pendingTrust"][0]["status"] == "untrusted"


async def test_none_loads_no_project_code_even_when_trusted(
    home: Path, project: Path, tools: Path
) -> None:
    TrustStore(home=home).grant(sources(project, home)[0])
    result = await discover_and_load((), project, home=home, entry_points=False, trust="none")
    assert result.tools == ()
    assert [p.status for p in result.pending_trust] == ["blocked"]


async def test_all_loads_everything_without_touching_the_store(
    home: Path, project: Path, tools: Path
) -> None:
    result = await discover_and_load((), project, home=home, entry_points=False, trust="all")
    assert result.tool_names == ("one",)
    assert not (home / ".customtools").exists()


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_a_callback_is_asked_per_pending_source_and_yes_is_recorded(
    home: Path, project: Path, tools: Path, asynchronous: bool
) -> None:
    write(project / ".codex" / "tools" / "two.py", tool_module("two"))
    asked: list[PendingSource] = []

    def decide(pending: PendingSource) -> bool:
        asked.append(pending)
        return pending.source.provider == "claude"

    async def decide_async(pending: PendingSource) -> bool:
        return decide(pending)

    callback = decide_async if asynchronous else decide
    result = await discover_and_load((), project, home=home, entry_points=False, trust=callback)
    assert [p.source.provider for p in asked] == ["claude", "codex"]
    assert result.tool_names == ("one",)
    assert [p.source.provider for p in result.pending_trust] == ["codex"]
    again = await discover_and_load((), project, home=home, entry_points=False)
    assert again.tool_names == ("one",)  # the grant was recorded


async def test_only_true_grants(home: Path, project: Path, tools: Path) -> None:
    result = await discover_and_load(
        (), project, home=home, entry_points=False, trust=lambda pending: "yes"
    )
    assert result.tools == ()
    assert not Path(TrustStore(home=home).path).exists()


async def test_an_unknown_policy_is_a_value_error(home: Path, project: Path) -> None:
    with pytest.raises(ValueError, match="trust must be 'prompt', 'all', 'none'"):
        await discover_and_load((), project, home=home, trust="yes")  # type: ignore[arg-type]


async def test_load_scan_applies_the_gate_with_the_given_store(
    home: Path, project: Path, tools: Path, tmp_path: Path
) -> None:
    store = TrustStore(tmp_path / "elsewhere" / "trust.json")
    scanned = scan((), project, home=home, entry_points=False)
    assert (await load_scan(scanned, project, trust_store=store)).tools == ()
    store.grant(project_sources(scanned)[0])
    assert (await load_scan(scanned, project, trust_store=store)).tool_names == ("one",)


async def test_configured_paths_are_the_users_choice(
    home: Path, project: Path, tools: Path
) -> None:
    result = await discover_and_load(
        [tools / "one.py"], project, home=home, entry_points=False, disabled_providers=["claude"]
    )
    assert result.tool_names == ("one",)
    assert result.pending_trust == ()


async def test_a_plugin_root_outside_the_project_is_user_scope(
    home: Path, project: Path, tmp_path: Path
) -> None:
    write(tmp_path / "plug" / "tools" / "p.py", tool_module("p"))
    result = await discover_and_load(
        (), project, home=home, entry_points=False, plugin_dirs=[tmp_path / "plug"]
    )
    assert result.tool_names == ("p",)
    assert result.tools[0].source.level == "user"


async def test_invisible_characters_are_flagged_in_the_pending_listing(
    home: Path, project: Path, tools: Path
) -> None:
    write(tools / "one.md", '---\nname: one\ndescription: "safe\u200b text\u202e"\n---\n')
    write(tools / "t\u200bwo.py", tool_module("two"))
    result = await discover_and_load((), project, home=home, entry_points=False)
    (pending,) = result.pending_trust
    text = " ".join(pending.warnings)
    assert "file name t<U+200B>wo.py" in text
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in text
    assert "description" in text
    assert "WARNING" in pending.message()


async def test_a_file_source_covers_a_project_mcp_json(home: Path, project: Path) -> None:
    config = write(project / ".mcp.json", '{"mcpServers": {"x": {"command": "run-me"}}}')
    store = TrustStore(home=home)
    source = file_source(config, provider="mcp")
    assert [f.name for f in source.files] == [".mcp.json"]
    (pending,) = store.pending([source])
    assert pending.status == "untrusted"
    store.grant(pending)
    assert store.is_trusted(file_source(config, provider="mcp"))
    config.write_text('{"mcpServers": {"x": {"command": "run-something-else"}}}')
    (changed,) = store.pending([file_source(config, provider="mcp")])
    assert changed.changes == (".mcp.json was edited",)


async def test_an_unreadable_file_cannot_be_trusted(home: Path, project: Path, tools: Path) -> None:
    (tools / "gone.py").symlink_to(tools / "missing-target.py")
    link_source = project_sources(
        [
            c
            for c in scan((), project, home=home, entry_points=False).candidates
            if c.source.level == "project"
        ]
        + []
    )
    (source,) = link_source
    assert source.trustable  # the dangling link is not a candidate (a scan diagnostic)
    write(tools / "pkg" / "__init__.py", tool_module("pkg"))
    os.symlink(tools / "nowhere", tools / "pkg" / "broken.py")
    (source,) = sources(project, home)
    assert not source.trustable
    assert "pkg/broken.py cannot be read" in source.problems[0]
    with pytest.raises(ValueError, match="cannot be trusted"):
        TrustStore(home=home).grant(source)


async def test_the_stat_cache_skips_unchanged_files_and_sees_same_size_edits(
    home: Path, project: Path, tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import customtools._loading._trust as trust_module

    if not trust_module._STAT_CACHE:
        pytest.skip("the stat cache is off on this platform")
    monkeypatch.setattr(trust_module, "_RACY_NS", 0)  # the file was written just now
    store = TrustStore(home=home)
    store.grant(sources(project, home)[0])
    reads: list[str] = []
    real_hash = trust_module.hash_file

    def counting(path: str, budget: int) -> tuple[str, int, os.stat_result]:
        reads.append(path)
        return real_hash(path, budget)

    monkeypatch.setattr(trust_module, "hash_file", counting)
    scanned = scan((), project, home=home, entry_points=False)
    assert store.pending(scanned) == ()
    assert reads == []  # trusted by stat, not read
    path = tools / "one.py"
    data = path.read_bytes()
    path.write_bytes(data.replace(b"'one'", b"'One'"))  # same size
    (pending,) = store.pending(scanned)
    assert reads == [str(path.resolve())]
    assert pending.changes == ("one.py was edited",)
    assert not TrustStore(home=home, stat_cache=False).is_trusted(pending.source)


async def test_recently_changed_files_never_key_the_stat_cache(
    home: Path, project: Path, tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import customtools._loading._trust as trust_module

    store = TrustStore(home=home)
    (source,) = sources(project, home)
    store.grant(source)
    monkeypatch.setattr(trust_module, "_RACY_NS", 10**18)  # nothing is old enough to cache
    (fresh,) = sources(project, home)
    assert all(item.stat is None for item in fresh.files)


async def test_a_shipped_bytecode_cache_is_flagged_before_trust(
    home: Path, project: Path, tools: Path
) -> None:
    import importlib.util
    import py_compile

    source = tools / "one.py"
    cache = Path(importlib.util.cache_from_source(str(source.resolve())))
    py_compile.compile(str(source), cfile=str(cache))  # a header matching the source
    result = await discover_and_load((), project, home=home, entry_points=False)
    (pending,) = result.pending_trust
    (warning,) = pending.warnings
    assert cache.name in warning
    assert "holds bytecode for one.py that was not reviewed" in warning


async def test_options_are_explicit_keywords_so_a_misspelling_fails(
    home: Path, project: Path
) -> None:
    with pytest.raises(TypeError, match="plugin_dir"):
        await discover_and_load((), project, home=home, plugin_dir=["x"])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="trust_policy"):
        scan((), project, home=home, trust_policy="all")  # type: ignore[call-arg]
    result = await discover_and_load(
        (),
        project,
        home=home,
        app_name="myagent",
        native_dirs=((), ()),
        plugin_dirs=(),
        providers=None,
        disabled_providers=("codex",),
        entry_points=False,
        trust="prompt",
        trust_store=None,
    )
    assert [d.code for d in result.diagnostics] == ["provider-disabled"]


async def test_a_grant_records_the_permissions_and_a_widening_names_what_grew(
    home: Path, project: Path, tools: Path
) -> None:
    declared = "from customtools.isolation import Permissions\nPERMISSIONS = Permissions({})\n"
    write(tools / "net.py", declared.format("net=[443]") + tool_module("net"))
    store = TrustStore(home=home)
    (source,) = sources(project, home)
    store.grant(source)
    record = json.loads(Path(store.path).read_text())["sources"][str(tools.resolve())]
    # Only what differs from the default is recorded (one.py declares nothing).
    assert record["permissions"] == {
        "net.py": {"read": ["."], "write": [], "net": [443], "run": False, "env": []}
    }
    write(tools / "net.py", declared.format("net='all'") + tool_module("net"))
    write(tools / "one.py", declared.format("run=True") + tool_module("one"))
    (widened,) = store.pending(sources(project, home))
    assert widened.changes == (
        "net.py was edited",
        "one.py was edited",
        "net.py now may also use the network",
        "one.py now may also start programs",
    )
    # A grant recorded before the permissions were: only what was edited.
    del record["permissions"]
    Path(store.path).write_text(
        json.dumps({"version": 1, "sources": {str(tools.resolve()): record}})
    )
    (edited,) = store.pending(sources(project, home))
    assert edited.changes == ("net.py was edited", "one.py was edited")
