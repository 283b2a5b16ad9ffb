"""The object every tool factory receives: :class:`ToolAPI`, its UI and its pending actions.

One load shares one state (working directory, UI, pending-action store) between all the
factories it calls; each tool module gets its own :class:`ToolAPI` *view* of that state so its
``logger`` is named after the module. :meth:`LoadResult.set_ui_context
<customtools.LoadResult.set_ui_context>` swaps the UI in the shared state, so a factory that kept
its ``api`` sees the host's real UI from then on.

Pending actions
    A tool that wants a person (or the model) to confirm a change before it happens calls
    ``api.push_pending_action(...)`` with a label, the details of the change and an ``apply``
    callable (optionally ``reject``). The action goes onto the load's
    :class:`PendingActionStore`, a last-in-first-out stack. A host exposes the store through a
    hidden "resolve" tool (or its own UI): :meth:`PendingActionStore.resolve` pops an action and
    runs its ``apply`` or ``reject``. Hosts learn about new actions with
    :meth:`PendingActionStore.subscribe`, so they can register the resolve tool as soon as the
    first action appears. Unlike some earlier designs, ``details`` is kept.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from customtools._talkback import NO_OP_UI, NoOpUIContext, UIContext

if TYPE_CHECKING:
    from customtools._abort import AbortSignal
    from customtools._exec import EnvPolicy, ExecResult

__all__ = [
    "NO_OP_UI",
    "NoOpUIContext",
    "PendingAction",
    "PendingActionStore",
    "SharedState",
    "ToolAPI",
    "UIContext",
]

_log = logging.getLogger("customtools.loading")

LOGGER_PREFIX = "customtools.tools"
"""Tool module loggers are children of this logger: ``customtools.tools.<module stem>``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingAction:
    """A change a tool proposes and a host applies or discards later.

    Args:
        label: one line for people and the model ("Delete 3 files").
        apply: ``apply(reason)``, sync or async, performs the change; its return value is
            handed back by :meth:`PendingActionStore.resolve`.
        reject: ``reject(reason)``, sync or async, called when the action is discarded.
        description: a longer explanation, optional.
        details: anything a host needs to preview the change (a diff, file list, ...); kept
            as given.
        tool_name: the tool that proposed it, when the tool says so.
        id: unique id, generated when not given.
    """

    label: str
    apply: Callable[[Any], Any]
    reject: Callable[[Any], Any] | None = None
    description: str = ""
    details: Any = None
    tool_name: str | None = None
    id: str = field(default_factory=lambda: os.urandom(16).hex())

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise ValueError("pending action: label must be a non-empty string")
        if not callable(self.apply):
            raise TypeError(f"pending action {self.label!r}: apply must be callable")
        if self.reject is not None and not callable(self.reject):
            raise TypeError(f"pending action {self.label!r}: reject must be callable or None")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> PendingAction:
        """Build from a mapping with the same keys (``source_tool_name`` and
        ``sourceToolName`` are accepted for ``tool_name``)."""
        known = {"label", "apply", "reject", "description", "details", "tool_name", "id"}
        kwargs = {k: v for k, v in data.items() if k in known}
        for alias in ("source_tool_name", "sourceToolName", "toolName"):
            if alias in data and "tool_name" not in kwargs:
                kwargs["tool_name"] = data[alias]
        unknown = sorted(set(data) - known - {"source_tool_name", "sourceToolName", "toolName"})
        if unknown:
            raise ValueError(f"pending action: unknown key(s) {', '.join(map(repr, unknown))}")
        if "label" not in kwargs or "apply" not in kwargs:
            raise ValueError("pending action: 'label' and 'apply' are required")
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        """JSON form for a host's preview (the callables are left out)."""
        out: dict[str, Any] = {"id": self.id, "label": self.label}
        if self.description:
            out["description"] = self.description
        if self.details is not None:
            out["details"] = self.details
        if self.tool_name is not None:
            out["toolName"] = self.tool_name
        return out


PendingActionListener = Callable[[PendingAction], None]


class PendingActionStore:
    """A last-in-first-out stack of :class:`PendingAction` shared by the tools of one load."""

    __slots__ = ("_actions", "_listeners")

    def __init__(self) -> None:
        self._actions: list[PendingAction] = []
        self._listeners: list[PendingActionListener] = []

    def __len__(self) -> int:
        return len(self._actions)

    def __repr__(self) -> str:
        return f"<PendingActionStore {len(self._actions)} pending>"

    @property
    def pending(self) -> tuple[PendingAction, ...]:
        """Every pending action, oldest first."""
        return tuple(self._actions)

    def push(self, action: PendingAction) -> PendingAction:
        """Add ``action`` on top and tell subscribers; a subscriber that raises is logged."""
        self._actions.append(action)
        for listener in tuple(self._listeners):
            try:
                listener(action)
            except Exception:
                _log.exception("pending-action listener %r raised", listener)
        return action

    def peek(self) -> PendingAction | None:
        """The most recent action, or ``None``."""
        return self._actions[-1] if self._actions else None

    def pop(self, action_id: str | None = None) -> PendingAction:
        """Remove and return the action ``action_id`` (default: the most recent).

        Raises:
            LookupError: there is no pending action (with that id).
        """
        if action_id is None:
            if not self._actions:
                raise LookupError("there is no pending action to resolve")
            return self._actions.pop()
        for index, action in enumerate(self._actions):
            if action.id == action_id:
                return self._actions.pop(index)
        raise LookupError(f"no pending action with id {action_id!r}")

    async def resolve(
        self, action_id: str | None = None, *, apply: bool = True, reason: Any = None
    ) -> Any:
        """Pop an action and run its ``apply(reason)`` (or ``reject(reason)`` when
        ``apply=False``), awaiting it if it is async; return what it returned.

        Exceptions raised by the callable propagate: the host decides how to report them.
        """
        action = self.pop(action_id)
        fn = action.apply if apply else action.reject
        if fn is None:
            return None
        result = fn(reason)
        if inspect.isawaitable(result):
            result = await result
        return result

    def subscribe(self, listener: PendingActionListener) -> Callable[[], None]:
        """Call ``listener(action)`` on every push; returns a function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe


class SharedState:
    """What every :class:`ToolAPI` view of one load shares (mutable on purpose)."""

    __slots__ = ("cwd", "has_ui", "late_diagnostics", "pending_actions", "ui")

    def __init__(self, *, cwd: str, pending_actions: PendingActionStore) -> None:
        self.cwd = cwd
        self.ui: Any = NO_OP_UI
        self.has_ui = False
        self.pending_actions = pending_actions
        self.late_diagnostics: list[Any] = []
        """Diagnostics of lazy imports, recorded after the load (on first calls)."""


_LOGGER_SAFE = re.compile(r"[^A-Za-z0-9_-]")


def logger_name_for(stem: str) -> str:
    """The logger name of a tool module: ``customtools.tools.<stem>`` (dots made ``_``)."""
    if not (stem.isascii() and stem.isidentifier()):  # else nothing to replace (most names)
        stem = _LOGGER_SAFE.sub("_", stem) or "_"
    return f"{LOGGER_PREFIX}.{stem}"


class ToolAPI:
    """The host API handed to ``factory(api)``.

    Attributes are read-only; the UI changes when the host calls ``set_ui_context`` on the
    :class:`~customtools.LoadResult`.
    """

    __slots__ = ("_logger", "_logger_name", "_state")

    def __init__(self, state: SharedState, *, logger_name: str) -> None:
        self._state = state
        self._logger_name = logger_name
        self._logger: logging.Logger | None = None

    def __repr__(self) -> str:
        return f"<ToolAPI cwd={self._state.cwd!r} has_ui={self._state.has_ui}>"

    @property
    def cwd(self) -> str:
        """The host's working directory (absolute), fixed for the load."""
        return self._state.cwd

    @property
    def ui(self) -> Any:
        """The host's UI (a :class:`UIContext`); the no-op UI until the host attaches one."""
        return self._state.ui

    @property
    def has_ui(self) -> bool:
        """Whether :attr:`ui` is a real interactive UI."""
        return self._state.has_ui

    @property
    def logger(self) -> logging.Logger:
        """A stdlib logger for this tool module, ``customtools.tools.<module stem>``."""
        if self._logger is None:
            self._logger = logging.getLogger(self._logger_name)
        return self._logger

    @property
    def typebox(self) -> Any:
        """The :class:`~customtools.Type` schema builder."""
        from customtools._typebox import Type

        return Type

    @property
    def sdk(self) -> ModuleType:
        """The ``customtools`` package, so tools need no import of their own."""
        # The package is always imported before any of its modules; taking it from
        # sys.modules keeps the loader from importing the namespace that re-exports it.
        return sys.modules["customtools"]

    @property
    def pending_actions(self) -> PendingActionStore:
        """The load's pending-action store (hosts read it; tools normally only push)."""
        return self._state.pending_actions

    def push_pending_action(
        self, action: PendingAction | Mapping[str, Any] | None = None, **fields: Any
    ) -> PendingAction:
        """Propose a change for the host to apply or discard later; returns the stored action.

        Pass a :class:`PendingAction`, a mapping of its fields, or its fields as keywords::

            api.push_pending_action(label="Delete build/", apply=delete, details={"n": 3})
        """
        if action is None:
            action = PendingAction.from_mapping(fields)
        elif isinstance(action, Mapping):
            action = PendingAction.from_mapping({**action, **fields})
        elif not isinstance(action, PendingAction):
            raise TypeError(
                f"push_pending_action expects a PendingAction or a mapping,"
                f" got {type(action).__name__}"
            )
        return self._state.pending_actions.push(action)

    async def exec(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        signal: AbortSignal | None = None,
        cwd: str | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        env_policy: EnvPolicy = "minimal",
        input: bytes | str | None = None,
        **options: Any,
    ) -> ExecResult:
        """Run ``command`` with ``args`` (no shell) and capture its output.

        ``cwd`` defaults to :attr:`cwd`. Abort through ``signal`` or a ``timeout`` kills the
        whole process group. The child's environment is minimal by default (``PATH``,
        ``HOME``, the locale, ...): the host's API keys and tokens are not passed to a program
        the model chose; add variables with ``env={...}`` or pass everything with
        ``env_policy="inherit"``. See :func:`customtools.exec_command` for the result and the
        remaining options (``max_output``, ``kill_grace``).
        """
        from customtools._exec import exec_command

        return await exec_command(
            command,
            args,
            signal=signal,
            cwd=self._state.cwd if cwd is None else cwd,
            timeout=timeout,
            env=env,
            env_policy=env_policy,
            input=input,
            **options,
        )
