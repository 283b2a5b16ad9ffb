"""The result cache: only read-only and idempotent tools, one caller's results never handed
to another, entries dropped when the pack changes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from customtools import (
    CustomTool,
    CustomToolAdapter,
    TextContent,
    ToolContext,
    ToolRegistry,
    ToolResult,
)
from customtools.loading import Reloader
from customtools.policy import MemoryCache, Policy

pytestmark = pytest.mark.anyio

READ_ONLY = {"readOnlyHint": True, "idempotentHint": True}


def counting_tool(**fields: Any) -> tuple[CustomTool, list[Any]]:
    calls: list[Any] = []

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        calls.append((ctx.caller, params))
        return f"answer {len(calls)} for {ctx.caller}"

    return CustomTool(
        name="lookup", execute=execute, parameters={"type": "object"}, **fields
    ), calls


def as_caller(name: str | None) -> ToolContext:
    return ToolContext(caller=name)


async def test_a_read_only_idempotent_tool_answers_a_repeat_from_the_cache() -> None:
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy())
    first = await adapter.execute("1", {"q": "x", "n": 1}, ctx=as_caller("alice"))
    again = await adapter.execute("2", {"n": 1, "q": "x"}, ctx=as_caller("alice"))  # key order
    other = await adapter.execute("3", {"q": "x", "n": True}, ctx=as_caller("alice"))
    assert len(calls) == 2  # True is not 1
    assert again.text == first.text
    assert first.meta["customtools/policy"] == {"cache": "stored"}
    assert again.meta["customtools/policy"] == {"cache": "hit"}
    assert other.meta["customtools/policy"] == {"cache": "stored"}


async def test_cached_results_are_kept_apart_per_caller() -> None:
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy())
    alice = await adapter.execute("1", {"q": "x"}, ctx=as_caller("alice"))
    bob = await adapter.execute("2", {"q": "x"}, ctx=as_caller("bob"))
    alice_again = await adapter.execute("3", {"q": "x"}, ctx=as_caller("alice"))
    assert [caller for caller, _ in calls] == ["alice", "bob"]
    assert bob.text == "answer 2 for bob"
    assert alice_again.text == alice.text == "answer 1 for alice"


async def test_a_call_without_a_caller_is_never_cached() -> None:
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy())
    await adapter.execute("1", {"q": "x"})
    plain = await adapter.execute("2", {"q": "x"})
    assert len(calls) == 2
    assert plain.meta is None


@pytest.mark.parametrize(
    "fields",
    [
        {"annotations": {"readOnlyHint": True}},  # not declared idempotent
        {"annotations": {"idempotentHint": True}},  # not read-only
        {"annotations": {**READ_ONLY, "destructiveHint": True}},
        {"annotations": READ_ONLY, "requires_approval": True},  # a person approves each call
        {},
    ],
)
async def test_only_read_only_idempotent_tools_are_cached(fields: dict[str, Any]) -> None:
    tool, calls = counting_tool(**fields)
    adapter = CustomToolAdapter(tool, policy=Policy(), approver=_yes)
    await adapter.execute("1", {"q": "x"}, ctx=as_caller("alice"))
    await adapter.execute("2", {"q": "x"}, ctx=as_caller("alice"))
    assert len(calls) == 2


async def _yes(request: Any) -> bool:
    return True


async def test_the_host_can_turn_the_cache_off() -> None:
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(cache_ttl=None))
    await adapter.execute("1", {"q": "x"}, ctx=as_caller("alice"))
    await adapter.execute("2", {"q": "x"}, ctx=as_caller("alice"))
    assert len(calls) == 2


async def test_an_error_result_is_not_cached() -> None:
    calls: list[int] = []

    async def flaky(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("not yet")
        return "fine"

    tool = CustomTool(name="flaky", execute=flaky, annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(retries=0))
    failed = await adapter.execute("1", {}, ctx=as_caller("alice"))
    fine = await adapter.execute("2", {}, ctx=as_caller("alice"))
    assert failed.is_error
    assert fine.text == "fine"


MODULE = """
from customtools import CustomTool

def factory(api):
    async def run(call_id, params, on_update, ctx, signal):
        COUNT.append(1)
        return "{answer} " + str(len(COUNT))

    return CustomTool(
        name="lookup",
        execute=run,
        annotations={{"readOnlyHint": True, "idempotentHint": True}},
    )

COUNT = []
"""


async def test_cached_entries_are_dropped_when_the_pack_changes(tmp_path: Path) -> None:
    module = tmp_path / "lookup.py"
    module.write_text(MODULE.format(answer="old"))
    reloader = Reloader([str(module)], cwd=str(tmp_path), explicit=True)
    policy = Policy()
    context = ToolContext(caller="alice")
    try:
        first = ToolRegistry(await reloader.load(), policy=policy, context=context)
        assert (await first.call("lookup", "1", {})).text == "old 1"
        assert (await first.call("lookup", "2", {})).text == "old 1"  # from the cache
        assert len(policy.backend.cache) == 1  # type: ignore[attr-defined]
        module.write_text(MODULE.format(answer="new"))
        second = ToolRegistry(await reloader.load(), policy=policy, context=context)
        changed = await second.call("lookup", "3", {})
        assert changed.text == "new 1"
        assert changed.meta["customtools/policy"] == {"cache": "stored"}
        assert len(policy.backend.cache) == 1  # type: ignore[attr-defined]  # the old one went
        # The tool of the old load, still held by a host, no longer sees its entry either.
        stale = await first.call("lookup", "4", {})
        assert stale.meta["customtools/policy"] == {"cache": "stored"}
    finally:
        reloader.close()


async def test_declared_permissions_without_write_or_network_make_a_tool_cacheable(
    tmp_path: Path,
) -> None:
    from customtools import load_custom_tools

    (tmp_path / "confined.py").write_text(
        "from customtools import CustomTool\n"
        "from customtools.isolation import Permissions\n"
        "PERMISSIONS = Permissions(read=['.'])\n"
        "COUNT = []\n"
        "def factory(api):\n"
        "    async def run(call_id, params, on_update, ctx, signal):\n"
        "        COUNT.append(1)\n"
        "        return str(len(COUNT))\n"
        "    return [CustomTool(name='pure', execute=run),\n"
        "            CustomTool(name='says_not', execute=run,\n"
        "                       annotations={'idempotentHint': False})]\n"
    )
    loaded = await load_custom_tools([str(tmp_path / "confined.py")], cwd=str(tmp_path))
    registry = ToolRegistry(loaded, policy=Policy(), context=ToolContext(caller="alice"))
    assert (await registry.call("pure", "1", {})).text == "1"
    assert (await registry.call("pure", "2", {})).text == "1"
    assert (await registry.call("says_not", "3", {})).text == "2"
    assert (await registry.call("says_not", "4", {})).text == "3"  # its own annotation wins


async def test_the_host_toolkit_caches_per_client_and_else_per_chat() -> None:
    from customtools.host import HostSession

    tool, calls = counting_tool(annotations=READ_ONLY)
    session = HostSession("ahp://session/1", on_action=lambda chat, action: None)
    policy = Policy()

    async def call(chat: str, client_id: str | None = None) -> str:
        adapter = session.adapter(tool, chat, turn_id="t1", client_id=client_id, policy=policy)
        return (await adapter.execute("1", {"q": "x"})).text

    assert await call("ahp://chat/a", "ide") == "answer 1 for ide"
    assert await call("ahp://chat/b", "ide") == "answer 1 for ide"  # the same client
    assert await call("ahp://chat/a", "web") == "answer 2 for web"
    assert await call("ahp://chat/a") == "answer 3 for chat:ahp://chat/a"
    assert await call("ahp://chat/a") == "answer 3 for chat:ahp://chat/a"
    assert len(calls) == 3


@pytest.fixture(params=["orjson", "python"])
def key_form(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both forms of a cache key: orjson's bytes, and the tagged values without it."""
    import customtools._policy._apply as apply

    if request.param == "python":
        monkeypatch.setattr(apply, "_json_key", lambda: None)
    else:
        pytest.importorskip("orjson")
    return str(request.param)


async def test_the_key_is_the_arguments_json_values_whatever_the_order_of_their_keys(
    key_form: str,
) -> None:
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(), context=as_caller("alice"))
    for args in (
        {"n": 1},
        {"n": 1.0},
        {"n": True},
        {"n": 1},  # a hit
        {"o": {"x": 1, "y": [1, None]}},
        {"o": {"y": [1, None], "x": 1}},  # a hit
        {"o": {"x": 1, "y": [None, 1]}},
        {"o": {"x": 1, "y": [1.0, None]}},
        {"n": 0.0},
        {"n": -0.0},  # equal to 0.0, yet another argument: str() shows it
        {"n": -0.0},  # a hit
        {"n": None},
        {"n": None},  # a hit
        {"n": 2**70},  # beyond orjson's integers
        {"n": 2**70},  # a hit
    ):
        await adapter.execute("c", args)
    # JSON has no NaN and no infinities (orjson writes null): refused, never the null's result
    for number in ("nan", "inf", "-inf"):
        refused = await adapter.execute("c", {"n": float(number)})
        assert refused.is_error, refused
        assert "not a JSON number" in refused.text
    # with orjson, a repeat is answered by the cache's aliases first (the arguments as given)
    assert (type(adapter).__name__ == "_CachingAdapter") == (key_form == "orjson")
    assert [repr(params) for _, params in calls] == [
        "{'n': 1}",
        "{'n': 1.0}",
        "{'n': True}",
        "{'o': {'x': 1, 'y': [1, None]}}",
        "{'o': {'x': 1, 'y': [None, 1]}}",
        "{'o': {'x': 1, 'y': [1.0, None]}}",
        "{'n': 0.0}",
        "{'n': -0.0}",
        "{'n': None}",
        "{'n': 1180591620717411303424}",
    ]


async def test_a_tuple_argument_shares_the_entry_of_its_json_form(key_form: str) -> None:
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(), context=as_caller("alice"))
    first = await adapter.execute("1", {"ids": [1, 2]})
    again = await adapter.execute("2", {"ids": (1, 2)})
    await adapter.execute("3", {"ids": [2, 1]})
    assert again.text == first.text
    assert [params["ids"] for _, params in calls] == [[1, 2], [2, 1]]
    for _ in range(2):  # a set has no JSON form: refused each time, never from the cache
        refused = await adapter.execute("4", {"ids": {1, 2}})
        assert refused.is_error
        assert "customtools/policy" not in (refused.meta or {})


async def test_adapters_sharing_a_policy_keep_each_callers_results_apart() -> None:
    tool, _ = counting_tool(annotations=READ_ONLY)
    policy = Policy()
    alice = CustomToolAdapter(tool, policy=policy, context=as_caller("alice"))
    bob = CustomToolAdapter(tool, policy=policy, context=as_caller("bob"))
    texts = [
        (await alice.execute("1", {"q": "x"})).text,
        (await bob.execute("2", {"q": "x"})).text,
        (await alice.execute("3", {"q": "x"}, ctx=as_caller("bob"))).text,
        (await bob.execute("4", {"q": "x"}, ctx=as_caller("carol"))).text,
        (await alice.execute("5", {"q": "x"})).text,
    ]
    assert texts == [
        "answer 1 for alice",
        "answer 2 for bob",
        "answer 2 for bob",
        "answer 3 for carol",
        "answer 1 for alice",
    ]


async def test_adapters_that_make_other_arguments_of_the_same_input_share_no_result() -> None:
    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        return f"n is {params['n']!r}"

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tool = CustomTool(name="count", execute=execute, parameters=schema, annotations=READ_ONLY)
    policy = Policy()
    coercing = CustomToolAdapter(tool, policy=policy, context=as_caller("alice"))
    strict = CustomToolAdapter(tool, policy=policy, context=as_caller("alice"), coerce_args=False)
    assert (await coercing.execute("1", {"n": "5"})).text == "n is 5"
    refused = await strict.execute("2", {"n": "5"})  # never answered with the coerced call's
    assert refused.details["code"] == "invalid-arguments"


async def test_a_cached_result_is_read_only_and_no_caller_can_change_it_for_the_next() -> None:
    calls: list[int] = []

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> Any:
        calls.append(1)
        return ToolResult(
            content=(TextContent(text="ok", annotations={"audience": ["user"]}),),
            structured_content={"items": [1, 2], "page": {"n": 1}},
            details={"seen": ["a"]},
        )

    tool = CustomTool(name="listing", execute=execute, annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(), context=as_caller("alice"))
    first = await adapter.execute("1", {})
    first.structured_content["items"].append(3)  # type: ignore[index]  # its own result
    first.details["seen"].append("b")
    first.content[0].annotations["audience"].append("assistant")  # type: ignore[union-attr]
    hit = await adapter.execute("2", {})
    assert hit.meta["customtools/policy"] == {"cache": "hit"}  # type: ignore[index]
    assert hit.structured_content == {"items": (1, 2), "page": {"n": 1}}
    assert hit.details == {"seen": ("a",)}
    assert hit.content[0].annotations == {"audience": ("user",)}  # type: ignore[union-attr]
    with pytest.raises(TypeError, match="shared by every hit: change a copy of it"):
        hit.structured_content["page"]["n"] = 2  # type: ignore[index]
    with pytest.raises(TypeError, match="shared by every hit"):
        hit.meta.clear()  # type: ignore[union-attr]
    mine = copy.deepcopy(hit.structured_content)
    mine["page"]["n"] = 2  # type: ignore[index]  # a copy is the caller's own
    wire = json.loads(json.dumps(hit.to_dict()))
    assert wire["structuredContent"] == {"items": [1, 2], "page": {"n": 1}}
    again = await adapter.execute("3", {})
    assert again.structured_content == {"items": (1, 2), "page": {"n": 1}}
    assert len(calls) == 1


async def test_an_entry_past_its_ttl_is_not_a_hit() -> None:
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(cache_ttl=0.001), context=as_caller("al"))
    await adapter.execute("1", {"q": "x"})
    await anyio.sleep(0.01)
    again = await adapter.execute("2", {"q": "x"})
    assert again.meta["customtools/policy"] == {"cache": "stored"}  # type: ignore[index]
    assert len(calls) == 2


async def test_the_memory_cache_keeps_to_its_size_dropping_the_oldest_first() -> None:
    cache = MemoryCache(max_bytes=400)
    result = ToolResult.from_text("x")
    for key in "abcd":
        await cache.put("tool", "digest", key, result, 100, 60)
    assert await cache.get("tool", "digest", "a") is not None
    await cache.put("tool", "digest", "e", result, 100, 60)
    assert len(cache) == 4
    assert await cache.get("tool", "digest", "a") is None  # the oldest, read or not
    assert await cache.get("tool", "digest", "b") is not None
    await cache.put("tool", "digest", "big", result, 101, 60)  # over a quarter: not kept
    assert await cache.get("tool", "digest", "big") is None
    await cache.put("tool", "digest", "f", result, 100, 60)
    kept = [key for key in "abcdef" if await cache.get("tool", "digest", key) is not None]
    assert kept == ["c", "d", "e", "f"]
    assert await cache.get("tool", "the next digest", "e") is None  # the pack changed
    assert len(cache) == 0


async def test_a_result_holding_more_than_json_is_answered_but_not_cached() -> None:
    calls: list[int] = []

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> Any:
        calls.append(1)
        return ToolResult(content=(TextContent(text="ok"),), details={"tags": {"a"}})

    tool = CustomTool(name="tags", execute=execute, annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(), context=as_caller("alice"))
    first = await adapter.execute("1", {})
    second = await adapter.execute("2", {})
    assert (first.text, second.text) == ("ok", "ok")
    assert second.details == {"tags": {"a"}}
    assert len(calls) == 2  # a set could change under every hit
    record = {"cache": "not-stored", "cacheRefused": "not-json"}
    assert first.meta["customtools/policy"] == second.meta["customtools/policy"] == record


async def test_a_result_too_large_for_the_cache_says_it_was_not_stored() -> None:
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(cache_max_bytes=40), context=as_caller("al"))
    first = await adapter.execute("1", {"q": "x"})  # about 30 bytes: over a quarter
    again = await adapter.execute("2", {"q": "x"})
    assert len(calls) == 2
    record = {"cache": "not-stored", "cacheRefused": "too-large"}
    assert first.meta["customtools/policy"] == again.meta["customtools/policy"] == record


async def test_the_arguments_count_against_the_cache_size_with_orjson() -> None:
    """A small result of huge arguments: the key holds the arguments' bytes, so they count,
    and a call whose arguments alone would take over a quarter of the cache is not kept."""
    pytest.importorskip("orjson")
    tool, calls = counting_tool(annotations=READ_ONLY)
    policy = Policy(cache_max_bytes=4096)
    adapter = CustomToolAdapter(tool, policy=policy, context=as_caller("al"))
    for _ in range(2):
        small = await adapter.execute("1", {"q": "x" * 100})
        huge = await adapter.execute("2", {"q": "x" * 2000})
    assert small.meta["customtools/policy"] == {"cache": "hit"}
    assert huge.meta["customtools/policy"] == {"cache": "not-stored", "cacheRefused": "too-large"}
    assert len(calls) == 3


async def test_arguments_nested_past_the_stack_get_a_result_not_an_exception(
    key_form: str,
) -> None:
    """Keying 3,000 nested arrays overflowed the Python form's recursion (orjson stops at 254
    levels and hands over to it): the call raised RecursionError instead of returning."""
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(), context=as_caller("alice"))
    nested: list[Any] = []
    inner = nested
    for _ in range(3000):
        inner.append([])
        inner = inner[0]
    result = await adapter.execute("1", {"a": nested})
    assert result.is_error  # validation's own depth limit answers, as without a policy
    assert "invalid arguments for tool 'lookup'" in result.text
    assert calls == []


async def test_an_alias_answers_only_for_its_caller_digest_and_bytes_while_its_entry_lives() -> (
    None
):
    """The aliases an adapter keeps (MemoryCache.index): one dict per digest of a tool, which
    holds an entry only while it lives in the cache."""
    cache = MemoryCache(max_bytes=400)
    aliases = cache.index("tool", "digest")
    assert cache.index("tool", "digest") is aliases  # the same dict: an adapter keeps it
    result = ToolResult.from_text("x")
    for n in range(4):
        await cache.put("tool", "digest", ("al", n), result, 100, 60, ("al", b"%d" % n))
    assert set(aliases) == {"al"}
    assert set(aliases["al"]) == {b"0", b"1", b"2", b"3"}
    assert aliases["al"][b"0"] is cache._tables["tool"][1][("al", 0)]
    await cache.put("tool", "digest", ("al", 4), result, 100, 60, ("al", b"4"))
    assert set(aliases["al"]) == {b"1", b"2", b"3", b"4"}  # the oldest went, alias and all
    other = cache.index("tool", "the next digest")
    await cache.put("tool", "the next digest", ("bo", 0), result, 100, 60, ("bo", b"0"))
    assert aliases == {}
    assert set(other) == {"bo"}
    # An adapter of the old digest storing again: its own dict refills, the other empties,
    # and neither dict is replaced (its adapter would never find an entry again).
    await cache.put("tool", "digest", ("al", 0), result, 100, 60, ("al", b"0"))
    assert cache.index("tool", "digest") is aliases
    assert set(aliases["al"]) == {b"0"}
    assert other == {}
    assert cache.index("tool", "the next digest") is other
    await cache.put("tool", "digest", ("al", 0), result, 100, 60)  # stored again, no alias
    assert aliases == {}
    assert len(cache) == 1


async def test_two_versions_of_a_tool_never_share_a_hit_and_the_newer_keeps_its_fast_path() -> None:
    """Two adapters of one tool, one per version (a reload while a call of the old one is in
    flight): each hit is its own version's result, and after the old version stored a
    result the new one's aliases answer again as soon as it stores its own."""
    calls: list[str] = []

    def version(label: str) -> CustomTool:
        async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
            calls.append(label)
            return label

        return CustomTool(
            name="lookup",
            description=label,
            execute=execute,
            parameters={"type": "object"},
            annotations=READ_ONLY,
        )

    policy = Policy()
    old, new = (
        CustomToolAdapter(version(label), policy=policy, context=as_caller("al"))
        for label in ("v1", "v2")
    )
    args = {"q": "x", "n": 1}
    assert [(await new.execute("1", args)).text for _ in range(2)] == ["v2", "v2"]
    assert [(await old.execute("2", args)).text for _ in range(2)] == ["v1", "v1"]
    assert [(await new.execute("3", args)).text for _ in range(3)] == ["v2", "v2", "v2"]
    assert calls == ["v2", "v1", "v2"]
    # the last two were answered by the aliases the new adapter kept, not a new dict
    aliases = new._hits[0]  # type: ignore[attr-defined,index]
    assert set(aliases) == {"al"}
    assert len(aliases["al"]) == 1
    assert policy.backend.cache.index(new._plan.scope, new._plan.digest) is aliases  # type: ignore[attr-defined,union-attr]


async def test_a_repeat_in_another_key_order_is_a_hit_through_the_canonical_key() -> None:
    pytest.importorskip("orjson")
    tool, calls = counting_tool(annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(), context=as_caller("al"))
    orders = ({"a": 1, "b": [1, {"y": 2, "x": 1}]}, {"b": [1, {"x": 1, "y": 2}], "a": 1})
    results = [await adapter.execute("1", args) for args in (*orders, *orders)]
    assert len(calls) == 1
    assert [r.meta["customtools/policy"] for r in results[1:]] == [{"cache": "hit"}] * 3  # type: ignore[index]


async def test_the_aliases_of_a_digest_long_gone_are_emptied_not_left_to_an_old_adapter() -> None:
    cache = MemoryCache()
    result = ToolResult.from_text("x")
    first = cache.index("tool", "d0")
    await cache.put("tool", "d0", ("al", 0), result, 10, 60, ("al", b"0"))
    later = [cache.index("tool", f"d{n}") for n in range(1, 8)]
    assert set(first) == {"al"}  # eight digests kept: still there
    cache.index("tool", "d8")
    assert first == {}  # the ninth pushed the first out, emptied: its adapter misses
    assert cache.index("tool", "d0") is not first
    assert all(aliases == {} for aliases in later)
    assert await cache.get("tool", "d8", ("al", 0)) is None  # and its entry goes with d0
    assert len(cache) == 0


def test_the_alias_options_are_orjsons_flags_by_value() -> None:
    """The adapter knows orjson's option flags by value (it need not import orjson)."""
    orjson = pytest.importorskip("orjson")
    from customtools._policy._apply import _SORT_KEYS, AS_GIVEN, _json_key

    assert _SORT_KEYS == orjson.OPT_SORT_KEYS
    passthrough = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
    assert passthrough | orjson.OPT_PASSTHROUGH_DATETIME == AS_GIVEN
    assert _json_key() == (orjson.dumps, orjson.OPT_SORT_KEYS | AS_GIVEN)


async def test_a_tool_changing_its_arguments_does_not_change_what_its_result_is_kept_under() -> (
    None
):
    """The alias (the arguments' bytes as given) is taken before the call: a tool that
    changed the dict it was given made its result the answer to the changed arguments."""
    calls: list[Any] = []

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        calls.append(dict(params))
        answer = f"square of {params['n']} is {params['n'] ** 2}"
        params["n"] += 1  # a careless tool: the caller's dict itself
        return answer

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tool = CustomTool(name="sq", execute=execute, parameters=schema, annotations=READ_ONLY)
    adapter = CustomToolAdapter(tool, policy=Policy(), context=as_caller("al"))
    first = await adapter.execute("1", {"n": 2})
    second = await adapter.execute("2", {"n": 3})
    again = await adapter.execute("3", {"n": 2})
    assert (first.text, second.text, again.text) == (
        "square of 2 is 4",
        "square of 3 is 9",
        "square of 2 is 4",
    )
    assert calls == [{"n": 2}, {"n": 3}]
