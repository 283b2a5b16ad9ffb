"""Display payloads: user-facing content an action asks a frontend to show.

A successful action may return ``{"display": {...}}``. The payload is validated into a
:class:`Display`, so a frontend can render it directly and a plugin author gets a clear error
for a typo instead of a silently blank panel.

``variant`` and ``presentation`` are *hints*: a known value, or any ``_``-prefixed value for
frontend-specific extensions. Follow-up ``actions`` have a ``kind`` of ``open_url``,
``copy_text`` or ``run_action``; an unknown kind starting with ``_`` is kept as
:class:`ExtensionDisplayAction` and written back unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from customtools.actions._errors import DisplayError

__all__ = [
    "DISPLAY_FORMATS",
    "DISPLAY_PRESENTATIONS",
    "DISPLAY_VARIANTS",
    "CopyTextAction",
    "Display",
    "DisplayAction",
    "ExtensionDisplayAction",
    "OpenUrlAction",
    "RunActionAction",
]

DISPLAY_FORMATS: frozenset[str] = frozenset({"markdown", "text"})
DISPLAY_VARIANTS: frozenset[str] = frozenset({"info", "success", "warning", "error"})
DISPLAY_PRESENTATIONS: frozenset[str] = frozenset({"inline", "banner", "modal"})
_URL_SCHEMES = ("https://", "http://", "mailto:")


def _invalid(path: str, problem: str) -> DisplayError:
    return DisplayError(f"display {path}: {problem}", path=path)


def _str(data: Mapping[str, Any], key: str, path: str, *, required: bool = True) -> Any:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise _invalid(f"{path}/{key}", f"must be a non-empty string, got {value!r}")
    return value


def _meta(data: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    meta = data.get("_meta")
    if meta is not None and not isinstance(meta, Mapping):
        raise _invalid(f"{path}/_meta", "must be a mapping")
    return dict(meta) if meta is not None else None


def _base(kind: str, ident: str, label: str, meta: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": kind, "id": ident, "label": label}
    if meta is not None:
        out["_meta"] = dict(meta)
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenUrlAction:
    """A button that opens ``url`` (``https``, ``http`` or ``mailto`` only)."""

    id: str
    label: str
    url: str
    meta: Mapping[str, Any] | None = None
    kind: ClassVar[str] = "open_url"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form."""
        return {**_base(self.kind, self.id, self.label, self.meta), "url": self.url}


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyTextAction:
    """A button that copies ``text`` to the clipboard."""

    id: str
    label: str
    text: str
    meta: Mapping[str, Any] | None = None
    kind: ClassVar[str] = "copy_text"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form."""
        return {**_base(self.kind, self.id, self.label, self.meta), "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class RunActionAction:
    """A button that runs another plugin action manually.

    Args:
        plugin: the plugin name.
        action_id: the action to run.
        params: params passed to that action.
        preserve_display: hint to keep this display visible while the action runs.
    """

    id: str
    label: str
    plugin: str
    action_id: str
    params: Mapping[str, Any] = field(default_factory=dict)
    preserve_display: bool = False
    meta: Mapping[str, Any] | None = None
    kind: ClassVar[str] = "run_action"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form (``params`` only when non-empty)."""
        out = _base(self.kind, self.id, self.label, self.meta)
        out.update(plugin=self.plugin, action_id=self.action_id)
        if self.params:
            out["params"] = dict(self.params)
        out["preserve_display"] = self.preserve_display
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionDisplayAction:
    """A follow-up action of an unknown ``_``-prefixed kind, kept verbatim."""

    kind: str
    data: Mapping[str, Any]

    @property
    def id(self) -> str | None:
        """The ``id`` field, when the extension has one."""
        value = self.data.get("id")
        return value if isinstance(value, str) else None

    def to_dict(self) -> dict[str, Any]:
        """Return the payload exactly as it was received."""
        return {**self.data, "kind": self.kind}


DisplayAction = OpenUrlAction | CopyTextAction | RunActionAction | ExtensionDisplayAction


def _action_from_dict(data: Any, path: str) -> DisplayAction:
    if not isinstance(data, Mapping):
        raise _invalid(path, "must be a mapping")
    kind = data.get("kind")
    if isinstance(kind, str) and kind.startswith("_"):
        return ExtensionDisplayAction(kind=kind, data=dict(data))
    ident, label, meta = _str(data, "id", path), _str(data, "label", path), _meta(data, path)
    if kind == "open_url":
        url = _str(data, "url", path)
        if not url.startswith(_URL_SCHEMES):
            raise _invalid(f"{path}/url", f"{url!r} is not an https, http or mailto URL")
        return OpenUrlAction(id=ident, label=label, url=url, meta=meta)
    if kind == "copy_text":
        text = data.get("text")
        if not isinstance(text, str):
            raise _invalid(f"{path}/text", "must be a string")
        return CopyTextAction(id=ident, label=label, text=text, meta=meta)
    if kind == "run_action":
        params = data.get("params", {})
        preserve = data.get("preserve_display", False)
        if not isinstance(params, Mapping):
            raise _invalid(f"{path}/params", "must be a mapping")
        if not isinstance(preserve, bool):
            raise _invalid(f"{path}/preserve_display", "must be true or false")
        return RunActionAction(
            id=ident,
            label=label,
            plugin=_str(data, "plugin", path),
            action_id=_str(data, "action_id", path),
            params=dict(params),
            preserve_display=preserve,
            meta=meta,
        )
    raise _invalid(
        f"{path}/kind",
        f"unknown action kind {kind!r}; use open_url, copy_text, run_action, or a '_'-prefixed"
        " extension kind",
    )


def _hint(data: Mapping[str, Any], key: str, known: frozenset[str]) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str) and (value in known or value.startswith("_")):
        return value
    raise _invalid(
        f"/{key}",
        f"{value!r} is not one of {', '.join(sorted(known))} (or a '_'-prefixed extension value)",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Display:
    """A user-facing display payload.

    Args:
        body: the content to show (required).
        format: ``"markdown"`` (default) or ``"text"``.
        title: optional heading.
        variant: tone hint: ``info``, ``success``, ``warning``, ``error`` or ``_``-prefixed.
        presentation: ``inline``, ``banner``, ``modal`` or ``_``-prefixed; a hint only.
        dismissible: whether the user may dismiss it (``None``: frontend decides).
        display_id: stable id so a frontend can replace an earlier display.
        actions: follow-up buttons; ids must be unique within the display.
        meta: ``_meta`` on the wire.
    """

    body: str
    format: str = "markdown"
    title: str | None = None
    variant: str | None = None
    presentation: str | None = None
    dismissible: bool | None = None
    display_id: str | None = None
    actions: tuple[DisplayAction, ...] = ()
    meta: Mapping[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Any) -> Display:
        """Validate a wire-form display payload (a :class:`Display` passes through).

        Raises:
            DisplayError: naming the offending field path and the accepted values.
        """
        if isinstance(data, Display):
            return data
        if not isinstance(data, Mapping):
            raise DisplayError(
                f"display: must be a mapping with at least 'body', got {type(data).__name__}"
            )
        body = data.get("body")
        if not isinstance(body, str):
            raise _invalid("/body", f"required string, got {body!r}")
        fmt = data.get("format", "markdown")
        if fmt not in DISPLAY_FORMATS:
            raise _invalid("/format", f"{fmt!r} is not 'markdown' or 'text'")
        dismissible = data.get("dismissible")
        if dismissible is not None and not isinstance(dismissible, bool):
            raise _invalid("/dismissible", "must be true or false")
        raw_actions = data.get("actions", [])
        if not isinstance(raw_actions, (list, tuple)):
            raise _invalid("/actions", "must be a list")
        actions = tuple(
            _action_from_dict(item, f"/actions/{i}") for i, item in enumerate(raw_actions)
        )
        ids = [a.id for a in actions if a.id is not None]
        for dup in {i for i in ids if ids.count(i) > 1}:
            raise _invalid("/actions", f"duplicate action id {dup!r}")
        return cls(
            body=body,
            format=fmt,
            title=_str(data, "title", "", required=False),
            variant=_hint(data, "variant", DISPLAY_VARIANTS),
            presentation=_hint(data, "presentation", DISPLAY_PRESENTATIONS),
            dismissible=dismissible,
            display_id=_str(data, "display_id", "", required=False),
            actions=actions,
            meta=_meta(data, ""),
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the wire form, leaving out unset optional fields."""
        out: dict[str, Any] = {"format": self.format, "body": self.body}
        for key in ("title", "variant", "presentation", "dismissible", "display_id"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.actions:
            out["actions"] = [a.to_dict() for a in self.actions]
        if self.meta is not None:
            out["_meta"] = dict(self.meta)
        return out
