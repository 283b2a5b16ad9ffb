"""The stdio transport of mounted servers, with every message bounded in size.

The SDK's stdio client keeps reading a line until its newline, so a server writing 300 MB
without one grows the host by that much. This transport reads the server's stdout in 64 KiB
chunks and never holds more than ``max_message`` bytes of one line: a longer line is dropped
as it arrives, and when its first bytes name a request ``id`` that request gets an error
answer at once (the rest of the connection goes on). Everything else is what the SDK does:
newline-delimited JSON-RPC, the server in its own process group (so its children end with
it), stdin closed at the end, then ``SIGTERM`` to the group and ``SIGKILL`` 2 s later.

POSIX only; elsewhere :func:`stdio_transport` is the SDK's own client.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, TextIO

import anyio
import anyio.abc
import mcp_types as types
from mcp.shared.message import SessionMessage

__all__ = ["DEFAULT_MAX_MESSAGE", "stdio_transport"]

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
        pending = bytearray()
        dropping = False  # the current line went over the bound: skip to its newline
        async with read_writer:
            try:
                async for chunk in process.stdout:
                    start = 0
                    while True:
                        end = chunk.find(b"\n", start)
                        piece = chunk[start:] if end < 0 else chunk[start:end]
                        if end >= 0 and not pending and not dropping and len(piece) <= max_message:
                            # The common case: a whole line in one chunk, no copy.
                            if piece.strip():
                                await read_writer.send(_parse(piece))
                            start = end + 1
                            continue
                        if not dropping:
                            if len(pending) + len(piece) > max_message:
                                head = bytes(pending[:512]) + piece[: max(0, 512 - len(pending))]
                                pending.clear()
                                dropping = True
                                await read_writer.send(_oversize_answer(head, max_message))
                            else:
                                pending += piece
                        if end < 0:
                            break
                        if not dropping and pending.strip():
                            await read_writer.send(_parse(bytes(pending)))
                        pending.clear()
                        dropping = False
                        start = end + 1
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
