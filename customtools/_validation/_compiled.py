""":func:`compile_validator` and :class:`CompiledValidator`: the per-tool validation hot path."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any

from customtools._validation._engines import (
    RustEngine,
    SchemaValidator,
    ValidatorEngine,
    resolve_engine,
)
from customtools._validation._guard import all_finite, find_limit_violation
from customtools._validation._messages import arguments_error, arguments_message
from customtools._validation._repair import Repairer
from customtools._validation._schema import cached_info, canonical_key
from customtools._violations import (
    DEFAULT_LIMITS,
    Coercion,
    ValidationLimits,
    Violation,
)

__all__ = ["Checked", "CompiledValidator", "compile_validator"]

_NO_COERCIONS: tuple[Coercion, ...] = ()
Checked = tuple[Any, tuple[Coercion, ...], "list[Violation] | None", bool]
"""What :meth:`CompiledValidator.check` returns: arguments, coercions, violations, truncated."""
# A repair can reveal more to repair (the items of an array sent as a JSON string).
_MAX_REPAIR_ROUNDS = 4
# What the engines raise for values JSON cannot carry (a set, a non-str key, a lone
# surrogate, an int too long to convert) or for nesting deeper than their own limit.
_NOT_JSON = (ValueError, TypeError, OverflowError, RecursionError)


class CompiledValidator:
    """A tool's parameter schema compiled for repeated validation. Build with
    :func:`compile_validator`.

    Attributes:
        schema: the schema it was compiled from.
        tool_name: the tool named in error messages (or ``None``).
        coerce: whether LLM-friendly coercions are tried on invalid arguments.
        apply_defaults: whether schema defaults fill missing optional properties.
        limits: the :class:`ValidationLimits` in force.
        engine: the engine that compiled the schema.
        guarded: whether argument limits are checked before every validation (the schema can
            recurse or compare deep values).
        fast_check: the engine's bare ``is_valid`` when nothing else is needed for valid
            arguments (no guard, no defaults to fill in), else ``None``. ``fast_check(params)``
            returning true means :meth:`validate` would return ``(params, ())``; it may raise
            for values JSON cannot carry, so callers fall back to :meth:`validate` then. The
            adapter's hot path uses it to skip a call layer.
    """

    __slots__ = (
        "_declares_defaults",
        "_fast",
        "_is_valid",
        "_repairer",
        "_validator",
        "apply_defaults",
        "coerce",
        "engine",
        "fast_check",
        "guarded",
        "has_defaults",
        "limits",
        "schema",
        "tool_name",
    )

    def __init__(
        self,
        schema: Any,
        validator: SchemaValidator,
        *,
        engine: ValidatorEngine,
        tool_name: str | None,
        coerce: bool,
        apply_defaults: bool,
        limits: ValidationLimits,
        guarded: bool,
        has_defaults: bool,
        only_nulls: bool = False,
    ) -> None:
        self.schema = schema
        self.engine = engine
        self.tool_name = tool_name
        self.coerce = coerce
        self.apply_defaults = apply_defaults
        self.limits = limits
        self.guarded = guarded
        self._declares_defaults = has_defaults
        self.has_defaults = has_defaults and apply_defaults
        self._validator = validator
        self._is_valid = is_valid = validator.is_valid
        self._fast = (not guarded or only_nulls) and not self.has_defaults
        if not self._fast:
            self.fast_check: Callable[[Any], bool] | None = None
        elif guarded:  # only places accepting null: the engine reads NaN/Infinity as null

            def valid_and_finite(params: Any) -> bool:
                return bool(is_valid(params)) and all_finite(params)

            self.fast_check = valid_and_finite
        else:
            self.fast_check = is_valid
        self._repairer = Repairer(schema, limits)

    def __repr__(self) -> str:
        return (
            f"<CompiledValidator tool={self.tool_name!r} engine={self.engine.name!r} "
            f"guarded={self.guarded} defaults={self.has_defaults} coerce={self.coerce}>"
        )

    def with_defaults(self, params: Any) -> Any:
        """``params`` (valid) with the schema's defaults filled in where they are missing, on a
        copy, whether or not this validator applies them: what a rule judging the call (an
        approval rule) must see when the tool gets its own defaults (a ``@tool`` function).
        """
        if not self._declares_defaults:
            return params
        return self._repairer.apply_defaults(params, [])

    def validate(
        self, params: Any, *, fast_checked: bool = False
    ) -> tuple[Any, tuple[Coercion, ...]]:
        """Validate ``params``; repair them if allowed; return what the tool should receive.

        Valid arguments with nothing to fill in come back as the very same object, with no
        coercions. Otherwise the caller's object is never mutated: coercions and defaults
        work on a copy, and each applied repair is returned as a :class:`Coercion`.

        Args:
            params: the arguments, as parsed JSON (usually a ``dict``).
            fast_checked: the caller already found ``fast_check(params)`` false: go straight
                to repairs and reporting.

        Returns:
            ``(arguments, coercions)``.

        Raises:
            ToolArgumentsError: the arguments are invalid even after repairs; ``violations``
                lists every violation with its path and the message lists them one per line.
        """
        value, coercions, violations, truncated = self.check(params, fast_checked=fast_checked)
        if violations is not None:
            raise arguments_error(violations, tool_name=self.tool_name, truncated=truncated)
        return value, coercions

    def check(self, params: Any, *, fast_checked: bool = False) -> Checked:
        """:meth:`validate` without the exception: what the adapter's invalid path uses.

        Building and raising a :class:`ToolArgumentsError` costs about a microsecond, a
        noticeable share of reporting an invalid call; the adapter needs only the violations
        and the message (:func:`~customtools._validation._messages.arguments_message`).

        Returns:
            ``(arguments, coercions, None, False)`` when the arguments are valid (after
            repairs), else ``(params, (), violations, truncated)``: ``truncated`` says more
            violations were found than ``limits.max_violations``.
        """
        if self._fast and not fast_checked:
            try:
                if self.fast_check(params):  # type: ignore[misc]
                    return params, _NO_COERCIONS, None, False
            except _NOT_JSON:
                pass
        return self._check_slow(params)

    def message_for(self, violations: list[Violation], truncated: bool = False) -> str:
        """The text of the :class:`ToolArgumentsError` :meth:`validate` would raise for
        ``violations`` (what :meth:`check` returned), naming this validator's tool."""
        return arguments_message(violations, tool_name=self.tool_name, truncated=truncated)

    def is_valid(self, params: Any) -> bool:
        """Return whether ``params`` are valid exactly as sent (no repairs, never raises)."""
        if self.guarded and find_limit_violation(params, self.limits) is not None:
            return False
        return self._valid(params)

    # -- the slow path: guards, repairs, defaults, reporting ---------------------------------

    def _valid(self, value: Any) -> bool:
        try:
            return bool(self._is_valid(value))
        except _NOT_JSON:
            return False

    def _violations(self, value: Any) -> tuple[list[Violation], bool]:
        limit = self.limits.max_violations
        try:
            found = list(islice(self._validator.iter_violations(value), limit + 1))
            if len(found) > limit:
                return found[:limit], True
        except _NOT_JSON as exc:
            # Too deep or too big for the engine (its own recursion limit), or not JSON at all.
            breach = find_limit_violation(value, self.limits)
            if breach is None:
                breach = Violation(
                    path="",
                    message=f"the arguments contain a value JSON cannot represent ({exc}); "
                    "send plain JSON",
                    keyword="json",
                )
            return [breach], False
        if not found:  # the engine disagreed with itself; never report "invalid" with no reason
            found.append(Violation(path="", message="the arguments are invalid", keyword="schema"))
        return found, False

    def _finish(self, params: Any, value: Any, applied: list[Coercion]) -> Checked:
        if self.has_defaults:
            before = len(applied)
            value = self._repairer.apply_defaults(value, applied)
            if len(applied) != before and not self._valid(value):
                violations, truncated = self._violations(value)
                return params, _NO_COERCIONS, violations, truncated
        return value, tuple(applied), None, False

    def _check_slow(self, params: Any) -> Checked:
        if self.guarded:
            # The engine would descend as deep as the value: enforce the limits first.
            breach = find_limit_violation(params, self.limits)
            if breach is not None:
                return params, _NO_COERCIONS, [breach], False
            if self._valid(params):
                return self._finish(params, params, [])
        elif self.has_defaults and self._valid(params):
            return self._finish(params, params, [])
        violations, truncated = self._violations(params)
        if self.coerce:
            applied: list[Coercion] = []
            value = params
            for _ in range(_MAX_REPAIR_ROUNDS):
                value, changed = self._repairer.repair(value, violations, applied)
                if not changed:
                    break
                if self._valid(value):
                    return self._finish(params, value, applied)
                violations, truncated = self._violations(value)
        return params, _NO_COERCIONS, violations, truncated


def compile_validator(
    schema: Mapping[str, Any] | bool,
    *,
    tool_name: str | None = None,
    coerce: bool = True,
    apply_defaults: bool = True,
    limits: ValidationLimits | None = None,
    engine: ValidatorEngine | str | None = None,
) -> CompiledValidator:
    """Compile a tool's parameter schema into a :class:`CompiledValidator`.

    Compilation is cached by the schema's canonical JSON for the default engine, so a schema
    already seen by :func:`check_schema` compiles in microseconds. Tool-parameter rules
    (object root, size limits) are :func:`check_schema`'s job; this accepts any Draft 2020-12
    schema, booleans included.

    Args:
        schema: the JSON Schema (Draft 2020-12 unless its ``$schema`` says otherwise).
        tool_name: named in error messages.
        coerce: try LLM-friendly repairs when the arguments are invalid (see ``Coercion``).
        apply_defaults: fill missing optional properties from schema ``default``s.
        limits: argument limits; :class:`ValidationLimits` defaults when omitted.
        engine: ``"rust"`` (default), ``"reference"`` or a :class:`ValidatorEngine`.

    Raises:
        SchemaError: the engine cannot compile the schema.
    """
    limits = limits or DEFAULT_LIMITS
    resolved = resolve_engine(engine)
    try:
        key: str | None = canonical_key(schema)
    except (TypeError, ValueError, RecursionError):
        key = None
    info = cached_info(schema, key)
    if isinstance(resolved, RustEngine):
        validator: SchemaValidator = resolved.compile_keyed(schema, key)
    else:
        validator = resolved.compile(schema)
    return CompiledValidator(
        schema,
        validator,
        engine=resolved,
        tool_name=tool_name,
        coerce=coerce,
        apply_defaults=apply_defaults,
        limits=limits,
        guarded=info.guarded,
        has_defaults=info.has_defaults,
        only_nulls=info.only_nulls,
    )
