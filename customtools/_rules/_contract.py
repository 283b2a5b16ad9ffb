"""The contract of tool packs, and the gate that compares two contracts.

A *contract document* is what callers of the tools rely on, per pack: each tool's wire form
(:meth:`~customtools.CustomTool.to_dict`: name, label, description, input and output schema,
annotations, approval, former names, ...), its declared permissions and the module it is
defined in (relative to the pack), and the pack's version where the pack declares one.
Nothing in it depends on the machine: written with sorted keys, it is a lock file for the
packs' interface (``customtools contract export``). A pack's ``policy`` key holds the
execution policy its modules declare (``POLICY``: module -> settings, docs/policy.md), absent
when none does; the gate reads it as information, never as a change that breaks callers.

:func:`compare_contracts` classifies every difference between a baseline and the current
document as *breaking*, *compatible*, *notice* or *undecided* (the gate cannot tell), each a
rulebook code with its severity in :data:`~customtools._rules.RULES` (breaking: error;
undecided: warning, so ``strict`` makes it an error; the rest: notice). A breaking or
undecided change is *accepted* (reported as a notice that says why) when the pack's version
was raised by a major step, or when an acknowledgement names it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from customtools._rules._schemadiff import SchemaChange, diff_schemas
from customtools._rules._table import Finding, severity_for

__all__ = [
    "CONTRACT_FORMAT",
    "Acknowledgement",
    "ContractError",
    "ContractFinding",
    "Kind",
    "change_kind",
    "compare_contracts",
    "contract_document",
    "dump_contract",
    "major_step",
    "read_acknowledgements",
    "read_contract",
    "tool_entry",
]

CONTRACT_FORMAT: Final = "customtools-contract/1"
"""The ``format`` of a contract document; it changes only when a key changes meaning."""

Kind = Literal["breaking", "compatible", "notice", "undecided"]

_COMPATIBLE: Final = frozenset(
    {
        "tool-added",
        "tool-renamed",
        "parameter-added",
        "type-widened",
        "enum-value-added",
        "output-field-added",
        "output-narrowed",
        "permissions-narrowed",
    }
)
_WHY: Final = {
    "tool-removed": "every agent, prompt and saved conversation that calls it fails",
    "parameter-required": "calls that omit it are refused",
    "parameter-removed": "calls that pass it are refused",
    "type-narrowed": "calls that pass such values are refused",
    "enum-value-removed": "calls that pass it are refused",
    "output-field-removed": "callers that read it break",
    "output-type-changed": "callers written for the old output can break",
    "permissions-widened": "users must review and trust the pack again",
    "approval-required": "unattended callers now wait for a person",
    "contract-undecided": "the gate cannot decide whether this breaks callers",
}
_PERMISSION_DEFAULTS: Final = {"read": ["."], "write": [], "net": "none", "run": False, "env": []}
_HANDLED: Final = frozenset(
    {
        "label",
        "description",
        "parameters",
        "outputSchema",
        "annotations",
        "requiresApproval",
        "permissions",
        "formerNames",
        "module",
    }
)


class ContractError(ValueError):
    """A contract document or acknowledgements file that cannot be read."""


def change_kind(code: str) -> Kind:
    """Whether a contract code is breaking, compatible, a notice or undecided."""
    severity = severity_for(code)
    if severity == "error":
        return "breaking"
    if severity == "warning":
        return "undecided"
    return "compatible" if code in _COMPATIBLE else "notice"


# -- the document ---------------------------------------------------------------------------------


def tool_entry(
    wire: Mapping[str, Any], *, module: str | None, permissions: Mapping[str, Any] | None
) -> dict[str, Any]:
    """One tool's contract: its wire form without the name (the key), where it is defined
    (relative to its pack, ``/``-separated) and its declared permissions (``None``: none)."""
    entry = {key: value for key, value in wire.items() if key != "name"}
    if module is not None:
        entry["module"] = module
    entry["permissions"] = dict(permissions) if permissions is not None else None
    return entry


def contract_document(
    packs: Iterable[tuple[str, str | None, Mapping[str, Mapping[str, Any]]]],
    policies: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The contract document of ``(pack path, version, {tool name: entry})`` triples, with
    each pack's declared execution policies (``policies[pack path]``: module -> settings)."""
    out = []
    for path, version, tools in sorted(packs, key=lambda pack: pack[0]):
        pack: dict[str, Any] = {"path": path, "tools": {k: tools[k] for k in sorted(tools)}}
        if version is not None:
            pack["version"] = version
        declared = (policies or {}).get(path)
        if declared:
            pack["policy"] = {module: dict(declared[module]) for module in sorted(declared)}
        out.append(pack)
    return {"format": CONTRACT_FORMAT, "packs": out}


def dump_contract(document: Mapping[str, Any]) -> str:
    """The document as reviewable, deterministic JSON text (sorted keys, one trailing newline)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_contract(text: str, where: str) -> dict[str, Any]:
    """Parse a contract document (``where`` names it in errors).

    Raises:
        ContractError: not JSON, or not a contract document of this format.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ContractError(
            f"{where}: not JSON ({exc}); write it with `customtools contract export`"
        ) from None
    if not isinstance(data, dict) or data.get("format") != CONTRACT_FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise ContractError(
            f"{where}: not a contract document (format {found!r}, expected"
            f" {CONTRACT_FORMAT!r}); write it with `customtools contract export`"
        )
    packs = data.get("packs")
    if not isinstance(packs, list):
        raise ContractError(f"{where}: 'packs' must be a list")
    for index, pack in enumerate(packs):
        if (
            not isinstance(pack, dict)
            or not isinstance(pack.get("path"), str)
            or not isinstance(pack.get("tools"), dict)
            or not all(isinstance(entry, dict) for entry in pack["tools"].values())
            or not isinstance(pack.get("version", ""), str)
        ):
            raise ContractError(
                f"{where}: packs[{index}] must have a string 'path', an object 'tools' of"
                " tool entries and, optionally, a string 'version'"
            )
    return data


# -- versions and acknowledgements ----------------------------------------------------------------

_VERSION: Final = re.compile(r"\s*v?(\d+)(?:\.(\d+))?")


def major_step(old: str | None, new: str | None) -> bool:
    """Whether ``new`` raises ``old`` by a major step: a greater first number, or for ``0.x``
    versions a greater second number (``1.4.2`` -> ``2.0``, ``0.3.1`` -> ``0.4``). A missing
    or unreadable version is never a major step."""

    def step(version: str | None) -> tuple[int, ...] | None:
        match = _VERSION.match(version or "")
        if match is None:
            return None
        major, minor = int(match.group(1)), int(match.group(2) or 0)
        return (major,) if major else (0, minor)

    before, after = step(old), step(new)
    return before is not None and after is not None and after > before


@dataclass(frozen=True, slots=True, kw_only=True)
class Acknowledgement:
    """A breaking (or undecided) change the pack's owners accept, and why.

    Attributes:
        tool: the tool it concerns.
        reason: why callers are not broken, or why breaking them is acceptable.
        code: the finding code it accepts (``None``: every code of the tool).
        pointer: the finding's pointer, or a prefix of it (``None``: any).
        source: the file it was read from.
    """

    tool: str
    reason: str
    code: str | None = None
    pointer: str | None = None
    source: str = ""

    def matches(self, finding: Finding) -> bool:
        """Whether this acknowledgement covers ``finding``."""
        if finding.tool_name != self.tool or (self.code is not None and finding.code != self.code):
            return False
        if self.pointer is None:
            return True
        pointer = finding.pointer or ""
        return pointer == self.pointer or pointer.startswith(self.pointer.rstrip("/") + "/")


def read_acknowledgements(text: str, where: str) -> list[Acknowledgement]:
    """Parse an acknowledgements file: ``{"accept": [{"tool", "reason", "code"?, "pointer"?}]}``.

    Raises:
        ContractError: not JSON, or an entry without a tool and a reason.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ContractError(f"{where}: not JSON ({exc})") from None
    entries = data.get("accept") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ContractError(f'{where}: expected {{"accept": [...]}} (see docs/ci.md)')
    out = []
    for index, entry in enumerate(entries):
        ok = isinstance(entry, dict) and all(
            isinstance(entry.get(key), str) and entry[key].strip() for key in ("tool", "reason")
        )
        if not ok or not all(
            isinstance(entry.get(key), (str, type(None))) for key in ("code", "pointer")
        ):
            raise ContractError(
                f"{where}: accept[{index}] needs a string 'tool' and a non-empty 'reason'"
                " (and optionally a string 'code' and 'pointer')"
            )
        out.append(
            Acknowledgement(
                tool=entry["tool"],
                reason=entry["reason"].strip(),
                code=entry.get("code"),
                pointer=entry.get("pointer"),
                source=where,
            )
        )
    return out


# -- comparing ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ContractFinding:
    """A finding of the gate: the rulebook :class:`Finding`, its kind, and why it is accepted
    (``None``: not accepted; its severity is then the policy's)."""

    finding: Finding
    kind: Kind
    accepted: str | None = None


@dataclass(frozen=True, slots=True)
class _Tool:
    name: str
    entry: Mapping[str, Any]
    pack: Mapping[str, Any]

    @property
    def where(self) -> str:
        module = self.entry.get("module")
        path = str(self.pack["path"])
        return f"{path.rstrip('/')}/{module}" if isinstance(module, str) else path


def _tools(document: Mapping[str, Any]) -> tuple[dict[str, _Tool], dict[str, str]]:
    """Tools by name, and each former name with the tool that now has it."""
    tools: dict[str, _Tool] = {}
    aliases: dict[str, str] = {}
    for pack in document.get("packs", ()):
        for name, entry in pack["tools"].items():
            tools.setdefault(name, _Tool(name, entry, pack))
            for former in entry.get("formerNames") or ():
                aliases.setdefault(former, name)
    return tools, aliases


class _Gate:
    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.found: list[ContractFinding] = []

    def add(
        self,
        code: str,
        tool: _Tool,
        message: str,
        pointer: str | None = None,
        *,
        subject: str | None = None,
    ) -> None:
        why = _WHY.get(code)
        head = f"tool {tool.name!r}" + (f": {subject}" if subject else "")
        text = f"{head} {message}" + (f"; {why}" if why else "")
        finding = Finding(
            severity=severity_for(code, strict=self.strict),
            code=code,
            message=text,
            path=tool.where,
            tool_name=tool.name,
            pointer=pointer,
        )
        self.found.append(ContractFinding(finding=finding, kind=change_kind(code)))

    def entries(self, old: _Tool, new: _Tool) -> None:
        a, b = old.entry, new.entry
        for key, code in (("description", "description-changed"), ("label", "label-changed")):
            if a.get(key) != b.get(key):
                self.add(code, new, "changed", f"/{key}", subject=f"the {key}")
        self.schema(new, a.get("parameters", {}), b.get("parameters", {}), output=False)
        before, after = a.get("outputSchema"), b.get("outputSchema")
        if before is None and after is not None:
            self.add("output-narrowed", new, "declares an output schema now", "/outputSchema")
        elif before is not None and after is None:
            self.add(
                "output-type-changed",
                new,
                "no longer declares an output schema (structured content is not promised)",
                "/outputSchema",
            )
        elif before != after:
            self.schema(new, before, after, output=True)
        self.annotations(new, a.get("annotations") or {}, b.get("annotations") or {})
        if _approval(a) != _approval(b):
            if _approval(b):
                self.add("approval-required", new, "asks for approval before each call now")
            else:
                self.add("contract-changed", new, "no longer asks for approval before each call")
        self.permissions(new, a.get("permissions"), b.get("permissions"))
        for key in sorted((set(a) | set(b)) - _HANDLED):
            if a.get(key) != b.get(key):
                self.add(
                    "contract-changed",
                    new,
                    f"changed from {_show(a.get(key))} to {_show(b.get(key))}",
                    f"/{key}",
                    subject=f"{key!r}",
                )

    def schema(self, tool: _Tool, old: Any, new: Any, *, output: bool) -> None:
        root = "/outputSchema" if output else "/parameters"
        for change in diff_schemas(old, new):
            code = _output_code(change) if output else _input_code(change)
            subject = _subject(change.path, output=output)
            self.add(code, tool, change.text, root + change.pointer, subject=subject)

    def annotations(self, tool: _Tool, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                self.add(
                    "annotation-changed",
                    tool,
                    f"changed from {_show(old.get(key))} to {_show(new.get(key))}",
                    f"/annotations/{key}",
                    subject=f"annotation {key!r}",
                )

    def permissions(self, tool: _Tool, old: Any, new: Any) -> None:
        wider, narrower = _permission_changes(
            old if isinstance(old, Mapping) else {}, new if isinstance(new, Mapping) else {}
        )
        for changes, how in ((wider, "widened"), (narrower, "narrowed")):
            if changes:
                text = f"{how} its permissions: " + "; ".join(changes)
                self.add(f"permissions-{how}", tool, text, "/permissions")


def compare_contracts(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    *,
    strict: bool = False,
    acknowledgements: Sequence[Acknowledgement] = (),
    unreadable: Iterable[str] = (),
) -> list[ContractFinding]:
    """Every difference between the ``old`` and ``new`` contract documents, classified.

    Args:
        old: the baseline document.
        new: the current document.
        strict: undecided changes are errors (the strict policy).
        acknowledgements: changes the pack's owners accept.
        unreadable: where (``pack/module``) the current packs failed to load: a baseline tool
            defined there is undecided rather than removed.
    """
    gate = _Gate(strict)
    before, old_aliases = _tools(old)
    after, new_aliases = _tools(new)
    failed = set(unreadable)
    for name, tool in before.items():
        if name in after:
            if tool.entry != after[name].entry:
                gate.entries(tool, after[name])
            continue
        owner = new_aliases.get(name)
        if owner is not None:
            current = after[owner]
            gate.add(
                "tool-renamed",
                current,
                f"was renamed from {name!r}; {name!r} stays callable as a deprecated alias",
                "/formerNames",
            )
            gate.entries(tool, current)
            continue
        if tool.where in failed:
            gate.add(
                "contract-undecided",
                tool,
                f"its module {tool.where} failed to load, so its contract cannot be compared",
            )
            continue
        twins = [
            other
            for other in after
            if other not in before
            and after[other].entry.get("parameters") == tool.entry.get("parameters")
        ]
        hint = (
            f" (renamed to {twins[0]!r}? declare former_names=[{name!r}] on it to keep"
            f" {name!r} callable)"
            if len(twins) == 1
            else ""
        )
        gate.add("tool-removed", tool, f"was removed{hint}")
    for alias, owner in old_aliases.items():
        if alias not in after and alias not in new_aliases and owner in before:
            gate.add(
                "tool-removed",
                _Tool(alias, before[owner].entry, before[owner].pack),
                f"the deprecated alias of {owner!r} was removed",
            )
    for name, tool in after.items():
        if (
            name not in before
            and name not in old_aliases
            and not any(former in before for former in tool.entry.get("formerNames") or ())
        ):
            gate.add("tool-added", tool, "was added")
    return _accept(gate.found, before, after, acknowledgements)


def _accept(
    found: list[ContractFinding],
    before: Mapping[str, _Tool],
    after: Mapping[str, _Tool],
    acknowledgements: Sequence[Acknowledgement],
) -> list[ContractFinding]:
    used: set[int] = set()
    old_versions = {str(t.pack["path"]): t.pack.get("version") for t in before.values()}
    new_versions = {str(t.pack["path"]): t.pack.get("version") for t in after.values()}
    out = []
    for item in found:
        if item.kind not in ("breaking", "undecided"):
            out.append(item)
            continue
        name = item.finding.tool_name or ""
        old_tool, new_tool = before.get(name), after.get(name)
        either = old_tool or new_tool
        pack = str(either.pack["path"]) if either is not None else ""
        old_version = old_tool.pack.get("version") if old_tool else old_versions.get(pack)
        new_version = new_tool.pack.get("version") if new_tool else new_versions.get(pack)
        reason = None
        for index, ack in enumerate(acknowledgements):
            if ack.matches(item.finding):
                used.add(index)
                reason = f"acknowledged in {ack.source}: {ack.reason}"
                break
        if reason is None and major_step(old_version, new_version):
            reason = f"the pack's version went from {old_version} to {new_version}, a major step"
        if reason is None:
            out.append(item)
            continue
        finding = item.finding
        out.append(
            ContractFinding(
                finding=Finding(
                    severity="notice",
                    code=finding.code,
                    message=f"{finding.message} (accepted: {reason})",
                    path=finding.path,
                    tool_name=finding.tool_name,
                    pointer=finding.pointer,
                ),
                kind=item.kind,
                accepted=reason,
            )
        )
    for index, ack in enumerate(acknowledgements):
        if index not in used:
            what = f" {ack.code}" if ack.code else ""
            out.append(
                ContractFinding(
                    finding=Finding(
                        severity=severity_for("unused-acknowledgement"),
                        code="unused-acknowledgement",
                        message=f"the acknowledgement of tool {ack.tool!r}{what} matches no"
                        " change; remove it",
                        path=ack.source or None,
                        tool_name=ack.tool,
                        pointer=ack.pointer,
                    ),
                    kind="notice",
                )
            )
    return out


# -- the parts ------------------------------------------------------------------------------------


def _input_code(change: SchemaChange) -> str:
    if change.effect == "annotation":
        return _annotation_code(change)
    if change.effect == "unknown":
        return "contract-undecided"
    if change.effect == "narrowed":
        return {
            "required": "parameter-required",
            "added": "parameter-required",
            "removed": "parameter-removed",
            "enum": "enum-value-removed",
        }.get(change.what, "type-narrowed")
    return {"added": "parameter-added", "enum": "enum-value-added"}.get(change.what, "type-widened")


def _output_code(change: SchemaChange) -> str:
    if change.effect == "annotation":
        return _annotation_code(change)
    if change.what in ("removed", "undeclared", "optional"):
        return "output-field-removed"
    if change.what == "added":
        return "output-field-added"
    if change.effect == "unknown":
        return "contract-undecided"
    return "output-narrowed" if change.effect == "narrowed" else "output-type-changed"


def _annotation_code(change: SchemaChange) -> str:
    return {
        "description": "description-changed",
        "title": "label-changed",
        "default": "default-changed",
    }.get(change.what, "annotation-changed")


def _subject(path: Sequence[str], *, output: bool) -> str:
    if not path:
        return "the output" if output else "the parameters object"
    text = ""
    for part in path:
        text += part if part.startswith("[") else (f".{part}" if text else part)
    text = text.replace(".*", "[undeclared]").replace("*", "[undeclared]")
    return f"{'output field' if output else 'parameter'} `{text}`"


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _approval(entry: Mapping[str, Any]) -> bool:
    rule = entry.get("requiresApproval")
    if isinstance(rule, bool):
        return rule
    hints = entry.get("annotations") or {}
    return hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True


def _covered(path: str, paths: Iterable[str], *, exact: bool = False) -> bool:
    if exact:
        return path in paths
    for other in paths:
        if path == other or path.startswith(other.rstrip("/") + "/"):
            return True
        if other == "." and not path.startswith(("/", "~", "$TMP", "..")):
            return True
    return False


def _permission_changes(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[list[str], list[str]]:
    """What ``new`` allows beyond ``old`` (undeclared: what a sandbox grants by default), and
    what it no longer allows."""
    a = {**_PERMISSION_DEFAULTS, **old}
    b = {**_PERMISSION_DEFAULTS, **new}
    wider: list[str] = []
    narrower: list[str] = []
    for key, verb in (("read", "reads"), ("write", "writes"), ("env", "receives")):
        for out, was, now, prefix in ((wider, a, b, ""), (narrower, b, a, "no longer ")):
            beyond = [x for x in now[key] if not _covered(x, was[key], exact=key == "env")]
            if beyond:
                out.append(f"{prefix}{verb} {', '.join(map(str, beyond))}")
    net_a, net_b = a["net"], b["net"]
    if net_a != net_b:
        ports_a = set(net_a) if isinstance(net_a, list) else set()
        ports_b = set(net_b) if isinstance(net_b, list) else set()
        grows = (
            net_b == "all"
            or (net_a == "none" and ports_b)
            or (ports_b - ports_a and net_a != "all")
        )
        (wider if grows else narrower).append(f"network {_show(net_a)} -> {_show(net_b)}")
    if bool(b["run"]) and not a["run"]:
        wider.append("starts programs")
    elif bool(a["run"]) and not b["run"]:
        narrower.append("starts no programs")
    return wider, narrower
