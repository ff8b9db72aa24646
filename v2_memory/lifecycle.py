"""A memory's life after it is written: the user confirms it, its session ends, its task
progresses and finishes; the read path lets it in or keeps it out accordingly.

    verify(record_id)    ──► a model-written memory the user confirmed: verified, full weight
    confirm_fact("diet") ──► a pending persona fact becomes a confirmed one (a persona line)
    forget(user, record) ──► one memory leaves every track, log and file (``erase_user``: all of them)
    start_task("paper")  ──► task memories enter only reads with task_id="paper", until the TTL
    set_task_progress(0.5) ─► they decay by (1 − completion)
    finish_task("paper") ──► weight 0: kept, never admitted; left out of the summary too
    end_session("s1")    ──► session-domain memories of s1 never enter a context again

Only the user confirms: a host calls ``verify`` and ``confirm_fact`` when the person said yes, never
on the model's word. ``MemoryManager`` takes these methods from ``Lifecycle``; what they change is
governance's (the ledger, ``governance/state.py``), saved in one transaction with the user's tracks.
"""
from __future__ import annotations

import threading
from datetime import timedelta
from typing import TYPE_CHECKING, Callable

from .governance.state import check_completion
from .messages import DEFAULT_USER, Fact, SessionInfo, TaskInfo
from .text.memo import forget_texts
from .validation import check_record_id, require_id, require_scope, require_text

if TYPE_CHECKING:
    from .governance.governor import Governor
    from .storage import VectorStore
    from .storage.contract import Storage
    from .tracks.cache import TrackCache

__all__ = ["Lifecycle"]


class Lifecycle:
    """The confirmation, forgetting, session and task calls of ``MemoryManager`` (a mixin: it
    uses the manager's lock, storage, track cache, governor and write log)."""

    _lock: threading.RLock
    _revoked: list[tuple[str, str | None, int]]  # taken back inside a batch: forgotten after its commit
    storage: Storage
    store: VectorStore
    _tracks: TrackCache
    governor: Governor
    _log: Callable[..., None]  # kind, user_id, tenant_id, session_id=None, **data -> one write-log event
    _not_in_batch: Callable[[str], None]

    def verify(self, record_id: int, *, user_id: str | None = None, tenant_id: str | None = None) -> bool:
        """A user confirmed this (model-written) memory: it becomes verified, full weight.

        Pass ``user_id`` (and ``tenant_id``) to make sure the record is that user's; returns False
        for an unknown record or another user's.
        """
        check_record_id(record_id)
        with self._lock, self.storage.transaction():
            record = self.store.get(record_id)
            if record is None or (user_id is not None and (record.get("tenant_id"), record["user_id"]) != require_scope(user_id, tenant_id)):
                return False
            verified = self.governor.verify(record_id)
            if verified:
                self._log("verify", record["user_id"], record.get("tenant_id"), record_id=record_id)
            return verified

    def confirm_fact(self, user_id: str, key: str, *, value: str | None = None, tenant_id: str | None = None) -> int:
        """The user confirmed a pending persona fact (``key`` like "diet"); return how many were confirmed."""
        scope = require_scope(user_id, tenant_id)
        require_text("key", key)
        with self._lock, self.storage.transaction():
            confirmed = self.governor.confirm_fact(scope, key, value)
            if confirmed:
                self._log("confirm_fact", scope[1], scope[0], key=key, value=value, confirmed=confirmed)
            return confirmed

    def facts(self, user_id: str = DEFAULT_USER, *, status: str | None = None, tenant_id: str | None = None) -> list[Fact]:
        """The user's persona facts (pending, confirmed and superseded unless ``status`` says)."""
        return self.governor.facts(require_scope(user_id, tenant_id), status)

    def _forget_revoked(self) -> None:
        """Forget what the user took back by speech (``WriteResult.revoked``), once it committed."""
        while self._revoked:
            user_id, tenant_id, record_id = self._revoked.pop(0)
            self.forget(user_id, record_id, tenant_id=tenant_id)

    def forget(self, user_id: str, record_id: int, *, tenant_id: str | None = None, scrub: bool = True) -> bool:
        """Remove one of the user's memories from every track (the summary is rebuilt without it).

        All or nothing, like ``erase_user``. Then the file is scrubbed: on SQLite and PostgreSQL
        that rebuilds every table (``VACUUM``), which costs what the whole store costs. A caller
        replacing a value rather than erasing it (the LangGraph store's put to an existing key)
        passes ``scrub=False``: the memory is gone from every track and log all the same, and its
        old bytes leave the file's free pages at the next scrubbing erasure."""
        if not isinstance(scrub, bool):
            raise TypeError(f"scrub must be True or False, got {scrub!r}")
        scope = require_scope(user_id, tenant_id)
        check_record_id(record_id)
        with self._lock:
            self._not_in_batch("forget")
            record = self.store.get(record_id)
            if record is None or (record.get("tenant_id"), record["user_id"]) != scope:
                return False
            with self._tracks.changing(scope):
                self._tracks.remove(scope, record_id, self.store)
                self.governor.forget(record_id)
                self.storage.intend("forget", user_id, tenant_id, record_id)
            try:
                self.storage.complete_intents(replacing=None if scrub else record_id)
            finally:
                forget_texts()
            return True

    def end_session(self, user_id: str, session_id: str, *, tenant_id: str | None = None) -> bool:
        """End a session: its session-domain memories never enter a context again."""
        require_id("session_id", session_id)
        scope = require_scope(user_id, tenant_id)
        with self._lock, self._tracks.changing(scope):
            ended = self.governor.end_session(scope, session_id)
            if ended:
                self._log("end_session", user_id, tenant_id, session_id)
            return ended

    def start_task(self, user_id: str, task_id: str, *, ttl: timedelta | None = None,
                   tenant_id: str | None = None) -> TaskInfo:
        """Start a task; its memories enter only reads with this ``task_id`` until the TTL runs out."""
        require_id("task_id", task_id)
        scope = require_scope(user_id, tenant_id)
        with self._lock, self._tracks.changing(scope):
            info = self.governor.start_task(scope, task_id, ttl)
            self._log("start_task", user_id, tenant_id, task_id=task_id, expires_at=info.expires_at.isoformat())
            return info

    def set_task_progress(self, user_id: str, task_id: str, completion: float, *,
                          tenant_id: str | None = None) -> TaskInfo:
        """Record how far a task is (0..1); task memories decay by (1 − completion)."""
        scope = require_scope(user_id, tenant_id)
        check_completion(completion)  # before the transaction: a bad number changes nothing
        with self._lock, self._tracks.changing(scope):
            info = self.governor.set_task_progress(scope, task_id, completion)
            self._log("task_progress", user_id, tenant_id, task_id=task_id, completion=info.completion)
            return info

    def finish_task(self, user_id: str, task_id: str, *, tenant_id: str | None = None) -> TaskInfo:
        """Mark a task done: completion 1, so its memories' weight becomes 0 (kept, never admitted)."""
        scope = require_scope(user_id, tenant_id)
        with self._lock, self._tracks.changing(scope):
            info = self.governor.finish_task(scope, task_id)
            self._log("finish_task", user_id, tenant_id, task_id=task_id)
            return info

    def session(self, user_id: str, session_id: str, *, tenant_id: str | None = None) -> SessionInfo | None:
        """The session's state (start, last message, deadline, end), or None if never seen."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._tracks.ensure(scope)
            return self.governor.session(scope, session_id)

    def task(self, user_id: str, task_id: str, *, tenant_id: str | None = None) -> TaskInfo | None:
        """The task's state (deadline, completion, finished), or None if never started."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._tracks.ensure(scope)
            return self.governor.task(scope, task_id)
