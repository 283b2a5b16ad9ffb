"""``customtools validate``: load tool packs in child processes and report every problem.

A *pack* is one PATH given on the command line (a tools directory, a module file or a package
directory). With no PATH, every discovered source directory is a pack (and each installed
distribution's entry points one more). The modules of a pack load in a child process
(:mod:`customtools._isolation._audit`), which runs the rulebook's per-tool checks
(:func:`customtools._rules.check_tool`) on what loaded; this module adds the rulebook's pack
checks (name conflicts across packs, similar names, metadata, empty packs) and what only a
child process and a clock can see (crashes, hangs, slow imports). Every severity comes from
the rulebook's policy (:func:`customtools._rules.severity_for`), so ``validate`` and
``customtools.testing.check_pack`` agree on every code.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Iterable
from typing import Any, Final

from customtools._error_results import LoadCode
from customtools._isolation._audit import (
    DEFAULT_FILE_SIZE_LIMIT_MIB,
    DEFAULT_MEMORY_LIMIT_MIB,
    ModuleReport,
    audit_limits,
    audit_modules,
)
from customtools._isolation._limits import WorkerLimits
from customtools._rules import (
    Finding,
    Severity,
    ToolSite,
    check_metadata,
    check_names,
    empty_pack,
    severity_for,
)
from customtools.cli._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    UsageError,
    add_discovery_arguments,
    display_path,
    resolve_cwd,
    scan_options,
)
from customtools.cli._validate_report import FORMATS, Pack, ReportedFinding, render

__all__ = [
    "Findings",
    "add_limit_arguments",
    "add_load_arguments",
    "add_parser",
    "command",
    "load_packs",
    "module_file",
    "worker_limits",
]

DEFAULT_TIMEOUT: Final = 60.0
DEFAULT_SLOW_IMPORT: Final = 0.5


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
    add_load_arguments(parser)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="report format: github prints workflow annotations, sarif a SARIF 2.1.0 log for"
        " code scanning, junit JUnit XML for test dashboards (default: %(default)s)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail (exit 1) on warnings too, not only errors"
    )
    parser.add_argument(
        "--slow-import",
        type=_positive,
        default=DEFAULT_SLOW_IMPORT,
        metavar="S",
        help="warn when a module takes longer than this to load (default: %(default)g)",
    )
    add_limit_arguments(parser)
    add_discovery_arguments(parser, paths=False)
    parser.set_defaults(handler=command)


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    """The pack PATHs and ``--timeout``: what loads, and for how long (``validate`` and
    ``contract``; both add the child-process and discovery options too)."""
    parser.add_argument(
        "packs",
        nargs="*",
        metavar="PATH",
        help="a tools directory, module file or package directory (default: discover tools)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help="seconds one module may take to import and build its tools (default: %(default)g)",
    )


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


def _whole(unit: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {unit}") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be 0 (no limit) or more {unit}")
        return value

    return parse


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The worker processes' limits and environment (``validate`` and ``contract``)."""
    group = parser.add_argument_group(
        "child processes (crash and hang isolation, not a security boundary)"
    )
    group.add_argument(
        "--memory-limit",
        type=_whole("MiB"),
        default=DEFAULT_MEMORY_LIMIT_MIB,
        metavar="MIB",
        help="memory one module may allocate, 0 for no limit (default: %(default)s)",
    )
    group.add_argument(
        "--cpu-limit",
        type=_whole("seconds"),
        default=None,
        metavar="S",
        help="CPU seconds one module may use, 0 for no limit (default: twice --timeout)",
    )
    group.add_argument(
        "--file-size-limit",
        type=_whole("MiB"),
        default=DEFAULT_FILE_SIZE_LIMIT_MIB,
        metavar="MIB",
        help="the largest file a module may write, 0 for no limit (default: %(default)s)",
    )
    group.add_argument(
        "--env",
        dest="pass_env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass environment variable NAME to the modules (repeatable); only PATH, HOME,"
        " locale, temporary-directory and Python variables are passed otherwise",
    )


def worker_limits(args: argparse.Namespace) -> WorkerLimits:
    """The :class:`WorkerLimits` the limit options ask for (``0``: no limit)."""
    cpu = audit_limits(args.timeout).cpu_limit if args.cpu_limit is None else args.cpu_limit
    return WorkerLimits(
        memory_limit_mib=args.memory_limit or None,
        cpu_limit=cpu or None,
        file_size_limit_mib=args.file_size_limit or None,
    )


# -- packs ----------------------------------------------------------------------------------------


def _explicit_packs(paths: list[str], cwd: str) -> list[Pack]:
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
            Pack(
                label=display_path(resolved, here),
                path=resolved,
                candidates=list(scanned.candidates),
                metadata=list(scanned.metadata),
                diagnostics=list(scanned.diagnostics),
                errors=list(scanned.errors),
            )
        )
    return packs


def _discovered_packs(args: argparse.Namespace, cwd: str) -> tuple[list[Pack], Pack]:
    """One pack per source directory (or distribution); the second value holds what the scan
    reported outside any pack."""
    from customtools._errors import TrustStoreError
    from customtools._loading._loader import scan
    from customtools._loading._records import Diagnostic, LoadError
    from customtools._loading._trust_store import TrustStore

    scanned = scan((), cwd, **scan_options(args))
    here = os.getcwd()
    rest = Pack(label="discovery", path=None)
    # The trust gate: project code is loaded (even in the sandbox) only when trusted.
    try:
        pending = TrustStore(app_name=args.app_name).pending(scanned)
    except TrustStoreError as exc:
        rest.errors.append(
            LoadError(path=exc.path, error=str(exc), code=LoadCode.TRUST_STORE_ERROR)
        )
        blocked = {id(c) for c in scanned.candidates if c.source.level == "project"}
    else:
        blocked = {id(c) for item in pending for c in item.source.candidates}
        rest.diagnostics.extend(
            Diagnostic(code=LoadCode.PENDING_TRUST, message=item.message(), path=item.root)
            for item in pending
        )
    packs: dict[tuple[Any, ...], Pack] = {}
    for candidate in scanned.candidates:
        if id(candidate) in blocked:
            continue
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
            pack = packs[key] = Pack(label=where, path=path)
        pack.candidates.append(candidate)
    by_dir = {pack.path: pack for pack in packs.values() if pack.path is not None}
    for item in scanned.metadata:
        owner = by_dir.get(os.path.dirname(item.path))
        (owner or rest).metadata.append(item)
    rest.diagnostics.extend(scanned.diagnostics)
    rest.errors.extend(scanned.errors)
    return list(packs.values()), rest


# -- findings -------------------------------------------------------------------------------------


class Findings:
    """The findings of one run, in the order found, each with its pack; severities follow the
    rulebook's policy (``strict`` or not)."""

    def __init__(self, here: str, *, strict: bool) -> None:
        self.items: list[ReportedFinding] = []
        self.strict = strict
        self._here = here

    def path(self, path: str | None) -> str | None:
        return display_path(path, self._here) if path else None

    def add(self, finding: Finding, pack: Pack | None = None) -> None:
        """Record ``finding``: its path shown relative to here, line 1 of a module file when
        no line is known."""
        file = finding.path
        line = finding.line
        if line is None and file is not None and file.endswith(".py") and os.path.isfile(file):
            line = 1
        self.items.append(
            ReportedFinding(
                finding=dataclasses.replace(finding, path=self.path(file), line=line),
                pack=pack.label if pack is not None and pack.path is not None else None,
            )
        )

    def new(
        self,
        code: str,
        message: str,
        *,
        file: str | None,
        pack: Pack | None = None,
        unknown: Severity = "notice",
        line: int | None = None,
        tool: str | None = None,
        detail: str | None = None,
    ) -> None:
        """Record a finding of ``code`` at the policy's severity."""
        self.add(
            Finding(
                severity=severity_for(code, strict=self.strict, unknown=unknown),
                code=code,
                message=message,
                path=file,
                line=line,
                tool_name=tool,
                detail=detail,
            ),
            pack,
        )

    def load_errors(self, report: ModuleReport, pack: Pack, *, detail: bool = True) -> None:
        """Record the load errors of one module (``detail``: with their tracebacks)."""
        for error in report.errors:
            self.new(
                error["code"],
                error["error"],
                file=error.get("file") or module_file(report),
                line=error.get("line"),
                pack=pack,
                tool=error.get("toolName"),
                detail=error.get("traceback") if detail else None,
                unknown="error",
            )

    def scan(self, pack: Pack) -> None:
        for error in pack.errors:
            self.new(error.code, error.error, file=error.path, pack=pack, unknown="error")
        for item in pack.diagnostics:
            self.new(item.code, item.message, file=item.path, pack=pack)


def module_file(report: ModuleReport) -> str:
    """The file a module report's tools are defined in (a package's ``__init__.py``)."""
    candidate = report.candidate
    if candidate.kind == "package":
        return os.path.join(candidate.path, "__init__.py")
    return candidate.path


def _check_module(report: ModuleReport, pack: Pack, findings: Findings, slow_import: float) -> None:
    file = module_file(report)
    findings.load_errors(report, pack)
    for item in report.diagnostics:
        if item["code"] != LoadCode.SIMILAR_NAME:  # _check_names reports these across every pack
            findings.new(item["code"], item["message"], file=item.get("path"), pack=pack)
    timed_out = any(error["code"] == LoadCode.TIMEOUT for error in report.errors)
    if report.seconds is not None and report.seconds > slow_import and not timed_out:
        findings.new(
            "slow-import",
            f"loading the module took {report.seconds:.2f} s (over {slow_import:g} s); every"
            " host start pays this: import heavy libraries inside execute instead",
            file=file,
            pack=pack,
        )
    for tool in report.tools:
        for data in tool["findings"]:
            found = Finding.from_dict(data)
            findings.add(
                dataclasses.replace(
                    found,
                    severity=severity_for(found.code, strict=findings.strict, unknown="warning"),
                    path=file,
                    line=tool["line"],
                ),
                pack,
            )


def _check_names(packs: list[Pack], builtins: Iterable[str], findings: Findings) -> None:
    """Conflicts and similar names across every pack, in the order given (the first claim of
    a name keeps it, as in a host)."""
    sites = [
        (ToolSite(name=tool["name"], path=path, line=tool["line"], pack=pack.label), pack)
        for pack in packs
        for report in pack.reports
        for path in [findings.path(module_file(report))]
        for tool in report.tools
    ]
    owners = {id(site): pack for site, pack in sites}  # check_names hands the same sites back
    for site, finding in check_names(
        [site for site, _ in sites], builtins=builtins, strict=findings.strict
    ):
        findings.add(finding, owners[id(site)])


def _tool_paths(packs: Iterable[Pack], findings: Findings) -> dict[str, str]:
    """Each tool name and the (shown) file of its first definition."""
    paths: dict[str, str] = {}
    for pack in packs:
        for report in pack.reports:
            shown = findings.path(module_file(report)) or module_file(report)
            for tool in report.tools:
                paths.setdefault(tool["name"], shown)
    return paths


def _check_permissions(pack: Pack, findings: Findings) -> None:
    """Declared permissions: readable without running the module, enforceable here."""
    from customtools._isolation._confine import abi_cap, landlock_abi
    from customtools._permissions import PermissionsError, read_declarations

    abi: int | None = None
    for candidate in pack.candidates:
        try:
            declared = read_declarations(candidate)
        except PermissionsError as exc:
            findings.new(
                "invalid-permissions",
                f"{exc}; see docs/sandbox.md",
                file=candidate.path,
                pack=pack,
                unknown="error",
            )
            continue
        _check_policy(declared, candidate, pack, findings)
        permissions, where = declared.module, declared.module_line
        if permissions is None:
            continue
        if abi is None:
            abi = landlock_abi(abi_cap(os.environ))
        lacking = []
        if abi < 1:
            lacking.append("the filesystem rules (this kernel has no Landlock)")
        elif abi < 4 and not isinstance(permissions.net, str):
            lacking.append(f"the TCP port rules (Landlock ABI {abi} here; ports need ABI 4)")
        if lacking:
            findings.new(
                "unenforceable-permissions",
                f"when sandboxed here, the kernel cannot enforce {' and '.join(lacking)} of"
                f" the permissions declared in {where}; a host with require_sandbox refuses"
                " the module",
                file=where,
                pack=pack,
            )


def _check_policy(declared: Any, candidate: Any, pack: Pack, findings: Findings) -> None:
    """A declared ``POLICY``: readable without running the module, and usable."""
    from customtools._policy import Policy, PolicyError

    error = declared.policy_error
    if error is None and declared.policy is not None:
        try:
            Policy.from_dict(declared.policy, where=declared.policy_line or candidate.path)
        except PolicyError as exc:
            error = str(exc)
    if error is not None:
        findings.new(
            "invalid-policy",
            f"{error}; hosts ignore this POLICY (see docs/policy.md)",
            file=candidate.path,
            pack=pack,
        )


def _check_pack(pack: Pack, findings: Findings) -> None:
    """The pack rules that need only this pack: metadata, and nothing loaded at all."""
    tool_paths = _tool_paths([pack], findings)
    for finding in check_metadata(pack.metadata, tool_paths, strict=findings.strict):
        findings.add(finding, pack)
    failed = pack.errors or any(report.errors for report in pack.reports)
    if not tool_paths and not failed:
        findings.add(empty_pack(pack.label, path=pack.path, strict=findings.strict), pack)


# -- the command ----------------------------------------------------------------------------------


def load_packs(
    args: argparse.Namespace, findings: Findings, *, cwd: str, paths: list[str] | None = None
) -> tuple[list[Pack], Pack]:
    """The packs the options name (``paths``: instead of ``args.packs``), each loaded in child
    processes; what the scans reported is added to ``findings``. The second value holds what
    discovery reported outside any pack."""
    paths = args.packs if paths is None else paths
    if paths:
        _reject_discovery_options(args)
        packs = _explicit_packs(paths, cwd)
        rest = Pack(label="discovery", path=None)
    else:
        packs, rest = _discovered_packs(args, cwd)
    findings.scan(rest)
    for pack in packs:
        findings.scan(pack)
        if pack.candidates:
            pack.reports = audit_modules(
                pack.candidates,
                cwd=cwd,
                timeout=args.timeout,
                limits=worker_limits(args),
                pass_env=tuple(args.pass_env),
            )
    return packs, rest


def command(args: argparse.Namespace) -> int:
    """Run ``validate``; returns the exit status."""
    cwd = resolve_cwd(args)
    here = os.getcwd()
    findings = Findings(here, strict=args.strict)
    packs, rest = load_packs(args, findings, cwd=cwd)
    for pack in packs:
        for report in pack.reports:
            _check_module(report, pack, findings, args.slow_import)
        _check_permissions(pack, findings)
        _check_pack(pack, findings)
    if not packs and not rest.errors:
        findings.new(
            "no-tools-found",
            "no tool modules were discovered; give a pack PATH, or see `customtools list`",
            file=None,
        )
    _check_names(packs, args.builtins, findings)
    # Metadata found outside every pack's directory is checked against all the tools.
    for finding in check_metadata(
        rest.metadata, _tool_paths(packs, findings), strict=findings.strict
    ):
        findings.add(finding)
    failed = any(item.severity == "error" for item in findings.items)
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
