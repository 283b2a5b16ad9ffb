"""The safe formatter and the JSON Pointer helper: text from hostile objects never raises."""

from __future__ import annotations

import pytest

from customtools._format import describe_exception, escape_control, safe_repr, safe_str
from customtools._jsonpointer import escape_token, format_pointer, unescape_token


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("boom")


class StrNotText(Exception):
    def __str__(self) -> str:
        return 3  # type: ignore[return-value]


class ReprRaises:
    def __repr__(self) -> str:
        raise RuntimeError("boom")


@pytest.mark.parametrize("exc", [StrRaises(), StrNotText()])
def test_an_unprintable_exception_is_described_by_its_type(exc: BaseException) -> None:
    text = describe_exception(exc)
    assert text.startswith(type(exc).__name__)
    assert "could not be read" in text


def test_control_characters_and_newlines_are_escaped() -> None:
    text = describe_exception(ValueError("a\x1b]0;title\x07\r\nsecond line"))
    assert text == "ValueError: a\\x1b]0;title\\x07"  # only the first line is kept
    assert escape_control("x\u2028y\x85") == "x\\u2028y\\x85"


def test_lone_surrogates_come_out_encodable() -> None:
    text = describe_exception(ValueError("bad \ud800 text"))
    text.encode("utf-8")
    assert "\\ud800" in text


def test_long_messages_are_cut() -> None:
    text = describe_exception(ValueError("x" * 10_000), limit=50)
    assert len(text) <= len("ValueError: ") + 50
    assert text.endswith("...")


def test_empty_message_says_so() -> None:
    assert describe_exception(KeyboardInterrupt()) == "KeyboardInterrupt with no message"


def test_safe_repr_and_str_never_raise() -> None:
    assert safe_repr(ReprRaises()) == "<ReprRaises object (repr failed)>"
    assert safe_str(StrRaises()) is None
    assert safe_str(StrNotText()) is None


@pytest.mark.parametrize(
    ("tokens", "pointer"),
    [((), ""), (("a", 0), "/a/0"), (("a/b", "~x"), "/a~1b/~0x"), (("",), "/")],
)
def test_pointer_formatting(tokens: tuple[str | int, ...], pointer: str) -> None:
    assert format_pointer(tokens) == pointer


def test_token_escaping_round_trips() -> None:
    for token in ["~1", "/~", "~01", "plain"]:
        assert unescape_token(escape_token(token)) == token


def test_invisible_and_bidi_characters_are_found() -> None:
    from customtools._format import find_invisible

    text = "ok\u200bhidden\u202eevil\U000e0041end"
    found = find_invisible(text)
    assert [(item.position, item.codepoint) for item in found] == [
        (2, "U+200B"),
        (9, "U+202E"),
        (14, "U+E0041"),
    ]
    assert found[0].name == "ZERO WIDTH SPACE"
    assert find_invisible("plain text, accents é and emoji 🙂") == []


def test_soft_hyphen_joiner_and_variation_selectors_are_found_but_emoji_are_not() -> None:
    from customtools._format import find_invisible

    found = find_invisible("a\u00adb\u034fc\ufe00d\U000e0101e")
    assert [item.codepoint for item in found] == ["U+00AD", "U+034F", "U+FE00", "U+E0101"]
    assert find_invisible("heart \u2764\ufe0f") == []
