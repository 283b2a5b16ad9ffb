"""Tools from typed functions: :func:`tool`.

A plain function with annotations and a docstring becomes a :class:`~customtools.CustomTool`:

- the name is the function's (``name=`` overrides it), the description and each parameter's
  description come from the docstring (Google, NumPy or Sphinx style, see ``_docstrings``);
- the parameter schema is derived from the annotations by :mod:`customtools._typeschema`
  (no pydantic needed; pydantic models are used where the author already has them);
- the parameters named ``tool_call_id``, ``ctx``, ``signal`` and ``on_update`` (or annotated
  ``ToolContext`` / ``AbortSignal``) are filled in by the adapter and never shown to the model;
- arguments arrive converted to the annotated types; the return value becomes the result
  (text for ``str``, JSON text plus ``structured_content`` otherwise), and the return
  annotation becomes the tool's ``output_schema``;
- sync functions run in a worker thread, async ones on the loop, and an async generator's
  yields stream as ``on_update`` partial results (the last one is also the result).

The decision to derive schemas ourselves rather than through pydantic is measured in
``docs/design.md``: it keeps ``import customtools`` unchanged and costs well under a
millisecond for a ten-parameter function.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from customtools._abort import AbortSignal
from customtools._content import TextContent, ToolResult
from customtools._context import ToolContext
from customtools._errors import ToolArgumentsError, ToolDefinitionError
from customtools._tool import AWAITABLE_MARKER, CustomTool
from customtools._typeschema import (
    RESULT_KEY,
    Converter,
    SchemaDeriver,
    derive_output_schema,
    to_jsonable,
)

__all__ = ["INJECTED_PARAMETERS", "tool"]

INJECTED_PARAMETERS = frozenset({"tool_call_id", "ctx", "signal", "on_update"})
"""Parameter names the adapter fills in; the model never sees them."""

_F = TypeVar("_F", bound=Callable[..., Any])
_RESULT_PASSTHROUGH: tuple[type, ...] = (str, ToolResult)


def _injected_name(param: inspect.Parameter, hint: Any) -> str | None:
    if param.name in INJECTED_PARAMETERS:
        return param.name
    if hint is ToolContext:
        return "ctx"
    if hint is AbortSignal:
        return "signal"
    return None


def _hints(fn: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # a NameError from an annotation that does not resolve
        from customtools._format import describe_exception

        raise ToolDefinitionError(
            f"tool {tool_name!r}: the annotations of {fn.__qualname__} cannot be resolved"
            f" ({describe_exception(exc)}); define the types they name at module level"
        ) from None


class _Plan:
    """How to call the function: which arguments to convert and which to inject."""

    __slots__ = ("converters", "injected", "nullable_defaults")

    def __init__(self) -> None:
        self.converters: dict[str, Converter] = {}
        self.injected: dict[str, str] = {}  # function parameter -> adapter argument
        self.nullable_defaults: frozenset[str] = frozenset()

    def kwargs(
        self, tool_name: str, params: Mapping[str, Any], extra: Mapping[str, Any]
    ) -> dict[str, Any]:
        kwargs = dict(params)
        for name in self.nullable_defaults:
            if kwargs.get(name, 0) is None:
                del kwargs[name]  # strict mode: null means "use the default"
        for name, convert in self.converters.items():
            if name in kwargs:
                try:
                    kwargs[name] = convert(kwargs[name])
                except ToolArgumentsError:
                    raise
                except Exception as exc:
                    from customtools._format import describe_exception

                    raise ToolArgumentsError(
                        f"invalid arguments for tool {tool_name!r}:\n  - /{name}:"
                        f" {describe_exception(exc)}"
                    ) from None
        for parameter, argument in self.injected.items():
            kwargs[parameter] = extra[argument]
        return kwargs


def _result(value: Any, wrap: bool) -> Any:
    """The tool result for what the function returned (``str`` and results pass through)."""
    if isinstance(value, _RESULT_PASSTHROUGH):
        return value
    data = to_jsonable(value)
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    if wrap:
        structured: Any = {RESULT_KEY: data}
    else:
        structured = data if isinstance(data, dict) else None
    return ToolResult(content=(TextContent(text=text),), structured_content=structured)


def _execute(
    fn: Callable[..., Any], plan: _Plan, tool_name: str, wrap: bool, passthrough: bool
) -> Any:
    """The ``execute`` callable for ``fn``: sync for sync functions, async otherwise.

    When no argument needs converting or injecting and the function returns a ``str`` or a
    :class:`~customtools.ToolResult` (the common case), the adapter awaits the function's own
    coroutine: the hot path adds one plain call and no coroutine frame.
    """
    needs_plan = bool(plan.converters or plan.injected or plan.nullable_defaults)

    def arguments(
        params: Mapping[str, Any], tool_call_id: str, on_update: Any, ctx: Any, signal: Any
    ) -> Mapping[str, Any]:
        if not needs_plan:
            return params
        extra = {"tool_call_id": tool_call_id, "on_update": on_update, "ctx": ctx}
        extra["signal"] = signal
        return plan.kwargs(tool_name, params, extra)

    if inspect.isasyncgenfunction(fn):

        async def execute_stream(
            tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
        ) -> Any:
            last: Any = ToolResult.from_text("")
            stream = fn(**arguments(params, tool_call_id, on_update, ctx, signal))
            async with contextlib.aclosing(stream):
                async for item in stream:
                    last = _result(item, wrap)
                    on_update(last if isinstance(last, ToolResult) else ToolResult.from_text(last))
            return last

        execute: Any = execute_stream
    elif inspect.iscoroutinefunction(fn) and not needs_plan and passthrough:

        def execute_direct(
            tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
        ) -> Any:
            return fn(**params)  # the coroutine itself: the adapter awaits it

        setattr(execute_direct, AWAITABLE_MARKER, True)
        execute = execute_direct
    elif inspect.iscoroutinefunction(fn):

        async def execute_async(
            tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
        ) -> Any:
            return _result(
                await fn(**arguments(params, tool_call_id, on_update, ctx, signal)), wrap
            )

        execute = execute_async
    else:

        def execute_sync(
            tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
        ) -> Any:
            return _result(fn(**arguments(params, tool_call_id, on_update, ctx, signal)), wrap)

        execute = execute_sync
    execute.__wrapped__ = fn  # the author's function, callable directly in tests
    execute.__doc__ = fn.__doc__
    return execute


def _returns_result(fn: Callable[..., Any], hints: Mapping[str, Any]) -> bool:
    """Whether the return annotation says the function returns a ``str`` or a result."""
    hint = hints.get("return")
    return hint is str or (isinstance(hint, type) and issubclass(hint, ToolResult))


def _returned(fn: Callable[..., Any], hint: Any) -> Any:
    """What one call gives back: the item type of an async generator's annotation."""
    if inspect.isasyncgenfunction(fn):
        args = typing.get_args(hint)
        return args[0] if args else Any
    return hint


def _check_permissions(name: str, permissions: Any) -> None:
    """``permissions=`` is read by the host from the source (docs/sandbox.md); here it is
    only checked to be what it says."""
    from customtools._permissions import Permissions

    if permissions is not None and not isinstance(permissions, Permissions):
        raise ToolDefinitionError(
            f"tool {name!r}: permissions must be a customtools.isolation.Permissions,"
            f" got {type(permissions).__name__}"
        )


def _build(fn: Callable[..., Any], options: dict[str, Any]) -> CustomTool:
    from customtools._docstrings import parse_docstring

    if not callable(fn):
        raise ToolDefinitionError(f"tool() takes a function, got {type(fn).__name__}")
    name = options.pop("name", None) or getattr(fn, "__name__", "")
    _check_permissions(name, options.pop("permissions", None))
    strict = bool(options.get("strict", False))
    doc = parse_docstring(inspect.getdoc(fn))
    hints = _hints(fn, name)
    deriver = SchemaDeriver(tool_name=name, strict=strict)
    plan = _Plan()
    properties: dict[str, Any] = {}
    required: list[str] = []
    nullable_defaults: set[str] = set()
    for param in inspect.signature(fn).parameters.values():
        hint = hints.get(param.name, Any)
        injected = _injected_name(param, hint)
        if injected is not None:
            plan.injected[param.name] = injected
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolDefinitionError(
                f"tool {name!r}: parameter {param.name!r} is {param.kind.description};"
                " a tool takes named parameters only (the model sends a JSON object)"
            )
        schema, convert = deriver.parameter(param.name, hint, param.default, doc.params)
        properties[param.name] = schema
        if convert is not None:
            plan.converters[param.name] = convert
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif strict:
            required.append(param.name)
            if not deriver.admits_null(hint):
                nullable_defaults.add(param.name)
    plan.nullable_defaults = frozenset(nullable_defaults)
    parameters = deriver.object_schema(properties, required)
    output_schema, wrap = derive_output_schema(deriver, _returned(fn, hints.get("return", Any)))
    if "output_schema" in options:
        output_schema, wrap = options.pop("output_schema"), False
    description = options.pop("description", None)
    # Absent arguments take the function's own defaults (already the annotated type), so the
    # adapter does not need to fill in the schema's copies of them.
    options.setdefault("apply_defaults", False)
    return CustomTool(
        name=name,
        description=doc.description if description is None else description,
        parameters=parameters,
        execute=_execute(fn, plan, name, wrap, _returns_result(fn, hints)),
        output_schema=output_schema,
        **options,
    )


@overload
def tool(fn: Callable[..., Any], /, **options: Any) -> CustomTool: ...
@overload
def tool(**options: Any) -> Callable[[Callable[..., Any]], CustomTool]: ...
def tool(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Make a :class:`~customtools.CustomTool` from a typed function.

    Use it as a decorator (``@tool`` or ``@tool(name="search", timeout=5)``) or call it
    (``tool(fn)``). Options are :class:`~customtools.CustomTool`'s keyword arguments
    (``name``, ``label``, ``description``, ``timeout``, ``strict``, ``annotations``,
    ``output_schema``, ...); ``description`` overrides the docstring's.

    With ``strict=True`` every parameter is required, as OpenAI's strict mode demands: a
    parameter with a default becomes nullable, and ``null`` means "use the default" (unless
    its annotation admits ``None`` itself, in which case ``None`` is passed on).

    The decorated name is the tool; the author's function stays reachable as
    ``the_tool.execute.__wrapped__``.

    Raises:
        ToolDefinitionError: an annotation cannot be turned into a schema (the message names
            the tool, the parameter and the type), or a parameter is ``*args``/``**kwargs``.
    """
    if fn is not None:
        return _build(fn, dict(options))

    def decorate(function: _F) -> CustomTool:
        return _build(function, dict(options))

    return decorate
