"""Validator engines: the compiled Rust engine (default) and the pure-Python reference engine.

An engine turns a JSON Schema into a :class:`SchemaValidator`. Both engines are imported
lazily, on the first compile, so ``import customtools`` pays for neither.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from customtools._errors import SchemaError
from customtools._validation._guard import find_limit_violation, non_finite_name
from customtools._violations import (
    ValidationLimits,
    Violation,
    json_pointer,
    make_violation,
)

__all__ = [
    "ReferenceEngine",
    "RustEngine",
    "SchemaValidator",
    "ValidatorEngine",
    "import_rust_engine",
    "resolve_engine",
]

_MAX_MESSAGE_CHARS = 300
# Modes of the pattern translation walk, as in the schema analysis: keys of these map names to
# subschemas, and these hold data (never patterns).
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_DATA = frozenset({"enum", "const", "default", "examples"})
_NEEDS_ESCAPE = re.compile(r"[~/]").search

# jsonschema_rs names each error kind after its keyword; these few need translating.
_RUST_KIND_KEYWORDS = {"falseSchema": "false", "RegexEngineFailure": "pattern"}


def _shorten(message: str) -> str:
    message = message.split("\n\n", 1)[0]
    if len(message) <= _MAX_MESSAGE_CHARS:
        return message
    return message[: _MAX_MESSAGE_CHARS - 1] + "…"


@runtime_checkable
class SchemaValidator(Protocol):
    """A schema compiled by a :class:`ValidatorEngine`."""

    def is_valid(self, instance: Any) -> bool:
        """Return whether ``instance`` satisfies the schema. This is the hot path."""

    def iter_violations(self, instance: Any) -> Iterator[Violation]:
        """Yield every violation of the schema by ``instance``, each with its path."""


@runtime_checkable
class ValidatorEngine(Protocol):
    """Extension point: something that compiles JSON Schemas (Draft 2020-12) into validators.

    ``compile`` must raise :class:`~customtools.SchemaError` (with ``path`` set to the place in
    the schema) for a schema it cannot use. ``is_valid`` and ``iter_violations`` of the result
    may raise ``ValueError``/``TypeError`` for values JSON cannot represent; the caller turns
    those into argument errors.
    """

    @property
    def name(self) -> str:
        """A short name for messages and benchmarks (``"rust"``, ``"reference"``)."""

    def compile(self, schema: Any) -> SchemaValidator:
        """Compile ``schema`` (a mapping or a boolean) into a validator."""


class _RustValidator:
    __slots__ = ("_inner", "is_valid")

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        # The bound method of the compiled validator itself: no Python frame on the hot path.
        self.is_valid: Callable[[Any], bool] = inner.is_valid

    def iter_violations(self, instance: Any) -> Iterator[Violation]:
        translate = _RUST_KIND_KEYWORDS
        for error in self._inner.iter_errors(instance):
            keyword = error.kind.name
            keyword = translate.get(keyword, keyword)
            parts = error.instance_path
            message = error.message
            if keyword == "pattern" and message.startswith("Error executing regex"):
                message = (
                    "the value could not be checked against the schema's pattern in time "
                    "(regex backtracking limit reached); send a shorter or simpler value"
                )
            elif message.startswith("null "):
                message = _name_non_finite(message, instance, parts)
            elif len(message) > _MAX_MESSAGE_CHARS or "\n" in message:
                message = _shorten(message)
            if not parts:
                path = ""
            elif len(parts) == 1 and type(parts[0]) is str and not _NEEDS_ESCAPE(parts[0]):
                path = "/" + parts[0]
            else:
                path = json_pointer(parts)
            yield make_violation(path, message, keyword)


def _value_at(instance: Any, parts: Sequence[str | int]) -> Any:
    for part in parts:
        try:
            instance = instance[part]
        except (LookupError, TypeError):
            return None
    return instance


def _name_non_finite(message: str, instance: Any, parts: Sequence[str | int]) -> str:
    """Say ``NaN``/``Infinity`` where the engine, which reads them as ``null``, says ``null``."""
    value = _value_at(instance, parts)
    if not isinstance(value, float) or math.isfinite(value):
        return message
    return (
        f"{non_finite_name(value)}{message[4:]} (JSON has no NaN or Infinity; send a finite number)"
    )


class RustEngine:
    """The default engine: ``jsonschema_rs``, compiled validation in Rust.

    ``is_valid`` costs about 0.3 µs on a typical tool schema. Patterns use the linear-time
    ``regex`` engine by default, so no ``pattern`` can hang the host; patterns that need
    lookaround or backreferences are then rejected when the schema is checked. Pass
    ``regex="backtracking"`` to accept them, with every match bounded by ``backtrack_limit``
    steps (a value that exceeds it is reported as a violation).

    Args:
        resources: documents that remote ``$ref`` URIs resolve to (``{uri: schema}``).
            Nothing is ever fetched over the network; an unknown URI is a schema error.
        regex: ``"linear"`` (default) or ``"backtracking"``.
        backtrack_limit: most backtracking steps per match in ``"backtracking"`` mode.
        regex_size_limit: largest compiled pattern in bytes (guards against compile blow-up).
    """

    __slots__ = ("_cache", "_options", "backtrack_limit", "regex", "regex_size_limit", "resources")

    def __init__(
        self,
        *,
        resources: Mapping[str, Any] | None = None,
        regex: Literal["linear", "backtracking"] = "linear",
        backtrack_limit: int = 10_000,
        regex_size_limit: int = 1 << 20,
    ) -> None:
        if regex not in ("linear", "backtracking"):
            raise ValueError(f"regex must be 'linear' or 'backtracking', not {regex!r}")
        self.resources = dict(resources) if resources is not None else None
        self.regex = regex
        self.backtrack_limit = backtrack_limit
        self._options: dict[str, Any] | None = None
        self.regex_size_limit = regex_size_limit
        self._cache: dict[str, _RustValidator] = {}

    @property
    def name(self) -> str:
        """``"rust"``."""
        return "rust"

    def _compile_options(self) -> dict[str, Any]:
        if self._options is None:
            jsonschema_rs = import_rust_engine()

            size = self.regex_size_limit
            pattern_options: Any
            if self.regex == "linear":
                pattern_options = jsonschema_rs.RegexOptions(size_limit=size)
            else:
                pattern_options = jsonschema_rs.FancyRegexOptions(
                    backtrack_limit=self.backtrack_limit, size_limit=size
                )
            options: dict[str, Any] = {"pattern_options": pattern_options}
            if self.resources is None:
                options["offline"] = True
            else:
                options["retriever"] = self._retrieve
            self._options = options
        return self._options

    def _retrieve(self, uri: str) -> Any:
        assert self.resources is not None
        try:
            return self.resources[uri]
        except KeyError:
            raise ValueError(
                f"unknown remote schema {uri!r} (not in the engine's resources)"
            ) from None

    def compile(self, schema: Any) -> SchemaValidator:
        """Compile ``schema``; raise :class:`~customtools.SchemaError` if it is unusable."""
        try:
            key = json.dumps(schema, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            key = None
        return self.compile_keyed(schema, key)

    def compile_keyed(self, schema: Any, key: str | None) -> _RustValidator:
        """Compile ``schema`` whose canonical JSON text is ``key`` (cached by that key)."""
        if key is not None:
            cached = self._cache.get(key)
            if cached is not None:
                return cached
        options = self._compile_options()
        jsonschema_rs = import_rust_engine()

        try:
            inner = jsonschema_rs.validator_for(schema, **options)
        except jsonschema_rs.ValidationError as exc:
            raise _schema_error_from_rust(exc, linear=self.regex == "linear") from None
        except (ValueError, TypeError, OverflowError) as exc:
            raise SchemaError(f"schema cannot be compiled: {exc}", path="") from None
        compiled = _RustValidator(inner)
        if key is not None:
            if len(self._cache) >= 4096:
                self._cache.clear()
            self._cache[key] = compiled
        return compiled


def import_rust_engine() -> Any:
    """Import ``jsonschema_rs`` (lazily: a 24 ms import), or fail saying how to fix it.

    There is no silent fallback to the reference engine: its ``re`` patterns backtrack without
    a bound, so a schema's ``pattern`` could hang the host.

    Raises:
        ModuleNotFoundError: ``jsonschema_rs`` cannot be imported; the message names the fix.
    """
    try:
        import jsonschema_rs
    except ImportError as exc:
        raise ModuleNotFoundError(
            "argument validation needs the compiled engine 'jsonschema-rs', which cannot be "
            "imported; install it (pip install jsonschema-rs, a dependency of customtools), or "
            "opt into the pure-Python engine with engine='reference' (slower, and its patterns "
            "can backtrack without bound: trusted schemas only)",
            name="jsonschema_rs",
        ) from exc
    return jsonschema_rs


def _schema_error_from_rust(exc: Any, *, linear: bool) -> SchemaError:
    path = json_pointer(exc.instance_path)
    message = _shorten(exc.message)
    parts = [str(p) for p in exc.instance_path]
    if 'is not a "regex"' in message and ("pattern" in parts or "patternProperties" in parts):
        message += (
            " (the pattern does not compile in the linear-time regex engine, which has no "
            "lookaround or backreferences, or it is too large; rewrite it"
            + (", or use RustEngine(regex='backtracking'))" if linear else ")")
        )
    return SchemaError(message, path=path)


# The reference validator's own JSON check: no limits of its own (the compiled validator
# enforces those), only "is this plain JSON", so both engines give the same verdicts.
_NO_LIMITS = ValidationLimits(max_depth=sys.maxsize, max_nodes=sys.maxsize)


class _ReferenceValidator:
    __slots__ = ("_inner", "_patterns")

    def __init__(self, inner: Any, patterns: Mapping[str, str]) -> None:
        self._inner = inner
        self._patterns = patterns  # translated pattern -> the schema's own, for messages

    def is_valid(self, instance: Any) -> bool:
        if find_limit_violation(instance, _NO_LIMITS) is not None:
            return False
        return bool(self._inner.is_valid(instance))

    def iter_violations(self, instance: Any) -> Iterator[Violation]:
        breach = find_limit_violation(instance, _NO_LIMITS)
        if breach is not None:
            yield breach
            return
        for error in self._inner.iter_errors(instance):
            message = error.message
            for translated, original in self._patterns.items():
                message = message.replace(repr(translated), repr(original))
            yield Violation(
                path=json_pointer(list(error.absolute_path)),
                message=_shorten(message),
                keyword=str(error.validator),
            )


def ecma_anchors(pattern: str) -> str:
    """``pattern`` with ECMA-262 ``$`` semantics for Python's ``re``: every ``$`` anchor is ``\\Z``.

    JSON Schema patterns are ECMA-262 regular expressions, where ``$`` (without the multiline
    flag) matches only at the very end; Python's ``$`` also matches before a trailing newline,
    which would let ``"abc\\n"`` through ``^[a-z]+$``. Escaped dollars and dollars inside a
    character class are left alone.
    """
    out: list[str] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            char = "\\Z"
        out.append(char)
        index += 1
    return "".join(out)


def _translate_patterns(node: Any, found: dict[str, str], mode: int = 0) -> Any:
    """A copy of the schema with every pattern through :func:`ecma_anchors` (``found`` maps)."""
    if isinstance(node, list):
        return [_translate_patterns(item, found, mode) for item in node]
    if not isinstance(node, dict) or mode == 2:
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if mode == 0 and key == "pattern" and isinstance(value, str):
            translated = ecma_anchors(value)
            found[translated] = value
            out[key] = translated
        elif mode == 0 and key == "patternProperties" and isinstance(value, dict):
            renamed = {ecma_anchors(k): k for k in value}
            found.update(renamed)
            out[key] = {ecma_anchors(k): _translate_patterns(v, found) for k, v in value.items()}
        else:
            child = 1 if mode == 0 and key in _SCHEMA_MAPS else 2 if key in _SCHEMA_DATA else 0
            out[key] = _translate_patterns(value, found, 0 if mode == 1 else child)
    return out


class ReferenceEngine:
    """The reference engine: the pure-Python ``jsonschema`` package.

    About 40 µs per call and a 74 ms import (done lazily), so it serves differential tests
    and hosts that cannot install the compiled engine; it is used only when asked for
    (``engine="reference"``), never as a silent fallback. Patterns use Python's ``re``, which
    backtracks without a bound: do not use this engine with untrusted schemas. ``$`` in a
    pattern is given its ECMA-262 meaning (end of text only, ``\\Z``), and values that are not
    plain JSON (``NaN``, sets, non-string keys, ...) are invalid, as with the Rust engine.

    Args:
        resources: documents that remote ``$ref`` URIs resolve to (``{uri: schema}``).
            Nothing is fetched over the network.
    """

    __slots__ = ("_registry", "resources")

    def __init__(self, *, resources: Mapping[str, Any] | None = None) -> None:
        self.resources = dict(resources) if resources is not None else None
        self._registry: Any = None

    @property
    def name(self) -> str:
        """``"reference"``."""
        return "reference"

    def _get_registry(self) -> Any:
        if self._registry is None:
            from referencing import Registry, Resource
            from referencing.exceptions import NoSuchResource
            from referencing.jsonschema import DRAFT202012

            resources = self.resources or {}

            def retrieve(uri: str) -> Any:
                if uri not in resources:
                    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]
                return Resource.from_contents(resources[uri], default_specification=DRAFT202012)

            self._registry = Registry(retrieve=retrieve)  # type: ignore[call-arg]
        return self._registry

    def compile(self, schema: Any) -> SchemaValidator:
        """Compile ``schema``; raise :class:`~customtools.SchemaError` if it is unusable."""
        import jsonschema  # lazy: a 74 ms import
        import jsonschema.validators

        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise SchemaError(_shorten(exc.message), path=json_pointer(list(exc.path))) from None
        found: dict[str, str] = {}
        try:
            translated = _translate_patterns(schema, found)
        except RecursionError:
            raise SchemaError("the schema is nested too deeply", path="") from None
        changed = {k: v for k, v in found.items() if k != v}
        return _ReferenceValidator(cls(translated, registry=self._get_registry()), changed)


_DEFAULT_RUST: RustEngine | None = None


def default_engine() -> RustEngine:
    """Return the shared default :class:`RustEngine` (its compile cache is shared too)."""
    global _DEFAULT_RUST
    if _DEFAULT_RUST is None:
        _DEFAULT_RUST = RustEngine()
    return _DEFAULT_RUST


def resolve_engine(engine: ValidatorEngine | str | None) -> ValidatorEngine:
    """Turn ``None``/``"rust"``/``"reference"``/an engine object into an engine.

    ``None`` is the Rust engine, always: when ``jsonschema_rs`` is missing, compiling fails
    with a message naming the fix (see :func:`import_rust_engine`); the reference engine is
    used only when asked for by name or object.
    """
    if engine is None or engine == "rust":
        return default_engine()
    if engine == "reference":
        return ReferenceEngine()
    if isinstance(engine, str):
        raise ValueError(
            f"unknown validator engine {engine!r}: use 'rust', 'reference' or an object"
        )
    if not isinstance(engine, ValidatorEngine):
        raise TypeError(f"engine must be 'rust', 'reference' or a ValidatorEngine, not {engine!r}")
    return engine
