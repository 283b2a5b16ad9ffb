"""Validator engines: the compiled Rust engine (default) and the pure-Python reference engine.

An engine turns a JSON Schema into a :class:`SchemaValidator`. Both engines are imported
lazily, on the first compile, so ``import customtools`` pays for neither.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from importlib.util import find_spec
from typing import Any, Literal, Protocol, runtime_checkable

from customtools._errors import SchemaError
from customtools._validation._model import Violation, json_pointer, make_violation

__all__ = [
    "ReferenceEngine",
    "RustEngine",
    "SchemaValidator",
    "ValidatorEngine",
    "resolve_engine",
]

_MAX_MESSAGE_CHARS = 300
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
        ...

    def iter_violations(self, instance: Any) -> Iterator[Violation]:
        """Yield every violation of the schema by ``instance``, each with its path."""
        ...


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
        ...

    def compile(self, schema: Any) -> SchemaValidator:
        """Compile ``schema`` (a mapping or a boolean) into a validator."""
        ...


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
            elif len(message) > _MAX_MESSAGE_CHARS or "\n" in message:
                message = _shorten(message)
            if not parts:
                path = ""
            elif len(parts) == 1 and type(parts[0]) is str and not _NEEDS_ESCAPE(parts[0]):
                path = "/" + parts[0]
            else:
                path = json_pointer(parts)
            yield make_violation(path, message, keyword)


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
            import jsonschema_rs  # lazy: a 24 ms import, paid on the first compile

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
        import jsonschema_rs

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


class _ReferenceValidator:
    __slots__ = ("_inner", "is_valid")

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.is_valid: Callable[[Any], bool] = inner.is_valid

    def iter_violations(self, instance: Any) -> Iterator[Violation]:
        for error in self._inner.iter_errors(instance):
            yield Violation(
                path=json_pointer(list(error.absolute_path)),
                message=_shorten(error.message),
                keyword=str(error.validator),
            )


class ReferenceEngine:
    """The reference engine: the pure-Python ``jsonschema`` package.

    About 40 µs per call and a 74 ms import (done lazily), so it serves differential tests
    and hosts that cannot install the compiled engine. Patterns use Python's ``re``, which
    backtracks without a bound: do not use this engine with untrusted schemas.

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
        return _ReferenceValidator(cls(schema, registry=self._get_registry()))


_DEFAULT_RUST: RustEngine | None = None
_FALLBACK: ReferenceEngine | None = None


def _fallback_engine() -> ReferenceEngine:
    global _FALLBACK
    if _FALLBACK is None:
        _FALLBACK = ReferenceEngine()
    return _FALLBACK


def default_engine() -> RustEngine:
    """Return the shared default :class:`RustEngine` (its compile cache is shared too)."""
    global _DEFAULT_RUST
    if _DEFAULT_RUST is None:
        _DEFAULT_RUST = RustEngine()
    return _DEFAULT_RUST


def resolve_engine(engine: ValidatorEngine | str | None) -> ValidatorEngine:
    """Turn ``None``/``"rust"``/``"reference"``/an engine object into an engine."""
    if engine is None:
        if find_spec("jsonschema_rs") is None:
            return _fallback_engine()
        return default_engine()
    if engine == "rust":
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
