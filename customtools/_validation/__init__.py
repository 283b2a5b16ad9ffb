"""The argument validation engine: schema checks, compiled validators, repairs, limits.

Public names are re-exported from :mod:`customtools`; see ``docs/validation.md``.

- :func:`check_schema` — is a ``parameters`` schema usable (load time, cached)?
- :func:`compile_validator` → :class:`CompiledValidator` — the per-call hot path.
- :func:`parse_arguments` — raw JSON text from a model, parsed within limits.
- :class:`Violation`, :class:`Coercion`, :class:`ValidationLimits` — value objects.
- :class:`ValidatorEngine` — the engine extension point; :class:`RustEngine` (default) and
  :class:`ReferenceEngine` implement it.
"""

from __future__ import annotations

from customtools._validation._compiled import CompiledValidator, compile_validator
from customtools._validation._engines import (
    ReferenceEngine,
    RustEngine,
    SchemaValidator,
    ValidatorEngine,
)
from customtools._validation._guard import parse_arguments
from customtools._validation._schema import check_schema
from customtools._violations import Coercion, ValidationLimits, Violation

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
