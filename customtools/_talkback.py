"""Tools that talk back: ask the user, ask the host's model, log, through whichever host runs them.

A tool reaches the person or the model in the middle of a call through its
:class:`~customtools.ToolContext`:

* ``await ctx.ask(message, schema)`` shows a small form (an object schema of primitives and
  enums) and returns an :class:`InputAnswer`: ``accept`` with the validated values, or
  ``decline`` / ``cancel``;
* ``await ctx.sample(messages, max_tokens=...)`` asks the host's model and returns a
  :class:`SampleResult`;
* ``ctx.log(level, message, **data)`` sends a log message at one of the RFC 5424 levels;
* ``ctx.ui`` keeps ``confirm`` / ``select`` / ``input`` / ``notify`` (:class:`UIContext`).

A host provides the answers by putting an :class:`InputHandler`, a :class:`Sampler` and a
:class:`LogSink` on the context (``ToolContext(input_handler=..., sampler=..., log_sink=...)``);
``customtools serve`` maps them to MCP elicitation, sampling and logging per client. When
nobody can answer, :class:`TalkBackError` says so (its ``code`` is typed); unhandled, the
adapter turns it into an error result the model reads. Every wait is bounded
(:data:`DEFAULT_ASK_TIMEOUT`, :data:`DEFAULT_SAMPLE_TIMEOUT`) and follows the call's
cancellation: an async tool's task is cancelled with the call, and a ``signal=`` passed in
stops the wait as soon as it aborts (what sync tools, in their thread, rely on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, get_args, runtime_checkable

from customtools._error_results import Code
from customtools._errors import CustomToolsError
from customtools._format import logger
from customtools._tool import json_copy

if TYPE_CHECKING:
    from customtools._abort import AbortSignal

__all__ = [
    "APPROVE_FORM",
    "DEFAULT_ASK_TIMEOUT",
    "DEFAULT_SAMPLE_TIMEOUT",
    "LOG_LEVELS",
    "NO_OP_UI",
    "FormUI",
    "InputAnswer",
    "InputHandler",
    "InputRequest",
    "LogLevel",
    "LogSink",
    "NoOpUIContext",
    "QuestionPending",
    "SampleRequest",
    "SampleResult",
    "Sampler",
    "TalkBackError",
    "UIContext",
    "Unanswerable",
    "check_form_schema",
]

_log = logger("customtools.loading")
_tool_log = logger("customtools.tools")

NotifyLevel = Literal["info", "warning", "error"]

LogLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
"""The RFC 5424 severities MCP logging uses, least severe first."""

_INFO = 20  # logging.INFO; the numbers are logging's levels, fixed by its documentation
_PY_LEVELS: dict[str, int] = {
    "debug": 10,
    "info": _INFO,
    "notice": _INFO,
    "warning": 30,
    "error": 40,
    "critical": 50,
    "alert": 50,
    "emergency": 50,
}

LOG_LEVELS: tuple[LogLevel, ...] = get_args(LogLevel)
"""Every :data:`LogLevel`, least severe first (compare with ``LOG_LEVELS.index``)."""

DEFAULT_ASK_TIMEOUT = 300.0
"""Seconds :meth:`ToolContext.ask <customtools.ToolContext.ask>` waits for an answer."""

DEFAULT_SAMPLE_TIMEOUT = 120.0
"""Seconds :meth:`ToolContext.sample <customtools.ToolContext.sample>` waits for the model."""

_PRIMITIVES = frozenset({"string", "number", "integer", "boolean"})
_STRING_FORMATS = frozenset({"email", "uri", "date", "date-time"})


class TalkBackError(CustomToolsError, RuntimeError):
    """Nobody could answer a tool's question, or the answer was unusable.

    Attributes:
        code: ``"no-input-handler"`` (the host or client cannot show a form),
            ``"no-sampler"`` (it cannot run its model), ``"input-timeout"`` /
            ``"sampling-timeout"`` (no answer in time), ``"invalid-answer"`` (the answer
            breaks the form's schema), ``"talkback-failed"`` (the host's handler failed).
    """

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


class QuestionPending(BaseException):
    """Ends a run of a tool at a question whose answer comes with a re-run.

    Raised by the MCP bridge in the 2026-07-28 era, where a question cannot be asked in the
    middle of a call: the call answers ``input_required`` and the client's retry runs the
    tool again with the answer. A ``BaseException``, as ``GeneratorExit`` is, so that a
    tool's ``except Exception`` fallback ("nobody can answer") does not run, and act,
    before the person answered. The adapter turns it into a cancelled result, which the
    bridge never sends.

    Attributes:
        reason: why the run ended.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Unanswerable:
    """An input handler or sampler standing where nobody can answer.

    Calling it calls ``refuse`` (which raises, saying why), so a question still reaches the
    host that knows why it cannot be answered; but ``ctx.can_ask`` / ``ctx.can_sample`` are
    false, so a tool that checks them first never asks.
    """

    __slots__ = ("_refuse",)

    def __init__(self, refuse: Any) -> None:
        self._refuse = refuse

    async def __call__(self, request: Any, /) -> Any:
        """Refuse ``request`` (``refuse`` raises)."""
        return await self._refuse(request)


@dataclass(frozen=True, slots=True, kw_only=True)
class InputRequest:
    """A form a tool wants filled in.

    Args:
        message: what the person is asked, in one or two sentences.
        schema: a flat JSON object schema whose properties are primitives (string, number,
            integer, boolean) or enums (see :func:`check_form_schema`).
        key: the question's name where the protocol names questions (the key of MCP
            2026-07-28 ``inputRequests``); ``None`` lets the host choose one.
    """

    message: str
    schema: Mapping[str, Any]
    key: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InputAnswer:
    """What came back from a form.

    Attributes:
        action: ``"accept"`` (the form was submitted), ``"decline"`` (an explicit no) or
            ``"cancel"`` (dismissed without a choice).
        values: the submitted values, validated against the form's schema (defaults filled
            in); empty unless accepted.
    """

    action: Literal["accept", "decline", "cancel"]
    values: Mapping[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        """Whether the form was submitted."""
        return self.action == "accept"


@dataclass(frozen=True, slots=True, kw_only=True)
class SampleRequest:
    """A completion a tool asks of the host's model.

    Args:
        messages: the conversation, each ``{"role": "user"|"assistant", "content": text}``.
        max_tokens: the most tokens the model may produce.
        system_prompt: an optional system prompt.
        temperature: an optional sampling temperature.
        stop_sequences: optional stop sequences.
    """

    messages: tuple[Mapping[str, Any], ...]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SampleResult:
    """The host model's answer.

    Attributes:
        text: the answer's text (empty when it holds no text).
        content: the answer's content blocks, as JSON-safe dicts.
        model: the model that answered, when the host says.
        stop_reason: why it stopped (``"endTurn"``, ``"maxTokens"``, ...), when known.
    """

    text: str
    content: tuple[Mapping[str, Any], ...] = ()
    model: str | None = None
    stop_reason: str | None = None


@runtime_checkable
class InputHandler(Protocol):
    """``async def handler(request) -> InputAnswer``: shows a form and returns the answer.

    Raise :class:`TalkBackError` (``code="no-input-handler"``) when it cannot ask.
    """

    async def __call__(self, request: InputRequest, /) -> InputAnswer:
        """Ask; return the person's answer."""


@runtime_checkable
class Sampler(Protocol):
    """``async def sampler(request) -> SampleResult``: runs the host's model.

    Raise :class:`TalkBackError` (``code="no-sampler"``) when it cannot.
    """

    async def __call__(self, request: SampleRequest, /) -> SampleResult:
        """Run the model; return its answer."""


@runtime_checkable
class LogSink(Protocol):
    """``def sink(level, message, data) -> None``: takes one log message of a tool.

    Called on the event loop thread; it must not block (queue the message if sending it
    takes I/O).
    """

    def __call__(self, level: LogLevel, message: str, data: Mapping[str, Any], /) -> None:
        """Record or forward one message."""


@runtime_checkable
class UIContext(Protocol):
    """What a host's UI offers tools (``ctx.ui`` and ``api.ui``). Every method has a safe
    default in :class:`NoOpUIContext`, which tools see until the host provides a UI.

    Tools should check ``has_ui`` before asking questions a headless host cannot answer.
    """

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """Show a short, non-blocking message."""

    async def confirm(self, title: str, message: str = "") -> bool:
        """Ask a yes/no question; ``False`` when there is no one to ask."""

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        """Ask the user to pick one of ``options``; ``None`` when cancelled or headless."""

    async def input(self, title: str, placeholder: str | None = None) -> str | None:
        """Ask for a line of text; ``None`` when cancelled or headless."""

    def set_status(self, key: str, text: str | None) -> None:
        """Set (or with ``None`` clear) a status line the tool owns under ``key``."""


class NoOpUIContext:
    """The UI of a headless host: questions get their safe answer, messages go to the log."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NoOpUIContext()"

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """Log ``message`` at debug level (nobody is watching)."""
        _log.debug("ui.notify(%s) without a UI: %s", level, message)

    async def confirm(self, title: str, message: str = "") -> bool:
        """Return ``False``: without a UI nothing is confirmed."""
        return False

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        """Return ``None``: nothing selected."""
        return None

    async def input(self, title: str, placeholder: str | None = None) -> str | None:
        """Return ``None``: no input."""
        return None

    def set_status(self, key: str, text: str | None) -> None:
        """Do nothing."""


NO_OP_UI = NoOpUIContext()
"""The shared no-op UI."""

APPROVE_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Run it", "default": False}},
    "required": ["approve"],
}
"""The form of a yes/no question (``ui.confirm``, an approval): one boolean, ``approve``."""


class FormUI:
    """``ctx.ui`` where questions can only be forms (over MCP, in an isolation worker):
    each question is a form of one field asked through ``ask(message, schema)``, and notices
    are log messages through ``log(level, message, data)``."""

    __slots__ = ("_ask", "_log")

    def __init__(self, ask: Any, log: Any) -> None:
        self._ask = ask
        self._log = log

    def __repr__(self) -> str:
        return "<form UI>"

    def notify(self, message: str, level: str = "info") -> None:
        self._log(level if level in LOG_LEVELS else "info", message, {})

    async def confirm(self, title: str, message: str = "") -> bool:
        text = f"{title}\n\n{message}" if message else title
        answer = await self._ask(text, APPROVE_FORM)
        return bool(answer.accepted and answer.values.get("approve") is True)

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        choice = {"type": "string", "enum": [str(o) for o in options]}
        return await self._one(title, "choice", choice)

    async def input(self, title: str, placeholder: str | None = None) -> str | None:
        described = {"description": placeholder} if placeholder else {}
        return await self._one(title, "value", {"type": "string", **described})

    async def _one(self, title: str, name: str, field: dict[str, Any]) -> str | None:
        """Ask a form of one required field; its value, or ``None`` when not accepted."""
        schema = {"type": "object", "properties": {name: field}, "required": [name]}
        answer = await self._ask(title, schema)
        return str(answer.values[name]) if answer.accepted else None

    def set_status(self, key: str, text: str | None) -> None:
        if text:
            self.notify(f"{key}: {text}", "info")


def check_form_schema(schema: Any) -> dict[str, Any]:
    """Check that ``schema`` is a form a client can show; return it as a plain dict.

    A form is a JSON object schema (a ``Type.Object(...)`` works) whose properties are each a
    string (``format`` one of email, uri, date, date-time), number, integer or boolean, an
    enum of strings (``enum`` or ``oneOf`` of ``{const, title}``), or an array of such enums
    (multi-select). Nested objects are not allowed (MCP elicitation forbids them). A union of
    string literals (``Type.Union([Type.Literal("a"), ...])``) becomes an ``enum``.

    Raises:
        ValueError: the schema is not such a form; the message names the property.
    """
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ValueError(
            'form schema: the root must be an object schema ({"type": "object", ...});'
            " build it with Type.Object(...)"
        )
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        raise ValueError("form schema: it needs at least one property under 'properties'")
    plain: dict[str, Any] = json_copy(schema)
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            raise ValueError(f"form schema: property {name!r} is not a schema object")
        _check_field(str(name), prop)
        consts = _const_strings(prop.get("anyOf"))
        if consts is not None:  # Type.Union([Type.Literal(...), ...]): the enum form clients know
            field_schema = {k: v for k, v in plain["properties"][name].items() if k != "anyOf"}
            plain["properties"][name] = {**field_schema, "type": "string", "enum": consts}
    return plain


def _const_strings(options: Any) -> list[str] | None:
    if not isinstance(options, list) or not options:
        return None
    values = [o.get("const") if isinstance(o, Mapping) else None for o in options]
    return values if all(isinstance(v, str) for v in values) else None  # type: ignore[return-value]


def _check_field(name: str, prop: Mapping[str, Any]) -> None:
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping) or not (
            isinstance(items.get("enum"), list) or isinstance(items.get("anyOf"), list)
        ):
            raise ValueError(
                f"form schema: property {name!r} is an array; only arrays of an enum"
                " (multi-select) are allowed"
            )
        return
    if "enum" in prop or "oneOf" in prop or _const_strings(prop.get("anyOf")) is not None:
        if kind not in (None, "string"):
            raise ValueError(f"form schema: enum property {name!r} must be of type string")
        return
    if kind not in _PRIMITIVES:
        raise ValueError(
            f"form schema: property {name!r} has type {kind!r}; a form field must be a string,"
            " number, integer, boolean or enum (no nested objects)"
        )
    fmt = prop.get("format")
    if fmt is not None and (kind != "string" or fmt not in _STRING_FORMATS):
        raise ValueError(
            f"form schema: property {name!r} has format {fmt!r}; only strings may have a"
            f" format, one of {', '.join(sorted(_STRING_FORMATS))}"
        )


def _options(prop: Mapping[str, Any]) -> list[str] | None:
    if isinstance(prop.get("enum"), list):
        return [str(v) for v in prop["enum"]]
    for key in ("oneOf", "anyOf"):
        consts = prop.get(key)
        if isinstance(consts, list) and consts:
            return [str(c.get("const")) for c in consts if isinstance(c, Mapping)]
    return None


def ui_input_handler(ui: Any) -> InputHandler:
    """An :class:`InputHandler` built on a host's :class:`UIContext`: each field of the form
    becomes one question (an enum is ``select``, a boolean ``confirm``, anything else
    ``input``, checked and converted by the form's schema afterwards). Dismissing a
    question cancels the form; answering "no" to a form of one boolean declines it."""

    async def handler(request: InputRequest) -> InputAnswer:
        properties: Mapping[str, Any] = request.schema.get("properties") or {}
        required = set(request.schema.get("required") or ())
        values: dict[str, Any] = {}
        for name, prop in properties.items():
            title = prop.get("title") or prop.get("description") or name
            label = request.message if len(properties) == 1 else f"{request.message}\n{title}"
            options = _options(prop)
            value: Any
            if prop.get("type") == "array":
                hint = ", ".join(_options(prop.get("items") or {}) or ())
                text = await ui.input(label, f"comma-separated: {hint}" if hint else None)
                value = None if text is None else [p.strip() for p in text.split(",") if p.strip()]
            elif options is not None:
                value = await ui.select(label, options)
            elif prop.get("type") == "boolean":
                value = await ui.confirm(label) is True
                if len(properties) == 1 and not value:
                    return InputAnswer(action="decline")
            else:
                default = prop.get("default")
                value = await ui.input(label, None if default is None else str(default))
                if value == "" and name not in required:
                    continue
            if value is None:  # the question was dismissed
                return InputAnswer(action="cancel")
            values[name] = value
        return InputAnswer(action="accept", values=values)

    return handler


def answer_from(
    action: Any, values: Any, schema: Mapping[str, Any], *, tool: str | None
) -> InputAnswer:
    """An :class:`InputAnswer` from a raw answer, its values validated against ``schema``.

    Raises:
        TalkBackError: ``invalid-answer``, naming each violation.
    """
    if action not in ("accept", "decline", "cancel"):
        raise TalkBackError(
            f"the answer to a form of tool {tool!r} has action {action!r}; expected accept,"
            " decline or cancel",
            code=Code.INVALID_ANSWER,
        )
    if action != "accept":
        return InputAnswer(action=action)
    from customtools._errors import ToolArgumentsError
    from customtools._validation import compile_validator

    validator = compile_validator(schema, tool_name=tool, coerce=True)
    # Only answers to the questions asked reach the tool: a client's extra keys are dropped.
    asked = schema.get("properties") or {}
    given = values if isinstance(values, Mapping) else {}
    try:
        checked, _ = validator.validate({k: v for k, v in given.items() if k in asked})
    except ToolArgumentsError as exc:
        raise TalkBackError(
            f"the answer to a form of tool {tool!r} does not match the form: {exc}",
            code=Code.INVALID_ANSWER,
        ) from None
    return InputAnswer(action="accept", values=dict(checked))


def sample_messages(messages: Any) -> tuple[Mapping[str, Any], ...]:
    """``messages`` as a tuple of ``{"role", "content"}`` dicts (a string is one user message).

    Raises:
        ValueError: a message has no valid role or no content.
    """
    if isinstance(messages, str):
        return ({"role": "user", "content": messages},)
    out: list[Mapping[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            raise ValueError(
                f"sample: message {index} must be a mapping with role 'user' or 'assistant'"
            )
        if "content" not in message:
            raise ValueError(f"sample: message {index} has no 'content'")
        out.append(dict(message))
    if not out:
        raise ValueError("sample: give at least one message")
    return tuple(out)


def py_level(level: str) -> int:
    """The Python logging level of an RFC 5424 ``level`` (INFO when unknown)."""
    return _PY_LEVELS.get(level, _INFO)


def on_event_loop() -> bool:
    """Whether this thread runs an async event loop (else: a worker thread)."""
    import anyio

    try:
        anyio.get_current_task()
    except Exception:  # no async library in this thread (the error's class varies by version)
        return False
    return True


def run_on_loop(fn: Any, *args: Any) -> None:
    """Run ``fn(*args)`` on the event loop from an anyio worker thread; from another thread
    (one anyio did not start), run it here."""
    import anyio.from_thread

    try:
        anyio.from_thread.run_sync(fn, *args)
    except RuntimeError as exc:
        if "event loop" not in str(exc) and "worker thread" not in str(exc):
            raise
        fn(*args)


def default_log(level: LogLevel, message: str, data: Mapping[str, Any]) -> None:
    """Where ``ctx.log`` goes without a host sink: the ``customtools.tools`` logger."""
    _tool_log.log(_PY_LEVELS[level], "%s %s", message, dict(data) if data else "")


async def bounded(
    call: Any,
    request: Any,
    *,
    timeout: float | None,
    signal: AbortSignal | None,
    what: str,
    code: str,
) -> Any:
    """``await call(request)`` within ``timeout`` seconds, stopped early by ``signal``.

    Raises:
        TalkBackError: ``code`` when no answer came in time.
        ToolAbortedError: the signal aborted while waiting (see ``raise_if_aborted``).
    """
    import anyio

    if signal is not None and signal.aborted:
        signal.raise_if_aborted()
    with anyio.move_on_after(timeout) as scope:

        def stop(_reason: Any) -> None:
            scope.cancel()

        if signal is not None:
            signal.add_listener(stop)
        try:
            return await call(request)
        finally:
            if signal is not None:
                signal.remove_listener(stop)
    if signal is not None and signal.aborted:
        signal.raise_if_aborted()
    raise TalkBackError(f"no answer to {what} within {timeout:g} s", code=code)
