"""What ``customtools validate`` reports: its records and its formats (text, JSON version 1,
GitHub annotations, SARIF 2.1.0, JUnit XML); ``customtools contract check`` reports its
findings through the same records and CI formats.

The records (:class:`Pack`, :class:`ReportedFinding`) live here, below the command modules, so
the commands import the report and never the other way round. The JSON shape is documented in
``docs/cli.md`` and stable: fields are only added; a field that changes meaning or goes away
bumps ``version``. SARIF results carry the rulebook code as ``ruleId`` (the rule's summary is
its description); JUnit XML follows the Apache Ant schema that CI dashboards read.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from customtools._format import escape_control
from customtools._isolation._audit import ModuleReport
from customtools._loading._records import Candidate, Diagnostic, LoadError, MetadataFile
from customtools._rules import Finding
from customtools.cli._common import display_path
from customtools.cli._output import REPORT_VERSION, github_command, print_json

__all__ = [
    "FORMATS",
    "Pack",
    "ReportedFinding",
    "github",
    "junit",
    "render",
    "sarif",
    "text_lines",
    "to_json",
]

FORMATS: Final = ("text", "json", "github", "sarif", "junit")
"""The ``--format`` choices of ``validate`` and ``contract check``."""

SARIF_SCHEMA: Final = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


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
    findings); for the contract gate, also the change's kind and why it is accepted."""

    finding: Finding
    pack: str | None = None
    kind: str | None = None
    accepted: str | None = None

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
            **({"kind": self.kind, "accepted": self.accepted} if self.kind else {}),
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


def _line(item: Finding, kind: str) -> str:
    """One finding as text: where, ``kind``, its code and its message (controls escaped)."""
    where = ""
    if item.path is not None:
        where = f"{item.path}:{item.line}: " if item.line is not None else f"{item.path}: "
    return escape_control(f"{where}{kind} [{item.code}] {item.message}")


def text_lines(findings: Sequence[ReportedFinding]) -> list[str]:
    """Each finding as a line of text, errors first: where, its kind (the contract gate's
    class, else its severity), its code and its message."""
    ordered = sorted(findings, key=lambda item: _SEVERITY_ORDER[item.severity])
    return [
        _line(item.finding, (item.kind or item.severity) + (" (accepted)" if item.accepted else ""))
        for item in ordered
    ]


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
    if findings and lines:
        lines.append("")
    lines += text_lines(findings)
    if lines:
        lines.append("")
    lines.append(_summary_line(summary))
    return "\n".join(lines) + "\n"


def github(findings: Sequence[ReportedFinding], summary_line: str) -> str:
    """GitHub workflow annotations, one per finding, then the summary line."""
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
    lines.append(summary_line)
    return "\n".join(lines) + "\n"


def _level(severity: str) -> str:
    """The SARIF level of a severity (``error`` and ``warning`` are spelt alike)."""
    return "note" if severity == "notice" else severity


def _uri(path: str) -> str:
    from urllib.parse import quote

    if os.path.isabs(path):
        return "file://" + quote(path.replace(os.sep, "/"))
    return quote(path.replace(os.sep, "/"))


def sarif(findings: Sequence[ReportedFinding]) -> dict[str, Any]:
    """A SARIF 2.1.0 log of ``findings`` (one run; GitHub code scanning reads it)."""
    from customtools import __version__
    from customtools._rules import RULES

    codes = sorted({item.finding.code for item in findings})
    rules = []
    for code in codes:
        rule = RULES.get(code)
        rules.append(
            {
                "id": code,
                "shortDescription": {"text": rule.summary if rule else code},
                "defaultConfiguration": {"level": _level(rule.severity if rule else "error")},
            }
        )
    results = []
    for item in findings:
        found = item.finding
        result: dict[str, Any] = {
            "ruleId": found.code,
            "ruleIndex": codes.index(found.code),
            "level": _level(found.severity),
            "message": {"text": found.message},
        }
        if found.path:
            location: dict[str, Any] = {"artifactLocation": {"uri": _uri(found.path)}}
            if found.line:
                location["region"] = {"startLine": found.line}
            result["locations"] = [{"physicalLocation": location}]
        properties = {
            key: value
            for key, value in (
                ("tool", found.tool_name),
                ("pointer", found.pointer),
                ("pack", item.pack),
                ("kind", item.kind),
            )
            if value is not None
        }
        if properties:
            result["properties"] = properties
        if item.accepted:
            result["suppressions"] = [
                {"kind": "external", "status": "accepted", "justification": item.accepted}
            ]
        results.append(result)
    driver = {"name": "customtools", "version": __version__, "rules": rules}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }


def junit(suites: Mapping[str, Mapping[str, Sequence[ReportedFinding]]]) -> str:
    """JUnit XML (the Apache Ant schema): one test suite per key of ``suites``, one test case
    per key of its mapping, failed when one of its findings is an error (the failure's type is
    the first error's code); every finding is listed in the suite's ``system-out``."""
    import datetime
    from xml.etree import ElementTree as ET

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites")
    for index, (suite_name, cases) in enumerate(suites.items()):
        failures = sum(any(item.severity == "error" for item in items) for items in cases.values())
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": escape_control(suite_name) or "-",
                "package": escape_control(suite_name) or "-",
                "id": str(index),
                "timestamp": now,
                "hostname": "localhost",
                "tests": str(len(cases)),
                "failures": str(failures),
                "errors": "0",
                "time": "0",
            },
        )
        ET.SubElement(suite, "properties")
        lines = []
        for case_name, items in cases.items():
            case = ET.SubElement(
                suite,
                "testcase",
                {
                    "name": escape_control(case_name) or "-",
                    "classname": escape_control(suite_name) or "-",
                    "time": "0",
                },
            )
            errors = [item.finding for item in items if item.severity == "error"]
            text = [_line(item.finding, item.severity) for item in items]
            lines += text
            if errors:
                failure = ET.SubElement(
                    case,
                    "failure",
                    {"message": escape_control(errors[0].message), "type": errors[0].code},
                )
                failure.text = "\n".join(text)
        ET.SubElement(suite, "system-out").text = "\n".join(lines)
        ET.SubElement(suite, "system-err")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _validate_suites(
    packs: Sequence[Pack], findings: Sequence[ReportedFinding], here: str
) -> dict[str, dict[str, list[ReportedFinding]]]:
    """JUnit grouping of a validate run: a suite per pack, a case per module (and one for
    what belongs to the pack as a whole)."""
    suites: dict[str, dict[str, list[ReportedFinding]]] = {}
    modules: dict[tuple[str, str], list[ReportedFinding]] = {}
    for pack in packs:
        cases = suites.setdefault(pack.label, {})
        for report in pack.reports:
            name = display_path(report.candidate.path, here)
            cases[name] = modules[(pack.label, name)] = []
    for item in findings:
        label = item.pack or "discovery"
        cases = suites.setdefault(label, {})
        path = item.finding.path or ""
        owner = next(
            (
                items
                for (pack_label, name), items in modules.items()
                if pack_label == label and path.startswith(name)
            ),
            None,
        )
        (owner if owner is not None else cases.setdefault("pack", [])).append(item)
    for cases in suites.values():
        if not cases:
            cases["pack"] = []
    return suites


def render(
    fmt: str,
    packs: Sequence[Pack],
    findings: Sequence[ReportedFinding],
    *,
    strict: bool,
    failed: bool,
    here: str,
) -> None:
    """Print the report in ``fmt`` (one of :data:`FORMATS`) on stdout."""
    report = to_json(packs, findings, strict=strict, failed=failed, here=here)
    if fmt == "json":
        print_json(report)
    elif fmt == "github":
        sys.stdout.write(github(findings, _summary_line(report["summary"])))
    elif fmt == "sarif":
        print_json(sarif(findings))
    elif fmt == "junit":
        sys.stdout.write(junit(_validate_suites(packs, findings, here)))
    else:
        sys.stdout.write(_text(packs, findings, report["summary"]))
    sys.stdout.flush()
