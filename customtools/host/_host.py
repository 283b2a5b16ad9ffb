"""A session as a host sees it: wire state, chats, active clients and their tool calls.

:class:`HostSession` wraps the pure reducers with the duties the protocol gives the *host*:

* checking what a client dispatches (server-only actions, another client's identity, completing
  or streaming content for a call the client does not own) and refusing it with
  :class:`~customtools.host.ActionRejectedError`;
* stamping a client tool call with its owning client when it starts;
* when a client goes (:meth:`HostSession.remove_client`, or the client's own
  ``session/activeClientRemoved``): failing its unfinished calls in every
  chat (a *completed* call with ``success: false``, never ``cancelled``), removing it from
  ``activeClients`` and removing the plugins it published;
* a per-client revision counter so a late continuation (a plugin parse that finishes after the
  client left) cannot publish the removed client's customizations again.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import anyio.to_thread

from customtools._adapter import CustomToolAdapter
from customtools._approval import ApprovalRequest, Approver
from customtools._context import ToolContext
from customtools._talkback import InputAnswer, InputHandler, InputRequest
from customtools._tool import CustomTool
from customtools.host._chat import PENDING_STATUSES, reduce_chat, tool_calls
from customtools.host._errors import INVALID_PARAMS, ActionRejectedError, JsonRpcError
from customtools.host._input import answer_values, input_request
from customtools.host._model import ClientPluginCustomization, PluginCustomization
from customtools.host._reducer import is_client_dispatchable, reduce_session
from customtools.host._tooldefs import SessionActiveClient
from customtools.host._toolset import ActiveClientToolSet

__all__ = ["HostSession", "check_create_session_client", "deny_unknown_tool"]

Listener = Callable[[str, Mapping[str, Any]], None]
Parser = Callable[[ClientPluginCustomization], Any]


def check_create_session_client(
    active_client: Mapping[str, Any], connection_client_id: str
) -> None:
    """Refuse a ``createSession.activeClient`` that claims another client's id.

    Raises:
        JsonRpcError: code -32602 (invalid params) when the ids differ.
    """
    claimed = active_client.get("clientId")
    if claimed != connection_client_id:
        raise JsonRpcError(
            INVALID_PARAMS,
            f"createSession.activeClient.clientId {claimed!r} does not match this connection's "
            f"clientId {connection_client_id!r}; a client can only make itself active",
        )


def deny_unknown_tool(tool_call: Mapping[str, Any], *, turn_id: str) -> dict[str, Any] | None:
    """The action a client dispatches for a call to a tool it does not know.

    A call waiting for confirmation is denied (``toolCallConfirmed`` with ``approved: false``).
    A call that is already ``running`` (auto-confirmed client calls usually are) would ignore a
    denial, so it is completed with ``success: false`` instead. Any other status needs nothing.
    """
    base = {"turnId": turn_id, "toolCallId": tool_call.get("toolCallId")}
    name = tool_call.get("toolName")
    if tool_call.get("status") == "pending-confirmation":
        return {
            "type": "chat/toolCallConfirmed",
            **base,
            "approved": False,
            "reason": "denied",
            "reasonMessage": f"This client does not provide a tool named {name!r}",
        }
    if tool_call.get("status") == "running":
        return {
            "type": "chat/toolCallComplete",
            **base,
            "result": {
                "success": False,
                "pastTenseMessage": f"{tool_call.get('displayName', name)} failed",
                "error": {"message": f"This client does not provide a tool named {name!r}"},
            },
        }
    return None


@dataclasses.dataclass(slots=True, eq=False)
class _Confirmation:
    """One call waiting for ``chat/toolCallConfirmed``."""

    event: Any
    approved: bool = False

    def answer(self, approved: bool) -> None:
        self.approved = approved
        self.event.set()


@dataclasses.dataclass(slots=True, eq=False)
class _InputWait:
    """One ``ctx.ask`` waiting for ``chat/inputCompleted``."""

    event: Any
    response: Literal["accept", "decline", "cancel"] = "cancel"
    answers: dict[str, Any] = dataclasses.field(default_factory=dict)

    def answer(self, response: Any, answers: Mapping[str, Any]) -> None:
        if response == "accept" or response == "decline":
            self.response = response
        else:
            self.response = "cancel"  # cancel, or a response the protocol does not define
        self.answers = dict(answers)
        self.event.set()


def _owner(call: Mapping[str, Any]) -> Any:
    """The client a tool call belongs to (its ``contributor``), ``None`` for the host's."""
    contributor = call.get("contributor")
    if isinstance(contributor, Mapping) and contributor.get("kind") == "client":
        return contributor.get("clientId")
    return None


def _pending_requests(state: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    requests = state.get("inputRequests")
    if not isinstance(requests, list):
        return {}
    return {
        str(r["id"]): r for r in requests if isinstance(r, Mapping) and isinstance(r.get("id"), str)
    }


class HostSession:
    """Host-side state of one session and the chats in it.

    Args:
        uri: the session's channel URI.
        state: the initial session state (wire JSON); ``activeClients`` defaults to ``[]``.
        on_action: called with ``(channel, action)`` for every action the session applies,
            so the host can forward it to subscribers.
        clock: milliseconds since the epoch for chat timestamps (tests pin it).
    """

    def __init__(
        self,
        uri: str,
        *,
        state: Mapping[str, Any] | None = None,
        on_action: Listener | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.uri = uri
        self.state: Mapping[str, Any] = {"activeClients": [], **(state or {})}
        self.chats: dict[str, Mapping[str, Any]] = {}
        self.tools = ActiveClientToolSet()
        self._on_action = on_action
        self._clock = clock
        self._revisions: dict[str, int] = {}
        self._nonces: dict[tuple[str, str], str] = {}
        self._confirmations: dict[tuple[str, str], _Confirmation] = {}
        self._inputs: dict[tuple[str, str], _InputWait] = {}
        for entry in self.state.get("activeClients", []):
            client = SessionActiveClient.from_dict(entry)
            self.tools.set(client.client_id, client.tools)

    # -- applying actions ------------------------------------------------------------------

    def dispatch(self, action: Mapping[str, Any], *, chat: str | None = None) -> None:
        """Apply a host-originated action to the session (``chat=None``) or to a chat."""
        if chat is None:
            self.state = reduce_session(self.state, action)
            self._sync_tools(action)
        else:
            before = self.chats.get(chat, {})
            self.chats[chat] = reduce_chat(before, action, clock=self._clock)
            if action.get("type") == "chat/toolCallConfirmed":
                waiter = self._confirmations.get((chat, str(action.get("toolCallId"))))
                if waiter is not None:
                    waiter.answer(action.get("approved") is True)
            if self._inputs:
                self._settle_inputs(chat, before, action)
        if self._on_action is not None:
            self._on_action(chat or self.uri, action)

    def dispatch_from_client(
        self, action: Mapping[str, Any], *, client_id: str, chat: str | None = None
    ) -> None:
        """Check and apply an action a client dispatched.

        Raises:
            ActionRejectedError: the action is server-only, claims another client's identity,
                or completes / streams content for a tool call the client does not own.
        """
        kind = str(action.get("type"))
        refused = self._refusal(action, kind, client_id, chat)
        if refused is not None:
            raise ActionRejectedError(refused, action=action, client_id=client_id)
        if kind == "session/activeClientSet":
            self._revisions[client_id] = self._revisions.get(client_id, 0) + 1
        if kind == "session/activeClientRemoved":
            # The client leaves on its own: the same cleanup as a host-side removal, with the
            # client's action applied in place of the host's.
            self._remove(client_id, reason="left the session", action=action)
            return
        self.dispatch(action, chat=chat)

    def _refusal(
        self, action: Mapping[str, Any], kind: str, client_id: str, chat: str | None
    ) -> str | None:
        """Why ``client_id`` may not dispatch ``action`` (``None``: it may)."""
        if not is_client_dispatchable(kind):
            return f"{kind} is dispatched by the host only"
        if kind == "session/activeClientSet":
            claimed = (action.get("activeClient") or {}).get("clientId")
            if claimed != client_id:
                return f"client {client_id!r} cannot publish an active-client entry for {claimed!r}"
        if kind == "session/activeClientRemoved" and action.get("clientId") != client_id:
            return f"client {client_id!r} cannot remove another client ({action.get('clientId')!r})"
        if kind not in ("chat/toolCallComplete", "chat/toolCallContentChanged"):
            return None
        call_id = action.get("toolCallId")
        calls = [] if chat is None else tool_calls(self.chats.get(chat, {}))
        call = next((c for c in calls if c.get("toolCallId") == call_id), None)
        verb = "complete" if kind == "chat/toolCallComplete" else "stream content for"
        cannot = f"client {client_id!r} cannot {verb} tool call {call_id!r}"
        if call is None:
            return f"{cannot}: no such call in the active turn of {chat!r}"
        owner = _owner(call)
        if owner != client_id:
            whose = f"it belongs to client {owner!r}" if owner else "it is not a client tool call"
            return f"{cannot} ({call.get('toolName')}): {whose}"
        return None

    def _sync_tools(self, action: Mapping[str, Any]) -> None:
        kind = action.get("type")
        if kind == "session/activeClientSet":
            client = SessionActiveClient.from_dict(action["activeClient"])
            self.tools.set(client.client_id, client.tools)
        elif kind == "session/activeClientRemoved":
            self.tools.remove(str(action.get("clientId")))

    # -- asking before a host tool runs ----------------------------------------------------

    def approver(
        self, chat: str, *, turn_id: str, confirmation_title: str | None = None
    ) -> Approver:
        """An approver for :class:`~customtools.CustomToolAdapter` that asks the session's
        clients through the protocol's tool-call confirmation.

        When the adapter asks, the call (already started with ``chat/toolCallStart``) is made
        ready without ``confirmed``, so it waits in ``pending-confirmation`` with its
        arguments as ``toolInput``; the answer is the next ``chat/toolCallConfirmed`` for that
        call (``approved: true`` runs it; anything else is a denial the model reads). The
        adapter's approval timeout bounds the wait.
        """

        async def approve(request: ApprovalRequest) -> bool:
            import json

            from anyio import Event

            key = (chat, request.tool_call_id)
            waiter = _Confirmation(Event())
            self._confirmations[key] = waiter
            try:
                label = getattr(request.tool, "label", None) or request.tool_call_id
                action: dict[str, Any] = {
                    "type": "chat/toolCallReady",
                    "turnId": turn_id,
                    "toolCallId": request.tool_call_id,
                    "invocationMessage": f"Run {label}",
                    "toolInput": json.dumps(dict(request.arguments), ensure_ascii=False),
                }
                if confirmation_title is not None:
                    action["confirmationTitle"] = confirmation_title
                self.dispatch(action, chat=chat)
                await waiter.event.wait()
                return waiter.approved
            finally:
                if self._confirmations.get(key) is waiter:
                    del self._confirmations[key]

        return approve

    def _settle_inputs(
        self, chat: str, before: Mapping[str, Any], action: Mapping[str, Any]
    ) -> None:
        """Answer every ``ctx.ask`` of ``chat`` whose request this action removed.

        ``chat/inputCompleted`` answers with its response and the request's answers (its synced
        drafts, replaced by the action's ``answers`` where given); a request removed any other
        way (the turn ended) is cancelled.
        """
        was = _pending_requests(before)
        now = _pending_requests(self.chats.get(chat, {}))
        for (waiter_chat, request_id), waiter in list(self._inputs.items()):
            if waiter_chat != chat or request_id not in was or request_id in now:
                continue
            if (
                action.get("type") == "chat/inputCompleted"
                and action.get("requestId") == request_id
            ):
                answers = dict(was[request_id].get("answers") or {})
                if isinstance(action.get("answers"), Mapping):
                    answers.update(action["answers"])
                waiter.answer(action.get("response"), answers)
            else:
                waiter.answer("cancel", {})

    # -- asking the user while a host tool runs ----------------------------------------------

    def input_handler(self, chat: str) -> InputHandler:
        """An :class:`~customtools.talkback.InputHandler` that asks the session's clients
        through the protocol's chat input requests.

        Each ``ctx.ask(message, form)`` dispatches ``chat/inputRequested`` with one question
        per form property (see :mod:`customtools.host._input` for the mapping) and waits for a
        client's ``chat/inputCompleted`` for that request: ``accept`` gives the answered values
        (``ctx.ask`` validates them against the form), an ``accept`` whose every answer was
        skipped is a ``decline``, ``decline`` declines, and ``cancel`` (or the turn ending)
        cancels. The ask's timeout and the call's signal bound the wait; a wait that ends that
        way withdraws the request (``chat/inputCompleted`` with ``cancel``) so clients stop
        showing it.
        """

        async def ask(request: InputRequest) -> InputAnswer:
            from uuid import uuid4

            from anyio import Event

            request_id = f"input-{uuid4().hex}"
            key = (chat, request_id)
            waiter = _InputWait(Event())
            self._inputs[key] = waiter
            try:
                self.dispatch(
                    {
                        "type": "chat/inputRequested",
                        "request": input_request(request_id, request.message, request.schema),
                    },
                    chat=chat,
                )
                await waiter.event.wait()
            finally:
                if self._inputs.get(key) is waiter:
                    del self._inputs[key]
                if not waiter.event.is_set() and request_id in _pending_requests(
                    self.chats.get(chat, {})
                ):
                    self.dispatch(
                        {
                            "type": "chat/inputCompleted",
                            "requestId": request_id,
                            "response": "cancel",
                        },
                        chat=chat,
                    )
            if waiter.response != "accept":
                return InputAnswer(action=waiter.response)
            asked = request.schema.get("properties") or {}
            values, skipped = answer_values(
                {k: v for k, v in waiter.answers.items() if k in asked}  # only what was asked
            )
            if not values and skipped:
                return InputAnswer(action="decline")
            return InputAnswer(action="accept", values=values)

        return ask

    def tool_context(self, chat: str, **fields: Any) -> ToolContext:
        """A :class:`~customtools.ToolContext` whose ``ctx.ask`` asks the host session's
        clients (:meth:`input_handler`); ``fields`` are any other ``ToolContext`` fields."""
        return ToolContext(**{"input_handler": self.input_handler(chat), **fields})

    def adapter(
        self,
        tool: CustomTool,
        chat: str,
        *,
        turn_id: str,
        confirmation_title: str | None = None,
        client_id: str | None = None,
        **options: Any,
    ) -> CustomToolAdapter:
        """A :class:`~customtools.CustomToolAdapter` for a host tool run in ``chat``: approval
        goes through :meth:`approver`, ``ctx.ask`` through :meth:`input_handler`.

        ``options`` are the adapter's other arguments (``approval_timeout``, ``timeout``,
        ``policy``, ...); a ``context`` given there keeps its fields and gets the input
        handler. ``ctx.caller`` (whom an execution policy caches for) is ``client_id``, the
        client the call is made for, or else ``chat``.
        """
        given = options.pop("context", None)
        handler = self.input_handler(chat)
        caller = client_id if client_id is not None else f"chat:{chat}"
        context = (
            dataclasses.replace(given, input_handler=handler, caller=given.caller or caller)
            if isinstance(given, ToolContext)
            else ToolContext(input_handler=handler, tool_name=tool.name, caller=caller)
        )
        return CustomToolAdapter(
            tool,
            approver=self.approver(chat, turn_id=turn_id, confirmation_title=confirmation_title),
            context=context,
            **options,
        )

    # -- client tool calls -----------------------------------------------------------------

    def start_tool_call(
        self,
        chat: str,
        *,
        turn_id: str,
        tool_call_id: str,
        tool_name: str,
        display_name: str | None = None,
        preferred_client: str | None = None,
    ) -> str | None:
        """Start a tool call; stamp it with its owning client if a client provides the tool.

        Returns:
            The owning client id, or ``None`` for a call the host runs itself.
        """
        owner = self.tools.owner_of(tool_name, preferred_client)
        action: dict[str, Any] = {
            "type": "chat/toolCallStart",
            "turnId": turn_id,
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "displayName": display_name or tool_name,
        }
        if owner is not None:
            action["contributor"] = {"kind": "client", "clientId": owner}
        self.dispatch(action, chat=chat)
        return owner

    def pending_calls(self, client_id: str) -> list[tuple[str, str, Mapping[str, Any]]]:
        """``(chat, turn_id, call)`` for every unfinished call ``client_id`` owns."""
        out = []
        for chat, state in self.chats.items():
            turn = state.get("activeTurn")
            turn_id = turn.get("id") if isinstance(turn, Mapping) else None
            for call in tool_calls(state):
                if _owner(call) == client_id and call.get("status") in PENDING_STATUSES:
                    out.append((chat, str(turn_id), call))
        return out

    def fail_client_calls(self, client_id: str, *, reason: str = "disconnected") -> int:
        """Complete every unfinished call of ``client_id`` with ``success: false``.

        A streaming call is first made ready (``confirmed: not-needed``) because a completion
        is ignored while streaming. Returns how many calls were failed.
        """
        pending = self.pending_calls(client_id)
        for chat, turn_id, call in pending:
            name = call.get("displayName") or call.get("toolName")
            ids = {"turnId": turn_id, "toolCallId": call.get("toolCallId")}
            if call.get("status") == "streaming":
                self.dispatch(
                    {
                        "type": "chat/toolCallReady",
                        **ids,
                        "confirmed": "not-needed",
                        "invocationMessage": call.get("invocationMessage") or name,
                    },
                    chat=chat,
                )
            result: dict[str, Any] = {
                "success": False,
                "pastTenseMessage": f"{name} failed",
                "error": {"message": f"Client {client_id} {reason} before completing {name}"},
            }
            others = [
                c
                for c in self.tools.client_ids()
                if c != client_id and any(t.name == call.get("toolName") for t in self.tools.get(c))
            ]
            if others:
                result["content"] = [
                    {
                        "type": "text",
                        "text": (
                            f"The client running {name} went away; another client offers "
                            f"{call.get('toolName')!r}, so you may call it again."
                        ),
                    }
                ]
            self.dispatch({"type": "chat/toolCallComplete", **ids, "result": result}, chat=chat)
        return len(pending)

    def cancel_turn(self, chat: str, turn_id: str) -> None:
        """Cancel a turn: every unfinished call in it ends ``cancelled`` (``skipped``)."""
        self.dispatch({"type": "chat/turnCancelled", "turnId": turn_id}, chat=chat)

    def remove_client(self, client_id: str, *, reason: str = "disconnected") -> None:
        """Do everything the host owes when a client leaves.

        In order: fail its unfinished calls in every chat, dispatch
        ``session/activeClientRemoved``, then ``session/customizationRemoved`` for each
        container it published. Its revision is bumped first, so a continuation still holding
        the old revision cannot publish for it again. A client that dispatches
        ``session/activeClientRemoved`` itself (through :meth:`dispatch_from_client`) gets the
        same cleanup.
        """
        self._remove(client_id, reason=reason, action=None)

    def _remove(self, client_id: str, *, reason: str, action: Mapping[str, Any] | None) -> None:
        self._revisions[client_id] = self._revisions.get(client_id, 0) + 1
        self.fail_client_calls(client_id, reason=reason)
        self.dispatch(action or {"type": "session/activeClientRemoved", "clientId": client_id})
        for entry in list(self.state.get("customizations") or []):
            if isinstance(entry, Mapping) and entry.get("clientId") == client_id:
                self.dispatch({"type": "session/customizationRemoved", "id": entry["id"]})
        self._nonces = {k: v for k, v in self._nonces.items() if k[0] != client_id}

    # -- client customizations -------------------------------------------------------------

    def revision(self, client_id: str) -> int:
        """The client's current revision; it changes on every ``activeClientSet`` and removal."""
        return self._revisions.get(client_id, 0)

    def publish_client_plugins(
        self, client_id: str, plugins: Iterable[PluginCustomization], *, revision: int
    ) -> bool:
        """Surface parsed client plugins (``clientId`` set) unless ``revision`` is stale.

        Returns:
            False, publishing nothing, when the client was removed or re-published since
            ``revision`` was taken.
        """
        if revision != self.revision(client_id) or client_id not in self.tools:
            return False
        for plugin in plugins:
            # The plugin as parsed, minus what the client cannot set: unknown keys, the owner.
            fields = {f.name: getattr(plugin, f.name) for f in dataclasses.fields(plugin)}
            for name in ("extra", "client_id", "nonce"):
                fields.pop(name, None)
            container = PluginCustomization(**fields, client_id=client_id)
            self.dispatch(
                {"type": "session/customizationUpdated", "customization": container.to_dict()}
            )
        return True

    async def sync_client_plugins(self, client_id: str, parse: Parser) -> bool:
        """Parse and publish the plugins ``client_id`` published, skipping unchanged nonces.

        ``parse(plugin)`` returns a :class:`PluginCustomization` with children and load state;
        a coroutine function is awaited, a plain function runs in a worker thread. A plugin
        whose ``nonce`` equals the last one parsed is not parsed again (an absent nonce always
        is). Plugins the client no longer publishes are removed. If the client is removed or
        re-publishes while parsing, nothing is published and this returns False.
        """
        revision = self.revision(client_id)
        entry = next(
            (
                c
                for c in self.state.get("activeClients", [])
                if isinstance(c, Mapping) and c.get("clientId") == client_id
            ),
            None,
        )
        if entry is None:
            return False
        client = SessionActiveClient.from_dict(entry)
        parsed: list[PluginCustomization] = []
        nonces: dict[tuple[str, str], str] = {}
        for plugin in client.customizations or ():
            key = (client_id, plugin.id)
            if plugin.nonce is not None and self._nonces.get(key) == plugin.nonce:
                continue
            if inspect.iscoroutinefunction(parse):
                result = await parse(plugin)
            else:
                result = await anyio.to_thread.run_sync(parse, plugin)
            parsed.append(dataclasses.replace(result, id=plugin.id))
            if plugin.nonce is not None:
                nonces[key] = plugin.nonce
        if not self.publish_client_plugins(client_id, parsed, revision=revision):
            return False
        self._nonces.update(nonces)
        current = {p.id for p in client.customizations or ()}
        for stale in list(self.state.get("customizations") or []):
            if (
                isinstance(stale, Mapping)
                and stale.get("clientId") == client_id
                and stale.get("id") not in current
            ):
                self._nonces.pop((client_id, str(stale.get("id"))), None)
                self.dispatch({"type": "session/customizationRemoved", "id": stale["id"]})
        return True
