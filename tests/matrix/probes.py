"""One probe per capability: what "works" means, asserted the same way at every entry point."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from .entries import Entry
from .launch import BUDGET
from .peers import LOG_LINE, MODEL_TEXT, Outcome, until

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGA"
    "WjR9awAAAABJRU5ErkJggg=="
)


def failed(entry: Entry, out: Outcome) -> bool:
    """Whether the caller was told the call failed (by the text alone where the entry point
    has no error flag)."""
    return out.error is True or (out.error is None and not entry.has_error_flag)


async def validation(entry: Entry) -> None:
    """Invalid arguments: the tool does not run, the caller reads every failing path."""
    out = await entry.call("matrix_check", {"count": 0, "word": ""})
    assert "invalid arguments for tool" in out.text, out.text
    assert "/count: 0 is less than the minimum of 1" in out.text
    assert '/word: "" is shorter than 1 character' in out.text
    assert failed(entry, out)


async def streaming(entry: Entry) -> None:
    """Partial results reach the caller in order, before the result."""
    updates: list[str] = []
    out = await entry.call("matrix_stream", {"steps": 3}, updates=updates)
    assert out.text == "streamed 3"
    await until(lambda: "step 3" in updates, 2)
    assert updates == sorted(set(updates)), updates  # in order, each once
    assert set(updates) <= {"step 1", "step 2", "step 3"}, updates


async def cancellation(entry: Entry) -> None:
    """The caller cancels a running call: the tool's signal aborts, its cleanup runs."""
    mark = entry.project.new_mark("cancel")
    await entry.cancel("matrix_wait", {"mark": mark}, lambda: entry.project.mark(f"{mark}.started"))
    record = await entry.project.mark(mark)
    assert record["aborted"] is True, record


async def timeouts(entry: Entry) -> None:
    """The tool's deadline passes: an error result saying so; the tool saw its signal abort."""
    mark = entry.project.new_mark("slow")
    out = await entry.call("matrix_slow", {"mark": mark})
    assert "timed out after 0.5 s" in out.text, out.text
    assert failed(entry, out)
    record = await entry.project.mark(mark)
    assert record == {"aborted": True, "reason": "ToolTimeoutError"}, record


async def ask(entry: Entry) -> None:
    """``ctx.ask`` reaches the person and the answer comes back."""
    out = await entry.call("matrix_ask", {})
    assert out.text == "accept:blue", out.text
    assert entry.people.forms == ["Pick a colour"]
    entry.people.forms.clear()


async def sample(entry: Entry) -> None:
    """``ctx.sample`` reaches the host's model and its answer comes back."""
    out = await entry.call("matrix_sample", {})
    assert out.text == f"the model said: {MODEL_TEXT}", out.text
    assert entry.people.samples[-1] == "Say hello"


async def log(entry: Entry) -> None:
    """``ctx.log`` reaches the host."""
    out = await entry.call("matrix_log", {})
    assert out.text == "logged", out.text
    # Before the result: in-process the sink is called at once, and MCP sends the
    # notification on the call's own stream, ahead of its response.
    assert LOG_LINE in entry.people.logs, entry.people.logs


async def approval(entry: Entry) -> None:
    """The host is asked first, shown the arguments; the tool runs only after a yes."""
    people = entry.people
    people.approve = False
    denied = await entry.call("matrix_guarded", {"target": "the denied one"})
    assert "ran on" not in denied.text, denied.text
    assert failed(entry, denied)
    people.approve = True
    allowed = await entry.call("matrix_guarded", {"target": "the approved one"})
    assert allowed.text == "ran on the approved one", allowed.text
    assert len(people.approvals) == 2, people.approvals
    assert "the denied one" in people.approvals[0]
    assert "the approved one" in people.approvals[1]
    people.approvals.clear()


async def render(entry: Entry) -> None:
    """The UI draws the call and its result with the tool's own hooks."""
    drawn_call, drawn_result = await entry.render()
    assert drawn_call == "matrix render of x"
    assert drawn_result == "matrix result ran on x"


async def session(entry: Entry) -> None:
    """The tool's ``on_session`` hears the session's events."""
    expected, heard = await entry.session_events()
    assert expected in heard, heard


async def structured(entry: Entry) -> None:
    """A tool with an output schema: the caller gets the structured object."""
    out = await entry.call("matrix_struct", {"n": 3})
    assert out.structured == {"n": 3, "square": 9}, out


async def images(entry: Entry) -> None:
    """An image block reaches the caller as an image."""
    out = await entry.call("matrix_image", {})
    assert out.images == [("image/png", PNG)], out


async def telemetry(entry: Entry) -> None:
    """The call is traced in the caller's trace, with the tool's own telemetry in it."""
    await entry.traced()


async def policy(entry: Entry) -> None:
    """The host's one execution policy: a result over its budget is trimmed, with a note on
    how to read the rest; a repeat of a read-only, idempotent call is answered from the
    cache wherever the caller is known (sessionless requests name none: never cached)."""
    first = await entry.call("matrix_policy", {"n": 1})
    again = await entry.call("matrix_policy", {"n": 1})
    for out in (first, again):
        assert out.error is not True, out.text
        assert out.text.startswith("run "), out.text[:200]
        assert f"[Trimmed to the host's budget of {BUDGET} bytes" in out.text, out.text[-400:]
        assert len(out.text) < BUDGET, len(out.text)
    runs = first.text.split()[1], again.text.split()[1]
    assert (runs[0] == runs[1]) is entry.caches, (runs, entry.caches)


PROBES: dict[str, Callable[[Entry], Awaitable[None]]] = {
    "validation": validation,
    "streaming": streaming,
    "cancellation": cancellation,
    "timeouts": timeouts,
    "ask": ask,
    "sample": sample,
    "log": log,
    "approval": approval,
    "render": render,
    "session": session,
    "structured": structured,
    "images": images,
    "telemetry": telemetry,
    "policy": policy,
}
