"""What a ``MemoryManager`` is, for a person looking at it: where its memory lives, how it reads,
and how healthy that memory is.

    >>> from v2_memory import MemoryManager
    >>> MemoryManager(store_path=None)   # a notebook shows it as an HTML table
    MemoryManager(backend='json', path='in memory', users=[], threshold=0.2, scorer='article', window_size=4, governance='on')

Looking changes nothing: no read is logged and a closed manager says it is closed, and why,
instead of raising. ``MemoryManager`` takes these from ``Description``.
"""
from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .display import Displayed, Shown
from .errors import StoreClosedError
from .governance.decay import DecayRates
from .governance.governor import GovernancePolicy
from .observe.health import HealthReport, health_report
from .validation import require_scope

if TYPE_CHECKING:
    from .governance.governor import Governor
    from .observe.audit import AuditLog
    from .storage import VectorStore
    from .storage.contract import Storage
    from .tracks.cache import TrackCache
    from .tracks.window import RecentWindow

__all__ = ["Description"]


class Description(Displayed):
    """The properties, repr and health of ``MemoryManager`` (a mixin over the manager's parts)."""

    _lock: threading.RLock
    storage: Storage
    store: VectorStore
    governor: Governor
    window: RecentWindow
    threshold: float
    audit: AuditLog | None
    _tracks: TrackCache
    _now: Callable[[], datetime]

    @staticmethod
    def default_rates() -> DecayRates:
        """The decay rates a manager uses unless its ``GovernancePolicy`` says otherwise."""
        return GovernancePolicy().rates

    @property
    def window_size(self) -> int:
        return self.window.size

    @property
    def policy(self) -> GovernancePolicy:
        return self.governor.policy

    @property
    def backend(self) -> str:
        """Which backend holds the memory: "json", "sqlite", "postgres" (or a plugged-in store's)."""
        return self.storage.backend

    @property
    def path(self) -> Path | str:
        """The store's file, a server's URL with its password masked, or "in memory"."""
        where = self.storage.where
        return "in memory" if where == ":memory:" else where

    @property
    def scorer(self) -> str:
        """The long-term store's scorer ("article", "bm25", or the store's class name)."""
        return getattr(getattr(self.store, "scorer", None), "name", None) or type(self.store).__name__

    @property
    def governance(self) -> str:
        """"on" when the rules decide what enters a context, "off" for the article's behaviour."""
        return "on" if self.policy.enabled else "off"

    @property
    def closed(self) -> bool:
        """Whether the store is closed (by ``close()``, or a later opening of the same store)."""
        return self.storage.closed

    @property
    def closed_reason(self) -> str | None:
        """Why the manager is closed, in words (the repr's ``closed=...``), or None while open."""
        return (self.storage.closed_reason or "it was closed") if self.storage.closed else None

    def users(self, *, tenant_id: str | None = None) -> list[str]:
        """Every user (under ``tenant_id``) with something in any track, in first-seen order."""
        with self._lock:
            seen = dict.fromkeys(self.store.users(tenant_id=tenant_id))  # by first stored record
            seen.update(dict.fromkeys(user for tenant, user in self.storage.track_scopes() if tenant == tenant_id))
            seen.update(dict.fromkeys(user for tenant, user in self._tracks.unsaved() if tenant == tenant_id))
        return list(seen)

    _USERS_SHOWN = 10  # a store may hold thousands of users; a repr names the first few

    def _shown(self) -> Shown:
        """Where memory lives and how it reads: backend, path, users, threshold, scorer.

        Looking changes nothing: no read is logged, nothing is opened, and a closed manager says it
        is closed (and why) instead of raising."""
        fields: list[tuple[str, Any]] = [("backend", self.backend), ("path", self.path)]
        try:
            users = None if self.storage.closed else self.users()
        except StoreClosedError:  # closed by another opening between the check and the read
            users = None
        if users is None:
            fields.insert(0, ("closed", self.closed_reason or "it was closed"))
        else:
            more = len(users) - self._USERS_SHOWN
            fields.append(("users", tuple(users[:self._USERS_SHOWN]) + ((f"… and {more} more",) if more > 0 else ())))
        fields += [("threshold", self.threshold), ("scorer", self.scorer), ("window_size", self.window_size),
                   ("governance", self.governance)]
        return Shown("MemoryManager", tuple(fields))


    def health(self, user_id: str | None = None, *, tenant_id: str | None = None) -> HealthReport:
        """The memory health dashboard (pollution rate, decay efficiency, leakage, ...) right now:
        of the whole store, or, given ``user_id`` (and ``tenant_id``), of that user's memory only."""
        scope = require_scope(user_id, tenant_id) if user_id is not None else None
        with self._lock:
            self.storage.book.settle(self.storage)  # this process's waiting reads are part of the picture
        with self._lock, self.storage.consistent_reads():  # one picture, while other processes write
            writes = self.audit.writes() if self.audit is not None else []
            reads = self.audit.reads() if self.audit is not None else []
            if scope is None:
                records, states = self.store.all_records(), self.governor.all_states()
            else:  # only the user's records and events: another user's counts are theirs
                records = self.store.records(scope[1], tenant_id=scope[0])
                states = self.governor.states(r["record_id"] for r in records)
                writes, reads = ([e for e in log if (e.tenant_id, e.user_id) == scope] for log in (writes, reads))
            return health_report(records, states, writes, reads, rates=self.policy.rates, now=self._now())

