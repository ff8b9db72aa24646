"""Only the user confirms: the question ``confirm_fact`` and ``verify`` put to the person, through MCP.

The model calls the tools; the model's word is not the user's. So before a pending persona fact is
confirmed or an assistant reply is verified, the server asks the *person* with MCP elicitation — a
request the client shows in its own UI — and acts only on their yes::

    model ─tools/call verify─► server ─elicitation/create─► client UI ─► the user: accept, decline, cancel
                               (nothing changes until) ◄── {"action": "accept", "content": {"confirm": true}}

How the question travels depends on the protocol era (``mcp_server.py`` picks it):

- the ``initialize`` handshake, 2025-06-18 and 2025-11-25: ``elicitation/create`` is a JSON-RPC
  request from server to client, sent while the ``tools/call`` is in flight (``mcp_stdio.StdioChannel``
  reads the client's lines until its answer comes); the client must have declared ``elicitation``
  in ``initialize``. 2024-11-05 and 2025-03-26 have no elicitation at all;
- 2026-07-28: the ``tools/call`` answers ``resultType: "input_required"`` with the question in
  ``inputRequests`` and an opaque ``requestState``; the client asks the user and calls again with
  ``inputResponses`` and that ``requestState`` (the official SDK's multi-round-trip driver does it).
  Its capabilities ride in each request's ``params._meta``. ``Questions`` remembers what was asked,
  once per state, so a retry can only answer a question this server put.

Anything but an accepted, ticked form — decline, cancel, no capability, an error, a malformed answer,
the connection closing — leaves the fact pending (the reply unverified), and the tool result says why
in words the model can relay. This module decides nothing about memory: ``mcp_tools.Consent`` says
what to ask, ``MemoryTools.carry_out`` acts on a yes.
"""
from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

from ..text.quoting import one_line
from .mcp_tools import Consent, ToolResult

__all__ = ["CONFIRMING", "ELICITING_VERSIONS", "ANSWER_KEY", "Outcome", "NoAnswer", "Cancelled", "Questions",
           "cannot_elicit", "elicitation_params", "read_answer", "read_response", "not_confirmed"]

CONFIRMING = frozenset({"confirm_fact", "verify"})  # the tools that act only on the user's own yes
ELICITING_VERSIONS = ("2025-06-18", "2025-11-25", "2026-07-28")  # the revisions that have elicitation
ANSWER_KEY = "confirm"  # the one key of inputRequests / inputResponses (2026-07-28)
MAX_QUESTIONS = 64  # open 2026-era questions kept; the oldest is forgotten first (its retry is refused)

# The form the user fills: one required tick box, so a bare "accept" is not a yes by accident.
REQUESTED_SCHEMA = {"type": "object", "required": ["confirm"],
                    "properties": {"confirm": {"type": "boolean", "title": "Yes, this is right",
                                               "description": "Tick only if this is true and you want it kept"}}}


class NoAnswer(Exception):
    """The question got no answer: the connection closed before the user answered."""


class Cancelled(NoAnswer):
    """The client cancelled the call while its question was open: nothing is confirmed, nothing answered."""


@dataclass(frozen=True)
class Outcome:
    """How the question ended: ``accepted``, ``declined``, ``cancelled``, ``unticked``, ``cannot_ask``,
    ``no_answer`` or ``failed``, and why (for the model, in words it can relay)."""

    kind: str
    why: str = ""

    @property
    def confirmed(self) -> bool:
        return self.kind == "accepted"


def cannot_elicit(capabilities: Any, version: str | None) -> str | None:
    """Why this client cannot ask its user a form question at ``version``; None when it can."""
    if version not in ELICITING_VERSIONS:
        return f"MCP {version or 'without a version'} has no elicitation, so this client cannot ask the user"
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return "this client cannot ask the user (it did not declare the MCP elicitation capability)"
    # subtle: from 2025-11-25 an empty object still means form mode; only a url-only client cannot ask.
    if version != "2025-06-18" and elicitation and "form" not in elicitation:
        return "this client can only open links (URL elicitation), not ask the user a question"
    return None


def elicitation_params(consent: Consent, version: str) -> dict[str, Any]:
    """The ``elicitation/create`` params: what is to be confirmed, each item on its own quoted line."""
    message = "\n".join([f"Your assistant asks you to confirm {consent.subject}:",
                         *(f"  {line}" for line in consent.lines),
                         "Tick the box and accept only if it is right. Decline, and nothing changes."])
    params: dict[str, Any] = {"message": message, "requestedSchema": REQUESTED_SCHEMA}
    if version != "2025-06-18":  # mode came with URL elicitation in 2025-11-25
        params["mode"] = "form"
    return params


def read_answer(result: Any) -> Outcome:
    """An ``ElicitResult`` (the client's answer) as an Outcome; anything malformed is no yes."""
    if not isinstance(result, dict) or result.get("action") not in ("accept", "decline", "cancel"):
        shown = json.dumps(result, ensure_ascii=False)[:120] if _jsonable(result) else type(result).__name__
        return Outcome("failed", f"the client's answer was malformed ({one_line(shown)})")
    if result["action"] == "decline":
        return Outcome("declined", "the user declined")
    if result["action"] == "cancel":
        return Outcome("cancelled", "the user closed the question without answering")
    content = result.get("content")
    if isinstance(content, dict) and content.get("confirm") is True:
        return Outcome("accepted", "the user confirmed it")
    return Outcome("unticked", "the user answered without ticking 'Yes, this is right'")


def read_response(response: dict[str, Any]) -> Outcome:
    """A JSON-RPC response to ``elicitation/create``: its result read, or the error it is."""
    error = response.get("error")
    if "result" not in response:
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        detail = f"error {code}: {one_line(str(message))[:160]}" if isinstance(message, str) else "an error"
        return Outcome("failed", f"the client could not ask the user ({detail})")
    return read_answer(response["result"])


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


_STAYS = {"confirm_fact": "the fact stays pending and does not enter contexts",
          "verify": "the reply stays unverified (weight 0.01) and does not count as fact"}
_NEXT = {"declined": "Do not ask again unless the user brings it up.",
         "cancelled": "You may ask the user in the chat later.",
         "unticked": "You may ask the user in the chat later.",
         "cannot_ask": "Ask the user in the chat; only the user can confirm, through the host, not through you.",
         "no_answer": "Ask the user in the chat; only the user can confirm, through the host, not through you.",
         "failed": "Ask the user in the chat; only the user can confirm, through the host, not through you."}


def not_confirmed(consent: Consent, outcome: Outcome) -> ToolResult:
    """The result when the user gave no yes: the user's own no is a plain result, a failure is ``isError``."""
    text = f"{consent.tool}: not confirmed: {outcome.why}; {_STAYS[consent.tool]}. {_NEXT[outcome.kind]}"
    data = {"confirmed": False, "outcome": outcome.kind, "reason": outcome.why}
    return ToolResult(text, data, is_error=outcome.kind not in ("declined", "cancelled", "unticked"))


class Questions:
    """The 2026-07-28 questions still open: ``requestState`` -> the call that asked, and what it asked.

    A state is a random token, good for one answer, bound to the tool and its arguments; this map is
    the only proof a retry answers a question this server put (a forged or replayed state finds nothing).
    """

    def __init__(self, token: Callable[[], str] = lambda: secrets.token_urlsafe(18)) -> None:
        self._token = token
        self._open: OrderedDict[str, tuple[str, str, Consent]] = OrderedDict()  # state -> (tool, arguments, consent)

    def ask(self, name: str, arguments: dict[str, Any], consent: Consent) -> str:
        state = self._token()
        self._open[state] = (name, _canonical(arguments), consent)
        while len(self._open) > MAX_QUESTIONS:
            self._open.popitem(last=False)
        return state

    def take(self, state: Any, name: str, arguments: dict[str, Any]) -> Consent | None:
        """The consent the state was issued for, once; None for a state this call cannot use."""
        asked = self._open.pop(state, None) if isinstance(state, str) else None
        if asked is None or asked[:2] != (name, _canonical(arguments)):
            return None
        return asked[2]

    def __len__(self) -> int:
        return len(self._open)


def _canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=repr)
