"""Reloader: only changed modules are re-imported, failures keep the last good version,
trust is asked again, replaced modules are released, and watch() sees edits on disk."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import weakref
from pathlib import Path
from typing import Any

import anyio
import pytest

from customtools import CustomToolAdapter
from customtools.loading import RELOAD_KEPT_PREVIOUS, Reloader, TrustStore

pytestmark = pytest.mark.anyio


def tool_source(name: str, text: str) -> str:
    return (
        "from customtools import CustomTool\n"
        "def factory(api):\n"
        f"    return CustomTool(name={name!r}, description='d', execute=lambda *a: {text!r})\n"
    )


async def call(result: Any, name: str) -> str:
    loaded = result.get(name)
    assert loaded is not None, result.tool_names
    out = await CustomToolAdapter(loaded.tool).execute("c", {})
    return str(out.content[0].text)


def tool_modules() -> list[str]:
    return [n for n in sys.modules if n.startswith("customtools._tool_modules.")]


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    directory = tmp_path / "tools"
    directory.mkdir()
    (directory / "alpha.py").write_text(tool_source("alpha", "a1"))
    (directory / "beta.py").write_text(tool_source("beta", "b1"))
    return directory


async def test_an_edit_reimports_only_that_module(tools: Path) -> None:
    reloader = Reloader([tools], tools.parent, explicit=True)
    first = await reloader.load()
    assert first.tool_names == ("alpha", "beta")
    (tools / "alpha.py").write_text(tool_source("alpha", "a2"))
    second = await reloader.load()
    assert await call(second, "alpha") == "a2"
    assert second.get("beta").tool is first.get("beta").tool  # type: ignore[union-attr]
    assert second.get("alpha").tool is not first.get("alpha").tool  # type: ignore[union-attr]
    # The old version keeps working for whoever still holds it (a call in flight).
    assert await call(first, "alpha") == "a1"
    reloader.close()


async def test_an_unchanged_reload_imports_nothing(tools: Path) -> None:
    reloader = Reloader([tools], tools.parent, explicit=True)
    await reloader.load()
    await reloader.load()
    assert reloader.reloads == 1
    reloader.close()


async def test_added_and_deleted_files_add_and_remove_tools(tools: Path) -> None:
    reloader = Reloader([tools], tools.parent, explicit=True)
    await reloader.load()
    (tools / "gamma.py").write_text(tool_source("gamma", "g"))
    (tools / "beta.py").unlink()
    result = await reloader.load()
    assert result.tool_names == ("alpha", "gamma")
    reloader.close()


async def test_a_broken_edit_keeps_the_previous_version_and_reports(tools: Path) -> None:
    reloader = Reloader([tools], tools.parent, explicit=True)
    await reloader.load()
    (tools / "alpha.py").write_text("def factory(:\n")
    broken = await reloader.load()
    assert broken.tool_names == ("alpha", "beta")
    assert await call(broken, "alpha") == "a1"
    assert [e.code for e in broken.errors] == ["syntax-error"]
    [kept] = [d for d in broken.diagnostics if d.code == RELOAD_KEPT_PREVIOUS]
    assert "alpha.py failed to reload" in kept.message
    assert "'alpha'" in kept.message
    (tools / "alpha.py").write_text(tool_source("alpha", "a3"))
    fixed = await reloader.load()
    assert fixed.errors == ()
    assert await call(fixed, "alpha") == "a3"
    reloader.close()


async def test_a_broken_new_file_is_an_error_and_nothing_else(tools: Path) -> None:
    reloader = Reloader([tools], tools.parent, explicit=True)
    await reloader.load()
    (tools / "delta.py").write_text("raise RuntimeError('no')\n")
    result = await reloader.load()
    assert result.tool_names == ("alpha", "beta")
    assert [e.code for e in result.errors] == ["import-error"]
    assert not [d for d in result.diagnostics if d.code == RELOAD_KEPT_PREVIOUS]
    reloader.close()


async def test_an_edited_project_source_asks_for_trust_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    tools = project / ".customtools" / "tools"
    tools.mkdir(parents=True)
    (tools / "alpha.py").write_text(tool_source("alpha", "a1"))
    home = tmp_path / "home"
    home.mkdir()
    store = TrustStore(home=home)
    reloader = Reloader(
        cwd=project, home=home, entry_points=False, trust_store=store, trust="prompt"
    )
    pending = await reloader.load()
    assert pending.tools == ()
    [source] = pending.pending_trust
    store.grant(source)
    trusted = await reloader.load()
    assert trusted.tool_names == ("alpha",)
    (tools / "alpha.py").write_text(tool_source("alpha", "evil"))
    edited = await reloader.load()
    assert edited.tools == ()  # not silently re-granted: the new content is pending
    assert len(edited.pending_trust) == 1
    reloader.close()


async def test_replaced_versions_are_released_over_200_reloads(tools: Path) -> None:
    reloader = Reloader([tools], tools.parent, explicit=True)
    await reloader.load()
    baseline = len(tool_modules())
    refs: list[weakref.ref[Any]] = []
    for index in range(200):
        (tools / "alpha.py").write_text(tool_source("alpha", f"v{index}"))
        result = await reloader.load()
        name = result.get("alpha").tool.execute.__module__  # type: ignore[union-attr]
        refs.append(weakref.ref(sys.modules[name]))
        del result
    assert reloader.reloads == 201
    assert len(tool_modules()) == baseline
    gc.collect()
    alive = [ref for ref in refs if ref() is not None]
    assert len(alive) <= 1  # the current version only
    reloader.close()
    gc.collect()
    assert all(ref() is None for ref in refs)


async def test_watch_yields_a_result_after_an_edit(tools: Path) -> None:
    pytest.importorskip("watchfiles")
    reloader = Reloader([tools], tools.parent, explicit=True)
    await reloader.load()
    stop = anyio.Event()
    seen: list[Any] = []

    async def edit() -> None:
        await anyio.sleep(0.2)  # the watcher is running
        (tools / "alpha.py").write_text(tool_source("alpha", "watched"))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(edit)
            async for result in reloader.watch(stop_event=stop):
                seen.append(result)
                stop.set()
    assert await call(seen[0], "alpha") == "watched"
    reloader.close()


async def test_same_second_same_size_edits_are_not_served_from_stale_bytecode(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python trusts a .pyc whose mtime (whole seconds) and size match: "v10" -> "v11" in
    # the same second used to import the old code.
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    package = tools / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from customtools import CustomTool\n"
        "from .helper import VALUE\n"
        "def factory(api):\n"
        "    return CustomTool(name='pkg', description='d', execute=lambda *a: VALUE)\n"
    )
    reloader = Reloader([tools], tools.parent, explicit=True)
    for index in range(10, 30):
        (tools / "alpha.py").write_text(tool_source("alpha", f"v{index}"))
        (package / "helper.py").write_text(f"VALUE = 'p{index}'\n")
        result = await reloader.load()
        assert await call(result, "alpha") == f"v{index}"
        assert await call(result, "pkg") == f"p{index}"
    assert list(tools.rglob("*.pyc"))  # bytecode was written, and not trusted when stale
    reloader.close()


async def test_cancelling_watch_does_not_wait_for_the_watcher_thread(tools: Path) -> None:
    # The watcher's thread used to sleep up to watchfiles' 5 s default before a cancelled
    # watch() returned (`serve --reload` lingered after its client left).
    pytest.importorskip("watchfiles")
    reloader = Reloader([tools], tools.parent, explicit=True)
    await reloader.load()

    async def watch() -> None:
        async for _ in reloader.watch():
            pass

    with anyio.fail_after(3):
        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await anyio.sleep(0.3)
            group.cancel_scope.cancel()
    reloader.close()


async def test_a_trust_grant_is_picked_up_by_watch(tmp_path: Path) -> None:
    pytest.importorskip("watchfiles")
    project = tmp_path / "project"
    tools = project / ".customtools" / "tools"
    tools.mkdir(parents=True)
    (tools / "alpha.py").write_text(tool_source("alpha", "a1"))
    home = tmp_path / "home"
    (home / ".customtools").mkdir(parents=True)
    store = TrustStore(home=home)
    reloader = Reloader(cwd=project, home=home, entry_points=False, trust_store=store)
    first = await reloader.load()
    [source] = first.pending_trust

    async def grant() -> None:
        await anyio.sleep(0.3)
        store.grant(source)  # what `customtools trust` does, from another process

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(grant)
            async with contextlib.aclosing(reloader.watch()) as results:
                async for result in results:
                    assert result.tool_names == ("alpha",)
                    break
    reloader.close()


@pytest.mark.skipif(sys.platform != "linux", reason="process isolation is tested on Linux")
async def test_isolated_modules_reload_in_new_workers_and_replaced_ones_stop_when_idle(
    tools: Path,
) -> None:
    from customtools.isolation import IsolationPool

    (tools / "alpha.py").write_text(
        "import os, time\nfrom customtools import CustomTool\n"
        "def factory(api):\n"
        "    def run(*a):\n"
        "        open(os.path.join(api.cwd, 'started'), 'w').close()\n"
        "        while not os.path.exists(os.path.join(api.cwd, 'go')):\n"
        "            time.sleep(0.01)\n"
        "        return 'a1'\n"
        "    return CustomTool(name='alpha', description='d', execute=run)\n"
    )
    async with IsolationPool() as pool:
        reloader = Reloader([tools], tools.parent, explicit=True, isolation=pool)
        first = await reloader.load()
        assert first.tool_names == ("alpha", "beta")
        before = set(pool.pids)
        assert len(before) == 2
        answers: list[str] = []
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:

                async def slow_call() -> None:
                    answers.append(await call(first, "alpha"))

                group.start_soon(slow_call)
                while not (tools.parent / "started").exists():  # running in the first worker
                    await anyio.sleep(0.01)
                (tools / "alpha.py").write_text(tool_source("alpha", "a2"))
                second = await reloader.load()
                assert await call(second, "alpha") == "a2"  # from a new worker
                assert len(set(pool.pids) - before) == 1
                assert before <= set(pool.pids)  # the old worker still runs its call
                (tools.parent / "go").touch()
        assert answers == ["a1"]  # finished on the version it started with
        assert await call(second, "beta") == "b1"
        beta = second.get("beta")
        assert beta is not None
        assert beta.tool is first.get("beta").tool  # type: ignore[union-attr]
        assert len(pool.pids) == 2  # the replaced worker stopped after its last call
        assert reloader.reloads == 2
        reloader.close()


async def test_reload_reads_mcp_json_again(tmp_path: Path) -> None:
    from customtools import CustomTool

    async def mount(configs: Any) -> tuple[list[CustomTool], list[str]]:
        tools = [
            CustomTool(name=f"mcp__{c.name}__ping", description="d", execute=lambda *a: "pong")
            for c in configs
        ]
        return tools, []

    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"one": {"command": "x"}}}')
    reloader = Reloader(
        [],
        tmp_path,
        home=tmp_path,
        entry_points=False,
        mcp_servers=mount,
        project_mcp_servers=True,
    )
    assert (await reloader.load()).tool_names == ("mcp__one__ping",)
    assert str(tmp_path) in reloader.watch_paths()
    (tmp_path / ".mcp.json").write_text(
        '{"mcpServers": {"one": {"command": "x"}, "two": {"command": "y"}}}'
    )
    assert (await reloader.load()).tool_names == ("mcp__one__ping", "mcp__two__ping")
    reloader.close()


async def test_a_strict_reloader_raises_for_the_load_that_failed(tools: Path) -> None:
    from customtools import LoadFailedError

    reloader = Reloader([tools], tools.parent, explicit=True, strict=True)
    assert (await reloader.load()).tool_names == ("alpha", "beta")
    (tools / "alpha.py").write_text("def factory(:\n")
    with pytest.raises(LoadFailedError, match=r"alpha\.py") as failed:
        await reloader.load()
    assert [error.code for error in failed.value.errors] == ["syntax-error"]
    (tools / "alpha.py").write_text(tool_source("alpha", "a3"))
    assert await call(await reloader.load(), "alpha") == "a3"
    reloader.close()


def test_a_reloader_refuses_a_keyword_the_loader_does_not_take(tools: Path) -> None:
    refused = r"Reloader\(\) got unexpected keyword argument\(s\): bogus"
    with pytest.raises(TypeError, match=refused):
        Reloader([tools], explicit=True, bogus=1)


PACKAGE_TOOL = (
    "from customtools import CustomTool\n"
    "def factory(api):\n"
    "    return CustomTool(name='pkg', description='d', execute=lambda *a: {text!r})\n"
)


@pytest.mark.parametrize("special", ["fifo", "dev-zero-link"])
async def test_a_fifo_or_device_among_a_trusted_package_s_files_does_not_stop_a_reload(
    tmp_path: Path, special: str
) -> None:
    project = tmp_path / "project"
    package = project / ".customtools" / "tools" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PACKAGE_TOOL.format(text="p1"))
    home = tmp_path / "home"
    home.mkdir()
    reloader = Reloader(cwd=project, home=home, entry_points=False, trust="all")
    assert await call(await reloader.load(), "pkg") == "p1"
    # A data file the trust gate never hashes: no re-trust is needed to add it.
    if special == "fifo":
        os.mkfifo(package / "feed.json")
    else:
        (package / "blob.json").symlink_to("/dev/zero")
        (package / "blob.py").symlink_to("/dev/zero")  # and as code, hashed by the fingerprint

    unchanged = await reloader.load()  # used to block forever on the FIFO, or die reading zeros

    assert await call(unchanged, "pkg") == "p1"
    (package / "__init__.py").write_text(PACKAGE_TOOL.format(text="p2"))
    assert await call(await reloader.load(), "pkg") == "p2"  # reloading still works
    reloader.close()


async def test_serving_with_reload_survives_a_reload_that_raises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("watchfiles")
    pytest.importorskip("mcp")
    from customtools.mcp._serve import _follow
    from customtools.mcp._server import ToolServer

    project = tmp_path / "project"
    tools = project / ".customtools" / "tools"
    tools.mkdir(parents=True)
    (tools / "alpha.py").write_text(tool_source("alpha", "a1"))
    home = tmp_path / "home"
    home.mkdir()
    answers = iter([True, RuntimeError("the host's trust prompt failed"), True])

    def ask(pending: Any) -> bool:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    reloader = Reloader(
        cwd=project, home=home, entry_points=False, trust=ask, trust_store=TrustStore(home=home)
    )
    first = await reloader.load()
    server = ToolServer([loaded.tool for loaded in first.tools], name="t")
    loads: list[Any] = []
    errors: list[str] = []

    async with anyio.create_task_group() as group:
        group.start_soon(_follow, reloader, server, loads.append)
        await anyio.sleep(0.3)  # the watcher is running
        (tools / "alpha.py").write_text(tool_source("alpha", "a2"))
        with anyio.fail_after(20):
            while not errors:  # the trust prompt raises: reported, the old tools stay
                await anyio.sleep(0.05)
                errors += [line for line in capsys.readouterr().err.splitlines() if line]
        assert server.tool_names == ("alpha",)
        assert loads == []
        await anyio.sleep(0.3)
        (tools / "alpha.py").write_text(tool_source("alpha", "a3"))
        with anyio.fail_after(20):
            while not loads:
                await anyio.sleep(0.05)
        group.cancel_scope.cancel()
    assert errors == [
        "customtools serve: reloading the tools failed (RuntimeError: the host's trust prompt"
        " failed); the tools loaded before are still served, and the next change loads again"
    ]
    assert await call(loads[-1], "alpha") == "a3"  # still watching after the failure
    reloader.close()
