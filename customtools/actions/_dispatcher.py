"""The dispatcher: runs lifecycle-triggered and manual actions and merges their results.

Order of a lifecycle run: application plugins in registration order, then session plugins in
resolved order (registration order unless a ``resolve_session_plugins`` hook says otherwise);
within a plugin, the order of ``get_actions``. Each action sees the session as left by the
actions before it.

Failure policy: every hook call is bounded by ``timeout`` (seconds, default 30, ``None`` for
none). With ``on_failure="continue"`` (the default) a hook that raises, times out or returns
a result breaking its kind's contract is recorded as a failed :class:`ActionOutcome` in
``DispatchResult.failures`` and logged on the ``customtools.actions`` logger; its changes are
not applied and the run goes on (a failed ``init``/``get_actions`` skips that plugin). With
``on_failure="raise"`` the run stops at the first failure with :class:`ActionFailedError`
(:class:`ActionTimeoutError` for a timeout). Manual runs always raise. Cancellation of the
caller's scope is never swallowed.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import anyio

from customtools.actions._context import _Template, _template, serialize_error
from customtools.actions._definition import ActionDefinition, check_params, parse_actions
from customtools.actions._errors import (
    ActionError,
    ActionFailedError,
    ActionNotFoundError,
    ActionResultError,
    ActionTimeoutError,
)
from customtools.actions._invoke import HookTimeoutError, IdentityCodec, NativeCodec, call_hook
from customtools.actions._lifecycle import TRIGGER_APPLICATION, TRIGGER_CORE, TRIGGER_MANUAL
from customtools.actions._merge import FAILED, ListedAction, RunState
from customtools.actions._plugins import PluginRegistry, RegisteredPlugin
from customtools.actions._results import (
    ActionOutcome,
    ApplicationResult,
    DispatchResult,
    SessionResult,
)
from customtools.actions._session import SessionLike

__all__ = ["ActionDispatcher"]

logger = logging.getLogger("customtools.actions")
S = TypeVar("S", bound=SessionLike)
Stage = Literal["init", "get_actions", "execute"]
SessionPluginResolver = Callable[
    [Sequence[RegisteredPlugin], Mapping[str, Any]], Sequence[RegisteredPlugin]
]


class ActionDispatcher:
    """Runs plugin actions for lifecycle events and manual requests.

    Args:
        plugins: a :class:`PluginRegistry` or plugins to register in order.
        app: the application object given to application plugins and to ``context['app']``;
            ``None`` runs in core-only mode (no application context layer).
        app_config: passed to each application plugin's ``init`` (once, before first use)
            and exposed as ``context['base_config']``.
        core: the object exposed as ``context['core']`` (defaults to this dispatcher).
        session_asset_store: exposed as ``context['session_asset_store']`` with an app.
        timeout: seconds each hook call may take (``None``: unbounded).
        on_failure: ``"continue"`` (record and go on) or ``"raise"`` for lifecycle runs.
        codec: maps sessions to native messages and back (default: identity).
        resolve_session_plugins: ``(plugins, config) -> plugins`` choosing and ordering the
            session plugins active for a config (default: all, in registration order).
    """

    def __init__(
        self,
        plugins: PluginRegistry | Iterable[Any] = (),
        *,
        app: Any = None,
        app_config: Mapping[str, Any] | None = None,
        core: Any = None,
        session_asset_store: Any = None,
        timeout: float | None = 30.0,
        on_failure: Literal["continue", "raise"] = "continue",
        codec: NativeCodec | None = None,
        resolve_session_plugins: SessionPluginResolver | None = None,
    ) -> None:
        if on_failure not in ("continue", "raise"):
            raise ValueError(f"on_failure must be 'continue' or 'raise', got {on_failure!r}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive seconds or None, got {timeout!r}")
        self.registry = plugins if isinstance(plugins, PluginRegistry) else PluginRegistry(plugins)
        self.app = app
        self.app_config: dict[str, Any] = dict(app_config or {})
        self.core = core if core is not None else self
        self.session_asset_store = session_asset_store
        self.timeout = timeout
        self.on_failure = on_failure
        self.codec: NativeCodec = codec if codec is not None else IdentityCodec()
        self._resolve = resolve_session_plugins
        self._states: dict[str, dict[str, Any]] = {}
        self._app_ready: set[str] = set()
        self._init_lock = anyio.Lock()

    async def run_lifecycle(
        self,
        name: str,
        session: S,
        config: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        *,
        trigger_source: str | None = None,
        original_session: SessionLike | Mapping[str, Any] | None = None,
        previous_agent_id: str | None = None,
        next_agent_id: str | None = None,
        error: BaseException | Mapping[str, Any] | None = None,
        request_context: Mapping[str, Any] | None = None,
        request_runtime: Any = None,
        objects: Mapping[str, Any] | None = None,
        final_messages: Sequence[Mapping[str, Any]] | None = None,
    ) -> DispatchResult[S]:
        """Run every action whose ``trigger`` includes ``name`` and merge the results.

        Lifecycle actions get ``params={"session_id": session.id}``. Any non-empty name
        works; the standard ones are exported as constants.

        Args:
            name: the lifecycle name.
            session: the session to work on (never mutated; see ``result.session``).
            config: the effective config (``context['config']``; session plugins' ``init``).
            context: additive caller data (JSON); builder-owned keys are dropped with a
                :class:`ReservedContextKeyWarning`.
            trigger_source: defaults to ``"application"`` with an app, else ``"core"``.
            original_session: fork source (``session_fork``).
            previous_agent_id: agent-switch source.
            next_agent_id: agent-switch destination.
            error: the failure of a ``request_error`` run.
            request_context: request-initialized plugin data (JSON).
            request_runtime: live request helpers.
            objects: additive live objects (``terminal``, ``server``, ...).
            final_messages: the turn's final messages (``response_finalize``).

        Raises:
            ValueError: for an empty lifecycle name.
            ContextError: when context data is not JSON-serializable.
            ActionFailedError: on the first failure when ``on_failure="raise"``.
        """
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"lifecycle name must be a non-empty string, got {name!r}")
        source = trigger_source or (TRIGGER_APPLICATION if self.app is not None else TRIGGER_CORE)
        template = self._template(
            config,
            source,
            context,
            objects,
            request_context,
            request_runtime,
            lifecycle=name,
            original_session=original_session,
            previous_agent_id=previous_agent_id,
            next_agent_id=next_agent_id,
            error=error,
        )
        run = RunState(session, template, final_messages)
        raise_on_failure = self.on_failure == "raise"
        for record in self._ordered(config):
            state = await self._prepare(record, config, run, raise_on_failure)
            if state is None:
                continue
            actions = await self._actions(record, state, run, raise_on_failure)
            for action in actions or ():
                if action.triggered_by(name):
                    params = {"session_id": run.session.id}
                    await self._execute(
                        record, action, params, config, state, run, name, raise_on_failure
                    )
        return run.finish(session, name, source)

    async def execute_action(
        self,
        plugin: str,
        action_id: str,
        session: S,
        config: Mapping[str, Any],
        params: Mapping[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
        *,
        trigger_source: str = TRIGGER_MANUAL,
        request_context: Mapping[str, Any] | None = None,
        request_runtime: Any = None,
        objects: Mapping[str, Any] | None = None,
    ) -> DispatchResult[S]:
        """Run one action by hand (any action, triggered or not) through the same pipeline.

        ``params`` are checked against the action's ``inputs`` first.

        Raises:
            ActionNotFoundError: no such plugin, or it offers no such action.
            ActionInputError: ``params`` miss a required input or have a wrong type.
            ContextError: when context data is not JSON-serializable.
            ActionFailedError: the action raised, timed out or broke its result contract.
        """
        record = self.registry.get(plugin)
        template = self._template(
            config, trigger_source, context, objects, request_context, request_runtime
        )
        run = RunState(session, template, None)
        state = await self._prepare(record, config, run, True)
        actions = await self._actions(record, state or {}, run, True)
        action = next((a for a in actions or () if a.id == action_id), None)
        if action is None:
            offered = ", ".join(a.id for a in actions or ()) or "none"
            raise ActionNotFoundError(
                f"plugin {plugin!r} has no action {action_id!r} (actions: {offered})"
            )
        check_params(action, params or {}, plugin=plugin)
        await self._execute(
            record, action, dict(params or {}), config, state or {}, run, None, True
        )
        return run.finish(session, None, trigger_source)

    async def list_actions(
        self, config: Mapping[str, Any], *, manual_only: bool = False
    ) -> tuple[ListedAction, ...]:
        """Return the actions every plugin offers for ``config``, in run order.

        A plugin whose ``init`` or ``get_actions`` fails is skipped and logged (or raises
        :class:`ActionFailedError` when ``on_failure="raise"``).
        """
        run = RunState(None, self._template(config, TRIGGER_MANUAL, None, None, None, None), None)
        out: list[ListedAction] = []
        for record in self._ordered(config):
            state = await self._prepare(record, config, run, self.on_failure == "raise")
            if state is None:
                continue
            for action in await self._actions(record, state, run, self.on_failure == "raise") or ():
                if not manual_only or action.is_manual:
                    out.append(ListedAction(plugin=record.name, kind=record.kind, action=action))
        return tuple(out)

    # -- internals ---------------------------------------------------------------------

    def _template(
        self,
        config: Mapping[str, Any],
        source: str,
        extra: Mapping[str, Any] | None,
        objects: Mapping[str, Any] | None,
        request_context: Mapping[str, Any] | None,
        request_runtime: Any,
        **owned: Any,
    ) -> _Template:
        return _template(
            config=config,
            trigger_source=source,
            core=self.core,
            app=self.app,
            base_config=self.app_config,
            session_asset_store=self.session_asset_store,
            request_context=request_context,
            request_runtime=request_runtime,
            extra=extra,
            objects=objects,
            **owned,
        )

    def _ordered(self, config: Mapping[str, Any]) -> list[RegisteredPlugin]:
        session_plugins: Sequence[RegisteredPlugin] = self.registry.session_plugins
        if self._resolve is not None:
            session_plugins = self._resolve(session_plugins, config)
        return [*self.registry.application_plugins, *session_plugins]

    async def _prepare(
        self, record: RegisteredPlugin, config: Mapping[str, Any], run: RunState, raise_: bool
    ) -> dict[str, Any] | None:
        """Return the plugin's state, calling ``init`` as its kind requires (None on failure)."""
        init = getattr(record.plugin, "init", None)
        if record.kind == "application":
            async with self._init_lock:
                if record.name not in self._app_ready:
                    if init is not None:
                        args: tuple[Any, ...] = (dict(self.app_config),)
                        state = await self._guard(record, "init", None, init, args, run, raise_)
                        if not isinstance(state, Mapping):
                            return None
                        self._states[record.name] = dict(state)
                    self._app_ready.add(record.name)
            return self._states.setdefault(record.name, {})
        previous = self._states.get(record.name, {})
        if init is None:
            return self._states.setdefault(record.name, {})
        state = await self._guard(record, "init", None, init, (dict(config), previous), run, raise_)
        if not isinstance(state, Mapping):
            return None
        self._states[record.name] = dict(state)
        return self._states[record.name]

    async def _actions(
        self, record: RegisteredPlugin, state: dict[str, Any], run: RunState, raise_: bool
    ) -> tuple[ActionDefinition, ...] | None:
        raw = await self._guard(
            record, "get_actions", None, record.plugin.get_actions, (state,), run, raise_
        )
        return raw if isinstance(raw, tuple) else None

    async def _guard(
        self,
        record: RegisteredPlugin,
        stage: Stage,
        action_id: str | None,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        run: RunState,
        raise_: bool,
        check: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Call a hook and validate its value; on failure record it and return ``FAILED``."""
        try:
            value = await call_hook(fn, *args, limit=self.timeout)
            if stage == "get_actions":
                return parse_actions(value, plugin=record.name)
            if stage == "init" and value is not None and not isinstance(value, Mapping):
                raise ActionResultError(
                    f"plugin {record.name!r}: init must return a state mapping or None,"
                    f" got {type(value).__name__}",
                    plugin=record.name,
                )
            if stage == "init" and value is None:
                return dict(args[-1]) if record.kind == "session" else {}
            return check(value) if check is not None else value
        except HookTimeoutError as exc:
            self._failed(record, stage, action_id, exc, run, raise_, timed_out=True)
        except Exception as exc:
            self._failed(record, stage, action_id, exc, run, raise_, timed_out=False)
        return FAILED

    def _failed(
        self,
        record: RegisteredPlugin,
        stage: Stage,
        action_id: str | None,
        exc: Exception,
        run: RunState,
        raise_: bool,
        *,
        timed_out: bool,
    ) -> None:
        what = f"plugin {record.name!r}" + (f", action {action_id!r}" if action_id else "")
        where = f"{what} ({stage})"
        if isinstance(exc, ActionError):
            message = str(exc)
        elif timed_out:
            message = f"{where} {exc}"
        else:
            message = f"{where} raised {type(exc).__name__}: {exc}"
        error = serialize_error(exc)
        if timed_out:
            error = {"type": "ActionTimeoutError", "message": message}
        run.outcomes.append(
            ActionOutcome(
                plugin=record.name,
                kind=record.kind,
                action_id=action_id,
                stage=stage,
                ok=False,
                error=error,
                timed_out=timed_out,
                exception=exc,
            )
        )
        if raise_:
            cls = ActionTimeoutError if timed_out else ActionFailedError
            raise cls(
                message, plugin=record.name, action_id=action_id, stage=stage, error=error
            ) from exc
        logger.warning("lifecycle action failed: %s", message)

    async def _execute(
        self,
        record: RegisteredPlugin,
        action: ActionDefinition,
        params: dict[str, Any],
        config: Mapping[str, Any],
        state: dict[str, Any],
        run: RunState,
        lifecycle: str | None,
        raise_: bool,
    ) -> None:
        check: Callable[[Any], Any]
        try:  # host code (session serialization, codec) may fail too: same policy
            context = run.template.render(run.session, final_messages=run.final_messages)
            if record.kind == "application":
                args: tuple[Any, ...] = (self.app, action.id, params, context, state)
                check = functools.partial(
                    ApplicationResult.from_value, plugin=record.name, action_id=action.id
                )
            else:
                native = self.codec.to_native(run.session, config)
                args = (action.id, run.session, native, params, context, state)
                check = functools.partial(
                    SessionResult.from_value,
                    plugin=record.name,
                    action_id=action.id,
                    lifecycle=lifecycle,
                )
        except Exception as exc:
            self._failed(record, "execute", action.id, exc, run, raise_, timed_out=False)
            return
        fn = record.plugin.execute_action
        value = await self._guard(record, "execute", action.id, fn, args, run, raise_, check)
        if value is FAILED:
            return
        result: ApplicationResult | SessionResult = value
        try:
            run.apply(result, self.codec, config)
        except Exception as exc:  # a host codec or session type failing on this result
            self._failed(record, "execute", action.id, exc, run, raise_, timed_out=False)
            return
        run.outcomes.append(
            ActionOutcome(
                plugin=record.name, kind=record.kind, action_id=action.id, stage="execute",
                ok=True, result=result,
            )
        )  # fmt: skip
