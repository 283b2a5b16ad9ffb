"""The loader's records round-trip through their JSON form: ``from_dict(to_dict())``."""

from __future__ import annotations

import json

import pytest

from customtools._loading._records import (
    Candidate,
    Diagnostic,
    LoadError,
    MetadataFile,
    ToolSource,
)

SOURCE = ToolSource(
    provider="plugin",
    provider_name="Plugin",
    level="project",
    plugin_name="kit",
    plugin_version="1.2",
)
BARE = ToolSource(provider="native", provider_name="customtools", level="user")


def round_trip(record: object) -> object:
    return type(record).from_dict(json.loads(json.dumps(record.to_dict())))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "source",
    [
        SOURCE,
        BARE,
        ToolSource(
            provider="entry-points", provider_name="Entry points", level="user", distribution="dist"
        ),
    ],
)
def test_a_tool_source_round_trips(source: ToolSource) -> None:
    assert round_trip(source) == source


@pytest.mark.parametrize(
    "candidate",
    [
        Candidate(path="/p/t.py", resolved_path="/r/t.py", kind="module", source=SOURCE, root="/p"),
        Candidate(
            path="<ep>",
            resolved_path="<ep>",
            kind="entry_point",
            source=BARE,
            entry_point="pkg.mod:factory",
        ),
    ],
)
def test_a_candidate_round_trips(candidate: Candidate) -> None:
    assert round_trip(candidate) == candidate


@pytest.mark.parametrize(
    "error",
    [
        LoadError(path="/p/t.py", error="boom; fix it"),
        LoadError(
            path="/p/t.py",
            error="x",
            source=SOURCE,
            resolved_path="/r/t.py",
            code="import-error",
            tool_name="t",
            traceback="Traceback ...",
        ),
    ],
)
def test_a_load_error_round_trips(error: LoadError) -> None:
    assert round_trip(error) == error


@pytest.mark.parametrize(
    "diagnostic",
    [
        Diagnostic(code="skipped-file", message="m"),
        Diagnostic(code="duplicate-path", message="m", path="/p", source=SOURCE),
    ],
)
def test_a_diagnostic_round_trips(diagnostic: Diagnostic) -> None:
    assert round_trip(diagnostic) == diagnostic


def test_a_metadata_file_round_trips() -> None:
    meta = MetadataFile(
        path="/p/a.md",
        resolved_path="/p/a.md",
        name="a",
        description="d",
        source=SOURCE,
        format="md",
        data={"name": "a", "tags": ["x"]},
    )
    assert round_trip(meta) == meta


def test_the_json_form_is_camel_case_without_none_fields() -> None:
    error = LoadError(path="/p", error="e", tool_name="t")
    assert error.to_dict() == {"path": "/p", "error": "e", "code": "load-error", "toolName": "t"}


def test_a_form_without_a_required_field_is_refused() -> None:
    with pytest.raises(TypeError):
        LoadError.from_dict({"error": "no path"})
