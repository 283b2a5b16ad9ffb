"""The PyYAML-free frontmatter reader agrees with yaml.safe_load wherever it answers."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from customtools._loading._frontmatter import _plain_mapping, parse_frontmatter

KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,12}", fullmatch=True)
VALUES = st.one_of(
    st.from_regex(r"[A-Za-z][ -~]{0,40}", fullmatch=True),
    st.sampled_from(["yes", "No", "on", "true", "null", "a: b", "x #c", "ends:", "Null"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=20),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=6))
def test_fast_reader_agrees_with_pyyaml(pairs: list[tuple[str, str]]) -> None:
    block = "\n".join(f"{key}: {value}" for key, value in pairs)
    fast = _plain_mapping(block)
    if fast is None:
        return  # left to PyYAML
    assert fast == yaml.safe_load(block) or (fast == {} and yaml.safe_load(block) is None)


def test_common_frontmatter_is_read_without_pyyaml() -> None:
    text = "---\nname: weather\ndescription: Looks up the forecast (it's cached).\n---\nbody\n"
    assert _plain_mapping("name: weather\ndescription: Looks up the forecast (it's cached).") == {
        "name": "weather",
        "description": "Looks up the forecast (it's cached).",
    }
    assert parse_frontmatter(text) == {
        "name": "weather",
        "description": "Looks up the forecast (it's cached).",
    }


def test_yaml_specific_forms_go_to_pyyaml() -> None:
    for block in [
        "on: push",
        "enabled: true",
        "count: 3",
        'name: "quoted"',
        "tags: [a, b]",
        "name: a: b",
        "name: x # comment",
        "name: x\nname: y",
        "nested:\n  key: value",
    ]:
        assert _plain_mapping(block) is None, block
    assert parse_frontmatter("---\non: push\ncount: 3\n---\n") == {"True": "push", "count": 3}
