"""The argument validation engine: schema checks, compiled validators, limits, engines.

The adapter uses all of this on every call; hosts reach for it directly to check a schema
before registering a tool (:func:`check_schema`), to parse a model's raw argument text within
limits (:func:`parse_arguments`), or to plug in another engine (:class:`ValidatorEngine`).
See ``docs/validation.md``.
"""

from __future__ import annotations

from customtools import _validation
from customtools._public import rehome as _rehome
from customtools._validation import *  # noqa: F403 - its __all__ is this namespace's

__all__ = _validation.__all__

_rehome(globals(), __name__, __all__)
