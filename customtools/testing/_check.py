"""The validate check a tool pack runs in its own test suite: :func:`check_pack`.

It loads the pack in the test process with the host's loader and turns what the loader
reports, plus a few checks of each tool's definition, into :class:`PackFinding` records:

errors (the check fails)
    every load error, under its loader code (``import-error``, ``factory-error``,
    ``invalid-tool``, ``name-conflict``, ...); ``no-tools`` when nothing loaded;
    ``empty-description`` for a tool without a description; ``invalid-schema`` when the
    validator cannot be compiled; ``invalid-default`` when a property's ``default`` breaks its
    own schema (the adapter would hand the tool an argument the schema forbids).

warnings (the check fails only with ``strict=True``)
    every loader diagnostic, under its code (``similar-name``, ``skipped-file``, ...);
    ``required-not-defined`` for a ``required`` name with no entry in ``properties``;
    ``metadata-name-taken`` for a metadata file named like a tool of the pack.

``empty-description`` is a warning for the ``customtools validate`` command and an error here:
a pack's own test suite is where a missing description should stop the author.

The ``customtools validate`` command goes further (a child process per pack with a timeout,
provider-compatibility warnings, import times); this check is the fast in-process subset that
fits in a unit test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from customtools._errors import SchemaError, ToolArgumentsError
from customtools._loading._loader import DEFAULT_LOAD_TIMEOUT, load_custom_tools
from customtools._tool import CustomTool
from customtools.testing._pack import PathArg, resolve_pack_path
from customtools.testing._sync import run_sync

__all__ = ["PackFinding", "PackReport", "check_pack", "validate_pack"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PackFinding:
    """One problem :func:`check_pack` found.

    Attributes:
        severity: ``"error"`` fails the check; ``"warning"`` fails it only when strict.
        code: stable kebab-case code (the loader's codes, plus the check's own; see
            ``docs/testing.md``).
        message: one line saying what is wrong and what to do.
        path: the file concerned, when known.
        tool_name: the tool concerned, when known.
    """

    severity: Severity
    code: str
    message: str
    path: str | None = None
    tool_name: str | None = None

    def __str__(self) -> str:
        where = self.path or "(pack)"
        tool = f" tool {self.tool_name!r}" if self.tool_name else ""
        return f"{self.severity}: {where}{tool} [{self.code}]: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``None`` fields are omitted."""
        out: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }
        if self.path is not None:
            out["path"] = self.path
        if self.tool_name is not None:
            out["toolName"] = self.tool_name
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class PackReport:
    """What :func:`validate_pack` found.

    Attributes:
        paths: the pack paths checked (absolute).
        tool_names: the tools that loaded, in order.
        metadata_names: the names of the pack's metadata files (never tools).
        findings: errors and warnings, in the order found.
    """

    paths: tuple[str, ...]
    tool_names: tuple[str, ...] = ()
    metadata_names: tuple[str, ...] = ()
    findings: tuple[PackFinding, ...] = ()

    @property
    def errors(self) -> tuple[PackFinding, ...]:
        """The findings that fail the check."""
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[PackFinding, ...]:
        """The findings that fail the check only when strict."""
        return tuple(f for f in self.findings if f.severity == "warning")

    def passed(self, *, strict: bool = False) -> bool:
        """``True`` when there is no error (and, if ``strict``, no warning)."""
        return not (self.findings if strict else self.errors)

    def format(self) -> str:
        """A summary line, then one line per finding."""
        counts = f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)"
        head = f"tool pack {', '.join(self.paths)}: {len(self.tool_names)} tool(s), {counts}"
        return "\n".join([head, *(f"  {finding}" for finding in self.findings)])

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "paths": list(self.paths),
            "tools": list(self.tool_names),
            "metadata": list(self.metadata_names),
            "findings": [finding.to_dict() for finding in self.findings],
        }


def _pointer(name: str) -> str:
    return "/" + name.replace("~", "~0").replace("/", "~1")


def _tool_findings(tool: CustomTool, path: str) -> list[PackFinding]:
    from customtools._validation import compile_validator

    found: list[PackFinding] = []

    def add(severity: Severity, code: str, message: str) -> None:
        found.append(
            PackFinding(
                severity=severity, code=code, message=message, path=path, tool_name=tool.name
            )
        )

    if not tool.description.strip():
        add(
            "error",
            "empty-description",
            "the tool has no description; models choose tools by it, so say what it does"
            " and when to use it",
        )
    schema = tool.parameters
    try:
        validator = compile_validator(
            schema, tool_name=tool.name, coerce=False, apply_defaults=False
        )
    except SchemaError as exc:
        add("error", "invalid-schema", f"the parameters schema does not compile: {exc}")
        return found
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else ():
        if isinstance(name, str) and name not in properties:
            add(
                "warning",
                "required-not-defined",
                f"{name!r} is required but has no entry in 'properties'; describe it there",
            )
    defaults = {
        name: sub["default"]
        for name, sub in properties.items()
        if isinstance(sub, Mapping) and "default" in sub
    }
    if defaults:
        try:
            validator.validate(defaults)
        except ToolArgumentsError as exc:
            for violation in exc.violations:
                owner = next(
                    (n for n in defaults if (violation.path + "/").startswith(_pointer(n) + "/")),
                    None,
                )
                if owner is not None:
                    add(
                        "error",
                        "invalid-default",
                        f"the default of {owner!r} breaks its own schema: {violation};"
                        " fix the default or the constraint",
                    )
    return found


async def validate_pack(
    *paths: PathArg,
    builtin_tool_names: Iterable[str] = (),
    cwd: PathArg | None = None,
    load_timeout: float | None = DEFAULT_LOAD_TIMEOUT,
) -> PackReport:
    """Load a pack and report every problem with it; never fails by itself.

    Args:
        *paths: tool files, package directories or tools directories (at least one),
            relative to the working directory; all are checked together, so a name taken
            twice across them is a ``name-conflict``.
        builtin_tool_names: names the target host reserves.
        cwd: what the tools see as ``api.cwd`` while their factories run.
        load_timeout: seconds an async factory may take.

    Returns:
        The :class:`PackReport`.
    """
    if not paths:
        raise ValueError("validate_pack() needs at least one tool file or directory")
    resolved = tuple(resolve_pack_path(path) for path in paths)
    result = await load_custom_tools(resolved, cwd, builtin_tool_names, load_timeout=load_timeout)
    findings = [
        PackFinding(
            severity="error",
            code=error.code,
            message=error.error,
            path=error.path,
            tool_name=error.tool_name,
        )
        for error in result.errors
    ]
    if not result.tools and not result.errors:
        findings.append(
            PackFinding(
                severity="error",
                code="no-tools",
                message="no tool loaded; a tools directory contributes its *.py files and"
                " package directories",
                path=", ".join(resolved),
            )
        )
    for loaded in result.tools:
        findings += _tool_findings(loaded.tool, loaded.path)
    findings += [
        PackFinding(severity="warning", code=item.code, message=item.message, path=item.path)
        for item in result.diagnostics
    ]
    for item in result.metadata:
        owner = result.get(item.name)
        if owner is not None:
            findings.append(
                PackFinding(
                    severity="warning",
                    code="metadata-name-taken",
                    message=f"metadata file names {item.name!r}, which is also a tool from"
                    f" {owner.path}; the tool is used and the metadata is"
                    " not: rename or remove one",
                    path=item.path,
                    tool_name=item.name,
                )
            )
    return PackReport(
        paths=resolved,
        tool_names=result.tool_names,
        metadata_names=tuple(item.name for item in result.metadata),
        findings=tuple(findings),
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
        strict: warnings fail the check too.
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
        backend=backend,
    )
    if not report.passed(strict=strict):
        raise AssertionError(
            f"the tool pack check failed{' (strict)' if strict else ''}:\n{report.format()}"
        )
    return report
