"""Re-running a call that asked a question, for the 2026-07-28 era (``input_required``).

In that era a server cannot send requests in the middle of a call. A question is answered by
**re-running** the call: the first unanswered question aborts the run and the call returns
``input_required`` with that question; the client retries with the answer, and the tool runs
again from the top, getting the answers it already has, in order, until it asks a new one or
finishes (:class:`~customtools.mcp._talkback.CallBridge` replays them).

The answers travel in ``requestState``, sealed with HMAC-SHA256 under the server's key
(:class:`StateSeal`; random per process unless the replicas share one), bound to the tool, a
digest of the arguments and an expiry (:data:`STATE_TTL`), good for one retry (a nonce), and
capped (:data:`MAX_ROUNDS` questions, :data:`MAX_STATE_BYTES`): no server memory is held
between rounds but the used nonces (a :class:`NonceStore`: this process's
:class:`MemoryNonces`, or one that replicas share), and a forged, replayed or foreign state is
refused with ``-32602``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from customtools.mcp._shared import MemoryNonces, NonceStore, SharedStateError

__all__ = [
    "MAX_ROUNDS",
    "MAX_STATE_BYTES",
    "STATE_TTL",
    "StateSeal",
    "arguments_digest",
    "input_required",
    "question_digest",
    "resume",
]

MAX_ROUNDS = 16
"""Questions one call may ask in the 2026-07-28 era (each is a round trip)."""

MAX_STATE_BYTES = 256 * 1024
"""The largest ``requestState`` the server issues or accepts."""

STATE_TTL = 900.0
"""Seconds a ``requestState`` stays valid."""


def _refusal(tool: str, why: str) -> MCPError:
    return MCPError(
        code=types.INVALID_PARAMS,
        message=f"requestState for tool {tool!r} refused: {why}; call the tool again"
        " without requestState",
    )


class StateSeal:
    """Seals and opens the ``requestState`` of re-run calls (HMAC-SHA256, one key per server
    or per deployment).

    Each state carries a random nonce and is good for one retry: :meth:`spend` claims it in
    ``nonces`` (this process's :class:`MemoryNonces` unless replicas share a store), so a
    replayed state (the same answers, an approval among them, sent again) is refused.
    """

    __slots__ = ("_key", "_nonces")

    def __init__(self, key: bytes, nonces: NonceStore | None = None) -> None:
        self._key = key
        self._nonces: NonceStore = nonces if nonces is not None else MemoryNonces()

    def seal(self, payload: Mapping[str, Any]) -> str:
        """``payload`` as a tamper-evident string, with a fresh nonce."""
        payload = {**payload, "n": secrets.token_hex(12)}
        body = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode())
        mac = hmac.new(self._key, body, hashlib.sha256).digest()
        return f"{body.decode()}.{base64.urlsafe_b64encode(mac).decode()}"

    def open(self, state: str, *, tool: str, digest: str) -> dict[str, Any]:
        """The payload sealed in ``state`` (its answers under ``"a"``), checked but not spent.

        Raises:
            MCPError: ``-32602`` when the state is forged, expired, too large or for another
                call (the client must start the call again without it).
        """
        if len(state) > MAX_STATE_BYTES * 2:
            raise _refusal(tool, "it is too large")
        body, _, mac = state.partition(".")
        try:
            # The exact text is compared, never a decoding of it: base64 decoders skip what
            # follows the padding, so a state with anything appended would still verify.
            expected = base64.urlsafe_b64encode(
                hmac.new(self._key, body.encode(), hashlib.sha256).digest()
            )
            if not hmac.compare_digest(expected, mac.encode()):
                raise _refusal(tool, "its integrity check failed")
            payload = json.loads(base64.urlsafe_b64decode(body.encode()))
        except MCPError:
            raise
        except Exception:
            raise _refusal(tool, "it is not a state this server issued") from None
        if not isinstance(payload, dict):
            raise _refusal(tool, "it is not a state this server issued")
        if payload.get("t") != tool or payload.get("d") != digest:
            raise _refusal(tool, "it was issued for another tool or other arguments")
        if not isinstance(payload.get("e"), (int, float)) or payload["e"] < time.time():
            raise _refusal(tool, "it expired")
        if not isinstance(payload.get("a"), list):
            raise _refusal(tool, "it holds no answers")
        if not isinstance(payload.get("n"), str):
            raise _refusal(tool, "it is not a state this server issued")
        return dict(payload)

    async def spend(self, payload: Mapping[str, Any], *, tool: str) -> None:
        """Claim an opened state's nonce: its one retry.

        Raises:
            MCPError: ``-32602`` when it was already used, or when the nonce store cannot
                say (a shared store that is unreachable: the state is refused rather than
                accepted unchecked).
        """
        try:
            fresh = await self._nonces.claim(payload["n"], float(payload["e"]))
        except SharedStateError as exc:
            raise _refusal(
                tool, f"its one use cannot be checked now ({exc}); the server logged the fault"
            ) from None
        if not fresh:
            raise _refusal(tool, "it was already used (each requestState is good for one retry)")


def arguments_digest(arguments: Any) -> str:
    """A digest of a call's arguments (canonical JSON), binding a state to them."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def question_digest(kind: str, body: Any) -> str:
    """A short digest of one question, to check a re-run asks the same questions."""
    text = json.dumps([kind, body], sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


async def resume(seal: StateSeal, params: Any, *, tool: str, digest: str) -> list[Any]:
    """The answers a retried call already has: those sealed in its ``requestState`` plus the
    one its ``inputResponses`` brings for the pending question (unknown keys are ignored).

    Raises:
        MCPError: the state is refused (see :meth:`StateSeal.open` and :meth:`StateSeal.spend`).
    """
    state = params.request_state
    if state is None:
        return []
    payload = seal.open(state, tool=tool, digest=digest)
    await seal.spend(payload, tool=tool)
    answers = list(payload["a"])
    pending = payload.get("p")
    key = payload.get("k")
    responses = params.input_responses or {}
    response = responses.get(key) if isinstance(key, str) else None
    if isinstance(pending, str) and response is not None:
        dumped = (
            response.model_dump(by_alias=True, mode="json", exclude_none=True)
            if hasattr(response, "model_dump")
            else dict(response)
        )
        answers.append({"q": pending, "r": dumped})
    return answers


def input_required(seal: StateSeal, bridge: Any, *, digest: str) -> Any:
    """The ``input_required`` result asking ``bridge``'s pending question, or ``None`` when the
    state would be too large (the caller answers with an error result)."""
    pending = bridge.pending
    assert pending is not None
    key = pending.key if pending.key is not None else f"q{len(bridge.answers)}"
    state = seal.seal(
        {
            "t": bridge.tool,
            "d": digest,
            "e": time.time() + STATE_TTL,
            "a": bridge.answers,
            "p": pending.digest,
            "k": key,
        }
    )
    if len(state) > MAX_STATE_BYTES:
        return None
    return types.InputRequiredResult(input_requests={key: pending.request}, request_state=state)
