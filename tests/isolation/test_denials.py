"""Every sandbox denial names the operation attempted, the resolved path and the permission.

One pack, one worker: a tool runs one operation by name and lets the error escape, so the
worker's guard reports it. Each row of the table is what the model reads.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from customtools import CustomToolAdapter
from customtools._isolation._confine import landlock_abi
from customtools._isolation._pool import IsolationPool
from customtools._loading._loader import load_custom_tools

from ._helpers import options

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or landlock_abi() < 6,
        reason="needs Linux with Landlock ABI >= 6",
    ),
]

PACK = """
import os, socket, subprocess
from customtools import tool
from customtools.isolation import Permissions

PERMISSIONS = Permissions(read=["."], write=["out"])

@tool
def attempt(code: str) -> str:
    \"\"\"Run one operation; its error escapes.\"\"\"
    exec(code, {"os": os, "socket": socket, "subprocess": subprocess})
    return "done"
"""


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server
    finally:
        server.close()


async def test_every_denial_names_the_operation_the_path_and_the_permission(
    tmp_path: Path, listener: socket.socket
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    (project / "out").mkdir(parents=True)
    (project / "notes.txt").write_text("notes")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SECRET KEY")
    (project / "out" / "key").symlink_to(home / ".ssh" / "id_rsa")
    (project / "pack.py").write_text(PACK)
    port = listener.getsockname()[1]
    host = os.getpid()
    p = str(project)
    # (code, the start of what the model reads, permission, details["path"])
    table = [
        ("open('c.txt', 'w')", f"denied writing `{p}/c.txt`", "write", f"{p}/c.txt"),
        ("os.mkdir('notes')", f"denied creating the directory `{p}/notes`", "write", None),
        (
            "open(os.path.expanduser('~/.ssh/authorized_keys'), 'a')",
            "denied writing `~/.ssh/authorized_keys`",
            "write",
            None,
        ),
        (
            "open('out/key').read()",
            f"denied reading `~/.ssh/id_rsa` (through `{p}/out/key`)",
            "read",
            str(home / ".ssh" / "id_rsa"),
        ),
        (
            "open(os.path.expanduser('~/.ssh/id_rsa'))",
            "denied reading `~/.ssh/id_rsa`",
            "read",
            None,
        ),
        ("os.listdir(os.path.expanduser('~'))", "denied listing `~`", "read", None),
        (
            "os.rename('notes.txt', 'out/notes.txt')",
            f"denied renaming `{p}/notes.txt` to `{p}/out/notes.txt`",
            "write",
            f"{p}/notes.txt",
        ),
        ("os.remove('notes.txt')", f"denied deleting `{p}/notes.txt`", "write", None),
        (
            "os.chmod('notes.txt', 0o777)",
            f"denied changing the mode of `{p}/notes.txt`",
            "write",
            None,
        ),
        (
            "os.utime('notes.txt', (0, 0))",
            f"denied changing the times of `{p}/notes.txt`",
            "write",
            None,
        ),
        (
            "os.setxattr('notes.txt', 'user.x', b'x')",
            f"denied changing the extended attributes of `{p}/notes.txt`",
            "write",
            None,
        ),
        (
            "os.symlink('notes.txt', 'link')",
            f"denied creating the symbolic link `{p}/link`",
            "write",
            None,
        ),
        ("os.truncate('notes.txt', 0)", f"denied truncating `{p}/notes.txt`", "write", None),
        ("subprocess.run(['/bin/true'])", "denied starting `", "run", None),
        (
            f"socket.create_connection(('127.0.0.1', {port}), timeout=5)",
            f"denied connecting to 127.0.0.1 port {port}: it needs the `net` permission for TCP"
            f" port {port}",
            "net",
            None,
        ),
        (
            "socket.socket(socket.AF_UNIX)",
            "denied opening a UNIX socket: no permission",
            "scope",
            None,
        ),
        (
            "socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)",
            "denied opening an IPv4 socket of protocol 262 (only TCP and UDP sockets are allowed)",
            "scope",
            None,
        ),
        (
            "socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)",
            "denied calling `socket.socketpair`: no permission",
            "scope",
            None,
        ),
        (f"os.kill({host}, 0)", f"denied signalling process {host}: no permission", "scope", None),
        (
            f"open('/proc/{host}/environ', 'rb')",
            f"denied reading `/proc/{host}/environ`: no permission allows it",
            "scope",
            None,
        ),
    ]
    needs = {
        "read": "it needs the `read` permission for it; ",
        "write": "it needs the `write` permission for it; ",
        "run": "it needs `run=True`; ",
        "net": "it needs the `net` permission",
        "scope": "no permission allows it (it is outside every sandbox); ",
    }
    async with IsolationPool(**options()) as pool:
        result = await load_custom_tools(
            [str(project / "pack.py")], cwd=p, home=str(home), isolation=pool, sandbox=True
        )
        adapter = CustomToolAdapter(result.get("attempt").tool, timeout=30)
        for code, start, permission, path in table:
            done = await adapter.execute("call", {"code": code})
            text = "".join(getattr(block, "text", "") for block in done.content)
            assert done.is_error, code
            assert text.startswith(start), (code, text)
            assert needs[permission] in text, (code, text)
            assert text.endswith(
                f"this pack may read the project `{p}`, write `{p}/out` and its temporary"
                " directory, no network, start no programs (declared in"
                f" {project / 'pack.py'})"
            ), (code, text)
            assert done.details["error"] == "SandboxDenied"
            assert done.details["permission"] == permission, (code, done.details)
            assert text == f"denied {done.details['operation']}: " + text.split(": ", 1)[1]
            if path is not None:
                assert done.details["path"] == path
        # What the policy grants stays an ordinary error: a missing file in the write set.
        done = await adapter.execute("call", {"code": "open('out/missing.txt')"})
        assert done.details["error"] == "FileNotFoundError"
        assert not (project / "c.txt").exists()
        assert not (project / "notes").exists()
        assert (project / "notes.txt").read_text() == "notes"
