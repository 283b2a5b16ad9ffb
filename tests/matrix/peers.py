"""The matrix's peers: the person and the model behind every entry point, a project holding
the pack, ``customtools serve`` processes, and what a call gave back."""

from __future__ import annotations

import json
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zygote import python_argv

from customtools import ApprovalRequest, ToolContext, ToolResult
from customtools.talkback import InputAnswer, InputRequest, SampleRequest, SampleResult
from tests.mcp.mcp_helpers import child_env, wait_until

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PACK = HERE / "pack" / "matrix_pack.py"
LAUNCH = HERE / "launch.py"

MODEL_TEXT = "hello from the host's model"
"""What the model behind every entry point answers."""

LOG_LINE = "matrix log line"
"""What ``matrix_log`` logs."""


@dataclass
class Outcome:
    """What the caller got back from one call, whatever the entry point."""

    text: str
    error: bool | None
    """``None`` where the entry point reports no error flag (the text says it)."""
    images: list[tuple[str, str]] = field(default_factory=list)
    """``(mime type, base64 data)`` of each image."""
    structured: Any = None

    @classmethod
    def of(cls, result: ToolResult) -> Outcome:
        images = [
            (block.mime_type, block.data) for block in result.content if block.type == "image"
        ]
        return cls(result.text, result.is_error, images, result.structured_content)


class People:
    """The person and the model behind an entry point: forms get ``colour=blue``, approvals
    get :attr:`approve`, the model answers :data:`MODEL_TEXT`; everything asked is kept."""

    def __init__(self) -> None:
        self.forms: list[str] = []
        self.approvals: list[str] = []
        self.samples: list[str] = []
        self.logs: list[str] = []
        self.approve = True

    # -- customtools' talk-back ---------------------------------------------------------------

    async def input_handler(self, request: InputRequest) -> InputAnswer:
        if "approve" in (request.schema.get("properties") or {}):  # an approval form
            self.approvals.append(request.message)
            return InputAnswer(action="accept", values={"approve": self.approve})
        self.forms.append(request.message)
        return InputAnswer(action="accept", values={"colour": "blue"})

    async def sampler(self, request: SampleRequest) -> SampleResult:
        self.samples.append(str(request.messages[0].get("content")))
        return SampleResult(text=MODEL_TEXT, model="matrix-model")

    def log_sink(self, level: str, message: str, data: Any) -> None:
        self.logs.append(message)

    async def approver(self, request: ApprovalRequest) -> bool:
        self.approvals.append(json.dumps(dict(request.arguments)))
        return self.approve

    def context(self, **fields: Any) -> ToolContext:
        """A host's context whose talk-back reaches these people."""
        return ToolContext(
            input_handler=self.input_handler,
            sampler=self.sampler,
            log_sink=self.log_sink,
            **fields,
        )

    # -- an MCP client's callbacks --------------------------------------------------------------

    async def elicit(self, _ctx: Any, params: Any) -> Any:
        import mcp_types as types

        if "approve" in params.requested_schema.get("properties", {}):
            self.approvals.append(params.message)
            return types.ElicitResult(action="accept", content={"approve": self.approve})
        self.forms.append(params.message)
        return types.ElicitResult(action="accept", content={"colour": "blue"})

    async def sample(self, _ctx: Any, params: Any) -> Any:
        import mcp_types as types

        self.samples.append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=MODEL_TEXT),
            model="matrix-model",
            stop_reason="endTurn",
        )

    async def log(self, params: Any) -> None:
        self.logs.append(str(params.data))


class Project:
    """A directory holding a copy of the pack (``tools/matrix_pack.py``) and the ``marks``
    directory its tools write to; each server and load gets its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pack = root / "tools" / "matrix_pack.py"
        self.marks = root / "marks"
        self.spans = root / "spans.jsonl"
        self.errors = root / "stderr.txt"
        self.pack.parent.mkdir(parents=True)
        self.marks.mkdir()
        shutil.copy(PACK, self.pack)

    def bump(self) -> None:
        """Edit the pack (``VERSION = "2"``): what a reload must pick up."""
        source = self.pack.read_text()
        assert 'VERSION = "1"' in source
        self.pack.write_text(source.replace('VERSION = "1"', 'VERSION = "2"'))

    @staticmethod
    def new_mark(what: str) -> str:
        return f"{what}-{uuid.uuid4().hex[:12]}"

    async def mark(self, name: str, limit: float = 10) -> dict[str, Any]:
        """The record ``marks/<name>.json``, once the tool wrote it (bounded)."""
        path = self.marks / f"{name}.json"
        assert await wait_until(path.exists, limit), f"the tool never wrote {path.name}"
        record: dict[str, Any] = json.loads(path.read_text())
        return record

    def spans_of(self, trace_id: str) -> list[dict[str, Any]]:
        """The finished spans of one trace the served tools' process exported."""
        if not self.spans.exists():
            return []
        spans = [json.loads(line) for line in self.spans.read_text().splitlines() if line]
        return [span for span in spans if span["trace"] == trace_id]


def launcher(project: Project, mode: str) -> list[str]:
    """The command of the mode's server process (``launch.py``): stdio, stateful and
    stateless HTTP in one process; an MCP client over stdio starts it."""
    return python_argv(str(LAUNCH), mode, str(project.root))


def serve_env() -> dict[str, str]:
    return child_env()


async def served_urls(project: Project, limit: float = 60) -> dict[str, str]:
    """``{"stateful": url, "stateless": url}`` once the server process listens on both
    (its stderr is ``project.errors``), bounded."""
    found: dict[str, str] = {}

    def listening() -> bool:
        for line in project.errors.read_text().splitlines():
            if line.startswith("matrix: "):
                kind, url = line.removeprefix("matrix: ").split()
                found[kind] = url
        return len(found) == 2

    if not await wait_until(listening, limit):
        raise RuntimeError(
            f"the server did not listen within {limit} s:\n{project.errors.read_text()}"
        )
    return found


async def until(predicate: Any, limit: float = 10) -> None:
    """Wait until ``predicate()`` holds (bounded), or fail saying so."""
    assert await wait_until(predicate, limit), "waited in vain"
