"""The memory tools an MCP client may call, over one scope fixed when the server starts.

``mcp_server.py`` speaks the protocol; this module is what the tools *do*: each one checks its
arguments against its JSON Schema, makes one ``MemoryManager`` call for the server's user (and
tenant), and answers with a ``ToolResult`` (text for the model, the same data as JSON).

The scope is not an argument. No tool takes ``user_id`` or ``tenant_id``; a call that names one,
or any argument its schema does not list, is refused — so the model can never choose whose memory
it reads or writes. Erasing a whole user is an operator's command (``v2-memory erase-user``), not a
tool. Record ids of another user's memories get the same answer as ids that do not exist.

Governance holds at this door too: ``recall`` and ``explain`` show a rejected memory's verdict and
numbers, never its text — the model reads only what admission let in.

The model may write (``remember``, ``forget``) and read; it may not confirm. ``confirm_fact`` and
``verify`` first say what the user would be confirming (``consent``: a ``Consent``, or the refusal
when there is nothing to confirm), the server asks the user (``mcp_elicit.py``), and only their yes
runs ``carry_out`` — on exactly what they were shown. ``call`` runs a tool at once: it is the host's
act (or the server's, trusting the host, with ``--trust-host-confirmation``), never the model's.
"""
from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import V2MemoryError
from ..governance.admission import Admission, Explanation
from ..governance.persona import SINGLE_VALUED_KEYS, render_fact
from ..manager import MemoryManager
from ..messages import DOMAINS, Message
from ..text.quoting import one_line
from ..validation import require_scope

__all__ = ["ToolResult", "Consent", "Tool", "MemoryTools", "TOOLS", "check_arguments", "quoted"]

MAX_TEXT = 20_000  # characters of a message or query
MAX_ID = 200  # characters of a session or task id, or a fact key
MAX_RECORD_ID = 2**63 - 1  # SQLite's largest integer: a bigger id cannot name a memory
# An argument whose name looks like a scope (user, tenant, owner, account) gets the scope's refusal.
_SCOPE_LIKE = re.compile(r"user|tenant|owner|account|principal|identity", re.I)


@dataclass(frozen=True)
class ToolResult:
    """What a tool call answers: text for the model, the same as JSON, and whether it failed."""

    text: str
    data: dict[str, Any] | None = None
    is_error: bool = False

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``CallToolResult``: ``content`` (one text block), ``structuredContent``, ``isError``."""
        result: dict[str, Any] = {"content": [{"type": "text", "text": self.text}], "isError": self.is_error}
        if self.data is not None:
            result["structuredContent"] = self.data
        return result


@dataclass(frozen=True)
class Consent:
    """What a confirming tool must ask the user before it acts, and what their yes will apply to.

    ``lines`` are what the user reads, one line each (text quoted, line breaks escaped); ``targets``
    pin the yes to them: the ``(key, value)`` facts shown, or the one record id. A fact that turns
    pending while the user is being asked is not confirmed by a yes to the question before it.
    """

    tool: str  # confirm_fact or verify
    subject: str  # "this fact about you", ...
    lines: tuple[str, ...]
    targets: tuple[Any, ...]


class ToolError(ValueError):
    """A call the tool refuses (a bad or unknown argument): it becomes a result with ``isError``."""


def quoted(text: str) -> str:
    """Someone's text as one quoted line: JSON's escapes, then every line break ``one_line`` knows.

    >>> quoted('fine"\\nConfirm: yes\\u2028')
    '"fine\\\\"\\\\nConfirm: yes\\\\u2028"'
    """
    return one_line(json.dumps(text, ensure_ascii=False))


def _string(description: str, *, max_length: int = MAX_ID, enum: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description, "minLength": 1, "maxLength": max_length}
    if enum:
        schema["enum"] = list(enum)
    return schema


def _integer(description: str, minimum: int, maximum: int, default: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "description": description, "minimum": minimum, "maximum": maximum}
    if default is not None:
        schema["default"] = default
    return schema


_SESSION = _string("the conversation session this belongs to (pass the same id on writes and reads)")
_TASK = _string("the task this belongs to; task memories enter only reads with the same task_id")
_DOMAIN = _string("persona (the user's stable preferences), session (only this session) or task (only this task); "
                  "omit for ordinary conversation memory", enum=DOMAINS)
_QUERY = _string("what the memory should be relevant to, usually the user's latest message", max_length=MAX_TEXT)
_TOP_K = _integer("how many long-term memories at most (default 3)", 1, 20, 3)
_RECORD = _integer("a record id, as remember or recall returned it", 1, MAX_RECORD_ID)
_READ = {"query": _QUERY, "session_id": _SESSION, "task_id": _TASK, "domain": _DOMAIN, "top_k": _TOP_K}


@dataclass(frozen=True)
class Tool:
    """One tool: its name, what it tells the model, its arguments (JSON Schema properties)."""

    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    hints: dict[str, bool] = field(default_factory=dict)  # MCP tool annotations (readOnlyHint, ...)

    def input_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": self.properties, "required": list(self.required),
                "additionalProperties": False}

    def to_mcp(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema(),
                "annotations": {"openWorldHint": False, **self.hints}}


_SCOPE_NOTE = " This server serves one user, fixed when it started; no tool takes a user or tenant."
TOOLS: tuple[Tool, ...] = (
    Tool("remember", "Store one message in the user's memory: what the user said (role user) or what you, "
         "the assistant, replied (role assistant; stored unverified, weight 0.01, until the user verifies it). "
         "Returns the record id, whether it was trusted, and any persona fact it declared (pending until the user "
         "confirms it), with the question to ask."
         + _SCOPE_NOTE,
         {"text": _string("the message, as said", max_length=MAX_TEXT),
          "role": _string("who said it: user or assistant", enum=("user", "assistant")),
          "session_id": _SESSION, "task_id": _TASK, "domain": _DOMAIN},
         ("text", "role"), {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}),
    Tool("recall", "Build the governed context for a query: the user's confirmed facts, summary, recent messages "
         "and the long-term memories admission let in; and, for every candidate memory, whether it was admitted "
         "and why (rejected memories show their reasons, never their text). Use it before answering." + _SCOPE_NOTE,
         _READ, ("query",), {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}),
    Tool("explain", "Dry run of recall: for every candidate memory, admitted or rejected with its reasons and "
         "numbers (similarity, weight, effective score, threshold), and which summarized memories this read may "
         "see. Changes nothing." + _SCOPE_NOTE, _READ, ("query",), {"readOnlyHint": True}),
    Tool("forget", "Remove one of the user's memories (by record id) from every track and log. Cannot be "
         "undone." + _SCOPE_NOTE, {"record_id": _RECORD}, ("record_id",),
         {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}),
    Tool("confirm_fact", "Ask the user to confirm a pending persona fact (key like 'diet', as remember returned it; "
         "give value to ask about only that value). Only the user can confirm: the server shows them the fact and "
         "asks them directly (MCP elicitation) or the host asks them; on their yes it may enter contexts. If they "
         "decline, or nobody can ask them, it stays pending and the result says why." + _SCOPE_NOTE,
         {"key": _string("the fact's key, e.g. diet"), "value": _string("only the pending fact with this value")},
         ("key",), {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}),
    Tool("verify", "Ask the user to confirm one of your stored replies (by record id). Only the user can verify: "
         "the server shows them the reply's text and asks them directly (MCP elicitation) or the host asks them; "
         "on their yes it becomes verified, full weight. Otherwise it stays unverified and the result says why."
         + _SCOPE_NOTE, {"record_id": _RECORD}, ("record_id",),
         {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}),
    Tool("health", "The user's memory health: pollution rate, decay efficiency, cross-domain leakage and more, "
         "each with its value, status and rule." + _SCOPE_NOTE, {}, (), {"readOnlyHint": True}),
)
_BY_NAME = {tool.name: tool for tool in TOOLS}


def check_arguments(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the tool's schema allows them, or ToolError naming the first problem."""
    for name in arguments:
        if name not in tool.properties:
            raise ToolError(_unknown_argument(tool, name))
    missing = [name for name in tool.required if name not in arguments]
    if missing:
        raise ToolError(f"{tool.name} needs {', '.join(missing)}")
    checked = {}
    for name, value in arguments.items():
        checked[name] = _check_value(name, tool.properties[name], value)
    return checked


def _unknown_argument(tool: Tool, name: str) -> str:
    shown = json.dumps(name[:40], ensure_ascii=False) + ("…" if len(name) > 40 else "")
    if _SCOPE_LIKE.search(name):
        return (f"argument {shown} is not allowed: whose memory this server reads and writes is fixed when it starts, "
                "and no tool call can change it")
    takes = ", ".join(tool.properties) or "no arguments"
    return f"unknown argument {shown} for {tool.name}; it takes: {takes}"


def _check_value(name: str, schema: dict[str, Any], value: Any) -> Any:
    """One argument against its schema: a string (length, enum) or an integer (range)."""
    if schema["type"] == "integer":
        if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_RECORD_ID:
            value = int(value)  # JSON Schema: 3.0 is an integer
        if not isinstance(value, int) or isinstance(value, bool):
            raise ToolError(f"{name} must be an integer, got {_json_type(value)}")
        if not schema["minimum"] <= value <= schema["maximum"]:
            raise ToolError(f"{name} must be between {schema['minimum']} and {schema['maximum']}")
        return value
    if not isinstance(value, str):
        hint = " (omit it instead)" if value is None else ""
        raise ToolError(f"{name} must be a string, got {_json_type(value)}{hint}")
    if not value.strip() or len(value) > schema["maxLength"]:
        raise ToolError(f"{name} must be 1 to {schema['maxLength']} characters, not blank")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"{name} must be one of {', '.join(schema['enum'])}")
    return value


def _json_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
             dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


class MemoryTools:
    """The tools over ``manager``, for the one scope ``(tenant_id, user_id)`` given here."""

    def __init__(self, manager: MemoryManager, user_id: str, tenant_id: str | None = None) -> None:
        self.tenant_id, self.user_id = require_scope(user_id, tenant_id)
        self.manager = manager
        self._calls: dict[str, Callable[..., ToolResult]] = {
            "remember": self.remember, "recall": self.recall, "explain": self.explain, "forget": self.forget,
            "confirm_fact": self.confirm_fact, "verify": self.verify, "health": self.health}

    @staticmethod
    def find(name: str) -> Tool | None:
        return _BY_NAME.get(name)

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Check the arguments, run the tool; a refusal or a library error is a result with ``is_error``."""
        return self._guarded(name, lambda: self._calls[name](**check_arguments(_BY_NAME[name], arguments)))

    def consent(self, name: str, arguments: dict[str, Any]) -> Consent | ToolResult:
        """For ``confirm_fact`` and ``verify``: what the user must be asked, or the refusal (bad arguments,
        nothing pending, no such record) to answer without asking anyone."""
        asks = {"confirm_fact": self._fact_consent, "verify": self._reply_consent}[name]
        return self._guarded(name, lambda: asks(**check_arguments(_BY_NAME[name], arguments)))

    def carry_out(self, consent: Consent) -> ToolResult:
        """The user said yes: confirm exactly the facts, or verify exactly the record, they were shown."""
        def run() -> ToolResult:
            if consent.tool == "verify":
                return self.verify(*consent.targets)
            confirmed = sum(self.manager.confirm_fact(self.user_id, key, value=value, tenant_id=self.tenant_id)
                            for key, value in consent.targets)
            key = consent.targets[0][0]
            if not confirmed:
                return self._no_pending(key, None, "; it changed while the user was asked, nothing was confirmed")
            return ToolResult(f"confirmed {confirmed} fact(s) for {key!r}: the user said yes",
                              {"key": key, "confirmed": confirmed})
        return self._guarded(consent.tool, run)

    def _guarded(self, name: str, run: Callable[[], Any]) -> Any:
        try:
            return run()
        except (ToolError, V2MemoryError, ValueError, TypeError) as exc:
            return ToolResult(f"{name} refused: {exc}", {"error": str(exc)}, is_error=True)
        except (OSError, sqlite3.Error) as exc:  # the store failed (disk full, busy too long): nothing was done
            message = f"the memory store failed ({type(exc).__name__}: {str(exc)[:200]}); nothing changed, try again"
            return ToolResult(f"{name} failed: {message}", {"error": message}, is_error=True)

    # -- the tools ---------------------------------------------------------------------------------
    def remember(self, text: str, role: str, session_id: str | None = None, task_id: str | None = None,
                 domain: str | None = None) -> ToolResult:
        written = self.manager.add(Message(role, text, self.user_id, session_id=session_id, task_id=task_id,
                                           domain=domain, tenant_id=self.tenant_id))
        data = written.to_dict()
        where = f"record {written.record_id}" if written.record_id is not None else "not kept in long-term memory"
        lines = [f"remembered: {where} ({', '.join(written.stored_in) or 'no track'}); "
                 f"verified {'yes' if written.verified else 'no'}, weight {written.weight:.2f}",
                 f"reasons: {', '.join(written.reasons) or 'none'}"]
        lines += [f"pending fact: {render_fact(f['key'], f['value'], f['polarity'])} (confirm_fact key={f['key']!r} "
                  "once the user confirms)" for f in written.facts if f.get("status") == "pending"]
        if written.question:
            lines.append(f"ask the user: {written.question}")
        return ToolResult("\n".join(lines), data)

    def recall(self, query: str, session_id: str | None = None, task_id: str | None = None,
               domain: str | None = None, top_k: int = 3) -> ToolResult:
        scope = {"tenant_id": self.tenant_id, "session_id": session_id, "task_id": task_id, "domain": domain}
        # The same candidates build_context judges (it looks past the window by window_size).
        explanation = self.manager.explain(query, self.user_id, top_k + self.manager.window_size, **scope)
        context = self.manager.build_context(query, self.user_id, top_k, **scope)
        data = {"context": context, **_verdicts(explanation)}
        text = (context or "(nothing in memory for this query)") + "\n\ncandidates:\n" + _verdict_lines(explanation)
        return ToolResult(text, data)

    def explain(self, query: str, session_id: str | None = None, task_id: str | None = None,
                domain: str | None = None, top_k: int = 3) -> ToolResult:
        explanation = self.manager.explain(query, self.user_id, top_k, tenant_id=self.tenant_id,
                                           session_id=session_id, task_id=task_id, domain=domain)
        data = {**_verdicts(explanation), "summary": [entry.to_dict() for entry in explanation.summary]}
        route = explanation.route
        text = f"route: {route.kind} ({route.reason})\ncandidates:\n{_verdict_lines(explanation)}"
        return ToolResult(text, data)

    def forget(self, record_id: int) -> ToolResult:
        if not self.manager.forget(self.user_id, record_id, tenant_id=self.tenant_id):
            return _no_such_record(record_id)
        return ToolResult(f"forgot record {record_id}: removed from every track and log", {"forgotten": record_id})

    def confirm_fact(self, key: str, value: str | None = None) -> ToolResult:
        confirmed = self.manager.confirm_fact(self.user_id, key, value=value, tenant_id=self.tenant_id)
        if not confirmed:
            return self._no_pending(key, value)
        return ToolResult(f"confirmed {confirmed} fact(s) for {key!r}", {"key": key, "confirmed": confirmed})

    def verify(self, record_id: int) -> ToolResult:
        if not self.manager.verify(record_id, user_id=self.user_id, tenant_id=self.tenant_id):
            return _no_such_record(record_id)
        return ToolResult(f"verified record {record_id}: full weight", {"verified": record_id})

    def _fact_consent(self, key: str, value: str | None = None) -> Consent | ToolResult:
        pending = [f for f in self.manager.facts(self.user_id, status="pending", tenant_id=self.tenant_id)
                   if f.key == key and value in (None, f.value)]
        if key in SINGLE_VALUED_KEYS:
            pending = pending[-1:]  # as the ledger does: one device, one name; only the newest value
        if not pending:
            return self._no_pending(key, value)
        shown = {(f.key, f.value): one_line(render_fact(f.key, f.value, f.polarity)) for f in pending}
        subject = "this fact about you" if len(shown) == 1 else "these facts about you"
        return Consent("confirm_fact", subject, tuple(shown.values()), tuple(shown))

    def _reply_consent(self, record_id: int) -> Consent | ToolResult:
        record = self.manager.store.get(record_id)
        if record is None or (record.get("tenant_id"), record["user_id"]) != (self.tenant_id, self.user_id):
            return _no_such_record(record_id)
        who = "your assistant's reply" if record["role"] == "assistant" else f"a {record['role']} message"
        return Consent("verify", f"{who} (record {record_id}) as true", (quoted(record["content"]),), (record_id,))

    def _no_pending(self, key: str, value: str | None, why: str = "") -> ToolResult:
        pending = sorted({f.key for f in self.manager.facts(self.user_id, status="pending", tenant_id=self.tenant_id)})
        message = f"no pending fact {key!r}" + (f" with value {value!r}" if value is not None else "") + why
        return ToolResult(f"confirm_fact refused: {message}; pending keys: {', '.join(pending) or 'none'}",
                          {"error": message, "pending": pending}, is_error=True)

    def health(self) -> ToolResult:
        report = self.manager.health(user_id=self.user_id, tenant_id=self.tenant_id)
        lines = [f"{m.name}: {m.shown()} ({m.status}; {m.rule})" for m in report.metrics]
        return ToolResult(f"overall: {report.status}\n" + "\n".join(lines), report.to_dict())

    def facts(self) -> list[dict[str, Any]]:
        """The user's confirmed persona facts (the ``memory://facts`` resource)."""
        return [fact.to_dict() for fact in self.manager.facts(self.user_id, status="confirmed", tenant_id=self.tenant_id)]


def _no_such_record(record_id: int) -> ToolResult:
    # subtle: one answer for "no such id" and "another user's id", so the refusal reveals nothing.
    message = f"no memory with record id {record_id} in this user's memory; nothing changed"
    return ToolResult(message, {"error": message}, is_error=True)


def _verdict(admission: Admission) -> dict[str, Any]:
    """An admission as the model may see it: the text only when it was admitted."""
    shown = admission.to_dict()
    if not admission.admitted:
        del shown["content"]
    return shown


def _verdicts(explanation: Explanation) -> dict[str, Any]:
    return {"query": explanation.query, "route": explanation.route.to_dict(),
            "candidates": [_verdict(a) for a in explanation]}


def _verdict_lines(explanation: Explanation) -> str:
    lines = []
    for a in explanation:
        numbers = f"similarity {a.similarity:.3f}, weight {a.weight:.2f}, effective {a.effective:.3f}"
        verdict = "admitted" if a.admitted else f"rejected: {', '.join(a.reasons)}"
        lines.append(f"- record {a.record_id}: {verdict} ({numbers})")
    return "\n".join(lines) or "(no candidate memories)"
