"""Failure policy: raising, hanging and contract-breaking actions during lifecycle runs."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import anyio
import pytest

from customtools.actions import (
    REQUEST_PREPARE,
    ActionDispatcher,
    ActionFailedError,
    ActionResultError,
    ActionTimeoutError,
    Session,
)

pytestmark = pytest.mark.anyio

T = REQUEST_PREPARE


class Step:
    """A session plugin action that marks metadata[name] = True."""

    def __init__(self, name: str) -> None:
        self.name = name

    def get_actions(self, state):
        return [{"id": "mark", "trigger": T}]

    def execute_action(self, action_id, session, native_messages, params, context, state):
        return {"session_metadata": {self.name: True}}


class Raises:
    name = "raises"

    def get_actions(self, state):
        return [{"id": "boom", "trigger": T}]

    def execute_action(self, action_id, session, native_messages, params, context, state):
        raise KeyError("missing")


class HangsAsync:
    name = "hangs_async"

    def get_actions(self, state):
        return [{"id": "wait", "trigger": T}]

    async def execute_action(self, action_id, session, native_messages, params, context, state):
        await anyio.sleep_forever()


class HangsSync:
    name = "hangs_sync"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()

    def get_actions(self, state):
        return [{"id": "block", "trigger": T}]

    def execute_action(self, action_id, session, native_messages, params, context, state):
        self.release.wait(10)
        self.finished.set()
        return {"session_metadata": {"late": True}}


async def test_continue_records_failure_and_runs_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dispatcher = ActionDispatcher([Step("first"), Raises(), Step("last")])
    with caplog.at_level(logging.WARNING, logger="customtools.actions"):
        result = await dispatcher.run_lifecycle(T, Session(id="s"), {})
    assert result.session.metadata == {"first": True, "last": True}
    assert not result.ok
    [failure] = result.failures
    assert (failure.plugin, failure.action_id, failure.stage) == ("raises", "boom", "execute")
    assert failure.error == {"type": "KeyError", "message": "'missing'"}
    assert failure.timed_out is False
    assert isinstance(failure.exception, KeyError)
    assert "plugin 'raises', action 'boom' (execute) raised KeyError" in caplog.text


async def test_raise_policy_stops_at_the_first_failure() -> None:
    log: list[str] = []

    class Last(Step):
        kind = "session"  # *args hides the arity, so the kind is declared

        def execute_action(self, *args: Any) -> Any:
            log.append("last")
            return super().execute_action(*args)

    dispatcher = ActionDispatcher([Raises(), Last("last")], on_failure="raise")
    with pytest.raises(ActionFailedError, match=r"plugin 'raises', action 'boom'") as info:
        await dispatcher.run_lifecycle(T, Session(id="s"), {})
    assert log == []
    assert info.value.plugin == "raises"
    assert info.value.stage == "execute"
    assert isinstance(info.value.__cause__, KeyError)


async def test_async_action_past_the_timeout_is_cancelled_and_reported() -> None:
    dispatcher = ActionDispatcher([HangsAsync(), Step("after")], timeout=0.05)
    result = await dispatcher.run_lifecycle(T, Session(id="s"), {})
    assert result.session.metadata == {"after": True}
    [failure] = result.failures
    assert failure.timed_out is True
    assert failure.error is not None
    assert failure.error["type"] == "ActionTimeoutError"
    assert (
        "plugin 'hangs_async', action 'wait' (execute) did not finish within 0.05 s"
        in (failure.error["message"])
    )


async def test_timeout_with_raise_policy_is_an_action_timeout_error() -> None:
    dispatcher = ActionDispatcher([HangsAsync()], timeout=0.05, on_failure="raise")
    with pytest.raises(ActionTimeoutError) as info:
        await dispatcher.run_lifecycle(T, Session(id="s"), {})
    assert isinstance(info.value, TimeoutError)
    assert info.value.action_id == "wait"


async def test_sync_action_past_the_timeout_is_abandoned_and_its_result_discarded() -> None:
    hang = HangsSync()
    dispatcher = ActionDispatcher([hang, Step("after")], timeout=0.05)
    try:
        result = await dispatcher.run_lifecycle(T, Session(id="s"), {})
    finally:
        hang.release.set()
    assert result.failures[0].timed_out is True
    assert result.session.metadata == {"after": True}
    # the abandoned thread still finishes in the background; its value is ignored
    await anyio.to_thread.run_sync(hang.finished.wait, 10)
    assert hang.finished.is_set()
    assert "late" not in result.session.metadata


async def test_caller_cancellation_is_not_swallowed() -> None:
    reached: list[str] = []
    dispatcher = ActionDispatcher([HangsAsync()], timeout=None)
    with anyio.move_on_after(0.05) as scope:
        await dispatcher.run_lifecycle(T, Session(id="s"), {})
        reached.append("after")
    assert scope.cancelled_caught
    assert reached == []


async def test_session_plugin_returning_ui_effects_is_a_contract_error() -> None:
    class Overreach:
        name = "overreach"

        def get_actions(self, state):
            return [{"id": "reload", "trigger": T}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            return {"ui_effects": [{"type": "reload"}], "session_metadata": {"x": 1}}

    result = await ActionDispatcher([Overreach()]).run_lifecycle(T, Session(id="s"), {})
    [failure] = result.failures
    assert isinstance(failure.exception, ActionResultError)
    assert failure.error is not None
    assert failure.error["message"] == (
        "plugin 'overreach', action 'reload': 'ui_effects' is application-level; a session"
        " plugin returns only 'native_messages' and/or 'session_metadata' (move the action"
        " to an application plugin)"
    )
    assert result.session.metadata == {}  # nothing of the rejected result was applied


async def test_failed_init_skips_the_plugin_for_that_run() -> None:
    class BadInit(Step):
        def init(self, config, state):
            raise RuntimeError("no credentials")

    result = await ActionDispatcher([BadInit("bad"), Step("good")]).run_lifecycle(
        T, Session(id="s"), {}
    )
    assert result.session.metadata == {"good": True}
    [failure] = result.failures
    assert (failure.plugin, failure.stage, failure.action_id) == ("bad", "init", None)


async def test_init_returning_a_non_mapping_is_a_failure() -> None:
    class WrongInit(Step):
        def init(self, config, state):
            return ["not", "a", "mapping"]

    result = await ActionDispatcher([WrongInit("w")]).run_lifecycle(T, Session(id="s"), {})
    assert result.failures[0].error is not None
    assert result.failures[0].error["message"] == (
        "plugin 'w': init must return a state mapping or None, got list"
    )


async def test_failed_application_init_is_retried_on_the_next_run() -> None:
    attempts: list[int] = []

    class Flaky:
        name = "flaky"

        def init(self, app_config):
            attempts.append(1)
            if len(attempts) == 1:
                raise ConnectionError("try again")
            return {"ready": True}

        def get_actions(self, state):
            return [{"id": "a", "trigger": T}]

        def execute_action(self, app, action_id, params, context, state):
            return {"ready": state["ready"]}

    dispatcher = ActionDispatcher([Flaky()])
    first = await dispatcher.run_lifecycle(T, Session(id="s"), {})
    second = await dispatcher.run_lifecycle(T, Session(id="s"), {})
    assert first.failures[0].stage == "init"
    assert second.ok
    assert second.payload == {"ready": True}
    assert len(attempts) == 2


async def test_invalid_definition_during_a_run_is_a_get_actions_failure() -> None:
    class BadTrigger:
        name = "badtrigger"

        def get_actions(self, state):
            return [{"id": "a", "trigger": 5}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            return None

    result = await ActionDispatcher([BadTrigger(), Step("ok")]).run_lifecycle(
        T, Session(id="s"), {}
    )
    [failure] = result.failures
    assert failure.stage == "get_actions"
    assert failure.error is not None
    assert (
        "'trigger' must be a lifecycle name or a list of them, got int"
        in (failure.error["message"])
    )
    assert result.session.metadata == {"ok": True}


async def test_failing_codec_is_recorded_against_the_action() -> None:
    class Native:
        name = "native"

        def get_actions(self, state):
            return [{"id": "n", "trigger": T}]

        def execute_action(self, action_id, session, native_messages, params, context, state):
            return {"native_messages": []}

    class BrokenCodec:
        def to_native(self, session, config):
            return []

        def apply_native(self, session, native_messages, config):
            raise ValueError("cannot rebuild")

    dispatcher = ActionDispatcher([Native()], codec=BrokenCodec())
    result = await dispatcher.run_lifecycle(T, Session(id="s"), {})
    [failure] = result.failures
    assert (failure.plugin, failure.action_id) == ("native", "n")
    assert failure.error == {"type": "ValueError", "message": "cannot rebuild"}


async def test_failing_codec_to_native_is_recorded_and_the_run_goes_on() -> None:
    class Codec:
        def to_native(self, session, config):
            raise LookupError("no native history stored")

        def apply_native(self, session, native_messages, config):
            return session

    class App:
        name = "app"

        def get_actions(self, state):
            return [{"id": "a", "trigger": T}]

        def execute_action(self, app, action_id, params, context, state):
            return {"display": {"body": "fine"}}

    dispatcher = ActionDispatcher([Step("needs_native"), App()], codec=Codec())
    result = await dispatcher.run_lifecycle(T, Session(id="s"), {})
    [failure] = result.failures
    assert (failure.plugin, failure.stage) == ("needs_native", "execute")
    assert failure.error == {"type": "LookupError", "message": "no native history stored"}
    assert [d.body for d in result.displays] == ["fine"]


# -- hooks raising BaseException (adversarial review H1) and unreadable exceptions (M5) ------


class CustomBase(BaseException):
    """Like pytest's OutcomeException: a BaseException that is not an Exception."""


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ is broken too")


ESCAPES = {
    "system-exit": lambda: SystemExit(2),
    "generator-exit": GeneratorExit,
    "own-cancelled": asyncio.CancelledError,
    "custom-base": lambda: CustomBase("outcome"),
    "bad-str": BadStr,
}


def raising_plugin(make: Any, *, is_async: bool, stage: str) -> Any:
    """A session plugin whose ``stage`` hook raises ``make()``, sync or async."""

    def fail() -> None:
        raise make()

    class Plugin:
        name = "escapes"
        kind = "session"

        if stage == "init":
            if is_async:

                async def init(self, config, state):
                    fail()
            else:

                def init(self, config, state):
                    fail()

        if stage == "get_actions" and is_async:

            async def get_actions(self, state):
                fail()
        elif stage == "get_actions":

            def get_actions(self, state):
                fail()
        else:

            def get_actions(self, state):
                return [{"id": "go", "trigger": T}]

        if is_async:

            async def execute_action(self, *args):
                fail()
        else:

            def execute_action(self, *args):
                fail()

    return Plugin()


@pytest.mark.parametrize("stage", ["init", "get_actions", "execute"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("escape", sorted(ESCAPES))
async def test_any_exception_from_a_hook_is_a_recorded_failure(
    escape: str, is_async: bool, stage: str
) -> None:
    make = ESCAPES[escape]
    plugin = raising_plugin(make, is_async=is_async, stage=stage)
    result = await ActionDispatcher([plugin, Step("after")]).run_lifecycle(T, Session(id="s"), {})
    assert result.session.metadata == {"after": True}  # the run went on
    [failure] = result.failures
    assert failure.stage == stage
    assert type(failure.exception) is type(make())
    assert failure.error is not None
    assert failure.error["type"] == type(make()).__name__
    if escape == "bad-str":
        assert failure.error["message"] == "BadStr (its message could not be read: __str__ failed)"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_system_exit_under_the_raise_policy_is_an_action_failed_error(
    is_async: bool,
) -> None:
    plugin = raising_plugin(lambda: SystemExit(2), is_async=is_async, stage="execute")
    dispatcher = ActionDispatcher([plugin], on_failure="raise")
    with pytest.raises(ActionFailedError, match=r"\(execute\) raised SystemExit: 2") as info:
        await dispatcher.run_lifecycle(T, Session(id="s"), {})
    assert isinstance(info.value.__cause__, SystemExit)
    with pytest.raises(ActionFailedError) as manual:
        await ActionDispatcher([plugin]).execute_action("escapes", "go", Session(id="s"), {})
    assert manual.value.error == {"type": "SystemExit", "message": "2"}


async def test_unreadable_exception_is_logged_and_raised_with_a_safe_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    plugin = raising_plugin(BadStr, is_async=False, stage="execute")
    with caplog.at_level(logging.WARNING, logger="customtools.actions"):
        await ActionDispatcher([plugin]).run_lifecycle(T, Session(id="s"), {})
    assert "raised BadStr (its message could not be read: __str__ failed)" in caplog.text
    with pytest.raises(ActionFailedError, match="could not be read"):
        await ActionDispatcher([plugin], on_failure="raise").run_lifecycle(T, Session(id="s"), {})


async def test_caller_cancellation_propagates_through_a_sync_hook() -> None:
    hang = HangsSync()
    reached: list[str] = []
    try:
        with anyio.move_on_after(0.05) as scope:
            await ActionDispatcher([hang], timeout=None).run_lifecycle(T, Session(id="s"), {})
            reached.append("after")
    finally:
        hang.release.set()
    assert scope.cancelled_caught
    assert reached == []


async def test_caller_cancellation_wins_even_when_the_hook_swallows_it() -> None:
    class Swallows:
        name = "swallows"

        def get_actions(self, state):
            return [{"id": "a", "trigger": T}]

        async def execute_action(self, action_id, session, native_messages, params, context, state):
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                return {"session_metadata": {"swallowed": True}}

    reached: list[str] = []
    with anyio.move_on_after(0.05) as scope:
        await ActionDispatcher([Swallows(), Step("later")], timeout=None).run_lifecycle(
            T, Session(id="s"), {}
        )
        reached.append("after")
    assert scope.cancelled_caught
    assert reached == []
