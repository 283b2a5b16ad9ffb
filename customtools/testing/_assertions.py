"""Assertion helpers for tool results: :func:`assert_ok`, :func:`assert_error`,
:func:`assert_text`, :func:`assert_cancelled`.

Each accepts a :class:`~customtools.testing.ToolCall` or a plain
:class:`~customtools.ToolResult`, returns it unchanged when the check passes (so checks chain),
and raises :class:`AssertionError` otherwise, with a message that shows what the tool actually
returned: its text, its details and, for a recorded call, its updates. They are plain functions
with no pytest dependency, so they work under any test runner.
"""

from __future__ import annotations

import pprint
import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

from customtools._content import ToolResult
from customtools.testing._call import ToolCall

__all__ = ["assert_cancelled", "assert_error", "assert_ok", "assert_text"]

R = TypeVar("R", ToolCall, ToolResult)

_MAX_SHOWN = 2000


def _clip(text: str) -> str:
    if len(text) <= _MAX_SHOWN:
        return text
    return f"{text[:_MAX_SHOWN]}... [{len(text) - _MAX_SHOWN} more characters]"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) or prefix + '""'


def _unpack(outcome: ToolCall | ToolResult, helper: str) -> tuple[ToolResult, ToolCall | None]:
    if isinstance(outcome, ToolCall):
        return outcome.result, outcome
    if isinstance(outcome, ToolResult):
        return outcome, None
    raise TypeError(
        f"{helper}() needs a ToolCall or a ToolResult, got {type(outcome).__name__};"
        " pass what pack.call(...) returned"
    )


def describe_outcome(outcome: ToolCall | ToolResult) -> str:
    """A multi-line account of a result (and a call's updates) for failure messages."""
    result, call = _unpack(outcome, "describe_outcome")
    lines = [f"  is_error: {result.is_error}", "  text:", _indent(_clip(result.text))]
    others = [block.type for block in result.content if block.type != "text"]
    if others:
        lines.append(f"  other content: {', '.join(others)}")
    if result.details is not None:
        lines += ["  details:", _indent(_clip(pprint.pformat(result.details, width=88)))]
    if result.structured_content is not None:
        shown = _clip(pprint.pformat(result.structured_content, width=88))
        lines += ["  structured_content:", _indent(shown)]
    if call is not None:
        total = len(call.updates)
        lines.append(f"  updates: {total}" + (" (the last 5 shown)" if total > 5 else ""))
        first = max(total - 5, 0)
        for number, update in enumerate(call.updates[first:], first + 1):
            lines.append(f"    [{number}] {_clip(update.text)!r}")
        if call.aborted_by:
            lines.append(f"  aborted by the test {call.aborted_by}")
    return "\n".join(lines)


def _who(call: ToolCall | None) -> str:
    return f"tool {call.tool_name!r}" if call is not None else "the tool"


def _failed(outcome: ToolCall | ToolResult, message: str) -> AssertionError:
    return AssertionError(f"{message}\n{describe_outcome(outcome)}")


def _check_match(
    outcome: ToolCall | ToolResult, text: str, match: str | re.Pattern[str] | None, what: str
) -> None:
    __tracebackhide__ = True
    if match is not None and not _search(match, text):
        raise _failed(outcome, f"{what} does not match {_pattern_text(match)!r}:")


def assert_ok(outcome: R) -> R:
    """Assert the call succeeded (``is_error`` is false).

    Returns:
        ``outcome``, unchanged.

    Raises:
        AssertionError: the result is an error result; the message shows its text and details.
    """
    __tracebackhide__ = True
    result, call = _unpack(outcome, "assert_ok")
    if result.is_error:
        raise _failed(outcome, f"{_who(call)} returned an error result, expected success:")
    return outcome


def _search(pattern: str | re.Pattern[str], text: str) -> bool:
    return re.search(pattern, text) is not None


def _pattern_text(pattern: str | re.Pattern[str]) -> str:
    return pattern.pattern if isinstance(pattern, re.Pattern) else pattern


def assert_error(outcome: R, match: str | re.Pattern[str] | None = None) -> R:
    """Assert the call failed (``is_error`` is true), optionally with matching text.

    Args:
        outcome: a :class:`ToolCall` or :class:`~customtools.ToolResult`.
        match: a regular expression that must be found (``re.search``) in the result text.

    Returns:
        ``outcome``, unchanged.

    Raises:
        AssertionError: the result is not an error, or its text does not match.
    """
    __tracebackhide__ = True
    result, call = _unpack(outcome, "assert_error")
    if not result.is_error:
        raise _failed(outcome, f"{_who(call)} succeeded, expected an error result:")
    _check_match(outcome, result.text, match, f"the error text of {_who(call)}")
    return outcome


def assert_text(
    outcome: R,
    contains: str | Iterable[str] | None = None,
    *,
    match: str | re.Pattern[str] | None = None,
) -> R:
    """Assert the result text contains some substrings and/or matches a regular expression.

    Success or failure is not checked; combine with :func:`assert_ok` when it matters.

    Args:
        outcome: a :class:`ToolCall` or :class:`~customtools.ToolResult`.
        contains: a substring, or several, each of which must occur in the text.
        match: a regular expression that must be found (``re.search``) in the text.

    Returns:
        ``outcome``, unchanged.

    Raises:
        AssertionError: a substring is missing or the pattern is not found; every missing
            substring is named.
    """
    __tracebackhide__ = True
    result, call = _unpack(outcome, "assert_text")
    if contains is None and match is None:
        raise TypeError("assert_text() needs contains=... or match=...")
    wanted = [contains] if isinstance(contains, str) else list(contains or ())
    missing = [piece for piece in wanted if piece not in result.text]
    problems = [f"it does not contain {piece!r}" for piece in missing]
    if match is not None and not _search(match, result.text):
        problems.append(f"it does not match {_pattern_text(match)!r}")
    if problems:
        raise _failed(outcome, f"unexpected text from {_who(call)}: {'; '.join(problems)}")
    return outcome


def assert_cancelled(
    outcome: R,
    match: str | re.Pattern[str] | None = None,
    *,
    timed_out: bool | None = None,
) -> R:
    """Assert the call was cancelled: aborted through its signal, or timed out.

    Args:
        outcome: a :class:`ToolCall` or :class:`~customtools.ToolResult`.
        match: a regular expression that must be found in the result text (which includes
            the abort reason).
        timed_out: ``True`` to require a timeout, ``False`` to require an abort that was not
            a timeout, ``None`` for either.

    Returns:
        ``outcome``, unchanged.

    Raises:
        AssertionError: the result is not the adapter's cancelled result, or it does not
            match.
    """
    __tracebackhide__ = True
    result, call = _unpack(outcome, "assert_cancelled")
    details = result.details if isinstance(result.details, Mapping) else {}
    if not (result.is_error and details.get("cancelled") is True):
        raise _failed(
            outcome,
            f"{_who(call)} was not cancelled (no error result with details['cancelled'] == True):",
        )
    if timed_out is not None and bool(details.get("timed_out")) is not timed_out:
        expected = "a timeout" if timed_out else "an abort, not a timeout"
        raise _failed(outcome, f"{_who(call)} was cancelled, but expected {expected}:")
    _check_match(outcome, result.text, match, f"the cancellation text of {_who(call)}")
    return outcome
