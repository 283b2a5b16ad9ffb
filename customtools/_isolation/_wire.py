"""The worker protocol's framing: length-prefixed JSON messages over a pair of pipes.

Each message is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (one
object with an ``"op"`` key). Both ends use :class:`Channel`, which reads and writes raw
non-blocking file descriptors through ``anyio.lowlevel.wait_readable``/``wait_writable``:
no stream objects, no threads, and reads that a cancellation cannot tear (partial data stays
buffered until the whole message is there).

Messages (``id`` numbers a request; replies carry the same ``id``)::

    host -> worker   {"op": "load", "id", "candidate", "cwd", "loadTimeout",
                      "reviewed"?: {"root", "files": {real path: sha256}}}
                     {"op": "call", "id", "tool", "callId", "params", "ctx", "trace"?}
                     {"op": "abort", "id", "reason", "timeout": bool}
                     {"op": "session", "id", "tool", "event"}
    worker -> host   {"op": "ready", "pid"}
                     {"op": "loaded", "id", "tools", "errors", "diagnostics",
                      "unreviewed": [paths refused: changed since the grant]}
                     {"op": "update", "id", "result"}
                     {"op": "result", "id", "result"}        (the call is over, thread and all)
                     {"op": "ctxAbort", "id", "reason"}
                     {"op": "hook", "id", "error": str | null}
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from typing import Any, Final

__all__ = [
    "BYTES_PER_VALUE",
    "MAX_MESSAGE",
    "Channel",
    "MessageTooLargeError",
    "candidate_from_dict",
    "check_values",
    "encode",
]

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


def encode(message: dict[str, Any], *, limit: int = MAX_MESSAGE) -> bytes:
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
        self, read_fd: int, write_fd: int, *, limit: int = MAX_MESSAGE, spin: float = 0.0
    ) -> None:
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

    def receive_blocking(self) -> dict[str, Any] | None:
        """:meth:`receive` without an event loop (the worker's first message)."""
        import select

        while True:
            message = self._take()
            if message is not None:
                return message
            try:
                chunk = os.read(self._read_fd, _CHUNK)
            except BlockingIOError:
                select.select([self._read_fd], [], [])
                continue
            if not chunk:
                return None
            self._buffer += chunk

    def send_nowait(self, message: dict[str, Any]) -> bool:
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

    async def send(self, message: dict[str, Any]) -> None:
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


def candidate_from_dict(data: dict[str, Any]) -> Any:
    """Rebuild a loader ``Candidate`` from its ``to_dict()`` form."""
    from customtools._loading._records import Candidate, ToolSource

    source = data["source"]
    return Candidate(
        path=data["path"],
        resolved_path=data["resolvedPath"],
        kind=data["kind"],
        entry_point=data.get("entryPoint"),
        root=data.get("root"),
        source=ToolSource(
            provider=source["provider"],
            provider_name=source["providerName"],
            level=source["level"],
            plugin_name=source.get("pluginName"),
            plugin_version=source.get("pluginVersion"),
            distribution=source.get("distribution"),
        ),
    )
