"""Run a program for a tool: the ``exec`` helper behind ``api.exec``.

:func:`exec_command` starts one program (no shell), feeds it optional input, captures its
output up to a cap, and stops it cleanly on abort, timeout or cancellation. The rules it keeps:

* **No shell.** ``command`` plus ``args`` is the argv. Use ``exec_command("sh", ["-c", ...])``
  when you want a shell, and quote for it yourself.
* **Own process group.** The child starts in a new session (``start_new_session=True``), so
  everything it starts shares its process group, and stopping it signals the whole group:
  ``SIGTERM``, up to ``kill_grace`` seconds for every member to exit, then ``SIGKILL``, then the
  child is reaped. This runs shielded from cancellation (with a bound), so a caller whose own
  scope is cancelled still leaves no process behind. A descendant that calls ``setsid()``
  itself leaves the group and is out of reach.
* **Bounded output, no deadlock.** stdout and stderr are read concurrently; each keeps at most
  ``max_output`` bytes and the rest is drained and dropped (the ``*_truncated`` flags say so).
* **No secrets by default.** The child gets a minimal environment (``PATH``, ``HOME``, the
  locale, ...; see :data:`MINIMAL_ENV`), not the host's: a model that can run ``env`` must
  not read the host's API keys. ``env_policy="inherit"`` or ``env={...}`` opt in.
* **POSIX only.** Process groups and ``killpg`` do not exist on Windows.

The details and the reasons are in ``docs/exec.md``.
"""

from __future__ import annotations

import codecs
import errno
import os
import signal as _signals
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
import anyio.lowlevel

from customtools._runtime import grace_of

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream, ByteSendStream, Process

    from customtools._abort import AbortSignal

__all__ = ["MINIMAL_ENV", "EnvPolicy", "ExecResult", "exec_command"]

EnvPolicy = Literal["minimal", "inherit", "none"]
"""What a child inherits of this process's environment (see :func:`exec_command`)."""

MINIMAL_ENV = frozenset(
    {"HOME", "LANG", "LANGUAGE", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"}
)
"""Variables the ``"minimal"`` policy passes on (with every ``LC_*``): what programs need to
find things, write temporary files and speak the user's language, and no credentials."""

_DRAIN_IDLE = 0.1
"""After the child exits, stop reading once its pipes stay silent this long (seconds)."""
_DRAIN_CAP = 1.0
"""After the child exits, stop reading after this long in any case (seconds)."""
_REAP_TIMEOUT = 5.0
"""How long to wait for the kernel to report a ``SIGKILL``-ed child's exit (seconds)."""
_GROUP_POLL = 0.02
"""Interval between checks that a signalled process group has emptied (seconds)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecResult:
    """What happened to one program started by :func:`exec_command`.

    Attributes:
        command: the program as given.
        args: its arguments as given.
        code: the exit code; ``None`` when the process ended by a signal, including every
            process :func:`exec_command` stopped (a stopped process never reports ``0``).
        signal: the number of the signal that ended the process, if one did. When we stopped
            the process and it caught ``SIGTERM`` and exited by itself, this is ``SIGTERM``.
        killed: ``True`` when :func:`exec_command` stopped the process (abort or timeout).
            A process that ended from a signal nobody here sent (``kill -9 $$``) reports
            ``killed=False`` with ``code=None`` and the signal number.
        timed_out: ``True`` when the stop was caused by ``timeout``.
        stdout: captured standard output, decoded as UTF-8 (invalid bytes become U+FFFD).
        stderr: captured standard error, decoded the same way.
        stdout_truncated: ``True`` when stdout produced more than ``max_output`` bytes.
        stderr_truncated: ``True`` when stderr produced more than ``max_output`` bytes.
        duration: wall-clock seconds from start to the end of capture.
    """

    command: str
    args: tuple[str, ...]
    code: int | None
    signal: int | None
    killed: bool
    timed_out: bool
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        """``True`` when the process exited by itself with code ``0``."""
        return self.code == 0

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (camelCase keys, like the rest of the wire types).

        Example:
            ``{"command": "ls", "args": ["-l"], "code": 0, "signal": None, "killed": False,
            "timedOut": False, "stdout": "...", "stderr": "", "stdoutTruncated": False,
            "stderrTruncated": False, "duration": 0.004}``
        """
        out = {_WIRE_KEYS.get(f.name, f.name): getattr(self, f.name) for f in fields(self)}
        return {**out, "args": list(self.args)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExecResult:
        """Rebuild a result from :meth:`to_dict` output."""
        return cls(
            command=data["command"],
            args=tuple(data.get("args", ())),
            code=data.get("code"),
            signal=data.get("signal"),
            killed=bool(data.get("killed", False)),
            timed_out=bool(data.get("timedOut", False)),
            stdout=data.get("stdout", ""),
            stderr=data.get("stderr", ""),
            stdout_truncated=bool(data.get("stdoutTruncated", False)),
            stderr_truncated=bool(data.get("stderrTruncated", False)),
            duration=float(data.get("duration", 0.0)),
        )


# The keys of to_dict() that are not the field's own name.
_WIRE_KEYS: Final = {"timed_out": "timedOut"} | {
    f"{stream}_truncated": f"{stream}Truncated" for stream in ("stdout", "stderr")
}


async def exec_command(
    command: str,
    args: Sequence[str] = (),
    *,
    signal: AbortSignal | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    env_policy: EnvPolicy = "minimal",
    input: str | bytes | None = None,
    max_output: int = 1 << 20,
    kill_grace: float | None = None,
) -> ExecResult:
    """Run ``command`` with ``args`` and return what happened; never leaves a process behind.

    Stopping (abort, timeout, or cancellation of the calling task) signals the child's whole
    process group with ``SIGTERM``, waits up to ``kill_grace`` seconds for every member to
    exit, sends ``SIGKILL`` to the group if any is left, and reaps the child. Abort and timeout
    return a result with ``killed=True`` and ``code=None``; cancellation of the caller's own
    scope propagates after the cleanup.

    When the child exits by itself, output is read until its pipes close. A descendant left
    running in the background (``sleep 60 &``) is not killed, but reading stops once the pipes
    have been silent for 0.1 s (or after 1 s in any case), so it cannot hold the call open.

    Args:
        command: the program: a name looked up on ``PATH`` (the child's ``PATH`` when ``env``
            sets one) or a path; a relative path is resolved against ``cwd``.
        args: its arguments, one string per argument (no shell splitting or quoting).
        signal: an :class:`~customtools.AbortSignal`; aborting it stops the process. If it is
            already aborted, nothing is started and a result with ``killed=True``,
            ``code=None``, ``signal=None`` and empty output is returned.
        cwd: working directory of the child (default: the current one).
        timeout: seconds before the process is stopped (``timed_out=True``); ``None`` for no
            limit. The kill grace comes on top.
        env: environment variables set for the child, on top of what ``env_policy`` passes.
        env_policy: what the child inherits from this process's environment: ``"minimal"``
            (the default) passes only the variables in :data:`MINIMAL_ENV` and the locale
            (``LC_*``), so API keys and tokens of the host never reach a program a model
            asked for; ``"inherit"`` passes everything; ``"none"`` passes nothing (the child
            gets only ``env``).
        input: written to the child's stdin, which is then closed (``str`` is UTF-8 encoded).
            With ``None`` stdin is ``/dev/null``. A child that exits without reading it all is
            not an error.
        max_output: bytes kept per stream; the rest is read and discarded.
        kill_grace: seconds between ``SIGTERM`` and ``SIGKILL`` when stopping the process;
            ``None`` (the default) takes the grace of the call ``signal`` belongs to (the
            adapter's ``grace``, docs/cancellation.md), else 2 s. The ``SIGKILL`` is owned by a
            kill thread: it happens even if the calling coroutine is never resumed.

    Returns:
        An :class:`ExecResult`. A non-zero exit is a result, not an exception.

    Raises:
        FileNotFoundError: the program or the working directory does not exist.
        PermissionError: the program is not executable (or is a directory), or ``cwd`` is not
            accessible.
        NotADirectoryError: ``cwd`` is not a directory.
        OSError: another reason the operating system refused to start the program. Every one
            of these is the error the OS gave, re-raised with a message naming the command and
            the working directory (the original is chained as ``__cause__``).
        ValueError: an empty ``command``, a negative ``max_output`` or ``kill_grace``, or a
            ``timeout`` that is not positive.
        TypeError: ``args`` is a single string instead of a sequence of strings.
    """
    if kill_grace is None:
        kill_grace = grace_of(signal)
    argv = _check_arguments(command, args, timeout, max_output, kill_grace)
    started = time.monotonic()
    if signal is not None and signal.aborted:
        return ExecResult(
            command=command, args=argv[1:], code=None, signal=None, killed=True,
            timed_out=False, stdout="", stderr="", duration=0.0,
        )  # fmt: skip
    child_env = _child_env(command, env, env_policy)
    data = input.encode() if isinstance(input, str) else input

    # Do not start a process for a caller that is already cancelled; past this point the
    # spawn is shielded so that a cancellation cannot land between "started" and "tracked".
    await anyio.lowlevel.checkpoint_if_cancelled()
    with anyio.CancelScope(shield=True):
        try:
            process = await anyio.open_process(
                list(argv),
                stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=child_env,
                start_new_session=True,
            )
        except OSError as exc:
            raise _start_error(exc, command, cwd) from exc

    # No checkpoint between the spawn and this try: the finally below always sees the process.
    run = _Run(process, kill_grace)
    try:
        return await run.supervise(argv, data, signal, timeout, max_output, started)
    finally:
        with anyio.move_on_after(kill_grace + 2 * _REAP_TIMEOUT, shield=True):
            await run.cleanup()


class _Capture:
    """Keeps the first ``cap`` bytes of one stream and counts the rest."""

    __slots__ = ("buf", "cap", "done", "received")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.received = 0
        self.done = False

    @property
    def truncated(self) -> bool:
        return self.received > self.cap

    def text(self) -> str:
        if not self.truncated:
            return self.buf.decode("utf-8", errors="replace")
        # The cap may split a multi-byte character; drop the incomplete tail.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return decoder.decode(bytes(self.buf), final=False)

    async def drain(self, stream: ByteReceiveStream, on_done: Callable[[], None]) -> None:
        """Read ``stream`` to EOF (or until cancelled), keeping the first ``cap`` bytes."""
        try:
            async for chunk in stream:
                self.received += len(chunk)
                room = self.cap - len(self.buf)
                if room > 0:
                    self.buf += chunk[:room]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # our end was closed during cleanup: nothing more to read
        finally:
            self.done = True
            on_done()


class _Run:
    """The state of one started process, shared by the run and its cleanup."""

    __slots__ = ("grace", "process", "settled", "stop_signal")

    def __init__(self, process: Process, grace: float) -> None:
        self.process = process
        self.grace = grace
        self.settled = False  # the child is reaped and its group is dealt with
        self.stop_signal: int | None = None  # the last signal we sent to the group

    async def supervise(
        self,
        argv: tuple[str, ...],
        data: bytes | None,
        signal: AbortSignal | None,
        timeout: float | None,
        max_output: int,
        started: float,
    ) -> ExecResult:
        process = self.process
        out, err = _Capture(max_output), _Capture(max_output)
        aborted = timed_out = False
        async with anyio.create_task_group() as tg:
            both_done = anyio.Event()

            def on_done() -> None:
                if out.done and err.done:
                    both_done.set()

            assert process.stdout is not None  # both are PIPE by construction
            assert process.stderr is not None
            tg.start_soon(out.drain, process.stdout, on_done)
            tg.start_soon(err.drain, process.stderr, on_done)
            if data is not None and process.stdin is not None:
                tg.start_soon(_feed, process.stdin, data)

            with anyio.CancelScope() as abort_scope:

                def on_abort(_reason: Any) -> None:
                    abort_scope.cancel()

                if signal is not None:
                    signal.add_listener(on_abort)
                    if signal.aborted:  # aborted while the spawn was in progress
                        abort_scope.cancel()
                try:
                    with anyio.move_on_after(timeout) as deadline_scope:
                        await process.wait()
                finally:
                    if signal is not None:
                        signal.remove_listener(on_abort)
            if process.returncode is None:
                aborted = abort_scope.cancel_called
                timed_out = not aborted and deadline_scope.cancel_called
                await self.stop()
            self.settled = True

            # Read what the child left in its pipes, but do not wait on a background
            # descendant that inherited them: stop once they are silent or after a cap.
            cap_at = anyio.current_time() + _DRAIN_CAP
            while anyio.current_time() < cap_at:
                before = out.received + err.received
                with anyio.move_on_after(_DRAIN_IDLE):
                    await both_done.wait()
                if both_done.is_set() or out.received + err.received == before:
                    break
            tg.cancel_scope.cancel()

        killed = aborted or timed_out
        returncode = process.returncode
        code: int | None = None
        sig: int | None = None
        if returncode is not None and returncode < 0:
            sig = -returncode
        elif killed:
            sig = self.stop_signal  # caught our SIGTERM and exited: still a stopped process
        else:
            code = returncode
        return ExecResult(
            command=argv[0],
            args=argv[1:],
            code=code,
            signal=sig,
            killed=killed,
            timed_out=timed_out,
            stdout=out.text(),
            stderr=err.text(),
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
            duration=time.monotonic() - started,
        )

    async def stop(self) -> None:
        """SIGTERM the group, wait up to the grace for all of it to exit, then SIGKILL it.

        The SIGKILL is scheduled on the kill thread together with the SIGTERM, so it
        happens even when this coroutine is never resumed (its call was closed or abandoned).
        """
        from customtools._kills import schedule_kill

        pgid = self.process.pid  # the child leads its own session, so its pid is the pgid
        with anyio.CancelScope(shield=True):
            self._signal_group(pgid, _signals.SIGTERM)
            kill = schedule_kill(pgid, self.grace)
            # Not in a ``finally``: if this coroutine is closed while it waits, the kill stays
            # scheduled, which is its whole point.
            with anyio.move_on_after(self.grace):
                await self.process.wait()
                # Nothing signals when a process group empties, so poll.
                while await anyio.to_thread.run_sync(_group_has_live_members, pgid):  # noqa: ASYNC110
                    await anyio.sleep(_GROUP_POLL)
                kill.withdraw()
                return
            kill.withdraw()  # killed right here instead
            self._signal_group(pgid, _signals.SIGKILL)
            # Bounded: a lost exit status must not hang the caller forever.
            with anyio.move_on_after(_REAP_TIMEOUT):
                await self.process.wait()

    def _signal_group(self, pgid: int, signum: int) -> None:
        try:
            os.killpg(pgid, signum)
        except ProcessLookupError:
            return  # the whole group is already gone
        if self.stop_signal is None or self.process.returncode is None:
            self.stop_signal = signum

    async def cleanup(self) -> None:
        """Stop the group if the run did not finish (caller cancelled), then close the pipes."""
        if not self.settled:
            await self.stop()
            self.settled = True
        process = self.process
        if process.returncode is not None:
            # Closes our pipe ends (and, on asyncio, the transports); returns at once.
            await process.aclose()
            return
        # The kernel never reported the exit (a lost SIGCHLD): aclose() would wait on it
        # without a bound, so close only our ends of the pipes and give up on reaping.
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                await stream.aclose()


async def _feed(stream: ByteSendStream, data: bytes) -> None:
    """Write ``data`` to the child's stdin and close it; a child that stops reading is fine."""
    try:
        if data:
            await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # the child closed its stdin or exited: the rest of the input is not wanted
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()


def _group_has_live_members(pgid: int) -> bool:
    """Whether any process in group ``pgid`` is still running (zombies do not count).

    ``killpg(pgid, 0)`` alone also counts zombies, and orphans become zombies until an init
    process reaps them, which some container inits never do; on Linux ``/proc`` tells the two
    apart. Elsewhere any member counts as alive, and the grace simply runs out.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # exited while we looked
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _check_arguments(
    command: str,
    args: Sequence[str],
    timeout: float | None,
    max_output: int,
    kill_grace: float,
) -> tuple[str, ...]:
    if isinstance(args, (str, bytes)):
        raise TypeError(
            f"exec_command({command!r}): args must be a sequence of strings, not the single "
            f"string {args!r}; split it yourself, e.g. args=['-l', '-a']"
        )
    if not isinstance(command, str) or not command:
        raise ValueError(f"exec_command: command must be a non-empty string, got {command!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(
            f"exec_command({command!r}): timeout must be a positive number of seconds or "
            f"None, got {timeout!r}"
        )
    if max_output < 0:
        raise ValueError(f"exec_command({command!r}): max_output must be >= 0, got {max_output}")
    if not kill_grace >= 0:
        raise ValueError(f"exec_command({command!r}): kill_grace must be >= 0, got {kill_grace}")
    return (command, *(os.fspath(arg) for arg in args))


def _child_env(command: str, env: Mapping[str, str] | None, policy: EnvPolicy) -> dict[str, str]:
    if policy == "inherit":
        base = dict(os.environ)
    elif policy == "minimal":
        base = {
            name: value
            for name, value in os.environ.items()
            if name in MINIMAL_ENV or name.startswith("LC_")
        }
    elif policy == "none":
        base = {}
    else:
        raise ValueError(
            f"exec_command({command!r}): env_policy must be 'minimal', 'inherit' or 'none', "
            f"got {policy!r}"
        )
    if env is not None:
        base.update(env)
    return base


def _start_error(exc: OSError, command: str, cwd: str | os.PathLike[str] | None) -> OSError:
    """The OS error ``exc`` again, with a message naming the command and working directory."""
    where = os.fsdecode(cwd) if cwd is not None else os.getcwd()
    # Popen reports the cwd as given (str or path object) when changing into it failed.
    failed = os.fsdecode(exc.filename) if exc.filename is not None else None
    if cwd is not None and failed == where:
        problem = {
            errno.ENOENT: "does not exist",
            errno.ENOTDIR: "is not a directory",
            errno.EACCES: "is not accessible (permission denied)",
        }.get(exc.errno or 0, f"cannot be entered ({exc.strerror})")
        message = f"cannot start {command!r}: working directory {where!r} {problem}"
    else:
        hint = {
            errno.ENOENT: "no such program; check the name and PATH, or give its path",
            errno.EACCES: "permission denied; the path must be an executable file",
        }.get(exc.errno or 0, exc.strerror or str(exc))
        message = f"cannot start {command!r} in {where!r}: {hint}"
    return type(exc)(exc.errno, message)
