"""``customtools run NAME``: execute one tool through the adapter, with live progress.

The call's streamed updates are shown on stderr while it runs (a spinner line redrawn in
place on a terminal, plain ``...`` lines elsewhere); the final result goes to stdout, drawn by
the tool's ``render_result`` hook (or the default rendering), or as ``ToolResult.to_dict()``
with ``--format json``. Ctrl-C (SIGINT) or SIGTERM aborts the call through its
``AbortController``: the adapter cancels the tool and ``api.exec`` kills the process groups it
started, so nothing outlives the command. A second Ctrl-C stops waiting at once.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from typing import Any

from customtools.cli._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    UsageError,
    add_discovery_arguments,
    add_policy_argument,
    add_sandbox_arguments,
    read_policy,
    resolve_cwd,
    unknown_tool,
    wants_sandbox,
    warn,
)
from customtools.cli._output import (
    AnsiTheme,
    Progress,
    is_terminal,
    print_json,
    use_color,
    without_surrogates,
)

__all__ = ["add_parser", "command", "policy_line", "read_params"]

_CALL_ID = "cli-call-1"
_TICK = 0.1  # seconds between spinner frames


def add_parser(subparsers: Any) -> None:
    """Register ``run``."""
    parser = subparsers.add_parser(
        "run",
        help="execute one tool and print its result",
        description="Load the tools (like `list`), call one through the adapter with the given"
        " arguments, show its streamed updates on stderr and print the result on stdout."
        " Exit status: 0 ok, 1 the result is an error, 2 usage or load error, 130 interrupted.",
    )
    parser.add_argument("name", metavar="NAME", help="the tool's name")
    params = parser.add_mutually_exclusive_group()
    params.add_argument(
        "--params", metavar="JSON", help="the arguments as a JSON object (default: {})"
    )
    params.add_argument(
        "--params-file", metavar="F", help="read the arguments from a JSON file ('-': stdin)"
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: the tool's rendering; json: the result's wire form (default: text)",
    )
    parser.add_argument("--timeout", type=float, metavar="S", help="abort the call after S seconds")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the output (default: auto, honours NO_COLOR)",
    )
    add_policy_argument(parser)
    add_discovery_arguments(parser)
    add_sandbox_arguments(parser)
    parser.set_defaults(handler=command)


# -- arguments ------------------------------------------------------------------------------------


def _json_position(text: str, option: str) -> str:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        line = text.splitlines()[exc.lineno - 1] if text.splitlines() else ""
        pointer = " " * (exc.colno - 1) + "^"
        return (
            f"{option} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            f"\n  {line}\n  {pointer}"
        )
    except (ValueError, RecursionError):
        pass
    return ""


def read_params(params: str | None, params_file: str | None) -> dict[str, Any]:
    """The call's arguments from ``--params`` / ``--params-file``, through ``parse_arguments``.

    Raises:
        UsageError: the file cannot be read, the text is not JSON (the message gives the line
            and column), breaks the parser's limits, or is not an object.
    """
    from customtools import ToolArgumentsError
    from customtools.validation import parse_arguments

    option = "--params"
    if params_file is not None:
        option = f"--params-file {params_file}"
        try:
            if params_file == "-":
                text = sys.stdin.read()
            else:
                with open(params_file, encoding="utf-8") as handle:
                    text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {option}: {exc}") from None
    elif params is not None:
        text = params
    else:
        return {}
    try:
        value = parse_arguments(text)
    except ToolArgumentsError as exc:
        message = _json_position(text, option) or f"{option}: " + "; ".join(
            violation.message for violation in exc.violations
        )
        raise UsageError(message) from None
    if not isinstance(value, dict):
        raise UsageError(f"{option} must be a JSON object, got {type(value).__name__}")
    return value


def policy_line(result: Any) -> str:
    """What the execution policy did to ``result``, in one line for stderr (``""``: nothing)."""
    from customtools._policy import POLICY_META_KEY

    details = result.details if isinstance(result.details, dict) else {}
    record = (result.meta or {}).get(POLICY_META_KEY, details.get("policy"))
    if not isinstance(record, dict):
        record = {}
    parts = []
    if "queued" in record:
        parts.append(f"waited {record['queued']:.3f} s to start")
    if record.get("cache") == "hit":
        parts.append("answered from the cache")
    if "retries" in record:
        parts.append(f"retried {record['retries']} time(s)")
    if record.get("retriesStopped"):
        parts.append("retries stopped: the call was aborted")
    trimmed = record.get("trimmed")
    if isinstance(trimmed, dict):
        parts.append(
            f"trimmed {trimmed.get('bytes')} of {trimmed.get('size')} bytes"
            f" (the whole result: read_result handle {trimmed.get('handle')})"
        )
    if details.get("error") == "PolicyRefused":
        parts.append(f"refused ({details.get('code')})")
    return "customtools: policy: " + "; ".join(parts) if parts else ""


# -- the call -------------------------------------------------------------------------------------


def _as_text(value: Any) -> str:
    """A rendering hook's return value as text (hooks are tool code: never trust ``__str__``)."""
    from customtools._format import safe_repr, safe_str

    if isinstance(value, str):
        return value
    text = safe_str(value)
    return text if text is not None else safe_repr(value)


class _Call:
    """One tool call with live progress and signal handling."""

    def __init__(self, entry: Any, params: dict[str, Any], timeout: float | None) -> None:
        from customtools import AbortController

        self.entry = entry  # the tool's RegisteredTool: the tool and its adapter
        self.tool = entry.tool
        self.params = params
        self.timeout = timeout
        self.controller = AbortController()
        self.interrupted: int | None = None  # the signal number, once one arrives
        self.forced = False
        self.progress = Progress(sys.stderr, live=is_terminal(sys.stderr))
        self._frame = 0

    def on_update(self, partial: Any) -> None:
        from customtools.rendering import RenderOptions, render_result

        if self.tool.render_result is None and partial.text:
            text = partial.text
        else:
            self._frame += 1
            options = RenderOptions(is_partial=True, spinner_frame=self._frame)
            text = _as_text(render_result(self.tool, partial, options, args=self.params))
        self.progress.update(text)

    async def _watch_signals(self, scope: Any, *, task_status: Any) -> None:
        import anyio

        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()
            async for signum in signals:
                if self.interrupted is None:
                    self.interrupted = signum
                    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
                    self.progress.message(
                        f"customtools: {name}: cancelling the call (press Ctrl-C again to stop"
                        " waiting)"
                    )
                    self.controller.abort(f"interrupted by {name}")
                else:
                    self.forced = True
                    scope.cancel()

    async def _tick(self) -> None:
        import anyio

        started = time.monotonic()
        while True:
            await anyio.sleep(_TICK)
            self.progress.tick(time.monotonic() - started)

    async def execute(self) -> Any:
        import anyio

        adapter = self.entry.adapter
        result = None
        async with anyio.create_task_group() as group:
            if threading.current_thread() is threading.main_thread() and os.name == "posix":
                await group.start(self._watch_signals, group.cancel_scope)
            if self.progress.live:
                group.start_soon(self._tick)
            try:
                result = await adapter.execute(
                    _CALL_ID,
                    self.params,
                    signal=self.controller.signal,
                    on_update=self.on_update,
                    timeout=self.timeout,
                )
            except Exception as exc:  # the adapter never should; tool code did
                from customtools import ToolResult
                from customtools._format import describe_exception

                result = ToolResult.from_text(
                    f"the call failed and its error could not be reported: "
                    f"{describe_exception(exc)}",
                    is_error=True,
                )
            group.cancel_scope.cancel()
        self.progress.clear()
        return result


def command(args: argparse.Namespace) -> int:
    """Run ``run``; returns the exit status."""
    import anyio

    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    cwd = resolve_cwd(args)
    params = read_params(args.params, args.params_file)
    read_policy(args)  # a bad --policy is a usage error before any tool code runs
    if not wants_sandbox(args):
        return _command(args, cwd, params, None)
    from customtools._isolation._pool import IsolationPool

    pool = IsolationPool()
    try:
        return _command(args, cwd, params, pool)
    finally:
        anyio.run(pool.aclose)


def _command(args: argparse.Namespace, cwd: str, params: dict[str, Any], pool: Any) -> int:
    import anyio

    from customtools import ToolRegistry
    from customtools.cli._common import load_tools
    from customtools.rendering import PLAIN_THEME, RenderOptions, render_call, render_result

    result = load_tools(args, cwd, pool)
    if pool is not None:
        for item in result.diagnostics:
            if item.code.startswith("sandbox-"):
                warn(item.message)
    policy = read_policy(args)
    entry = ToolRegistry(result, policy=policy).lookup(args.name)
    if entry is None:
        raise unknown_tool(args.name, result, os.getcwd())
    if result.errors:
        warn(
            f"{len(result.errors)} other tool module(s) failed to load; `customtools list`"
            " shows why"
        )
    tool = entry.tool
    err_theme = AnsiTheme() if use_color(sys.stderr, args.color) else PLAIN_THEME
    call_text = without_surrogates(_as_text(render_call(tool, params, err_theme)))
    print(call_text, file=sys.stderr, flush=True)
    call = _Call(entry, params, args.timeout)
    outcome = anyio.run(call.execute)
    if outcome is None:  # a second Ctrl-C: we stopped waiting
        warn("stopped waiting for the tool")
        return 128 + int(call.interrupted or signal.SIGINT)
    decided = policy_line(outcome)
    if decided:
        print(decided, file=sys.stderr, flush=True)
    if args.format == "json":
        print_json(outcome.to_dict())
    else:
        theme = AnsiTheme() if use_color(sys.stdout, args.color) else PLAIN_THEME
        rendered = render_result(tool, outcome, RenderOptions(expanded=True), theme, params)
        print(without_surrogates(_as_text(rendered)), flush=True)
    if call.interrupted is not None:
        return 128 + int(call.interrupted)
    return EXIT_FINDINGS if outcome.is_error else EXIT_OK
