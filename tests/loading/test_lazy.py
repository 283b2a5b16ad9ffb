"""Lazy loading: tool definitions served from the manifest cache, modules imported on first
call, and a cache that is never used stale, poisoned or half written."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import customtools
from customtools import ToolRegistry
from customtools._isolation._confine import landlock_abi
from customtools._loading._loader import LoadResult, discover_and_load, load_custom_tools
from customtools._loading._manifests import manifest_dir

from ._helpers import write

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]

MODULE = """
import os
from customtools import CustomTool, Type

with open({mark!r}, "a") as _mark:
    _mark.write("imported\\n")

def factory(api):
    async def run(tool_call_id, params, on_update, ctx, signal):
        return f"{{params['text']}} from pid {{os.getpid()}}"

    return CustomTool(
        name={name!r},
        description={description!r},
        parameters=Type.Object({{"text": Type.String(description="what to echo")}}),
        execute=run,
    )
"""


def module(path: Path, mark: Path, name: str = "echo", description: str = "Echo text.") -> Path:
    return write(path, MODULE.format(mark=str(mark), name=name, description=description))


def imports(mark: Path) -> int:
    return len(mark.read_text().splitlines()) if mark.exists() else 0


async def lazy_load(tools: Path, home: Path, **options: object) -> LoadResult:
    return await load_custom_tools(
        [tools],
        tools.parent,
        home=home,
        lazy=True,
        **options,  # type: ignore[arg-type]
    )


def cache_files(home: Path) -> list[Path]:
    directory = Path(manifest_dir(home, "customtools"))
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def codes(result: LoadResult) -> list[str]:
    return [d.code for d in result.diagnostics]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


async def test_a_second_lazy_load_serves_the_tools_without_importing(
    tmp_path: Path, home: Path
) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    first = await lazy_load(tmp_path / "tools", home)
    assert imports(mark) == 1
    assert [t.lazy for t in first.tools] == [False]
    second = await lazy_load(tmp_path / "tools", home)
    assert imports(mark) == 1  # not imported
    assert [t.lazy for t in second.tools] == [True]
    assert second.to_dict()["tools"][0]["lazy"] is True
    assert "lazy" not in first.to_dict()["tools"][0]
    assert second.tools[0].tool.to_dict() == first.tools[0].tool.to_dict()
    (cache,) = cache_files(home)
    assert cache.stat().st_mode & 0o777 == 0o600
    assert cache.parent.stat().st_mode & 0o777 == 0o700


async def test_without_lazy_nothing_is_cached_or_served_from_the_cache(
    tmp_path: Path, home: Path
) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    await load_custom_tools([tmp_path / "tools"], tmp_path, home=home)
    assert cache_files(home) == []
    await lazy_load(tmp_path / "tools", home)
    result = await load_custom_tools([tmp_path / "tools"], tmp_path, home=home)
    assert imports(mark) == 3
    assert [t.lazy for t in result.tools] == [False]


async def test_the_first_call_imports_the_module_once_and_runs_the_live_tool(
    tmp_path: Path, home: Path
) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    await lazy_load(tmp_path / "tools", home)
    result = await lazy_load(tmp_path / "tools", home)
    registry = ToolRegistry(result)
    answers: list[str] = []

    async def call(n: int) -> None:
        out = await registry.call("echo", f"call-{n}", {"text": f"hi {n}"})
        assert not out.is_error, out
        answers.append(out.content[0].text)  # type: ignore[union-attr]

    async with anyio.create_task_group() as group:
        for n in range(5):
            group.start_soon(call, n)
    assert imports(mark) == 2  # the first load, then one first call for five calls
    assert sorted(a.split(" from")[0] for a in answers) == [f"hi {n}" for n in range(5)]
    assert all(a.endswith(f"pid {os.getpid()}") for a in answers)
    out = await registry.call("echo", "again", {"text": "x"})
    assert out.content[0].text.startswith("x from")  # type: ignore[union-attr]
    assert imports(mark) == 2
    assert codes(result) == []


SYNC_MODULE = """
import os, threading
from customtools import CustomTool, ToolResult

with open({mark!r}, "a") as _mark:
    _mark.write("imported\\n")


def factory(api):
    def run(tool_call_id, params, on_update, ctx, signal):
        on_update(ToolResult.from_text("halfway"))
        return f"{{params['n'] * 2}} in {{threading.current_thread().name}}"

    if os.environ.get("LAZY_TEST_ASYNC"):
        async def run_async(*args):
            return run(*args)

        return CustomTool(name="double", execute=run_async, parameters={parameters})
    return CustomTool(name="double", execute=run, parameters={parameters})
"""

SYNC_PARAMETERS = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


async def test_a_sync_tool_runs_in_a_worker_thread_on_its_first_call_too(
    tmp_path: Path, home: Path
) -> None:
    mark = tmp_path / "mark"
    write(
        tmp_path / "tools" / "double.py",
        SYNC_MODULE.format(mark=str(mark), parameters=SYNC_PARAMETERS),
    )
    await lazy_load(tmp_path / "tools", home)
    result = await lazy_load(tmp_path / "tools", home)
    assert result.tools[0].lazy
    registry = ToolRegistry(result)
    updates: list[str] = []
    outs: list[str] = []

    async def call(n: int) -> None:
        out = await registry.call(
            "double", f"c{n}", {"n": n}, on_update=lambda p: updates.append(p.text)
        )
        outs.append(out.content[0].text)  # type: ignore[union-attr]

    async with anyio.create_task_group() as group:
        for n in range(3):
            group.start_soon(call, n)
    assert imports(mark) == 2  # once at the first load, once for three first calls
    assert sorted(o.split(" in ")[0] for o in outs) == ["0", "2", "4"]
    assert all(" in " in o and "MainThread" not in o for o in outs)
    assert updates == ["halfway"] * 3


async def test_a_tool_that_became_async_is_a_changed_definition(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark = tmp_path / "mark"
    write(
        tmp_path / "tools" / "double.py",
        SYNC_MODULE.format(mark=str(mark), parameters=SYNC_PARAMETERS),
    )
    await lazy_load(tmp_path / "tools", home)
    result = await lazy_load(tmp_path / "tools", home)
    monkeypatch.setenv("LAZY_TEST_ASYNC", "1")
    out = await ToolRegistry(result).call("double", "c", {"n": 1})
    assert out.details["code"] == "definition-changed"  # type: ignore[index]


async def test_a_first_call_cancelled_during_the_import_leaves_the_next_call_to_import(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = tmp_path / "started"
    write(
        tmp_path / "tools" / "slow.py",
        f"""
        import os
        import anyio
        from customtools import CustomTool

        async def factory(api):
            with open({str(started)!r}, "a") as mark:
                mark.write("x")
            if os.environ.get("LAZY_TEST_SLOW"):
                await anyio.sleep_forever()
            return CustomTool(name="slow", execute=lambda *args: "done")
        """,
    )
    await lazy_load(tmp_path / "tools", home)
    result = await lazy_load(tmp_path / "tools", home)
    registry = ToolRegistry(result)
    monkeypatch.setenv("LAZY_TEST_SLOW", "1")
    async with anyio.create_task_group() as group:
        group.start_soon(registry.call, "slow", "c1", {})
        while started.read_text() != "xx":  # the first call's import has begun
            await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    monkeypatch.delenv("LAZY_TEST_SLOW")
    out = await registry.call("slow", "c2", {})
    assert out.content[0].text == "done"  # type: ignore[union-attr]
    assert started.read_text() == "xxx"
    assert codes(result) == []


async def test_search_finds_lazy_tools_without_importing_them(tmp_path: Path, home: Path) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark, description="Repeat a greeting.")
    module(tmp_path / "tools" / "other.py", mark, name="other", description="Something else.")
    await lazy_load(tmp_path / "tools", home)
    registry = ToolRegistry(await lazy_load(tmp_path / "tools", home))
    assert [t.name for t in registry.search("greeting")] == ["echo"]
    assert imports(mark) == 2  # the first load's two imports only


def _built_tools() -> int:
    import gc

    return sum(type(o) is customtools.CustomTool for o in gc.get_objects())


async def test_a_lazy_load_builds_no_tool_until_one_is_read(tmp_path: Path, home: Path) -> None:
    mark = tmp_path / "mark"
    for n in range(3):
        module(tmp_path / "tools" / f"echo{n}.py", mark, name=f"echo{n}")
    await lazy_load(tmp_path / "tools", home)
    before = _built_tools()
    result = await lazy_load(tmp_path / "tools", home)
    registry = ToolRegistry(result)
    assert [t.name for t in result.tools] == ["echo0", "echo1", "echo2"]
    assert registry.names == result.tool_names == ("echo0", "echo1", "echo2")
    assert "lazy=True" in repr(result.tools[0])
    assert _built_tools() == before  # registered by name, nothing built
    tool = result.tools[1].tool  # the first read builds it, once
    assert _built_tools() == before + 1
    assert result.tools[1].tool is tool is registry["echo1"]
    assert _built_tools() == before + 1
    assert imports(mark) == 3  # the first load's imports only
    record = result.tools[2]
    with pytest.raises(AttributeError, match="cannot assign to field 'path'"):
        record.path = "elsewhere"  # type: ignore[misc]
    twin = copy.copy(record)
    assert twin == record
    assert twin.tool is record.tool  # one tool, built once
    assert twin.lazy
    assert twin != result.tools[1]


RICH = """
from customtools import CustomTool, Type

def factory(api):
    def run(tool_call_id, params, on_update, ctx, signal):
        return "ok"

    return CustomTool(
        name="rich", label="Rich", description="Every field.", execute=run, timeout=2.5,
        parameters=Type.Object({"n": Type.Integer(minimum=1)}), coerce_args=False,
        apply_defaults=True, lenient_args=True, hidden=True, deferrable=True, strict=True,
        concurrency="exclusive", annotations={"readOnlyHint": True}, meta={"k": [1, "v"]},
        output_schema={"type": "object", "properties": {"x": {"type": "string"}}},
        requires_approval=False, former_names=("old_rich", "older_rich"),
    )
"""


async def test_a_lazily_built_tool_equals_the_eagerly_loaded_one(
    tmp_path: Path, home: Path
) -> None:
    write(tmp_path / "tools" / "rich.py", RICH)
    eager = await lazy_load(tmp_path / "tools", home)
    lazy = await lazy_load(tmp_path / "tools", home)
    assert [t.lazy for t in lazy.tools] == [True, True, True]
    assert lazy.tool_names == eager.tool_names == ("rich", "old_rich", "older_rich")
    assert lazy.tools[0].to_dict() == {**eager.tools[0].to_dict(), "lazy": True}
    built, live = ToolRegistry(lazy), ToolRegistry(eager)
    for name in lazy.tool_names:  # the tool and its deprecated aliases
        assert built[name].to_dict() == live[name].to_dict()
    assert lazy.tools[0].former_names == ("old_rich", "older_rich")


def _resign(cache: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    import hashlib

    body = json.loads(cache.read_bytes().partition(b"\n")[2])
    (entry,) = body["entries"].values()
    edit(entry)
    data = json.dumps(body).encode()
    cache.write_bytes(
        b"customtools-manifests %s\n%s" % (hashlib.sha256(data).hexdigest().encode(), data)
    )


def _tool_edit(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda entry: entry["tools"][0].update(fields)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (_tool_edit(name="not a name"), "invalid tool name 'not a name'"),
        (_tool_edit(label=3), "tool 'echo': label not as the wire form has it"),
        (_tool_edit(parameters=[]), "tool 'echo': parameters not as"),
        (_tool_edit(timeout=-1, concurrency="alone"), "tool 'echo': timeout, concurrency not"),
        (_tool_edit(timeout=True), "tool 'echo': timeout not"),
        (_tool_edit(requiresApproval="yes", hidden=1), "hidden, requiresApproval not"),
        (_tool_edit(outputSchema={"type": "array"}), "tool 'echo': outputSchema not"),
        (_tool_edit(formerNames=["echo"]), "tool 'echo': formerNames not"),
        (_tool_edit(formerNames="old"), "tool 'echo': formerNames not"),
        (
            lambda entry: entry["tools"][0].pop("parameters"),
            "tool 'echo': parameters (missing) not as the wire",
        ),
        (lambda entry: entry.update(tools=[["echo"]]), "a tool definition is not a JSON object"),
        (lambda entry: entry.update({"async": ["yes"]}), "tool 'echo' does not say how it runs"),
        (lambda entry: entry.update({"async": []}), "its tools do not say how they run"),
    ],
)
async def test_a_bad_entry_in_a_resigned_cache_file_is_caught_at_load_with_a_diagnostic(
    tmp_path: Path, home: Path, edit: Callable[[dict[str, Any]], None], why: str
) -> None:
    mark = tmp_path / "mark"
    path = module(tmp_path / "tools" / "echo.py", mark)
    await lazy_load(tmp_path / "tools", home)
    (cache,) = cache_files(home)
    _resign(cache, edit)
    result = await lazy_load(tmp_path / "tools", home)
    assert imports(mark) == 2  # imported at load instead
    assert [(t.name, t.lazy) for t in result.tools] == [("echo", False)]
    (note,) = [d for d in result.diagnostics if d.code == "manifest-cache-ignored"]
    assert note.message.startswith(f"the manifest of {path} was ignored: ")
    assert why in note.message
    assert note.message.endswith("; the module is imported at load")
    assert (await lazy_load(tmp_path / "tools", home)).tools[0].lazy  # written again


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("{'x': 1}", "tool 'odd': coerceArgs not as the wire form has it; the manifest cannot"),
        ("float('nan')", "tool 'odd' has a definition that is not plain JSON"),
    ],
)
async def test_a_tool_definition_the_cache_would_refuse_is_never_written(
    tmp_path: Path, home: Path, value: str, why: str
) -> None:
    # coerce_args is not checked by CustomTool, so a tool may carry a value the wire form's
    # check refuses: the module stays eager (said at load) rather than failing every load.
    write(
        tmp_path / "tools" / "odd.py",
        "from customtools import CustomTool\n"
        "def factory(api):\n"
        f"    return CustomTool(name='odd', execute=lambda *a: 'x', coerce_args={value})\n",
    )
    await lazy_load(tmp_path / "tools", home)
    result = await lazy_load(tmp_path / "tools", home)
    assert not result.tools[0].lazy
    assert codes(result) == ["eager-import"]
    assert why in result.diagnostics[0].message


async def test_arguments_are_validated_against_the_manifest_schema_before_any_import(
    tmp_path: Path, home: Path
) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    await lazy_load(tmp_path / "tools", home)
    result = await lazy_load(tmp_path / "tools", home)
    out = await ToolRegistry(result).call("echo", "c", {"text": 3})
    assert out.is_error
    assert out.details["error"] == "ToolArgumentsError"  # type: ignore[index]
    assert imports(mark) == 1


# -- what decides an entry --------------------------------------------------------------------

PACKAGE_INIT = """
from customtools import CustomTool
from customtools.isolation import Permissions
from . import helper

with open({mark!r}, "a") as _mark:
    _mark.write("imported\\n")

PERMISSIONS = {permissions}


def factory(api):
    return CustomTool(name="pkg_tool", description=helper.TEXT, execute=lambda *a: "ok")
"""

EDITS = st.lists(
    st.sampled_from(
        [
            "module-body",
            "module-touch",
            "helper-text",
            "package-add-file",
            "package-remove-file",
            "permissions",
            "nothing",
        ]
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(edits=EDITS)
def test_an_entry_is_used_exactly_when_no_covered_file_changed(edits: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        anyio.run(_edit_and_load, Path(tmp), edits)


async def _edit_and_load(tmp: Path, edits: list[str]) -> None:
    home, tools = tmp / "home", tmp / "tools"
    home.mkdir()
    mark = tmp / "mark"
    module(tools / "echo.py", mark, description="v0")
    package = tools / "pkg"
    permissions = ["Permissions(net=[80])", "Permissions(net=[443])"]
    write(package / "__init__.py", PACKAGE_INIT.format(mark=str(mark), permissions=permissions[0]))
    write(package / "helper.py", "TEXT = 'helper 0'\n")
    await lazy_load(tools, home)
    for step, edit in enumerate(edits, 1):
        before = imports(mark)
        changed = {"module-body": 1, "helper-text": 1, "package-add-file": 1, "permissions": 1}
        changed |= {"package-remove-file": int((package / "extra.py").exists())}
        if edit == "module-body":
            module(tools / "echo.py", mark, description=f"v{step}")
        elif edit == "module-touch":
            os.utime(tools / "echo.py")
        elif edit == "helper-text":
            write(package / "helper.py", f"TEXT = 'helper {step}'\n")
        elif edit == "package-add-file":
            write(package / "extra.py", f"X = {step}\n")
        elif edit == "package-remove-file":
            (package / "extra.py").unlink(missing_ok=True)
        elif edit == "permissions":
            permissions.reverse()
            write(
                package / "__init__.py",
                PACKAGE_INIT.format(mark=str(mark), permissions=permissions[0]),
            )
        result = await lazy_load(tools, home)
        lazy = {t.tool.name: t.lazy for t in result.tools}
        assert result.errors == (), result.errors
        touched_module = edit == "module-body"
        touched_package = changed.get(edit, 0) and edit != "module-body"
        assert lazy == {"echo": not touched_module, "pkg_tool": not touched_package}, edit
        assert imports(mark) - before == int(touched_module) + int(bool(touched_package))
        # What is served is always what the files now say.
        descriptions = {t.tool.name: t.tool.description for t in result.tools}
        assert descriptions["pkg_tool"] == (package / "helper.py").read_text()[8:-2]


async def test_the_stat_shortcut_still_sees_a_same_size_edit(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import customtools._loading._trust as trust_module

    monkeypatch.setattr(trust_module, "_RACY_NS", 0)  # the files were written just now
    # Else Python's own .pyc (source mtime in seconds, and size) would stand for the edit.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    mark = tmp_path / "mark"
    path = module(tmp_path / "tools" / "echo.py", mark, description="aaaa")
    await lazy_load(tmp_path / "tools", home)
    assert (await lazy_load(tmp_path / "tools", home)).tools[0].lazy
    path.write_text(path.read_text().replace("aaaa", "bbbb"))  # same size
    result = await lazy_load(tmp_path / "tools", home)
    assert not result.tools[0].lazy
    assert result.tools[0].tool.description == "bbbb"


async def test_an_entry_of_another_customtools_or_python_version_is_not_used(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    await lazy_load(tmp_path / "tools", home)
    monkeypatch.setattr(customtools, "__version__", "99.0")
    assert not (await lazy_load(tmp_path / "tools", home)).tools[0].lazy
    assert (await lazy_load(tmp_path / "tools", home)).tools[0].lazy
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert not (await lazy_load(tmp_path / "tools", home)).tools[0].lazy
    assert imports(mark) == 3


@pytest.mark.parametrize("stat_shortcut", [False, True])
async def test_an_entry_is_not_used_for_another_working_directory(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, stat_shortcut: bool
) -> None:
    import customtools._loading._trust as trust_module

    if stat_shortcut:
        monkeypatch.setattr(trust_module, "_RACY_NS", 0)  # the files were written just now
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    tools = [tmp_path / "tools"]
    await load_custom_tools(tools, tmp_path, home=home, lazy=True)
    assert (await load_custom_tools(tools, tmp_path, home=home, lazy=True)).tools[0].lazy
    elsewhere = await load_custom_tools(tools, home, home=home, lazy=True)
    assert not elsewhere.tools[0].lazy
    assert codes(elsewhere) == []  # imported, and recorded for that directory
    assert (await load_custom_tools(tools, home, home=home, lazy=True)).tools[0].lazy


# -- eager all the same -----------------------------------------------------------------------


async def test_a_tool_with_session_hooks_is_imported_at_load_and_the_report_says_why(
    tmp_path: Path, home: Path
) -> None:
    mark = tmp_path / "mark"
    write(
        tmp_path / "tools" / "hooked.py",
        f"""
        from customtools import CustomTool

        with open({str(mark)!r}, "a") as mark:
            mark.write("imported\\n")

        def factory(api):
            return CustomTool(
                name="hooked", execute=lambda *a: "ok", on_session=lambda event, ctx: None
            )
        """,
    )
    await lazy_load(tmp_path / "tools", home)
    result = await lazy_load(tmp_path / "tools", home)
    assert imports(mark) == 2
    assert not result.tools[0].lazy
    (note,) = [d for d in result.diagnostics if d.code == "eager-import"]
    assert "hooked.py was imported at load, not lazily: tool 'hooked' has on_session" in (
        note.message
    )


# -- first calls that cannot be served --------------------------------------------------------


async def test_a_first_call_whose_import_fails_is_an_error_result_and_a_diagnostic(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    write(
        tools / "fragile.py",
        """
        import os
        from customtools import CustomTool

        if os.environ.get("FRAGILE_BREAK"):
            raise RuntimeError("the database is gone")

        def factory(api):
            return CustomTool(name="fragile", execute=lambda *a: "ok")
        """,
    )
    await lazy_load(tools, home)
    result = await lazy_load(tools, home)
    assert result.tools[0].lazy
    monkeypatch.setenv("FRAGILE_BREAK", "1")
    registry = ToolRegistry(result)
    for call in ("c1", "c2"):  # nothing stale is served, not even on a later call
        out = await registry.call("fragile", call, {})
        assert out.is_error
        assert out.details["error"] == "LazyLoadFailed"  # type: ignore[index]
        assert out.details["code"] == "import-failed"  # type: ignore[index]
        text = out.content[0].text  # type: ignore[union-attr]
        assert "fragile.py: the module of this lazily loaded tool failed to import" in text
        assert "RuntimeError: the database is gone" in text
    assert codes(result) == ["lazy-import-failed"]
    # The entry is gone: the next load imports at load and reports the error there.
    again = await lazy_load(tools, home)
    assert again.tools == ()
    assert "the database is gone" in again.errors[0].error


async def test_a_live_tool_that_differs_from_its_manifest_is_never_run(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    ran = tmp_path / "ran"
    write(
        tools / "moody.py",
        f"""
        import os
        from customtools import CustomTool

        def factory(api):
            def run(*args):
                open({str(ran)!r}, "a").write("ran\\n")
                return "ok"
            return CustomTool(
                name="moody", description=os.environ.get("MOOD", "calm"), execute=run
            )
        """,
    )
    await lazy_load(tools, home)
    monkeypatch.setenv("MOOD", "stormy")
    result = await lazy_load(tools, home)
    assert result.tools[0].tool.description == "calm"  # what the manifest says
    out = await ToolRegistry(result).call("moody", "c", {})
    assert out.is_error
    assert out.details["code"] == "definition-changed"  # type: ignore[index]
    assert "moody.py: the module no longer defines its tools as the manifest" in (
        out.content[0].text  # type: ignore[union-attr]
    )
    assert not ran.exists()
    assert codes(result) == ["lazy-definition-changed"]
    fresh = await lazy_load(tools, home)
    assert not fresh.tools[0].lazy
    assert fresh.tools[0].tool.description == "stormy"


# -- the cache files ----------------------------------------------------------------------------


def _poison(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "flipped":
        path.write_bytes(data.replace(b'"echo"', b'"ecHo"'))
    elif how == "forged":
        import hashlib

        body = b"{not json"
        digest = hashlib.sha256(body).hexdigest().encode()
        path.write_bytes(b"customtools-manifests %s\n%s" % (digest, body))
    elif how == "nested":  # re-signed, and nested past the parser's stack
        import hashlib

        body = b"[" * 100_000 + b"]" * 100_000
        digest = hashlib.sha256(body).hexdigest().encode()
        path.write_bytes(b"customtools-manifests %s\n%s" % (digest, body))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "group-writable":
        path.chmod(0o620)
    elif how == "symlink":
        target = path.with_suffix(".elsewhere")
        path.rename(target)
        path.symlink_to(target)


@pytest.mark.parametrize(
    ("how", "why"),
    [
        ("truncated", "is truncated or was changed"),
        ("flipped", "is truncated or was changed"),
        ("forged", "not valid JSON"),
        ("nested", "not valid JSON"),
        ("empty", "not a manifest file"),
        ("group-writable", "not owned by this user and writable only by them"),
        ("symlink", "cannot be opened"),
    ],
)
async def test_a_poisoned_cache_file_is_ignored_with_a_diagnostic_and_rewritten(
    tmp_path: Path, home: Path, how: str, why: str
) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    await lazy_load(tmp_path / "tools", home)
    (cache,) = cache_files(home)
    _poison(cache, how)
    result = await lazy_load(tmp_path / "tools", home)
    assert imports(mark) == 2
    assert [t.tool.name for t in result.tools] == ["echo"]
    assert not result.tools[0].lazy
    (note,) = [d for d in result.diagnostics if d.code == "manifest-cache-ignored"]
    assert note.message.startswith(f"the manifest cache file {cache} was ignored: it ")
    assert why in note.message
    healed = await lazy_load(tmp_path / "tools", home)
    assert healed.tools[0].lazy
    assert codes(healed) == []
    assert not cache.is_symlink()


async def test_an_unwritable_cache_is_a_diagnostic_and_the_tools_still_load(
    tmp_path: Path, home: Path
) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    directory = Path(manifest_dir(home, "customtools"))
    directory.parent.mkdir(parents=True)
    directory.write_text("a file where the directory should be")
    result = await lazy_load(tmp_path / "tools", home)
    assert [t.tool.name for t in result.tools] == ["echo"]
    (note,) = [d for d in result.diagnostics if d.code == "manifest-cache-unwritable"]
    assert f"the manifest cache {directory} cannot be written" in note.message


CONCURRENT = """
import sys, anyio
from customtools._loading._loader import load_custom_tools

async def main():
    for n in range(int(sys.argv[3])):
        paths = sys.argv[4:]
        # Another directory for the factories each time: every load misses and writes.
        cwd = sys.argv[1] if n % 2 else sys.argv[2]
        result = await load_custom_tools(paths, cwd, home=sys.argv[2], lazy=True)
        bad = [d.message for d in result.diagnostics] + [e.error for e in result.errors]
        if bad or len(result.tools) != len(paths):
            raise SystemExit(f"unexpected: {bad}")

anyio.run(main)
"""


def test_processes_loading_at_once_never_corrupt_the_cache(tmp_path: Path, home: Path) -> None:
    tools = tmp_path / "tools"
    mark = tmp_path / "mark"
    paths = [module(tools / f"m{n}.py", mark, name=f"tool_{n}") for n in range(12)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Two processes, each loading an overlapping part of one directory again and again:
    # every load writes the same manifest file.
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, str(tmp_path), str(home), "8"]
            + [str(p) for p in paths[n * 4 : n * 4 + 8]],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    (cache,) = cache_files(home)
    result = anyio.run(_load_all, paths, tmp_path, home)
    assert result.errors == ()
    assert "manifest-cache-ignored" not in codes(result)
    assert json.loads(cache.read_bytes().partition(b"\n")[2])["format"] == 1


async def _load_all(paths: list[Path], cwd: Path, home: Path) -> LoadResult:
    return await load_custom_tools(paths, cwd, home=home, lazy=True)


# -- the same trust, isolation and sandbox as an eager load ----------------------------------

# Worker plumbing is the same on both backends (tests/isolation runs it on both); the first
# call's own path runs on both in the in-process tests above.
WORKERS_ONCE = pytest.mark.parametrize("anyio_backend", ["asyncio"])


async def test_project_code_changed_after_the_load_does_not_run_on_the_first_call(
    tmp_path: Path, home: Path
) -> None:
    from customtools._loading._trust import project_sources
    from customtools._loading._trust_store import TrustStore
    from customtools.loading import scan

    project = tmp_path / "project"
    tools = project / ".customtools" / "tools"
    mark = tmp_path / "mark"
    path = module(tools / "echo.py", mark)
    store = TrustStore(home=home)
    for source in project_sources(scan((), project, home=home, entry_points=False)):
        store.grant(source)

    async def load() -> LoadResult:
        return await discover_and_load(
            (), project, home=home, entry_points=False, trust_store=store, lazy=True
        )

    await load()
    result = await load()
    assert [t.lazy for t in result.tools] == [True]
    path.write_text(path.read_text() + "\nraise SystemExit('not reviewed')\n")
    out = await ToolRegistry(result).call("echo", "c", {"text": "x"})
    assert out.is_error
    assert out.details["code"] == "import-failed"  # type: ignore[index]
    assert imports(mark) == 1  # the edited code never ran
    assert (await load()).pending_trust  # and the next load asks again


@WORKERS_ONCE
async def test_an_isolated_lazy_load_imports_on_first_call_in_a_worker(
    tmp_path: Path, home: Path
) -> None:
    from customtools.isolation import IsolationPool

    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    async with IsolationPool() as pool:
        await lazy_load(tmp_path / "tools", home, isolation=pool)
        result = await lazy_load(tmp_path / "tools", home, isolation=pool)
        assert [t.lazy for t in result.tools] == [True]
        assert imports(mark) == 1
        out = await ToolRegistry(result).call("echo", "c", {"text": "x"})
    assert not out.is_error, out
    text = out.content[0].text  # type: ignore[union-attr]
    assert text.startswith("x from pid ")
    assert text != f"x from pid {os.getpid()}"  # ran in the worker
    assert imports(mark) == 2


@WORKERS_ONCE
async def test_an_isolated_first_call_runs_only_the_bytes_the_load_checked(
    tmp_path: Path, home: Path
) -> None:
    from customtools._loading._trust import project_sources
    from customtools._loading._trust_store import TrustStore
    from customtools.isolation import IsolationPool
    from customtools.loading import scan

    project = tmp_path / "project"
    mark = tmp_path / "mark"
    path = module(project / ".customtools" / "tools" / "echo.py", mark)
    store = TrustStore(home=home)
    for source in project_sources(scan((), project, home=home, entry_points=False)):
        store.grant(source)
    async with IsolationPool(grace=0.3) as pool:
        for _ in range(2):
            result = await discover_and_load(
                (), project, home=home, entry_points=False, trust_store=store, lazy=True,
                isolation=pool,
            )  # fmt: skip
        assert [t.lazy for t in result.tools] == [True]
        path.write_text(path.read_text() + "\nraise SystemExit('not reviewed')\n")
        out = await ToolRegistry(result).call("echo", "c", {"text": "x"})
    assert out.details["code"] == "import-failed", out  # type: ignore[index]
    assert "changed after it was reviewed and trusted" in out.content[0].text  # type: ignore[union-attr]
    assert imports(mark) == 1  # the worker refused the edited file: the grant's hashes


PEEK = """
from customtools import tool

@tool
def peek(path: str) -> str:
    \"\"\"Read a file.\"\"\"
    with open(path) as handle:
        return handle.read()
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or landlock_abi() < 6,
    reason="needs Linux with Landlock ABI >= 6",
)
@WORKERS_ONCE
async def test_a_sandboxed_first_call_is_confined_and_reports_its_sandbox(
    tmp_path: Path, home: Path
) -> None:
    from customtools.isolation import IsolationPool

    secret = home / ".ssh" / "id_rsa"
    write(secret, "SECRET KEY")
    tools = tmp_path / "tools"
    write(tools / "peek.py", PEEK)
    async with IsolationPool(grace=0.3) as pool:
        await lazy_load(tools, home, isolation=pool)
        # An entry written by an unconfined load is not used by a sandboxed one.
        first = await lazy_load(tools, home, isolation=pool, sandbox=True)
        assert [t.lazy for t in first.tools] == [False]
        result = await lazy_load(tools, home, isolation=pool, sandbox=True)
        assert [t.lazy for t in result.tools] == [True]
        assert not [d for d in result.diagnostics if d.code.startswith("sandbox-")]
        out = await ToolRegistry(result).call("peek", "c", {"path": str(secret)})
    assert out.details["error"] == "SandboxDenied", out  # type: ignore[index]
    assert [d.code for d in result.diagnostics if d.code.startswith("sandbox-")] == [
        d.code for d in first.diagnostics if d.code.startswith("sandbox-")
    ]


def test_validate_always_imports(tmp_path: Path, home: Path) -> None:
    mark = tmp_path / "mark"
    module(tmp_path / "tools" / "echo.py", mark)
    anyio.run(_lazy_twice, tmp_path / "tools", home)
    assert imports(mark) == 1
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "customtools", "validate", str(tmp_path / "tools")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert imports(mark) >= 2  # the module ran again, in validate's own process


async def _lazy_twice(tools: Path, home: Path) -> None:
    await lazy_load(tools, home)
    assert (await lazy_load(tools, home)).tools[0].lazy


async def test_a_reloader_serves_unchanged_modules_lazily_and_imports_the_edited_one(
    tmp_path: Path, home: Path
) -> None:
    from customtools.loading import Reloader

    mark = tmp_path / "mark"
    tools = tmp_path / "tools"
    module(tools / "one.py", mark, name="one")
    edited = module(tools / "two.py", mark, name="two")
    await lazy_load(tools, home)
    reloader = Reloader([tools], tmp_path, explicit=True, home=home, lazy=True)
    first = await reloader.load()
    assert {t.tool.name: t.lazy for t in first.tools} == {"one": True, "two": True}
    assert imports(mark) == 2
    module(edited, mark, name="two", description="edited")
    second = await reloader.load()
    assert {t.tool.name: t.lazy for t in second.tools} == {"one": True, "two": False}
    assert second.get("one").tool is first.get("one").tool  # the unchanged version, served again
    assert imports(mark) == 3
    out = await ToolRegistry(second).call("one", "c", {"text": "x"})
    assert not out.is_error
    assert imports(mark) == 4
    reloader.close()


async def test_installed_entry_points_are_imported_at_load_and_the_report_says_so(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from customtools._loading._records import Candidate, ScanResult, ToolSource
    from customtools.loading import load_scan

    site = tmp_path / "site"
    write(
        site / "lazy_test_ep_tools.py",
        """
        from customtools import CustomTool

        def factory(api):
            return CustomTool(name="from_ep", execute=lambda *args: "ok")
        """,
    )
    monkeypatch.syspath_prepend(str(site))
    source = ToolSource(provider="entry-points", provider_name="Entry points", level="user")
    candidate = Candidate(
        path="lazy_test_ep_tools:factory",
        resolved_path="lazy_test_ep_tools:factory",
        kind="entry_point",
        source=source,
        entry_point="lazy_test_ep_tools:factory",
    )
    for _ in range(2):
        scanned = ScanResult(candidates=(candidate,))
        result = await load_scan(scanned, tmp_path, home=home, lazy=True)
        assert [(t.tool.name, t.lazy) for t in result.tools] == [("from_ep", False)]
        (note,) = [d for d in result.diagnostics if d.code == "eager-import"]
        assert note.message.endswith("installed entry points are imported at load")
    assert cache_files(home) == []
    sys.modules.pop("lazy_test_ep_tools", None)


# -- what a load leaves of the process ------------------------------------------------------------

GC_PROBE = """
import gc
from customtools import CustomTool

with open({mark!r}, "a") as _mark:
    _mark.write(f"import {{gc.isenabled()}}\\n")

def factory(api):
    with open({mark!r}, "a") as mark:
        mark.write(f"factory {{gc.isenabled()}}\\n")
    return CustomTool(name="probe", execute=lambda *args: "ok", parameters={{"type": "object"}})
"""


@pytest.mark.parametrize("collector", [True, False])
async def test_tool_code_runs_with_the_collector_as_the_host_set_it(
    tmp_path: Path, collector: bool
) -> None:
    """The loader pauses the cyclic collector only around its own bookkeeping (scan, manifest
    entries, records); tool code runs with the host's setting, and it is back after a load."""
    import gc

    mark = tmp_path / "mark.txt"
    write(tmp_path / "tools" / "probe.py", GC_PROBE.format(mark=str(mark)))
    was = gc.isenabled()
    try:
        (gc.enable if collector else gc.disable)()
        for _ in range(2):  # eager (and the cache written), then lazy
            result = await lazy_load(tmp_path / "tools", tmp_path / "home")
            assert result.tool_names == ("probe",)
            assert gc.isenabled() is collector
        assert ToolRegistry(result)["probe"] is not None
        assert mark.read_text().splitlines() == [f"import {collector}", f"factory {collector}"]
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("reader", ["orjson", "json"])
def test_a_manifest_body_that_orjson_refuses_is_read_by_json(
    monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    """json writes NaN and the infinities (a schema's default may hold one); orjson refuses
    them, so such a file is read again with json instead of being reported unusable."""
    import hashlib
    import math

    from customtools._loading import _manifests

    if reader == "json":
        monkeypatch.setattr(_manifests, "_loads", json.loads)
    else:
        pytest.importorskip("orjson")
    body = json.dumps({"entries": {"x": {"default": float("nan"), "n": 1}}}).encode()
    data = b"customtools-manifests %s\n%s" % (hashlib.sha256(body).hexdigest().encode(), body)
    parsed, problem = _manifests._parse(data)
    assert problem is None
    assert math.isnan(parsed["entries"]["x"]["default"])
    assert parsed["entries"]["x"]["n"] == 1
    assert _manifests._parse(data.replace(b'"n": 1', b'"n": 2'))[1] == (
        "it is truncated or was changed (its checksum does not match)"
    )


async def test_a_hosts_frozen_objects_stay_frozen(tmp_path: Path) -> None:
    """The loader moves what it built to the oldest generation by freezing and unfreezing,
    but only when the host froze nothing: a host's ``gc.freeze()`` (before forking workers,
    say) is never undone, and the loader never leaves anything frozen of its own."""
    import gc

    write(tmp_path / "tools" / "probe.py", GC_PROBE.format(mark=str(tmp_path / "mark.txt")))
    assert gc.get_freeze_count() == 0
    await lazy_load(tmp_path / "tools", tmp_path / "home")
    assert gc.get_freeze_count() == 0
    kept = object.__new__(type("Kept", (), {}))  # a tracked object of the host's
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        for _ in range(2):  # eager, then lazy
            result = await lazy_load(tmp_path / "tools", tmp_path / "home")
            assert result.tool_names == ("probe",)
            # Never unfrozen (0) and nothing of the load's frozen (more); a frozen object
            # whose last reference goes (the event loop's, say) still leaves the count.
            assert frozen - 10_000 < gc.get_freeze_count() <= frozen
        assert gc.is_tracked(kept)
    finally:
        gc.unfreeze()


CYCLE_PROBE = """
import sys
import weakref
from customtools import CustomTool

def factory(api):
    class Cycle:
        pass

    garbage = Cycle()
    garbage.me = garbage  # unreachable once the factory returns: only a collection frees it
    sys.modules["customtools_test_cycles"].refs.append(weakref.ref(garbage))
    return CustomTool(name="probe", execute=lambda *args: "ok", parameters={"type": "object"})
"""


async def test_garbage_moved_to_the_oldest_generation_is_still_collected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader moves what it built to the oldest generation, which CPython's own rule for
    a full collection never counts: repeated loads left every cycle made on the way
    uncollected (240 loads, no full collection). The loader now runs that collection after
    a bounded number of moved objects; here, a small bound."""
    import gc
    import types

    from customtools._loading import _loader

    monkeypatch.setattr(_loader, "_PROMOTED_LIMIT", 500)
    monkeypatch.setattr(_loader, "_promoted", 0)
    probe = types.ModuleType("customtools_test_cycles")
    probe.refs = []  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "customtools_test_cycles", probe)
    write(tmp_path / "tools" / "cycle.py", CYCLE_PROBE)
    assert gc.isenabled()
    for _ in range(40):
        result = await load_custom_tools([tmp_path / "tools"], tmp_path, home=tmp_path / "home")
        assert result.tool_names == ("probe",)
    refs = probe.refs  # type: ignore[attr-defined]
    assert len(refs) == 40
    alive = [ref() is not None for ref in refs]
    assert not any(alive[:20]), f"cycles of the first 20 loads still alive: {alive}"
    assert sum(alive) < 20
