"""The transports of mounted servers, every message bounded in size.

**stdio.**
The SDK's stdio client keeps reading a line until its newline, so a server writing 300 MB
without one grows the host by that much. This transport reads the server's stdout in 64 KiB
chunks and never holds more than ``max_message`` bytes of one line: a longer line is dropped
as it arrives, and when its first bytes name a request ``id`` that request gets an error
answer at once (the rest of the connection goes on). Everything else is what the SDK does:
newline-delimited JSON-RPC, the server in its own process group (so its children end with
it), stdin closed at the end, then ``SIGTERM`` to the group and ``SIGKILL`` 2 s later.

POSIX only; elsewhere :func:`stdio_transport` is the SDK's own client. The server's stderr
goes through a :class:`StderrPump`, which logs it line by line, lines cut at
:data:`MAX_STDERR_LINE` bytes.

**HTTP.** :func:`capped_transport` bounds the plain (non-SSE) response bodies of the SDK's
streamable HTTP client the same way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, TextIO

import anyio
import anyio.abc
import mcp_types as types
from mcp.shared.message import SessionMessage

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "MAX_STDERR_LINE",
    "StderrPump",
    "capped_transport",
    "stdio_transport",
]

DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024
"""Bytes one message from a mounted stdio server may take (a longer one is refused)."""

_CHUNK = 65536
_GRACE = 2.0  # seconds after stdin closes, and again after SIGTERM
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _oversize_answer(head: bytes, limit: int) -> SessionMessage | Exception:
    """An error answer for the request a too-long line answered, if its start names it."""
    text = f"the server's message is larger than {limit} bytes and was dropped"
    match = _ID.search(head[:512])
    if match is None:
        return ValueError(text)
    raw = match.group(1)
    try:
        ident: int | str = int(raw) if raw[:1] != b'"' else raw[1:-1].decode()
    except (ValueError, UnicodeDecodeError):
        return ValueError(text)
    error = types.ErrorData(code=types.INTERNAL_ERROR, message=text)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=ident, error=error))


class _Lines:
    """Cuts a byte stream into lines of at most ``limit`` bytes, holding no more than that of
    one line: a longer line is reported once, by its first ``head`` bytes, as soon as it goes
    over, and the rest of it is dropped as it arrives."""

    __slots__ = ("cut", "head", "limit", "pending")

    def __init__(self, limit: int, *, head: int) -> None:
        self.limit = limit
        self.head = head
        self.pending = bytearray()  # the start of the current line
        self.cut = False  # the current line went over the bound: skip to its newline

    def feed(self, chunk: bytes) -> Iterator[tuple[bytes, bool]]:
        """What ``chunk`` completes: ``(line, True)`` for each line that ends in it (without
        its newline), ``(start, False)`` for a line that went over the bound in it."""
        pending, head = self.pending, self.head
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if end >= 0 and not pending and not self.cut and len(piece) <= self.limit:
                yield piece, True  # the common case: a whole line in one chunk, no copy
                start = end + 1
                continue
            if not self.cut:
                if len(pending) + len(piece) > self.limit:
                    yield bytes(pending[:head]) + piece[: max(0, head - len(pending))], False
                    pending.clear()
                    self.cut = True
                else:
                    pending += piece
            if end < 0:
                return
            if not self.cut:
                yield bytes(pending), True
            pending.clear()
            self.cut = False
            start = end + 1


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # not JSON, nested too deep, not JSON-RPC
        return exc


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, wait, then ``SIGTERM`` the group, wait, then ``SIGKILL`` it."""
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
    with anyio.move_on_after(_GRACE):
        await process.wait()
    for signum in (signal.SIGTERM, signal.SIGKILL):
        if process.returncode is not None:
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signum)
        with anyio.move_on_after(_GRACE):
            await process.wait()
    # Whatever the group left behind (a child that outlived the server) goes too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def _bounded_stdio(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    errlog: TextIO,
    max_message: int,
) -> AsyncIterator[Any]:
    process = await anyio.open_process(
        [command, *args],
        env=dict(env),
        cwd=cwd,
        stderr=errlog.fileno(),
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        assert process.stdout is not None
        lines = _Lines(max_message, head=512)
        async with read_writer:
            try:
                async for chunk in process.stdout:
                    for line, whole in lines.feed(chunk):
                        if not whole:
                            await read_writer.send(_oversize_answer(line, max_message))
                        elif line.strip():
                            await read_writer.send(_parse(line))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the end instead of waiting

    async with process, anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await write_stream.aclose()
                await _stop(process)
                await read_stream.aclose()
            tg.cancel_scope.cancel()


def stdio_transport(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    errlog: TextIO,
    *,
    max_message: int = DEFAULT_MAX_MESSAGE,
) -> Any:
    """A transport (for the SDK's ``Client``) to a server started as ``command args``.

    Args:
        command: the program.
        args: its arguments.
        env: its whole environment.
        cwd: its working directory.
        errlog: where its stderr goes (a file with a descriptor).
        max_message: the most bytes one message may take.
    """
    if sys.platform == "win32":  # pragma: no cover - the SDK's client (unbounded lines)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=command, args=list(args), env=dict(env), cwd=cwd)
        return stdio_client(params, errlog=errlog)
    return _bounded_stdio(command, args, env, cwd, errlog, max_message)


MAX_STDERR_LINE = 8192
"""Bytes of one stderr line of a stdio server that are logged; the rest of the line is dropped."""

_STDERR_CHUNK = 65536


class StderrPump:
    """A pipe whose read end is logged line by line, for a stdio server's stderr.

    Read in bounded chunks: a line longer than :data:`MAX_STDERR_LINE` is logged cut, and the
    rest of it is discarded as it arrives, so a server writing without newlines cannot grow
    the host's memory.
    """

    def __init__(self, server: str) -> None:
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w")
        self._logger = logging.getLogger(f"customtools.mcp.server.{server}")
        self._read_fd = read_fd
        self._thread = threading.Thread(target=self._pump, name=f"mcp-stderr-{server}", daemon=True)
        self._thread.start()

    def _emit(self, line: bytes, cut: bool) -> None:
        text = line.decode("utf-8", errors="replace").rstrip("\r")
        if cut:
            text += f" [line cut at {MAX_STDERR_LINE} bytes]"
        self._logger.info("%s", text)

    def _pump(self) -> None:
        lines = _Lines(MAX_STDERR_LINE, head=MAX_STDERR_LINE)
        try:
            while True:
                chunk = os.read(self._read_fd, _STDERR_CHUNK)
                if not chunk:
                    break
                for line, whole in lines.feed(chunk):
                    self._emit(line, not whole)
            if lines.pending and not lines.cut:
                self._emit(bytes(lines.pending), False)
        finally:
            os.close(self._read_fd)

    def close(self) -> None:
        # The child holds its own copy: the reader ends when the child exits.
        self.writer.close()


def capped_transport(limit: int, inner: Any = None) -> Any:
    """An httpx2 transport whose plain (non-SSE) response bodies may take at most ``limit``
    bytes: reading more raises ``httpx2.StreamError``, which the SDK turns into an error for
    that request. Server-sent event streams are left to the SDK, which bounds each event."""
    import httpx2

    class CappedBody(httpx2.AsyncByteStream):
        def __init__(self, body: Any) -> None:
            self._body = body

        async def __aiter__(self) -> Any:
            seen = 0
            chunks = self._body.__aiter__()
            try:
                async for chunk in chunks:
                    seen += len(chunk)
                    if seen > limit:
                        raise httpx2.StreamError(
                            f"the server's response is larger than {limit} bytes and was dropped"
                        )
                    yield chunk
            finally:
                close = getattr(chunks, "aclose", None)
                if close is not None:
                    await close()  # not left to the garbage collector (trio warns)

        async def aclose(self) -> None:
            await self._body.aclose()

    class CappedTransport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = inner if inner is not None else httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            response = await self._inner.handle_async_request(request)
            kind = response.headers.get("content-type", "").lower()
            if not kind.startswith("text/event-stream"):
                response.stream = CappedBody(response.stream)
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    return CappedTransport()
