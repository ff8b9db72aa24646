"""``SemanticStore``: a long-term store whose records carry vectors, searched lexically *and* semantically.

``MemoryManager(embedder=...)`` puts this in front of the backend's store (``json_store.py``,
``sqlite_store.py``); governance sees an ordinary ``VectorStore`` whose scores are fused:

    add(...)     embed the content once, then store the record and its vector (``vectors.py``)
                 in the caller's transaction: both commit, or neither
    search(...)  lexical scores (the store's scorer) and cosines (``SemanticIndex``) over the
                 user's records, fused by ``Fusion`` (``retrieval/hybrid.py``: a calibrated
                 weighted sum, so a threshold keeps its meaning); each hit's parts are kept for
                 ``explain`` (``components``)

Vectors are loaded from the table, never embedded twice: a user's vectors are read on that
user's first search and then followed incrementally (rows above the highest id seen; a count
that disagrees means a delete somewhere, and the user's vectors are read again). Records that
have no vector yet (written by a manager without an embedder) are embedded when their user's
vectors are read in full, and stored.

The embedder's signature (name + dimension) is recorded in the store's meta the first time a
store is opened with one, and checked on every open after: another model raises
``EmbedderMismatchError`` — vectors of two models live in two spaces, and mixing them returns
nonsense without an error (the manual's "pit 2"). ``rebuild()`` re-embeds every record with the
given model and records its signature, in one transaction.
"""
from __future__ import annotations

from contextlib import nullcontext
from functools import cache
from typing import Any, Callable, Iterable

from ..lru import DEFAULT_CACHE_USERS, LruCache
from ..messages import Hit
from ..retrieval.embedder import Embedder, EmbedderError, EmbedderMismatchError, check_embedder, embed, signature
from ..retrieval.hybrid import Fusion, rank
from ..retrieval.semantic import SemanticIndex
from .vector_store import StoreHooks, check_search, hooks_of, new_record
from .ledger import scope_key
from .vectors import VectorTable, pack, unpack

__all__ = ["SemanticStore", "REBUILD_HINT", "open_semantic"]

Scope = tuple  # (tenant_id or None, user_id)
REBUILD_HINT = ("open it once with MemoryManager(..., embedder=<the new model>, rebuild_vectors=True) to re-embed "
                "every record with it (or open it with the embedder it was made with)")
_BATCH = 256  # texts per embedder call when many records need vectors at once


def open_semantic(storage: Any, embedder: Embedder | None, rebuild: bool, cache_users: int) -> SemanticStore | None:
    """The semantic track over a ``Storage``'s records (None without an embedder); a refused
    embedder (another model than the store's vectors) closes the storage before the error."""
    if embedder is None:
        return None
    try:
        return SemanticStore(storage.records, storage.vectors, embedder, rebuild=rebuild, cache_users=cache_users)
    except BaseException:
        storage.close()
        raise


class SemanticStore(StoreHooks):
    """A ``VectorStore`` (wrapping ``store``) that keeps each record's vector in ``vectors``."""

    @property
    def lexical(self) -> Any:
        """The lexical store beneath: a search by words costs no embedding."""
        return self.store

    def __init__(self, store: Any, vectors: VectorTable, embedder: Embedder, fusion: Fusion | None = None, *,
                 rebuild: bool = False, cache_users: int = DEFAULT_CACHE_USERS) -> None:
        signature(embedder)  # a clear TypeError for something that is no embedder
        self.store, self.vectors, self.embedder = store, vectors, embedder
        self.fusion = fusion if fusion is not None else Fusion()
        # scope -> (stamp, vectors), the newest ``cache_users`` users: vectors are evicted with the user
        self._indexes: LruCache[Scope, tuple[tuple[int, int], SemanticIndex]] = LruCache(cache_users)
        self._query: tuple[str, list[float]] | None = None  # the last query and its vector
        # the last search's parts, (scope, query, () -> {rid -> parts}): explain asks right after its search
        self._parts: tuple[Scope, str, Callable[[], dict[int, dict[str, float]]]] | None = None
        if rebuild:
            self.rebuild()
        else:
            self._check_signature()

    # -- the model's signature ---------------------------------------------------------------------
    def _check_signature(self) -> None:
        """Record the embedder at first use; refuse another one later (never mix two spaces)."""
        with self.vectors.db.transaction():  # read and record under the write lock: two first opens agree
            recorded = self.vectors.signature()
            if recorded is None and self.vectors.count():
                raise EmbedderError(f"{self.vectors.db.where}: this store holds vectors but no record of the model "
                                    f"that made them; {REBUILD_HINT}")
            if recorded is None:
                self.vectors.set_signature(signature(self.embedder))
                return
            try:
                check_embedder(self.embedder, recorded)
            except EmbedderMismatchError as exc:
                raise EmbedderMismatchError(
                    f"{self.vectors.db.where}: this store's vectors were made by {recorded['name']!r} (dimension "
                    f"{recorded['dimension']}), not {self.embedder.name!r} (dimension {self.embedder.dimension}); "
                    f"two models' vectors cannot be compared: {REBUILD_HINT}",
                    recorded=exc.recorded, given=exc.given) from None

    def rebuild(self) -> int:
        """Re-embed every record with this embedder and record its signature; return how many."""
        with self.vectors.db.transaction():
            self.vectors.clear()
            self.vectors.set_signature(signature(self.embedder))
            records = self.store.all_records()
            self._store_vectors(records)
        self._indexes.clear()
        self._parts = None
        return len(records)

    # -- write -------------------------------------------------------------------------------------
    def add(self, user_id: str, role: str, content: str, *, tenant_id: str | None = None,
            **metadata: Any) -> dict[str, Any]:
        """Embed, then store the record and its vector together (the caller's transaction, if any)."""
        new_record(user_id, role, content, tenant_id, metadata.get("index_text"),
                   {k: v for k, v in metadata.items() if k != "index_text"})  # bad input: nothing embedded
        vector = embed(self.embedder, [content])[0]  # a failing embedder changes nothing
        with self.vectors.db.transaction():
            record = self.store.add(user_id, role, content, tenant_id=tenant_id, **metadata)
            self.vectors.put(record["record_id"], scope_key(user_id, tenant_id), vector)
        return record

    def _store_vectors(self, records: list[dict[str, Any]]) -> dict[int, list[float]]:
        """Embed and store the records' vectors; return them by record id."""
        made: dict[int, list[float]] = {}
        for start in range(0, len(records), _BATCH):
            part = records[start:start + _BATCH]
            for record, vector in zip(part, embed(self.embedder, [r["content"] for r in part])):
                self.vectors.put(record["record_id"], scope_key(record["user_id"], record.get("tenant_id")), vector)
                made[record["record_id"]] = unpack(pack(vector), len(vector))  # as it reads back
        return made

    # -- read --------------------------------------------------------------------------------------
    def search(self, query: str, user_id: str = "default", top_k: int = 3, threshold: float | None = None, *,
               tenant_id: str | None = None) -> list[Hit]:
        """The user's best records by fused score: score descending, ties in insertion order."""
        scope, threshold = check_search(query, user_id, top_k, threshold, tenant_id)
        index = self._index(scope)
        pool = max(len(index), top_k)
        lexical = {hit.record["record_id"]: hit for hit in self.store.search(query, user_id, pool, 1e-12,
                                                                              tenant_id=tenant_id)}
        vector = self._query_vector(query) if len(index) else None
        best, parts = rank({rid: hit.score for rid, hit in lexical.items()}, index, vector, self.fusion, top_k,
                           threshold)
        self._parts = (scope, query, cache(parts))  # every candidate's parts, made once if explain asks
        records = self._records([h.record_id for h in best if h.record_id not in lexical])
        records.update({h.record_id: lexical[h.record_id].record for h in best if h.record_id in lexical})
        # subtle: a vector whose record is gone (a power cut lost the record file's tail) is skipped.
        return [Hit(h.score, dict(records[h.record_id])) for h in best if h.record_id in records]

    def components(self, query: str, user_id: str, *, tenant_id: str | None = None) -> dict[int, dict[str, float]]:
        """record_id -> {lexical, cosine, semantic, fused} for ``query``: what ``explain`` shows."""
        if self._parts is None or self._parts[:2] != ((tenant_id, user_id), query):
            self.search(query, user_id, 1, None, tenant_id=tenant_id)
        return self._parts[2]()

    def _query_vector(self, query: str) -> list[float]:
        if self._query is None or self._query[0] != query:
            self._query = (query, embed(self.embedder, [query])[0])
        return self._query[1]

    def _records(self, record_ids: list[int]) -> dict[int, dict[str, Any]]:
        return hooks_of(self.store).get_many(record_ids)

    def _index(self, scope: Scope) -> SemanticIndex:
        """The scope's vectors, current: new rows appended, or everything read again after a delete."""
        key = scope_key(scope[1], scope[0])
        stamp = self.vectors.stamp(key)
        cached = self._indexes.get(scope)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        if cached is not None and stamp[1] > cached[0][1] and not self.vectors.waiting(key):
            rows = self.vectors.load(key, self.embedder.dimension, after=cached[0][1])
            if cached[0][0] + len(rows) == stamp[0]:  # only additions since: extend
                cached[1].add_vectors(rows)
                self._indexes[scope] = (stamp, cached[1])
                return cached[1]
        return self._load(scope, key)

    def _load(self, scope: Scope, key: str) -> SemanticIndex:
        """Read the scope's vectors in full; embed (and store) records that have none yet."""
        records = self.store.records(scope[1], tenant_id=scope[0])
        stored = dict(self.vectors.load(key, self.embedder.dimension))
        missing = [r for r in records if r["record_id"] not in stored]
        reading = self.vectors.db.reading  # a read's snapshot: the new vectors are stored with the next write
        if missing:
            with nullcontext() if reading else self.vectors.db.transaction():
                stored.update(self._store_vectors(missing))
        index = SemanticIndex(self.embedder)
        index.add_vectors(sorted(stored.items()))
        if not (missing and reading) and not self.vectors.waiting(key):  # cached once every vector is stored
            self._indexes[scope] = (self.vectors.stamp(key), index)
        return index

    # -- the rest of the contract: the wrapped store's ----------------------------------------------
    def erase_user(self, user_id: str, *, tenant_id: str | None = None) -> int:
        with self.vectors.db.transaction():
            self.vectors.erase(scope_key(user_id, tenant_id))
            return self.store.erase_user(user_id, tenant_id=tenant_id)

    def delete(self, record_id: int) -> dict[str, Any] | None:
        with self.vectors.db.transaction():
            self.vectors.forget(record_id)
            return self.store.delete(record_id)

    def get(self, record_id: int) -> dict[str, Any] | None:
        return self.store.get(record_id)

    def get_many(self, record_ids: Iterable[int], scope: tuple | None = None) -> dict[int, dict[str, Any]]:
        return hooks_of(self.store).get_many(record_ids, scope)

    def records(self, user_id: str, *, tenant_id: str | None = None) -> list[dict[str, Any]]:
        return self.store.records(user_id, tenant_id=tenant_id)

    def all_records(self) -> list[dict[str, Any]]:
        return self.store.all_records()

    def users(self, *, tenant_id: str | None = None) -> list[str]:
        return self.store.users(tenant_id=tenant_id)

    def files(self) -> list:
        return self.store.files()

    def rolled_back(self) -> None:
        """A transaction failed: forget the vectors cached in it (its record ids are handed out again)."""
        self._indexes.clear()

    def close(self) -> None:
        self._indexes.clear()
        self.store.close()
