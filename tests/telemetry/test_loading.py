"""Load steps are spans: discovery, trust, each module's import and factory, worker starts;
and a call into an isolation worker continues the caller's trace there."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import anyio
import pytest
from opentelemetry.trace import StatusCode

from customtools import CustomToolAdapter, discover_and_load, load_custom_tools

from .conftest import Telemetry

pytestmark = pytest.mark.anyio

GOOD = """
from customtools import CustomTool

def factory(api):
    return CustomTool(name="good", description="d", execute=lambda *a: "ok")
"""

FACTORY_FAILS = """
def factory(api):
    raise RuntimeError("db password SECRET")
"""

# Returns the trace context the tool sees, in whatever process it runs in.
TRACED = """
import os
from customtools import CustomTool

def factory(api):
    def where(call_id, params, on_update, ctx, signal):
        from opentelemetry import trace
        context = trace.get_current_span().get_span_context()
        return {"content": [{"type": "text", "text": "seen"}],
                "details": {"pid": os.getpid(), "trace": f"{context.trace_id:032x}",
                            "parent": f"{context.span_id:016x}"}}
    return CustomTool(name="where", description="d", execute=where)
"""


def write(directory: Path, name: str, body: str) -> str:
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return str(path)


async def test_each_module_has_an_import_and_a_factory_span(
    telemetry: Telemetry, tmp_path: Path
) -> None:
    paths = [
        write(tmp_path, "good.py", GOOD),
        write(tmp_path, "syntax.py", "def factory(:\n"),
        write(tmp_path, "fails.py", FACTORY_FAILS),
    ]
    result = await load_custom_tools(paths, tmp_path)
    assert result.tool_names == ("good",)
    modules = {
        (s.attributes or {})["customtools.source.path"]: s
        for s in telemetry.spans("customtools.load_module")
    }
    assert set(modules) == set(paths)
    good = modules[paths[0]]
    assert good.status.status_code is StatusCode.UNSET
    assert (good.attributes or {})["customtools.tools"] == 1
    children = {
        s.name: s
        for s in telemetry.spans()
        if s.parent is not None and s.parent.span_id == good.context.span_id
    }
    assert set(children) == {"customtools.import", "customtools.factory"}
    syntax = modules[paths[1]]
    assert syntax.status.status_code is StatusCode.ERROR
    assert (syntax.attributes or {})["error.type"] == result.errors[0].code
    # A status is the load error's code, never its message (the module's exception text).
    assert syntax.status.description == result.errors[0].code
    fails = modules[paths[2]]
    assert fails.status.description == result.errors[1].code
    assert "SECRET" in result.errors[1].error
    recorded = repr([(s.attributes, s.status.description, s.events) for s in telemetry.spans()])
    assert "SECRET" not in recorded
    fails = modules[paths[2]]
    assert (fails.attributes or {})["error.type"] == "factory-error"
    [factory_span] = [
        s
        for s in telemetry.spans("customtools.factory")
        if s.parent is not None and s.parent.span_id == fails.context.span_id
    ]
    assert factory_span.status.status_code is StatusCode.ERROR


async def test_discovery_and_trust_are_spans(telemetry: Telemetry, tmp_path: Path) -> None:
    project = tmp_path / "project"
    tools = project / ".customtools" / "tools"
    tools.mkdir(parents=True)
    write(tools, "good.py", GOOD)
    home = tmp_path / "home"
    home.mkdir()
    result = await discover_and_load(cwd=project, home=home, entry_points=False)
    assert result.tools == ()
    assert len(result.pending_trust) == 1
    discover = telemetry.span("customtools.discover")
    assert (discover.attributes or {})["customtools.candidates"] == 1
    trust = telemetry.span("customtools.trust")
    assert dict(trust.attributes or {}) == {
        "customtools.trust.policy": "prompt",
        "customtools.trust.pending": 1,
    }
    assert telemetry.spans("customtools.load_module") == []


@pytest.mark.skipif(os.name != "posix", reason="process isolation needs POSIX")
async def test_an_isolated_call_is_one_trace_across_the_process_boundary(
    telemetry: Telemetry, tmp_path: Path
) -> None:
    from customtools.isolation import IsolationPool

    path = write(tmp_path, "traced.py", TRACED)
    with anyio.fail_after(30):
        async with IsolationPool() as pool:
            result = await load_custom_tools([path], tmp_path, isolation=pool)
            [loaded] = result.tools
            outcome = await CustomToolAdapter(loaded.tool).execute("c-1", {})
    assert not outcome.is_error, outcome
    details = outcome.details or {}
    assert details["pid"] != os.getpid()
    span = telemetry.span("execute_tool where")
    context = span.get_span_context()
    assert details["trace"] == f"{context.trace_id:032x}"
    assert details["parent"] == f"{context.span_id:016x}"
    worker = telemetry.span("customtools.isolation.worker_start")
    assert (worker.attributes or {})["customtools.source.path"] == path


# Spans a tool makes in its worker, with no SDK configured there.
SPANS = """
from customtools import CustomTool

def factory(api):
    def work(call_id, params, on_update, ctx, signal):
        from opentelemetry import trace
        tracer = trace.get_tracer("pack.tracer")
        with tracer.start_as_current_span("fetch", attributes={"rows": 3}) as outer:
            with tracer.start_as_current_span("parse", kind=trace.SpanKind.CLIENT):
                pass
            outer.add_event("fetched", {"bytes": 10})
            outer.set_status(trace.Status(trace.StatusCode.ERROR, "partial"))
        return "done"
    return CustomTool(name="work", description="d", execute=work)
"""


@pytest.mark.skipif(os.name != "posix", reason="process isolation needs POSIX")
@pytest.mark.parametrize("sandbox", [False, True], ids=["isolated", "sandboxed"])
async def test_spans_made_in_a_worker_are_exported_by_the_host(
    telemetry: Telemetry, tmp_path: Path, sandbox: bool
) -> None:
    from opentelemetry.trace import SpanKind

    from customtools._isolation._confine import landlock_abi
    from customtools.isolation import IsolationPool

    if sandbox and landlock_abi() < 6:
        pytest.skip("needs Linux with Landlock ABI >= 6")
    path = write(tmp_path, "spans.py", SPANS)
    home = tmp_path / "home"
    home.mkdir()
    with anyio.fail_after(30):
        async with IsolationPool() as pool:
            result = await load_custom_tools(
                [path], tmp_path, home=home, isolation=pool, sandbox=sandbox
            )
            [loaded] = result.tools
            outcome = await CustomToolAdapter(loaded.tool).execute("c-1", {})
    assert outcome.text == "done", outcome
    call = telemetry.span("execute_tool work")
    fetch, parse = telemetry.span("fetch"), telemetry.span("parse")
    assert fetch.context.trace_id == call.context.trace_id
    assert (fetch.parent or call.context).span_id == call.context.span_id
    assert fetch.parent is not None
    assert (parse.parent or call.context).span_id == fetch.context.span_id
    assert (fetch.instrumentation_scope.name, parse.kind) == ("pack.tracer", SpanKind.CLIENT)
    assert dict(fetch.attributes or {}) == {"rows": 3}
    assert [(e.name, dict(e.attributes or {})) for e in fetch.events] == [
        ("fetched", {"bytes": 10})
    ]
    assert (fetch.status.status_code, fetch.status.description) == (StatusCode.ERROR, "partial")
    assert fetch.start_time <= parse.start_time <= parse.end_time <= fetch.end_time
