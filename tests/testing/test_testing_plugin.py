"""The pytest plugin, run the way tool authors run it: a pack and its tests in pytester's dir."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest_plugins = ["pytester"]

GREET = """
    import anyio
    from customtools import CustomTool, ToolResult

    def factory(api):
        Type = api.typebox

        async def execute(tool_call_id, params, on_update, ctx, signal):
            for n in range(params["times"]):
                on_update(f"greeting {n + 1}")
                await anyio.sleep(params["pause"])
            if params["name"] == "nobody":
                raise LookupError("nobody to greet")
            text = f"hello {params['name']}"
            return ToolResult.from_text(text, details={"times": params["times"]})

        return CustomTool(
            name="greet",
            description="Greets someone.",
            parameters=Type.Object({
                "name": Type.String(),
                "times": Type.Optional(Type.Integer(minimum=1, default=1)),
                "pause": Type.Optional(Type.Number(minimum=0, default=0)),
            }),
            execute=execute,
        )
"""

WHERE = """
    from customtools import CustomTool

    def factory(api):
        return CustomTool(name="where", description="Says api.cwd.",
                          execute=lambda tool_call_id, params, on_update, ctx, signal: api.cwd)
"""

CONFTEST = """
    import pytest

    @pytest.fixture(params=["asyncio", "trio"])
    def anyio_backend(request):
        return request.param
"""


# In-process runs load exactly the plugins under test: pytester restores sys.modules after each
# run, so autoloading every installed plugin would re-import the heavy ones each time. The last
# test checks the real entry point in a fresh interpreter.
PLUGINS = ("-p", "customtools.testing._plugin", "-p", "anyio.pytest_plugin")


@pytest.fixture(autouse=True)
def _no_autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*PLUGINS, *args)


def _setup(pytester: pytest.Pytester, packs: str = "tools", **tools: str) -> None:
    pytester.makeini(
        f"""
        [pytest]
        customtools_packs = {packs}
        filterwarnings = error
        addopts = --strict-markers --strict-config -p no:cacheprovider
        """
    )
    for name, source in (tools or {"greet": GREET}).items():
        path = pytester.path / "tools" / f"{name}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    pytester.makeconftest(CONFTEST)


def test_tool_pack_loads_the_configured_pack_for_sync_and_async_tests(
    pytester: pytest.Pytester,
) -> None:
    _setup(pytester)
    pytester.makepyfile(
        """
        import pytest
        from customtools.testing import assert_ok, assert_text

        def test_sync(tool_pack):
            call = assert_ok(tool_pack.call_sync("greet", {"name": "Ada", "times": 2}))
            assert call.update_texts == ["greeting 1", "greeting 2"]
            assert call.details == {"times": 2}

        @pytest.mark.anyio
        async def test_async(tool_pack):
            call = await tool_pack.call("greet", {"name": "Lin"})
            assert_text(assert_ok(call), "hello Lin")
            assert tool_pack.names == ("greet",)
        """
    )

    result = _run(pytester)

    result.assert_outcomes(passed=3)


def test_a_failing_helper_shows_what_the_tool_returned(pytester: pytest.Pytester) -> None:
    _setup(pytester)
    pytester.makepyfile(
        """
        from customtools.testing import assert_ok

        def test_greets_nobody(tool_pack):
            assert_ok(tool_pack.call_sync("greet", {"name": "nobody", "times": 2}))
        """
    )

    result = _run(pytester)

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: tool 'greet' returned an error result, expected success:",
            "E*  is_error: True",
            "E*  text:",
            "E*    LookupError: nobody to greet",
            "E*  details:",
            "E*    {'error': 'LookupError', 'message': 'nobody to greet'}",
            "E*  updates: 2",
            "E*    [[]1] 'greeting 1'",
            "E*    [[]2] 'greeting 2'",
        ]
    )


def test_cancellation_can_be_tested_with_the_abort_controller(pytester: pytest.Pytester) -> None:
    _setup(pytester)
    pytester.makepyfile(
        """
        import anyio
        import pytest
        from customtools.testing import assert_cancelled

        @pytest.mark.anyio
        async def test_stop(tool_pack, abort_controller):
            async with anyio.create_task_group() as group:
                async def stop():
                    await anyio.sleep(0.05)
                    abort_controller.abort("enough")
                group.start_soon(stop)
                call = await tool_pack.call(
                    "greet", {"name": "x", "times": 100, "pause": 0.01},
                    signal=abort_controller.signal,
                )
            assert_cancelled(call, match="enough")
            assert 0 < len(call.updates) < 100

        def test_each_test_gets_a_fresh_controller(abort_controller):
            assert not abort_controller.signal.aborted

        def test_scripted_abort(tool_pack):
            call = tool_pack.call_sync("greet", {"name": "x", "times": 9}, abort_after_updates=1)
            assert_cancelled(call, timed_out=False)
            assert call.update_texts == ["greeting 1"]
        """
    )

    _run(pytester).assert_outcomes(passed=4)


def test_load_errors_fail_the_test_with_each_error_listed(pytester: pytest.Pytester) -> None:
    _setup(
        pytester,
        greet=GREET,
        broken="import a_module_that_is_not_installed_xyz\n",
        clash=GREET,
    )
    pytester.makepyfile("def test_uses_pack(tool_pack):\n    pass\n")

    result = _run(pytester)

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: tool pack */tools has 2 load error(s):",
            "E*  */tools/broken.py [[]missing-dependency[]]: *a_module_that_is_not_installed_xyz*",
            "E*  */tools/greet.py [[]name-conflict[]]: tool name 'greet' is already taken"
            " by */clash.py*",
            "E*(pass allow_errors=True to assert on pack.errors instead)",
        ]
    )


def test_without_configuration_tool_pack_says_how_to_configure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nfilterwarnings = error\n")
    pytester.makepyfile("def test_uses_pack(tool_pack):\n    pass\n")

    result = _run(pytester)

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no tool pack configured: set customtools_packs in your*"])


def test_tool_pack_paths_can_be_overridden_in_a_conftest(pytester: pytest.Pytester) -> None:
    _setup(pytester, packs="", greet=GREET, where=WHERE)
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def tool_pack_paths():
            return ["tools/where.py"]
        """
    )
    pytester.makepyfile(
        """
        def test_only_where(tool_pack, tmp_path):
            assert tool_pack.names == ("where",)
            assert tool_pack.call_sync("where").text == str(tmp_path)
        """
    )

    _run(pytester).assert_outcomes(passed=1)


def test_load_tool_pack_takes_paths_cwd_and_options(pytester: pytest.Pytester) -> None:
    _setup(pytester, greet=GREET, where=WHERE, broken="syntax error\n")
    pytester.makepyfile(
        """
        import pytest

        def test_explicit_path_and_cwd(load_tool_pack, tmp_path):
            pack = load_tool_pack("tools/where.py", cwd=tmp_path / "sub")
            assert pack.call_sync("where").text == str(tmp_path / "sub")

        def test_default_paths_and_allowed_errors(load_tool_pack):
            pack = load_tool_pack(allow_errors=True)
            assert pack.names == ("greet", "where")
            assert [e.code for e in pack.errors] == ["syntax-error"]

        @pytest.mark.anyio
        async def test_inside_an_async_test(load_tool_pack, tmp_path):
            pack = load_tool_pack("tools/where.py")
            assert (await pack.call("where")).text == str(tmp_path)
        """
    )

    _run(pytester).assert_outcomes(passed=4)


def test_check_pack_failure_lists_every_finding(pytester: pytest.Pytester) -> None:
    _setup(
        pytester,
        vague="""
            from customtools import CustomTool

            def factory(api):
                Type = api.typebox
                return CustomTool(
                    name="vague",
                    parameters=Type.Object(
                        {"n": Type.Optional(Type.Integer(minimum=1, default=0))}
                    ),
                    execute=lambda tool_call_id, params, on_update, ctx, signal: "ok",
                )
        """,
    )
    pytester.makepyfile(
        """
        from customtools.testing import check_pack

        def test_pack_is_valid():
            check_pack("tools")
        """
    )

    result = _run(pytester)

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: the tool pack check failed:",
            "E*tool pack */tools: 1 tool(s), 2 error(s), 0 warning(s)",
            "E*  error: */tools/vague.py tool 'vague' [[]empty-description[]]: *",
            "E*error: */vague.py tool 'vague' [[]invalid-default[]]: the default of property 'n' *",
        ]
    )


def test_check_tool_pack_runs_the_rulebook_on_the_configured_pack(
    pytester: pytest.Pytester,
) -> None:
    _setup(
        pytester,
        hidden="""
            from customtools import CustomTool

            def factory(api):
                return CustomTool(
                    name="hidden",
                    description="Reads a file.\\u200b",
                    parameters=api.typebox.Object({}),
                    execute=lambda tool_call_id, params, on_update, ctx, signal: api.cwd,
                )
        """,
    )
    pytester.makepyfile(
        """
        def test_lenient(check_tool_pack, tmp_path):
            report = check_tool_pack()
            assert [f.code for f in report.warnings] == ["invisible-unicode"]

        def test_strict(check_tool_pack):
            check_tool_pack("tools", strict=True)
        """
    )

    result = _run(pytester)

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: the tool pack check failed (strict):",
            "E*  error: */tools/hidden.py tool 'hidden' [[]invisible-unicode[]]: *U+200B*",
        ]
    )


def test_the_plugin_leaves_unrelated_test_runs_alone(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nfilterwarnings = error\naddopts = --strict-markers --strict-config\n"
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("n", [1, 2])
        def test_plain(n):
            assert n
        """
    )

    _run(pytester).assert_outcomes(passed=2)


def test_importing_the_plugin_loads_none_of_the_helpers() -> None:
    code = (
        "import sys, customtools.testing._plugin;"
        "print(sorted(m for m in sys.modules if m.startswith('customtools.testing.')))"
    )

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )

    assert done.stdout.strip() == "['customtools.testing._plugin']"


def test_the_fixtures_are_documented_in_pytest_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")

    result = _run(pytester, "--fixtures")

    result.stdout.fnmatch_lines_random(
        [
            "abort_controller -- *",
            "tool_pack -- *",
            "tool_pack_paths -- *",
            "load_tool_pack -- *",
            "check_tool_pack -- *",
        ]
    )


def test_the_entry_point_registers_the_plugin_in_a_fresh_interpreter(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _setup(pytester)
    pytester.makepyfile(
        """
        from customtools.testing import assert_ok

        def test_greet(tool_pack):
            assert_ok(tool_pack.call_sync("greet", {"name": "Ada"}, backend="trio"))
        """
    )

    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")

    # Every installed plugin loads; LangSmith's (a langchain-core dependency) only costs time.
    result = pytester.runpytest_subprocess("-p", "no:langsmith_plugin")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["plugins: *customtools-*"])
