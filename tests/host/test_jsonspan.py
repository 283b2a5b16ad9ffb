"""Declaration spans come from a JSON tokenizer: every span is exactly ``"key": value``."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from customtools.host._jsonspan import member_spans

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), values, max_size=4),
    st.sampled_from([None, 2]),
    st.booleans(),
)
def test_every_span_is_the_member_itself(
    servers: dict[str, Any], indent: int | None, ascii_only: bool
) -> None:
    text = json.dumps(
        {"note": list(servers), "mcpServers": servers}, indent=indent, ensure_ascii=ascii_only
    )
    spans = member_spans(text, ("mcpServers",))
    assert set(spans) == set(servers)
    for key, (start, end) in spans.items():
        assert json.loads("{" + text[start:end] + "}") == {key: servers[key]}


def test_paths_through_arrays_and_missing_paths() -> None:
    text = '{"hooks": [1, {"a": {"b": 2}}]}'
    (start, end) = member_spans(text, ("hooks", 1))["a"]
    assert text[start:end] == '"a": {"b": 2}'
    assert member_spans(text, ("nope",)) == {}
    assert member_spans("not json", ()) == {}
