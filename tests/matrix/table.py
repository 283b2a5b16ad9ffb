"""The capability matrix: every capability in every execution mode through every entry point.

A cell is ``(mode, entry, capability)``. Its expected status is one of:

- ``works``: asserted by a real run (``test_matrix.py``);
- ``cannot``: the entry point's protocol has no channel for the capability; the reason is
  written once per ``(capability, entry)`` in :data:`CANNOT`;
- ``gap``: known to be broken today, with a fix under way: the cell runs as a strict xfail,
  so the day it works the test fails until this table says ``works``.

Every cell of the full cross product is in the table (``test_the_table_covers_every_cell``).
A CI run checks the cells :func:`in_ci` selects (pairwise coverage, full where cheap);
``CUSTOMTOOLS_UPDATE_DOCS=1 pytest tests/matrix`` runs every ``works`` and ``gap`` cell and
writes ``docs/matrix.md`` when each ran as stated; a test checks the committed page is what
the table gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

MODES: dict[str, str] = {
    "inprocess": "in-process",
    "isolated": "isolated (`IsolationPool`)",
    "sandboxed": "sandboxed (`sandbox=True`)",
    "reloaded": "reloaded (`Reloader`, `serve --reload`)",
}
"""Execution modes: how the pack is loaded."""

ENTRIES: dict[str, str] = {
    "adapter": "`CustomToolAdapter`",
    "stdio": "`serve`, stdio (handshake era)",
    "http": "`serve --http`, stateful, handshake era",
    "http-modern": "`serve --http`, stateful, 2026-07-28",
    "stateless": "`serve --http --stateless`, handshake era",
    "stateless-modern": "`serve --http --stateless`, 2026-07-28",
    "mount": "`McpMount` of a served pack",
    "pydantic-ai": "pydantic-ai `CustomToolset`",
    "langchain": "LangGraph `langchain_tools`",
    "openai-agents": "OpenAI Agents `function_tools`",
    "host": "host toolkit `HostSession.adapter`",
}
"""Entry points: how the tools are driven."""

CAPABILITIES: dict[str, str] = {
    "validation": "validation messages",
    "streaming": "streaming updates",
    "cancellation": "cancellation with grace",
    "timeouts": "timeouts",
    "ask": "talk-back: ask the user",
    "sample": "talk-back: ask the model",
    "log": "talk-back: log",
    "approval": "approval",
    "render": "render hooks",
    "session": "session events",
    "structured": "structured output",
    "images": "images",
    "telemetry": "telemetry spans",
    "policy": "execution policy",
}
"""Capabilities, one tool each in ``tests/matrix/pack/matrix_pack.py``."""

MCP = ("stdio", "http", "http-modern", "stateless", "stateless-modern", "mount")
FRAMEWORKS = ("pydantic-ai", "langchain", "openai-agents")

_FRAMEWORK_NAMES = {
    "pydantic-ai": "pydantic-ai",
    "langchain": "LangChain",
    "openai-agents": "The OpenAI Agents SDK",
}

CANNOT: dict[tuple[str, str], str] = {
    **{
        ("render", entry): "MCP has no channel for a tool's own rendering: the client draws"
        " calls and results itself"
        for entry in MCP
    },
    **{
        ("render", entry): f"{_FRAMEWORK_NAMES[entry]} has no rendering hook for tools: its"
        " UI draws calls itself (a host draws them from the `CustomTool`, as in the adapter"
        " column)"
        for entry in FRAMEWORKS
    },
    ("session", "mount"): "MCP has no message for session events: a mounted server's tools"
    " hear only their own server's `start` and `shutdown`",
    **{
        (capability, "stateless"): "stateless HTTP in the handshake era has no channel for"
        " requests to the client (each request is a transport of its own)"
        for capability in ("ask", "sample", "approval")
    },
    ("log", "stateless"): "stateless HTTP in the handshake era has no session: the level a"
    " client sets with `logging/setLevel` cannot reach its calls, and log messages are sent"
    " only at or above a level the client set",
    ("cancellation", "stateless"): "stateless HTTP in the handshake era has no session:"
    " `notifications/cancelled` arrives on another transport than the call it cancels",
    ("structured", "openai-agents"): "a function tool's output is text or images: the"
    " structured object reaches the model only as the JSON text of the result",
}
"""``(capability, entry)`` pairs the entry point's protocol cannot carry, and why."""


def _gaps(mode: str, entry: str, capability: str) -> list[str]:
    """The known gaps of a cell: none today. A gap is a rule over modes, entry points and
    capabilities with its reason (``"... in an isolation worker are not forwarded"`` for
    ``mode in ("isolated", "sandboxed") and capability in (...)``), deleted when its fix
    lands."""
    return []


Kind = Literal["works", "cannot", "gap"]


@dataclass(frozen=True, slots=True)
class Status:
    """A cell's expected status; ``why`` is empty for ``works``."""

    kind: Kind
    why: str = ""


def status(mode: str, entry: str, capability: str) -> Status:
    """The expected status of one cell."""
    reason = CANNOT.get((capability, entry))
    if reason is not None:
        return Status("cannot", reason)
    gaps = _gaps(mode, entry, capability)
    if gaps:
        return Status("gap", "; ".join(gaps))
    return Status("works")


PER_ENTRY = 3
"""Capabilities each entry point runs on every CI run in the modes other than in-process."""


def in_ci(mode: str, entry: str, capability: str) -> bool:
    """Whether every CI run checks this cell; ``CUSTOMTOOLS_UPDATE_DOCS=1`` runs them all.

    In-process, every entry point runs every capability; the adapter runs every capability in
    every mode. In the other modes each other entry point runs :data:`PER_ENTRY` of the
    capabilities its protocol carries, in rotation, so that each entry point meets different
    ones in each mode: every pair of mode, entry point and capability is run (pairwise
    coverage), at the cost of one server process per mode.
    """
    if status(mode, entry, capability).kind == "cannot":
        return False
    if mode == "inprocess" or entry == "adapter":
        return True
    carried = [c for c in CAPABILITIES if status(mode, entry, c).kind != "cannot"]
    others = [name for name in MODES if name != "inprocess"]
    start = 7 * list(ENTRIES).index(entry) + 5 * others.index(mode)
    chosen = {carried[(start + step) % len(carried)] for step in range(PER_ENTRY)}
    return capability in chosen


def cells() -> Iterator[tuple[str, str, str]]:
    """Every cell, grouped by mode, then entry point."""
    for mode in MODES:
        for entry in ENTRIES:
            for capability in CAPABILITIES:
                yield mode, entry, capability


def cell_id(mode: str, entry: str, capability: str) -> str:
    """The cell's test id: ``mode-entry-capability``."""
    return f"{mode}-{entry}-{capability}"


def parse_cell_id(text: str) -> tuple[str, str, str]:
    """The inverse of :func:`cell_id` (entry and mode names may hold ``-``)."""
    for mode in MODES:
        for entry in ENTRIES:
            prefix = f"{mode}-{entry}-"
            if text.startswith(prefix) and text[len(prefix) :] in CAPABILITIES:
                return mode, entry, text[len(prefix) :]
    raise ValueError(f"not a matrix cell id: {text!r}")


def counts() -> dict[Kind, int]:
    """How many cells have each status."""
    found: dict[Kind, int] = {"works": 0, "cannot": 0, "gap": 0}
    for cell in cells():
        found[status(*cell).kind] += 1
    return found


# -- the page --------------------------------------------------------------------------------

_HEADER = """\
# Capability matrix

Every capability in every execution mode, through every entry point. This page is written
by a run of every cell (`CUSTOMTOOLS_UPDATE_DOCS=1 pytest tests/matrix`, see
[development.md](development.md#the-capability-matrix)), and only when each cell ran as
`tests/matrix/table.py` states; `tests/matrix/test_table.py` fails when the page differs
from the table.

- **works**: a test runs the capability through the entry point in that mode, with real
  peers (an MCP client over a real server process, each framework with its offline test
  model, the host toolkit with a client answering over its actions).
- **cannot**: the entry point's protocol has no channel for it; the note says why.
- **gap**: broken today; the cell's test is a strict expected failure, so it fails the day
  the capability works, until the table says so.

A mark in bold is checked by every CI run: every cell in-process and at the adapter, and in
the other modes three capabilities per entry point, in rotation (every pair of mode, entry
point and capability at least once). The others are checked by the run that writes this
page.

At in-process entry points (the adapter, the frameworks, the host toolkit) talk-back goes to
the host's own `ToolContext` handlers (`input_handler`, `sampler`, `log_sink`); the host
toolkit maps `ctx.ask` and approval to the Agent Host Protocol's input requests and
tool-call confirmations. The `serve` entry points reach one server process per mode, which
serves the pack with `customtools.mcp.serve` (what `customtools serve` runs) over stdio and
over stateful and stateless HTTP at once, loaded as `serve --sandbox` and `serve --reload`
load it, or with an `IsolationPool` for the isolated mode (which has no flag of its own);
the mount reaches the stateful HTTP endpoint.
"""


def _mark(cell: Status, notes: dict[str, int], checked: bool) -> str:
    mark = cell.kind
    if cell.kind != "cannot" and checked:
        mark = f"**{mark}**"
    if cell.kind == "works":
        return mark
    number = notes.setdefault(f"{cell.kind}: {cell.why}", len(notes) + 1)
    return f"{mark} [{number}]"


def render_page() -> str:
    """``docs/matrix.md`` as the table gives it."""
    total = counts()
    lines = [
        _HEADER,
        f"{sum(total.values())} cells: {total['works']} work, {total['cannot']} cannot (no"
        f" channel in the protocol), {total['gap']} gaps; every CI run checks"
        f" {sum(in_ci(*cell) for cell in cells())} of them.",
        "",
    ]
    for capability, title in CAPABILITIES.items():
        notes: dict[str, int] = {}
        lines += [f"## {title[0].upper()}{title[1:]}", ""]
        lines.append("| entry point | " + " | ".join(MODES.values()) + " |")
        lines.append("|---" * (len(MODES) + 1) + "|")
        for entry, name in ENTRIES.items():
            marks = [
                _mark(status(mode, entry, capability), notes, in_ci(mode, entry, capability))
                for mode in MODES
            ]
            lines.append(f"| {name} | " + " | ".join(marks) + " |")
        lines.append("")
        for note, number in notes.items():
            lines.append(f"{number}. {note}")
        if notes:
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
