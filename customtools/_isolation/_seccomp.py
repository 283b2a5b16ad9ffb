"""The seccomp filter of a sandboxed isolation worker (Linux, x86_64 and aarch64).

:func:`install` refuses, with ``EPERM``, what Landlock cannot see (see its docstring). The
filter is a classic BPF program built by :class:`_Program`, whose jumps name labels.
"""

from __future__ import annotations

import ctypes
import errno
import os
from typing import Any, Final, NamedTuple

__all__ = ["SECCOMP_ARCH", "install"]

_AT_EMPTY_PATH: Final = 0x1000


class _Arch(NamedTuple):
    """System call numbers of one architecture."""

    audit: int  # AUDIT_ARCH_*
    socket: int
    socketpair: int
    keys: tuple[int, ...]  # add_key, request_key, keyctl
    keyctl: int
    by_fd: tuple[int, ...]  # metadata changes through a descriptor: fchmod, fchown, f*xattr
    by_path: tuple[int, ...]  # chmod, chown, lchown, utime(s), fchmodat, *setxattr, ...
    null_path: tuple[int, ...]  # utimensat, futimesat: a NULL path means the descriptor
    empty_path_flags: tuple[tuple[int, int], ...]  # (call, index of its AT_* flags)


# io_uring (it opens files and sockets without the calls below) and file_setattr.
_ALWAYS_REFUSED: Final = (425, 426, 427, 469)
SECCOMP_ARCH: Final = {
    "x86_64": _Arch(
        audit=0xC000003E,
        socket=41,
        socketpair=53,
        keys=(248, 249, 250),
        keyctl=250,
        by_fd=(91, 93, 190, 199),
        by_path=(90, 92, 94, 132, 235, 268, 188, 189, 197, 198),
        null_path=(280, 261),
        empty_path_flags=((260, 4), (452, 3), (463, 2), (466, 2)),
    ),
    "aarch64": _Arch(
        audit=0xC00000B7,
        socket=198,
        socketpair=199,
        keys=(217, 218, 219),
        keyctl=219,
        by_fd=(52, 55, 7, 16),
        by_path=(53, 5, 6, 14, 15),
        null_path=(88,),
        empty_path_flags=((54, 4), (452, 3), (463, 2), (466, 2)),
    ),
}
_PR_SET_SECCOMP: Final = 22
_SECCOMP_MODE_FILTER: Final = 2
_RET_ALLOW: Final = 0x7FFF0000
_RET_EPERM: Final = 0x00050000 | errno.EPERM
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _AND_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
_AF_INET, _AF_INET6 = 2, 10
_SOCK_STREAM, _SOCK_DGRAM, _SOCK_SEQPACKET = 1, 2, 5
_IPPROTO_TCP, _IPPROTO_UDP = 6, 17


def _arg(index: int, high: bool = False) -> int:
    """Offset of ``seccomp_data.args[index]`` (its low half; little-endian machines)."""
    return 16 + 8 * index + (4 if high else 0)


class _Program:
    """A classic BPF program whose (forward) jumps name labels, resolved by :meth:`build`."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int = 0, jt: int | str = 0, jf: int | str = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def verdicts(self, block: str) -> None:
        """The block's own ``allow`` and ``deny`` returns (classic BPF jumps only forward)."""
        self.label(f"{block}-allow")
        self.op(_RET_K, _RET_ALLOW)
        self.label(f"{block}-deny")
        self.op(_RET_K, _RET_EPERM)

    def build(self) -> list[tuple[int, int, int, int]]:
        def offset(to: int | str, index: int) -> int:
            return self.labels[to] - index - 1 if isinstance(to, str) else to

        return [
            (code, offset(jt, index), offset(jf, index), k)
            for index, (code, jt, jf, k) in enumerate(self.code)
        ]


def _program(
    arch: _Arch, *, sockets: bool, metadata_paths: bool
) -> list[tuple[int, int, int, int]]:
    p = _Program()
    p.op(_LD_W_ABS, 4)  # seccomp_data.arch
    p.op(_JEQ_K, arch.audit, 1, 0)
    p.op(_RET_K, _RET_EPERM)  # i386 or x32 entry points: refused
    p.op(_LD_W_ABS, 0)  # seccomp_data.nr
    p.op(_JGE_K, 0x40000000, "nr-deny")  # x32 system call numbers: refused
    refused = [*_ALWAYS_REFUSED, *arch.keys, *arch.by_fd]
    if metadata_paths:
        refused += [*arch.by_path, *arch.null_path, *(nr for nr, _ in arch.empty_path_flags)]
    for nr in refused:
        p.op(_JEQ_K, nr, "nr-deny")
    if not metadata_paths:
        for nr in arch.null_path:
            p.op(_JEQ_K, nr, f"null-{nr}")
        for nr, _ in arch.empty_path_flags:
            p.op(_JEQ_K, nr, f"flags-{nr}")
    if sockets:
        p.op(_JEQ_K, arch.socket, "socket")
        p.op(_JEQ_K, arch.socketpair, "socketpair")
    p.verdicts("nr")
    if not metadata_paths:
        for nr in arch.null_path:  # a NULL path: the descriptor's own file (maybe the host's)
            p.label(f"null-{nr}")
            p.op(_LD_W_ABS, _arg(1))
            p.op(_JEQ_K, 0, 0, f"null-{nr}-allow")
            p.op(_LD_W_ABS, _arg(1, high=True))
            p.op(_JEQ_K, 0, f"null-{nr}-deny", f"null-{nr}-allow")
            p.verdicts(f"null-{nr}")
        for nr, index in arch.empty_path_flags:  # AT_EMPTY_PATH: the same
            p.label(f"flags-{nr}")
            p.op(_LD_W_ABS, _arg(index))
            p.op(_JSET_K, _AT_EMPTY_PATH, f"flags-{nr}-deny", f"flags-{nr}-allow")
            p.verdicts(f"flags-{nr}")
    if sockets:
        # socket(): IPv4 or IPv6 only, stream or datagram, TCP or UDP (or the default, 0):
        # MPTCP, SCTP, SMC, raw, packet and netlink sockets are refused, as is AF_UNIX.
        p.label("socket")
        p.op(_LD_W_ABS, _arg(0))
        p.op(_JEQ_K, _AF_INET, "socket-type")
        p.op(_JEQ_K, _AF_INET6, "socket-type", "socket-deny")
        p.label("socket-type")
        p.op(_LD_W_ABS, _arg(1))
        p.op(_AND_K, 0xF)  # SOCK_TYPE_MASK: without SOCK_NONBLOCK and SOCK_CLOEXEC
        p.op(_JEQ_K, _SOCK_STREAM, "socket-protocol")
        p.op(_JEQ_K, _SOCK_DGRAM, "socket-protocol", "socket-deny")
        p.label("socket-protocol")
        p.op(_LD_W_ABS, _arg(2))
        p.op(_JEQ_K, 0, "socket-allow")
        p.op(_JEQ_K, _IPPROTO_TCP, "socket-allow")
        p.op(_JEQ_K, _IPPROTO_UDP, "socket-allow", "socket-deny")
        p.verdicts("socket")
        # socketpair(): connected stream pairs only (what event loops use); a datagram end
        # could be pointed at any pathname socket with connect() or sendto().
        p.label("socketpair")
        p.op(_LD_W_ABS, _arg(1))
        p.op(_AND_K, 0xF)
        p.op(_JEQ_K, _SOCK_STREAM, "socketpair-allow")
        p.op(_JEQ_K, _SOCK_SEQPACKET, "socketpair-allow", "socketpair-deny")
        p.verdicts("socketpair")
    return p.build()


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


def install(libc: Any, *, sockets: bool, metadata_paths: bool) -> str | None:
    """Install the worker's system call filter; ``None`` on success, else why not.

    Refused with ``EPERM``, always: io_uring (it opens files and sockets without the calls
    below), the keyring calls (a session or persistent keyring may hold the user's
    tickets), metadata changes through a descriptor (``fchmod``, ``fchown``, ``fsetxattr``,
    ``utimensat`` with a NULL path, ``AT_EMPTY_PATH``: the descriptor may be the host's),
    and every call through a foreign ABI. With ``metadata_paths`` (no read-only mounts),
    the path forms too. With ``sockets`` (a pack without ``net="all"``): every socket but
    TCP and UDP over IPv4 and IPv6 (Landlock's port rules see only TCP, and before ABI 9
    it does not guard pathname UNIX sockets, such as a Docker or D-Bus socket), and
    datagram socket pairs.
    """
    machine = os.uname().machine
    arch = SECCOMP_ARCH.get(machine)
    if arch is None:
        return f"no seccomp filter for {machine}"
    program = _program(arch, sockets=sockets, metadata_paths=metadata_paths)
    filters = (_SockFilter * len(program))(*(_SockFilter(*item) for item in program))
    prog = _SockFprog(len(program), filters)
    if int(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0)) != 0:
        return os.strerror(ctypes.get_errno())
    return None
