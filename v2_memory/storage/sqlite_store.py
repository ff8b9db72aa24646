"""SQLite backend: records and audit events as tables of the one state database file.

(The PostgreSQL backend uses these same two classes over a ``PostgresDatabase``: they speak only
the database API, so the per-user cache below works unchanged on a server.)

``JsonVectorStore`` keeps every record in memory and appends to a file only this process writes.
Here the table is the truth and many processes share it (WAL: readers never block the writer,
writers take turns with ``BEGIN IMMEDIATE``). What stays in memory is a per-user *cache*: that
user's records and their inverted index (the same exact index as the JSON store, so scores and
order are identical), built on the user's first search. Before each search the cache checks the
user's ``(count, max id)`` — one indexed look at that user's rows — and rebuilds when another
process added or deleted any of them (ids only grow, so any add raises the max and any delete
alone lowers the count).

    records        record_id (never reused) -> scope, user, tenant, role, content, index_text, extra JSON
    audit_events   seq -> log (writes | reads), user, tenant, event JSON (each log keeps its newest
                   ``MAX_EVENTS``, as the JSON logs rotate by size: a file never grows without end)

Because records live in the same database as the ledger and the tracks, an ``add`` is one
``COMMIT``: there is no commit mark to keep and nothing to drop on open.
"""
from __future__ import annotations

import json
from bisect import bisect_left
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..lru import DEFAULT_CACHE_USERS, LruCache
from ..errors import StoreCorruptError
from ..messages import Hit
from ..retrieval.scorers import Scorer, resolve_scorer
from ..validation import require_scope
from .audit_log import MAX_EVENTS, AuditEvent, DamagedLine, EventBound, encode_event, mentions_record
from .vector_store import StoreHooks, check_search, new_record
from .database import StateDatabase
from .json_store import _checked_import, _Partition
from .ledger import scope_key

__all__ = ["SqliteVectorStore", "SqliteAuditLog"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    record_id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, user_id TEXT NOT NULL, tenant_id TEXT,
    role TEXT NOT NULL, content TEXT NOT NULL, index_text TEXT, extra TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS records_scope ON records (scope, record_id);
CREATE TABLE IF NOT EXISTS audit_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, log TEXT NOT NULL, user_id TEXT, tenant_id TEXT, event TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_owner ON audit_events (user_id, tenant_id);
CREATE INDEX IF NOT EXISTS audit_age ON audit_events (log, seq);
"""
_COLUMNS = "record_id, user_id, tenant_id, role, content, index_text, extra"
Scope = tuple  # (tenant_id or None, user_id)


def _record(row: tuple) -> dict[str, Any]:
    record_id, user_id, tenant_id, role, content, index_text, extra = row
    record: dict[str, Any] = {"record_id": record_id, "user_id": user_id, "role": role, "content": content}
    if tenant_id is not None:
        record["tenant_id"] = tenant_id
    if index_text is not None:
        record["index_text"] = index_text
    record.update(json.loads(extra))
    return record


def _id_of(record: dict[str, Any]) -> int:
    return record["record_id"]


class SqliteVectorStore(StoreHooks):
    """A ``VectorStore`` over the ``records`` table of a ``StateDatabase``, cached per user."""

    def __init__(self, db: StateDatabase, *, scorer: str | Scorer | None = None,
                 cache_users: int = DEFAULT_CACHE_USERS) -> None:
        self.db = db
        self.scorer: Scorer = resolve_scorer(scorer)
        self.created = False  # records and state share one file: they cannot go missing apart
        self._lock = threading.RLock()
        # scope -> ((count, max id), partition, the data_version it was checked at); the newest
        # ``cache_users`` users only: a worker that touches every user stays flat in memory
        self._cache: LruCache[Scope, tuple[tuple[int, int], _Partition, int]] = LruCache(cache_users)
        db.ensure(_SCHEMA)

    @property
    def path(self) -> Path | None:
        return self.db.path

    # -- the article's facade ------------------------------------------------------------------
    def add(self, user_id: str, role: str, content: str, *, tenant_id: str | None = None,
            index_text: str | None = None, **metadata: Any) -> dict[str, Any]:
        """Insert one record (inside the caller's transaction, if any); return it with its id."""
        fields = new_record(user_id, role, content, tenant_id, index_text, metadata)
        core = {"user_id", "tenant_id", "role", "content", "index_text"}
        extra = json.dumps({k: v for k, v in fields.items() if k not in core}, ensure_ascii=False, allow_nan=False)
        with self._lock, self.db.transaction():
            record_id = self.db.insert_id("INSERT INTO records (scope, user_id, tenant_id, role, content, index_text, "
                                          "extra) VALUES (?, ?, ?, ?, ?, ?, ?)", "record_id",
                                          (scope_key(user_id, tenant_id), user_id, tenant_id, role, content,
                                           fields.get("index_text"), extra))
            record = {"record_id": record_id, **fields}
            self._extend_cache((tenant_id, user_id), record)
            return dict(record)

    def search(self, query: str, user_id: str = "default", top_k: int = 3, threshold: float | None = None, *,
               tenant_id: str | None = None) -> list[Hit]:
        """That user's best records, exactly as the JSON store ranks them (same index code)."""
        scope, threshold = check_search(query, user_id, top_k, threshold, tenant_id)
        with self._lock:
            partition = self._partition(scope)
            if not partition.records:
                return []
            pairs = partition.searchable(self.scorer).search(query, top_k, threshold)
            return [Hit(score, dict(record)) for score, record in pairs]

    def score(self, query: str, record_id: int, user_id: str, *, tenant_id: str | None = None) -> float | None:
        """The score ``search`` gives this record of that user (None: not that user's)."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            partition = self._partition(scope)
            positions = {r["record_id"]: n for n, r in enumerate(partition.records)}
            if record_id not in positions:
                return None
            return partition.searchable(self.scorer).scores(query).get(positions[record_id], 0.0)

    def erase_user(self, user_id: str, *, tenant_id: str | None = None) -> int:
        scope = require_scope(user_id, tenant_id)
        with self._lock, self.db.transaction():
            removed = self.db.execute("DELETE FROM records WHERE scope = ?", (scope_key(user_id, tenant_id),))
            self._forget_cache(scope)
            return removed

    # -- single records and listings ------------------------------------------------------------
    def get(self, record_id: int) -> dict[str, Any] | None:
        row = self.db.fetchone(f"SELECT {_COLUMNS} FROM records WHERE record_id = ?", (record_id,))
        return _record(row) if row else None

    def get_many(self, record_ids: Iterable[int], scope: Scope | None = None) -> dict[int, dict[str, Any]]:
        """Several records by id: those of ``scope`` (whose they should be) from its partition
        when it is cached, current as a search's, the rest in one statement per ``CHUNK`` (a read's summary
        judges the records it shows on every read: a query each time was most of its cost)."""
        found: dict[int, dict[str, Any]] = {}
        wanted = list(record_ids)
        if scope is not None and scope in self._cache:  # a cold user is not loaded whole for a few ids
            with self._lock:
                records = self._partition(scope).records
                for record_id in wanted:
                    at = bisect_left(records, record_id, key=_id_of)  # a partition is in id order
                    if at < len(records) and records[at]["record_id"] == record_id:
                        found[record_id] = dict(records[at])
        missing = [rid for rid in wanted if rid not in found]  # another user's, or gone: the database says
        if missing:
            rows = self.db.rows_in(f"SELECT {_COLUMNS} FROM records WHERE record_id IN ({{marks}})", missing)
            found.update((row[0], _record(row)) for row in rows)
        return found

    def delete(self, record_id: int) -> dict[str, Any] | None:
        with self._lock, self.db.transaction():
            record = self.get(record_id)
            if record is not None:
                self.db.execute("DELETE FROM records WHERE record_id = ?", (record_id,))
                self._forget_cache((record.get("tenant_id"), record["user_id"]))
            return record

    def records(self, user_id: str, *, tenant_id: str | None = None) -> list[dict[str, Any]]:
        scope = require_scope(user_id, tenant_id)
        return [_record(row) for row in self.db.fetchall(
            f"SELECT {_COLUMNS} FROM records WHERE scope = ? ORDER BY record_id", (scope_key(scope[1], scope[0]),))]

    def all_records(self) -> list[dict[str, Any]]:
        return [_record(row) for row in self.db.fetchall(f"SELECT {_COLUMNS} FROM records ORDER BY record_id")]

    def users(self, *, tenant_id: str | None = None) -> list[str]:
        rows = self.db.fetchall("SELECT user_id, min(record_id) AS first FROM records WHERE tenant_id IS ? "
                                "GROUP BY user_id ORDER BY first", (tenant_id,))
        return [row[0] for row in rows]

    def import_records(self, records: list[dict[str, Any]], last_id: int) -> None:
        """Fill an empty store with ``records`` keeping their ids (a migration): explicit
        ``record_id`` values, and the AUTOINCREMENT sequence set so the next add continues above
        ``last_id`` (ids of erased records are never handed out again)."""
        core = {"record_id", "user_id", "tenant_id", "role", "content", "index_text"}
        with self._lock, self.db.transaction():
            ordered = _checked_import(records, last_id, len(self))
            self.db.executemany(
                "INSERT INTO records (record_id, scope, user_id, tenant_id, role, content, index_text, extra) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(r["record_id"], scope_key(r["user_id"], r.get("tenant_id")), r["user_id"], r.get("tenant_id"),
                  r["role"], r["content"], r.get("index_text"),
                  json.dumps({k: v for k, v in r.items() if k not in core}, ensure_ascii=False, allow_nan=False))
                 for r in ordered])
            self.db.raise_last_id("records", "record_id", max([last_id, *(r["record_id"] for r in ordered[-1:])]))
            self._cache.clear()

    @property
    def last_id(self) -> int:
        """The highest record id handed out so far (0 for none); ids are never reused."""
        return self.db.last_id("records", "record_id")

    def __len__(self) -> int:
        return self.db.fetchone("SELECT count(*) FROM records")[0]

    def files(self) -> list[Path]:
        return [self.db.path] if self.db.path is not None else []

    @contextmanager
    def batch(self) -> Iterator[SqliteVectorStore]:
        """Adds inside commit together (they are already part of the enclosing transaction)."""
        with self.db.transaction():
            yield self

    def close(self) -> None:
        self._cache.clear()

    # -- the per-user cache ----------------------------------------------------------------------
    def _partition(self, scope: Scope) -> _Partition:
        """The user's records and index, rebuilt only when that user's rows changed.

        Our own adds and deletes keep the cached partition current; another connection's commit
        moves the database's ``data_version``, and only then are the user's rows counted again.
        Rows another process added are appended (a read of a user someone keeps writing costs the
        new rows, not the user's history); a delete reads the user's rows again."""
        version = self.db.data_version()
        cached = self._cache.get(scope)
        if cached is not None and cached[2] == version:
            return cached[1]
        key = scope_key(scope[1], scope[0])
        stamp = tuple(self.db.fetchone("SELECT count(*), coalesce(max(record_id), 0) FROM records WHERE scope = ?",
                                       (key,)))
        if cached is not None and cached[0] == stamp:
            self._cache[scope] = (stamp, cached[1], version)
            return cached[1]
        if cached is not None and stamp[1] > cached[0][1]:  # ids only grow: read just the new rows
            (count, last), partition, _ = cached
            rows = self.db.fetchall(f"SELECT {_COLUMNS} FROM records WHERE scope = ? AND record_id > ? ORDER BY record_id",
                                    (key, last))
            if count + len(rows) == stamp[0]:  # nothing of the cached rows was deleted meanwhile
                for row in rows:
                    partition.append(_record(row))
                self._cache[scope] = (stamp, partition, version)
                return partition
        partition = _Partition()
        for record in self.records(scope[1], tenant_id=scope[0]):
            partition.append(record)
        self._cache[scope] = (stamp, partition, version)
        return partition

    def _extend_cache(self, scope: Scope, record: dict[str, Any]) -> None:
        """Add a just-inserted record to the user's cached index, if the cache was exactly one
        record behind (otherwise someone else wrote too: the next search rebuilds)."""
        cached = self._cache.pop(scope, None)
        if cached is not None and cached[0] == (len(cached[1].records), cached[1].records[-1]["record_id"] if cached[1].records else 0):
            (count, _), partition, version = cached
            partition.append(record)
            self._cache[scope] = ((count + 1, record["record_id"]), partition, version)

    def _forget_cache(self, scope: Scope) -> None:
        self._cache.pop(scope, None)

    def rolled_back(self) -> None:
        """The enclosing transaction failed: cached records may not exist (and their ids may be reused)."""
        self._cache.clear()


class SqliteAuditLog(EventBound):
    """The audit logs as a table (same methods as ``JsonlAuditLog``): erasure is a ``DELETE``.

    Each log keeps its newest ``max_events`` events. Every reader writes a read event, so without
    a bound the file would grow with every call ever made, and every erasure (which rebuilds the
    file: ``StateDatabase.scrub``) would cost that whole history. The oldest events beyond the
    bound are deleted in the transaction that appends, once per ``max_events // 100`` appends of
    this process (and on its first: a process that appends a few events and exits trims too)."""

    def __init__(self, db: StateDatabase, *, max_events: int = MAX_EVENTS) -> None:
        self.db = db
        self.max_events = max_events
        self.damaged: list[DamagedLine] = []  # a table has no torn or damaged lines
        self._until_trim = {"writes": 0, "reads": 0}  # appends left before this process trims that log
        db.ensure(_SCHEMA)

    def log_write(self, event: AuditEvent) -> None:
        self.append_events("writes", [event])

    def log_read(self, event: AuditEvent) -> None:
        self.append_events("reads", [event])

    def append_events(self, name: str, events: list[AuditEvent]) -> None:
        """Append events (inside the caller's transaction), then trim the log if it is time."""
        self.import_events(name, events)
        self._until_trim[name] -= len(events)
        if self._until_trim[name] <= 0:
            self.trim(name)
            self._until_trim[name] = max(1, self.max_events // 100)

    def import_events(self, name: str, events: list[AuditEvent]) -> None:
        """Append events as they are, their ``seq`` included (a migration copies every one: the
        next ordinary append trims)."""
        self.db.executemany("INSERT INTO audit_events (log, user_id, tenant_id, event) VALUES (?, ?, ?, ?)",
                            [(name, e.user_id, e.tenant_id, encode_event(e)) for e in events])

    def trim(self, name: str) -> int:
        """Delete the log's events older than its newest ``max_events``; return how many (one
        indexed look past the kept ones, then the delete: the cost of what goes, not of the table).
        On a server, a writer of one user's rows skips it while another is trimming the same log."""
        with self.db.transaction():
            if not self.db.try_exclusive(f"trim {name}"):
                return 0
            oldest_kept = self.db.fetchone("SELECT seq FROM audit_events WHERE log = ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
                                           (name, self.max_events - 1))
            if oldest_kept is None:
                return 0
            return self.db.execute("DELETE FROM audit_events WHERE log = ? AND seq < ?", (name, oldest_kept[0]))

    def writes(self) -> list[AuditEvent]:
        return self._events("writes")

    def reads(self) -> list[AuditEvent]:
        if self.settle is not None:
            self.settle()
        return self._events("reads")

    def _events(self, name: str) -> list[AuditEvent]:
        rows = self.db.fetchall("SELECT seq, event FROM audit_events WHERE log = ? ORDER BY seq", (name,))
        events = []
        for seq, raw in rows:
            try:
                events.append(AuditEvent.from_dict(json.loads(raw)))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise StoreCorruptError(f"event {seq}: unreadable audit event ({exc})", path=self.db.where) from exc
        return events

    def seqs(self, name: str) -> set[int]:
        return {e.data["seq"] for e in self._events(name) if isinstance(e.data.get("seq"), int)}

    def erase(self, user_id: str, tenant_id: str | None = None) -> tuple[int, list[Path]]:
        removed = self.db.execute("DELETE FROM audit_events WHERE user_id = ? AND tenant_id IS ?", (user_id, tenant_id))
        return removed, ([self.db.path] if removed and self.db.path else [])

    def forget(self, record_id: int, user_id: str, tenant_id: str | None = None) -> tuple[int, list[Path]]:
        return self.remove(lambda e: e.user_id == user_id and e.tenant_id == tenant_id and mentions_record(e, record_id),
                           owner=(user_id, tenant_id))

    def remove(self, doomed: Callable[[AuditEvent], bool], owner: tuple[str, str | None] | None = None) -> tuple[int, list[Path]]:
        """Delete the events ``doomed`` picks (only that owner's rows are read, when given)."""
        sql, args = "SELECT seq, event FROM audit_events", ()
        if owner is not None:
            sql, args = sql + " WHERE user_id = ? AND tenant_id IS ?", owner
        seqs = [seq for seq, raw in self.db.fetchall(sql, args) if doomed(AuditEvent.from_dict(json.loads(raw)))]
        self.db.executemany("DELETE FROM audit_events WHERE seq = ?", [(seq,) for seq in seqs])
        return len(seqs), ([self.db.path] if seqs and self.db.path else [])

    def files(self) -> list[Path]:
        return []  # the events live in the database file, which the storage lists already


