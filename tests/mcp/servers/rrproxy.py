"""A small HTTP load balancer for the replica tests: ``python rrproxy.py BACKEND...``.

Listens on a loopback port the system gives it (printed on stdout, one line) and forwards each
request to the next backend in turn (round robin, per request, not per connection), streaming
the response back. A request carrying an ``Mcp-Session-Id`` the proxy has seen goes to the
backend that issued it (sticky sessions, as a load balancer hashing that header does). A
backend whose connection fails before it answers (refused, or reset by a killed process) is
skipped, as a health-checked balancer would; when none answers, the client gets ``502``.

Two paths are the proxy's own: ``GET /_proxy/log`` (JSON: for each forwarded request, the
backend index and the JSON-RPC method) and ``POST /_proxy/drop`` (ends every response being
streamed, as a dropped connection would).
"""

from __future__ import annotations

import itertools
import json
import socket
import sys
from typing import Any

import anyio
import httpx2
import uvicorn

_HOP = {b"host", b"connection", b"keep-alive", b"transfer-encoding", b"content-length"}


class Proxy:
    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        self.turn = itertools.cycle(range(len(backends)))
        self.sessions: dict[str, int] = {}
        self.log: list[dict[str, Any]] = []
        self.drops: set[anyio.Event] = set()
        self.client: httpx2.AsyncClient | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(60, connect=2))
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    if self.client is not None:
                        await self.client.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["path"] == "/_proxy/log":
            await self.reply(send, 200, json.dumps(self.log).encode())
            return
        if scope["path"] == "/_proxy/drop":
            dropped = len(self.drops)
            for drop in list(self.drops):
                drop.set()
            await self.reply(send, 200, json.dumps({"dropped": dropped}).encode())
            return
        await self.forward(scope, receive, send)

    async def reply(self, send: Any, status: int, body: bytes) -> None:
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def forward(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP]
        session = dict(scope["headers"]).get(b"mcp-session-id", b"").decode() or None
        first = self.sessions.get(session) if session else None
        if first is None:
            first = next(self.turn)
        order = [(first + i) % len(self.backends) for i in range(len(self.backends))]
        try:
            method = json.loads(body).get("method") if body else None
        except (ValueError, AttributeError):
            method = None
        assert self.client is not None
        query = f"?{scope['query_string'].decode()}" if scope.get("query_string") else ""
        response = None
        for index in order:
            request = self.client.build_request(
                scope["method"], self.backends[index] + scope["path"] + query,
                headers=headers, content=body,
            )  # fmt: skip
            try:
                response = await self.client.send(request, stream=True)
            except httpx2.TransportError:
                continue  # no answer: the backend is gone
            self.log.append({"backend": index, "method": method, "http": scope["method"]})
            break
        if response is None:
            await self.reply(send, 502, b'{"error": "no backend answers"}')
            return
        issued = response.headers.get("mcp-session-id")
        if issued:
            self.sessions[issued] = index
        out = [(k.encode(), v.encode()) for k, v in response.headers.items()]
        out = [(k, v) for k, v in out if k.lower() not in _HOP]
        await send({"type": "http.response.start", "status": response.status_code, "headers": out})
        drop = anyio.Event()
        self.drops.add(drop)
        try:
            async with anyio.create_task_group() as group:

                async def pump() -> None:
                    try:
                        async for chunk in response.aiter_raw():
                            await send(
                                {"type": "http.response.body", "body": chunk, "more_body": True}
                            )
                    except httpx2.HTTPError:
                        pass  # the backend went away: the response ends here
                    group.cancel_scope.cancel()

                async def dropped() -> None:
                    await drop.wait()
                    group.cancel_scope.cancel()

                group.start_soon(pump)
                group.start_soon(dropped)
        finally:
            self.drops.discard(drop)
            with anyio.CancelScope(shield=True):
                await response.aclose()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def main() -> None:
    proxy = Proxy(sys.argv[1:])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # the system's port: parallel tests never collide
    sock.listen(128)  # connections wait in the backlog until uvicorn serves them
    sys.stdout.write(f"{sock.getsockname()[1]}\n")
    sys.stdout.flush()
    config = uvicorn.Config(proxy, log_level="warning", lifespan="on", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
