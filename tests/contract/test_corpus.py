"""The gate against the labelled corpus: every pair gets its verdict and names its code."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from customtools._rules import RULES
from customtools._rules._contract import compare_contracts, contract_document, tool_entry

from .corpus import CORPUS, tool

_GRAVITY = ["notice", "compatible", "undecided", "breaking"]


def _document(tools: dict[str, Any]) -> dict[str, Any]:
    return contract_document([("tools", None, tools)])


def _documents(side: str, old: Any, new: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    if side == "tool":
        return _document(old), _document(new)
    key = "parameters" if side == "input" else "outputSchema"
    return _document({"t": tool(**{key: old})}), _document({"t": tool(**{key: new})})


def verdict(side: str, old: Any, new: Any) -> tuple[str, set[str]]:
    """The gravest kind the gate reports for the pair, and every code it reports."""
    found = compare_contracts(*_documents(side, old, new))
    if not found:
        return "unchanged", set()
    kind = max((item.kind for item in found), key=_GRAVITY.index)
    return kind, {item.finding.code for item in found}


@pytest.mark.parametrize(
    ("side", "old", "new", "label", "code"),
    [pytest.param(*entry[1:], id=entry[0]) for entry in CORPUS],
)
def test_the_gate_labels_each_pair_as_the_corpus_does(
    side: str, old: Any, new: Any, label: str, code: str | None
) -> None:
    kind, codes = verdict(side, old, new)

    assert kind == label, codes
    if code is not None:
        assert code in codes


def test_the_corpus_covers_every_contract_code_and_label() -> None:
    labels = Counter(entry[4] for entry in CORPUS)
    codes = {entry[5] for entry in CORPUS}
    contract_codes = {
        code
        for code, rule in RULES.items()
        if rule.scope == "contract" and code != "unused-acknowledgement"
    }

    assert sum(labels[label] for label in ("breaking", "compatible", "notice")) >= 60
    assert labels["undecided"] >= 3
    assert contract_codes <= codes


def test_unchanged_entries_give_no_findings() -> None:
    entry = tool_entry({"name": "t", "label": "t"}, module="m.py", permissions=None)
    document = _document({"t": entry})

    assert compare_contracts(document, document) == []
