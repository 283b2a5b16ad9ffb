"""The tool model: :class:`CustomTool`.

A tool is plain data plus callables. Construction checks everything that can be checked
without running the tool (name, callables, options, and that ``parameters`` is a valid JSON
Schema), so a bad tool fails when it is built (and the loader reports it as that tool's load
error) instead of when a model first calls it.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any, Literal

from customtools._errors import ToolDefinitionError

__all__ = [
    "AWAITABLE_MARKER",
    "DEPRECATED_META_KEY",
    "TOOL_NAME_PATTERN",
    "CustomTool",
    "check_tool_name",
    "check_wire_form",
    "is_async_callable",
    "json_copy",
]

TOOL_NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
"""Tool names accepted everywhere: what both OpenAI and Anthropic accept for function names."""

_NAME_RE = re.compile(TOOL_NAME_PATTERN)
_CO_COROUTINE = inspect.CO_COROUTINE

# Set while :meth:`CustomTool.from_dict` builds a tool from schemas already checked.
_SCHEMAS_CHECKED: ContextVar[bool] = ContextVar("customtools_schemas_checked", default=False)


def _empty_object_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "additionalProperties": False}


def json_copy(value: Any) -> Any:
    """A plain-JSON copy of mappings and sequences (tuples become lists)."""
    if isinstance(value, Mapping):
        return {str(k): json_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_copy(v) for v in value]
    return value


def _is_mapping(value: object) -> bool:
    # A dict first: isinstance() against the Mapping ABC is several times slower.
    return type(value) is dict or isinstance(value, Mapping)


def check_tool_name(name: object) -> str:
    """Return ``name`` if it is a valid tool name, else raise with a message that says why.

    Raises:
        ToolDefinitionError: ``name`` is not a string matching :data:`TOOL_NAME_PATTERN`.
    """
    if not isinstance(name, str):
        raise ToolDefinitionError(f"tool name must be a string, got {type(name).__name__}")
    if _NAME_RE.match(name) is None or name.endswith("\n"):
        if not name:
            problem = "it is empty"
        elif len(name) > 64:
            problem = f"it is {len(name)} characters long (at most 64)"
        else:
            bad = sorted({ch for ch in name if not (ch.isascii() and (ch.isalnum() or ch in "_-"))})
            problem = f"it contains {', '.join(map(repr, bad))}"
        raise ToolDefinitionError(
            f"invalid tool name {name!r}: {problem}; use 1-64 characters from"
            " a-z, A-Z, 0-9, '_' and '-'"
        )
    return name


def check_wire_form(data: Any) -> str:
    """Return the name of the tool whose parsed JSON wire form (:meth:`CustomTool.to_dict`)
    is ``data``, or raise: then ``CustomTool.from_dict(data, ...)`` builds it, later, without
    failing (the manifest cache checks its entries at load this way, building none).

    Raises:
        ToolDefinitionError: a field is not as :meth:`CustomTool.to_dict` writes it.
    """
    if type(data) is not dict:
        raise ToolDefinitionError("a tool definition is not a JSON object")
    get = data.get
    name = check_tool_name(get("name"))
    if (
        len(data) == 4
        and type(get("label")) is type(get("description")) is str
        and (type(get("parameters")) is dict)
    ):
        return name  # what most tools write: nothing else to check
    bad = [key for key, kind in _WIRE_TYPES.items() if type(get(key, kind())) is not kind]
    timeout, formers, output = get("timeout", 1), get("formerNames", []), get("outputSchema")
    if type(timeout) not in (int, float) or not 0 < timeout < math.inf:
        bad.append("timeout")
    if get("concurrency", "shared") not in ("shared", "exclusive"):
        bad.append("concurrency")
    if type(output) is dict and output.get("type") != "object":
        bad.append("outputSchema")
    if type(formers) is not list or len({name, *map(check_tool_name, formers)}) <= len(formers):
        bad.append("formerNames")
    bad += [f"{key} (missing)" for key in ("label", "parameters") if key not in data]
    if bad:
        raise ToolDefinitionError(f"tool {name!r}: {', '.join(bad)} not as the wire form has it")
    return name


_WIRE_TYPES: dict[str, type] = {"label": str, "description": str, "parameters": dict}
_WIRE_TYPES |= dict.fromkeys(("outputSchema", "annotations", "_meta"), dict)
_WIRE_TYPES |= dict.fromkeys(("coerceArgs", "applyDefaults", "lenientArgs", "hidden"), bool)
_WIRE_TYPES |= dict.fromkeys(("deferrable", "strict", "requiresApproval"), bool)


DEPRECATED_META_KEY = "customtools/deprecated"
"""``_meta`` key of a deprecated alias (a tool's former name): ``{"renamedTo": name}``."""

AWAITABLE_MARKER = "__customtools_returns_awaitable__"
"""An attribute set to ``True`` on a plain function that returns an awaitable.

``@customtools.tool`` uses it to hand the author's coroutine straight to the adapter, with no
extra frame in between; the adapter then awaits what the function returns.
"""


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives an awaitable (an ``async def``, or a marked function)."""
    if type(fn) is FunctionType:
        if not fn.__dict__:  # no marker: its code says (what inspect would read, quicker)
            return bool(fn.__code__.co_flags & _CO_COROUTINE)
        # a plain function's __call__ is never a coroutine function
        return inspect.iscoroutinefunction(fn) or getattr(fn, AWAITABLE_MARKER, False) is True
    if inspect.iscoroutinefunction(fn) or getattr(fn, AWAITABLE_MARKER, False) is True:
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _check_callable(tool: str, field_name: str, value: Any, *, required: bool) -> None:
    if value is None and not required:
        return
    if not callable(value):
        raise ToolDefinitionError(
            f"tool {tool!r}: {field_name} must be callable, got {type(value).__name__}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomTool:
    """A model-callable tool.

    Args:
        name: unique tool name, 1-64 characters from ``[a-zA-Z0-9_-]``.
        execute: ``execute(tool_call_id, params, on_update, ctx, signal)``, sync or async.
            Returns a :class:`~customtools.ToolResult`, a ``str``, or a mapping with
            ``content``/``details``; raising makes an error result. A sync function runs in a
            worker thread.
        label: human-readable name for UIs; defaults to ``name``.
        description: what the tool does, written for the model.
        parameters: JSON Schema (Draft 2020-12) of the arguments, usually built with
            :class:`~customtools.Type`. Defaults to an object schema with no properties.
        on_session: ``on_session(event, ctx)``, sync or async, called on session events.
        render_call: ``render_call(args, theme)`` returning what a UI shows for the call.
        render_result: ``render_result(result, options, theme, args)`` for the result.
        timeout: seconds a call may run before it is aborted with a timeout; ``None`` for no
            per-tool limit (the adapter may still set one).
        coerce_args: apply LLM-friendly argument coercions; ``None`` follows the adapter.
        apply_defaults: fill schema defaults into missing optional arguments; ``None``
            follows the adapter.
        lenient_args: when arguments are invalid, call the tool anyway with the arguments as
            given (the violations are recorded in the result's ``_meta``).
        hidden: not advertised to the model by default (for example a resolve tool).
        deferrable: the host may load it on demand instead of listing it up front.
        strict: ask providers for strict schema adherence (OpenAI strict mode).
        concurrency: ``"shared"`` runs beside other shared calls; ``"exclusive"`` asks the
            host to run it alone.
        annotations: MCP-style hints (``readOnlyHint``, ``destructiveHint``, ...).
        meta: ``_meta`` for protocol bridges.
        requires_approval: ask the host's approver before each call: ``True``, ``False``, or
            a function of the validated arguments returning whether this call needs it.
            ``None`` (the default) follows the MCP annotations: an explicit
            ``destructiveHint: true`` without ``readOnlyHint: true`` asks. See
            :class:`~customtools.CustomToolAdapter`'s ``approver``.
        output_schema: JSON Schema (an object schema) of the result's ``structured_content``.
            The adapter checks every successful result against it: a result without
            structured content, or with content that does not match, becomes an error result
            that says so. Exported as MCP ``outputSchema``.
        former_names: names the tool had before a rename. Each stays callable as a
            deprecated alias (see :meth:`deprecated_aliases`), and ``customtools contract
            check`` accepts the rename.

    Raises:
        ToolDefinitionError: a field breaks a rule; the message names the tool and field.
        SchemaError: ``parameters`` is not a valid JSON Schema.
    """

    name: str
    execute: Callable[..., Any]
    label: str = ""
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=_empty_object_schema)
    on_session: Callable[..., Any] | None = None
    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None
    timeout: float | None = None
    coerce_args: bool | None = None
    apply_defaults: bool | None = None
    lenient_args: bool = False
    hidden: bool = False
    deferrable: bool = False
    strict: bool = False
    concurrency: Literal["shared", "exclusive"] = "shared"
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = None
    requires_approval: bool | Callable[[Mapping[str, Any]], bool] | None = None
    former_names: tuple[str, ...] = ()
    execute_is_async: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        name = check_tool_name(self.name)
        if not self.label:
            object.__setattr__(self, "label", name)
        elif not isinstance(self.label, str):
            raise ToolDefinitionError(f"tool {name!r}: label must be a string")
        if not isinstance(self.description, str):
            raise ToolDefinitionError(
                f"tool {name!r}: description must be a string,"
                f" got {type(self.description).__name__}"
            )
        _check_callable(name, "execute", self.execute, required=True)
        if self.requires_approval is not None and not isinstance(self.requires_approval, bool):
            _check_callable(name, "requires_approval", self.requires_approval, required=True)
        for hook in ("on_session", "render_call", "render_result"):
            _check_callable(name, hook, getattr(self, hook), required=False)
        if self.timeout is not None and (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, (int, float))
            or not self.timeout > 0
            or math.isinf(self.timeout)
        ):
            raise ToolDefinitionError(
                f"tool {name!r}: timeout must be a positive number of seconds or None,"
                f" got {self.timeout!r}"
            )
        if self.concurrency not in ("shared", "exclusive"):
            raise ToolDefinitionError(
                f"tool {name!r}: concurrency must be 'shared' or 'exclusive',"
                f" got {self.concurrency!r}"
            )
        for mapping_field in ("annotations", "meta"):
            value = getattr(self, mapping_field)
            if value is not None and not _is_mapping(value):
                raise ToolDefinitionError(f"tool {name!r}: {mapping_field} must be a mapping")
        if not _is_mapping(self.parameters):
            raise ToolDefinitionError(
                f"tool {name!r}: parameters must be a JSON Schema object (a mapping),"
                f" got {type(self.parameters).__name__}; build one with customtools.Type.Object"
            )
        checked = _SCHEMAS_CHECKED.get()
        if not checked:
            from customtools._validation import check_schema

            check_schema(self.parameters, where=f"tool {name!r} parameters")
        if self.output_schema is not None:
            if not isinstance(self.output_schema, Mapping) or (
                self.output_schema.get("type") != "object"
            ):
                raise ToolDefinitionError(
                    f"tool {name!r}: output_schema must be a JSON Schema whose root has"
                    ' "type": "object" (structured content is a JSON object)'
                )
            if not checked:
                from customtools._validation import check_schema

                check_schema(self.output_schema, where=f"tool {name!r} output_schema")
        formers: Any = self.former_names
        if isinstance(formers, str) or not isinstance(formers, (tuple, list)):
            raise ToolDefinitionError(f"tool {name!r}: former_names must be a list of names")
        formers = tuple(check_tool_name(former) for former in formers)
        if name in formers or len(set(formers)) != len(formers):
            raise ToolDefinitionError(
                f"tool {name!r}: former_names must be distinct and differ from the name,"
                f" got {list(formers)!r}"
            )
        object.__setattr__(self, "former_names", formers)
        object.__setattr__(self, "execute_is_async", is_async_callable(self.execute))

    def to_dict(self) -> dict[str, Any]:
        """The tool's wire form: every field that is data, JSON-safe, in camelCase keys.

        ``name``, ``label``, ``description``, ``parameters`` always; ``outputSchema``,
        ``timeout``, ``coerceArgs``, ``applyDefaults``, ``lenientArgs``, ``hidden``,
        ``deferrable``, ``strict``, ``concurrency``, ``annotations``, ``_meta``,
        ``requiresApproval`` and ``formerNames`` when they differ from the default.
        Callables cannot travel: a ``requires_approval`` rule becomes ``true`` (ask every
        time: the safe reading), and ``execute`` and the hooks are given back to
        :meth:`from_dict`. Isolation, the MCP
        bridge and export all build on this form, so a new field is one edit here.
        """
        out: dict[str, Any] = {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "parameters": json_copy(self.parameters),
        }
        if self.output_schema is not None:
            out["outputSchema"] = json_copy(self.output_schema)
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.coerce_args is not None:
            out["coerceArgs"] = self.coerce_args
        if self.apply_defaults is not None:
            out["applyDefaults"] = self.apply_defaults
        for flag, key in (
            ("lenient_args", "lenientArgs"),
            ("hidden", "hidden"),
            ("deferrable", "deferrable"),
            ("strict", "strict"),
        ):
            if getattr(self, flag):
                out[key] = True
        if self.concurrency != "shared":
            out["concurrency"] = self.concurrency
        if self.annotations is not None:
            out["annotations"] = json_copy(self.annotations)
        if self.meta is not None:
            out["_meta"] = json_copy(self.meta)
        rule = self.requires_approval
        if rule is not None:
            out["requiresApproval"] = rule if isinstance(rule, bool) else True
        if self.former_names:
            out["formerNames"] = list(self.former_names)
        return out

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        execute: Callable[..., Any],
        on_session: Callable[..., Any] | None = None,
        render_call: Callable[..., Any] | None = None,
        render_result: Callable[..., Any] | None = None,
        checked: bool = False,
    ) -> CustomTool:
        """A tool from its wire form (:meth:`to_dict`) and the callables that cannot travel.

        Unknown keys are ignored (a newer peer may send more); ``_meta`` is kept as given.

        Args:
            data: the wire form.
            execute: the tool's ``execute``.
            on_session: its session hook, if any.
            render_call: its call renderer, if any.
            render_result: its result renderer, if any.
            checked: this version of customtools already checked the JSON Schemas of
                ``data`` (the loader's manifest cache): they are not checked again, which is
                most of the cost of building a tool; an adapter still compiles them on the
                first call. Every other rule is checked.

        Raises:
            ToolDefinitionError: a field breaks the tool rules (as for the constructor).
        """
        if not _is_mapping(data) or not isinstance(data.get("name"), str):
            raise ToolDefinitionError("tool wire form: a mapping with a string 'name' is needed")
        get = data.get
        token = _SCHEMAS_CHECKED.set(True) if checked else None
        try:
            return cls(
                name=data["name"],
                execute=execute,
                label=get("label") or "",
                description=get("description") or "",
                parameters=get("parameters") or _empty_object_schema(),
                on_session=on_session,
                render_call=render_call,
                render_result=render_result,
                timeout=get("timeout"),
                coerce_args=get("coerceArgs"),
                apply_defaults=get("applyDefaults"),
                lenient_args=bool(get("lenientArgs")),
                hidden=bool(get("hidden")),
                deferrable=bool(get("deferrable")),
                strict=bool(get("strict")),
                concurrency=get("concurrency") or "shared",
                annotations=get("annotations"),
                meta=get("_meta"),
                output_schema=get("outputSchema"),
                requires_approval=get("requiresApproval"),
                former_names=tuple(get("formerNames") or ()),
            )
        finally:
            if token is not None:
                _SCHEMAS_CHECKED.reset(token)

    def deprecated_aliases(self) -> tuple[CustomTool, ...]:
        """One tool per former name: this tool under its old name, marked deprecated.

        Each alias runs the same ``execute``; its description starts by naming the new name,
        and its ``_meta`` carries :data:`DEPRECATED_META_KEY` (``{"renamedTo": name}``), so a
        listing shows which names are on their way out. Session hooks stay with this tool.
        """
        import dataclasses

        return tuple(
            dataclasses.replace(
                self,
                name=former,
                description=f"Deprecated: renamed to {self.name!r}; call that instead."
                + (f" {self.description}" if self.description else ""),
                on_session=None,
                former_names=(),
                meta={**(self.meta or {}), DEPRECATED_META_KEY: {"renamedTo": self.name}},
            )
            for former in self.former_names
        )
