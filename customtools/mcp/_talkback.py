"""Tools that talk back over ``customtools serve``: the talk-back API mapped to MCP per call.

Each call gets a :class:`CallBridge` holding the call's session and what its client declared:

* ``ctx.ask`` and ``ctx.ui.confirm/select/input`` become form-mode elicitation, but only for a
  client that declared ``elicitation``; otherwise ``ctx.can_ask`` is false, ``ctx.ui`` is the
  no-op UI with ``has_ui`` false, and ``ctx.ask`` raises
  :class:`~customtools.talkback.TalkBackError` (``no-input-handler``) saying so, or in the
  2026-07-28 era ends the run and the call answers ``-32021`` (SEP-2575);
* ``ctx.sample`` becomes ``sampling/createMessage`` for a client that declared ``sampling``
  (likewise ``ctx.can_sample``, ``no-sampler`` or ``-32021``);
* ``ctx.log`` and ``ctx.ui.notify`` become ``notifications/message``, at or above the level the
  client set with ``logging/setLevel`` (handshake era) or asked for in the request's ``_meta``
  (2026-07-28), sent in order by one pump task that starts on the first message;
* approval (``requires_approval``, ``destructiveHint``) is one more form, asked of the client.

In the 2026-07-28 era a server cannot send requests in the middle of a call: a question
ends the run (:class:`~customtools._talkback.QuestionPending`, which ``except Exception``
does not catch), the call answers ``input_required``, and the retry re-runs the tool with the
answers so far (:mod:`customtools.mcp._rerun`). A tool must therefore ask the same questions
in the same order when re-run, and make its changes only after its last question.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import warnings
import weakref
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from customtools._approval import ApprovalRequest
from customtools._talkback import (
    APPROVE_FORM,
    LOG_LEVELS,
    NO_OP_UI,
    FormUI,
    InputAnswer,
    InputRequest,
    LogLevel,
    QuestionPending,
    SampleRequest,
    SampleResult,
    TalkBackError,
    Unanswerable,
    check_form_schema,
    run_on_loop,
)
from customtools.mcp._rerun import MAX_ROUNDS, question_digest

__all__ = ["MAX_APPROVAL_TEXT", "CallBridge", "LogLevels", "approval_text"]

_log = logging.getLogger("customtools.mcp")

_MAX_QUEUED_LOGS = 1000
MAX_APPROVAL_TEXT = 8000
"""The most characters of arguments an approval form shows (all of them, or no form)."""
_INVISIBLE = re.compile("[\x7f-\x9f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")
_CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"


class LogLevels:
    """The level each handshake-era connection asked for with ``logging/setLevel``.

    Held weakly: a closed connection's entry goes with it.
    """

    __slots__ = ("_levels",)

    def __init__(self) -> None:
        self._levels: weakref.WeakKeyDictionary[Any, LogLevel] = weakref.WeakKeyDictionary()

    def set(self, session: Any, level: LogLevel) -> None:
        """Remember ``level`` for ``session``'s connection."""
        self._levels[_connection(session)] = level

    def get(self, session: Any) -> LogLevel | None:
        """The level ``session``'s connection set, if any."""
        return self._levels.get(_connection(session))


def _connection(session: Any) -> Any:
    # The SDK builds one ServerSession per request around the connection's object.
    return getattr(session, "_connection", session)


@dataclass(slots=True, eq=False)
class _NeedInput:
    """What a re-run call still needs: the question to send in ``input_required``, and its
    key there (``None``: the bridge names it)."""

    digest: str
    request: Any
    key: str | None


class _LogPump:
    """Sends a call's log messages in order on its response stream, from one lazy task."""

    __slots__ = ("_done", "_dropped", "_logger", "_queue", "_related", "_session", "_tg", "_wake")

    def __init__(self, session: Any, related: Any, tg: Any, logger: str) -> None:
        self._session = session
        self._related = related
        self._tg = tg
        self._logger = logger
        self._queue: deque[tuple[LogLevel, Any]] = deque()
        self._wake: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._dropped = 0

    def put(self, level: LogLevel, data: Any) -> None:
        if len(self._queue) >= _MAX_QUEUED_LOGS:
            self._dropped += 1
            return
        self._queue.append((level, data))
        if self._done is None:
            self._done = anyio.Event()
            self._wake = anyio.Event()
            self._tg.start_soon(self._pump)
        elif self._wake is not None:
            self._wake.set()

    async def _pump(self) -> None:
        assert self._done is not None
        try:
            while True:
                while self._queue:
                    level, data = self._queue.popleft()
                    with warnings.catch_warnings():  # the call only: it warns, the await not
                        warnings.simplefilter("ignore", MCPDeprecationWarning)
                        sending = self._session.send_log_message(
                            level, data, logger=self._logger, related_request_id=self._related
                        )
                    await sending
                if self._wake is None:
                    return
                self._wake = anyio.Event()
                await self._wake.wait()
        except Exception:
            _log.debug("a log message could not be sent (the client went away)", exc_info=True)
        finally:
            self._done.set()

    async def aclose(self, grace: float) -> None:
        if self._done is None:
            return
        wake, self._wake = self._wake, None
        if wake is not None:
            wake.set()
        with anyio.move_on_after(grace):
            await self._done.wait()
        if self._dropped:
            _log.warning("%d log messages of tool %r were dropped", self._dropped, self._logger)


class CallBridge:
    """One ``tools/call``'s talk-back channel to its MCP client.

    Args:
        ctx: the SDK's request context.
        tool: the tool's name.
        tg: the call's task group (for the log pump).
        levels: the per-connection log levels.
        answers: in the 2026-07-28 era, the answers recorded so far (re-run mode).
        signal: the call's signal (waits stop when it aborts).
        abort: aborts the call (re-run mode stops at the first unanswered question).
    """

    def __init__(
        self,
        ctx: Any,
        *,
        tool: str,
        tg: Any,
        levels: LogLevels,
        answers: list[Any] | None,
        signal: Any,
        abort: Any,
    ) -> None:
        self._ctx = ctx
        self._session = ctx.session
        self.tool = tool
        self._signal = signal
        self._abort = abort
        self.modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        self.answers = answers if answers is not None else []
        self._asked = 0
        self.pending: _NeedInput | None = None
        self.missing: MCPError | None = None  # 2026-07-28: a capability the call needs
        elicit, sample = self._capabilities()
        # Stateless HTTP in the handshake era: no initialize on this connection, no channel
        # for requests to the client.
        self.cut_off = not self.modern and not getattr(self._session, "can_send_request", True)
        self.can_elicit = elicit and not self.cut_off
        self.can_sample = sample and not self.cut_off
        self._levels = levels
        self._tg = tg
        self._loop_thread = threading.get_ident()
        self._pump: _LogPump | None = None  # made by the first log message
        self._threshold: int | None = -1  # -1: not read yet; None: the client wants none

    @property
    def connection(self) -> Any:
        """The client's connection (one per stdio server; a request's own when stateless)."""
        return _connection(self._session)

    def _capabilities(self) -> tuple[bool, bool]:
        """Whether the client declared elicitation and sampling (cheap: every call asks)."""
        if self.modern:
            params = self._ctx.params
            meta = params.get("_meta") if isinstance(params, Mapping) else None
            caps = meta.get(_CAPS_KEY) if isinstance(meta, Mapping) else None
            if isinstance(caps, Mapping):
                return "elicitation" in caps, "sampling" in caps
        declared = getattr(self._session, "client_capabilities", None)
        if declared is None:
            return False, False
        return declared.elicitation is not None, declared.sampling is not None

    # -- what the tool context gets ---------------------------------------------------------

    @property
    def ui(self) -> Any:
        """``ctx.ui``: the MCP UI for a client that can answer forms, else the no-op UI."""
        return FormUI(self.ask_checked, self.log_sink) if self.can_elicit else NO_OP_UI

    @property
    def asks(self) -> Any:
        """``ctx.input_handler``: :meth:`input_handler`, marked unanswerable for a client that
        cannot answer forms (``ctx.can_ask`` is then false)."""
        return self.input_handler if self.can_elicit else Unanswerable(self.input_handler)

    @property
    def samples(self) -> Any:
        """``ctx.sampler``: :meth:`sampler`, marked unanswerable for a client that cannot
        sample (``ctx.can_sample`` is then false)."""
        return self.sampler if self.can_sample else Unanswerable(self.sampler)

    def _cut_off(self, what: str) -> TalkBackError:
        return TalkBackError(
            f"tool {self.tool!r} {what} but this connection cannot carry requests to the client"
            " (stateless HTTP in the handshake era); serve over stateful HTTP or stdio, or use"
            " a 2026-07-28 client",
            code="no-input-handler" if what.startswith("asked the user") else "no-sampler",
        )

    async def input_handler(self, request: InputRequest) -> InputAnswer:
        """Ask the client to fill in ``request``'s form."""
        if self.cut_off:
            raise self._cut_off(f"asked the user ({request.message!r})")
        if not self.can_elicit:
            if self.modern:
                self._missing("elicitation", "make the tool check ctx.can_ask before asking")
            raise TalkBackError(
                f"tool {self.tool!r} asked the user ({request.message!r}) but the MCP client"
                " did not declare the elicitation capability, so it cannot be asked; use a"
                " client that supports elicitation, or handle TalkBackError in the tool",
                code="no-input-handler",
            )
        if self.modern:
            body = {"message": request.message, "schema": request.schema}
            if request.key is not None:
                body["key"] = request.key
            digest = question_digest("elicit", body)
            raw = self._replay(digest)
            if raw is None:
                self._need(
                    digest,
                    types.ElicitRequest(
                        params=types.ElicitRequestFormParams(
                            message=request.message, requested_schema=dict(request.schema)
                        )
                    ),
                    key=request.key,
                )
            action = raw.get("action") if isinstance(raw, Mapping) else None
            if action not in ("accept", "decline", "cancel"):
                raise TalkBackError(
                    f"the MCP client answered the form of tool {self.tool!r} with something"
                    " that is not an elicitation result",
                    code="invalid-answer",
                )
            content = raw.get("content")
            return InputAnswer(action=action, values=content if isinstance(content, dict) else {})
        try:
            result = await self._follow(
                self._session.elicit_form(
                    request.message, dict(request.schema), related_request_id=self._ctx.request_id
                )
            )
        except MCPError as exc:
            raise TalkBackError(
                f"the MCP client refused the form of tool {self.tool!r}: {exc}",
                code="talkback-failed",
            ) from None
        return InputAnswer(action=result.action, values=result.content or {})

    async def _follow(self, pending: Any) -> Any:
        """Await a request to the client, stopped as soon as the call's signal aborts (a sync
        tool's thread cannot be cancelled, but its question can)."""
        from customtools._talkback import bounded

        async def wait(_: Any) -> Any:
            return await pending

        try:
            return await bounded(
                wait, None, timeout=None, signal=self._signal, what="", code="talkback-failed"
            )
        finally:
            pending.close()  # never awaited when the signal had already aborted

    async def ask_checked(self, message: str, schema: Mapping[str, Any]) -> InputAnswer:
        """:meth:`input_handler` for a form built here, through the context's validation."""
        from customtools._talkback import answer_from, bounded

        form = check_form_schema(schema)
        raw = await bounded(
            self.input_handler,
            InputRequest(message=message, schema=form),
            timeout=300.0,
            signal=self._signal,
            what="the form",
            code="input-timeout",
        )
        return answer_from(raw.action, raw.values, form, tool=self.tool)

    async def sampler(self, request: SampleRequest) -> SampleResult:
        """Ask the client's model."""
        if self.cut_off:
            raise self._cut_off("asked the host's model")
        if not self.can_sample:
            if self.modern:
                self._missing("sampling", "make the tool check ctx.can_sample before sampling")
            raise TalkBackError(
                f"tool {self.tool!r} asked the host's model but the MCP client did not declare"
                " the sampling capability; use a client that supports sampling, or call a"
                " model provider from the tool",
                code="no-sampler",
            )
        # What is sent; a re-run's question digest is taken from it too, so both runs agree.
        sent = [{"role": m["role"], "content": str(m["content"])} for m in request.messages]
        messages = [
            types.SamplingMessage(
                role=m["role"], content=types.TextContent(type="text", text=m["content"])
            )
            for m in sent
        ]
        options: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "system_prompt": request.system_prompt,
            "temperature": request.temperature,
            "stop_sequences": list(request.stop_sequences) or None,
        }
        if self.modern:
            digest = question_digest("sample", {"messages": sent, "max": request.max_tokens})
            raw = self._replay(digest)
            if raw is None:
                self._need(
                    digest,
                    types.CreateMessageRequest(
                        params=types.CreateMessageRequestParams(messages=messages, **options)
                    ),
                )
            if not isinstance(raw, Mapping) or "content" not in raw or "role" not in raw:
                raise TalkBackError(
                    f"the MCP client answered the sampling request of tool {self.tool!r} with"
                    " something that is not a sampling result",
                    code="invalid-answer",
                )
            return _sample_result(raw)
        try:
            with warnings.catch_warnings():  # the call only: it warns, the await does not
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                asked = self._session.create_message(
                    messages, **options, related_request_id=self._ctx.request_id
                )
            result = await self._follow(asked)
        except MCPError as exc:
            raise TalkBackError(
                f"the MCP client refused the sampling request of tool {self.tool!r}: {exc}",
                code="talkback-failed",
            ) from None
        return _sample_result(result.model_dump(by_alias=True, mode="json", exclude_none=True))

    def log_sink(self, level: LogLevel, message: str, data: Mapping[str, Any]) -> None:
        """Queue a ``notifications/message`` if the client wants this level."""
        if threading.get_ident() != self._loop_thread:  # ctx.ui.notify from a sync tool
            run_on_loop(self.log_sink, level, message, data)
            return
        threshold = self._threshold
        if threshold == -1:
            # 2026-07-28: the SDK drops what the request did not opt into.
            wanted = "debug" if self.modern else self._levels.get(self._session)
            threshold = self._threshold = LOG_LEVELS.index(wanted) if wanted else None
        if threshold is None or LOG_LEVELS.index(level) < threshold:
            return
        payload: Any = {"message": message, **data} if data else message
        if self._pump is None:
            self._pump = _LogPump(self._session, self._ctx.request_id, self._tg, self.tool)
        self._pump.put(level, payload)

    async def approver(self, request: ApprovalRequest) -> bool:
        """Approval as a form showing every argument: run the tool only on an explicit yes.

        Raises:
            ValueError: the arguments are too long to show in full (the call is refused).
        """
        message = approval_text(self.tool, request)
        if self.cut_off:
            raise self._cut_off("asked the user for approval")
        if not self.can_elicit:
            if self.modern:
                self._missing("elicitation", "serve with an approver (ToolServer(approver=...))")
            raise TalkBackError(
                "the MCP client did not declare the elicitation capability, so nobody can be"
                " asked; connect with a client that supports elicitation, or serve with an"
                " approver (ToolServer(approver=...))",
                code="no-input-handler",
            )
        answer = await self.input_handler(InputRequest(message=message, schema=APPROVE_FORM))
        return answer.action == "accept" and answer.values.get("approve") is True

    async def aclose(self, grace: float) -> None:
        """Send the queued log messages (bounded by ``grace``) before the result."""
        if self._pump is not None:
            await self._pump.aclose(grace)

    # -- re-run mode (2026-07-28) -----------------------------------------------------------

    def _replay(self, digest: str) -> Any:
        index = self._asked
        self._asked += 1
        if index < len(self.answers):
            entry = self.answers[index]
            if not isinstance(entry, Mapping) or entry.get("q") != digest:
                raise TalkBackError(
                    f"tool {self.tool!r} asked a different question when re-run (question"
                    f" {index + 1}); a tool must ask the same questions in the same order",
                    code="talkback-failed",
                )
            return entry.get("r")
        return None

    def _missing(self, capability: str, advice: str) -> NoReturn:
        """The call needs a capability this request did not declare (SEP-2575).

        The run ends at the question (nothing the tool would do without an answer runs), and
        the call answers ``-32021`` naming the capability instead of a result.
        """
        if self.missing is None:
            self.missing = MCPError(
                code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                message=f"tool {self.tool!r} needs the client's {capability} capability, which"
                f" this request did not declare; use a client that supports {capability}, or"
                f" {advice}",
                data=types.MissingRequiredClientCapabilityErrorData(
                    required_capabilities=types.ClientCapabilities.model_validate({capability: {}})
                ).model_dump(by_alias=True, mode="json", exclude_none=True),
            )
        reason = f"the client did not declare the {capability} capability"
        self._abort(reason)
        raise QuestionPending(reason)

    def _need(self, digest: str, request: Any, *, key: str | None = None) -> NoReturn:
        if self._asked > MAX_ROUNDS:
            raise TalkBackError(
                f"tool {self.tool!r} asked more than {MAX_ROUNDS} questions in one call",
                code="talkback-failed",
            )
        if self.pending is None:  # a tool that swallowed the first one asks again: keep it
            self.pending = _NeedInput(digest, request, key)
        reason = "waiting for the client's answer (input_required)"
        self._abort(reason)
        # The run is over, and no `except Exception` fallback may act before the answer.
        raise QuestionPending(reason)


def approval_text(tool: str, request: ApprovalRequest) -> str:
    """The approval form's text: every argument on its own line, in full, in the order of the
    tool's schema (then any others, sorted), as JSON with invisible characters escaped.

    Raises:
        ValueError: the arguments take more than :data:`MAX_APPROVAL_TEXT` characters; what
            the person approves must all be shown, so such a call cannot be approved here.
    """
    arguments = request.arguments
    declared = request.tool.parameters.get("properties") or {}
    names = [name for name in declared if name in arguments]
    names += sorted((name for name in arguments if name not in declared), key=str)
    lines = [f"Allow tool {tool!r} to run with these arguments?"]
    size = 0
    for name in names:
        value = json.dumps(arguments[name], ensure_ascii=False, sort_keys=True, default=repr)
        size += len(value) + len(str(name))
        if size > MAX_APPROVAL_TEXT:
            raise ValueError(
                f"its arguments are longer than the {MAX_APPROVAL_TEXT} characters an approval"
                " form shows in full, so it cannot be approved over MCP; pass shorter"
                " arguments, or serve with an approver (ToolServer(approver=...))"
            )
        lines.append(f"- {_visible(json.dumps(str(name), ensure_ascii=False))}: {_visible(value)}")
    return "\n".join(lines)


def _visible(text: str) -> str:
    # JSON escapes C0 controls; these are the characters that still hide or reorder text.
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _sample_result(raw: Mapping[str, Any]) -> SampleResult:
    content = raw.get("content")
    blocks = content if isinstance(content, list) else [content] if content else []
    text = "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )
    return SampleResult(
        text=text,
        content=tuple(dict(b) for b in blocks if isinstance(b, Mapping)),
        model=raw.get("model"),
        stop_reason=raw.get("stopReason"),
    )
