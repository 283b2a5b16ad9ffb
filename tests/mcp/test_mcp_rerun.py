"""``requestState`` of re-run calls (2026-07-28): sealed, and refused when changed at all."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

from customtools.mcp._rerun import StateSeal

KEY = b"k" * 32


def sealed() -> str:
    return StateSeal(KEY).seal({"t": "tool", "d": "digest", "e": time.time() + 3600, "a": []})


STATE = sealed()  # one state for every example: hypothesis needs the same length each time


def test_a_sealed_state_opens_once() -> None:
    seal = StateSeal(KEY)
    state = seal.seal({"t": "tool", "d": "digest", "e": time.time() + 600, "a": []})
    assert seal.open(state, tool="tool", digest="digest")["a"] == []


@pytest.mark.parametrize("suffix", ["-TAMPERED", "=", "==", "A", "\n", ".x"])
def test_text_appended_to_a_state_is_refused(suffix: str) -> None:
    # base64 decoders ignore what follows the padding: the comparison must not decode.
    with pytest.raises(MCPError, match="requestState for tool 'tool' refused"):
        StateSeal(KEY).open(sealed() + suffix, tool="tool", digest="digest")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    kind=st.sampled_from(["replace", "insert", "delete", "append", "prepend"]),
    text=st.text(min_size=1, max_size=4),
)
def test_any_mutation_of_a_sealed_state_is_refused(
    data: st.DataObject, kind: str, text: str
) -> None:
    state = STATE
    at = data.draw(st.integers(min_value=0, max_value=len(state) - 1))
    mutated = {
        "replace": state[:at] + text + state[at + 1 :],
        "insert": state[:at] + text + state[at:],
        "delete": state[:at] + state[at + 1 :],
        "append": state + text,
        "prepend": text + state,
    }[kind]
    if mutated == state:  # replacing a character by itself is no mutation
        return
    with pytest.raises(MCPError) as refused:
        StateSeal(KEY).open(mutated, tool="tool", digest="digest")
    assert "requestState for tool 'tool' refused" in str(refused.value)
