"""``customtools contract``: write the tool packs' contract, and gate changes against a baseline.

``contract export`` loads the packs the way ``validate`` does (each module in a child process)
and writes their contract document (:mod:`customtools._rules._contract`): a lock file for the
packs' interface. ``contract check --baseline FILE|GIT-REF`` loads the current packs the same
way, reads the baseline (a contract file; ``REV:PATH``, a contract file as committed in git;
or a git revision, whose packs are exported from ``git archive``) and reports every difference,
classified, in the formats CI systems read. Exit status: 0 when nothing breaks callers, 1 on a
breaking change (or an undecided one with ``--strict``, or a module that failed to load),
2 usage error.

A pack's version is read from the plugin manifest (``.plugin/plugin.json``,
``.claude-plugin/plugin.json`` or ``plugin.json``) in the pack's directory or the directory
above it (a plugin root's ``tools/``), else from what discovery knows (a plugin's or an
installed distribution's version).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from customtools._rules._contract import (
    ContractError,
    ContractFinding,
    compare_contracts,
    contract_document,
    dump_contract,
    read_acknowledgements,
    read_contract,
    tool_entry,
)
from customtools.cli._common import (
    EXIT_FINDINGS,
    EXIT_OK,
    UsageError,
    add_discovery_arguments,
    display_path,
    resolve_cwd,
)
from customtools.cli._output import REPORT_VERSION, print_json
from customtools.cli._validate import (
    Findings,
    add_limit_arguments,
    add_load_arguments,
    load_packs,
    module_file,
)
from customtools.cli._validate_report import (
    FORMATS,
    Pack,
    ReportedFinding,
    github,
    junit,
    sarif,
    text_lines,
)

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    """Register ``contract`` with its ``export`` and ``check`` actions."""
    parser = subparsers.add_parser(
        "contract",
        help="write the tools' contract, or check changes against a baseline (for CI)",
        description="The public contract of tool packs (names, descriptions, input and output"
        " schemas, annotations, approval, permissions, pack version) and a gate that"
        " classifies every change as breaking, compatible, notice or undecided. See"
        " docs/ci.md.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="write the contract document (JSON) of the packs",
        description="Load the packs like `customtools validate` and write their contract as"
        " deterministic JSON: commit it beside the packs as a lock file of their interface."
        " Exit status: 0 written, 1 a module failed to load (nothing written), 2 usage error.",
    )
    _common(export)
    export.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE instead of standard output"
    )
    export.set_defaults(handler=export_command)
    check = actions.add_parser(
        "check",
        help="classify every change against a baseline contract; fail on breaking ones",
        description="Compare the packs with a baseline: a contract FILE, REV:PATH (that file"
        " as committed at a git revision), or a git revision whose packs are exported. Exit"
        " status: 0 nothing breaks callers, 1 breaking changes (undecided ones too with"
        " --strict) or load errors, 2 usage error.",
    )
    _common(check)
    check.add_argument(
        "--baseline",
        required=True,
        metavar="FILE|GIT-REF",
        help="the contract to compare with: a file, REV:PATH, or a git revision",
    )
    check.add_argument(
        "--accept",
        metavar="FILE",
        help='acknowledged breaking changes: {"accept": [{"tool", "code", "pointer", "reason"}]}',
    )
    check.add_argument(
        "--strict",
        action="store_true",
        help="treat changes the gate cannot decide as breaking",
    )
    check.add_argument(
        "--format", choices=FORMATS, default="text", help="report format (default: %(default)s)"
    )
    check.set_defaults(handler=check_command)


def _common(parser: argparse.ArgumentParser) -> None:
    add_load_arguments(parser)
    add_limit_arguments(parser)
    add_discovery_arguments(parser, paths=False)


# -- the current contract -------------------------------------------------------------------------


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")


def _pack_version(pack: Pack) -> str | None:
    from customtools._loading._files import FileRuleError, load_json, read_text_file
    from customtools._loading._plugins import find_manifest

    if pack.path is not None:
        here = pack.path if os.path.isdir(pack.path) else os.path.dirname(pack.path)
        for directory in (here, os.path.dirname(here)):
            manifest = find_manifest(directory)
            if manifest is None:
                continue
            try:
                data = load_json(read_text_file(manifest))
            except (FileRuleError, OSError):
                return None
            version = data.get("version") if isinstance(data, dict) else None
            return str(version) if isinstance(version, (str, int)) else None
    for candidate in pack.candidates:
        if candidate.source.plugin_version:
            return candidate.source.plugin_version
    return None


def _module(pack: Pack, candidate: Any) -> str:
    if candidate.kind == "entry_point":
        return str(candidate.entry_point or candidate.path)
    path = str(candidate.path)
    base = pack.path if pack.path is not None and os.path.isdir(pack.path) else None
    if base is None:
        return os.path.basename(path.rstrip("/\\"))
    return _posix(os.path.relpath(path, base))


def _contract(
    packs: Sequence[Pack], labels: Sequence[str], findings: Findings
) -> tuple[dict[str, Any], set[str], dict[str, tuple[str, int | None]]]:
    """The contract document of loaded ``packs`` (labelled ``labels``); where modules failed
    to load (their errors added to ``findings``); each tool's file and line."""
    from customtools._permissions import PermissionsError, read_declarations
    from customtools._policy import Policy, PolicyError

    documented = []
    policies: dict[str, dict[str, Any]] = {}
    failed: set[str] = set()
    places: dict[str, tuple[str, int | None]] = {}
    for pack, label in zip(packs, labels, strict=True):
        tools: dict[str, Any] = {}
        for report in pack.reports:
            where = _module(pack, report.candidate)
            module = f"{_posix(label).rstrip('/')}/{where}"
            if report.errors:
                failed.add(module)
            findings.load_errors(report, pack, detail=False)
            try:
                declared = read_declarations(report.candidate)
            except PermissionsError:
                declared = None  # `validate` reports it; the contract shows none
            if declared is not None and declared.policy is not None:
                try:
                    settings = Policy.from_dict(declared.policy).to_dict()
                except PolicyError:
                    settings = None  # `validate` reports it; the contract shows none
                if settings is not None:
                    policies.setdefault(_posix(label), {})[where] = settings
            for tool in report.tools:
                name = tool["name"]
                permissions = declared and (declared.tools.get(name) or declared.module)
                tools.setdefault(
                    name,
                    tool_entry(
                        tool["wire"],
                        module=where,
                        permissions=permissions.to_dict() if permissions else None,
                    ),
                )
                shown = findings.path(module_file(report)) or module_file(report)
                places.setdefault(name, (shown, tool["line"]))
        documented.append((_posix(label), _pack_version(pack), tools))
    return contract_document(documented, policies), failed, places


def export_command(args: argparse.Namespace) -> int:
    """Run ``contract export``; returns the exit status."""
    cwd = resolve_cwd(args)
    findings = Findings(os.getcwd(), strict=False)
    packs, _ = load_packs(args, findings, cwd=cwd)
    document, _, _ = _contract(packs, [pack.label for pack in packs], findings)
    errors = [item for item in findings.items if item.severity == "error"]
    if errors:
        for item in errors:
            print(f"customtools contract export: {item.finding}", file=sys.stderr)
        print(
            "customtools contract export: nothing written: a contract with a module missing"
            " would read as removed tools; fix the module (see `customtools validate`)",
            file=sys.stderr,
        )
        return EXIT_FINDINGS
    text = dump_contract(document)
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


# -- the baseline ---------------------------------------------------------------------------------


def _git(args: list[str], cwd: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def _baseline(args: argparse.Namespace, cwd: str, labels: list[str]) -> tuple[dict[str, Any], str]:
    """The baseline document and how to name it."""
    here = os.getcwd()
    given = args.baseline
    if os.path.isfile(given):
        try:
            with open(given, encoding="utf-8") as handle:
                return read_contract(handle.read(), given), given
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--baseline {given!r} cannot be read: {exc}") from None
        except ContractError as exc:
            raise UsageError(str(exc)) from None
    try:
        top = _git(["rev-parse", "--show-toplevel"], here)
    except OSError:
        top = None
    if top is None or top.returncode != 0:
        raise UsageError(
            f"--baseline {given!r} is not a file, and this is no git work tree where it could"
            " name a revision"
        )
    if ":" in given:
        shown = _git(["show", given], here)
        if shown.returncode != 0:
            raise UsageError(
                f"--baseline {given!r}: git cannot show it"
                f" ({shown.stderr.decode(errors='replace').strip()})"
            )
        try:
            return read_contract(shown.stdout.decode("utf-8"), given), given
        except (ContractError, UnicodeDecodeError) as exc:
            raise UsageError(str(exc)) from None
    if _git(["rev-parse", "--verify", "--quiet", f"{given}^{{commit}}"], here).returncode != 0:
        raise UsageError(
            f"--baseline {given!r} is neither a file nor a git revision; give a contract file"
            " (`customtools contract export`), REV:PATH or a revision such as origin/main"
        )
    if not args.packs:
        raise UsageError(
            "a git revision as --baseline needs the pack PATHs (the packs are exported as they"
            " were at that revision)"
        )
    return _export_at(args, given, top.stdout.decode().strip(), cwd, labels), given


def _export_at(
    args: argparse.Namespace, revision: str, top: str, cwd: str, labels: list[str]
) -> dict[str, Any]:
    """The contract of the pack PATHs as they were at ``revision`` (from ``git archive``)."""
    import io
    import tarfile
    import tempfile

    from customtools._loading._plugins import MANIFEST_LOCATIONS

    top = os.path.realpath(top)
    wanted: list[str] = []
    relative: list[str] = []
    for text in args.packs:
        path = os.path.relpath(os.path.realpath(os.path.abspath(text)), top)
        if path == os.pardir or path.startswith(os.pardir + os.sep):
            raise UsageError(f"pack path {text!r} is outside the git work tree {top}")
        relative.append(_posix(path))
        folder = os.path.dirname(path) if path.endswith(".py") else path
        for directory in (folder, os.path.dirname(folder)):
            wanted += [_posix(os.path.join(directory, m)) for m in MANIFEST_LOCATIONS]
        wanted.append(_posix(path))
    present = [
        spec
        for spec in dict.fromkeys(wanted)
        if _git(["cat-file", "-e", f"{revision}:{spec}"], top).returncode == 0
    ]
    with tempfile.TemporaryDirectory(prefix="customtools-baseline-") as tree:
        if present:
            archived = _git(["archive", "--format=tar", revision, "--", *present], top)
            if archived.returncode != 0:
                raise UsageError(
                    f"git archive {revision} failed:"
                    f" {archived.stderr.decode(errors='replace').strip()}"
                )
            with tarfile.open(fileobj=io.BytesIO(archived.stdout)) as archive:
                if hasattr(tarfile, "data_filter"):
                    archive.extractall(tree, filter="data")
                else:  # Python without extraction filters: files and directories only
                    members = [
                        m
                        for m in archive.getmembers()
                        if (m.isfile() or m.isdir())
                        and not m.name.startswith("/")
                        and os.pardir not in m.name.split("/")
                    ]
                    archive.extractall(tree, members=members)  # noqa: S202 - checked above
        kept = [
            (os.path.join(tree, path), label)
            for path, label in zip(relative, labels, strict=True)
            if os.path.lexists(os.path.join(tree, path))
        ]
        inside = os.path.relpath(os.path.realpath(cwd), top)
        old_cwd = os.path.join(tree, inside) if not inside.startswith(os.pardir) else tree
        os.makedirs(old_cwd, exist_ok=True)
        findings = Findings(os.getcwd(), strict=False)
        packs, _ = load_packs(args, findings, cwd=old_cwd, paths=[path for path, _ in kept])
        document, failed, _ = _contract(packs, [label for _, label in kept], findings)
    if failed:
        print(
            f"customtools contract: at {revision}, module(s) {', '.join(sorted(failed))} failed"
            " to load; their tools are missing from the baseline",
            file=sys.stderr,
        )
    return document


# -- the check ------------------------------------------------------------------------------------


def check_command(args: argparse.Namespace) -> int:
    """Run ``contract check``; returns the exit status."""
    cwd = resolve_cwd(args)
    here = os.getcwd()
    acknowledgements = []
    if args.accept:
        try:
            with open(args.accept, encoding="utf-8") as handle:
                acknowledgements = read_acknowledgements(handle.read(), args.accept)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--accept {args.accept!r} cannot be read: {exc}") from None
        except ContractError as exc:
            raise UsageError(str(exc)) from None
    findings = Findings(here, strict=args.strict)
    packs, _ = load_packs(args, findings, cwd=cwd)
    labels = [pack.label for pack in packs]
    baseline, named = _baseline(args, cwd, labels)
    current, failed, places = _contract(packs, labels, findings)
    reported = list(findings.items)
    for item in compare_contracts(
        baseline,
        current,
        strict=args.strict,
        acknowledgements=acknowledgements,
        unreadable=failed,
    ):
        reported.append(_placed(item, places, here))
    failed_run = any(item.severity == "error" for item in reported)
    summary = _summary(reported, baseline, current, named, strict=args.strict, failed=failed_run)
    _render(args.format, reported, current, summary)
    return EXIT_FINDINGS if failed_run else EXIT_OK


def _placed(
    item: ContractFinding, places: dict[str, tuple[str, int | None]], here: str
) -> ReportedFinding:
    import dataclasses

    found = item.finding
    file, line = places.get(found.tool_name or "", (found.path, None))
    if found.code == "unused-acknowledgement":
        file, line = found.path, None
    path = display_path(file, here) if file else None
    return ReportedFinding(
        finding=dataclasses.replace(found, path=path, line=line),
        kind=item.kind,
        accepted=item.accepted,
    )


def _count(document: dict[str, Any]) -> int:
    return sum(len(pack["tools"]) for pack in document["packs"])


def _summary(
    findings: Sequence[ReportedFinding],
    baseline: dict[str, Any],
    current: dict[str, Any],
    named: str,
    *,
    strict: bool,
    failed: bool,
) -> dict[str, Any]:
    def count(kind: str, *, accepted: bool = False) -> int:
        return sum(
            1 for item in findings if item.kind == kind and (item.accepted is not None) == accepted
        )

    return {
        "baseline": named,
        "baselineTools": _count(baseline),
        "tools": _count(current),
        "breaking": count("breaking"),
        "accepted": count("breaking", accepted=True) + count("undecided", accepted=True),
        "undecided": count("undecided"),
        "compatible": count("compatible"),
        "notices": count("notice"),
        "errors": sum(1 for item in findings if item.kind is None and item.severity == "error"),
        "strict": strict,
        "passed": not failed,
    }


def _summary_line(summary: dict[str, Any]) -> str:
    verdict = "passed" if summary["passed"] else "FAILED"
    if summary["strict"]:
        verdict += " (strict)"
    loaded = f", {summary['errors']} load errors" if summary["errors"] else ""
    tools = f"{summary['tools']} tool{'' if summary['tools'] == 1 else 's'}"
    return (
        f"{tools} against {summary['baselineTools']} in {summary['baseline']}:"
        f" {summary['breaking']} breaking, {summary['undecided']} undecided,"
        f" {summary['accepted']} accepted, {summary['compatible']} compatible,"
        f" {summary['notices']} notices{loaded} - {verdict}"
    )


def _render(
    fmt: str, findings: list[ReportedFinding], current: dict[str, Any], summary: dict[str, Any]
) -> None:
    if fmt == "json":
        print_json(
            {
                "version": REPORT_VERSION,
                "findings": [item.to_dict() for item in findings],
                "summary": summary,
            }
        )
    elif fmt == "github":
        sys.stdout.write(github(findings, _summary_line(summary)))
    elif fmt == "sarif":
        print_json(sarif(findings))
    elif fmt == "junit":
        cases: dict[str, list[ReportedFinding]] = {}
        for pack in current["packs"]:
            for name in pack["tools"]:
                cases.setdefault(name, [])
        for item in findings:
            cases.setdefault(item.finding.tool_name or "contract", []).append(item)
        sys.stdout.write(junit({"customtools contract": cases or {"contract": []}}))
    else:
        lines = text_lines(findings)
        lines.append(_summary_line(summary))
        sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
