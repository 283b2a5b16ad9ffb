"""The matrix's peers: the person and the model behind every entry point, a project holding
the pack, ``customtools serve`` processes, and what a call gave back."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def serve_argv(project: Project, mode: str, *transport: str) -> list[str]:
    """``customtools serve`` of ``project``'s pack in ``mode``, through the launcher."""
    argv = [sys.executable, str(LAUNCH), str(project.spans)]
    if mode == "isolated":
        argv.append("--isolated")
    argv += ["--", "serve", "--no-entry-points", str(project.pack), "--cwd", str(project.root)]
    argv += list(transport)
    if mode == "sandboxed":
        argv.append("--sandbox")
    if mode == "reloaded":
        argv.append("--reload")
    return argv


def serve_env() -> dict[str, str]:
    return child_env()


@contextmanager
def http_server(project: Project, mode: str, *, stateless: bool) -> Iterator[str]:
    """A ``customtools serve --http`` process on a free loopback port; yields its URL.
    Stopped (SIGTERM, then SIGKILL) on exit, whatever happened."""
    extra = ["--stateless"] if stateless else []
    argv = serve_argv(project, mode, "--http", "127.0.0.1:0", *extra)
    log = project.root / "stderr.txt"
    with log.open("w") as errors:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            cwd=str(project.root),
            env=serve_env(),
        )
    try:
        url = _listening(process, log)
        yield url
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _listening(process: subprocess.Popen[bytes], log: Path, limit: float = 60) -> str:
    """The URL the server prints once it listens (bounded)."""
    import time

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        text = log.read_text()
        if "listening on " in text:
            return text.split("listening on ", 1)[1].split()[0]
        if process.poll() is not None:
            raise RuntimeError(f"customtools serve exited with {process.returncode}:\n{text}")
        time.sleep(0.02)
    raise RuntimeError(f"customtools serve did not listen within {limit} s:\n{log.read_text()}")


async def until(predicate: Any, limit: float = 10) -> None:
    """Wait until ``predicate()`` holds (bounded), or fail saying so."""
    assert await wait_until(predicate, limit), "waited in vain"
