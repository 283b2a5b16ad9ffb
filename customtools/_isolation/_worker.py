"""The worker process of process isolation: imports one tool module and runs its tools.

Started by the host (:mod:`customtools._isolation._pool`) as ``python -c`` with a bootstrap that
calls :func:`main`. The protocol channel is the original stdin/stdout (moved to private file
descriptors; fd 0 then reads ``/dev/null`` and fd 1 writes to stderr, so a tool's ``print``
cannot corrupt it). The first message sets the resource limits; after ``ready`` the worker
serves ``load``, ``call``, ``abort`` and ``session`` requests (see :mod:`._wire`) until the host
closes the channel.

Calls run behind a :class:`~customtools.CustomToolAdapter` of the tool (without its timeout:
the host's adapter owns deadlines), with a per-call :class:`~customtools.AbortController` that
``abort`` messages trigger. A call's ``result`` message is sent only when its work is over:
for a sync tool that means its thread returned, so the host knows whether it must kill the
worker to stop an abandoned call.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from customtools._error_results import Code, Kind, LoadCode, error_result
from customtools._isolation._limits import PR_SET_PDEATHSIG, WorkerLimits, prctl, set_limits
from customtools._isolation._process import INTERNAL_EXIT, claim_stdio
from customtools._isolation._wire import (
    MARKING_THEME,
    QUESTION_PENDING,
    AbortRequest,
    AnswerMessage,
    CallRequest,
    Channel,
    LoadReply,
    LoadRequest,
    MessageTooLargeError,
    RenderRequest,
    SessionRequest,
    TalkMessage,
    WireContext,
)

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from customtools._abort import AbortController
    from customtools._content import ToolResult
    from customtools._context import ToolContext
    from customtools._loading._api import SharedState
    from customtools._tool import CustomTool

__all__ = ["main", "tool_description"]


def tool_description(tool: CustomTool) -> dict[str, Any]:
    """Everything the host needs to build a proxy of ``tool``, as JSON."""
    out: dict[str, Any] = tool.to_dict()
    out["onSession"] = tool.on_session is not None
    out["renderCall"] = tool.render_call is not None
    out["renderResult"] = tool.render_result is not None
    return out


class _Running:
    __slots__ = (
        "answers",
        "asked",
        "controller",
        "pending_update",
        "thread_done",
        "thread_started",
    )

    def __init__(self, controller: AbortController, thread_done: threading.Event | None) -> None:
        self.controller = controller
        self.thread_done = thread_done
        self.thread_started = False
        self.pending_update: dict[str, Any] | None = None
        self.asked = 0  # questions asked so far (each answer names its question's number)
        self.answers: dict[int, list[Any]] = {}  # question number -> [event, answer message]


# The call a sync tool's thread belongs to (anyio copies the context into the thread).
_current_call: contextvars.ContextVar[_Running | None] = contextvars.ContextVar(
    "customtools_worker_call", default=None
)


class _Worker:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        from customtools._registry import ToolRegistry

        self.tools = ToolRegistry()
        self.calls: dict[int, _Running] = {}
        self.loads: list[SharedState] = []  # keep the api state of each load alive
        self.task_group: TaskGroup | None = None
        self.flushing = False
        self.sandbox: dict[str, Any] | None = None  # the confinement policy
        self.sandbox_report: dict[str, Any] | None = None

    # -- sending ---------------------------------------------------------------------------

    def send(self, message: Mapping[str, Any]) -> None:
        if not self.channel.send_nowait(message):
            self._schedule_flush()

    def _schedule_flush(self) -> None:
        if not self.flushing and self.task_group is not None:
            self.flushing = True
            self.task_group.start_soon(self._flush)

    async def _flush(self) -> None:
        try:
            await self.channel.flush()
            for call_id, running in list(self.calls.items()):
                if running.pending_update is not None:
                    update, running.pending_update = running.pending_update, None
                    self.channel.send_nowait({"op": "update", "id": call_id, "result": update})
            await self.channel.flush()
        finally:
            self.flushing = False

    def _updater(self, call_id: int, running: _Running) -> Callable[[ToolResult], None]:
        def on_update(partial: ToolResult) -> None:
            if self.flushing:
                # The pipe is full: keep only the newest update of this call until it drains,
                # so a flood costs memory for one update, not for all of them.
                running.pending_update = partial.to_dict()
                return
            with contextlib.suppress(MessageTooLargeError):  # dropped, like an unusable update
                self.send({"op": "update", "id": call_id, "result": partial.to_dict()})

        return on_update

    # -- requests --------------------------------------------------------------------------

    async def serve(self) -> None:
        import anyio
        import anyio.lowlevel

        async with anyio.create_task_group() as group:
            self.task_group = group
            self.send({"op": "ready", "pid": os.getpid(), "sandbox": self.sandbox_report})
            while True:
                message = await self.channel.receive()
                if message is None:
                    break
                op = message.get("op")
                if op == "call":
                    group.start_soon(self._call, cast("CallRequest", message))
                    # Let the call take its first step now: a quick tool answers before this
                    # loop polls the channel again (see Channel.spin).
                    await anyio.lowlevel.checkpoint()
                elif op == "abort":
                    self._abort(cast("AbortRequest", message))
                elif op == "answer":
                    self._answer(cast("AnswerMessage", message))
                elif op == "load":
                    group.start_soon(self._load, cast("LoadRequest", message))
                elif op == "session":
                    group.start_soon(self._session, cast("SessionRequest", message))
            group.cancel_scope.cancel()

    def _abort(self, message: AbortRequest) -> None:
        running = self.calls.get(message["id"])
        if running is None:
            return
        reason: Any = message["reason"]
        if message["timeout"]:
            from customtools._errors import ToolTimeoutError

            reason = ToolTimeoutError(str(reason))
        running.controller.abort(reason)

    def _answer(self, message: AnswerMessage) -> None:
        running = self.calls.get(message["id"])
        box = running.answers.get(message["ask"]) if running is not None else None
        if box is not None:
            box[1] = message
            box[0].set()

    async def _ask_host(
        self, call_id: int, running: _Running, kind: str, request: Any
    ) -> dict[str, Any]:
        """Send the call's question to the host and wait for the answer (``ctx.ask`` and
        ``ctx.sample`` bound the wait and stop it with the call's signal)."""
        import dataclasses

        import anyio

        from customtools._errors import ToolAbortedError
        from customtools._talkback import QuestionPending, TalkBackError

        running.asked += 1
        number = running.asked
        box: list[Any] = [anyio.Event(), None]
        running.answers[number] = box
        body = dataclasses.asdict(request)
        try:
            self.send({"op": "talk", "id": call_id, "ask": number, "kind": kind, "request": body})
            await box[0].wait()
        except MessageTooLargeError as exc:
            raise TalkBackError(
                f"the question is too large to ask: {exc}", code=Code.TALKBACK_FAILED
            ) from None
        finally:
            running.answers.pop(number, None)
            error = box[1]["error"] if box[1] is not None else None
            if error is not None and error["code"] == QUESTION_PENDING:
                # Raised even over the call's cancellation (the host's abort follows the answer):
                # the run ends here, as in-process, and no `except Exception` fallback acts.
                raise QuestionPending(error["message"])
        if error is None:
            value: dict[str, Any] = box[1]["value"]
            return value
        if error["code"] == Code.ABORTED:
            raise ToolAbortedError(error["message"])
        raise TalkBackError(error["message"], code=error["code"])

    async def _load(self, message: LoadRequest) -> None:
        from customtools._format import describe_exception
        from customtools._loading._api import PendingActionStore, SharedState
        from customtools._loading._import import ImportOutcome
        from customtools._loading._loader import import_here
        from customtools._loading._records import Candidate, LoadError
        from customtools._loading._reviewed import refused_paths, register_root

        try:
            candidate = Candidate.from_dict(message["candidate"])
            reviewed = message.get("reviewed")
            if reviewed is not None:
                # The grant's hashes, pinned: every import of project code in this worker
                # (this load, a restart's, a helper imported later) is checked against them.
                register_root(reviewed["root"], files=reviewed["files"], pin=True)
            elif candidate.source.level == "project":
                # The host applied its trust policy ("all") already; project code still never
                # runs from bytecode caches.
                register_root(candidate.root or candidate.path)
            state = SharedState(cwd=message["cwd"], pending_actions=PendingActionStore())
            (result,) = await import_here([candidate], state, message["loadTimeout"])
        except Exception as exc:
            failed = LoadError.from_dict(
                {
                    **message["candidate"],  # its path, resolved path and source
                    "error": "the isolation worker could not load the module: the loader"
                    f" failed with {describe_exception(exc)}; please report this as a"
                    " customtools bug",
                    "code": LoadCode.INTERNAL_ERROR,
                }
            )
            result = ImportOutcome(errors=[failed])
        else:
            self.loads.append(state)
        described: list[dict[str, Any]] = []
        for tool in result.tools:
            if any(item["name"] == tool.name for item in described):
                described.append(tool_description(tool))  # the host reports the conflict
                continue
            sync = not tool.execute_is_async
            # The host's adapter owns deadlines and approval: the worker's runs neither
            # (False, not None: None would let a destructiveHint ask again, with no approver).
            inner = dataclasses.replace(
                tool,
                timeout=None,
                requires_approval=False,
                execute=self._tracked(self._guarded(tool)) if sync else self._guarded(tool),
            )
            self.tools.remove(tool.name)  # a later load of the module replaces its tools
            self.tools.add(inner)
            described.append(tool_description(tool))
        self.send(
            LoadReply(
                op="loaded",
                id=message["id"],
                tools=described,
                errors=[error.to_dict() for error in result.errors],
                diagnostics=[item.to_dict() for item in result.diagnostics],
                unreviewed=refused_paths(),
            )
        )

    def _guarded(self, tool: CustomTool) -> Callable[..., Any]:
        """Sandboxed: a denial the tool meets becomes an error result naming it."""
        execute: Callable[..., Any] = tool.execute
        if self.sandbox is None:
            return execute
        from customtools._isolation._denials import guard

        return guard(execute, self.sandbox, is_async=tool.execute_is_async)

    def _tracked(self, execute: Callable[..., Any]) -> Callable[..., Any]:
        def run(tool_call_id: Any, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
            running = _current_call.get()
            if running is not None:
                running.thread_started = True
            try:
                return execute(tool_call_id, params, on_update, ctx, signal)
            finally:
                if running is not None and running.thread_done is not None:
                    running.thread_done.set()

        return run

    def _context(
        self, call_id: int, data: WireContext | None, running: _Running | None = None
    ) -> ToolContext:
        from customtools._context import DEFAULT_CONTEXT, ToolContext
        from customtools._talkback import FormUI, InputAnswer, SampleResult, Unanswerable

        if not data:
            return DEFAULT_CONTEXT
        talk: dict[str, Any] = {}
        if running is not None:  # a call's: its questions and logs go to the host's context

            async def asks(request: Any) -> InputAnswer:
                return InputAnswer(**await self._ask_host(call_id, running, "ask", request))

            async def samples(request: Any) -> SampleResult:
                value = await self._ask_host(call_id, running, "sample", request)
                return SampleResult(**{**value, "content": tuple(value["content"])})

            def log_sink(level: str, message: str, data: Any) -> None:
                body = {"level": level, "message": message, "data": dict(data)}
                with contextlib.suppress(MessageTooLargeError):
                    self.send(TalkMessage(op="talk", id=call_id, ask=0, kind="log", request=body))

            async def form(message: str, schema: dict[str, Any]) -> InputAnswer:
                return await made[0].ask(message, schema)  # bounded and checked by ctx.ask

            talk = {
                "input_handler": asks if data["canAsk"] else Unanswerable(asks),
                "sampler": samples if data["canSample"] else Unanswerable(samples),
                "log_sink": log_sink,
            }
            if data.get("hasUi"):  # the host's UI: its questions become forms, as over MCP
                talk.update(ui=FormUI(form, log_sink), has_ui=True)

        def on_abort(reason: Any) -> None:
            from customtools._format import safe_repr

            text = reason if isinstance(reason, str) or reason is None else safe_repr(reason)
            self.send({"op": "ctxAbort", "id": call_id, "reason": text})

        made = [
            ToolContext(
                cwd=data["cwd"],
                model=data["model"],
                is_idle=data["isIdle"],
                has_queued_messages=data["hasQueuedMessages"],
                meta=data["meta"],
                on_abort=on_abort,
                **talk,
            )
        ]
        return made[0]

    async def _call(self, message: CallRequest) -> None:
        import anyio.to_thread

        from customtools._abort import AbortController
        from customtools._observe import recorded_spans, use_context

        call_id = message["id"]
        entry = self.tools.lookup(message["tool"])
        if entry is None:
            result = error_result(
                Kind.TOOL_NOT_FOUND,
                Code.TOOL_NOT_FOUND,
                f"tool {message['tool']!r} is not loaded in its worker process (the module no"
                " longer defines it); load the tools again",
            )
            self.send({"op": "result", "id": call_id, "result": result.to_dict()})
            return
        controller = AbortController()
        done = threading.Event() if not entry.tool.execute_is_async else None
        running = _Running(controller, done)
        self.calls[call_id] = running
        token = _current_call.set(running)
        try:
            trace = message.get("trace")  # the caller's: spans made here go to its host
            with use_context(trace), recorded_spans(trace) as spans:
                result = await entry.adapter.execute(
                    message["callId"],
                    message["params"],
                    signal=controller.signal,
                    on_update=self._updater(call_id, running),
                    ctx=self._context(call_id, message["ctx"], running),
                )
            if done is not None and running.thread_started and not done.is_set():
                # Abandoned by the adapter but still running: the call is not over until the
                # thread returns (the host kills the worker if that takes too long). A call the
                # adapter answered without starting the thread is over now.
                await anyio.to_thread.run_sync(done.wait, abandon_on_cancel=True)
            if running.pending_update is not None:
                update, running.pending_update = running.pending_update, None
                self.send({"op": "update", "id": call_id, "result": update})
            self._send_result(call_id, result, spans)
        finally:
            _current_call.reset(token)
            self.calls.pop(call_id, None)

    def _send_result(self, call_id: int, result: ToolResult, spans: list[Any]) -> None:
        from customtools._isolation._wire import MessageTooLargeError

        message = {"op": "result", "id": call_id, "result": result.to_dict()}
        if spans:
            message["spans"] = spans
        try:
            self.send(message)
        except MessageTooLargeError as exc:
            too_large = error_result(
                Kind.MESSAGE_TOO_LARGE,
                Code.MESSAGE_TOO_LARGE,
                f"the tool's result is too large to leave its worker process ({exc});"
                " return less (or raise the host's max_message_mib)",
            )
            self.send({"op": "result", "id": call_id, "result": too_large.to_dict()})

    def serve_renders(self, channel: Channel) -> None:
        """Answer :class:`RenderRequest` s in a thread of their own: a UI calls render hooks
        synchronously, on every frame, whether calls run or not."""
        import inspect

        from customtools._content import ToolResult
        from customtools._format import describe_exception
        from customtools._render import RenderOptions

        with contextlib.suppress(OSError, ValueError, MessageTooLargeError):  # host gone
            while (request := cast("RenderRequest | None", channel.receive_blocking())) is not None:
                reply: dict[str, Any] = {"id": request.get("id"), "value": None, "error": None}
                entry, hook = self.tools.lookup(str(request.get("tool"))), request.get("hook")
                try:
                    if entry is None or hook not in ("render_call", "render_result"):
                        raise LookupError(f"no {hook} hook of tool {request.get('tool')!r}")
                    if hook == "render_call":
                        value = entry.tool.render_call(request["args"], MARKING_THEME)  # type: ignore[misc]
                    else:
                        result = ToolResult.from_dict(request["result"])
                        options = RenderOptions(**request["options"])
                        value = entry.tool.render_result(  # type: ignore[misc]
                            result, options, MARKING_THEME, request["args"]
                        )
                    if inspect.isawaitable(value):
                        if inspect.iscoroutine(value):
                            value.close()
                        raise TypeError("it returned an awaitable; rendering hooks must be sync")
                    reply["value"] = value
                except BaseException as exc:  # a broken renderer; the host shows its default
                    reply["error"] = describe_exception(exc)
                try:
                    channel.send_blocking(reply)
                except MessageTooLargeError as exc:
                    channel.send_blocking({**reply, "value": None, "error": str(exc)})

    async def _session(self, message: SessionRequest) -> None:
        import inspect

        from customtools._format import describe_exception
        from customtools._session import SessionEvent

        error: str | None = None
        entry = self.tools.lookup(message["tool"])
        try:
            if entry is not None and entry.tool.on_session is not None:
                event = SessionEvent.from_dict(message["event"])
                outcome = entry.tool.on_session(event, self._context(message["id"], message["ctx"]))
                if inspect.isawaitable(outcome):
                    await outcome
        except Exception as exc:
            error = describe_exception(exc)
        self.send({"op": "hook", "id": message["id"], "error": error})


def main() -> None:
    """Run a worker on this process's stdin/stdout; never returns."""
    import faulthandler

    read_fd, write_fd = claim_stdio()
    # End with the host, even when it is killed and cannot close the channel.
    prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    faulthandler.enable(file=sys.stderr, all_threads=True)
    channel = Channel(read_fd, write_fd)
    init = channel.receive_blocking()
    if init is None or init.get("op") != "init":
        os._exit(2)
    set_limits(WorkerLimits.from_dict(init.get("limits") or {}))
    channel.limit = int(init.get("maxMessage") or channel.limit)
    channel.spin = float(init.get("spin") or 0.0)
    # Sandboxed: confined now, while this is the only thread and before any tool
    # code, anyio or a second thread exists (see ._confine).
    sandbox = init.get("sandbox")
    report = None
    if sandbox is not None:
        from customtools._isolation._confine import confine

        report = confine(sandbox)
        from customtools._isolation._denials import record_operations

        record_operations()
    import anyio

    worker = _Worker(channel)
    worker.sandbox, worker.sandbox_report = sandbox, report
    if isinstance(init.get("render"), int):
        render = Channel(init["render"], init["render"], limit=channel.limit)
        threading.Thread(target=worker.serve_renders, args=(render,), daemon=True).start()
    code = 0
    try:
        anyio.run(worker.serve)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = INTERNAL_EXIT
    sys.stderr.flush()
    os._exit(code)
