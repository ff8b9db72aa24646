"""What an agent would recall, looked at from outside: governance's verdicts on a store, read-only.

``MemoryManager.explain`` answers the same question from inside a running agent; this module
answers it for an operator holding only the store (``v2-memory recall``). It opens nothing for
writing: the records, ledger and tracks come from an ``Inspection``, the sessions and tasks are
read back into a governor of its own, and ``Governor.explain`` has no side effects — no read is
logged, no weight reinforced, so looking never changes what the agent will see.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

from ..governance.admission import Explanation
from ..governance.governor import GovernancePolicy, Governor
from ..storage.track_tables import TrackTables
from ..validation import check_threshold, check_top_k, require_scope
from .inspector import Inspection

__all__ = ["recall"]


def recall(opened: Inspection, query: str, user_id: str, *, tenant_id: str | None = None, top_k: int = 3,
           threshold: float = 0.2, session_id: str | None = None, task_id: str | None = None,
           clock: Callable[[], datetime] | None = None) -> Explanation:
    """Every long-term candidate for ``query`` in the user's scope, admitted or rejected, as the
    default governance policy judges it now (the manager's default threshold, 0.2)."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    scope = require_scope(user_id, tenant_id)
    check_top_k(top_k)
    threshold = check_threshold(threshold, allow_none=False)
    now = clock or (lambda: datetime.now(timezone.utc))
    governor = Governor(opened.store, opened.ledger, GovernancePolicy(), now)
    tracks = TrackTables(opened.ledger.db).load(scope)  # sessions and tasks decide what this read may see
    governor.state.load(scope, tracks.sessions, tracks.tasks)
    return governor.explain(query, scope, threshold=threshold, top_k=top_k, session_id=session_id, task_id=task_id)
