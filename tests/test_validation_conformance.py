"""JSON-Schema-Test-Suite (Draft 2020-12) through both engines, via compile_validator.

Every required test case must get the suite's verdict from the Rust engine and from the
reference engine, each reached through the public ``compile_validator(..., coerce=False,
apply_defaults=False)`` path. ``optional/`` cases are informative: a disagreement there is
reported as an expected failure, never a CI failure. The suite is vendored unmodified under
``tests/conformance/json-schema-test-suite/`` (see its SOURCE.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from customtools._errors import SchemaError, ToolArgumentsError
from customtools._validation import (
    CompiledValidator,
    ReferenceEngine,
    RustEngine,
    ValidatorEngine,
    compile_validator,
)

SUITE = Path(__file__).parent / "conformance" / "json-schema-test-suite"
TESTS = SUITE / "draft2020-12"
REMOTE_BASE = "http://localhost:1234/"


def load_remotes() -> dict[str, Any]:
    remotes = SUITE / "remotes"
    return {
        REMOTE_BASE + path.relative_to(remotes).as_posix(): json.loads(path.read_text("utf-8"))
        for path in sorted(remotes.rglob("*.json"))
    }


REMOTES = load_remotes()
ENGINES: dict[str, ValidatorEngine] = {
    "rust": RustEngine(resources=REMOTES),
    "reference": ReferenceEngine(resources=REMOTES),
}


# Required cases the pure-Python ``jsonschema`` 4.26 gets wrong (the Rust engine passes all).
# Required cases the pure-Python ``jsonschema`` 4.26 gets wrong (the Rust engine passes all).
# Strict xfails: if a jsonschema release fixes one, the test fails and this list shrinks.
_NO_PROPERTY_ESCAPES = "Python's re has no \\p{Letter} property escapes"
_PATTERN = "pattern.json:pattern with Unicode property escape requires unicode mode:"
_PATTERN_PROPERTIES = "patternProperties.json:patternProperties with Unicode property escape:"
REFERENCE_GAPS = {
    _PATTERN + "ASCII letters match": _NO_PROPERTY_ESCAPES,
    _PATTERN + "Non-ASCII letters match": _NO_PROPERTY_ESCAPES,
    _PATTERN + "Digits do not match": _NO_PROPERTY_ESCAPES,
    _PATTERN_PROPERTIES + "Unicode letter property name matches": _NO_PROPERTY_ESCAPES,
    _PATTERN_PROPERTIES + "Non-letter property name does not match pattern": _NO_PROPERTY_ESCAPES,
    "vocabulary.json:schema that uses custom metaschema with with no validation vocabulary:"
    "no validation: invalid number, but it still validates": (
        "jsonschema does not implement $vocabulary"
    ),
}


class Case(NamedTuple):
    file: str
    group: int
    schema: Any
    data: Any
    valid: bool


def collect(folder: Path) -> list[Any]:
    files = sorted(folder.glob("*.json"))
    params = []
    for path in files:
        name = path.relative_to(TESTS).as_posix()
        for group_index, group in enumerate(json.loads(path.read_text("utf-8"))):
            for test in group["tests"]:
                case = Case(name, group_index, group["schema"], test["data"], test["valid"])
                gap = REFERENCE_GAPS.get(f"{name}:{group['description']}:{test['description']}")
                for engine in ENGINES:
                    test_id = f"{engine}:{name}:{group['description']}:{test['description']}"
                    marks = []
                    if gap and engine == "reference":
                        marks.append(pytest.mark.xfail(reason=gap, strict=True))
                    params.append(pytest.param(engine, case, id=test_id, marks=marks))
    return params


REQUIRED = collect(TESTS)
OPTIONAL_FILES = sorted(
    p.relative_to(TESTS).as_posix() for p in (TESTS / "optional").rglob("*.json")
)
_COMPILED: dict[tuple[str, str, int], CompiledValidator] = {}


def validator_for(engine: str, case: Case) -> CompiledValidator:
    key = (engine, case.file, case.group)
    if key not in _COMPILED:
        _COMPILED[key] = compile_validator(
            case.schema, coerce=False, apply_defaults=False, engine=ENGINES[engine]
        )
    return _COMPILED[key]


def verdict(engine: str, case: Case) -> bool:
    validator = validator_for(engine, case)
    try:
        params, coercions = validator.validate(case.data)
    except ToolArgumentsError as exc:
        violations = exc.violations
    else:
        violations = ()
    if violations or not validator.is_valid(case.data):
        assert violations, "an invalid verdict must come with at least one violation"
        return False
    assert params is case.data
    assert coercions == ()
    return True


def test_the_suite_is_present() -> None:
    assert len(REQUIRED) == 2 * 1299
    assert (SUITE / "LICENSE").is_file()
    assert "44401e0c046704b476ec9d2e2fccdaee618f259d" in (SUITE / "SOURCE.md").read_text()


@pytest.mark.parametrize(("engine", "case"), REQUIRED)
def test_required(engine: str, case: Case) -> None:
    try:
        outcome = verdict(engine, case)
    except SchemaError as exc:
        pytest.fail(f"{engine} rejected the suite's schema: {exc}")
    assert outcome is case.valid


@pytest.mark.parametrize("name", OPTIONAL_FILES)
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_optional(engine: str, name: str) -> None:
    """Informative: one test per file; disagreements become an expected failure with counts."""
    disagreements = []
    total = 0
    for group_index, group in enumerate(json.loads((TESTS / name).read_text("utf-8"))):
        for test in group["tests"]:
            total += 1
            case = Case(name, group_index, group["schema"], test["data"], test["valid"])
            try:
                outcome: object = verdict(engine, case)
            except SchemaError as exc:
                outcome = f"schema rejected ({exc})"
            if outcome is not case.valid:
                disagreements.append(f"{group['description']}: {test['description']}")
    if disagreements:
        pytest.xfail(
            f"informative: {len(disagreements)} of {total} cases disagree, "
            f"first: {disagreements[0]}"
        )
