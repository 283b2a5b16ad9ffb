"""Pydantic models as parameters and results, where the author already uses pydantic."""

from __future__ import annotations

import pytest

pydantic = pytest.importorskip("pydantic")

from customtools import CustomToolAdapter, tool  # noqa: E402
from customtools.validation import check_schema  # noqa: E402


class Address(pydantic.BaseModel):
    street: str
    number: int = pydantic.Field(ge=1)


class Person(pydantic.BaseModel):
    """Someone to greet."""

    name: str = pydantic.Field(min_length=1, description="Their name.")
    home: Address


seen: list[Person] = []


@tool
def greet(person: Person) -> Person:
    """Greet a person."""
    seen.append(person)
    return person


def test_the_model_schema_is_used_and_closed() -> None:
    schema = greet.parameters["properties"]["person"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["name"]["minLength"] == 1
    assert greet.parameters["$defs"]["Address"]["additionalProperties"] is False
    check_schema(greet.parameters)
    assert greet.output_schema is not None


@pytest.mark.anyio
async def test_arguments_arrive_as_model_instances() -> None:
    seen.clear()
    result = await CustomToolAdapter(greet).execute(
        "c", {"person": {"name": "Ada", "home": {"street": "Main", "number": 3}}}
    )
    assert not result.is_error, result.text
    assert isinstance(seen[0], Person)
    assert seen[0].home.number == 3
    assert result.structured_content == {"name": "Ada", "home": {"street": "Main", "number": 3}}


@pytest.mark.anyio
async def test_schema_violations_are_reported_before_the_model_is_built() -> None:
    result = await CustomToolAdapter(greet).execute(
        "c", {"person": {"name": "", "home": {"street": "Main", "number": 0}}}
    )
    assert result.is_error
    assert "/person/name" in result.text
    assert "/person/home/number" in result.text


class Settings(pydantic.BaseModel):
    """Search settings."""

    query: str
    limit: int = 10
    language: str | None = None
    home: Address | None = None


@pytest.mark.anyio
async def test_strict_mode_with_a_model_meets_openai_rules() -> None:
    from customtools.export import openai_issues

    seen: list[Settings] = []

    @tool(strict=True)
    def search(settings: Settings) -> str:
        """Search."""
        seen.append(settings)
        return "ok"

    schema = search.parameters["properties"]["settings"]
    assert schema["required"] == ["query", "limit", "language", "home"]
    assert "default" not in schema["properties"]["limit"]
    assert schema["properties"]["limit"]["anyOf"][1] == {"type": "null"}
    assert openai_issues(search) == []
    # null stands for "the model's default" where the field does not admit null itself
    result = await CustomToolAdapter(search).execute(
        "c", {"settings": {"query": "q", "limit": None, "language": None, "home": None}}
    )
    assert not result.is_error, result.text
    assert seen[-1] == Settings(query="q")
    result = await CustomToolAdapter(search).execute(
        "c",
        {
            "settings": {
                "query": "q",
                "limit": 3,
                "language": "en",
                "home": {"street": "Main", "number": 2},
            }
        },
    )
    assert not result.is_error, result.text
    assert seen[-1].limit == 3
    assert seen[-1].home == Address(street="Main", number=2)
