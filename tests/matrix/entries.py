"""The entry points: one driver each, with the same few primitives (call, cancel, render,
session events, a traced call), each through the entry point's own API and real peers.

A driver is an async context manager entered in the event loop thread of its backend (see
``conftest.py``); every primitive runs there.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

import anyio

from customtools import (
    AbortController,
    CustomTool,
    CustomToolAdapter,
    LoadResult,
    SessionEvent,
    ToolContext,
    dispatch_session_event,
    load_custom_tools,
)
from customtools.policy import Policy
from customtools.rendering import PLAIN_THEME, RenderOptions, render_call, render_result

from .launch import BUDGET
from .peers import Outcome, People, Project, launcher, serve_env

WORKERS = ("isolated", "sandboxed")

CALLER = "matrix-host"
"""Whom the in-process entry points call for (``ToolContext.caller``): what the cache keys."""

Started = Callable[[], Awaitable[Any]]


# -- loads -----------------------------------------------------------------------------------


@asynccontextmanager
async def open_load(mode: str, project: Project) -> AsyncIterator[LoadResult]:
    """The pack loaded in ``mode``: in-process, in isolation workers, sandboxed, or by a
    :class:`~customtools.loading.Reloader` after an edit of the pack."""
    async with AsyncExitStack() as stack:
        options: dict[str, Any] = {}
        if mode in WORKERS:
            from customtools.isolation import IsolationPool

            pool = await stack.enter_async_context(IsolationPool())
            options = {"isolation": pool, "sandbox": mode == "sandboxed"}
        if mode == "reloaded":
            from customtools.loading import Reloader

            reloader = Reloader([project.pack], project.root, explicit=True)
            stack.callback(reloader.close)
            await reloader.load()
            project.bump()
            result = await reloader.load()
            assert reloader.reloads == 2, "the edit was not reloaded"
        else:
            result = await load_custom_tools([str(project.pack)], str(project.root), **options)
        assert not result.errors, [error.error for error in result.errors]
        version = result.get("matrix_version")
        assert version is not None
        expected = "2" if mode == "reloaded" else "1"
        assert (await CustomToolAdapter(version.tool).execute("v", {})).text == expected
        yield result


@contextmanager
def telemetry() -> Iterator[Any]:
    """An OpenTelemetry SDK provider with an in-memory exporter, instrumented for the block
    (adapters built inside it are observed); yields ``(tracer_provider, exporter)``."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from customtools import _observe
    from customtools.telemetry import instrument

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    previous = _observe.current_observer()
    instrument(tracer_provider=provider)
    try:
        yield provider, exporter
    finally:
        _observe.set_observer(previous)
        provider.shutdown()


def check_tool_telemetry(spans: list[dict[str, Any]], tool: str) -> None:
    """The call's span and the tool's own telemetry (its event on the current span, or its
    span) are in ``spans``, one trace."""
    names = [(span["name"], span["events"]) for span in spans]
    calls = [span for span in spans if span["attributes"].get("gen_ai.tool.name") == tool]
    assert calls, f"no span of the call to {tool}: {names}"
    assert all(span["attributes"].get("customtools.outcome") == "ok" for span in calls), names
    own = any("matrix.tool-event" in span["events"] for span in spans) or any(
        span["name"] == "matrix.tool-span" for span in spans
    )
    assert own, f"the tool's own telemetry did not reach the exporter: {names}"


def exported(exporter: Any, trace_id: int) -> list[dict[str, Any]]:
    """The in-memory exporter's spans of one trace, in the launcher's JSON form."""
    out = []
    for span in exporter.get_finished_spans():
        if span.get_span_context().trace_id != trace_id:
            continue
        out.append(
            {
                "name": span.name,
                "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
                "events": [event.name for event in span.events],
            }
        )
    return out


# -- the drivers -----------------------------------------------------------------------------


class Entry:
    """One entry point in one mode. Subclasses implement :meth:`call` and :meth:`cancel`;
    the others say the entry point cannot do it (the table never asks them to).

    Every entry point runs the pack under one execution policy, as a host sets it: a result
    budget of :data:`~.launch.BUDGET` bytes (and the defaults: a read-only, idempotent tool
    is cached per caller). ``caches`` says whether its calls name a caller."""

    backend = "asyncio"
    has_error_flag = True
    prefix = ""
    caches = True

    def __init__(self, mode: str, project: Project) -> None:
        self.mode = mode
        self.project = project
        self.people = People()
        self.stack = AsyncExitStack()
        self.policy = Policy(max_result_bytes=BUDGET)

    async def __aenter__(self) -> Entry:
        await self.stack.__aenter__()
        try:
            await self.open()
        except BaseException:
            await self.stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stack.aclose()

    async def open(self) -> None:
        """Connect to the peers."""

    async def call(
        self, name: str, args: Mapping[str, Any], *, updates: list[str] | None = None
    ) -> Outcome:
        raise NotImplementedError

    async def cancel(self, name: str, args: Mapping[str, Any], started: Started) -> None:
        """Start a call, wait for ``started()``, then cancel it the entry point's way."""
        raise NotImplementedError

    async def render(self) -> tuple[str, str]:
        """What the UI draws for a call of ``matrix_render`` and for its result."""
        raise NotImplementedError

    async def session_events(self) -> tuple[str, list[str]]:
        """``(expected, heard)``: a session event the host delivered, and every event the
        ``matrix_session`` tool heard."""
        raise NotImplementedError

    async def traced(self) -> None:
        """Call ``matrix_trace`` inside a trace; check its spans reached the exporter."""
        raise NotImplementedError


class ToolsEntry(Entry):
    """An entry point over loaded tools in this process (the adapter, the frameworks, the
    host toolkit)."""

    def __init__(self, mode: str, project: Project, result: LoadResult) -> None:
        super().__init__(mode, project)
        self.result = result
        self.tools: dict[str, CustomTool] = {
            loaded.tool.name: loaded.tool for loaded in result.tools
        }

    async def session_events(self) -> tuple[str, list[str]]:
        reason = f"matrix-{uuid.uuid4().hex[:8]}"  # a host's own reason
        failures = await dispatch_session_event(
            list(self.tools.values()), SessionEvent(reason=reason)
        )
        assert failures == []
        heard = await self.call("matrix_session", {})
        return reason, json.loads(heard.text)

    async def traced(self) -> None:
        with telemetry() as (provider, exporter):
            with provider.get_tracer("matrix.host").start_as_current_span("matrix.turn") as turn:
                out = await self.fresh_call("matrix_trace")
            trace_id = turn.get_span_context().trace_id
        assert out.text == f"{trace_id:032x}", "the tool did not run in the caller's trace"
        check_tool_telemetry(exported(exporter, trace_id), "matrix_trace")

    async def fresh_call(self, name: str) -> Outcome:
        """A call through adapters built now (telemetry observes adapters built after it)."""
        raise NotImplementedError


class AdapterEntry(ToolsEntry):
    """``CustomToolAdapter`` in the host's hands: its context, approver and signals."""

    backend = "trio"

    def __init__(self, mode: str, project: Project, result: LoadResult) -> None:
        super().__init__(mode, project, result)
        self.adapters: dict[str, CustomToolAdapter] = {}

    def adapter(self, name: str) -> CustomToolAdapter:
        if name not in self.adapters:
            self.adapters[name] = self.new_adapter(name)
        return self.adapters[name]

    def new_adapter(self, name: str) -> CustomToolAdapter:
        return CustomToolAdapter(
            self.tools[name],
            context=self.people.context(caller=CALLER),
            approver=self.people.approver,
            policy=self.policy,
        )

    async def call(
        self, name: str, args: Mapping[str, Any], *, updates: list[str] | None = None
    ) -> Outcome:
        sink = None if updates is None else (lambda partial: updates.append(partial.text))
        with anyio.fail_after(20):
            result = await self.adapter(name).execute(f"call-{name}", dict(args), on_update=sink)
        return Outcome.of(result)

    async def fresh_call(self, name: str) -> Outcome:
        return Outcome.of(await self.new_adapter(name).execute(f"call-{name}", {}))

    async def cancel(self, name: str, args: Mapping[str, Any], started: Started) -> None:
        controller = AbortController()
        got: list[Outcome] = []

        async def run() -> None:
            result = await self.adapter(name).execute(
                "call-cancel", dict(args), signal=controller.signal
            )
            got.append(Outcome.of(result))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await started()
                controller.abort("the matrix stopped it")
        [outcome] = got
        assert outcome.error is True
        assert "was cancelled: the matrix stopped it" in outcome.text, outcome.text

    async def render(self) -> tuple[str, str]:
        tool = self.tools["matrix_render"]
        args = {"target": "x"}
        result = await self.adapter("matrix_render").execute("call-render", args)
        drawn = render_result(tool, result, RenderOptions(), PLAIN_THEME, args)
        return str(render_call(tool, args, PLAIN_THEME)), str(drawn)


# -- MCP -------------------------------------------------------------------------------------


async def until_version(client: Any) -> None:
    """Wait until ``client``'s server serves the edited pack (``matrix_version`` says 2)."""
    with anyio.fail_after(30):
        while True:
            result = await client.call_tool("matrix_version", {})
            if result.content[0].text == "2":
                return
            await anyio.sleep(0.05)


async def until_version_at(url: str) -> None:
    """:func:`until_version` of the server at ``url``."""
    from mcp import Client

    async with Client(url, mode="legacy") as client:
        await until_version(client)


def mcp_outcome(result: Any) -> Outcome:
    text = "".join(block.text for block in result.content if block.type == "text")
    images = [(block.mime_type, block.data) for block in result.content if block.type == "image"]
    return Outcome(text, result.is_error, images, result.structured_content)


class McpEntry(Entry):
    """The official MCP client against ``customtools serve`` (stdio or streamable HTTP), in
    one protocol era: ``legacy`` (the handshake era) or ``auto`` (2026-07-28)."""

    def __init__(
        self,
        mode: str,
        project: Project,
        *,
        era: str,
        url: str | None = None,
        stateless: bool = False,
    ) -> None:
        super().__init__(mode, project)
        self.era = era
        self.url = url
        # The server's caller is the connection in the handshake era; a stateless request,
        # or a 2026-07-28 one without authentication, names none (docs/policy.md).
        self.caches = era == "legacy" and not stateless
        if url is None:
            self.backend = "trio"  # stdio on trio; HTTP on asyncio (see conftest.py)

    async def open(self) -> None:
        from mcp import Client

        target: Any = self.url
        if target is None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            argv = launcher(self.project, self.mode)
            params = StdioServerParameters(
                command=argv[0], args=argv[1:], env=serve_env(), cwd=str(self.project.root)
            )
            errors = self.stack.enter_context(self.project.errors.open("w"))
            target = stdio_client(params, errlog=errors)
        people = self.people
        self.client = await self.stack.enter_async_context(
            Client(
                target,
                mode=self.era,
                elicitation_callback=people.elicit,
                sampling_callback=people.sample,
                logging_callback=people.log,
                log_level="debug" if self.era == "auto" else None,
            )
        )
        if self.era == "legacy":
            await self.client.set_logging_level("debug")

    async def call(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        updates: list[str] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Outcome:
        async def progress(value: float, total: float | None, message: str | None) -> None:
            if updates is not None and message is not None:
                updates.append(message)

        with anyio.fail_after(20):
            result = await self.client.call_tool(
                name, dict(args), progress_callback=progress, meta=meta
            )
        return mcp_outcome(result)

    async def cancel(self, name: str, args: Mapping[str, Any], started: Started) -> None:
        got: list[Any] = []

        async def run() -> None:
            got.append(await self.client.call_tool(name, dict(args)))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await started()
                group.cancel_scope.cancel()  # the SDK sends notifications/cancelled
        assert got == [], "a cancelled call returned a result"

    async def session_events(self) -> tuple[str, list[str]]:
        heard = await self.call("matrix_session", {})
        return "start", json.loads(heard.text)

    async def traced(self) -> None:
        trace_id = uuid.uuid4().hex
        parent = f"00-{trace_id}-{uuid.uuid4().hex[:16]}-01"
        out = await self.call("matrix_trace", {}, meta={"traceparent": parent})
        assert out.text == trace_id, "the tool did not run in the client's trace"
        await _until_spans(self.project, trace_id)
        check_tool_telemetry(self.project.spans_of(trace_id), "matrix_trace")


async def _until_spans(project: Project, trace_id: str) -> None:
    """The server exports the call's span once the response is sent: wait for it (bounded).
    The tool's own spans ended before it, so they are exported by then."""
    with anyio.move_on_after(10):
        while not any(
            span["attributes"].get("gen_ai.tool.name") for span in project.spans_of(trace_id)
        ):
            await anyio.sleep(0.02)


class MountEntry(Entry):
    """``customtools.mcp.McpMount`` of the mode's stateful HTTP server: the mounted tools run
    behind this host's adapters, with the call's own talk-back context."""

    prefix = "mcp__matrix__"

    def __init__(self, mode: str, project: Project, url: str) -> None:
        super().__init__(mode, project)
        self.url = url
        self.tools: dict[str, CustomTool] = {}
        self.adapters: dict[str, CustomToolAdapter] = {}

    async def open(self) -> None:
        from customtools.mcp import McpMount, McpServerConfig

        config = McpServerConfig(name="matrix", url=self.url, timeout=30)
        self.mount = await self.stack.enter_async_context(
            McpMount([config], log_sink=self.people.log_sink)
        )
        tools = await self.mount.tools()
        self.tools = {tool.name.removeprefix(self.prefix): tool for tool in tools}
        assert "matrix_check" in self.tools, self.mount.diagnostics

    def new_adapter(self, name: str) -> CustomToolAdapter:
        return CustomToolAdapter(
            self.tools[name], context=self.people.context(caller=CALLER), policy=self.policy
        )

    async def call(
        self, name: str, args: Mapping[str, Any], *, updates: list[str] | None = None
    ) -> Outcome:
        if name not in self.adapters:
            self.adapters[name] = self.new_adapter(name)
        sink = None if updates is None else (lambda partial: updates.append(partial.text))
        with anyio.fail_after(20):
            result = await self.adapters[name].execute(f"call-{name}", dict(args), on_update=sink)
        return Outcome.of(result)

    async def cancel(self, name: str, args: Mapping[str, Any], started: Started) -> None:
        controller = AbortController()
        adapter = self.new_adapter(name)
        got: list[Outcome] = []

        async def run() -> None:
            got.append(Outcome.of(await adapter.execute("c", dict(args), signal=controller.signal)))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await started()
                controller.abort("the matrix stopped it")
        [outcome] = got
        assert outcome.error is True
        assert "the matrix stopped it" in outcome.text, outcome.text

    async def traced(self) -> None:
        with telemetry() as (provider, exporter):
            with provider.get_tracer("matrix.host").start_as_current_span("matrix.turn") as turn:
                adapter = CustomToolAdapter(self.tools["matrix_trace"])
                out = Outcome.of(await adapter.execute("call-trace", {}))
            trace_id = turn.get_span_context().trace_id
        assert out.text == f"{trace_id:032x}", "the server's tool did not run in the host's trace"
        here = exported(exporter, trace_id)
        assert any(span["name"] == f"execute_tool {self.prefix}matrix_trace" for span in here)
        await _until_spans(self.project, f"{trace_id:032x}")
        check_tool_telemetry(self.project.spans_of(f"{trace_id:032x}"), "matrix_trace")


# -- frameworks ------------------------------------------------------------------------------


class FrameworkEntry(ToolsEntry):
    """An agent framework running the pack through its customtools adapter, its model
    scripted to call one tool and then answer; cancelling the run is cancelling its task."""

    backend = "asyncio"  # the frameworks run on asyncio only

    def __init__(self, mode: str, project: Project, result: LoadResult) -> None:
        super().__init__(mode, project, result)
        self.updates: list[str] | None = None
        self.kept: Any = None

    def framework_tools(self) -> Any:
        """The framework's tools for the pack (one set kept; :meth:`fresh_call` makes new)."""
        raise NotImplementedError

    async def run(self, tools: Any, name: str, args: Mapping[str, Any]) -> Outcome:
        """One run whose model calls ``name`` with ``args``; approvals answered by people."""
        raise NotImplementedError

    def on_update(self, tool: str, call_id: str, partial: Any) -> None:
        if self.updates is not None:
            self.updates.append(partial.text)

    async def call(
        self, name: str, args: Mapping[str, Any], *, updates: list[str] | None = None
    ) -> Outcome:
        if self.kept is None:
            self.kept = self.framework_tools()
        self.updates = updates
        try:
            with anyio.fail_after(20):
                return await self.run(self.kept, name, args)
        finally:
            self.updates = None

    async def fresh_call(self, name: str) -> Outcome:
        return await self.run(self.framework_tools(), name, {})

    async def cancel(self, name: str, args: Mapping[str, Any], started: Started) -> None:
        if self.kept is None:
            self.kept = self.framework_tools()
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(self.run, self.kept, name, args)
                await started()
                group.cancel_scope.cancel()


class PydanticAiEntry(FrameworkEntry):
    def framework_tools(self) -> Any:
        from customtools.integrations.pydantic_ai import CustomToolset

        return CustomToolset(
            self.result, context=self.people.context(caller=CALLER), policy=self.policy
        )

    async def run(self, tools: Any, name: str, args: Mapping[str, Any]) -> Outcome:
        from pydantic_ai import Agent
        from pydantic_ai.models.function import FunctionModel
        from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDenied

        from customtools.integrations.pydantic_ai import CustomToolUpdate

        def respond(messages: list[Any], info: Any) -> Any:
            from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

            if any(isinstance(m, ModelResponse) for m in messages):
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(parts=[ToolCallPart(name, dict(args), tool_call_id="call-1")])

        agent = Agent(
            FunctionModel(respond), toolsets=[tools], output_type=[str, DeferredToolRequests]
        )

        async def drive(*prompt: str, **options: Any) -> Any:
            async with agent.iter(*prompt, **options) as run:
                async for node in run:
                    if Agent.is_call_tools_node(node):
                        async with node.stream(run.ctx) as events:
                            async for event in events:
                                if isinstance(event, CustomToolUpdate) and self.updates is not None:
                                    self.updates.append(event.text)
            return run.result

        result = await drive("go")
        if isinstance(result.output, DeferredToolRequests):
            [request] = result.output.approvals
            self.people.approvals.append(
                json.dumps(result.output.metadata[request.tool_call_id]["arguments"])
            )
            answer = True if self.people.approve else ToolDenied("denied by the matrix")
            result = await drive(
                message_history=result.all_messages(),
                deferred_tool_results=DeferredToolResults(approvals={request.tool_call_id: answer}),
            )
        return _pydantic_outcome(result.all_messages())


def _pydantic_outcome(messages: list[Any]) -> Outcome:
    from pydantic_ai import BinaryImage
    from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart

    parts = [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart | RetryPromptPart)
    ]
    part = parts[-1]
    pictures = [
        ("image/png" if item.media_type == "image/png" else item.media_type, _b64(item.data))
        for message in messages
        if isinstance(message, ModelRequest)
        for each in message.parts
        for item in (each.content if isinstance(getattr(each, "content", None), list) else [])
        if isinstance(item, BinaryImage)
    ]
    if isinstance(part, RetryPromptPart):
        return Outcome(str(part.content), True, pictures)
    content = part.content
    structured = content if isinstance(content, dict) else None
    text = content if isinstance(content, str) else json.dumps(content)
    return Outcome(text, part.outcome != "success", pictures, structured)


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


class LangChainEntry(FrameworkEntry):
    def framework_tools(self) -> Any:
        from customtools.integrations.langchain import langchain_tools

        return langchain_tools(
            self.result, context=self.people.context(caller=CALLER), policy=self.policy
        )

    async def run(self, tools: Any, name: str, args: Mapping[str, Any]) -> Outcome:
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage, ToolMessage
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode, tools_condition
        from langgraph.types import Command

        class Scripted(GenericFakeChatModel):
            def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
                return self

        call = {"name": name, "args": dict(args), "id": "call-1", "type": "tool_call"}
        model = Scripted(
            messages=iter([AIMessage(content="", tool_calls=[call]), AIMessage(content="done")])
        )

        async def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        builder = StateGraph(MessagesState)
        builder.add_node("model", call_model)
        builder.add_node("tools", ToolNode(tools))
        builder.add_edge(START, "model")
        builder.add_conditional_edges("model", tools_condition)
        builder.add_edge("tools", "model")
        graph = builder.compile(checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}

        state: dict[str, Any] = {}

        async def stream(given: Any) -> None:
            # Closed when the run is cancelled: the graph's tasks end with the stream.
            chunks = graph.astream(given, config, stream_mode=["custom", "values"])
            async with contextlib.aclosing(chunks):
                async for kind, chunk in chunks:
                    if kind == "custom" and self.updates is not None:
                        self.updates.append(chunk["text"])
                    elif kind == "values":
                        state.update(chunk)

        if self.updates is None:  # LangGraph cancels a run's tools only without "custom" mode
            state.update(await graph.ainvoke({"messages": [("user", "go")]}, config))
        else:
            await stream({"messages": [("user", "go")]})
        snapshot = await graph.aget_state(config)
        if snapshot.interrupts:
            [interrupt] = snapshot.interrupts
            self.people.approvals.append(json.dumps(interrupt.value["arguments"]))
            await stream(Command(resume=self.people.approve))
        [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        return _langchain_outcome(message)


def _langchain_outcome(message: Any) -> Outcome:
    content = message.content
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    text = "".join(
        block["text"] if isinstance(block, dict) else str(block)
        for block in blocks
        if not isinstance(block, dict) or block.get("type") == "text"
    )
    pictures = [
        (block["mime_type"], block["data"])
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "image"
    ]
    artifact = message.artifact
    structured = getattr(artifact, "structured_content", None)
    return Outcome(text, message.status == "error", pictures, structured)


class OpenAiAgentsEntry(FrameworkEntry):
    has_error_flag = False  # a function tool's output is text for the model, error or not

    def framework_tools(self) -> Any:
        from customtools.integrations.openai_agents import function_tools

        return function_tools(
            self.result,
            context=self.people.context(caller=CALLER),
            on_update=self.on_update,
            policy=self.policy,
        )

    async def run(self, tools: Any, name: str, args: Mapping[str, Any]) -> Outcome:
        from agents import Agent, Runner, ToolCallOutputItem, set_tracing_disabled
        from agents.testing import ScriptedModel, assistant_message, function_call

        set_tracing_disabled(True)  # the SDK would export its traces to OpenAI
        model = ScriptedModel(
            [[function_call(name, dict(args), call_id="call-1")], [assistant_message("done")]]
        )
        agent: Any = Agent(name="matrix", model=model, tools=tools)
        result = await Runner.run(agent, "go")
        if result.interruptions:
            [item] = result.interruptions
            self.people.approvals.append(str(item.arguments))
            state = result.to_state()
            if self.people.approve:
                state.approve(item)
            else:
                state.reject(item)
            result = await Runner.run(agent, state)
        [output] = [i.output for i in result.new_items if isinstance(i, ToolCallOutputItem)]
        return _openai_outcome(output)


def _openai_outcome(output: Any) -> Outcome:
    items = output if isinstance(output, list) else [output]
    text, pictures = "", []
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
        if isinstance(item, str):
            text += item
        elif kind in ("text", "input_text"):
            text += item["text"] if isinstance(item, dict) else item.text
        elif kind in ("image", "input_image"):
            url = item["image_url"] if isinstance(item, dict) else item.image_url
            head, data = url.split(",", 1)
            pictures.append((head.removeprefix("data:").removesuffix(";base64"), data))
    return Outcome(text, None, pictures)


# -- the host toolkit ------------------------------------------------------------------------

CHAT = "ahp:/chats/matrix"


class HostEntry(ToolsEntry):
    """A ``HostSession`` running the pack's tools in a chat (``session.adapter``), with a
    client that answers the protocol's input requests and tool-call confirmations through
    ``dispatch_from_client``; sampling and logging go to the host's own handlers."""

    backend = "trio"

    def __init__(self, mode: str, project: Project, result: LoadResult) -> None:
        super().__init__(mode, project, result)
        self.turns = 0

    async def open(self) -> None:
        from customtools.host import HostSession

        send, self.actions = anyio.create_memory_object_stream[tuple[str, Any]](1000)
        self.stack.callback(self.actions.close)
        self.stack.callback(send.close)
        self.session = HostSession("ahp:/sessions/matrix", on_action=lambda *a: send.send_nowait(a))
        group = await self.stack.enter_async_context(anyio.create_task_group())
        self.stack.push_async_callback(self._stop, group)
        group.start_soon(self._client)

    async def _stop(self, group: Any) -> None:
        group.cancel_scope.cancel()

    async def _client(self) -> None:
        """The client's side: answers what the host dispatches to the chat."""
        async for chat, action in self.actions:
            kind = action.get("type")
            if kind == "chat/inputRequested":
                request = action["request"]
                self.people.forms.append(request["message"])
                answer = {"state": "submitted", "value": {"kind": "selected", "value": "blue"}}
                self.session.dispatch_from_client(
                    {
                        "type": "chat/inputCompleted",
                        "requestId": request["id"],
                        "response": "accept",
                        "answers": {"colour": answer},
                    },
                    client_id="ide",
                    chat=chat,
                )
            elif kind == "chat/toolCallReady" and "confirmed" not in action:
                self.people.approvals.append(action["toolInput"])
                self.session.dispatch_from_client(
                    {
                        "type": "chat/toolCallConfirmed",
                        "turnId": action["turnId"],
                        "toolCallId": action["toolCallId"],
                        "approved": self.people.approve,
                    },
                    client_id="ide",
                    chat=chat,
                )

    def start(self, name: str) -> tuple[str, str]:
        """A new turn with one call of ``name`` started in the chat."""
        self.turns += 1
        turn, call_id = f"turn-{self.turns}", f"call-{self.turns}"
        self.session.dispatch(
            {"type": "chat/turnStarted", "turnId": turn, "userMessage": {"text": "go"}}, chat=CHAT
        )
        self.session.start_tool_call(CHAT, turn_id=turn, tool_call_id=call_id, tool_name=name)
        return turn, call_id

    def new_adapter(self, name: str, turn: str) -> CustomToolAdapter:
        context = ToolContext(
            sampler=self.people.sampler, log_sink=self.people.log_sink, tool_name=name
        )
        return self.session.adapter(
            self.tools[name], CHAT, turn_id=turn, context=context, policy=self.policy
        )

    async def call(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        updates: list[str] | None = None,
        signal: Any = None,
    ) -> Outcome:
        turn, call_id = self.start(name)
        if not self.tools[name].requires_approval:
            self.session.dispatch(
                {
                    "type": "chat/toolCallReady",
                    "turnId": turn,
                    "toolCallId": call_id,
                    "invocationMessage": f"Run {name}",
                    "confirmed": "not-needed",
                },
                chat=CHAT,
            )
        sink = None if updates is None else (lambda partial: updates.append(partial.text))
        with anyio.fail_after(20):
            result = await self.new_adapter(name, turn).execute(
                call_id, dict(args), on_update=sink, signal=signal
            )
        return Outcome.of(result)

    async def fresh_call(self, name: str) -> Outcome:
        return await self.call(name, {})

    async def cancel(self, name: str, args: Mapping[str, Any], started: Started) -> None:
        controller = AbortController()
        got: list[Outcome] = []

        async def run() -> None:
            got.append(await self.call(name, args, signal=controller.signal))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await started()
                controller.abort("the turn was cancelled")
                self.session.cancel_turn(CHAT, f"turn-{self.turns}")
        [outcome] = got
        assert "was cancelled: the turn was cancelled" in outcome.text, outcome.text

    async def render(self) -> tuple[str, str]:
        """The host draws the call with the tool's hook and shows it as the call's
        ``invocationMessage``."""
        from customtools.host import tool_calls

        tool = self.tools["matrix_render"]
        args = {"target": "x"}
        turn, call_id = self.start("matrix_render")
        drawn = str(render_call(tool, args, PLAIN_THEME))
        self.session.dispatch(
            {
                "type": "chat/toolCallReady",
                "turnId": turn,
                "toolCallId": call_id,
                "invocationMessage": drawn,
                "confirmed": "not-needed",
            },
            chat=CHAT,
        )
        result = await self.new_adapter("matrix_render", turn).execute(call_id, args)
        [shown] = [c for c in tool_calls(self.session.chats[CHAT]) if c["toolCallId"] == call_id]
        assert shown["invocationMessage"] == drawn
        return drawn, str(render_result(tool, result, RenderOptions(), PLAIN_THEME, args))


def make_entry(site: Any, name: str) -> Entry:
    """The driver of entry point ``name`` in ``site``'s mode."""
    frameworks: dict[str, type[FrameworkEntry]] = {
        "pydantic-ai": PydanticAiEntry,
        "langchain": LangChainEntry,
        "openai-agents": OpenAiAgentsEntry,
    }
    if name in ("adapter", "host"):
        project, result = site.load("trio")
        return (AdapterEntry if name == "adapter" else HostEntry)(site.mode, project, result)
    if name in frameworks:
        project, result = site.load("asyncio")
        return frameworks[name](site.mode, project, result)
    if name == "stdio":  # starts the mode's server process (``launch.py``)
        return McpEntry(site.mode, site.project(), era="legacy")
    project, urls = site.served()
    if name == "mount":
        return MountEntry(site.mode, project, urls["stateful"])
    era = "auto" if name.endswith("-modern") else "legacy"
    stateless = name.startswith("stateless")
    url = urls["stateless" if stateless else "stateful"]
    return McpEntry(site.mode, project, era=era, url=url, stateless=stateless)
