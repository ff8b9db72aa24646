"""Audit events: what the manager writes into the logs, and never raw personal data.

Diagnosis starts from the write side (most pollution is written in, not searched up), so every
write is logged with its source, trust, weight and the policy's reasons, and every read with its
route, every candidate's numbers and verdict, and the context that was built. The files
themselves are storage's (``storage/audit_log.py``); this module builds the events.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from ..context import ContextItem, render_text
from ..text.sensitive import find_sensitive, redact
from ..storage.audit_log import AuditEvent, JsonlAuditLog, TornLogLineWarning, user_hash
from ..text.memo import UserMemo, text_cache
from ..text.tokenizer import token_count

AuditLog = JsonlAuditLog  # the public name: the logs a manager writes unless a backend keeps its own

__all__ = ["AuditEvent", "AuditLog", "TornLogLineWarning", "user_hash", "write_event", "read_event"]


def _safe(text: str | None) -> str | None:
    """Text with personal data replaced by its kind: what a log may hold."""
    return _redacted(text) if text else text


@text_cache(maxsize=1024)  # every read logs its candidates; the same memories come back each time
def _redacted(text: str) -> str:
    return redact(text, find_sensitive(text))


def write_event(message: Any, result: Any) -> AuditEvent:
    """A write-log event for ``MemoryManager.add``: the text as stored (never raw sensitive data)."""
    data = {**result.to_dict(), "role": message.role, "task_id": message.task_id, "content": _safe(message.content)}
    data["sensitive"] = [finding["kind"] for finding in result.sensitive]  # kinds only in logs
    return AuditEvent("write", message.timestamp.isoformat(), message.user_id, message.tenant_id,
                      message.session_id, data)


# Most of every read's candidates are rejected: the log keeps their numbers, verdicts and record
# ids, not their text (the write log has it; the inspector shows it from there).


def read_event(explanation: Any, time: str, scope: tuple[str | None, str], read_scope: Mapping[str, Any],
               call: str, context: Sequence[ContextItem] | None = None, shown: Sequence[int] = (),
               memo: UserMemo | None = None) -> AuditEvent:
    """A read-log event: the route, every candidate's numbers and verdict, and the context; the
    text of the admitted candidates only (a rejected one's is in the write log, under its id).

    ``context`` is the built context's items: logged as ``build_context`` writes them in text form,
    each item's memory text redacted first, one text at a time (cached: a memory that comes back is
    not scanned again; a multi-line memory is scanned whole, before it is put on one line). A stored
    memory's redacted text is kept in ``memo`` with the user's other readings, when given (not a
    summary's: each write makes a new one, and a user's readings grow only with their memories)."""
    def safe(text: str | None) -> str | None:
        return memo.reading(scope, "redacted", text, _redacted) if memo is not None and text else _safe(text)

    def candidate(a: Any) -> dict[str, Any]:
        entry: dict[str, Any] = {"record_id": a.record_id}
        if a.admitted or (a.record.get("metadata") or {}).get("split_from") is not None:
            entry["content"] = safe(a.record.get("content"))  # a split record's text is in no write event
        entry["source"] = a.record.get("source")
        entry.update((name, a.record[name]) for name in ("domain", "session_id") if a.record.get(name) is not None)
        entry.update(similarity=round(a.similarity, 6), weight=round(a.weight, 6), effective=round(a.effective, 6),
                     admitted=a.admitted, reasons=list(a.reasons))
        return entry

    candidates = [candidate(a) for a in explanation.admissions]
    data: dict[str, Any] = {"call": call, "query": _safe(explanation.query), "route": explanation.route.to_dict(),
                            "task_id": read_scope.get("task_id"), "domain": read_scope.get("domain"),
                            "candidates": candidates, "admitted": [a.record_id for a in explanation.admitted],
                            "shown": sorted(set(shown))}
    if context is not None:
        text = render_text(context)
        data.update(context=render_text([replace(item, text=safe(item.text) if item.record_id is not None else _safe(item.text))
                                         for item in context]),
                    context_chars=len(text), context_tokens=token_count(text))
    return AuditEvent("read", time, scope[1], scope[0], read_scope.get("session_id"), data)
