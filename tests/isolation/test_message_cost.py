"""A message's cost in host memory is bounded by the limit it was checked against (review L1):
values are counted before decoding, and the host's peak RSS is measured in a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from customtools import CustomToolAdapter
from customtools._isolation._pool import IsolationPool
from customtools._isolation._wire import (
    BYTES_PER_VALUE,
    MessageTooLargeError,
    check_values,
    encode,
)

from ._helpers import load, options, write

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024

PROBE = """
import os, sys, anyio
from customtools._isolation._wire import Channel, MessageTooLargeError

def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) * 1024

LIMIT = 16 * 1024 * 1024
body = sys.stdin.buffer.read()
frame = len(body).to_bytes(4, 'big') + body
del body
read_fd, write_fd = os.pipe()
_, unused_fd = os.pipe()
channel = Channel(read_fd, unused_fd, limit=LIMIT)
writer = os.fdopen(write_fd, 'wb')

async def main():
    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, lambda: (writer.write(frame), writer.close()))
        try:
            message = await channel.receive()
            outcome = 'decoded %d' % len(message['v'])
        except MessageTooLargeError as exc:
            outcome = 'refused: ' + str(exc)
    return outcome

before = hwm()
outcome = anyio.run(main)
print(hwm() - before)
print(outcome)
"""


def peak_growth(body: bytes) -> tuple[int, str]:
    """The growth of VmHWM (bytes) of a fresh host receiving ``body`` as one framed message
    (limit 16 MiB), and what happened."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        input=body,
        capture_output=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    growth, outcome = out.stdout.decode().splitlines()
    return int(growth), outcome


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux-only")
def test_a_message_of_many_small_values_is_refused_before_decoding() -> None:
    # The review's bomb: ~15 MiB of `{},` decodes to ~26x its size; the limit is 16 MiB.
    count = 15 * MIB // 3
    body = b'{"op":"result","id":1,"v":[' + b"{}," * (count - 1) + b"{}]}"
    growth, outcome = peak_growth(body)
    assert outcome.startswith("refused: a message of ")
    assert "JSON values" in outcome
    assert growth < 4 * 16 * MIB, growth  # decoding it would have cost ~400 MB


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux-only")
def test_a_large_message_of_few_values_still_decodes_within_the_bound() -> None:
    # 14 MiB of text full of commas and brackets (inside strings, so they are not values).
    text = "a, [b], {c}, " * (14 * MIB // 13)
    body = json.dumps({"op": "result", "id": 1, "v": [text]}).encode()
    growth, outcome = peak_growth(body)
    assert outcome == "decoded 1"
    assert growth < 4 * 16 * MIB, growth


def test_values_are_counted_outside_strings_only() -> None:
    limit = 4 * MIB
    cap = limit // BYTES_PER_VALUE
    prose = json.dumps({"t": "x," * (2 * MIB)}).encode()  # 2M commas, all inside a string
    check_values(prose, limit)
    many = b"[" + b"0," * MIB + b"0]"  # over 1 MiB (smaller messages are not counted)
    assert cap < MIB
    with pytest.raises(MessageTooLargeError, match="JSON values"):
        check_values(many, limit)
    with pytest.raises(MessageTooLargeError, match="JSON values"):
        encode({"op": "result", "v": [0] * MIB}, limit=limit)
    encode({"op": "result", "v": [0] * (cap // 2), "t": "y" * MIB}, limit=limit)  # fine


@pytest.mark.anyio
async def test_a_result_of_too_many_values_is_an_error_result_in_the_worker(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "many.py",
        """
        from customtools import ToolResult

        def factory(api):
            def many(call_id, params, on_update, ctx, signal):
                return ToolResult.from_text("many", details={"v": [{} for _ in range(400_000)]})
            return CustomTool(name="many", execute=many)
        """,
    )
    async with IsolationPool(**options(max_message_mib=4)) as pool:
        result = await load(pool, tmp_path, "many.py")
        pid = pool.pids[0]
        outcome = await CustomToolAdapter(result.tools[0].tool).execute("1", {})
        assert outcome.is_error
        assert outcome.details["error"] == "MessageTooLarge"
        assert "JSON values" in outcome.text
        assert pool.pids == (pid,)  # refused in the worker; nothing was killed
