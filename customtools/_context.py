"""The per-call context a host hands to tools: :class:`ToolContext`.

A tool receives it as the fourth argument of ``execute(tool_call_id, params, on_update, ctx,
signal)`` and as the second of ``on_session(event, ctx)``. It is a read-only view: tools read the
session and model, and may *ask* the host to abort through :meth:`ToolContext.abort`.

When a host passes no context, tools get :data:`DEFAULT_CONTEXT`: empty session, no model, the
no-op UI, and an ``abort()`` that only logs, because there is no host operation to stop.

Tools talk back through it (:mod:`customtools._talkback`): :meth:`ToolContext.ask` (a form),
:meth:`ToolContext.sample` (the host's model), :meth:`ToolContext.log` (levelled messages) and
``ctx.ui``. The host provides the answers with ``input_handler``, ``sampler`` and
``log_sink``; without them a question raises a typed :class:`~customtools.talkback.TalkBackError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from customtools._error_results import Code
from customtools._format import logger
from customtools._talkback import (
    DEFAULT_ASK_TIMEOUT,
    DEFAULT_SAMPLE_TIMEOUT,
    LOG_LEVELS,
    NO_OP_UI,
    InputAnswer,
    InputHandler,
    InputRequest,
    LogLevel,
    LogSink,
    Sampler,
    SampleRequest,
    SampleResult,
    TalkBackError,
    Unanswerable,
    answer_from,
    bounded,
    check_form_schema,
    default_log,
    on_event_loop,
    run_on_loop,
    sample_messages,
    ui_input_handler,
)

if TYPE_CHECKING:
    from customtools._abort import AbortSignal

__all__ = ["DEFAULT_CONTEXT", "ToolContext"]

_log = logger("customtools.context")

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _no_host_abort(reason: Any) -> None:
    _log.debug("ctx.abort(%r) ignored: no host is attached to this tool context", reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """What a tool may know about the host while it runs.

    Args:
        session: a read-only view of the session (messages, metadata, ...). Any mapping given
            is wrapped in a read-only proxy.
        session_manager: the host's session object, for tools that rebuild state from history
            (for example on ``branch``); ``None`` when the host has none.
        model: the model currently answering (a name or the host's model object).
        cwd: the host's working directory.
        ui: the host's UI (a :class:`~customtools.loading.UIContext`); the no-op UI headless.
        has_ui: whether ``ui`` is a real interactive UI.
        is_idle: whether the host's agent is idle (no turn running).
        has_queued_messages: whether the user queued messages while tools run.
        on_abort: the host's callback behind :meth:`abort`.
        extra: anything else a host wants to pass, read-only.
        meta: ``_meta`` for protocol bridges.
        input_handler: shows :meth:`ask`'s forms (:class:`~customtools.talkback.InputHandler`);
            ``None`` when nobody can answer.
        sampler: runs :meth:`sample` on the host's model (:class:`~customtools.talkback.Sampler`).
        log_sink: receives :meth:`log` messages (:class:`~customtools.talkback.LogSink`); the
            ``customtools.tools`` Python logger when ``None``.
        tool_name: the tool being called, named in messages (bridges set it).
        caller: who is calling: the host's name for the client, user or session the call
            is made for. The execution policy caches results and keeps trimmed results
            per caller, and caches nothing for a call without one (docs/policy.md says
            what each entry point sets).
    """

    session: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    session_manager: Any = None
    model: Any = None
    cwd: str | None = None
    ui: Any = NO_OP_UI
    has_ui: bool = False
    is_idle: bool = True
    has_queued_messages: bool = False
    on_abort: Callable[[Any], None] = field(default=_no_host_abort, repr=False)
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    meta: Mapping[str, Any] | None = None
    input_handler: InputHandler | None = field(default=None, repr=False)
    sampler: Sampler | None = field(default=None, repr=False)
    log_sink: LogSink | None = field(default=None, repr=False)
    tool_name: str | None = None
    caller: str | None = None

    def __post_init__(self) -> None:
        if self.caller is not None and not isinstance(self.caller, str):
            raise TypeError(
                f"ToolContext(caller=...) must be a str or None, not {type(self.caller).__name__}:"
                " pass the host's name for the client, user or session the call is made for"
            )
        if not isinstance(self.session, MappingProxyType):
            object.__setattr__(self, "session", MappingProxyType(dict(self.session)))
        if not isinstance(self.extra, MappingProxyType):
            object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def abort(self, reason: Any = None) -> None:
        """Ask the host to abort its current operation (the whole agent turn, not just this call).

        The request is fire-and-forget: the host decides what to stop. Errors raised by the
        host's callback are logged, never raised into the tool.
        """
        try:
            self.on_abort(reason)
        except Exception:
            _log.exception("the host's on_abort callback raised")

    @property
    def can_ask(self) -> bool:
        """Whether :meth:`ask` has someone to ask (an input handler, or a real UI). Over MCP,
        whether the client declared elicitation: check it before asking, as a question a
        2026-07-28 client cannot answer fails the whole call."""
        handler = self.input_handler
        if handler is not None:
            return not isinstance(handler, Unanswerable)
        return self.has_ui and self.ui is not NO_OP_UI

    @property
    def can_sample(self) -> bool:
        """Whether :meth:`sample` has a model to ask (a sampler is attached). Over MCP,
        whether the client declared sampling."""
        return self.sampler is not None and not isinstance(self.sampler, Unanswerable)

    async def ask(
        self,
        message: str,
        schema: Mapping[str, Any],
        *,
        key: str | None = None,
        timeout: float | None = DEFAULT_ASK_TIMEOUT,
        signal: AbortSignal | None = None,
    ) -> InputAnswer:
        """Ask the person for a small form's values.

        Args:
            message: what is asked.
            schema: an object schema of primitives and enums (``Type.Object(...)``; see
                :func:`~customtools.talkback.check_form_schema`).
            key: the question's name, where the protocol names questions (over MCP
                2026-07-28, its key in ``inputRequests``; elsewhere it is not sent). By
                default the host chooses one.
            timeout: seconds to wait for the answer (``None``: only cancellation stops it).
            signal: the call's signal; the wait stops as soon as it aborts.

        Returns:
            ``accept`` with the values (validated, defaults filled in), ``decline`` or
            ``cancel``.

        Raises:
            ValueError: ``schema`` is not a form, or ``key`` is not a non-empty string.
            TalkBackError: nobody can answer (``no-input-handler``), no answer in time
                (``input-timeout``), or the answer breaks the schema (``invalid-answer``).
            ToolAbortedError: ``signal`` aborted while waiting.
        """
        form = check_form_schema(schema)
        if key is not None and (not isinstance(key, str) or not key or len(key) > 128):
            raise ValueError(f"ask: key must be a string of 1 to 128 characters, not {key!r}")
        handler = self.input_handler
        if handler is None and self.has_ui and self.ui is not NO_OP_UI:
            handler = ui_input_handler(self.ui)  # an in-process host's UI asks field by field
        if handler is None:
            raise TalkBackError(
                f"tool {self.tool_name or '?'!r} asked the user ({message!r}) but the host"
                " cannot ask: it has no input handler (over MCP: the client does not support"
                " elicitation); handle TalkBackError or give the host an input handler",
                code=Code.NO_INPUT_HANDLER,
            )
        request = InputRequest(message=message, schema=form, key=key)
        raw = await bounded(
            handler,
            request,
            timeout=timeout,
            signal=signal,
            what="the form",
            code=Code.INPUT_TIMEOUT,
        )
        if not isinstance(raw, InputAnswer):
            raise TalkBackError(
                f"the host's input handler returned {type(raw).__name__}, not an InputAnswer",
                code=Code.TALKBACK_FAILED,
            )
        return answer_from(raw.action, raw.values, form, tool=self.tool_name)

    async def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] = (),
        timeout: float | None = DEFAULT_SAMPLE_TIMEOUT,
        signal: AbortSignal | None = None,
    ) -> SampleResult:
        """Ask the host's model for a completion.

        Args:
            messages: a prompt (one user message) or ``{"role", "content"}`` messages.
            max_tokens: the most tokens the model may produce (required: the host pays).
            system_prompt: an optional system prompt.
            temperature: an optional temperature.
            stop_sequences: optional stop sequences.
            timeout: seconds to wait (``None``: only cancellation stops it).
            signal: the call's signal; the wait stops as soon as it aborts.

        Raises:
            ValueError: a malformed message or a ``max_tokens`` below 1.
            TalkBackError: no model to ask (``no-sampler``), no answer in time
                (``sampling-timeout``), or the host refused (``talkback-failed``).
            ToolAbortedError: ``signal`` aborted while waiting.
        """
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"sample: max_tokens must be a positive integer, not {max_tokens!r}")
        request = SampleRequest(
            messages=sample_messages(messages),
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=tuple(stop_sequences),
        )
        sampler = self.sampler
        if sampler is None:
            raise TalkBackError(
                f"tool {self.tool_name or '?'!r} asked the host's model but the host has no"
                " sampler (over MCP: the client does not support sampling); handle"
                " TalkBackError or give the host a sampler",
                code=Code.NO_SAMPLER,
            )
        result = await bounded(
            sampler,
            request,
            timeout=timeout,
            signal=signal,
            what="the sampling request",
            code=Code.SAMPLING_TIMEOUT,
        )
        if not isinstance(result, SampleResult):
            raise TalkBackError(
                f"the host's sampler returned {type(result).__name__}, not a SampleResult",
                code=Code.TALKBACK_FAILED,
            )
        return result

    def log(self, level: LogLevel, message: str, **data: Any) -> None:
        """Send a log message to the host (its log sink, else the ``customtools.tools`` logger).

        Callable from async tools and from sync tools' worker threads: the sink is always
        called on the event loop thread (from a thread that is not anyio's, it is called
        there and then). Never raises for the sink's faults (they are logged); an unknown level is a
        ``ValueError``, as it is a bug in the tool.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"log: level {level!r} is not one of {', '.join(LOG_LEVELS)}")
        sink = self.log_sink
        if sink is None:
            default_log(level, str(message), data)  # Python logging: any thread will do
            return
        try:
            if on_event_loop():
                sink(level, str(message), data)
            else:  # a sync tool's worker thread: the sink runs on the event loop thread
                run_on_loop(sink, level, str(message), data)
        except Exception:
            _log.exception("the host's log sink raised")

    def ask_sync(self, message: str, schema: Mapping[str, Any], **options: Any) -> InputAnswer:
        """:meth:`ask` from a sync tool (its worker thread); same arguments and outcomes."""
        import anyio.from_thread

        return anyio.from_thread.run(partial(self.ask, message, schema, **options))

    def sample_sync(
        self, messages: str | Sequence[Mapping[str, Any]], **options: Any
    ) -> SampleResult:
        """:meth:`sample` from a sync tool (its worker thread); same arguments and outcomes."""
        import anyio.from_thread

        return anyio.from_thread.run(partial(self.sample, messages, **options))


DEFAULT_CONTEXT = ToolContext()
"""The context tools see when the host passes none."""
