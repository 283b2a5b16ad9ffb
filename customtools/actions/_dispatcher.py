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
(:class:`ActionTimeoutError` for a timeout). Manual runs always raise. A hook's fault is
contained whatever it raises (``SystemExit``, ``GeneratorExit``, its own ``CancelledError``
included; ``KeyboardInterrupt`` excepted); cancellation of the caller's scope is never
swallowed. Foreign exception text is read only through ``describe_exception``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import anyio

from customtools._format import describe_exception
from customtools.actions._context import (
    ContextTemplate,
    context_template,
    exception_message,
    serialize_error,
)
from customtools.actions._definition import ActionDefinition, check_params, parse_actions
from customtools.actions._errors import (
    ActionError,
    ActionFailedError,
    ActionNotFoundError,
    ActionResultError,
    ActionTimeoutError,
)
from customtools.actions._invoke import (
    HookEscapeError,
    HookTimeoutError,
    IdentityCodec,
    NativeCodec,
    call_hook,
)
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


@dataclass(frozen=True, slots=True)
class _Site:
    """Where a hook call happens: which plugin, which stage, which action (if any)."""

    plugin: RegisteredPlugin
    stage: Stage
    action_id: str | None = None

    def __str__(self) -> str:
        action = f", action {self.action_id!r}" if self.action_id else ""
        return f"plugin {self.plugin.name!r}{action} ({self.stage})"


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
            extra=context,
            objects=objects,
            request_context=request_context,
            request_runtime=request_runtime,
            lifecycle=name,
            original_session=original_session,
            previous_agent_id=previous_agent_id,
            next_agent_id=next_agent_id,
            error=error,
        )
        run = RunState(
            session,
            template,
            config=config,
            lifecycle=name,
            final=final_messages,
            raise_on_failure=self.on_failure == "raise",
        )
        for record in self._ordered(config):
            state = await self._prepare(run, record)
            if state is None:
                continue
            for action in await self._actions(run, record, state) or ():
                if action.triggered_by(name):
                    params = {"session_id": run.session.id}
                    await self._execute(run, record, action, params=params, state=state)
        return run.finish(session, trigger_source=source)

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
            config,
            trigger_source,
            extra=context,
            objects=objects,
            request_context=request_context,
            request_runtime=request_runtime,
        )
        run = RunState(session, template, config=config, raise_on_failure=True)
        state = await self._prepare(run, record) or {}
        actions = await self._actions(run, record, state) or ()
        action = next((a for a in actions if a.id == action_id), None)
        if action is None:
            offered = ", ".join(a.id for a in actions) or "none"
            raise ActionNotFoundError(
                f"plugin {plugin!r} has no action {action_id!r} (actions: {offered})"
            )
        check_params(action, params or {}, plugin=plugin)
        await self._execute(run, record, action, params=dict(params or {}), state=state)
        return run.finish(session, trigger_source=trigger_source)

    async def list_actions(
        self, config: Mapping[str, Any], *, manual_only: bool = False
    ) -> tuple[ListedAction, ...]:
        """Return the actions every plugin offers for ``config``, in run order.

        A plugin whose ``init`` or ``get_actions`` fails is skipped and logged (or raises
        :class:`ActionFailedError` when ``on_failure="raise"``).
        """
        template = self._template(config, TRIGGER_MANUAL)
        run = RunState(None, template, config=config, raise_on_failure=self.on_failure == "raise")
        out: list[ListedAction] = []
        for record in self._ordered(config):
            state = await self._prepare(run, record)
            if state is None:
                continue
            for action in await self._actions(run, record, state) or ():
                if not manual_only or action.is_manual:
                    out.append(ListedAction(plugin=record.name, kind=record.kind, action=action))
        return tuple(out)

    # -- internals ---------------------------------------------------------------------

    def _template(self, config: Mapping[str, Any], source: str, **given: Any) -> ContextTemplate:
        return context_template(
            config=config,
            trigger_source=source,
            core=self.core,
            app=self.app,
            base_config=self.app_config,
            session_asset_store=self.session_asset_store,
            **given,
        )

    def _ordered(self, config: Mapping[str, Any]) -> list[RegisteredPlugin]:
        session_plugins: Sequence[RegisteredPlugin] = self.registry.session_plugins
        if self._resolve is not None:
            session_plugins = self._resolve(session_plugins, config)
        return [*self.registry.application_plugins, *session_plugins]

    async def _prepare(self, run: RunState, record: RegisteredPlugin) -> dict[str, Any] | None:
        """Return the plugin's state, calling ``init`` as its kind requires (None on failure)."""
        init = getattr(record.plugin, "init", None)
        site = _Site(record, "init")
        if record.kind == "application":
            async with self._init_lock:
                if record.name not in self._app_ready:
                    if init is not None:
                        state = await self._guard(run, site, init, (dict(self.app_config),))
                        if not isinstance(state, Mapping):
                            return None
                        self._states[record.name] = dict(state)
                    self._app_ready.add(record.name)
            return self._states.setdefault(record.name, {})
        previous = self._states.get(record.name, {})
        if init is None:
            return self._states.setdefault(record.name, {})
        state = await self._guard(run, site, init, (dict(run.config), previous))
        if not isinstance(state, Mapping):
            return None
        self._states[record.name] = dict(state)
        return self._states[record.name]

    async def _actions(
        self, run: RunState, record: RegisteredPlugin, state: dict[str, Any]
    ) -> tuple[ActionDefinition, ...] | None:
        site = _Site(record, "get_actions")
        raw = await self._guard(run, site, record.plugin.get_actions, (state,))
        return raw if isinstance(raw, tuple) else None

    async def _guard(
        self,
        run: RunState,
        site: _Site,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        *,
        check: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Call a hook and validate its value; on failure record it and return ``FAILED``."""
        try:
            value = await call_hook(fn, *args, limit=self.timeout)
            return self._checked(site, value, args, check)
        except HookTimeoutError as exc:
            self._failed(run, site, exc, timed_out=True)
        except HookEscapeError as exc:
            self._failed(run, site, exc.original)
        except Exception as exc:
            self._failed(run, site, exc)
        return FAILED

    @staticmethod
    def _checked(
        site: _Site, value: Any, args: tuple[Any, ...], check: Callable[[Any], Any] | None
    ) -> Any:
        """``value`` as its stage's contract requires; raise when it breaks the contract."""
        record = site.plugin
        if site.stage == "get_actions":
            return parse_actions(value, plugin=record.name)
        if site.stage == "init":
            if value is None:
                return dict(args[-1]) if record.kind == "session" else {}
            if not isinstance(value, Mapping):
                raise ActionResultError(
                    f"plugin {record.name!r}: init must return a state mapping or None,"
                    f" got {type(value).__name__}",
                    plugin=record.name,
                )
        return check(value) if check is not None else value

    def _failed(
        self, run: RunState, site: _Site, exc: BaseException, *, timed_out: bool = False
    ) -> None:
        """Record a failed hook call (and log it), or raise it under the raise policy."""
        if isinstance(exc, ActionError):
            message = exception_message(exc)
        elif timed_out:
            message = f"{site} {exception_message(exc)}"
        else:
            message = f"{site} raised {describe_exception(exc)}"
        error = serialize_error(exc)
        if timed_out:
            error = {"type": "ActionTimeoutError", "message": message}
        record = site.plugin
        run.outcomes.append(
            ActionOutcome(
                plugin=record.name,
                kind=record.kind,
                action_id=site.action_id,
                stage=site.stage,
                ok=False,
                error=error,
                timed_out=timed_out,
                exception=exc,
            )
        )
        if run.raise_on_failure:
            cls = ActionTimeoutError if timed_out else ActionFailedError
            raise cls(
                message,
                plugin=record.name,
                action_id=site.action_id,
                stage=site.stage,
                error=error,
            ) from exc
        logger.warning("lifecycle action failed: %s", message)

    def _call_for(
        self,
        run: RunState,
        record: RegisteredPlugin,
        action: ActionDefinition,
        params: Any,
        state: Any,
    ) -> tuple[tuple[Any, ...], Callable[[Any], Any]]:
        """The arguments of ``execute_action`` for the plugin's kind, and its result check."""
        context = run.template.render(run.session, final_messages=run.final_messages)
        if record.kind == "application":
            args: tuple[Any, ...] = (self.app, action.id, params, context, state)
            return args, functools.partial(
                ApplicationResult.from_value, plugin=record.name, action_id=action.id
            )
        native = self.codec.to_native(run.session, run.config)
        args = (action.id, run.session, native, params, context, state)
        return args, functools.partial(
            SessionResult.from_value,
            plugin=record.name,
            action_id=action.id,
            lifecycle=run.lifecycle,
        )

    async def _execute(
        self,
        run: RunState,
        record: RegisteredPlugin,
        action: ActionDefinition,
        *,
        params: dict[str, Any],
        state: dict[str, Any],
    ) -> None:
        """Run one action and merge its result into ``run`` (or record its failure)."""
        site = _Site(record, "execute", action.id)
        try:  # host code (session serialization, codec) may fail too: same policy
            args, check = self._call_for(run, record, action, params, state)
        except Exception as exc:
            self._failed(run, site, exc)
            return
        fn = record.plugin.execute_action
        result = await self._guard(run, site, fn, args, check=check)
        if result is FAILED:
            return
        try:
            run.apply(result, self.codec)
        except Exception as exc:  # a host codec or session type failing on this result
            self._failed(run, site, exc)
            return
        run.outcomes.append(
            ActionOutcome(
                plugin=record.name, kind=record.kind, action_id=action.id, stage="execute",
                ok=True, result=result,
            )
        )  # fmt: skip
