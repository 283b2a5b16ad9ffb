"""The argument validation engine: schema checks, compiled validators, limits, engines.

The adapter uses all of this on every call; hosts reach for it directly to check a schema
before registering a tool (:func:`check_schema`), to parse a model's raw argument text within
limits (:func:`parse_arguments`), or to plug in another engine (:class:`ValidatorEngine`).
See ``docs/validation.md``.
"""

from __future__ import annotations

from customtools._public import rehome as _rehome
from customtools._validation import (
    Coercion,
    CompiledValidator,
    ReferenceEngine,
    RustEngine,
    SchemaValidator,
    ValidationLimits,
    ValidatorEngine,
    Violation,
    check_schema,
    compile_validator,
    parse_arguments,
)

__all__ = [
    "Coercion",
    "CompiledValidator",
    "ReferenceEngine",
    "RustEngine",
    "SchemaValidator",
    "ValidationLimits",
    "ValidatorEngine",
    "Violation",
    "check_schema",
    "compile_validator",
    "parse_arguments",
]

_rehome(globals(), __name__, __all__)
