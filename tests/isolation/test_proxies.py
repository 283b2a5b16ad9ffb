"""Proxy tools behave like the tools they stand for, behind the same adapter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from customtools import CustomToolAdapter, SessionEvent, ToolContext, dispatch_session_event
from customtools._isolation._pool import IsolationPool
from customtools._loading._loader import load_custom_tools

from ._helpers import load, options, write

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(os.name != "posix", reason="process isolation needs POSIX"),
]

PACK = """
def factory(api):
    async def greet(call_id, params, on_update, ctx, signal):
        for index in range(params["updates"]):
            on_update({"content": [{"type": "text", "text": str(index)}]})
        return {"content": [{"type": "text", "text": f"hi {params['name']}"}],
                "details": {"pid": os.getpid(), "cwd": ctx.cwd, "model": ctx.model}}

    def fails(call_id, params, on_update, ctx, signal):
        raise KeyError("missing")

    def big(call_id, params, on_update, ctx, signal):
        return "x" * (2 * 1024 * 1024)

    def asks_abort(call_id, params, on_update, ctx, signal):
        ctx.abort("enough")
        return "asked"

    seen = []

    def on_session(event, ctx):
        if event.reason == "shutdown":
            raise RuntimeError("hook broke")
        seen.append(event.reason)

    def sessions(call_id, params, on_update, ctx, signal):
        return ",".join(seen)

    return [
        CustomTool(
            name="greet",
            label="Greet",
            description="Says hello.",
            parameters=Type.Object({
                "name": Type.String(minLength=1),
                "updates": Type.Optional(Type.Integer(minimum=0, default=0)),
            }),
            timeout=30,
            hidden=True,
            annotations={"readOnlyHint": True},
            meta={"vendor/x": 1},
        ),
        CustomTool(name="fails", execute=fails),
        CustomTool(name="big", execute=big),
        CustomTool(name="asks_abort", execute=asks_abort),
        CustomTool(name="sessions", execute=sessions, on_session=on_session),
        CustomTool(name="guarded", execute=lambda *a: "ok", requires_approval=True),
        CustomTool(name="judged", execute=lambda *a: "ok", requires_approval=lambda p: True),
    ]
""".replace(
    'CustomTool(\n            name="greet",',
    'CustomTool(\n            name="greet", execute=greet,',
)


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    write(tmp_path, "pack.py", PACK)
    return tmp_path


async def test_proxies_keep_names_schemas_and_metadata(pack: Path) -> None:
    in_process = await load_custom_tools([pack / "pack.py"], pack)
    async with IsolationPool(**options()) as pool:
        isolated = await load(pool, pack, "pack.py")
        assert isolated.tool_names == in_process.tool_names
        for here, there in zip(in_process.tools, isolated.tools, strict=True):
            if here.tool.name != "judged":
                assert there.tool.to_dict() == here.tool.to_dict()
            assert there.tool.timeout == here.tool.timeout
            assert there.path == here.path
            assert there.source == here.source
        assert isolated.get("guarded").tool.requires_approval is True
        # A callable cannot cross: the proxy asks for approval on every call instead.
        assert isolated.get("judged").tool.requires_approval is True
        assert (isolated.get("sessions").tool.on_session is None) is False
        assert isolated.get("greet").tool.on_session is None


async def test_results_errors_and_validation_match_in_process(pack: Path) -> None:
    in_process = await load_custom_tools([pack / "pack.py"], pack)
    async with IsolationPool(**options()) as pool:
        isolated = await load(pool, pack, "pack.py")
        for name, params in [
            ("greet", {"name": "ada"}),
            ("greet", {"name": ""}),
            ("greet", {"name": "ada", "extra": True}),
            ("fails", {}),
        ]:
            here = await CustomToolAdapter(in_process.get(name).tool).execute("c", params)
            there = await CustomToolAdapter(isolated.get(name).tool).execute("c", params)
            assert there.text == here.text
            assert there.is_error == here.is_error
            if not here.is_error:
                assert there.details["pid"] != os.getpid()
                assert there.meta == here.meta
            else:
                assert there.details == here.details


async def test_updates_stream_back_in_order_and_floods_end(pack: Path) -> None:
    async with IsolationPool(**options()) as pool:
        isolated = await load(pool, pack, "pack.py")
        received: list[str] = []
        result = await CustomToolAdapter(isolated.get("greet").tool).execute(
            "c", {"name": "ada", "updates": 20000}, on_update=lambda p: received.append(p.text)
        )
        assert result.text == "hi ada"
        # Under back-pressure updates are coalesced to the newest, never reordered or lost
        # at the end.
        numbers = [int(text) for text in received]
        assert numbers == sorted(set(numbers))
        assert numbers[-1] == 19999


async def test_a_result_over_the_message_bound_is_an_error_result(pack: Path) -> None:
    # spin_us=0: every reply is waited for on the event loop, never polled.
    async with IsolationPool(**options(max_message_mib=1, spin_us=0)) as pool:
        isolated = await load(pool, pack, "pack.py")
        pid = pool.pids
        result = await CustomToolAdapter(isolated.get("big").tool).execute("c", {})
        assert result.is_error
        assert "too large to leave its worker process" in result.text
        assert pool.pids == pid


async def test_context_travels_and_ctx_abort_reaches_the_host(pack: Path) -> None:
    asked: list[object] = []
    ctx = ToolContext(cwd="/somewhere", model="model-x", on_abort=asked.append)
    async with IsolationPool(**options()) as pool:
        isolated = await load(pool, pack, "pack.py")
        greet = await CustomToolAdapter(isolated.get("greet").tool).execute(
            "c", {"name": "ada"}, ctx=ctx
        )
        assert greet.details["cwd"] == "/somewhere"
        assert greet.details["model"] == "model-x"
        result = await CustomToolAdapter(isolated.get("asks_abort").tool).execute("c", {}, ctx=ctx)
        assert result.text == "asked"
        assert asked == ["enough"]


async def test_session_events_reach_the_worker_and_hook_failures_come_back(pack: Path) -> None:
    async with IsolationPool(**options()) as pool:
        isolated = await load(pool, pack, "pack.py")
        tools = [loaded.tool for loaded in isolated.tools]
        assert await dispatch_session_event(tools, SessionEvent(reason="start")) == []
        failures = await dispatch_session_event(tools, SessionEvent(reason="shutdown"))
        assert [failure.tool_name for failure in failures] == ["sessions"]
        assert "RuntimeError: hook broke" in str(failures[0].error)
        seen = await CustomToolAdapter(isolated.get("sessions").tool).execute("c", {})
        assert seen.text == "start"


async def test_discover_and_load_and_load_custom_tools_take_a_pool(pack: Path) -> None:
    from customtools import discover_and_load
    from customtools.isolation import IsolationPool as PublicPool

    assert PublicPool is IsolationPool
    async with IsolationPool(**options()) as pool:
        explicit = await load_custom_tools([pack / "pack.py"], pack, isolation=pool)
        discovered = await discover_and_load(
            [pack / "pack.py"], pack, home=pack / "home", entry_points=False, isolation=pool
        )
        assert explicit.tool_names == discovered.tool_names
        assert len(pool.pids) == 2
        for loaded in (explicit, discovered):
            result = await CustomToolAdapter(loaded.get("greet").tool).execute("c", {"name": "a"})
            assert result.details["pid"] in pool.pids


async def test_concurrent_calls_share_one_worker_and_each_gets_its_own_result(
    tmp_path: Path,
) -> None:
    import anyio

    write(
        tmp_path,
        "slow.py",
        """
        def factory(api):
            async def echo(call_id, params, on_update, ctx, signal):
                import anyio
                on_update(f"start {params['n']}")
                await anyio.sleep(params["delay"])
                return f"done {params['n']}"
            return CustomTool(name="echo", execute=echo, parameters=Type.Object(
                {"n": Type.Integer(), "delay": Type.Number()}))
        """,
    )
    async with IsolationPool(**options()) as pool:
        result = await load(pool, tmp_path, "slow.py")
        adapter = CustomToolAdapter(result.tools[0].tool)
        texts: dict[int, str] = {}
        updates: dict[int, list[str]] = {n: [] for n in range(6)}

        async def one(n: int) -> None:
            outcome = await adapter.execute(
                str(n),
                {"n": n, "delay": (6 - n) * 0.05},
                on_update=lambda p: updates[n].append(p.text),
            )
            texts[n] = outcome.text

        async with anyio.create_task_group() as group:
            for n in range(6):
                group.start_soon(one, n)
        assert texts == {n: f"done {n}" for n in range(6)}
        assert updates == {n: [f"start {n}"] for n in range(6)}
        assert len(pool.pids) == 1
