"""The kernel boundaries of a sandboxed worker, for every permission set.

Each test loads probe packs (one tool that runs a snippet inside the worker and reports what
happened) on the real kernel, and checks from inside what other processes, the keyrings,
sockets and file metadata the worker can reach. A worker with ports declared shares the
host's network namespace, so it is the case that matters most: it must be as separated from
the host as one without network.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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

PROBE = '''
import contextlib, io
from customtools import tool
{prelude}

@tool
def {name}(code: str) -> str:
    """Run a snippet; what it prints, or the exception it raised."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(code, {{}})
        except OSError as exc:
            print(f"{{type(exc).__name__}} {{exc.errno}}")
    return out.getvalue().strip()
'''

# Every permission set: no network (own network namespace), ports (the host's network
# namespace), all of the network.
PERMISSION_SETS = ("None", "Permissions(net=[{port}])", "Permissions(net='all')")


def probe_pack(directory: Path, name: str, permissions: str) -> Path:
    prelude = (
        ""
        if permissions == "None"
        else f"from customtools.isolation import Permissions\nPERMISSIONS = {permissions}\n"
    )
    path = directory / name
    path.write_text(PROBE.format(prelude=prelude, name=path.stem))
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home


async def load_probes(
    pool: IsolationPool, project: Path, home: Path, permissions: dict[str, str]
) -> dict[str, Any]:
    """name -> (adapter of its probe, worker pid) for each pack ``name: permissions``."""
    paths = [str(probe_pack(project, f"{name}.py", perms)) for name, perms in permissions.items()]
    result = await load_custom_tools(
        paths, cwd=str(project), home=str(home), isolation=pool, sandbox=True
    )
    assert result.errors == ()
    adapters = {}
    for loaded in result.tools:
        name = Path(loaded.path).stem
        adapters[name] = CustomToolAdapter(loaded.tool, timeout=30)
    return adapters


async def run(adapter: CustomToolAdapter, code: str) -> str:
    result = await adapter.execute("probe", {"code": code})
    return "".join(getattr(block, "text", "") for block in result.content)


def pids_of(pool: IsolationPool) -> dict[str, int]:
    return {
        Path(source.candidate.path).stem: source.pid
        for source in pool.sources
        if source.pid is not None
    }


# Files of /proc/<pid> that hold a process's secrets or let one act on it.
PRIVATE_PROC_FILES = (
    "environ",
    "auxv",
    "maps",
    "smaps",
    "numa_maps",
    "pagemap",
    "mem",
    "io",
    "syscall",
    "stack",
    "personality",
    "cwd",
    "root",
    "exe",
    "fd/0",
)


async def test_no_worker_reads_the_private_proc_files_of_the_host_or_of_another_worker(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home = dirs
    monkeypatch.setenv("HOST_ONLY_TOKEN", "host-secret-token")
    sets = {f"pack{index}": perms.format(port=8443) for index, perms in enumerate(PERMISSION_SETS)}
    async with IsolationPool(**options()) as pool:
        adapters = await load_probes(pool, project, home, sets)
        pids = pids_of(pool)
        assert sorted(pids) == sorted(sets)
        for name, adapter in adapters.items():
            others = {"host": os.getpid(), **{n: p for n, p in pids.items() if n != name}}
            for owner, pid in others.items():
                for file in PRIVATE_PROC_FILES:
                    code = (
                        f"with open('/proc/{pid}/{file}', 'rb') as handle:\n"
                        "    print('READ', handle.read(64))"
                    )
                    seen = await run(adapter, code)
                    assert not seen.startswith("READ"), (sets[name], owner, file, seen)
            # Its own files stay readable: the boundary is the process, not /proc.
            own = await run(adapter, "print(len(open('/proc/self/environ', 'rb').read()) > 0)")
            assert own == "True"


async def test_with_ports_declared_root_holds_no_capabilities_and_no_keyring(
    dirs: tuple[Path, Path], listener: socket.socket
) -> None:
    project, home = dirs
    port = listener.getsockname()[1]
    with session_key(b"customtools-test-session-key", b"TOPSECRET") as key:
        async with IsolationPool(**options()) as pool:
            # A terminal of its own to try TIOCSTI on (it needs CAP_SYS_ADMIN for a
            # terminal that is not the caller's controlling one).
            tty = "write=['/dev/ptmx', '/dev/pts']"
            sets = {
                "none": f"Permissions({tty})",
                "ports": f"Permissions({tty}, net=[{port}])",
                "all": f"Permissions({tty}, net='all')",
            }
            adapters = await load_probes(pool, project, home, sets)
            for name, adapter in adapters.items():
                caps = await run(
                    adapter,
                    "print(' '.join(line.split()[1] for line in open('/proc/self/status')"
                    " if line.startswith('Cap')))",
                )
                assert caps == " ".join(["0000000000000000"] * 5), sets[name]
                tiocsti = await run(
                    adapter,
                    "import fcntl, os, termios\n"
                    "master, slave = os.openpty()\n"
                    "fcntl.ioctl(slave, termios.TIOCSTI, b'x')\n"
                    "print('injected')",
                )
                assert tiocsti != "injected", sets[name]
                raw = await run(
                    adapter, "import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)"
                )
                assert raw.startswith("PermissionError"), sets[name]
                found = await run(
                    adapter,
                    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                    f"key = libc.syscall({KEYCTL}, 10, -3, b'user',"
                    " b'customtools-test-session-key', 0)\n"
                    f"persistent = libc.syscall({KEYCTL}, 22, -1, -3)\n"
                    "print(key, persistent)",
                )
                assert found == "-1 -1", (sets[name], key, found)


async def test_only_tcp_and_udp_sockets_and_no_datagram_pair_reaches_a_host_socket(
    dirs: tuple[Path, Path], listener: socket.socket, tmp_path: Path
) -> None:
    project, home = dirs
    port = listener.getsockname()[1]
    host_socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        host_socket.bind(str(tmp_path / "host.sock"))
        host_socket.setblocking(False)
        async with IsolationPool(**options()) as pool:
            other = port + 1 if port < 65535 else 1
            sets = {"none": "None", "ports": f"Permissions(net=[{other}])"}
            adapters = await load_probes(pool, project, home, sets)
            for name, adapter in adapters.items():
                for protocol in (262, 132):  # MPTCP, SCTP
                    mptcp = await run(
                        adapter,
                        "import socket\n"
                        f"s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, {protocol})\n"
                        f"s.settimeout(5); s.connect(('127.0.0.1', {port})); print('connected')",
                    )
                    assert mptcp == "PermissionError 1", (name, protocol, mptcp)
                for family in ("AF_NETLINK", "AF_PACKET"):
                    other = await run(
                        adapter, f"import socket; socket.socket(socket.{family}, socket.SOCK_RAW)"
                    )
                    assert other == "PermissionError 1", (name, family)
                target = str(tmp_path / "host.sock")
                pair = await run(
                    adapter,
                    "import socket\n"
                    "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                    f"a.connect({target!r}); print(a.send(b'from the sandbox'))",
                )
                assert pair == "PermissionError 1", name
                stream = await run(
                    adapter,
                    "import socket\na, b = socket.socketpair()\n"
                    f"print(a.sendto(b'from the sandbox', {target!r}))",
                )
                assert stream.startswith("OSError"), name  # connected already: no address
                assert await run(adapter, "import socket; print(len(socket.socketpair()))") == "2"
        with pytest.raises(BlockingIOError):
            host_socket.recv(100)
    finally:
        host_socket.close()


async def test_metadata_changes_hold_only_inside_the_write_set(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    project, home = dirs
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    secret = victim / "secret.txt"
    secret.write_text("secret")
    secret.chmod(0o600)
    program = victim / "program"
    program.write_bytes(b"#!/bin/sh\n")
    program.chmod(0o755)
    (project / "out").mkdir()
    before = {path: os.stat(path) for path in (victim, secret, program)}
    host_stderr = os.fstat(2)
    async with IsolationPool(**options()) as pool:
        sets = {"meta": "Permissions(read=['.'], write=['out'])"}
        adapter = (await load_probes(pool, project, home, sets))["meta"]
        attempts = [
            f"import os; os.chmod({str(secret)!r}, 0o666)",
            f"import os; os.chmod({str(victim)!r}, 0o777)",
            f"import os; os.chmod({str(program)!r}, 0o4755)",
            f"import os; os.utime({str(secret)!r}, (0, 0))",
            f"import os; os.setxattr({str(secret)!r}, 'user.probe', b'x')",
            f"import os; os.chown({str(secret)!r}, os.getuid(), os.getgid())",
            # Through a descriptor (a file it may read), and through its /proc link.
            "import os; fd = os.open('meta.py', os.O_RDONLY); os.fchmod(fd, 0o666)",
            "import os; fd = os.open('meta.py', os.O_RDONLY); os.utime(fd, (0, 0))",
            "import os; fd = os.open('meta.py', os.O_RDONLY); os.setxattr(fd, 'user.p', b'x')",
            "import os; fd = os.open('meta.py', os.O_RDONLY)\n"
            "os.chmod(f'/proc/self/fd/{fd}', 0o666)",
        ]
        for code in attempts:
            seen = await run(adapter, code + "\nprint('changed')")
            assert seen != "changed", code
        inside = await run(
            adapter,
            "import os, shutil\n"
            "with open('out/a.txt', 'w') as handle: handle.write('a')\n"
            "os.chmod('out/a.txt', 0o640); os.utime('out/a.txt', (0, 0))\n"
            "shutil.copy2('meta.py', 'out/copy.py')\n"
            "print(oct(os.stat('out/a.txt').st_mode & 0o777), os.stat('out/a.txt').st_mtime)",
        )
        assert inside == "0o640 0.0"
        # Its stderr is a pipe the host copies, not the host's own file or terminal.
        await run(adapter, "import os; os.chmod('/proc/self/fd/2', 0o604)")
        assert stat.S_IMODE(os.fstat(2).st_mode) == stat.S_IMODE(host_stderr.st_mode)
    for path, was in before.items():
        now = os.stat(path)
        assert (now.st_mode, now.st_mtime_ns) == (was.st_mode, was.st_mtime_ns), path
    assert os.listxattr(secret) == []
    assert stat.S_IMODE(os.stat(project / "meta.py").st_mode) != 0o666


KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine, 250)
ADD_KEY = {"x86_64": 248, "aarch64": 217}.get(os.uname().machine, 248)


@contextlib.contextmanager
def session_key(description: bytes, payload: bytes) -> Iterator[int]:
    """A key in this process's session keyring, invalidated afterwards."""
    libc = ctypes.CDLL(None, use_errno=True)
    key = int(libc.syscall(ADD_KEY, b"user", description, payload, len(payload), -3))
    if key < 0:
        pytest.skip(f"no session keyring here ({os.strerror(ctypes.get_errno())})")
    try:
        yield key
    finally:
        libc.syscall(KEYCTL, 21, key)  # KEYCTL_INVALIDATE


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback TCP socket that accepts connections into its backlog; always closed."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server
    finally:
        server.close()
