"""A user's memory as portable data: JSON Lines, with a receipt of what was exported.

People have a right to their data; an operator needs a way to hand it over (or to move it). One
user's export is one object per line:

    {"type": "export", "format": "v2_memory.export", "version": 1, "user_id": ..., "tenant_id": ..., "exported_at": ...}
    {"type": "record", "record_id": 1, "role": "user", "content": ..., "governance": {"verified": true, ...}}
    {"type": "fact", "key": "diet", "value": "vegetarian", "status": "confirmed", ...}
    {"type": "receipt", "records": 12, "facts": 2, "sha256": "..."}

Records are what the user (and the agent, to them) said, as stored — a record kept raw under the
"isolate" policy is exported raw: it is the user's own data, going to the user. Each record
carries governance's view of it (trusted or not, weight, superseded by which record). The window
and summary are derived from the records and are not exported. The receipt's ``sha256`` is the
digest of every line before it (each line's bytes and a newline), so a recipient can check that
nothing was lost or changed on the way. Lines are ASCII (JSON escapes for the rest): the same
bytes on every console and platform, and no stored control or bidi character reaches a terminal.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any, Iterator

from ..storage.ledger import scope_key
from ..validation import require_scope
from .inspector import Inspection

__all__ = ["export_user", "EXPORT_FORMAT"]

EXPORT_FORMAT = "v2_memory.export"


def export_user(opened: Inspection, user_id: str, *, tenant_id: str | None = None,
                now: datetime | None = None) -> Iterator[str]:
    """The user's export, one JSON line at a time (the receipt last)."""
    require_scope(user_id, tenant_id)
    records = opened.store.records(user_id, tenant_id=tenant_id)
    states = opened.ledger.states(r["record_id"] for r in records)
    facts = opened.ledger.facts(scope_key(user_id, tenant_id))
    digest = hashlib.sha256()
    header = {"type": "export", "format": EXPORT_FORMAT, "version": 1, "user_id": user_id, "tenant_id": tenant_id,
              "exported_at": (now or datetime.now(timezone.utc)).isoformat()}
    lines = [header]
    lines += [{"type": "record", **record, "governance": _state(states.get(record["record_id"]))} for record in records]
    lines += [{"type": "fact", **fact.to_dict()} for fact in facts]
    for item in lines:
        line = json.dumps(item, ensure_ascii=True, sort_keys=True)
        digest.update(line.encode("utf-8") + b"\n")
        yield line
    yield json.dumps({"type": "receipt", "records": len(records), "facts": len(facts), "sha256": digest.hexdigest()})


def _state(state: Any) -> dict[str, Any] | None:
    if state is None:
        return None
    return {"verified": state.verified, "base_weight": state.base_weight, "usage": state.usage,
            "conflict": state.conflict, "superseded_by": state.superseded_by, "isolated": state.isolated,
            "quoted": state.quoted}
