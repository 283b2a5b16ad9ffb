"""A hand-written, misbehaving MCP server for the mount's bounds (newline-delimited JSON-RPC).

Usage: python hostile_server.py MODE. It answers the handshake (``initialize``; the modern
``server/discover`` probe gets "method not found", so clients fall back to the handshake),
then, by MODE:

* ``stall-list``: never answers ``tools/list``;
* ``deep-list``: answers ``tools/list`` with JSON nested far past any parser's depth;
* ``stderr-flood``: writes 64 MiB to stderr without a newline, then one short line, then
  lists one tool;
* ``names``: lists ``ok``, ``dup`` twice, an empty name and a tool whose input schema is an
  array (which fails the SDK's validation of the whole result);
* ``many``: lists 3 pages of 40 tools each;
* ``bad-structured``: lists ``shaped`` with an output schema and answers its calls with
  structured content that breaks it (and ``ok`` calls normally);
* ``slow-close``: ignores the end of its stdin and SIGTERM, as a server stuck on shutdown;
* ``huge-reply``: answers a call of ``huge`` with a 64 MiB line (and ``ok`` normally).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

MODE = sys.argv[1]
OBJECT = {"type": "object", "properties": {}}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name: str, schema: Any = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": OBJECT if schema is None else schema, **extra}


def listing(params: dict[str, Any]) -> dict[str, Any] | None:
    if MODE == "stall-list":
        return None
    if MODE == "names":
        return {
            "tools": [
                tool("ok"),
                tool("dup"),
                tool("dup", description="the second"),
                tool(""),
                tool("arrayish", {"type": "array"}),
            ]
        }
    if MODE == "many":
        page = int(params.get("cursor") or 0)
        result: dict[str, Any] = {"tools": [tool(f"t{page}_{i}") for i in range(40)]}
        if page < 2:
            result["nextCursor"] = str(page + 1)
        return result
    if MODE == "huge-reply":
        return {"tools": [tool("huge"), tool("ok")]}
    if MODE == "bad-structured":
        shaped = tool(
            "shaped",
            outputSchema={
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
            },
        )
        return {"tools": [shaped, tool("ok")]}
    return {"tools": [tool("ok")]}


def call(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("name") == "shaped":
        return {
            "content": [{"type": "text", "text": "not a number"}],
            "structuredContent": {"n": "not a number"},
        }
    return {"content": [{"type": "text", "text": "fine"}]}


def main() -> None:
    if MODE == "slow-close":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "stderr-flood":
        block = b"x" * (1 << 20)
        for _ in range(64):
            os.write(2, block)
        os.write(2, b"\nafter the flood\n")
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if ident is None:
            continue  # a notification
        if method == "initialize":
            result: dict[str, Any] | None = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif method == "tools/list":
            if MODE == "deep-list":
                depth = 100_000
                head = '{"jsonrpc": "2.0", "id": ' + json.dumps(ident) + ', "result": {"tools": '
                sys.stdout.write(head + "[" * depth + "]" * depth + "}}\n")
                sys.stdout.flush()
                continue
            result = listing(params)
            if result is None:
                continue  # stall
        elif method == "tools/call":
            if MODE == "huge-reply" and params.get("name") == "huge":
                head = '{"jsonrpc": "2.0", "id": ' + json.dumps(ident)
                sys.stdout.write(head + ', "result": {"content": [{"type": "text", "text": "')
                block = "x" * (1 << 20)
                for _ in range(64):
                    sys.stdout.write(block)
                sys.stdout.write('"}]}}\n')
                sys.stdout.flush()
                continue
            result = call(params)
        elif method == "ping":
            result = {}
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "error": {"code": -32601, "message": f"Method not found: {method}"},
                }
            )
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})
    if MODE == "slow-close":
        time.sleep(60)


main()
