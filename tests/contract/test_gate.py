"""The gate's parts: versions, acknowledgements, contract documents."""

from __future__ import annotations

import re

import pytest

from customtools._rules import RULES
from customtools._rules._contract import (
    Acknowledgement,
    ContractError,
    change_kind,
    compare_contracts,
    contract_document,
    dump_contract,
    major_step,
    read_acknowledgements,
    read_contract,
)

from .corpus import obj, tool


@pytest.mark.parametrize(
    ("old", "new", "major"),
    [
        ("1.4.2", "2.0.0", True),
        ("1.4.2", "1.9.0", False),
        ("v1", "v2", True),
        ("0.3.1", "0.4.0", True),
        ("0.3.1", "0.3.9", False),
        ("0.9", "1.0", True),
        ("2.0", "1.0", False),
        (None, "2.0", False),
        ("1.0", "next", False),
    ],
)
def test_a_major_step(old: str | None, new: str | None, major: bool) -> None:
    assert major_step(old, new) is major


def test_every_contract_code_has_a_kind() -> None:
    kinds = {code: change_kind(code) for code, rule in RULES.items() if rule.scope == "contract"}

    assert kinds["tool-removed"] == "breaking"
    assert kinds["contract-undecided"] == "undecided"
    assert kinds["tool-renamed"] == "compatible"
    assert kinds["default-changed"] == "notice"
    assert set(kinds.values()) == {"breaking", "undecided", "compatible", "notice"}


def test_a_document_reads_back_and_is_written_in_one_order() -> None:
    document = contract_document(
        [("b", None, {"z": tool(), "a": tool()}), ("a", "1.0", {"m": tool()})]
    )

    text = dump_contract(document)

    assert read_contract(text, "x.json") == document
    assert [pack["path"] for pack in document["packs"]] == ["a", "b"]
    assert list(document["packs"][1]["tools"]) == ["a", "z"]
    assert text.endswith("}\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "x.json: not JSON"),
        ('{"format": "other"}', "x.json: not a contract document (format 'other'"),
        ('{"format": "customtools-contract/1", "packs": {}}', "'packs' must be a list"),
        ('{"format": "customtools-contract/1", "packs": [{"path": 1}]}', "packs[0] must have"),
    ],
)
def test_a_bad_document_is_refused_naming_the_file(text: str, message: str) -> None:
    with pytest.raises(ContractError, match=re.escape(message)):
        read_contract(text, "x.json")


@pytest.mark.parametrize(
    "text",
    ["[]", '{"accept": [{"tool": "a"}]}', '{"accept": [{"tool": "a", "reason": " "}]}'],
)
def test_an_acknowledgement_needs_a_tool_and_a_reason(text: str) -> None:
    with pytest.raises(ContractError, match=r"acks\.json"):
        read_acknowledgements(text, "acks.json")


def test_an_acknowledgement_pointer_covers_what_is_below_it() -> None:
    old = contract_document([("p", None, {"t": tool(parameters=obj(o=obj(a={"type": "string"})))})])
    new = contract_document([("p", None, {"t": tool(parameters=obj(o=obj()))})])
    above = Acknowledgement(tool="t", reason="r", pointer="/parameters/properties/o")
    aside = Acknowledgement(tool="t", reason="r", pointer="/parameters/properties/other")

    (accepted,) = compare_contracts(old, new, acknowledgements=[above])
    found = compare_contracts(old, new, acknowledgements=[aside])

    assert accepted.accepted is not None
    assert accepted.finding.severity == "notice"
    assert found[0].accepted is None
    assert found[0].finding.severity == "error"
    assert found[1].finding.code == "unused-acknowledgement"


def test_a_tool_whose_module_failed_is_undecided() -> None:
    old = contract_document([("p", None, {"t": {**tool(), "module": "m.py"}})])
    new = contract_document([("p", None, {})])

    (found,) = compare_contracts(old, new, unreadable=["p/m.py"])
    (strict,) = compare_contracts(old, new, unreadable=["p/m.py"], strict=True)

    assert found.finding.code == "contract-undecided"
    assert found.finding.severity == "warning"
    assert strict.finding.severity == "error"
