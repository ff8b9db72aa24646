"""The short-term tracks on disk: each scope's recent window, summary, sessions and tasks.

The window, the summary and session/task state are small per user (a few rows), so each change
saves the changed scope's whole snapshot, inside the same transaction as the rest of the write:

    windows     (scope, position) -> record_id, message (JSON)
    summaries   scope -> text, covers (JSON ids), parts (JSON snippets)
    sessions    (scope, session_id) -> started, last seen, deadline, ended
    tasks       (scope, task_id) -> started, deadline, completion, finished

A scope is ``(tenant_id, user_id)``, stored as ``scope_key``. Restarting reads the snapshots back,
so ``build_context`` after a restart is what it was before.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..messages import Message, SessionInfo, TaskInfo
from ..tracks.summarizer import Summary
from .database import StateDatabase
from .ledger import scope_key

__all__ = ["TrackTables", "ScopeTracks", "message_to_dict", "message_from_dict"]

Scope = tuple  # (tenant_id or None, user_id)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS windows (
    scope TEXT NOT NULL, position INTEGER NOT NULL, record_id INTEGER, message TEXT NOT NULL,
    PRIMARY KEY (scope, position));
CREATE TABLE IF NOT EXISTS summaries (
    scope TEXT PRIMARY KEY, text TEXT NOT NULL, covers TEXT NOT NULL, parts TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    scope TEXT NOT NULL, session_id TEXT NOT NULL, started_at TEXT NOT NULL, last_seen TEXT NOT NULL,
    expires_at TEXT NOT NULL, ended_at TEXT, PRIMARY KEY (scope, session_id));
CREATE TABLE IF NOT EXISTS tasks (
    scope TEXT NOT NULL, task_id TEXT NOT NULL, started_at TEXT NOT NULL, expires_at TEXT NOT NULL,
    completion REAL NOT NULL, finished_at TEXT, PRIMARY KEY (scope, task_id));
"""
_TABLES = ("windows", "summaries", "sessions", "tasks")


@dataclass(frozen=True)
class ScopeTracks:
    """One scope's short-term tracks, as stored."""

    window: list[tuple[int | None, Message]]
    summary: Summary
    sessions: list[SessionInfo]
    tasks: list[TaskInfo]


def message_to_dict(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": message.content, "user_id": message.user_id,
            "tenant_id": message.tenant_id, "session_id": message.session_id, "task_id": message.task_id,
            "domain": message.domain, "source": message.source, "metadata": dict(message.metadata),
            "timestamp": message.timestamp.isoformat() if message.timestamp else None}


def message_from_dict(raw: dict[str, Any]) -> Message:
    stamp = raw.get("timestamp")
    return Message(raw["role"], raw["content"], raw["user_id"], session_id=raw.get("session_id"),
                   metadata=raw.get("metadata") or {}, timestamp=datetime.fromisoformat(stamp) if stamp else None,
                   domain=raw.get("domain"), task_id=raw.get("task_id"), source=raw.get("source"),
                   tenant_id=raw.get("tenant_id"))


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class TrackTables:
    """Saves and loads per-scope snapshots of the short-term tracks in a ``StateDatabase``."""

    def __init__(self, db: StateDatabase) -> None:
        self.db = db
        db.ensure(_SCHEMA)

    # -- saving (inside the caller's transaction) ----------------------------------------------
    def save(self, scope: Scope, tracks: ScopeTracks) -> None:
        """Replace the scope's snapshot with ``tracks``."""
        key = scope_key(scope[1], scope[0])
        with self.db.transaction():
            for table in _TABLES:
                self.db.execute(f"DELETE FROM {table} WHERE scope = ?", (key,))
            self.db.executemany("INSERT INTO windows VALUES (?, ?, ?, ?)",
                                [(key, n, rid, _dumps(message_to_dict(m))) for n, (rid, m) in enumerate(tracks.window)])
            if tracks.summary.covers:
                s = tracks.summary
                self.db.execute("INSERT INTO summaries VALUES (?, ?, ?, ?)",
                                (key, s.text, _dumps(list(s.covers)), _dumps(list(s.parts))))
            self.db.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)", [
                (key, i.session_id, _time(i.started_at), _time(i.last_seen), _time(i.expires_at), _time(i.ended_at))
                for i in tracks.sessions])
            self.db.executemany("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?)", [
                (key, i.task_id, _time(i.started_at), _time(i.expires_at), i.completion, _time(i.finished_at))
                for i in tracks.tasks])

    def erase(self, scope: Scope) -> None:
        key = scope_key(scope[1], scope[0])
        with self.db.transaction():
            for table in _TABLES:
                self.db.execute(f"DELETE FROM {table} WHERE scope = ?", (key,))

    # -- loading -------------------------------------------------------------------------------
    def scopes(self) -> list[Scope]:
        """Every scope with a stored track, in first-stored order."""
        keys: dict[str, None] = {}
        for table in _TABLES:
            keys.update(dict.fromkeys(row[0] for row in self.db.fetchall(f"SELECT scope FROM {table} ORDER BY rowid")))
        return [tuple(json.loads(key)) for key in keys]

    def load(self, scope: Scope) -> ScopeTracks:
        key = (scope_key(scope[1], scope[0]),)
        window = [(rid, message_from_dict(json.loads(raw))) for rid, raw in
                  self.db.fetchall("SELECT record_id, message FROM windows WHERE scope = ? ORDER BY position", key)]
        row = self.db.fetchone("SELECT text, covers, parts FROM summaries WHERE scope = ?", key)
        summary = Summary(row[0], tuple(json.loads(row[1])), tuple(json.loads(row[2]))) if row else Summary()
        sessions = [SessionInfo(sid, _parse(a), _parse(b), _parse(c), _parse(d)) for sid, a, b, c, d in self.db.fetchall(
            "SELECT session_id, started_at, last_seen, expires_at, ended_at FROM sessions WHERE scope = ? ORDER BY rowid", key)]
        tasks = [TaskInfo(tid, _parse(a), _parse(b), completion, _parse(d)) for tid, a, b, completion, d in self.db.fetchall(
            "SELECT task_id, started_at, expires_at, completion, finished_at FROM tasks WHERE scope = ? ORDER BY rowid", key)]
        return ScopeTracks(window, summary, sessions, tasks)
