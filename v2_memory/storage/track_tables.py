"""The short-term tracks on disk: each scope's recent window, summary, sessions and tasks.

Each change saves what changed in the scope, inside the same transaction as the rest of the write:

    windows         (scope, position) -> record_id, message (JSON); positions only grow
    summaries       scope -> text, parts (JSON [record_id, snippet] pairs)
    summary_covers  (scope, position) -> record_id: what the summary covers, one row per message
    sessions        (scope, session_id) -> started, last seen, deadline, ended
    tasks           (scope, task_id) -> started, deadline, completion, finished

What changed is found against what this process last read or wrote (``_saved``): a push to the
window inserts one row and deletes the one that left; a fold adds one ``summary_covers`` row (the
summary covers a user's whole history, so saving it whole made every add cost that history); a
touched session updates its row. Without that knowledge (first save, a rolled-back block) the
scope's rows are replaced whole.

A scope is ``(tenant_id, user_id)``, stored as ``scope_key``. Restarting reads the rows back, so
``build_context`` after a restart is what it was before.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..messages import Message, SessionInfo, TaskInfo
from ..tracks.cache import ScopeTracks
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
CREATE TABLE IF NOT EXISTS summary_covers (
    scope TEXT NOT NULL, position INTEGER NOT NULL, record_id INTEGER, PRIMARY KEY (scope, position));
CREATE TABLE IF NOT EXISTS sessions (
    scope TEXT NOT NULL, session_id TEXT NOT NULL, started_at TEXT NOT NULL, last_seen TEXT NOT NULL,
    expires_at TEXT NOT NULL, ended_at TEXT, PRIMARY KEY (scope, session_id));
CREATE TABLE IF NOT EXISTS tasks (
    scope TEXT NOT NULL, task_id TEXT NOT NULL, started_at TEXT NOT NULL, expires_at TEXT NOT NULL,
    completion REAL NOT NULL, finished_at TEXT, PRIMARY KEY (scope, task_id));
"""
_TABLES = ("windows", "summaries", "summary_covers", "sessions", "tasks")
# An older release kept the covers as one JSON list in ``summaries.covers``; ``'[]'`` there now.


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


@dataclass
class _Saved:
    """One scope's rows as this process last read or wrote them."""

    window: list[tuple[int, int | None, Message]]  # (position, record_id, message)
    summary: Summary  # as the summaries row and its summary_covers rows hold it
    sessions: dict[str, tuple]
    tasks: dict[str, tuple]


def _session_row(info: SessionInfo) -> tuple:
    return info.session_id, _time(info.started_at), _time(info.last_seen), _time(info.expires_at), _time(info.ended_at)


def _task_row(info: TaskInfo) -> tuple:
    return info.task_id, _time(info.started_at), _time(info.expires_at), info.completion, _time(info.finished_at)


class TrackTables:
    """Saves and loads each scope's short-term tracks in tables of a ``StateDatabase``."""

    def __init__(self, db: StateDatabase) -> None:
        self.db = db
        self._saved: dict[str, _Saved] = {}
        db.ensure(_SCHEMA)

    # -- saving (inside the caller's transaction) ----------------------------------------------
    def save(self, scope: Scope, tracks: ScopeTracks) -> None:
        """Make the scope's rows hold ``tracks``, writing only what changed."""
        key = scope_key(scope[1], scope[0])
        saved = self._saved.pop(key, None)  # back only once this save went through
        with self.db.transaction():
            if saved is None:
                self._delete(key, _TABLES)
                saved = _Saved([], Summary(), {}, {})
            self._saved[key] = _Saved(
                self._save_window(key, saved.window, tracks.window),
                self._save_summary(key, saved.summary, tracks.summary),
                self._save_rows(key, "sessions", "session_id", saved.sessions, map(_session_row, tracks.sessions)),
                self._save_rows(key, "tasks", "task_id", saved.tasks, map(_task_row, tracks.tasks)))

    def _save_window(self, key: str, old: list[tuple[int, int | None, Message]],
                     new: list[tuple[int | None, Message]]) -> list[tuple[int, int | None, Message]]:
        """A window changes at its ends: the oldest entries leave, new ones arrive."""
        new = list(new)
        # The fewest old rows to drop so that the rest of the old window begins the new one
        # (dropping them all always works: then every new entry is inserted).
        drop = next(d for d in range(len(old) + 1) if [(r, m) for _, r, m in old[d:]] == new[:len(old) - d])
        kept = old[drop:]
        if drop:
            self.db.write("DELETE FROM windows WHERE scope = ? AND position <= ?", (key, old[drop - 1][0]))
        start = old[-1][0] + 1 if old else 0
        added = [(start + n, rid, m) for n, (rid, m) in enumerate(new[len(kept):])]
        self.db.executemany("INSERT INTO windows VALUES (?, ?, ?, ?)",
                            [(key, position, rid, _dumps(message_to_dict(m))) for position, rid, m in added])
        return kept + added

    def _save_summary(self, key: str, old: Summary, new: Summary) -> Summary:
        """A fold appends to the covers: only the new ones are inserted."""
        if new is old or new == old:
            return new
        if not new.covers:
            self._delete(key, ("summaries", "summary_covers"))
            return new
        # parts as [record_id, snippet] pairs when the summarizer says which record each shows
        parts = list(new.parts) if new.shows is None else [list(pair) for pair in zip(new.shows, new.parts)]
        self.db.write("INSERT INTO summaries VALUES (?, ?, '[]', ?) ON CONFLICT (scope) DO UPDATE SET "
                      "text = excluded.text, covers = excluded.covers, parts = excluded.parts",
                      (key, new.text, _dumps(parts)))
        appended = len(new.covers) >= len(old.covers) and new.covers[:len(old.covers)] == old.covers
        if not appended:
            self.db.write("DELETE FROM summary_covers WHERE scope = ?", (key,))
        start = len(old.covers) if appended else 0
        self.db.executemany("INSERT INTO summary_covers VALUES (?, ?, ?)",
                            [(key, start + n, rid) for n, rid in enumerate(new.covers[start:])])
        return new

    def _save_rows(self, key: str, table: str, column: str, old: dict[str, tuple], rows: Any) -> dict[str, tuple]:
        """Sessions or tasks by id: changed rows updated in place (their order is their first save's)."""
        new = {row[0]: row for row in rows}
        gone = [ident for ident in old if ident not in new]
        self.db.executemany(f"DELETE FROM {table} WHERE scope = ? AND {column} = ?", [(key, ident) for ident in gone])
        changed = [row for ident, row in new.items() if old.get(ident) != row]
        self.db.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, {column}) DO UPDATE SET "
                            + ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[table]),
                            [(key, *row) for row in changed])
        return new

    def _delete(self, key: str, tables: tuple[str, ...]) -> None:
        for table in tables:
            self.db.execute(f"DELETE FROM {table} WHERE scope = ?", (key,))

    def rolled_back(self) -> None:
        """The enclosing transaction failed: the rows are as they were, not as last saved."""
        self._saved.clear()

    # -- loading -------------------------------------------------------------------------------
    def forget(self, scope: Scope) -> None:
        """Drop what this process remembers of the scope's saved rows (an evicted cache entry);
        the next load reads them again."""
        self._saved.pop(scope_key(scope[1], scope[0]), None)

    def scopes(self) -> list[Scope]:
        """Every scope with a stored track, in first-stored order."""
        keys: dict[str, None] = {}
        for table in _TABLES:
            keys.update(dict.fromkeys(row[0] for row in self.db.fetchall(f"SELECT scope FROM {table} ORDER BY rowid")))
        return [tuple(json.loads(key)) for key in keys]

    def load(self, scope: Scope) -> ScopeTracks:
        key = scope_key(scope[1], scope[0])
        rows = [(position, rid, message_from_dict(json.loads(raw))) for position, rid, raw in self.db.fetchall(
            "SELECT position, record_id, message FROM windows WHERE scope = ? ORDER BY position", (key,))]
        row = self.db.fetchone("SELECT text, covers, parts FROM summaries WHERE scope = ?", (key,))
        covers = tuple(rid for (rid,) in self.db.fetchall(
            "SELECT record_id FROM summary_covers WHERE scope = ? ORDER BY position", (key,)))
        legacy = tuple(json.loads(row[1])) if row else ()  # an older release's covers: one JSON list
        summary = Summary(row[0], legacy or covers, *_parts(json.loads(row[2]))) if row else Summary()
        sessions = [SessionInfo(sid, _parse(a), _parse(b), _parse(c), _parse(d)) for sid, a, b, c, d in self.db.fetchall(
            "SELECT session_id, started_at, last_seen, expires_at, ended_at FROM sessions WHERE scope = ? ORDER BY rowid", (key,))]
        tasks = [TaskInfo(tid, _parse(a), _parse(b), completion, _parse(d)) for tid, a, b, completion, d in self.db.fetchall(
            "SELECT task_id, started_at, expires_at, completion, finished_at FROM tasks WHERE scope = ? ORDER BY rowid", (key,))]
        if legacy:  # an older release's rows: the next save replaces the scope's rows whole, in the new form
            self._saved.pop(key, None)
        else:
            self._saved[key] = _Saved(rows, summary, {s.session_id: _session_row(s) for s in sessions},
                                      {t.task_id: _task_row(t) for t in tasks})
        return ScopeTracks([(rid, m) for _, rid, m in rows], summary, sessions, tasks)


def _parts(raw: list) -> tuple[tuple[str, ...], tuple[int | None, ...] | None]:
    """A summary's parts and the record each shows, from either form of the ``parts`` column."""
    if raw and all(isinstance(item, list) for item in raw):
        return tuple(text for _, text in raw), tuple(rid for rid, _ in raw)
    return tuple(raw), None


_COLUMNS = {"sessions": ("started_at", "last_seen", "expires_at", "ended_at"),
            "tasks": ("started_at", "expires_at", "completion", "finished_at")}
