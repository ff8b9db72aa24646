"""Session and task state with time-to-live, expired lazily from the clock.

The manual's version starts a ``threading.Timer`` per task and got duplicate firings under load.
Here nothing runs in the background: every question ("is this session live?") compares the
clock with the deadline, under a lock. A session lives ``session_ttl`` after its last message
and ends for good with ``end_session``; a task lives ``task_ttl`` after it starts, and carries a
completion ratio that time decay uses (a finished task's memories weigh nothing).
"""
from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Callable, Hashable

from ..errors import V2MemoryError
from ..messages import SessionInfo, TaskInfo

__all__ = ["SessionInfo", "TaskInfo", "StateTracker", "UnknownTaskError", "check_completion"]


class UnknownTaskError(V2MemoryError, KeyError):
    """A task was updated before ``start_task``."""


class StateTracker:
    """Per-scope sessions and tasks. Thread-safe; no timers."""

    def __init__(
        self,
        clock: Callable[[], datetime],
        session_ttl: timedelta = timedelta(minutes=30),
        task_ttl: timedelta = timedelta(hours=24),
    ) -> None:
        if session_ttl <= timedelta(0) or task_ttl <= timedelta(0):
            raise ValueError("TTLs must be positive")
        self.clock = clock
        self.session_ttl = session_ttl
        self.task_ttl = task_ttl
        self._lock = threading.RLock()
        # scope -> session_id -> SessionInfo ; scope -> task_id -> TaskInfo
        self._sessions: dict[Hashable, dict[str, SessionInfo]] = {}
        self._tasks: dict[Hashable, dict[str, TaskInfo]] = {}

    # -- sessions ------------------------------------------------------------------------------
    def touch_session(self, scope: Hashable, session_id: str) -> SessionInfo:
        """A message arrived in the session: start it, or slide its deadline (ended stays ended)."""
        with self._lock:
            now = self.clock()
            sessions = self._sessions.setdefault(scope, {})
            info = sessions.get(session_id)
            if info is None or info.status(now) == "expired":
                info = sessions[session_id] = SessionInfo(session_id, now, now, now + self.session_ttl)
            elif info.ended_at is None:
                info.last_seen, info.expires_at = now, now + self.session_ttl
            return info

    def end_session(self, scope: Hashable, session_id: str) -> bool:
        with self._lock:
            info = self._sessions.get(scope, {}).get(session_id)
            if info is None or info.ended_at is not None:
                return False
            info.ended_at = self.clock()
            return True

    def session_status(self, scope: Hashable, session_id: str) -> str:
        """active | ended | expired | unknown."""
        with self._lock:
            info = self._sessions.get(scope, {}).get(session_id)
            return info.status(self.clock()) if info is not None else "unknown"

    def sessions(self, scope: Hashable) -> list[SessionInfo]:
        with self._lock:
            return list(self._sessions.get(scope, {}).values())

    # -- tasks ---------------------------------------------------------------------------------
    def start_task(self, scope: Hashable, task_id: str, ttl: timedelta | None = None) -> TaskInfo:
        """Start (or restart) a task that lives ``ttl`` (default ``task_ttl``) from now."""
        if ttl is not None and (not isinstance(ttl, timedelta) or ttl <= timedelta(0)):
            raise ValueError(f"ttl must be a positive timedelta, got {ttl!r}")
        with self._lock:
            now = self.clock()
            info = TaskInfo(task_id, now, now + (ttl if ttl is not None else self.task_ttl))
            self._tasks.setdefault(scope, {})[task_id] = info
            return info

    def set_progress(self, scope: Hashable, task_id: str, completion: float) -> TaskInfo:
        check_completion(completion)
        with self._lock:
            info = self._task(scope, task_id)
            info.completion = float(completion)
            return info

    def finish_task(self, scope: Hashable, task_id: str) -> TaskInfo:
        with self._lock:
            info = self._task(scope, task_id)
            info.completion, info.finished_at = 1.0, self.clock()
            return info

    def task(self, scope: Hashable, task_id: str) -> TaskInfo | None:
        with self._lock:
            return self._tasks.get(scope, {}).get(task_id)

    def tasks(self, scope: Hashable) -> list[TaskInfo]:
        with self._lock:
            return list(self._tasks.get(scope, {}).values())

    def _task(self, scope: Hashable, task_id: str) -> TaskInfo:
        info = self._tasks.get(scope, {}).get(task_id)
        if info is None:
            raise UnknownTaskError(f"no task {task_id!r} for this user; start_task() it first")
        return info

    def load(self, scope: Hashable, sessions: list[SessionInfo], tasks: list[TaskInfo]) -> None:
        """Replace the scope's sessions and tasks (as read back from storage)."""
        with self._lock:
            self._sessions.pop(scope, None)
            self._tasks.pop(scope, None)
            if sessions:
                self._sessions[scope] = {info.session_id: info for info in sessions}
            if tasks:
                self._tasks[scope] = {info.task_id: info for info in tasks}

    def scopes(self) -> list[Hashable]:
        with self._lock:
            return list(dict.fromkeys([*self._sessions, *self._tasks]))

    def erase(self, scope: Hashable) -> int:
        """Forget every session and task of the scope; return how many."""
        with self._lock:
            return len(self._sessions.pop(scope, {})) + len(self._tasks.pop(scope, {}))


def check_completion(completion: object) -> None:
    """A task's completion: a number within [0, 1] (NaN is not within anything)."""
    if not isinstance(completion, (int, float)) or isinstance(completion, bool) or not 0.0 <= completion <= 1.0:
        raise ValueError(f"completion must be within [0, 1], got {completion!r}")
