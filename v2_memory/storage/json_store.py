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

The score is the article's cosine unless the store is given another scorer (``retrieval/scorers.py``):
``JsonVectorStore(path, scorer="bm25")``. The scorer is a choice made when the store is opened,
like a threshold, not part of the file: the records are the same whichever scorer reads them, so
the same file can be searched both ways (reopen it with the same scorer for the same answers).

A record may carry ``index_text``: extra text it is found by, such as a conversation turn's
neighbours, while a hit still returns the record itself. It is a *copy*: deleting or erasing the
neighbour it was copied from does not rewrite it (erasing the whole user does remove it).

    >>> turns = JsonVectorStore(None, scorer="bm25")
    >>> _ = turns.add("ann", "user", "Yes, it was amazing!", index_text="Did you like the Paris trip?")
    >>> _ = turns.add("ann", "user", "My cat is called Tom.")
    >>> [record["content"] for _, record in turns.search("trip to Paris", "ann", top_k=1)]
    ['Yes, it was amazing!']
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..errors import StoreCorruptError
from ..messages import Hit
from ..retrieval.scorers import Scorer, resolve_scorer
from ..validation import require_scope
from ..retrieval.index import Bm25Index, UserIndex
from .vector_store import StoreHooks, check_search, new_record
from .record_log import RecordLog, encode_record

__all__ = ["JsonVectorStore"]

Scope = tuple  # (tenant_id or None, user_id): the boundary a search never crosses


class _Partition:
    """One user's records; the scorer's index (and its statistics) is built on first search, then
    kept up to date."""

    __slots__ = ("records", "index")

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.index: UserIndex | Bm25Index | None = None

    def append(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.index is not None:
            self.index.add(record)

    def searchable(self, scorer: Scorer) -> UserIndex | Bm25Index:
        if self.index is None:
            self.index = scorer.new_index()
            for record in self.records:
                self.index.add(record)
        return self.index


class JsonVectorStore(StoreHooks):
    """Per-user lexical store persisted as an append-only JSON Lines log.

    ``path=None`` keeps everything in memory. ``fsync=True`` makes every acknowledged add
    survive a power loss, at the cost of one disk flush per add (or per batch). ``read_only=True``
    opens an existing file for inspection: no lock, nothing written (adds and erasures raise).
    ``scorer`` is ``"article"`` (the default: the article's TF cosine), ``"bm25"``, or a scorer
    instance such as ``Bm25Scorer(k1=1.5)``; each user's index follows it.

    An optional ``tenant_id`` widens the boundary: the same user id under two tenants is two
    people, each with their own partition.
    """

    recovers_by_mark = True  # the file is outside the state database: a crash can leave uncommitted records

    def __init__(self, path: Path | str | None = "memory_store.json", *, fsync: bool = False,
                 read_only: bool = False, scorer: str | Scorer | None = None) -> None:
        self.scorer: Scorer = resolve_scorer(scorer)
        self._lock = threading.RLock()
        # (tenant_id, user_id) -> _Partition ; record_id -> record
        self._partitions: dict[Scope, _Partition] = {}
        self._by_id: dict[int, dict[str, Any]] = {}
        self._next_id = 1
        self._pending: list[dict[str, Any]] | None = None  # records of an open batch
        self._pending_lines: list[bytes] = []  # their encoded lines, written when the batch ends
        self._last_append: tuple[int, list[int]] | None = None  # (file size before, ids) of the last batch
        self._log = RecordLog(path, fsync=fsync, read_only=read_only) if path is not None else None
        self.dropped_bytes = 0  # size of a torn last record dropped while loading
        self.created = self._log is None  # a new store: in memory, or a file this open created
        if self._log is not None:
            loaded = self._log.load()
            for record in loaded.records:
                self._insert(record)
            self._next_id = loaded.next_id
            self.dropped_bytes = loaded.dropped_bytes
            self.created = self._log.created

    # -- the article's facade ------------------------------------------------------------------
    def add(
        self, user_id: str, role: str, content: str, *, tenant_id: str | None = None,
        index_text: str | None = None, **metadata: Any
    ) -> dict[str, Any]:
        """Store one record and return a copy of it, with its new integer ``record_id``.

        ``index_text`` (optional) is indexed with ``content`` and kept in the record; a blank
        string is the same as none.
        """
        fields = new_record(user_id, role, content, tenant_id, index_text, metadata)
        with self._lock:
            record = {"record_id": self._next_id, **fields}
            line = encode_record(record)  # fails on non-JSON metadata before anything changes
            if self._pending is not None:
                self._pending.append(record)
                self._pending_lines.append(line)
                self._insert(record)  # visible at once in this process; on disk when the batch ends
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
        """That user's ``top_k`` records by the store's scorer, score >= ``threshold`` when given.

        Exactly what the scorer's brute-force scan over that user's records returns (``scoring.rank``),
        ties in insertion order; with no threshold, records sharing no term fill up with score 0.0.
        """
        scope, threshold = check_search(query, user_id, top_k, threshold, tenant_id)
        with self._lock:
            partition = self._partitions.get(scope)
            if partition is None:
                return []
            pairs = partition.searchable(self.scorer).search(query, top_k, threshold)
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
    def score(self, query: str, record_id: int, user_id: str, *, tenant_id: str | None = None) -> float | None:
        """The score ``search`` gives this record of ``user_id`` for ``query``.

        For callers that find a candidate another way (an exact identifier match) and must score
        it as the store does. None when there is no such record of that user: like ``search``, it
        never looks across the user boundary.
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        scope = require_scope(user_id, tenant_id)
        with self._lock:
            record = self._by_id.get(record_id)
            if record is None or _record_scope(record) != scope:
                return None
            index = self._partitions[_record_scope(record)].searchable(self.scorer)
            return index.scores(query).get(index.records.index(record), 0.0)

    def get(self, record_id: int) -> dict[str, Any] | None:
        with self._lock:
            record = self._by_id.get(record_id)
            return dict(record) if record is not None else None

    def delete(self, record_id: int) -> dict[str, Any] | None:
        """Delete one record, file first, then memory; the user's index is rebuilt lazily.

        Other records' ``index_text`` copied from it are left as they are (see the module docstring).
        """
        with self._lock:
            self._flush_pending()
            if record_id not in self._by_id:
                return None
            self._rewrite_without({record_id})
            record = dict(self._by_id[record_id])
            self._remove_from_memory({record_id})
            return record

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

        Records added in a batch are searchable in this process at once and durable together, at
        the end of the block. If the block raises, none of them is written (their ids are handed
        out again).
        """
        with self._lock:
            if self._pending is not None:
                raise RuntimeError("batches do not nest")
            self._pending, first_id = [], self._next_id
            try:
                yield self
            except BaseException:
                self._remove_from_memory({record["record_id"] for record in self._pending or []})
                self._pending, self._pending_lines, self._next_id = None, [], first_id
                raise
            self._flush_pending()

    def _flush_pending(self) -> None:
        pending, self._pending = self._pending, None
        lines, self._pending_lines = self._pending_lines, []
        self._last_append = None  # an undo takes back this batch's append only, never an older one
        if not pending:
            return
        self._last_append = (self._log.size() if self._log is not None else 0, [r["record_id"] for r in pending])
        if self._log is not None:
            try:
                self._log.append(lines)
            except BaseException:
                self._remove_from_memory({record["record_id"] for record in pending})
                self._next_id = pending[0]["record_id"]  # their ids are handed out again: no gap after the mark
                raise

    def undo_last_append(self) -> None:
        """Take back the records the last batch appended (its commit failed elsewhere): the file
        is cut back to where it was and they leave memory. Only valid right after that batch."""
        with self._lock:
            if self._last_append is None:
                return
            size, ids = self._last_append
            self._last_append = None
            if self._log is not None:
                self._log.truncate(size)
            self._remove_from_memory(set(ids))
            self._next_id = min(ids, default=self._next_id)

    def records_after(self, record_id: int) -> list[int]:
        """The ids above ``record_id``. A crash can leave them only as the file's last records,
        numbered on from ``record_id + 1`` (one interrupted append); otherwise they are damage:
        ``StoreCorruptError``, and nothing is changed."""
        with self._lock:
            order = list(self._by_id)  # file order (this is called on open, before any change)
            tail = [rid for rid in order if rid > record_id]
            if tail and (order[len(order) - len(tail):] != tail or tail != list(range(record_id + 1, record_id + 1 + len(tail)))):
                raise StoreCorruptError(
                    f"record(s) {', '.join(map(str, tail[:5]))} have ids past the last commit ({record_id}) but are not "
                    f"the file's last records numbered on from {record_id + 1}: the file is damaged, not cut by a "
                    "crash; restore it from a backup (no record was dropped)", path=self.path)
            return tail

    def drop_records_after(self, record_id: int) -> list[int]:
        """Remove records with ids above ``record_id`` (appended, never committed: a crash came
        between the store and the state database). Rewrites the file atomically; returns their ids."""
        with self._lock:
            doomed = {rid for rid in self._by_id if rid > record_id}
            if doomed:
                self._next_id = record_id + 1
                self._rewrite_without(doomed)
                self._remove_from_memory(doomed)
            return sorted(doomed)

    @property
    def last_id(self) -> int:
        """The highest record id handed out so far (0 for none)."""
        return self._next_id - 1

    def _remove_from_memory(self, ids: set[int]) -> None:
        for rid in ids:
            record = self._by_id.pop(rid, None)
            if record is None:
                continue
            scope = _record_scope(record)
            partition = self._partitions[scope]
            partition.records.remove(record)
            partition.index = None
            if not partition.records:
                del self._partitions[scope]

    def import_records(self, records: list[dict[str, Any]], last_id: int) -> None:
        """Fill an empty store with ``records`` keeping their ids (a migration); the next add gets
        ``max(last_id, highest id) + 1``. One atomic rewrite of the file, header ``next_id`` included."""
        with self._lock:
            ordered = _checked_import(records, last_id, len(self._by_id))
            next_id = max([last_id, *(r["record_id"] for r in ordered[-1:])]) + 1
            if self._log is not None:
                self._log.rewrite(ordered, next_id)
            for record in ordered:
                self._insert(dict(record))
            self._next_id = next_id

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


def _checked_import(records: list[dict[str, Any]], last_id: int, held: int) -> list[dict[str, Any]]:
    """Records to import, by id; refused unless the store is empty and the ids are unique positive ints."""
    if held:
        raise ValueError(f"import_records needs an empty store; this one holds {held} records")
    if not isinstance(last_id, int) or isinstance(last_id, bool) or last_id < 0:
        raise ValueError(f"last_id must be a non-negative int, got {last_id!r}")
    ordered = sorted(records, key=lambda r: r["record_id"])
    ids = [r["record_id"] for r in ordered]
    if any(not isinstance(i, int) or isinstance(i, bool) or i < 1 for i in ids) or len(set(ids)) != len(ids):
        raise ValueError("imported record ids must be unique positive integers")
    return ordered


def _record_scope(record: dict[str, Any]) -> Scope:
    return (record.get("tenant_id"), record["user_id"])
