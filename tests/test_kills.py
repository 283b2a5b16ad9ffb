"""The kill thread: a scheduled kill happens without any event loop, or is withdrawn."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from customtools._exec import _group_has_live_members
from customtools._kills import MARGIN, pending_kills, schedule_kill


def start_group() -> subprocess.Popen[bytes]:
    # A shell that ignores TERM, with a grandchild: only SIGKILL to the group ends them.
    return subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 30 & wait"], start_new_session=True)


def test_a_scheduled_kill_kills_the_group_and_reaps_the_leader() -> None:
    proc = start_group()
    kill = schedule_kill(proc.pid, 0.05, popen=proc)
    assert kill.done.wait(5 + MARGIN)
    assert kill.fired
    assert proc.returncode == -9  # reaped by the kill thread: no zombie
    deadline = time.monotonic() + 5
    while _group_has_live_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _group_has_live_members(proc.pid)  # the grandchild died too


def test_a_withdrawn_kill_does_nothing() -> None:
    proc = start_group()
    try:
        kill = schedule_kill(proc.pid, 0.05, popen=proc)
        kill.withdraw()
        assert kill.done.wait(5)
        assert not kill.fired
        assert proc.poll() is None
        assert pending_kills() == 0
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(5)


def test_pending_kills_are_carried_out_at_exit() -> None:
    # A child interpreter schedules a kill far in the future and exits at once: the group
    # must not outlive it.
    code = (
        "import subprocess, sys\n"
        "from customtools._kills import schedule_kill\n"
        "p = subprocess.Popen(['sh', '-c', \"trap '' TERM; sleep 30 & wait\"],"
        " start_new_session=True)\n"
        "schedule_kill(p.pid, 60)\n"
        "print(p.pid, flush=True)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    pgid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 5
    while _group_has_live_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _group_has_live_members(pgid)
