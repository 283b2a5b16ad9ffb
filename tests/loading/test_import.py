"""Importing one candidate: module names, packages, entry points, containment, cleanup."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from customtools._loading._api import PendingActionStore, SharedState, ToolAPI
from customtools._loading._import import (
    MODULES_PACKAGE,
    load_candidate,
    module_name_for,
    new_generation,
)
from customtools._loading._records import Candidate
from customtools._tool import CustomTool

from ._helpers import candidate, copy_pack, source, tool_module, write

pytestmark = pytest.mark.anyio


def _api(cwd: Path) -> ToolAPI:
    state = SharedState(cwd=str(cwd), pending_actions=PendingActionStore())
    return ToolAPI(state, logger_name="customtools.tools.test")


async def _load(path: Path, tmp_path: Path, *, load_timeout: float | None = 5.0):
    cand = candidate(path)
    name = module_name_for(cand, new_generation())
    return await load_candidate(cand, name, _api(tmp_path), load_timeout=load_timeout)


def test_module_name_is_private_path_derived_and_per_generation(tmp_path: Path) -> None:
    cand = candidate(write(tmp_path / "my-tool.py", "x = 1\n"))
    first = module_name_for(cand, 1)
    assert first.startswith(f"{MODULES_PACKAGE}.my_tool_")
    assert first.endswith("_1")
    assert module_name_for(cand, 2) != first
    assert module_name_for(cand, 1) == first


def test_module_names_of_same_stem_in_two_dirs_differ(tmp_path: Path) -> None:
    a = candidate(write(tmp_path / "a" / "run.py", "x = 1\n"))
    b = candidate(write(tmp_path / "b" / "run.py", "x = 1\n"))
    assert module_name_for(a, 7) != module_name_for(b, 7)


def test_module_name_of_digit_stem_is_an_identifier(tmp_path: Path) -> None:
    cand = candidate(write(tmp_path / "1st.py", "x = 1\n"))
    assert module_name_for(cand, 1).rpartition(".")[2].isidentifier()


async def test_plain_module_loads_its_tool(tmp_path: Path) -> None:
    out = await _load(write(tmp_path / "t.py", tool_module("plain_tool")), tmp_path)
    assert [tool.name for tool in out.tools] == ["plain_tool"]
    assert out.errors == []
    assert out.module_name is not None
    assert out.module_name in sys.modules


async def test_tool_directory_is_never_put_on_sys_path(tmp_path: Path) -> None:
    before = list(sys.path)
    await _load(write(tmp_path / "t.py", tool_module("path_tool")), tmp_path)
    assert sys.path == before
    assert str(tmp_path) not in sys.path


async def test_package_tool_relative_imports_work(tmp_path: Path) -> None:
    pack = copy_pack("good", tmp_path)
    out = await _load(pack / "pkg_tool", tmp_path)
    assert out.errors == []
    (tool,) = out.tools
    assert tool.name == "good_pkg"
    assert tool.description == "hello from a helper module"
    assert tool.execute() == "OK"
    assert f"{out.module_name}.helpers" in sys.modules


async def test_json_named_tool_does_not_shadow_stdlib(tmp_path: Path) -> None:
    pack = copy_pack("good", tmp_path)
    out = await _load(pack / "json.py", tmp_path)
    assert [tool.name for tool in out.tools] == ["good_json_named"]
    import importlib

    stdlib_json = importlib.import_module("json")
    assert stdlib_json is json
    assert not hasattr(stdlib_json, "SHADOW_MARKER")
    assert json.dumps({"a": 1}) == '{"a": 1}'


async def test_two_plugins_with_run_py_do_not_collide(tmp_path: Path) -> None:
    one = write(tmp_path / "plugin_one" / "run.py", "VALUE = 'one'\n" + tool_module("run_one"))
    two = write(tmp_path / "plugin_two" / "run.py", "VALUE = 'two'\n" + tool_module("run_two"))
    out_one = await _load(one, tmp_path)
    out_two = await _load(two, tmp_path)
    assert [t.name for t in out_one.tools] == ["run_one"]
    assert [t.name for t in out_two.tools] == ["run_two"]
    assert out_one.module_name != out_two.module_name
    assert sys.modules[out_one.module_name].VALUE == "one"  # type: ignore[index]
    assert sys.modules[out_two.module_name].VALUE == "two"  # type: ignore[index]


async def test_failed_import_leaves_nothing_in_sys_modules(tmp_path: Path) -> None:
    pkg = tmp_path / "halfpkg"
    write(pkg / "helper.py", "X = 1\n")
    write(pkg / "__init__.py", "from . import helper\nraise RuntimeError('late failure')\n")
    cand = candidate(pkg)
    name = module_name_for(cand, new_generation())
    out = await load_candidate(cand, name, _api(tmp_path), load_timeout=5)
    assert [e.code for e in out.errors] == ["import-error"]
    assert name not in sys.modules
    assert f"{name}.helper" not in sys.modules
    assert out.module_name is None


async def test_load_error_has_one_line_cause_and_separate_traceback(tmp_path: Path) -> None:
    path = write(
        tmp_path / "deep.py",
        """
        def inner():
            raise KeyError("missing key")

        def factory(api):
            inner()
        """,
    )
    out = await _load(path, tmp_path)
    (error,) = out.errors
    assert error.code == "factory-error"
    assert "\n" not in error.error
    assert error.error == "the factory raised KeyError: 'missing key'"
    assert error.path == str(path)
    assert error.resolved_path == str(path.resolve())
    assert error.source == source()
    assert error.traceback is not None
    assert error.traceback.startswith("Traceback (most recent call last):")
    assert "in inner" in error.traceback
    assert "_loading" not in error.traceback  # loader frames are trimmed
    assert error.traceback.rstrip().endswith("KeyError: 'missing key'")


async def test_keyboard_interrupt_is_not_contained_but_cleaned_up(tmp_path: Path) -> None:
    path = write(tmp_path / "ctrl_c.py", "raise KeyboardInterrupt\n")
    cand = candidate(path)
    name = module_name_for(cand, new_generation())
    with pytest.raises(KeyboardInterrupt):
        await load_candidate(cand, name, _api(tmp_path), load_timeout=5)
    assert name not in sys.modules


async def test_module_changing_cwd_is_restored_and_reported(tmp_path: Path) -> None:
    before = os.getcwd()
    path = write(tmp_path / "cd.py", f"import os\nos.chdir({str(tmp_path)!r})\n" + tool_module("x"))
    out = await _load(path, tmp_path)
    assert os.getcwd() == before
    (error,) = out.errors
    assert error.code == "changed-process-state"
    assert "the working directory" in error.error
    assert out.tools == []


async def test_factory_failing_after_changing_state_reports_both(tmp_path: Path) -> None:
    path = write(
        tmp_path / "both.py",
        """
        import sys

        def factory(api):
            sys.path.append("/nowhere")
            raise RuntimeError("and then failed")
        """,
    )
    before = list(sys.path)
    out = await _load(path, tmp_path)
    assert sys.path == before
    (error,) = out.errors
    assert "RuntimeError: and then failed; it also changed sys.path" in error.error


@pytest.mark.parametrize("where", ["module", "factory"])
async def test_rebinding_sys_path_and_argv_restores_the_host_s_own_lists(
    tmp_path: Path, where: str
) -> None:
    change = 'sys.path = ["/nowhere"]; sys.argv = ["evil"]'
    body = (
        f"import sys\n{change}\n\ndef factory(api):\n    return []\n"
        if where == "module"
        else f"import sys\n\ndef factory(api):\n    {change}\n    return []\n"
    )
    path_list, argv_list = sys.path, sys.argv
    path_before, argv_before = list(sys.path), list(sys.argv)

    out = await _load(write(tmp_path / "rebinds.py", body), tmp_path)

    assert sys.path is path_list  # the object the host and importlib hold, not a copy
    assert sys.argv is argv_list
    assert sys.path == path_before
    assert sys.argv == argv_before
    (error,) = out.errors
    assert error.code == "changed-process-state"
    assert "sys.path" in error.error
    assert "sys.argv" in error.error


async def test_handlers_set_by_a_module_are_restored(tmp_path: Path) -> None:
    import signal

    before = signal.getsignal(signal.SIGUSR1)
    body = "import signal\nsignal.signal(signal.SIGUSR1, lambda *a: None)\n"
    out = await _load(
        write(tmp_path / "handler.py", body + "def factory(api):\n    return []\n"), tmp_path
    )
    assert signal.getsignal(signal.SIGUSR1) is before
    (error,) = out.errors
    assert "signal handlers (SIGUSR1;" in error.error


async def test_async_factory_past_timeout_is_reported(tmp_path: Path) -> None:
    path = write(
        tmp_path / "slow.py",
        "import anyio\n\nasync def factory(api):\n    await anyio.sleep(30)\n",
    )
    out = await _load(path, tmp_path, load_timeout=0.05)
    (error,) = out.errors
    assert error.code == "timeout"
    assert "0.05 s" in error.error


async def test_factory_may_return_a_tuple_and_a_custom_tool(tmp_path: Path) -> None:
    path = write(
        tmp_path / "tup.py",
        """
        from customtools._tool import CustomTool

        def factory(api):
            return (CustomTool(name="tup_a", execute=print), {"name": "tup_b", "execute": print})
        """,
    )
    out = await _load(path, tmp_path)
    assert [t.name for t in out.tools] == ["tup_a", "tup_b"]
    assert all(isinstance(t, CustomTool) for t in out.tools)


async def test_empty_list_is_a_diagnostic_not_an_error(tmp_path: Path) -> None:
    out = await _load(write(tmp_path / "none.py", "def factory(api):\n    return []\n"), tmp_path)
    assert out.errors == []
    assert [d.code for d in out.diagnostics] == ["no-tools"]


async def test_mapping_tool_becomes_a_custom_tool(tmp_path: Path) -> None:
    pack = copy_pack("good", tmp_path)
    out = await _load(pack / "mapping_tool.py", tmp_path)
    (tool,) = out.tools
    assert isinstance(tool, CustomTool)
    assert (tool.name, tool.label, tool.description) == (
        "good_mapping",
        "good_mapping",
        "From a mapping",
    )


async def test_entry_point_candidate_imports_module_and_attribute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        tmp_path / "site" / "ct_test_ep_pkg" / "__init__.py",
        """
        class Holder:
            @staticmethod
            def make(api):
                return {"name": "ep_tool", "execute": print}
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    cand = Candidate(
        path="ct_test_ep_pkg:Holder.make",
        resolved_path="ct_test_ep_pkg:Holder.make",
        kind="entry_point",
        source=source("entry-points", "user", distribution="ct-test-ep"),
        entry_point="ct_test_ep_pkg:Holder.make",
    )
    out = await load_candidate(cand, "unused", _api(tmp_path), load_timeout=5)
    assert [t.name for t in out.tools] == ["ep_tool"]
    assert out.module_name is None
    assert "ct_test_ep_pkg" in sys.modules
    monkeypatch.delitem(sys.modules, "ct_test_ep_pkg")


async def test_entry_point_to_missing_module_is_an_error(tmp_path: Path) -> None:
    cand = Candidate(
        path="ct_no_such_module_xyz:factory",
        resolved_path="ct_no_such_module_xyz:factory",
        kind="entry_point",
        source=source("entry-points", "user", distribution="ghost"),
        entry_point="ct_no_such_module_xyz:factory",
    )
    out = await load_candidate(cand, "unused", _api(tmp_path), load_timeout=5)
    (error,) = out.errors
    assert error.code == "missing-dependency"
    assert "ct_no_such_module_xyz" in error.error
