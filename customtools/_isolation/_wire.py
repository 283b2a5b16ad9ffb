"""The worker protocol: its messages, and their framing as length-prefixed JSON over two pipes.

Each message is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (one
object). Both ends use :class:`Channel`, which reads and writes raw non-blocking file
descriptors through ``anyio.lowlevel.wait_readable``/``wait_writable``: no stream objects, no
threads, and reads that a cancellation cannot tear (partial data stays buffered until the
whole message is there). The audit of ``validate`` reads and writes the same frames from
threads (``blocking=True``); its messages are in :mod:`._audit_child`.

The messages are the ``TypedDict`` s below. ``id`` numbers a request and its reply carries the
same ``id``; what a call's tool sends while it runs (updates, ``ctxAbort``) carries the call's.
Records travel in their ``to_dict()`` forms (a ``Candidate``, a tool, a ``ToolResult``, load
errors and diagnostics) and are read back with ``from_dict()``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict

if TYPE_CHECKING:
    from typing_extensions import NotRequired

__all__ = [
    "BYTES_PER_VALUE",
    "MARKING_THEME",
    "MAX_MESSAGE",
    "QUESTION_PENDING",
    "AbortRequest",
    "AnswerMessage",
    "CallRequest",
    "Channel",
    "CtxAbortMessage",
    "HookReply",
    "LoadReply",
    "LoadRequest",
    "MessageTooLargeError",
    "RenderRequest",
    "ResultMessage",
    "SessionRequest",
    "TalkMessage",
    "WireContext",
    "check_values",
    "encode",
    "restyle",
]


class WireContext(TypedDict):
    """What of the caller's ``ToolContext`` reaches the worker (``None``: the default one)."""

    cwd: str | None
    model: str | None
    isIdle: bool
    hasQueuedMessages: bool
    meta: dict[str, Any] | None
    canAsk: bool
    canSample: bool
    hasUi: bool  # a UI that asks (the worker's ctx.ui asks through ctx.ask)


class LoadRequest(TypedDict):
    """host -> worker: import the module; ``reviewed`` pins the trust grant's hashes."""

    op: Literal["load"]
    id: int
    candidate: dict[str, Any]  # Candidate.to_dict()
    cwd: str
    loadTimeout: float | None
    reviewed: NotRequired[dict[str, Any]]  # {"root", "files": {real path: sha256}}


class LoadReply(TypedDict):
    """worker -> host: the module's tools, errors, diagnostics; files changed since the grant."""

    op: Literal["loaded"]
    id: int
    tools: list[dict[str, Any]]  # CustomTool.to_dict(), plus its hooks: "onSession", ...
    errors: list[dict[str, Any]]  # LoadError.to_dict()
    diagnostics: list[dict[str, Any]]  # Diagnostic.to_dict()
    unreviewed: list[str]


class CallRequest(TypedDict):
    """host -> worker: run a tool; ``trace`` carries the caller's trace context (W3C)."""

    op: Literal["call"]
    id: int
    tool: str
    callId: str
    params: Any
    ctx: WireContext | None
    trace: NotRequired[dict[str, str]]


class AbortRequest(TypedDict):
    """host -> worker: fire the signal of call ``id`` (a timeout when ``timeout``)."""

    op: Literal["abort"]
    id: int
    reason: str | None
    timeout: bool


class SessionRequest(TypedDict):
    """host -> worker: deliver a session event to a tool's ``on_session``."""

    op: Literal["session"]
    id: int
    tool: str
    event: dict[str, Any]  # SessionEvent.to_dict()
    ctx: WireContext | None


class ResultMessage(TypedDict):
    """worker -> host: a partial result (``update``), or the result once the call is over;
    ``spans``: what the tool's OpenTelemetry spans recorded (see ``_observe.recorded_spans``)."""

    op: Literal["update", "result"]
    id: int
    result: dict[str, Any]  # ToolResult.to_dict()
    spans: NotRequired[list[dict[str, Any]]]


class CtxAbortMessage(TypedDict):
    """worker -> host: the tool of call ``id`` called ``ctx.abort(reason)``."""

    op: Literal["ctxAbort"]
    id: int
    reason: str | None


class TalkMessage(TypedDict):
    """worker -> host: the tool of call ``id`` asks (``ask``: an ``InputRequest``), samples
    (``sample``: a ``SampleRequest``), each its ``ask``-th question, or logs (``log``)."""

    op: Literal["talk"]
    id: int
    ask: int
    kind: Literal["ask", "sample", "log"]
    request: dict[str, Any]  # the request's fields; for a log: level, message, data


QUESTION_PENDING: Final = "question-pending"
"""An answer's ``error`` code when the question ends the run (the MCP re-run era): the worker
raises ``QuestionPending`` in the tool, as an in-process tool would see it."""


class AnswerMessage(TypedDict):
    """host -> worker: the answer (``InputAnswer``, ``SampleResult`` fields) to a question, or
    why there is none (``error``: a ``TalkBackError`` code and message)."""

    op: Literal["answer"]
    id: int
    ask: int
    value: dict[str, Any] | None
    error: dict[str, str] | None


class RenderRequest(TypedDict, total=False):
    """host -> worker, on the render channel: run ``tool``'s ``hook`` (``render_call`` with
    ``args``; ``render_result`` with ``result``, ``options`` and ``args``) with
    :data:`MARKING_THEME`; the reply is ``{"id", "value", "error"}``."""

    id: int
    tool: str
    hook: Literal["render_call", "render_result"]
    args: Any
    result: dict[str, Any]  # ToolResult.to_dict()
    options: dict[str, Any]  # RenderOptions fields


# A render hook in a worker styles text with marks the host's theme turns into its own styling.
_FG, _BOLD, _COLOR_END, _END = "\ue000", "\ue001", "\ue002", "\ue003"
_MARKS = re.compile(f"([{_FG}{_BOLD}{_COLOR_END}{_END}])")


class _MarkingTheme:
    """The theme a render hook in a worker is given: it marks what the host's theme styles."""

    __slots__ = ()

    def fg(self, color: str, text: str) -> str:
        return f"{_FG}{color}{_COLOR_END}{text}{_END}"

    def bold(self, text: str) -> str:
        return f"{_BOLD}{text}{_END}"


MARKING_THEME: Final = _MarkingTheme()


def restyle(value: Any, theme: Any) -> Any:
    """``value`` a worker's render hook returned, its marked text styled by ``theme`` (the
    host's); unbalanced marks are dropped."""
    if isinstance(value, list):
        return [restyle(item, theme) for item in value]
    if isinstance(value, dict):
        return {key: restyle(item, theme) for key, item in value.items()}
    if not isinstance(value, str) or not _MARKS.search(value):
        return value
    stack: list[tuple[str, list[str]]] = [("", [])]  # (style, its parts); style "fg:<color>"
    for token in _MARKS.split(value):
        if token in (_FG, _BOLD):
            stack.append(("fg" if token == _FG else "bold", []))
        elif token == _COLOR_END and stack[-1][0] == "fg":
            style, parts = stack.pop()
            stack.append((f"fg:{''.join(parts)}", []))
        elif token == _END and len(stack) > 1:
            style, parts = stack.pop()
            text = "".join(parts)
            if style.startswith("fg:"):
                text = theme.fg(style[3:], text)
            elif style == "bold":
                text = theme.bold(text)
            stack[-1][1].append(text)
        elif token not in (_COLOR_END, _END):
            stack[-1][1].append(token)
    while len(stack) > 1:
        _, parts = stack.pop()
        stack[-1][1].extend(parts)
    return "".join(stack[0][1])


class HookReply(TypedDict):
    """worker -> host: the ``on_session`` hook of request ``id`` ran (``error``: how it failed)."""

    op: Literal["hook"]
    id: int
    error: str | None


MAX_MESSAGE: Final = 64 * 1024 * 1024
"""Bytes one message may take; a bigger one ends the worker (see docs/isolation.md)."""

BYTES_PER_VALUE: Final = 64
"""A message under a limit of N bytes may hold at most N / 64 JSON values (outside strings).

Decoded, a JSON value costs Python objects of up to about 200 bytes (a small ``dict``), so
without this bound ``[{},{},...]`` costs about 26 times its size in memory; with it, a message
costs the host at most about 3 times the limit it was checked against at its peak (see
docs/isolation.md). Messages up to 1 MiB are not counted (their cost is small anyway).
"""

_COUNTED_ABOVE: Final = 1024 * 1024
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)

_HEADER: Final = 4
_CHUNK: Final = 1024 * 1024


class MessageTooLargeError(Exception):
    """A message over the size bound was announced or is being sent."""


def _fallback(value: Any) -> Any:
    from customtools._format import safe_repr

    return safe_repr(value)


def check_values(body: bytes | bytearray | memoryview, limit: int) -> None:
    """Refuse a message body holding more JSON values than ``limit`` allows, before decoding.

    Values are counted as the ``,``, ``[`` and ``{`` outside strings: a cheap count of all of
    them first, and only when that is over the bound, again without the strings.

    Raises:
        MessageTooLargeError: more than ``limit //`` :data:`BYTES_PER_VALUE` values.
    """
    if len(body) <= _COUNTED_ABOVE:
        return
    cap = max(limit // BYTES_PER_VALUE, 1 << 14)
    data = body if isinstance(body, bytes) else bytes(body)
    count = data.count(b",") + data.count(b"[") + data.count(b"{")
    if count <= cap:
        return
    bare = _STRING.sub(b"", data)
    count = bare.count(b",") + bare.count(b"[") + bare.count(b"{")
    if count > cap:
        raise MessageTooLargeError(
            f"a message of {len(body)} bytes holds about {count} JSON values, over the {cap}"
            f" a message may hold under a limit of {limit} bytes"
        )


def encode(message: Mapping[str, Any], *, limit: int = MAX_MESSAGE) -> bytes:
    """One framed message; values JSON cannot carry become their ``repr``.

    Raises:
        MessageTooLargeError: over ``limit`` bytes, or holding too many values (see
            :func:`check_values`).
    """
    body = json.dumps(message, separators=(",", ":"), default=_fallback).encode(
        "utf-8", "surrogatepass"
    )
    if len(body) > limit:
        raise MessageTooLargeError(f"a message of {len(body)} bytes is over {limit} bytes")
    check_values(body, limit)
    return len(body).to_bytes(_HEADER, "big") + body


class Channel:
    """Framed messages in from ``read_fd`` and out to ``write_fd`` (both made non-blocking).

    With ``spin`` (seconds), :meth:`receive` polls that long before it waits for the event
    loop, trading a short busy wait (which holds the loop) for latency; after a poll that
    missed, the next 2, 4, ... 256 receives do not poll, so a slow peer or a busy machine
    turns polling off by itself. One task at a time may
    :meth:`receive`; :meth:`send` may be called from several tasks: a
    message that does not fit in the pipe at once is queued and written, in order, by
    whichever sender is flushing.
    """

    __slots__ = (
        "_buffer",
        "_flushing",
        "_misses",
        "_out",
        "_read_fd",
        "_skip",
        "_write_fd",
        "limit",
        "spin",
    )

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        *,
        limit: int = MAX_MESSAGE,
        spin: float = 0.0,
        blocking: bool = False,
    ) -> None:
        if not blocking:  # ``blocking``: only the ``*_blocking`` methods are used (threads)
            os.set_blocking(read_fd, False)
            os.set_blocking(write_fd, False)
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._buffer = bytearray()
        self._out = bytearray()
        self._flushing = False
        self.limit = limit
        self.spin = spin
        self._misses = 0
        self._skip = 0

    def _take(self) -> dict[str, Any] | None:
        buffer = self._buffer
        if len(buffer) < _HEADER:
            return None
        size = int.from_bytes(buffer[:_HEADER], "big")
        if size > self.limit:
            raise MessageTooLargeError(f"a message of {size} bytes is over {self.limit} bytes")
        end = _HEADER + size
        if len(buffer) < end:
            return None
        body = bytes(buffer[_HEADER:end])
        del buffer[:end]
        check_values(body, self.limit)  # before decoding: what the message costs is bounded
        message = json.loads(body.decode("utf-8", "surrogatepass"))
        if not isinstance(message, dict):
            raise ValueError("a protocol message is not a JSON object")
        return message

    async def receive(self) -> dict[str, Any] | None:
        """The next message, or ``None`` at end of file (the other side is gone).

        Raises:
            MessageTooLargeError: the next message is over :attr:`limit`.
            ValueError: the bytes are not a message (the other side is not a worker).
        """
        from anyio import wait_readable

        spin_until = 0.0
        spinning = self.spin > 0 and self._skip == 0
        if self._skip:
            self._skip -= 1
        while True:
            message = self._take()
            if message is not None:
                if spin_until:
                    self._misses = 0  # the poll caught it: keep polling
                return message
            try:
                chunk = os.read(self._read_fd, _CHUNK)
            except BlockingIOError:
                if spinning:
                    # A reply usually comes within tens of microseconds: polling that long is
                    # several times faster than an event-loop wake-up (docs/design.md).
                    now = time.perf_counter()
                    if not spin_until:
                        spin_until = now + self.spin
                    if now < spin_until:
                        continue
                    # Missed: on a busy machine polling only takes the CPU the other side
                    # needs, so skip it for the next 2, 4, ... 256 waits.
                    spinning = False
                    spin_until = 0.0
                    self._misses = min(self._misses + 1, 8)
                    self._skip = 1 << self._misses
                await wait_readable(self._read_fd)
                continue
            except OSError:
                chunk = b""
            if not chunk:
                if self._buffer:
                    self._buffer.clear()
                return None
            self._buffer += chunk

    def receive_blocking(self, timeout: float | None = None) -> dict[str, Any] | None:
        """:meth:`receive` without an event loop (the worker's first message, rendering).

        Raises:
            TimeoutError: no whole message came within ``timeout`` seconds.
        """
        import select

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self._take()
            if message is not None:
                return message
            try:
                chunk = os.read(self._read_fd, _CHUNK)
            except BlockingIOError:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError from None
                select.select([self._read_fd], [], [], left)
                continue
            if not chunk:
                return None
            self._buffer += chunk

    def send_nowait(self, message: Mapping[str, Any]) -> bool:
        """Write ``message`` if the pipe takes it now; queue it otherwise.

        Returns:
            ``True`` when everything queued so far has been written.

        Raises:
            MessageTooLargeError: the message is over :attr:`limit`.
            BrokenPipeError: the other side is gone.
        """
        data = encode(message, limit=self.limit)
        if self._out or self._flushing:
            self._out += data
            return False
        try:
            written = os.write(self._write_fd, data)
        except BlockingIOError:
            written = 0
        if written == len(data):
            return True
        self._out += data[written:]
        return False

    def send_blocking(self, message: Mapping[str, Any], timeout: float | None = None) -> None:
        """:meth:`send` without an event loop (the audit's threads, rendering).

        Raises:
            MessageTooLargeError: the message is over :attr:`limit`.
            BrokenPipeError: the other side is gone.
            TimeoutError: the message was not written within ``timeout`` seconds (the
                channel is then unusable: it may hold part of it).
        """
        import select

        deadline = None if timeout is None else time.monotonic() + timeout
        self.send_nowait(message)
        while self._out:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError
            select.select([], [self._write_fd], [], left)
            with contextlib.suppress(BlockingIOError):
                del self._out[: os.write(self._write_fd, self._out)]

    async def send(self, message: Mapping[str, Any]) -> None:
        """Write ``message`` (and anything queued before it), waiting while the pipe is full.

        Raises:
            MessageTooLargeError: the message is over :attr:`limit`.
            BrokenPipeError: the other side is gone.
        """
        if self.send_nowait(message) or self._flushing:
            return
        await self.flush()

    async def flush(self) -> None:
        """Write whatever is queued."""
        from anyio import wait_writable

        if self._flushing:
            return
        self._flushing = True
        try:
            while self._out:
                try:
                    written = os.write(self._write_fd, self._out)
                except BlockingIOError:
                    await wait_writable(self._write_fd)
                    continue
                del self._out[:written]
        finally:
            self._flushing = False

    def close(self) -> None:
        """Close both descriptors (idempotent)."""
        for fd in {self._read_fd, self._write_fd}:
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._read_fd = self._write_fd = -1
