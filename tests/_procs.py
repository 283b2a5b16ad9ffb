"""Reading /proc in tests: which processes are alive, whose child they are, what they run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path


def processes() -> Iterator[tuple[int, list[bytes]]]:
    """Each process's pid and its ``/proc/<pid>/stat`` fields after the command name
    (``fields[0]`` is the state, ``fields[1]`` the parent, ``fields[2]`` the group)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue  # ended while we looked
        yield int(entry), stat[stat.rfind(b")") + 2 :].split()


def pids_in_group(pgid: int) -> list[int]:
    """Live (non-zombie) processes of group ``pgid``."""
    return [pid for pid, fields in processes() if int(fields[2]) == pgid and fields[0] != b"Z"]


def zombie_children() -> list[int]:
    """Children of this process that exited and were not reaped."""
    me = os.getpid()
    return [pid for pid, fields in processes() if int(fields[1]) == me and fields[0] == b"Z"]


def processes_with(token: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds ``token``."""
    found = []
    for pid, fields in processes():
        if fields[0] == b"Z":
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            found.append(pid)
    return found
