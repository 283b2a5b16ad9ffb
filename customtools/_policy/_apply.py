"""The execution policy applied to one tool: :class:`ToolPlan`, built once per adapter.

Every call of a governed tool meets, in this order: the cache (asked by the adapter first: a
hit returns at once), the rate, the concurrency caps (tool, pack, host: first in, first out,
one bounded wait for all), the call itself with its retries, the result budget, and the cache
again (a success is stored). The adapter takes uncontended in-process caps inline; everything
else goes through :meth:`ToolPlan.run`. Each decision is written into the result's ``_meta``
under :data:`POLICY_META_KEY` (and into the details of the error results the policy builds).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import operator
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from customtools._content import TextContent, ToolResult
from customtools._error_results import Code, Kind, error_result
from customtools._policy._backends import Entry, Gate, MemoryCache, MemoryGate
from customtools._policy._settings import Policy, effects
from customtools._policy._trim import document, result_size, trim_content

if TYPE_CHECKING:
    from customtools._abort import AbortSignal
    from customtools._permissions import Permissions
    from customtools._tool import CustomTool

__all__ = ["POLICY_META_KEY", "PackFacts", "PackInfo", "ToolPlan", "read_result_tool"]

POLICY_META_KEY: Final = "customtools/policy"
"""``_meta`` key of a result recording what the execution policy did: ``queued`` (seconds
waited for a slot or the rate), ``cache`` (``"hit"``, ``"stored"`` or ``"not-stored"``, then
``cacheRefused`` says why), ``retries``, and
``trimmed`` (``bytes`` cut, the whole ``size``, the ``handle`` to read it, what was ``cut``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PackFacts:
    """What the policy needs to know about a tool's pack.

    Attributes:
        key: the pack's identity (its module's real path): the unit of pack caps.
        digest: its content's digest (the fingerprint a reload compares); cached results
            of an older digest are dropped.
        policy: its declared ``POLICY``, if any.
        permissions: its declared module-level ``PERMISSIONS``, if any.
        tool_permissions: tool name -> that tool's own declared permissions.
    """

    key: str
    digest: str
    policy: Policy | None = None
    permissions: Permissions | None = None
    tool_permissions: Mapping[str, Permissions] = field(default_factory=dict)


class PackInfo(Protocol):
    """What a load record carries about its pack (read on first use)."""

    def facts(self) -> PackFacts:
        """The pack's facts."""
        ...


def tool_facts(tool: CustomTool) -> PackFacts:
    """The facts of a tool that came from no load: a pack of its own, its digest taken
    over its wire form and its code."""
    execute = tool.execute
    code = getattr(getattr(execute, "__code__", None), "co_code", b"")
    wire = json.dumps(tool.to_dict(), sort_keys=True, default=str).encode()
    digest = hashlib.sha256(wire + bytes(code)).hexdigest()
    return PackFacts(key=f"tool:{tool.name}", digest=digest)


# orjson's options for an alias's bytes (MemoryCache.index): subclasses, dataclasses and dates
# go to ``default``, which is none, so they raise; a key sorts the keys too. The flags by
# value, so that a plan without a cache need not import orjson (a test pins them).
AS_GIVEN: Final = 256 | 2048 | 512  # OPT_PASSTHROUGH_SUBCLASS, _DATACLASS, _DATETIME
_SORT_KEYS: Final = 32  # OPT_SORT_KEYS
_PLAIN: Final = frozenset((str, int, type(None)))  # kept as they are: bool, float are tagged
_ORDERS: Final = 256  # key orders remembered per tool (a caller may vary them freely)


def _json_key() -> tuple[Callable[..., bytes], int] | None:
    """orjson's ``dumps`` and its options for a key (:data:`AS_GIVEN`, and sorted keys at
    every depth), when installed."""
    try:
        import orjson
    except ImportError:
        return None
    return orjson.dumps, _SORT_KEYS | AS_GIVEN


def _freeze(value: Any) -> Hashable:
    kind = type(value)
    if kind in _PLAIN:
        plain: Hashable = value
        return plain
    if kind is list or kind is tuple:  # one JSON form: a tuple shares a list's entry
        if _PLAIN.issuperset(map(type, value)):
            return ("[", tuple(value))
        return ("[", tuple(map(_freeze, value)))
    if kind is dict:
        return ("{", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    if kind is bool:
        return ("bool", value)
    if kind is float:
        return ("float", repr(value))  # -0.0 is not 0.0
    raise TypeError(kind.__name__)  # no JSON form of its own: not cached


def _with_record(result: ToolResult, record: Mapping[str, Any]) -> ToolResult:
    meta = dict(result.meta) if result.meta else {}
    meta[POLICY_META_KEY] = {**(meta.get(POLICY_META_KEY) or {}), **record}
    return dataclasses.replace(result, meta=meta)


Call = Callable[[], Awaitable[ToolResult]]

_OPEN: Final = MemoryGate(1 << 62)  # the inline path's gate of a tool without caps
Caps = tuple[MemoryGate, MemoryGate | None, MemoryGate | None]
# The in-memory cache's aliases of one tool's digest (caller -> the arguments' bytes -> entry),
# orjson's dumps and AS_GIVEN: what the adapter needs to answer a repeat by itself
Hits = tuple[dict[Any, dict[bytes, Entry]], Callable[..., bytes], int]


class ToolPlan:
    """The policy of one tool, resolved once: its caps, rate, budget, retries and cache."""

    __slots__ = (
        "_output_validator",
        "backend",
        "budget",
        "cache_ttl",
        "caps",
        "digest",
        "dumps",
        "gates",
        "hits",
        "limits",
        "memory",
        "name",
        "orders",
        "queue_timeout",
        "rate",
        "rate_key",
        "result_ttl",
        "retries",
        "retry_backoff",
        "schema",
        "scope",
        "transient",
    )

    def __init__(
        self,
        policy: Policy,
        tool: CustomTool,
        pack: PackInfo | None,
        *,
        asks: bool,
        variant: str = "",
    ) -> None:
        facts = tool_facts(tool) if pack is None else pack.facts()
        permissions = facts.tool_permissions.get(tool.name) or facts.permissions
        settings = policy.merged(facts.policy)
        allowed = effects(tool, permissions)
        self.name = tool.name
        self.backend = policy.backend
        self.limits: dict[str, int] = {}
        scope = f"{facts.key}\0{tool.name}"
        self.scope = f"{scope}\0{variant}"  # the cache's (``variant``: see the adapter)
        self.digest = facts.digest
        gates = []
        weight = settings["weight"]
        for setting, key, units in (
            ("max_concurrent", f"tool\0{scope}", 1),
            ("max_concurrent_pack", f"pack\0{facts.key}", 1),
            ("max_concurrent_host", "host", weight),
        ):
            limit = settings[setting]
            if limit is not None:
                gates.append((policy.backend.slots.gate(key, limit), min(units, limit)))
                self.limits[setting] = limit
        self.gates: tuple[tuple[Gate, int], ...] = tuple(gates)
        self.queue_timeout: float = settings["queue_timeout"]
        self.rate: tuple[int, float] | None = settings["rate"]
        self.rate_key = f"rate\0{scope}"
        self.budget: int | None = settings["max_result_bytes"]
        self.result_ttl: float = settings["result_ttl"]
        # A call a person approves runs once, and is never answered from a cache.
        self.retries: int = settings["retries"] if allowed.retryable and not asks else 0
        self.retry_backoff: float = settings["retry_backoff"]
        self.transient: tuple[str, ...] = settings["transient"]
        ttl = settings["cache_ttl"] if allowed.cacheable and not asks else None
        self.cache_ttl: float | None = ttl
        cache = policy.backend.cache
        self.memory = cache if ttl is not None and isinstance(cache, MemoryCache) else None
        self.dumps = _json_key() if ttl is not None else None
        # With orjson, the adapter answers a repeat from the aliases of this tool's digest
        # (MemoryCache.index) before anything else.
        self.hits: Hits | None = (
            None
            if self.memory is None or self.dumps is None
            else (self.memory.index(self.scope, self.digest), self.dumps[0], AS_GIVEN)
        )
        self.orders: dict[tuple[Any, ...], tuple[tuple[Any, ...], Callable[..., Any]]] = {}
        self.schema = tool.output_schema
        self._output_validator: Any = None
        # Nothing but caps kept in this process, of one unit each: the adapter takes them
        # inline, as three slots (the gates, then None; a gate that never fills if none).
        simple = self.rate is None and self.budget is None and not self.retries and ttl is None
        slots: Any = (*([gate for gate, _ in gates] or [_OPEN]), None, None)[:3]
        local = all(isinstance(gate, MemoryGate) and units == 1 for gate, units in gates)
        self.caps: Caps | None = slots if simple and local else None

    def key(self, params: Any, caller: str | None) -> Hashable | None:
        """The key a call's result is looked up under: the caller and the arguments' JSON
        form (see docs/policy.md); ``None`` without a caller, or with arguments that have
        none. With orjson installed, the form is its bytes, keys sorted at every depth; a
        key whose bytes hold ``null`` is looked up but never stored under (NaN and the
        infinities write ``null`` too): :meth:`run` looks such a call up again under
        :meth:`exact`, and keeps it there."""
        if caller is None or type(params) is not dict:
            return None
        if self.dumps is not None:
            dumps, options = self.dumps
            try:
                return (caller, dumps(params, None, options))
            except TypeError:  # orjson's error: a big int, a subclass, ...: the exact form
                pass
        return self.exact(params, caller)

    def exact(self, params: Any, caller: str) -> Hashable | None:
        """The key without orjson: the caller, the sorted argument names, their values,
        tagged unless str, int or ``None``; ``None`` for a value with no JSON form."""
        names = tuple(params)
        order = self.orders.get(names)  # the sorted names, once per order of the keys
        if order is None:
            try:
                ordered = tuple(sorted(names))
            except TypeError:  # keys that are not all strings
                return None
            if len(self.orders) >= _ORDERS:
                self.orders.clear()
            if len(ordered) > 1:
                getter: Callable[..., Any] = operator.itemgetter(*ordered)
            else:
                getter = lambda params: tuple(map(params.__getitem__, ordered))  # noqa: E731
            order = self.orders[names] = (ordered, getter)
        values = order[1](params)
        if not _PLAIN.issuperset(map(type, values)):
            try:
                values = tuple([v if type(v) in _PLAIN else _freeze(v) for v in values])
            except (TypeError, RecursionError):  # no JSON form, or nested past the stack
                return None
        return (caller, order[0], values)

    async def run(
        self,
        call: Call,
        signal: AbortSignal | None,
        caller: str | None,
        key: Hashable | None,
        params: Any = None,
    ) -> ToolResult:
        """One call of the tool (``call()``: the adapter's execute of it) under the policy,
        once the cache was asked (``key``: the call's cache key, which missed, or ``None``;
        ``params``: its arguments)."""
        if type(key) is tuple and len(key) == 2 and b"null" in key[1]:
            key = self.exact(params, caller)  # type: ignore[arg-type]
            if key is not None:
                hit = await self.backend.cache.get(self.scope, self.digest, key)
                if hit is not None:
                    return hit
        alias = None
        if self.hits is not None and type(key) is tuple and len(key) == 2:
            # The arguments' bytes as given, taken now: the tool may change its arguments.
            alias = (caller, self.hits[1](params, None, AS_GIVEN))
        record: dict[str, Any] = {}
        held: list[tuple[Gate, int]] = []
        gates = self.gates
        try:
            if self.rate is None:
                for gate, units in gates:  # uncontended: no wait, nothing recorded
                    if not gate.try_acquire(units):
                        break
                    held.append((gate, units))
            if len(held) != len(gates) or self.rate is not None:
                refusal = await self._admit(signal, held, record)
                if refusal is not None:
                    return refusal
            result = await call()
            if self.retries and result.is_error:
                result = await self._retry(call, signal, result, record)
        finally:
            if held:
                import anyio

                with anyio.CancelScope(shield=True):  # given back even when cancelled
                    for gate, units in held:
                        await gate.release(units)
        if self.budget is not None:
            result = await self._budget(result, caller, record)
        if key is not None and not result.is_error:
            # Kept as a hit returns it (a trimmed result keeps its note and handle).
            trimmed = record.get("trimmed")
            as_hit = {"trimmed": trimmed, "cache": "hit"} if trimmed else {"cache": "hit"}
            ttl = self.cache_ttl or 0.0
            if trimmed is not None:
                ttl = min(ttl, self.result_ttl)
            size = result_size(result)
            if type(key) is tuple and len(key) == 2:  # the arguments' bytes are kept too
                size += len(key[1])
            kept = _with_record(result, as_hit)
            if alias is not None:  # the entry is found under its alias too
                size += len(alias[1])
                refused = await self.memory.put(  # type: ignore[union-attr]
                    self.scope, self.digest, key, kept, size, ttl, alias
                )
            else:
                refused = await self.backend.cache.put(
                    self.scope, self.digest, key, kept, size, ttl
                )
            record["cache"] = "stored" if refused is None else "not-stored"
            if refused is not None:
                record["cacheRefused"] = refused
        return _with_record(result, record) if record else result

    async def _retry(
        self, call: Call, signal: AbortSignal | None, result: ToolResult, record: dict[str, Any]
    ) -> ToolResult:
        """Run the call again while it fails transiently, backing off; stop when aborted."""
        attempt = 0
        while attempt < self.retries and result.is_error and self._transient(result):
            if await self._pause(self.retry_backoff * (2**attempt), signal):
                record["retriesStopped"] = "aborted"
                break
            attempt += 1
            result = await call()
        if attempt:
            record["retries"] = attempt
        return result

    # -- admission ----------------------------------------------------------------------------

    async def _admit(
        self, signal: AbortSignal | None, held: list[tuple[Gate, int]], record: dict[str, Any]
    ) -> ToolResult | None:
        """Take the rate and the slots (into ``held``); the error result that says why not."""
        import anyio

        started = time.monotonic()
        waiting = ""
        retry_after = 0.0
        try:
            with anyio.move_on_after(self.queue_timeout) as scope:

                def stop(_reason: Any) -> None:
                    scope.cancel()

                if signal is not None:
                    if signal.aborted:
                        scope.cancel()
                    signal.add_listener(stop)
                try:
                    if self.rate is not None:
                        calls, per = self.rate
                        while (
                            wait := await self.backend.rates.take(self.rate_key, calls, per)
                        ) > 0:
                            if time.monotonic() + wait - started > self.queue_timeout:
                                retry_after = wait
                                break
                            waiting = "rate"
                            await anyio.sleep(wait)
                    if not retry_after:
                        settings = list(self.limits)
                        for index in range(len(held), len(self.gates)):
                            gate, units = self.gates[index]
                            waiting = settings[index]
                            await gate.acquire(units)
                            held.append((gate, units))
                finally:
                    if signal is not None:
                        signal.remove_listener(stop)
        except ConnectionError as exc:  # a shared backend (Redis) that cannot answer
            return error_result(
                Kind.POLICY_REFUSED,
                Code.POLICY_UNAVAILABLE,
                f"tool {self.name!r} was not run: the state its execution policy shares with"
                f" other servers cannot be reached ({exc}); try again later",
                policy=record,
            )
        waited = time.monotonic() - started
        if waiting:
            record["queued"] = round(waited, 6)
        if retry_after:
            calls, per = self.rate  # type: ignore[misc]
            return error_result(
                Kind.POLICY_REFUSED,
                Code.RATE_LIMITED,
                f"tool {self.name!r} was not run: it may start at most {calls} call(s) per"
                f" {per:g} s; try again in {retry_after:.1f} s",
                retry_after=round(retry_after, 3),
                policy=record,
            )
        if not scope.cancelled_caught:
            return None
        if signal is not None and signal.aborted:
            reason = signal.reason
            text = f"tool {self.name!r} was cancelled while it waited to start"
            why = {} if reason is None else {"reason": str(reason)}
            return error_result(
                Kind.ABORTED,
                Code.ABORTED,
                text + (f": {why['reason']}" if why else ""),
                cancelled=True,
                timed_out=False,
                policy=record,
                **why,
            )
        limits = self.limits
        which = {
            "rate": "its rate",
            "max_concurrent": f"at most {limits.get('max_concurrent')} running per tool",
            "max_concurrent_pack": f"at most {limits.get('max_concurrent_pack')} per pack",
            "max_concurrent_host": f"at most {limits.get('max_concurrent_host')} in all",
        }.get(waiting, waiting)
        return error_result(
            Kind.POLICY_REFUSED,
            Code.QUEUE_TIMEOUT,
            f"tool {self.name!r} was not run: it waited {waited:.1f} s to start ({which}) and"
            f" the limit is {self.queue_timeout:g} s; try again later",
            waited=round(waited, 3),
            limit=waiting,
            policy=record,
        )

    # -- retries --------------------------------------------------------------------------------

    def _transient(self, result: ToolResult) -> bool:
        details = result.details
        if not isinstance(details, Mapping):
            return False
        if details.get("transient") is True:
            return True
        return details.get("error") in self.transient or details.get("code") in self.transient

    @staticmethod
    async def _pause(delay: float, signal: AbortSignal | None) -> bool:
        """Sleep ``delay`` seconds; ``True`` (at once) when the call is aborted."""
        import anyio

        if signal is None:
            await anyio.sleep(delay)
            return False
        if signal.aborted:
            return True
        with anyio.move_on_after(delay):
            await signal.wait()
            return True
        return False

    # -- the result budget --------------------------------------------------------------------

    def _valid(self, structured: Any) -> bool:
        if self.schema is None:
            return True
        validator = self._output_validator
        if validator is None:
            from customtools._validation import compile_validator

            validator = self._output_validator = compile_validator(
                self.schema, tool_name=self.name, coerce=False, apply_defaults=False
            )
        try:
            return validator.check(structured)[2] is None
        except Exception:
            return False

    async def _budget(
        self, result: ToolResult, caller: str | None, record: dict[str, Any]
    ) -> ToolResult:
        budget = self.budget
        size = result_size(result)
        if budget is None or size <= budget:
            return result
        handle = await self.backend.results.put(document(result), caller, self.result_ttl)
        # The note below takes about 170 bytes, and 40 more per part it names.
        parts = len(result.content) + (result.structured_content is not None)
        room = max(budget - 170 - 40 * parts, budget // 4)
        trimmed, cut = trim_content(result, room, size, self.schema, self._valid)
        note = TextContent(
            text=f"[Trimmed to the host's budget of {budget} bytes (it was {size}):"
            f" {'; '.join(cut) or 'nothing cut'}. The whole result, for {self.result_ttl:g} s:"
            f" read_result(handle={handle!r}, offset=0), page by page.]"
        )
        trimmed = dataclasses.replace(trimmed, content=(*trimmed.content, note))
        record["trimmed"] = {
            "bytes": max(size - result_size(trimmed), 0),
            "size": size,
            "handle": handle,
            "cut": cut,
        }
        return trimmed


# -- read_result --------------------------------------------------------------------------------

_READ_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "handle": {
            "type": "string",
            "minLength": 1,
            "description": "the handle a trimmed result named",
        },
        "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "first character"},
        "length": {"type": "integer", "minimum": 1, "description": "characters to read"},
    },
    "required": ["handle"],
    "additionalProperties": False,
}


def read_result_tool(policy: Policy, *, name: str = "read_result") -> CustomTool:
    """The tool that reads a trimmed result's whole text, page by page, for the caller it was
    trimmed for (its ``ctx.caller``). Expose it beside the tools the policy governs."""
    from customtools._tool import CustomTool

    budget = policy.max_result_bytes
    page = 16_000 if budget is None else max(min(16_000, budget // 4), 256)
    results = policy.backend.results

    async def execute(
        tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
    ) -> ToolResult | str:
        handle = params["handle"]
        text = await results.get(handle, getattr(ctx, "caller", None))
        if text is None:
            return error_result(
                Kind.ARGUMENTS,
                Code.INVALID_ARGUMENTS,
                f"no stored result {handle!r} for this caller: it expired (results are kept"
                f" {policy.result_ttl:g} s) or was never stored here; call the tool again",
            )
        offset = params.get("offset", 0)
        length = min(params.get("length", page), page)
        chunk = text[offset : offset + length]
        end = offset + len(chunk)
        more = f"; next: offset={end}" if end < len(text) else "; that is the end"
        return f"{chunk}\n[characters {offset}-{end} of {len(text)}{more}]"

    return CustomTool(
        name=name,
        label="Read a trimmed result",
        description="Read the whole text of a tool result that was trimmed to fit, page by"
        " page: pass the handle the trimmed result named, and the offset to start at.",
        parameters=_READ_SCHEMA,
        execute=execute,
        annotations={"readOnlyHint": True, "idempotentHint": True},
    )
