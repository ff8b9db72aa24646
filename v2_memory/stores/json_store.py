"""``JsonVectorStore``: the article's local vector store, made exact, fast and durable.

Same facade as the article — ``add``, ``search``, ``erase_user`` — with three changes inside:
records are partitioned by user (a search never even looks at another user's records); each
partition keeps an inverted index built lazily on its first search (see ``index.py``); and the
file is an append-only log (see ``record_log.py``) instead of a JSON file rewritten per add.

    >>> store = JsonVectorStore(None)                      # None: in memory, no file
    >>> _ = store.add("alice", "user", "如何治理记忆污染")
    >>> _ = store.add("bob", "user", "记忆污染 阈值 Agent")
    >>> [(round(score, 3), record["content"]) for score, record in store.search("记忆污染 阈值 Agent", "alice")]
    [(0.354, '如何治理记忆污染')]
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..messages import Hit
from ..tokenizer import term_counts, vector_norm
from ..validation import check_threshold, check_top_k, require_scope, require_text
from .index import UserIndex
from .record_log import RecordLog, encode_record

__all__ = ["JsonVectorStore"]

RESERVED_FIELDS = frozenset({"record_id", "user_id", "role", "content", "tenant_id"})
Scope = tuple  # (tenant_id or None, user_id): the boundary a search never crosses


class _Partition:
    """One user's records; the inverted index is built on first search, then kept up to date."""

    __slots__ = ("records", "index")

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.index: UserIndex | None = None

    def append(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.index is not None:
            self.index.add(record)

    def searchable(self) -> UserIndex:
        if self.index is None:
            self.index = UserIndex()
            for record in self.records:
                self.index.add(record)
        return self.index


class JsonVectorStore:
    """Per-user lexical-cosine store persisted as an append-only JSON Lines log.

    ``path=None`` keeps everything in memory. ``fsync=True`` makes every acknowledged add
    survive a power loss, at the cost of one disk flush per add (or per batch). ``read_only=True``
    opens an existing file for inspection: no lock, nothing written (adds and erasures raise).

    An optional ``tenant_id`` widens the boundary: the same user id under two tenants is two
    people, each with their own partition.
    """

    def __init__(self, path: Path | str | None = "memory_store.json", *, fsync: bool = False,
                 read_only: bool = False) -> None:
        self._lock = threading.RLock()
        # (tenant_id, user_id) -> _Partition ; record_id -> record
        self._partitions: dict[Scope, _Partition] = {}
        self._by_id: dict[int, dict[str, Any]] = {}
        self._next_id = 1
        self._pending: list[dict[str, Any]] | None = None  # records of an open batch
        self._pending_lines: list[bytes] = []  # their encoded lines, written when the batch ends
        self._log = RecordLog(path, fsync=fsync, read_only=read_only) if path is not None else None
        self.dropped_bytes = 0  # size of a torn last record dropped while loading
        if self._log is not None:
            loaded = self._log.load()
            for record in loaded.records:
                self._insert(record)
            self._next_id = loaded.next_id
            self.dropped_bytes = loaded.dropped_bytes

    # -- the article's facade ------------------------------------------------------------------
    def add(
        self, user_id: str, role: str, content: str, *, tenant_id: str | None = None, **metadata: Any
    ) -> dict[str, Any]:
        """Store one record and return a copy of it, with its new integer ``record_id``."""
        require_scope(user_id, tenant_id)
        require_text("role", role)
        require_text("content", content)
        clash = RESERVED_FIELDS.intersection(metadata)
        if clash:
            raise ValueError(f"metadata may not set reserved fields: {sorted(clash)}")
        with self._lock:
            record = {"record_id": self._next_id, "user_id": user_id, "role": role, "content": content}
            if tenant_id is not None:
                record["tenant_id"] = tenant_id
            record.update(metadata)
            line = encode_record(record)  # fails on non-JSON metadata before anything changes
            if self._pending is not None:
                self._pending.append(record)
                self._pending_lines.append(line)
            else:
                if self._log is not None:
                    self._log.append([line])
                self._insert(record)
            self._next_id += 1
            return dict(record)

    def search(
        self,
        query: str,
        user_id: str = "default",
        top_k: int = 3,
        threshold: float | None = None,
        *,
        tenant_id: str | None = None,
    ) -> list[Hit]:
        """That user's ``top_k`` records by cosine, score >= ``threshold`` when one is given.

        Exactly what a brute-force scan with ``cosine_similarity`` returns, ties in insertion order.
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        scope = require_scope(user_id, tenant_id)
        check_top_k(top_k)
        threshold = check_threshold(threshold)
        query_counts = term_counts(query)
        with self._lock:
            partition = self._partitions.get(scope)
            if partition is None:
                return []
            pairs = partition.searchable().search(query_counts, vector_norm(query_counts), top_k, threshold)
            return [Hit(score, dict(record)) for score, record in pairs]

    def erase_user(self, user_id: str, *, tenant_id: str | None = None) -> int:
        """Rewrite the file without the user's records, then drop them from memory.

        File first: if the rewrite fails (disk full), nothing changed, and the error says so.
        """
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            self._flush_pending()
            partition = self._partitions.get(scope)
            if partition is None:
                return 0
            self._rewrite_without({record["record_id"] for record in partition.records})
            del self._partitions[scope]
            for record in partition.records:
                del self._by_id[record["record_id"]]
            return len(partition.records)

    # -- single records and listings ------------------------------------------------------------
    def get(self, record_id: int) -> dict[str, Any] | None:
        with self._lock:
            record = self._by_id.get(record_id)
            return dict(record) if record is not None else None

    def delete(self, record_id: int) -> dict[str, Any] | None:
        """Forget one record, file first, then memory; the user's index is rebuilt lazily."""
        with self._lock:
            self._flush_pending()
            if record_id not in self._by_id:
                return None
            self._rewrite_without({record_id})
            record = self._by_id.pop(record_id)
            scope = _record_scope(record)
            partition = self._partitions[scope]
            partition.records.remove(record)
            partition.index = None
            if not partition.records:
                del self._partitions[scope]
            return dict(record)

    def records(self, user_id: str, *, tenant_id: str | None = None) -> list[dict[str, Any]]:
        """Copies of the user's records, in insertion order."""
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            partition = self._partitions.get(scope)
            return [dict(record) for record in partition.records] if partition else []

    def all_records(self) -> list[dict[str, Any]]:
        """Copies of every record of every user, by id — for maintenance and health reports, never
        for a prompt (reads for prompts go through ``search``, which names a user)."""
        with self._lock:
            return [dict(self._by_id[rid]) for rid in sorted(self._by_id)]

    def users(self, *, tenant_id: str | None = None) -> list[str]:
        """User ids with records (under ``tenant_id``; None means records without a tenant)."""
        with self._lock:
            return [user for tenant, user in self._partitions if tenant == tenant_id]

    def __len__(self) -> int:
        return len(self._by_id)

    # -- durability ------------------------------------------------------------------------------
    @property
    def path(self) -> Path | None:
        return self._log.path if self._log is not None else None

    def files(self) -> list[Path]:
        return [self._log.path] if self._log is not None else []

    @contextmanager
    def batch(self) -> Iterator[JsonVectorStore]:
        """Bulk ingest: adds inside are written with one write (and one fsync) when the block ends.

        Records added in a batch become searchable and durable together, at the end of the block.
        """
        with self._lock:
            if self._pending is not None:
                raise RuntimeError("batches do not nest")
            self._pending = []
            try:
                yield self
            finally:
                self._flush_pending()

    def _flush_pending(self) -> None:
        pending, self._pending = self._pending, None
        lines, self._pending_lines = self._pending_lines, []
        if not pending:
            return
        if self._log is not None:
            self._log.append(lines)
        for record in pending:
            self._insert(record)

    def compact(self) -> None:
        """Rewrite the file atomically with exactly the live records."""
        with self._lock:
            self._rewrite_without(set())

    def _rewrite_without(self, removed: set[int]) -> None:
        if self._log is not None:
            live = sorted((r for rid, r in self._by_id.items() if rid not in removed), key=lambda r: r["record_id"])
            self._log.rewrite(live, self._next_id)

    def close(self) -> None:
        with self._lock:
            self._flush_pending()
            if self._log is not None:
                self._log.close()

    def __enter__(self) -> JsonVectorStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _insert(self, record: dict[str, Any]) -> None:
        self._by_id[record["record_id"]] = record
        self._partitions.setdefault(_record_scope(record), _Partition()).append(record)


def _record_scope(record: dict[str, Any]) -> Scope:
    return (record.get("tenant_id"), record["user_id"])
