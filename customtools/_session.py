"""Session events and their fan-out to tools: :class:`SessionEvent`, :func:`dispatch_session_event`.

A host tells its tools about the session's life (start, switch, branch, compaction, retries,
shutdown, ...) by building one :class:`SessionEvent` and handing it to
:func:`dispatch_session_event`, which calls every tool's ``on_session(event, ctx)`` in order.

Design: one class for every reason. A :class:`SessionEvent` is a ``reason`` string plus flat,
typed, optional fields; each standard reason uses the few fields listed in :data:`REASON_FIELDS`
and leaves the others ``None``. We chose this over one class per reason because:

* tool authors match on one thing, ``event.reason`` (a plain ``str``, compared with the
  :class:`SessionReason` constants or used in ``match event: case SessionEvent(reason=...)``),
  and read ``event.attempt`` directly, just as the wire form reads;
* reasons a host invents travel in the same class (their payload in ``extra``), so tools never
  meet an unknown type;
* it is cheap: one slotted object, no registry of subclasses, no ``isinstance`` ladders.

Construction checks the reason's required fields and their types, so a host that builds a
malformed event learns it at once, not inside some tool's hook.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

import anyio
import anyio.to_thread

from customtools._containment import ThreadBaseException, belongs_to_caller, contained_in_thread
from customtools._context import DEFAULT_CONTEXT, ToolContext
from customtools._error_results import failure_code
from customtools._errors import ContentError
from customtools._format import describe_exception
from customtools._tool import CustomTool, is_async_callable

__all__ = [
    "REASON_FIELDS",
    "HookFailure",
    "SessionEvent",
    "SessionReason",
    "dispatch_session_event",
]

_log = logging.getLogger("customtools.session")

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class SessionReason:
    """The standard values of :attr:`SessionEvent.reason`, as plain strings.

    A namespace of ``str`` constants rather than an ``Enum``: reasons are an open set (hosts
    add their own), ``event.reason`` stays a plain ``str`` that compares, prints and serialises
    as itself, and the constants work as value patterns in ``match`` statements.
    """

    START: Final = "start"
    """A session started (a new one or a resumed one)."""
    SWITCH: Final = "switch"
    """The host switched to another session file; ``previous_session_file`` names the old one."""
    BRANCH: Final = "branch"
    """The session branched from an earlier message; rebuild state from the new branch."""
    TREE: Final = "tree"
    """The user moved to another point of the session tree; rebuild state."""
    SHUTDOWN: Final = "shutdown"
    """The host is shutting down: release resources."""
    AUTO_COMPACTION_START: Final = "auto_compaction_start"
    """Automatic context compaction is starting (``trigger``, ``action``)."""
    AUTO_COMPACTION_END: Final = "auto_compaction_end"
    """Automatic compaction ended (``action``, ``result``, ``aborted``, ``will_retry``, ...)."""
    AUTO_RETRY_START: Final = "auto_retry_start"
    """A failed model request will be retried (``attempt``, ``max_attempts``, ``delay_ms``, ...)."""
    AUTO_RETRY_END: Final = "auto_retry_end"
    """Automatic retrying ended (``success``, ``attempt``, ``final_error``)."""
    TTSR_TRIGGERED: Final = "ttsr_triggered"
    """Time-traveling stream rules fired (``rules``)."""
    TODO_REMINDER: Final = "todo_reminder"
    """The host reminded the model of open todos (``todos``, ``attempt``, ``max_attempts``)."""

    ALL: Final[tuple[str, ...]] = (
        START,
        SWITCH,
        BRANCH,
        TREE,
        SHUTDOWN,
        AUTO_COMPACTION_START,
        AUTO_COMPACTION_END,
        AUTO_RETRY_START,
        AUTO_RETRY_END,
        TTSR_TRIGGERED,
        TODO_REMINDER,
    )
    """Every standard reason, in the order of the table in ``docs/session-and-rendering.md``."""


REASON_FIELDS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = MappingProxyType(
    {
        SessionReason.START: ((), ()),
        SessionReason.SWITCH: ((), ("previous_session_file",)),
        SessionReason.BRANCH: ((), ("previous_session_file",)),
        SessionReason.TREE: ((), ()),
        SessionReason.SHUTDOWN: ((), ()),
        SessionReason.AUTO_COMPACTION_START: (("trigger", "action"), ()),
        SessionReason.AUTO_COMPACTION_END: (
            ("action", "aborted", "will_retry"),
            ("result", "error_message"),
        ),
        SessionReason.AUTO_RETRY_START: (
            ("attempt", "max_attempts", "delay_ms", "error_message"),
            (),
        ),
        SessionReason.AUTO_RETRY_END: (("success", "attempt"), ("final_error",)),
        SessionReason.TTSR_TRIGGERED: (("rules",), ()),
        SessionReason.TODO_REMINDER: (("todos", "attempt", "max_attempts"), ()),
    }
)
"""For each standard reason, ``(required fields, optional fields)`` by Python name."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_Check = tuple[Callable[[Any], bool], str]
_STRING: Final[_Check] = (lambda value: isinstance(value, str), "a string")
_BOOL: Final[_Check] = (lambda value: isinstance(value, bool), "true or false")
_LIST: Final[_Check] = (
    lambda value: isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)),
    "a list",
)

# Every typed field, in order: how its value is checked (``None``: any JSON value).
_CHECKS: Final[Mapping[str, _Check | None]] = MappingProxyType(
    {
        "previous_session_file": _STRING,
        "trigger": _STRING,
        "action": _STRING,
        "result": None,
        "aborted": _BOOL,
        "will_retry": _BOOL,
        "error_message": _STRING,
        "attempt": (_is_int, "an integer"),
        "max_attempts": (lambda v: _is_int(v) or v == "unlimited", "an integer or 'unlimited'"),
        "delay_ms": (lambda v: _is_int(v) or isinstance(v, float), "a number"),
        "success": _BOOL,
        "final_error": _STRING,
        "rules": _LIST,
        "todos": _LIST,
    }
)
# Python field name -> camelCase wire key.
_WIRE: Final[Mapping[str, str]] = MappingProxyType(
    {name: re.sub("_([a-z])", lambda m: m.group(1).upper(), name) for name in _CHECKS}
)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class SessionEvent:
    """One session lifecycle event, as tools receive it in ``on_session(event, ctx)``.

    Every standard reason (see :class:`SessionReason`) uses only its own fields (listed in
    :data:`REASON_FIELDS`); the rest stay ``None``. A reason the host invents may set no typed
    field and carries its payload in ``extra`` instead. Match on ``reason``::

        def on_session(event, ctx):
            if event.reason == SessionReason.AUTO_RETRY_START:
                print(f"retry {event.attempt}/{event.max_attempts} in {event.delay_ms} ms")

    Args:
        reason: what happened; one of :class:`SessionReason` or a host's own non-empty string.
        previous_session_file: ``switch``/``branch``: the session file left behind, if any.
        trigger: ``auto_compaction_start``: ``"threshold"``, ``"overflow"``, ``"idle"``, ...
        action: compaction: ``"context-full"``, ``"handoff"``, ...
        result: ``auto_compaction_end``: the host's compaction result (JSON-shaped), if any.
        aborted: ``auto_compaction_end``: compaction was aborted.
        will_retry: ``auto_compaction_end``: the host will try again.
        error_message: ``auto_compaction_end`` (optional) / ``auto_retry_start``: the error.
        attempt: retries and todo reminders: the attempt number.
        max_attempts: the attempt limit, or ``"unlimited"``.
        delay_ms: ``auto_retry_start``: milliseconds until the retry.
        success: ``auto_retry_end``: the last attempt succeeded.
        final_error: ``auto_retry_end``: the error that ended retrying, if any.
        rules: ``ttsr_triggered``: the rules that fired (a list is stored as a tuple).
        todos: ``todo_reminder``: the open todos (a list is stored as a tuple).
        extra: other wire keys (camelCase, as received), read-only; the payload of a host's
            own reasons and any key a standard reason does not define.
        meta: ``_meta`` on the wire.

    Raises:
        ContentError: the reason is empty, a required field is missing, a field has the wrong
            type or belongs to another reason, or an ``extra`` key shadows a field.
    """

    reason: str
    previous_session_file: str | None = None
    trigger: str | None = None
    action: str | None = None
    result: Any = None
    aborted: bool | None = None
    will_retry: bool | None = None
    error_message: str | None = None
    attempt: int | None = None
    max_attempts: int | Literal["unlimited"] | None = None
    delay_ms: float | None = None
    success: bool | None = None
    final_error: str | None = None
    rules: tuple[Any, ...] | None = None
    todos: tuple[Any, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        reason = self.reason
        if not isinstance(reason, str) or not reason:
            raise ContentError(
                f"session event: 'reason' must be a non-empty string, got {reason!r}"
            )
        spec = REASON_FIELDS.get(reason)
        required, optional = spec if spec is not None else ((), ())
        for name in _WIRE:
            value = getattr(self, name)
            if value is None:
                if name in required:
                    raise ContentError(
                        f"session event {reason!r}: field {name!r} is required"
                        f" (fields of {reason!r}: {', '.join(required + optional)})"
                    )
                continue
            if name not in required and name not in optional:
                where = (
                    f"fields of {reason!r}: {', '.join(required + optional) or 'none'}"
                    if spec is not None
                    else "a host's own reason carries its payload in 'extra'"
                )
                raise ContentError(
                    f"session event {reason!r}: field {name!r} does not belong to this reason"
                    f" ({where})"
                )
            check = _CHECKS.get(name)
            if check is not None and not check[0](value):
                raise ContentError(
                    f"session event {reason!r}: field {name!r} must be {check[1]},"
                    f" got {type(value).__name__}"
                )
            if name in ("rules", "todos") and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if not isinstance(self.extra, Mapping):
            raise ContentError(f"session event {reason!r}: 'extra' must be a mapping")
        own = {"reason", "_meta", *(_WIRE[n] for n in required + optional), *required, *optional}
        for key in self.extra:
            if not isinstance(key, str):
                raise ContentError(f"session event {reason!r}: extra key {key!r} is not a string")
            if key in own:
                raise ContentError(
                    f"session event {reason!r}: extra key {key!r} clashes with a field;"
                    " set the field instead"
                )
        if not isinstance(self.extra, MappingProxyType):
            object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))
        if self.meta is not None and not isinstance(self.meta, Mapping):
            raise ContentError(f"session event {reason!r}: 'meta' must be a mapping")

    def __repr__(self) -> str:
        parts = [f"reason={self.reason!r}"]
        parts += [f"{n}={getattr(self, n)!r}" for n in _WIRE if getattr(self, n) is not None]
        if self.extra:
            parts.append(f"extra={dict(self.extra)!r}")
        if self.meta is not None:
            parts.append(f"meta={self.meta!r}")
        return f"SessionEvent({', '.join(parts)})"

    @property
    def is_standard(self) -> bool:
        """Whether :attr:`reason` is one of :attr:`SessionReason.ALL`."""
        return self.reason in REASON_FIELDS

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form: ``reason``, the set fields under camelCase keys, ``extra``'s
        keys as they are, and ``_meta`` when set."""
        out: dict[str, Any] = {"reason": self.reason}
        for name, key in _WIRE.items():
            value = getattr(self, name)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        out.update(self.extra)
        if self.meta is not None:
            out["_meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "session event") -> SessionEvent:
        """Build an event from its wire form (see :meth:`to_dict`).

        The reason's own fields are read from their camelCase keys (snake_case is accepted
        too); every other key except ``_meta`` lands in :attr:`extra`, so unknown reasons and
        keys a newer host adds survive a round trip. A ``null`` value counts as absent.

        Raises:
            ContentError: ``data`` is not an object or breaks a rule of the constructor.
        """
        if not isinstance(data, Mapping):
            raise ContentError(f"{where}: expected an object, got {type(data).__name__}")
        reason = data.get("reason")
        if not isinstance(reason, str) or not reason:
            raise ContentError(f"{where}: 'reason' must be a non-empty string, got {reason!r}")
        spec = REASON_FIELDS.get(reason, ((), ()))
        kwargs: dict[str, Any] = {}
        taken = {"reason", "_meta"}
        for name in spec[0] + spec[1]:
            key = _WIRE[name]
            for candidate in (key, name):
                if candidate in data:
                    taken.add(candidate)
                    if data[candidate] is not None and name not in kwargs:
                        kwargs[name] = data[candidate]
        extra = {k: v for k, v in data.items() if k not in taken}
        meta = data.get("_meta")
        if meta is not None and not isinstance(meta, Mapping):
            raise ContentError(f"{where}: '_meta' must be an object, got {type(meta).__name__}")
        return cls(
            reason=reason,
            extra=extra,
            meta=dict(meta) if meta is not None else None,
            **kwargs,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class HookFailure:
    """One ``on_session`` hook that raised (or timed out) during a dispatch.

    Args:
        tool_name: the tool whose hook failed.
        reason: the event's reason.
        error: the exception; a :class:`TimeoutError` when the dispatch's ``hook_timeout`` ran
            out. It may be a ``BaseException`` the hook raised (``SystemExit``, ...).
        code: ``None`` for an ``Exception``; ``"tool-exit"`` for ``SystemExit`` and
            ``"tool-base-exception"`` for any other ``BaseException`` (see docs/errors.md).
    """

    tool_name: str
    reason: str
    error: BaseException
    code: str | None = None


async def _call(
    hook: Callable[..., Any], event: SessionEvent, ctx: ToolContext, in_thread: bool
) -> None:
    if in_thread and not is_async_callable(hook):
        outcome = await anyio.to_thread.run_sync(contained_in_thread, hook, event, ctx)
    else:
        outcome = hook(event, ctx)
    if inspect.isawaitable(outcome):
        await outcome


async def dispatch_session_event(
    tools: Iterable[CustomTool],
    event: SessionEvent,
    ctx: ToolContext | None = None,
    *,
    logger: logging.Logger | None = None,
    hook_timeout: float | None = None,
    sync_hooks_in_thread: bool = False,
) -> list[HookFailure]:
    """Call every tool's ``on_session(event, ctx)``, one after another, in the given order.

    Tools without a hook are skipped. A hook may be sync or async (anything returning an
    awaitable is awaited). A hook that raises is logged as a WARNING naming the tool and the
    reason, and the remaining hooks still run; the failures are returned so a host can show
    them. A hook's ``SystemExit`` or other ``BaseException`` is a failure like any other
    (``HookFailure.code`` tells them apart); only the caller's own cancellation and a
    ``KeyboardInterrupt`` on the event loop thread stop the dispatch and propagate.

    A function shared by several tools (one factory returning several tools with the same
    hook) is called once per tool, with the same event; tell the calls apart by closing over
    the tool, not by counting.

    Args:
        tools: the tools, usually in load order.
        event: the event to deliver.
        ctx: the context hooks receive; :data:`~customtools.DEFAULT_CONTEXT` when ``None``.
        logger: where failures are logged; ``customtools.session`` by default.
        hook_timeout: seconds each *async* hook may take before it is cancelled and recorded as a
            :class:`TimeoutError` failure; ``None`` for no limit. A sync hook cannot be
            interrupted, so it is not bounded unless it runs in a thread (see below) and even
            then the dispatch waits for it.
        sync_hooks_in_thread: run sync hooks in a worker thread instead of on the event loop
            thread. The default calls them directly, because hooks are meant to be quick
            bookkeeping; turn this on when a tool pack's hooks block (file or network I/O).

    Returns:
        One :class:`HookFailure` per hook that raised, in call order; empty when all succeeded.
    """
    context = DEFAULT_CONTEXT if ctx is None else ctx
    log = _log if logger is None else logger
    failures: list[HookFailure] = []
    for tool in tools:
        hook = tool.on_session
        if hook is None:
            continue
        try:
            if hook_timeout is None:
                await _call(hook, event, context, sync_hooks_in_thread)
            else:
                with anyio.CancelScope(deadline=anyio.current_time() + hook_timeout) as scope:
                    await _call(hook, event, context, sync_hooks_in_thread)
                if scope.cancelled_caught:
                    raise TimeoutError(
                        f"on_session of tool {tool.name!r} did not finish within {hook_timeout} s"
                    )
        except BaseException as exc:
            if belongs_to_caller(exc):
                raise
            if isinstance(exc, ThreadBaseException):
                exc = exc.exc
            log.warning(
                "custom tool %r: on_session raised on %r: %s; the other tools' hooks still run",
                tool.name,
                event.reason,
                describe_exception(exc),
                exc_info=exc,
            )
            failures.append(
                HookFailure(
                    tool_name=tool.name, reason=event.reason, error=exc, code=failure_code(exc)
                )
            )
    return failures
