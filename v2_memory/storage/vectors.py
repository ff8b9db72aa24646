"""The ``vectors`` table: each record's embedding, stored beside the record in the state database.

Where ``ledger.py`` keeps what governance learned about a record, this keeps what the embedder
made of it, so a restart loads vectors instead of embedding every record again. It lives in the
state database of every backend (the JSON store's sidecar, the SQLite file, the PostgreSQL
schema), so a record's vector commits in the same transaction as the record, and an erasure
deletes it in the same transaction as everything else.

    vectors   record_id -> scope, vector (float32, little-endian: 4 bytes per dimension)
    meta      "embedder" -> {"name", "dimension"} of the model every stored vector comes from

Why bytes and not JSON: a 384-dimension vector is 1,536 bytes as float32 and about 7,500 as JSON
text; the models compute in float32, so nothing is lost for them; a fixed byte order reads the
same on every machine. A vector is stored exactly as it will be searched (``pack`` then
``unpack``), so scores are identical before and after a restart.

    >>> unpack(pack([0.5, -1.0]), 2)
    [0.5, -1.0]
"""
from __future__ import annotations

import json
import sys
from array import array
from typing import Any, Sequence

from ..errors import StoreCorruptError

__all__ = ["VectorTable", "pack", "unpack", "SIGNATURE_KEY"]

SIGNATURE_KEY = "embedder"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    record_id INTEGER PRIMARY KEY, scope TEXT NOT NULL, vector BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS vectors_scope ON vectors (scope, record_id);
"""


def pack(vector: Sequence[float]) -> bytes:
    """float32, little-endian, whatever this machine's byte order."""
    values = array("f", vector)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


def unpack(blob: bytes, dimension: int) -> list[float]:
    """The vector ``pack`` made; a blob of the wrong length is a ``ValueError``."""
    blob = bytes(blob)  # PostgreSQL may hand back a memoryview
    if len(blob) != 4 * dimension:
        raise ValueError(f"a stored vector holds {len(blob)} bytes, expected {4 * dimension} (dimension {dimension})")
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tolist()


class VectorTable:
    """Record vectors in one state database (SQLite or PostgreSQL: the same SQL on both)."""

    def __init__(self, db: Any) -> None:
        self.db = db
        # Where a read's backfilled vectors go while its snapshot holds no write lock (``Storage``
        # sets it: ``read_book.py``); None writes at once.
        self.defer: Any = None
        self._waiting: dict[int, tuple[str, Sequence[float]]] = {}  # deferred puts, read by ``load`` meanwhile
        db.ensure(_SCHEMA)

    # -- the embedder's signature ----------------------------------------------------------------
    def signature(self) -> dict[str, Any] | None:
        raw = self.db.meta(SIGNATURE_KEY)
        return json.loads(raw) if raw is not None else None

    def set_signature(self, signature: dict[str, Any]) -> None:
        self.db.set_meta(SIGNATURE_KEY, json.dumps(signature, ensure_ascii=False, sort_keys=True))

    # -- rows ------------------------------------------------------------------------------------
    def put(self, record_id: int, scope: str, vector: Sequence[float]) -> None:
        """Store (or replace: an id reused after a power cut was another record's) one vector;
        inside a read snapshot, with the next write."""
        if self.db.reading and self.defer is not None:
            self._waiting[record_id] = (scope, vector)
            self.defer(lambda: self.put(record_id, scope, vector), self._waiting.clear)
            return
        self.db.execute("INSERT INTO vectors (record_id, scope, vector) VALUES (?, ?, ?) ON CONFLICT (record_id) "
                        "DO UPDATE SET scope = excluded.scope, vector = excluded.vector",
                        (record_id, scope, pack(vector)))

    def waiting(self, scope: str) -> bool:
        """Whether vectors a read put for ``scope`` wait to be written (an index holding them is
        not what the table holds yet: it must not be cached under the table's stamp)."""
        return any(owner == scope for owner, _ in self._waiting.values())

    def load(self, scope: str, dimension: int, *, after: int = 0) -> list[tuple[int, list[float]]]:
        """The scope's ``(record_id, vector)`` pairs with ids above ``after``, in id (insertion) order
        (with the vectors a read put that wait to be written: ``put``)."""
        rows = self.db.fetchall("SELECT record_id, vector FROM vectors WHERE scope = ? AND record_id > ? "
                                "ORDER BY record_id", (scope, after))
        try:
            found = {record_id: unpack(blob, dimension) for record_id, blob in rows}
        except ValueError as exc:
            raise StoreCorruptError(f"vectors table: {exc}", path=self.db.where) from exc
        waiting = {rid: unpack(pack(vector), len(vector)) for rid, (owner, vector) in self._waiting.items()
                   if owner == scope and rid > after}
        return sorted({**found, **waiting}.items()) if waiting else list(found.items())

    def stamp(self, scope: str) -> tuple[int, int]:
        """``(count, max id)`` of the scope's vectors: what a cache compares to see another writer."""
        row = self.db.fetchone("SELECT count(*), coalesce(max(record_id), 0) FROM vectors WHERE scope = ?", (scope,))
        return int(row[0]), int(row[1])

    def erase(self, scope: str) -> int:
        return self.db.execute("DELETE FROM vectors WHERE scope = ?", (scope,))

    def forget(self, record_id: int) -> int:
        return self.db.execute("DELETE FROM vectors WHERE record_id = ?", (record_id,))

    def clear(self) -> int:
        """Every vector gone (a rebuild with another model starts here)."""
        return self.db.execute("DELETE FROM vectors")

    def count(self) -> int:
        return int(self.db.fetchone("SELECT count(*) FROM vectors")[0])
