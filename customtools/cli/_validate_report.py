"""What ``customtools validate`` reports: its records and three formats (text, JSON version 1,
GitHub).

The records (:class:`Pack`, :class:`ReportedFinding`) live here, below the command module, so
the command imports the report and never the other way round. The JSON shape is documented in
``docs/cli.md`` and stable: fields are only added; a field that changes meaning or goes away
bumps ``version``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from customtools._format import escape_control
from customtools._isolation._checker import ModuleReport
from customtools._loading._records import Candidate, Diagnostic, LoadError, MetadataFile
from customtools._rules import Finding
from customtools.cli._common import display_path
from customtools.cli._output import REPORT_VERSION, github_command, print_json

__all__ = ["Pack", "ReportedFinding", "render", "to_json"]


@dataclass(slots=True, kw_only=True)
class Pack:
    """One pack being validated: what its scan found, then what its modules reported."""

    label: str
    path: str | None
    candidates: list[Candidate] = field(default_factory=list)
    metadata: list[MetadataFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    reports: list[ModuleReport] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportedFinding:
    """A rulebook :class:`~customtools._rules.Finding` (its ``path`` already shown relative
    to the current directory) and the pack it belongs to (``None`` for discovery-wide
    findings)."""

    finding: Finding
    pack: str | None = None

    @property
    def severity(self) -> str:
        """The finding's severity."""
        return self.finding.severity

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form (every key always present)."""
        item = self.finding
        return {
            "severity": item.severity,
            "code": item.code,
            "message": item.message,
            "file": item.path,
            "line": item.line,
            "pack": self.pack,
            "tool": item.tool_name,
            "pointer": item.pointer,
            "detail": item.detail,
        }


_SEVERITY_ORDER = {"error": 0, "warning": 1, "notice": 2}


def _module_json(report: ModuleReport, here: str) -> dict[str, Any]:
    return {
        "path": display_path(report.candidate.path, here),
        "kind": report.candidate.kind,
        "status": report.status,
        "importSeconds": round(report.seconds, 6) if report.seconds is not None else None,
        "tools": [tool["name"] for tool in report.tools],
    }


def _pack_json(pack: Pack, here: str) -> dict[str, Any]:
    tools = []
    for report in pack.reports:
        for tool in report.tools:
            tools.append(
                {
                    "name": tool["name"],
                    "label": tool["label"],
                    "module": display_path(report.candidate.path, here),
                    "line": tool["line"],
                    "strict": tool["strict"],
                    "hidden": tool["hidden"],
                    "openaiStrictCompatible": tool["openaiStrictCompatible"],
                }
            )
    return {
        "path": pack.label,
        "resolvedPath": pack.path,
        "modules": [_module_json(report, here) for report in pack.reports],
        "tools": tools,
        "metadata": [
            {
                "path": display_path(item.path, here),
                "name": item.name,
                "description": item.description,
            }
            for item in pack.metadata
        ],
    }


def _summary(
    packs: Sequence[Pack], findings: Sequence[ReportedFinding], *, strict: bool, failed: bool
) -> dict[str, Any]:
    counts = {"error": 0, "warning": 0, "notice": 0}
    for item in findings:
        counts[item.severity] += 1
    return {
        "packs": len(packs),
        "modules": sum(len(pack.reports) for pack in packs),
        "tools": sum(len(report.tools) for pack in packs for report in pack.reports),
        "errors": counts["error"],
        "warnings": counts["warning"],
        "notices": counts["notice"],
        "strict": strict,
        "passed": not failed,
    }


def to_json(
    packs: Sequence[Pack],
    findings: Sequence[ReportedFinding],
    *,
    strict: bool,
    failed: bool,
    here: str,
) -> dict[str, Any]:
    """The version-1 JSON report."""
    return {
        "version": REPORT_VERSION,
        "packs": [_pack_json(pack, here) for pack in packs],
        "findings": [item.to_dict() for item in findings],
        "summary": _summary(packs, findings, strict=strict, failed=failed),
    }


def _summary_line(summary: dict[str, Any]) -> str:
    def plural(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    verdict = "passed" if summary["passed"] else "FAILED"
    if summary["strict"]:
        verdict += " (strict)"
    return (
        f"{plural(summary['modules'], 'module')} in {plural(summary['packs'], 'pack')},"
        f" {plural(summary['tools'], 'tool')}: {plural(summary['errors'], 'error')},"
        f" {plural(summary['warnings'], 'warning')}, {plural(summary['notices'], 'notice')}"
        f" - {verdict}"
    )


def _location(item: Finding) -> str:
    if item.path is None:
        return ""
    return f"{item.path}:{item.line}: " if item.line is not None else f"{item.path}: "


def _text(
    packs: Sequence[Pack], findings: Sequence[ReportedFinding], summary: dict[str, Any]
) -> str:
    lines: list[str] = []
    for pack in packs:
        lines.append(escape_control(pack.label))
        for report in pack.reports:
            module = report.candidate
            name = os.path.basename(module.path.rstrip("/\\"))
            if module.kind == "package":
                name += "/"
            elif module.kind == "entry_point":
                name = module.entry_point or module.path
            tools = ", ".join(tool["name"] for tool in report.tools) or "-"
            took = f"{report.seconds * 1000:.0f} ms" if report.seconds is not None else "-"
            line = f"  {report.status:<8} {name:<28} {tools:<32} {took:>8}"
            lines.append(escape_control(line))
        if not pack.reports:
            lines.append("  (no tool modules)")
    ordered = sorted(findings, key=lambda item: _SEVERITY_ORDER[item.severity])
    if ordered and lines:
        lines.append("")
    for reported in ordered:
        item = reported.finding
        line = f"{_location(item)}{item.severity} [{item.code}] {item.message}"
        lines.append(escape_control(line))
    if lines:
        lines.append("")
    lines.append(_summary_line(summary))
    return "\n".join(lines) + "\n"


def _github(findings: Sequence[ReportedFinding], summary: dict[str, Any]) -> str:
    lines = []
    for reported in findings:
        item = reported.finding
        lines.append(
            github_command(
                item.severity,
                item.message,
                file=item.path,
                line=item.line,
                title=f"customtools {item.code}"
                + (f" ({item.tool_name})" if item.tool_name else ""),
            )
        )
    lines.append(_summary_line(summary))
    return "\n".join(lines) + "\n"


def render(
    fmt: str,
    packs: Sequence[Pack],
    findings: Sequence[ReportedFinding],
    *,
    strict: bool,
    failed: bool,
    here: str,
) -> None:
    """Print the report in ``fmt`` (``text``, ``json`` or ``github``) on stdout."""
    report = to_json(packs, findings, strict=strict, failed=failed, here=here)
    if fmt == "json":
        print_json(report)
    elif fmt == "github":
        sys.stdout.write(_github(findings, report["summary"]))
    else:
        sys.stdout.write(_text(packs, findings, report["summary"]))
    sys.stdout.flush()
