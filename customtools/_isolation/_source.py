"""One isolated tool module, host side: its worker process, supervised.

:class:`ModuleWorker` owns the worker of one candidate (a tool file, package or entry
point): it starts it, has it import the module, forwards calls, aborts and session events,
and turns every way the worker can end into a result or a load error naming the module and
the exit cause. A worker that ended unexpectedly is started again for the next call, after a
back-off, until ``restart_limit`` crashes in a row; then the module is *dead* and its tools
answer so without starting anything.

Reading the channel needs no background task: the caller waiting for a reply reads (the
*leader*), delivers every message it reads to the call it belongs to, and hands the channel
to another waiting call when its own reply is there.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Literal

from customtools._content import ToolResult
from customtools._error_results import Code, Kind, error_result
from customtools._errors import ToolTimeoutError
from customtools._isolation._options import IsolationOptions
from customtools._isolation._process import describe_exit, spawn
from customtools._isolation._wire import (
    QUESTION_PENDING,
    AbortRequest,
    AnswerMessage,
    CallRequest,
    Channel,
    LoadRequest,
    MessageTooLargeError,
    SessionRequest,
    WireContext,
)
from customtools._observe import export_spans, inject_context

if TYPE_CHECKING:
    import subprocess

    from anyio import Event, Lock
    from anyio.abc import TaskGroup

    from customtools._abort import AbortSignal
    from customtools._context import ToolContext
    from customtools._kills import ScheduledKill
    from customtools._loading._records import Candidate
    from customtools._session import SessionEvent

__all__ = ["LostReason", "ModuleWorker", "WorkerLost"]

_REAP_BOUND: Final = 5.0
_LOAD_SLACK: Final = 1.0  # seconds beyond load_timeout for the loader's own reporting
_SEND_BOUND: Final = 10.0  # seconds a worker may take to read a request before it is killed
RENDER_BOUND: Final = 2.0  # seconds a render hook in a worker may take (a UI waits for it)

_ids = itertools.count(1)


LostReason = Literal["crashed", "killed", "timeout", "refused"]
"""Why a worker is gone: it ended by itself, was killed, did not load within ``load_timeout``,
or was refused before importing (its sandbox is less than ``require_sandbox`` asks)."""


class WorkerLost(Exception):  # noqa: N818 - an event, not a programming error
    """The worker ended or was killed; ``cause`` says how (``"was killed by SIGSEGV"``) and
    ``reason`` why, for the code of the error it becomes."""

    def __init__(self, cause: str, reason: LostReason) -> None:
        super().__init__(cause)
        self.cause = cause
        self.reason = reason


def _to_stderr(chunk: bytes) -> None:
    """Copy a worker's stderr to the host's."""
    view = memoryview(chunk)
    while view:
        view = view[os.write(2, view) :]


class _Pending:
    __slots__ = ("ctx", "done", "event", "lost", "on_update", "reply", "signal", "talk")

    def __init__(
        self, on_update: Callable[[ToolResult], Any] | None, ctx: ToolContext | None
    ) -> None:
        self.on_update = on_update
        self.ctx = ctx
        self.done = False
        self.reply: dict[str, Any] | None = None
        self.lost: WorkerLost | None = None
        self.event: Event | None = None
        self.signal: AbortSignal | None = None
        self.talk: TaskGroup | None = None  # a running call's: where its questions are asked

    def finish(self) -> None:
        self.done = True
        if self.event is not None:
            self.event.set()


class _Process:
    """One live worker process and its channel."""

    __slots__ = (
        "calls",
        "channel",
        "doomed",
        "killed",
        "lost",
        "popen",
        "reading",
        "render",
        "render_fd",
        "render_lock",
    )

    def __init__(
        self, popen: subprocess.Popen[bytes], channel: Channel, render: Channel, render_fd: int
    ) -> None:
        self.popen = popen
        self.channel = channel
        self.render: Channel | None = render  # render hooks' own channel (synchronous)
        self.render_fd = render_fd  # its end's number in the worker
        self.render_lock = threading.Lock()
        self.calls: dict[int, _Pending] = {}
        self.reading = False
        self.lost: WorkerLost | None = None
        self.killed: WorkerLost | None = None  # why it was killed, once it was
        self.doomed: ScheduledKill | None = None  # the kill past a cancelled call's grace

    @property
    def pid(self) -> int:
        return self.popen.pid


def _ctx_to_wire(ctx: ToolContext | None) -> WireContext | None:
    from customtools._context import DEFAULT_CONTEXT
    from customtools._talkback import NO_OP_UI

    if ctx is None or ctx is DEFAULT_CONTEXT:
        return None
    return WireContext(
        cwd=ctx.cwd,
        model=ctx.model if isinstance(ctx.model, str) else None,
        isIdle=ctx.is_idle,
        hasQueuedMessages=ctx.has_queued_messages,
        meta=dict(ctx.meta) if ctx.meta is not None else None,
        canAsk=ctx.can_ask,
        canSample=ctx.can_sample,
        hasUi=ctx.has_ui and ctx.ui is not NO_OP_UI,
    )


def _grant_table(candidate: Candidate) -> dict[str, Any] | None:
    """The hashes of the trust grant ``candidate`` was loaded under (project code the gate
    hashed), as the worker pins them; ``None`` for user code and ``trust="all"``."""
    if candidate.source.level != "project" or candidate.kind == "entry_point":
        return None
    from customtools._loading._reviewed import reviewed_table

    path = candidate.resolved_path
    if candidate.kind == "package":
        path = os.path.join(path, "__init__.py")
    found = reviewed_table(path)
    return None if found is None else {"root": found[0], "files": found[1]}


class ModuleWorker:
    """The supervised worker of one candidate (see the module docstring).

    A project module is imported against the hashes of the grant it was loaded under, at
    the load and at every restart: a file changed since then is refused, and a restart that
    meets one leaves the module dead with a ``"changed-since-trusted"`` result.
    """

    def __init__(
        self,
        candidate: Candidate,
        *,
        cwd: str,
        load_timeout: float | None,
        options: IsolationOptions,
    ) -> None:
        self.candidate = candidate
        self.cwd = cwd
        self.load_timeout = load_timeout
        self.options = options
        self.failures = 0
        self.restarts = 0
        self.dead: str | None = None
        self.unreviewed: str | None = None  # a file refused at a restart (the module is dead)
        self.reviewed = _grant_table(candidate)
        self.closed = False
        self.retired = False
        self._process: _Process | None = None
        self._lock: Lock | None = None

    def __repr__(self) -> str:
        state = "dead" if self.dead else ("running" if self._process else "stopped")
        return f"<ModuleWorker {self.candidate.path!r} {state}>"

    @property
    def pid(self) -> int | None:
        """The running worker's process id, or ``None``."""
        return self._process.pid if self._process is not None else None

    # -- what a sandboxed worker changes (see ._sandboxed) ---------------------------------

    def _worker_env(self) -> dict[str, str]:
        return dict(os.environ if self.options.env is None else self.options.env)

    def _init_message(self) -> dict[str, Any]:
        return {
            "op": "init",
            "limits": self.options.to_dict(),
            "maxMessage": self.options.max_message_mib << 20,
            "spin": self.options.spin_us / 1e6,
        }

    def _refuse(self, ready: dict[str, Any]) -> str | None:
        """Why the started worker must not load the module (``None``: it may)."""
        return None

    # -- process life ----------------------------------------------------------------------

    relay_stderr = False
    """Whether the worker writes to a pipe the host copies to its own stderr, instead of
    holding the host's stderr itself (a sandboxed worker must not reach the terminal or
    file behind it)."""

    def _spawn(self) -> _Process:
        render, render_child = (sock.detach() for sock in socket.socketpair())
        try:
            popen, read_fd, write_fd, _ = spawn(
                "customtools._isolation._worker",
                cwd=self.cwd,
                env=self._worker_env(),
                python=self.options.python,
                stderr=_to_stderr if self.relay_stderr else None,
                pass_fds=(render_child,),
            )
        except BaseException:
            os.close(render)
            raise
        finally:
            os.close(render_child)
        limit, spin = self.options.max_message_mib << 20, self.options.spin_us / 1e6
        channel = Channel(read_fd, write_fd, limit=limit, spin=spin)
        return _Process(popen, channel, Channel(render, render, limit=limit), render_child)

    async def _reap(self, process: _Process) -> int | None:
        """Kill the worker's process group and wait for the worker (bounded, shielded)."""
        import anyio

        with anyio.CancelScope(shield=True):
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            delay = 0.001
            waited = 0.0
            while process.popen.poll() is None and waited < _REAP_BOUND:
                await anyio.sleep(delay)
                waited += delay
                delay = min(delay * 2, 0.05)
            if not process.reading:
                # A task waiting on the channel would never wake for a closed descriptor: the
                # reader closes it when it sees the end of file the kill causes.
                process.channel.close()
            if process.render is not None:
                process.render.close()
                process.render = None
        return process.popen.returncode

    async def _lose(self, process: _Process, reason: LostReason = "crashed") -> WorkerLost:
        """The worker is gone (or must go): reap it and fail every call still waiting."""
        if process.lost is not None:
            return process.lost
        if self._process is process:
            self._process = None
        returncode = await self._reap(process)
        doomed = process.doomed
        if doomed is not None:
            doomed.withdraw()  # reaped: its pid must not be signalled again
            if process.killed is None and doomed.fired:  # the kill thread's, past the grace
                process.killed = WorkerLost(doomed.reason, "killed")
        lost = process.killed or WorkerLost(describe_exit(returncode, self.options), reason)
        process.lost = lost
        for pending in process.calls.values():
            pending.lost = lost
            pending.finish()
        process.calls.clear()
        return lost

    async def _kill(
        self, process: _Process, cause: str, reason: LostReason = "killed"
    ) -> WorkerLost:
        if process.killed is None and process.lost is None:
            process.killed = WorkerLost(cause, reason)
        return await self._lose(process, reason)

    async def _start(self) -> tuple[_Process, dict[str, Any]]:
        """Start a worker and load the module in it.

        Raises:
            WorkerLost: it did not start, crashed or hung while importing the module.
        """
        import anyio

        process = self._spawn()
        self._process = process
        try:
            process.channel.send_nowait({**self._init_message(), "render": process.render_fd})
            ready = _Pending(None, None)
            with anyio.move_on_after(self.options.start_timeout):
                ready.reply = await process.channel.receive()
            if ready.reply is None or ready.reply.get("op") != "ready":
                if ready.reply is None and process.popen.poll() is None:
                    raise await self._kill(
                        process,
                        f"did not start within {self.options.start_timeout:g} s"
                        " (start_timeout) and was killed",
                    )
                raise await self._lose(process)
            refusal = self._refuse(ready.reply)
            if refusal is not None:
                raise await self._kill(process, refusal, "refused")
            wait = None if self.load_timeout is None else self.load_timeout + _LOAD_SLACK
            load = LoadRequest(
                op="load",
                id=0,  # numbered when sent
                candidate=self.candidate.to_dict(),
                cwd=self.cwd,
                loadTimeout=self.load_timeout,
            )
            if self.reviewed is not None:
                load["reviewed"] = self.reviewed
            reply = await self._request(
                process,
                load,
                timeout=wait,
                on_timeout=f"did not finish importing the module within {wait:g} s"
                " (load_timeout) and was killed"
                if wait is not None
                else "",
            )
        except BaseException:
            if process.lost is None:
                with anyio.CancelScope(shield=True):
                    await self._kill(process, "was stopped")
            raise
        return process, reply

    async def load(self) -> dict[str, Any]:
        """Start the worker and import the module: the worker's ``loaded`` reply.

        Raises:
            WorkerLost: the worker did not start, crashed or hung while importing.
        """
        from customtools._observe import STEP_WORKER_START, load_step

        with load_step(STEP_WORKER_START, {"customtools.source.path": self.candidate.path}):
            _, reply = await self._start()
        return reply

    async def _running(self) -> _Process:
        """The live worker, restarted (after the back-off) when it is gone.

        Raises:
            WorkerLost: the module is dead, or the restart failed.
        """
        process = self._process
        if process is not None:
            doomed = process.doomed
            if (doomed is None or not doomed.fired) and process.popen.poll() is None:
                return process
            # The kill thread killed it for a cancelled call whose coroutine was closed before
            # it could say so: account for it here, and start a new one.
            await self._lose(process, "killed")
        import anyio

        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._process is not None:
                return self._process
            if self.dead is not None:
                raise WorkerLost(self.dead, "killed")
            if self.closed:
                raise WorkerLost("is closed (the isolation pool was closed)", "killed")
            if self.failures:
                delay = self.options.backoff * 2 ** (self.failures - 1)
                await anyio.sleep(min(delay, self.options.max_backoff))
            self.restarts += 1
            try:
                process, reply = await self._start()
            except WorkerLost as lost:
                self._crashed(lost)
                raise WorkerLost(f"could not be restarted: it {lost.cause}", "crashed") from None
            refused = reply.get("unreviewed")
            if refused:
                # The module's code changed since the grant: it stays down until a new load
                # asks the user again (the host's loader re-checks trust).
                from customtools._loading._paths import display_path

                self.unreviewed = str(refused[0])
                self.dead = (
                    f"was not restarted: {display_path(self.unreviewed)} changed since it was"
                    " trusted"
                )
                await self._kill(process, self.dead)
                raise WorkerLost(self.dead, "killed")
            return process

    def _crashed(self, lost: WorkerLost) -> None:
        if lost.reason != "crashed":
            return
        self.failures += 1
        if self.failures > self.options.restart_limit:
            self.dead = (
                f"is dead: it ended unexpectedly {self.failures} time(s) in a row"
                f" (last: it {lost.cause}) and restart_limit is {self.options.restart_limit}"
            )

    # -- requests --------------------------------------------------------------------------

    async def _request(
        self,
        process: _Process,
        message: Any,  # a request TypedDict; its "id" is set here
        *,
        timeout: float | None = None,
        on_timeout: str = "",
    ) -> dict[str, Any]:
        """Send ``message`` and wait for its reply (bounded by ``timeout``, then kill).

        Raises:
            WorkerLost: the worker ended before replying.
        """
        import anyio

        request_id = next(_ids)
        message["id"] = request_id
        pending = _Pending(None, None)
        process.calls[request_id] = pending
        try:
            await self._send(process, message)
            if timeout is None:
                await self._wait(process, pending)
            else:
                with anyio.move_on_after(timeout):
                    await self._wait(process, pending)
                if not pending.done:
                    raise await self._kill(process, on_timeout, "timeout")
        finally:
            process.calls.pop(request_id, None)
        if pending.reply is None:
            raise pending.lost or WorkerLost("ended", "crashed")
        return pending.reply

    async def _send(
        self,
        process: _Process,
        message: Any,  # a request TypedDict
        *,
        bound: float = _SEND_BOUND,
        shield: bool = True,
        reason: str = "did not read its requests and was killed",
    ) -> None:
        """Write ``message``; a worker that does not read it within ``bound`` is killed.

        ``shield=False`` (a call's request) lets the caller's cancellation interrupt the
        wait: what is left stays queued, and the call's stop sends it with the abort, bounded
        by the grace, so the caller has its result by deadline + grace.
        """
        import anyio

        try:
            if process.channel.send_nowait(message):
                return
            with anyio.CancelScope(shield=shield), anyio.move_on_after(bound):
                await process.channel.flush()
                return
            await self._kill(process, reason)
        except BrokenPipeError:
            pass  # the worker is gone: the read that follows sees it and says how

    async def _wait(self, process: _Process, pending: _Pending) -> None:
        import anyio

        while not pending.done:
            if not process.reading:
                process.reading = True
                try:
                    while not pending.done:
                        try:
                            message = await process.channel.receive()
                        except (MessageTooLargeError, ValueError, UnicodeDecodeError) as exc:
                            from customtools._format import describe_exception

                            await self._kill(
                                process,
                                f"sent an unusable message ({describe_exception(exc)})"
                                " and was killed",
                            )
                            return
                        if message is None:
                            await self._lose(process)
                            return
                        self._dispatch(process, message)
                finally:
                    process.reading = False
                    if process.lost is not None:
                        process.channel.close()
                    for other in process.calls.values():
                        if not other.done and other.event is not None:
                            other.event.set()
                            break
            else:
                pending.event = anyio.Event()
                await pending.event.wait()
                pending.event = None

    def _dispatch(self, process: _Process, message: dict[str, Any]) -> None:
        pending = process.calls.get(message.get("id"))  # type: ignore[arg-type]
        if pending is None or pending.done:
            return
        op = message.get("op")
        if op == "update":
            if pending.on_update is not None:
                try:
                    partial = ToolResult.from_dict(message["result"], where="update")
                except Exception:  # a malformed update is dropped, like in-process
                    return
                pending.on_update(partial)
        elif op == "ctxAbort":
            if pending.ctx is not None:
                pending.ctx.abort(message.get("reason"))
        elif op == "talk":
            self._talk(process, pending, message)
        else:
            pending.reply = message
            pending.finish()

    def _talk(self, process: _Process, pending: _Pending, message: dict[str, Any]) -> None:
        """The tool of a running call logs (now) or asks (in the call's task group); only a
        call of this worker can be named, and only while it runs."""
        request = message.get("request")
        if message.get("kind") == "log" and pending.ctx is not None:
            with contextlib.suppress(Exception):  # a malformed log line is dropped
                pending.ctx.log(request["level"], str(request["message"]), **request["data"])  # type: ignore[index]
        elif message.get("kind") != "log" and pending.talk is not None:
            pending.talk.start_soon(self._answer, process, pending, message)

    async def _answer(self, process: _Process, pending: _Pending, message: dict[str, Any]) -> None:
        """Ask the caller's context (its handlers: a UI, the MCP client) and send the answer."""
        from dataclasses import asdict

        from customtools._errors import ToolAbortedError
        from customtools._format import describe_exception
        from customtools._talkback import QuestionPending, TalkBackError

        ctx, body, error = pending.ctx, message.get("request") or {}, None
        value: Any = None
        try:
            assert ctx is not None
            if message.get("kind") == "ask":
                answer: Any = await ctx.ask(
                    body["message"],
                    body["schema"],
                    key=body["key"],
                    timeout=None,
                    signal=pending.signal,
                )
            else:
                answer = await ctx.sample(
                    body["messages"],
                    max_tokens=body["max_tokens"],
                    system_prompt=body["system_prompt"],
                    temperature=body["temperature"],
                    stop_sequences=body["stop_sequences"],
                    timeout=None,
                    signal=pending.signal,
                )
            value = asdict(answer)
        except QuestionPending as exc:  # the MCP re-run era: the run ends at the question
            error = {"code": QUESTION_PENDING, "message": exc.reason}
        except TalkBackError as exc:
            error = {"code": exc.code, "message": str(exc)}
        except ToolAbortedError as exc:
            error = {"code": Code.ABORTED, "message": str(exc)}
        except Exception as exc:
            error = {"code": Code.TALKBACK_FAILED, "message": describe_exception(exc)}
        reply = AnswerMessage(
            op="answer",
            id=message.get("id", 0),
            ask=message.get("ask", 0),
            value=value,
            error=error,
        )
        with contextlib.suppress(MessageTooLargeError):
            await self._send(process, reply)  # written at once: before any abort that follows

    # -- rendering -------------------------------------------------------------------------

    def render(self, tool_name: str, request: dict[str, Any]) -> Any:
        """Run a render hook of ``tool_name`` in the worker (a :class:`RenderRequest`), and
        wait for its value: a UI calls hooks synchronously, on every frame, so this blocks,
        at most :data:`RENDER_BOUND` seconds. ``None`` (the default rendering) when no worker
        runs; none is started for it.

        Raises:
            RuntimeError: the hook failed (the worker's description), or took too long.
        """
        process = self._process
        render = process.render if process is not None else None
        if process is None or render is None:
            return None
        with process.render_lock:
            request_id = request["id"] = next(_ids)
            request["tool"] = tool_name
            deadline = time.monotonic() + RENDER_BOUND
            try:
                try:
                    render.send_blocking(request, RENDER_BOUND)
                except TimeoutError:
                    render.close()  # it may hold part of the request: no more rendering
                    process.render = None
                    raise
                reply = render.receive_blocking(RENDER_BOUND)
                while reply is not None and reply.get("id") != request_id:  # a late one
                    reply = render.receive_blocking(max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                raise RuntimeError(
                    f"{self._where()} did not render within {RENDER_BOUND:g} s"
                ) from None
            except (OSError, ValueError, MessageTooLargeError):
                return None  # gone, or not a worker's reply: the default rendering
        if reply is None:
            return None
        if reply.get("error") is not None:
            raise RuntimeError(str(reply["error"]))
        return reply.get("value")

    # -- calls -----------------------------------------------------------------------------

    def _where(self) -> str:
        return f"the worker process of {self.candidate.path}"

    def _lost_result(self, tool_name: str, lost: WorkerLost, *, during: str) -> ToolResult:
        if self.unreviewed is not None:
            return error_result(
                Kind.UNREVIEWED_CODE,
                Code.CHANGED_SINCE_TRUSTED,
                f"tool {tool_name!r} cannot run: {self._where()} {lost.cause}; load the"
                " tools again (reload, or `customtools trust`) to be asked to trust it again",
                module=self.candidate.path,
                path=self.unreviewed,
            )
        if lost.reason == "crashed" and self.dead is None:
            tail, code = "; it is restarted for the next call", Code.WORKER_CRASHED
        elif self.dead is not None:
            tail, code = "; fix the module and load the tools again", Code.MODULE_DEAD
        else:
            tail, code = "", Code.WORKER_KILLED
        text = f"tool {tool_name!r} failed: {self._where()} {lost.cause}{during}{tail}"
        return error_result(
            Kind.WORKER_LOST, code, text, cause=lost.cause, module=self.candidate.path
        )

    async def call(
        self,
        tool_name: str,
        tool_call_id: str,
        params: Any,
        on_update: Callable[[ToolResult], Any] | None,
        ctx: ToolContext | None,
        abort_signal: AbortSignal | None,
    ) -> ToolResult:
        """Run ``tool_name`` in the worker; a crash or a dead module is an error result."""
        try:
            process = await self._running()
        except WorkerLost as lost:
            return self._lost_result(tool_name, lost, during="")
        import anyio

        request_id = next(_ids)
        pending = _Pending(on_update, ctx)
        process.calls[request_id] = pending
        message = CallRequest(
            op="call",
            id=request_id,
            tool=tool_name,
            callId=tool_call_id,
            params=params,
            ctx=_ctx_to_wire(ctx),
        )
        carrier = inject_context()  # the caller's trace continues in the worker
        if carrier:
            message["trace"] = carrier
        pending.signal = abort_signal
        # The call's questions are asked in a task group of its own, cancelled with the call.
        talks = anyio.create_task_group() if message["ctx"] is not None else None
        try:
            async with talks or contextlib.nullcontext():
                pending.talk = talks
                try:
                    await self._send(process, message, shield=False)
                    await self._wait(process, pending)
                except MessageTooLargeError as exc:
                    return error_result(
                        Kind.MESSAGE_TOO_LARGE,
                        Code.MESSAGE_TOO_LARGE,
                        f"tool {tool_name!r} could not be called: the arguments are too large"
                        f" for the worker process ({exc}); raise max_message_mib",
                    )
                finally:
                    pending.talk = None
                    if talks is not None:
                        talks.cancel_scope.cancel()  # questions left open end with the call
        except BaseException:
            # Cancelled (an abort, a timeout or the caller's scope): the tool's signal in the
            # worker is aborted, and the worker killed if the call does not end in time.
            timed_out = anyio.current_effective_deadline() <= anyio.current_time()
            with anyio.CancelScope(shield=True):
                await self._stop_call(process, request_id, pending, abort_signal, timed_out)
            raise
        finally:
            process.calls.pop(request_id, None)
            if self.retired and not process.calls:
                with anyio.CancelScope(shield=True):
                    await self.aclose()  # the last call of a replaced module's worker
        if pending.reply is None:
            gone = pending.lost or WorkerLost("ended", "crashed")
            self._crashed(gone)
            return self._lost_result(tool_name, gone, during=" during the call")
        self.failures = 0
        export_spans(pending.reply.get("spans"))  # the tool's own, under the call's span
        try:
            return ToolResult.from_dict(pending.reply["result"])
        except Exception as exc:
            from customtools._format import describe_exception

            return error_result(
                Kind.CONTENT,
                Code.UNUSABLE_RESULT,
                f"tool {tool_name!r} returned an unusable result: {describe_exception(exc)}",
            )

    async def _stop_call(
        self,
        process: _Process,
        request_id: int,
        pending: _Pending,
        abort_signal: AbortSignal | None,
        timed_out: bool,
    ) -> None:
        import anyio

        if pending.done or process.lost is not None:
            return
        reason: Any = None
        if abort_signal is not None and abort_signal.aborted:
            reason = abort_signal.reason
            timed_out = isinstance(reason, ToolTimeoutError)
        elif timed_out:
            reason = ToolTimeoutError("the call timed out")
        if reason is not None and not isinstance(reason, str):
            from customtools._format import describe_exception, safe_repr

            reason = (
                str(reason)
                if isinstance(reason, ToolTimeoutError)
                else (
                    describe_exception(reason)
                    if isinstance(reason, BaseException)
                    else safe_repr(reason)
                )
            )
        # The kill past the grace is the kill thread's from now on: it happens even if this
        # coroutine is closed (the adapter closes a call it stopped waiting for) or its task
        # is gone. It is withdrawn when the call ends in time.
        from customtools._kills import schedule_kill
        from customtools._runtime import grace_of

        grace = grace_of(abort_signal)  # the adapter's, or the pool's when that is shorter
        if self.options.grace is not None:
            grace = min(grace, self.options.grace)
        killed = f"was killed: a cancelled call did not end within {grace:g} s (grace)"
        kill = process.doomed = schedule_kill(process.pid, grace, popen=process.popen)
        kill.reason = killed
        start = anyio.current_time()
        with contextlib.suppress(MessageTooLargeError):
            # Behind what is left of the call's own request, when it did not fit the pipe.
            await self._send(
                process,
                AbortRequest(op="abort", id=request_id, reason=reason, timeout=timed_out),
                bound=grace,
                reason=killed,
            )
        with anyio.move_on_after(max(grace - (anyio.current_time() - start), 0.0)):
            await self._wait(process, pending)
        kill.withdraw()  # the call ended in time, or it is killed right here
        if not pending.done:
            await self._kill(process, killed)

    async def session(self, tool_name: str, event: SessionEvent, ctx: ToolContext | None) -> None:
        """Deliver a session event to ``tool_name``'s ``on_session`` in the worker.

        Raises:
            RuntimeError: the hook raised (the worker's description of the exception), or the
                worker is gone.
        """
        try:
            process = await self._running()
            reply = await self._request(
                process,
                SessionRequest(
                    op="session",
                    id=0,  # numbered when sent
                    tool=tool_name,
                    event=event.to_dict(),
                    ctx=_ctx_to_wire(ctx),
                ),
            )
        except WorkerLost as lost:
            self._crashed(lost)
            raise RuntimeError(f"{self._where()} {lost.cause}") from None
        if reply.get("error"):
            raise RuntimeError(str(reply["error"]))

    async def retire(self) -> None:
        """Stop the worker once no call runs in it (a reload replaced its module)."""
        self.retired = True
        process = self._process
        if process is None or not process.calls:
            await self.aclose()

    async def aclose(self) -> None:
        """Kill the worker (and its process group) and wait for it; bounded."""
        self.closed = True
        process = self._process
        if process is not None:
            await self._kill(process, "was closed")
