"""The validate check a tool pack runs in its own test suite: :func:`check_pack`.

It loads the pack in the test process with the host's loader and runs the rulebook
(:mod:`customtools._rules`) on what loaded: the same checks, codes and severities as the
``customtools validate`` command. Each problem is a :class:`Finding`:

errors (the check fails)
    every load error, under its loader code (``import-error``, ``factory-error``,
    ``invalid-tool``, ``name-conflict``, ...); ``empty-pack`` when nothing loaded;
    ``empty-description``, ``invalid-schema``, ``required-not-defined``,
    ``invalid-default`` and ``invalid-example`` from the per-tool rules.

warnings (the check fails only with ``strict=True``, which makes them errors)
    ``invisible-unicode``, the provider rules (``openai-*``, ``anthropic-*``),
    ``similar-name``, ``metadata-name-taken`` and the loader diagnostics worth fixing.

notices (never fail)
    informational loader diagnostics (``skipped-file``, ``duplicate-path``, ...).

The ``customtools validate`` command adds what needs a child process or a clock: a module
that crashes or hangs, and slow imports. ``docs/cli.md`` has the table of every code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT, load_custom_tools
from customtools._rules import Finding, check_load_result
from customtools.testing._pack import PathArg, resolve_pack_path
from customtools.testing._sync import run_sync

__all__ = ["Finding", "PackReport", "check_pack", "validate_pack"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PackReport:
    """What :func:`validate_pack` found.

    Attributes:
        paths: the pack paths checked (absolute).
        tool_names: the tools that loaded, in order.
        metadata_names: the names of the pack's metadata files (never tools).
        findings: errors, warnings and notices, in the order found.
        strict: whether the findings were judged under the strict policy.
    """

    paths: tuple[str, ...]
    tool_names: tuple[str, ...] = ()
    metadata_names: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    strict: bool = False

    @property
    def errors(self) -> tuple[Finding, ...]:
        """The findings that fail the check."""
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """The findings that fail the check only when strict."""
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def notices(self) -> tuple[Finding, ...]:
        """The findings that never fail the check."""
        return tuple(f for f in self.findings if f.severity == "notice")

    def passed(self, *, strict: bool = False) -> bool:
        """``True`` when there is no error (and, if ``strict``, no warning)."""
        return not (self.errors or (strict and self.warnings))

    def format(self) -> str:
        """A summary line, then one line per finding."""
        counts = f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)"
        if self.notices:
            counts += f", {len(self.notices)} notice(s)"
        head = f"tool pack {', '.join(self.paths)}: {len(self.tool_names)} tool(s), {counts}"
        return "\n".join([head, *(f"  {finding}" for finding in self.findings)])

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "paths": list(self.paths),
            "tools": list(self.tool_names),
            "metadata": list(self.metadata_names),
            "findings": [finding.to_dict() for finding in self.findings],
            "strict": self.strict,
        }


async def validate_pack(
    *paths: PathArg,
    builtin_tool_names: Iterable[str] = (),
    cwd: PathArg | None = None,
    load_timeout: float | None = DEFAULT_LOAD_TIMEOUT,
    strict: bool = False,
) -> PackReport:
    """Load a pack and report every problem with it; never fails by itself.

    Args:
        *paths: tool files, package directories or tools directories (at least one),
            relative to the working directory; all are checked together, so a name taken
            twice across them is a ``name-conflict``.
        builtin_tool_names: names the target host reserves.
        cwd: what the tools see as ``api.cwd`` while their factories run.
        load_timeout: seconds an async factory may take.
        strict: judge under the strict policy (every warning is an error).

    Returns:
        The :class:`PackReport`.
    """
    if not paths:
        raise ValueError("validate_pack() needs at least one tool file or directory")
    resolved = tuple(resolve_pack_path(path) for path in paths)
    result = await load_custom_tools(resolved, cwd, builtin_tool_names, load_timeout=load_timeout)
    findings = check_load_result(
        result,
        where=", ".join(resolved),
        path=resolved[0] if len(resolved) == 1 else None,
        strict=strict,
    )
    return PackReport(
        paths=resolved,
        tool_names=result.tool_names,
        metadata_names=tuple(item.name for item in result.metadata),
        findings=tuple(findings),
        strict=strict,
    )


def check_pack(
    *paths: PathArg,
    strict: bool = False,
    builtin_tool_names: Iterable[str] = (),
    cwd: PathArg | None = None,
    load_timeout: float | None = DEFAULT_LOAD_TIMEOUT,
    backend: str | None = None,
) -> PackReport:
    """Assert that a tool pack is valid: the one-line validate check for a pack's test suite.

    ::

        def test_pack_is_valid():
            check_pack("tools", strict=True)

    Args:
        *paths: as for :func:`validate_pack`.
        strict: the strict policy: warnings are errors, so they fail the check too.
        builtin_tool_names: names the target host reserves.
        cwd: what the tools see as ``api.cwd`` while their factories run.
        load_timeout: seconds an async factory may take.
        backend: the event loop the factories run on (default asyncio).

    Returns:
        The :class:`PackReport`, for further assertions.

    Raises:
        AssertionError: the pack has errors (or warnings, when ``strict``); the message lists
            every finding.
    """
    __tracebackhide__ = True
    report = run_sync(
        validate_pack,
        *paths,
        builtin_tool_names=builtin_tool_names,
        cwd=cwd,
        load_timeout=load_timeout,
        strict=strict,
        backend=backend,
    )
    if not report.passed(strict=strict):
        raise AssertionError(
            f"the tool pack check failed{' (strict)' if strict else ''}:\n{report.format()}"
        )
    return report
