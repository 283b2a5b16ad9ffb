"""``customtools validate``: load tool packs in child processes and report every problem.

A *pack* is one PATH given on the command line (a tools directory, a module file or a package
directory). With no PATH, every discovered source directory is a pack (and each installed
distribution's entry points one more). The modules of a pack load in a child process
(:mod:`customtools.cli._sandbox`); the checks on what loaded run there too, and this module
adds the cross-module ones (name conflicts, similar names) and turns it all into findings.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from customtools._loading._records import Candidate, Diagnostic, LoadError, MetadataFile
from customtools.cli._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    UsageError,
    add_discovery_arguments,
    display_path,
    resolve_cwd,
    scan_options,
)
from customtools.cli._sandbox import (
    ModuleReport,
    add_sandbox_arguments,
    load_isolated,
    sandbox_options,
)

__all__ = ["Finding", "add_parser", "command"]

Severity = Literal["error", "warning", "notice"]

DEFAULT_TIMEOUT: Final = 60.0
DEFAULT_SLOW_IMPORT: Final = 0.5

# Scan and load diagnostics worth a warning; every other diagnostic code is a notice.
_WARNING_DIAGNOSTICS: Final = frozenset(
    {
        "no-tools",
        "similar-name",
        "invalid-metadata",
        "broken-symlink",
        "unreadable-directory",
        "invalid-registry",
        "invalid-registry-entry",
        "broken-distribution",
        "unknown-provider",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem ``validate`` reports.

    ``file`` is relative to the current directory when inside it; ``line`` is 1-based or
    ``None``; ``pack`` is the pack's display path (``None`` for discovery-wide findings).
    """

    severity: Severity
    code: str
    message: str
    file: str | None = None
    line: int | None = None
    pack: str | None = None
    tool: str | None = None
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form (every key always present)."""
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "pack": self.pack,
            "tool": self.tool,
            "detail": self.detail,
        }


@dataclass(slots=True, kw_only=True)
class _Pack:
    label: str
    path: str | None
    candidates: list[Candidate] = field(default_factory=list)
    metadata: list[MetadataFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    reports: list[ModuleReport] = field(default_factory=list)


def add_parser(subparsers: Any) -> None:
    """Register ``validate``."""
    parser = subparsers.add_parser(
        "validate",
        help="load tool packs in child processes and report every problem (for CI)",
        description="Load each tool pack in a child process with a timeout and check every"
        " tool: imports, factory contract, names, schemas, descriptions, OpenAI strict-mode"
        " and Anthropic compatibility, name conflicts, import time. Exit status: 0 clean,"
        " 1 findings, 2 usage error.",
    )
    parser.add_argument(
        "packs",
        nargs="*",
        metavar="PATH",
        help="a tools directory, module file or package directory (default: discover tools)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "github"),
        default="text",
        help="report format; github prints workflow annotations (default: %(default)s)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail (exit 1) on warnings too, not only errors"
    )
    parser.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help="seconds one module may take to import and build its tools (default: %(default)g)",
    )
    parser.add_argument(
        "--slow-import",
        type=_positive,
        default=DEFAULT_SLOW_IMPORT,
        metavar="S",
        help="warn when a module takes longer than this to load (default: %(default)g)",
    )
    add_sandbox_arguments(parser)
    add_discovery_arguments(parser, paths=False)
    parser.set_defaults(handler=command)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


# -- packs ----------------------------------------------------------------------------------------


def _explicit_packs(paths: list[str], cwd: str) -> list[_Pack]:
    from customtools._loading._paths import resolve_path
    from customtools._loading._scan import explicit_candidates

    here = os.getcwd()
    packs = []
    for text in paths:
        try:
            resolved = resolve_path(text, here)
        except ValueError as exc:
            raise UsageError(f"pack path {text!r}: {exc}") from None
        if not os.path.lexists(resolved):
            raise UsageError(f"pack path {text!r} does not exist (looked for {resolved})")
        scanned = explicit_candidates([resolved], cwd)
        packs.append(
            _Pack(
                label=display_path(resolved, here),
                path=resolved,
                candidates=list(scanned.candidates),
                metadata=list(scanned.metadata),
                diagnostics=list(scanned.diagnostics),
                errors=list(scanned.errors),
            )
        )
    return packs


def _discovered_packs(args: argparse.Namespace, cwd: str) -> tuple[list[_Pack], _Pack]:
    """One pack per source directory (or distribution); the second value holds what the scan
    reported outside any pack."""
    from customtools._loading._loader import scan

    scanned = scan((), cwd, **scan_options(args))
    here = os.getcwd()
    packs: dict[tuple[Any, ...], _Pack] = {}
    for candidate in scanned.candidates:
        source = candidate.source
        if candidate.kind == "entry_point":
            where = f"entry points of {source.distribution or 'an installed package'}"
            key: tuple[Any, ...] = ("dist", source.distribution)
            path = None
        else:
            path = os.path.dirname(candidate.path.rstrip("/\\"))
            where = display_path(path, here)
            key = ("dir", path, source.provider, source.level)
        pack = packs.get(key)
        if pack is None:
            pack = packs[key] = _Pack(label=where, path=path)
        pack.candidates.append(candidate)
    by_dir = {pack.path: pack for pack in packs.values() if pack.path is not None}
    rest = _Pack(label="discovery", path=None)
    for item in scanned.metadata:
        owner = by_dir.get(os.path.dirname(item.path))
        (owner or rest).metadata.append(item)
    rest.diagnostics.extend(scanned.diagnostics)
    rest.errors.extend(scanned.errors)
    return list(packs.values()), rest


# -- findings -------------------------------------------------------------------------------------


class _Findings:
    def __init__(self, here: str) -> None:
        self.items: list[Finding] = []
        self._here = here

    def path(self, path: str | None) -> str | None:
        return display_path(path, self._here) if path else None

    def add(
        self,
        severity: Severity,
        code: str,
        message: str,
        *,
        file: str | None,
        line: int | None = None,
        pack: _Pack | None = None,
        tool: str | None = None,
        detail: str | None = None,
    ) -> None:
        if line is None and file is not None and file.endswith(".py") and os.path.isfile(file):
            line = 1
        self.items.append(
            Finding(
                severity=severity,
                code=code,
                message=message,
                file=self.path(file),
                line=line,
                pack=pack.label if pack is not None and pack.path is not None else None,
                tool=tool,
                detail=detail,
            )
        )

    def scan(self, pack: _Pack) -> None:
        for error in pack.errors:
            self.add("error", error.code, error.error, file=error.path, pack=pack)
        for item in pack.diagnostics:
            self.diagnostic(item.to_dict(), pack)

    def diagnostic(self, item: dict[str, Any], pack: _Pack) -> None:
        severity: Severity = "warning" if item["code"] in _WARNING_DIAGNOSTICS else "notice"
        self.add(severity, item["code"], item["message"], file=item.get("path"), pack=pack)


def _module_file(report: ModuleReport) -> str:
    candidate = report.candidate
    if candidate.kind == "package":
        return os.path.join(candidate.path, "__init__.py")
    return candidate.path


def _check_module(
    report: ModuleReport, pack: _Pack, findings: _Findings, slow_import: float
) -> None:
    file = _module_file(report)
    for error in report.errors:
        findings.add(
            "error",
            error["code"],
            error["message"],
            file=error.get("file") or file,
            line=error.get("line"),
            pack=pack,
            tool=error.get("toolName"),
            detail=error.get("traceback"),
        )
    for item in report.diagnostics:
        if item["code"] != "similar-name":  # _check_names reports these across every pack
            findings.diagnostic(item, pack)
    timed_out = any(error["code"] == "timeout" for error in report.errors)
    if report.seconds is not None and report.seconds > slow_import and not timed_out:
        findings.add(
            "warning",
            "slow-import",
            f"loading the module took {report.seconds:.2f} s (over {slow_import:g} s); every"
            " host start pays this: import heavy libraries inside execute instead",
            file=file,
            pack=pack,
        )
    for tool in report.tools:
        name = tool["name"]
        if not tool["description"].strip():
            findings.add(
                "warning",
                "empty-description",
                f"tool {name!r} has no description; the model reads it to decide when and how"
                " to call the tool, so say what it does and when to use it",
                file=file,
                line=tool["line"],
                pack=pack,
                tool=name,
            )
        for issue in tool["issues"]:
            findings.add(
                "warning",
                f"{issue['provider']}-{issue['rule']}",
                f"tool {name!r}: {issue['message']}",
                file=file,
                line=tool["line"],
                pack=pack,
                tool=name,
            )


def _check_names(packs: list[_Pack], builtins: Iterable[str], findings: _Findings) -> None:
    claims: dict[str, tuple[str, str] | None] = dict.fromkeys(builtins)
    folded: dict[str, str] = {name.casefold(): name for name in claims}
    for pack in packs:
        for report in pack.reports:
            file = _module_file(report)
            for tool in report.tools:
                name = tool["name"]
                shown = findings.path(file) or file
                if name in claims:
                    first = claims[name]
                    if first is None:
                        message = f"tool name {name!r} is a built-in tool name; rename the tool"
                    else:
                        other = "this pack" if first[1] == pack.label else f"pack {first[1]}"
                        message = (
                            f"tool name {name!r} is already taken by {first[0]} ({other});"
                            " a host loads only the first; rename one of them"
                        )
                    findings.add(
                        "error",
                        "name-conflict",
                        message,
                        file=file,
                        line=tool["line"],
                        pack=pack,
                        tool=name,
                    )
                    continue
                claims[name] = (shown, pack.label)
                similar = folded.setdefault(name.casefold(), name)
                if similar != name:
                    findings.add(
                        "warning",
                        "similar-name",
                        f"tool {name!r} differs from {similar!r} only by letter case; models"
                        " may confuse them",
                        file=file,
                        line=tool["line"],
                        pack=pack,
                        tool=name,
                    )


# -- the command ----------------------------------------------------------------------------------


def command(args: argparse.Namespace) -> int:
    """Run ``validate``; returns the exit status."""
    from customtools.cli._validate_report import render

    cwd = resolve_cwd(args)
    here = os.getcwd()
    if args.packs:
        _reject_discovery_options(args)
        packs = _explicit_packs(args.packs, cwd)
        rest = _Pack(label="discovery", path=None)
    else:
        packs, rest = _discovered_packs(args, cwd)
    findings = _Findings(here)
    findings.scan(rest)
    for pack in packs:
        findings.scan(pack)
        if pack.candidates:
            pack.reports = load_isolated(
                pack.candidates, cwd=cwd, timeout=args.timeout, sandbox=sandbox_options(args)
            )
        elif not pack.errors:
            findings.add(
                "warning",
                "empty-pack",
                f"no tool modules in {pack.label}; a tools directory holds <name>.py files"
                " and package directories",
                file=pack.path,
                pack=pack,
            )
        for report in pack.reports:
            _check_module(report, pack, findings, args.slow_import)
    if not packs and not rest.errors:
        findings.add(
            "warning",
            "no-tools-found",
            "no tool modules were discovered; give a pack PATH, or see `customtools list`",
            file=None,
        )
    _check_names(packs, args.builtins, findings)
    errors = sum(1 for item in findings.items if item.severity == "error")
    warnings = sum(1 for item in findings.items if item.severity == "warning")
    failed = errors > 0 or (args.strict and warnings > 0)
    render(args.format, packs, findings.items, strict=args.strict, failed=failed, here=here)
    return EXIT_FINDINGS if failed else EXIT_OK


def _reject_discovery_options(args: argparse.Namespace) -> None:
    used = [
        flag
        for flag, value in (
            ("--plugin-dir", args.plugin_dirs),
            ("--disable", args.disabled),
            ("--no-entry-points", not args.entry_points),
            ("--app-name", args.app_name != "customtools"),
        )
        if value
    ]
    if used:
        raise UsageError(
            f"{', '.join(used)} select(s) discovered tools; they cannot be combined with pack"
            " PATHs (validate the PATHs alone, or drop them to validate what is discovered)"
        )
