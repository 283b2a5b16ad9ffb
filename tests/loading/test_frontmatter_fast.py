"""The PyYAML-free frontmatter reader agrees with yaml.safe_load wherever it answers."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from customtools._loading._frontmatter import _plain_mapping, parse_frontmatter

# What YAML cares about in a plain `key: value` line: indicators at the start and inside,
# separators, comments, line breaks PyYAML knows and Python's splitlines() also knows,
# characters PyYAML refuses, YAML 1.1 words, numbers, dates, and plain unicode.
SPECIAL = [
    ":",
    ": ",
    ":\t",
    " #",
    "\t#",
    "#",
    "\t",
    " ",
    "  ",
    "'",
    '"',
    "&",
    "*",
    "!",
    "%",
    "@",
    "`",
    "|",
    ">",
    "[",
    "]",
    "{",
    "}",
    ",",
    "-",
    "- ",
    "?",
    "? ",
    "=",
    "<<",
    "~",
    ".",
    "\\",
    "\r",
    "\x85",
    "\u2028",
    "\u2029",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x00",
    "\x01",
    "\x7f",
    "\x9f",
    "\ufeff",
    "\ufffe",
    "\ud800",
    "\xa0",
    "\u3000",
    "é",
    "ß",
    "漢",
    "😀",
    "\U000e0041",
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "n",
    "true",
    "False",
    "null",
    "Null",
    "NULL",
    "nan",
    "inf",
    ".inf",
    ".NaN",
    "0",
    "1",
    "-1",
    "+1",
    "0x1f",
    "0o7",
    "017",
    "1_000",
    "1.5",
    "1e3",
    "1:20",
    "2024-01-01",
    "2001-12-14t21:59:43.10-05:00",
    "...",
    "---",
]
WORDS = ["a", "Zq", "k9", "x_y", "b-c", "E1", "name", "hello world", "t 1", "Q"]
FRAGMENT = st.sampled_from(SPECIAL + WORDS)
KEYS = [
    *["name", "description", "a", "_x", "k-1", "Z9", "on", "Yes", "NO", "null", "true", "y"],
    *["Nan", "key ", "k:", "a b", "-a", "?a", "&a", "*a", "!a", "'a'", "[a]", "a#", "é"],
    *["k" * n for n in (127, 128, 129, 1024, 1025)],
]
KEY = st.one_of(st.sampled_from(KEYS), st.lists(FRAGMENT, min_size=1, max_size=3).map("".join))
VALUE = st.one_of(
    st.lists(FRAGMENT, max_size=5).map("".join),
    st.builds(str.__add__, st.sampled_from("aZky"), st.lists(FRAGMENT, max_size=5).map("".join)),
)
SEPARATOR = st.sampled_from([": ", ":\t", ":  ", ": \t", ":", " : ", ":\u3000"])
LINE_END = st.sampled_from(["\n", "\r\n", "\n\n", " \n", "\t\n", "\n  \n", "\n\t\n", "\r"])


def _agrees(block: str) -> None:
    fast = _plain_mapping(block)
    if fast is None:
        return  # left to PyYAML
    try:
        slow = yaml.safe_load(block)
    except yaml.YAMLError as exc:  # pragma: no cover - that is the failure we test for
        raise AssertionError(
            f"the fast reader accepted {block!r}, PyYAML refused it: {exc}"
        ) from exc
    assert fast == (slow if slow is not None else {}), block


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(st.lists(st.tuples(KEY, SEPARATOR, VALUE, LINE_END), max_size=5))
@example([("name", ": ", "abc\x0c", "\n")])
@example([("name", ": ", "a\x85b", "\n")])
@example([("k" * 1025, ": ", "v", "\n")])
@example([("name", ": ", "a\x01", "\n")])
@example([("name", ": ", "abc\ufeff", "\n")])
def test_fast_reader_agrees_with_pyyaml(lines: list[tuple[str, str, str, str]]) -> None:
    _agrees("".join(key + sep + value + end for key, sep, value, end in lines))


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(st.sampled_from([*SPECIAL, "a", "b", "k", "\n", "\nk: "]), max_size=12))
def test_fast_reader_agrees_with_pyyaml_on_any_text(parts: list[str]) -> None:
    _agrees("name: a" + "".join(parts))


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
        "name: a\x0cb",
        "name: abc\x0c",
        "k" * 129 + ": v",
        "name: caf\xe9\xa0",
    ]:
        assert _plain_mapping(block) is None, block
    assert parse_frontmatter("---\non: push\ncount: 3\n---\n") == {"True": "push", "count": 3}
