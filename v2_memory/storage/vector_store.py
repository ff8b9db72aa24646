"""The contract every long-term store keeps, whatever it is built on.

The manager talks to this protocol and never names a backend. A store only stores and searches;
it knows nothing of thresholds chosen by policy, windows, summaries or users' rights — except the
one boundary no store may cross: a search sees only the records of the user (and tenant) it was
asked about.
"""
from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, Iterable, Protocol, runtime_checkable

from ..messages import Hit
from ..validation import check_threshold, check_top_k, require_scope, require_text

__all__ = ["VectorStore", "StoreHooks", "hooks_of", "get_many", "new_record", "check_search", "RESERVED_FIELDS"]

RESERVED_FIELDS = frozenset({"record_id", "user_id", "role", "content", "tenant_id", "index_text"})


@runtime_checkable
class VectorStore(Protocol):
    """``add`` / ``search`` / ``erase_user``, the article's facade, plus what erasure needs."""

    def add(
        self, user_id: str, role: str, content: str, *, tenant_id: str | None = None, **metadata: Any
    ) -> dict[str, Any]:
        """Store one record for ``user_id``; return it with its new ``record_id``."""

    def search(
        self,
        query: str,
        user_id: str = "default",
        top_k: int = 3,
        threshold: float | None = None,
        *,
        tenant_id: str | None = None,
    ) -> list[Hit]:
        """That user's best records: score descending, ties in insertion order."""

    def erase_user(self, user_id: str, *, tenant_id: str | None = None) -> int:
        """Remove every record of ``user_id`` from memory and disk; return how many."""

    def get(self, record_id: int) -> dict[str, Any] | None:
        """A copy of one record, or None."""

    def delete(self, record_id: int) -> dict[str, Any] | None:
        """Remove one record from memory and disk; return it, or None if absent."""

    def records(self, user_id: str, *, tenant_id: str | None = None) -> list[dict[str, Any]]:
        """Copies of that user's records in insertion order."""

    def all_records(self) -> list[dict[str, Any]]:
        """Every record, for maintenance and health reports (never for a prompt)."""

    def users(self, *, tenant_id: str | None = None) -> list[str]:
        """User ids (under ``tenant_id``) that have records."""

    def files(self) -> list[Path]:
        """The files this store writes (empty for an in-memory store)."""

    def close(self) -> None:
        """Release file handles."""


class StoreHooks:
    """What a store does for a ``Storage`` transaction beyond the ``VectorStore`` protocol, declared
    once, with the behaviour of a store that does none of it. The built-in stores subclass it and
    override what they do; a plugged-in store that does not gets these defaults (``hooks_of``).

        batch()                  the block's adds wait and are written at its end (JSON: one append)
        undo_last_append()       the COMMIT failed after the block's records were appended: cut them
        rolled_back()            the block rolled back: forget any rows cached from it
        recovers_by_mark         records past the commit mark can be dropped after a crash ...
        drop_records_after(id)   ... by this (JSON: the file is outside the state database)
        last_id                  the highest id handed out (the commit mark), None if not known
        path, created            the record file, and whether this open created it
        db                       the state database the records live in (SQLite, PostgreSQL), if any
        get_many(ids, scope)     records by id, in one query where the store can (``scope``: whose
                                 they should be, a hint a cached store answers from memory)
        lexical                  the store that searches by words (a hybrid store's underlying
                                 one): governance's evidence when words, not meaning, decide
    """

    created: bool = False
    db: Any = None
    recovers_by_mark: bool = False

    @property
    def path(self) -> Path | None:
        return None

    @property
    def last_id(self) -> int | None:
        return None

    @property
    def lexical(self) -> Any:
        return self

    def batch(self) -> AbstractContextManager[Any]:
        return nullcontext(self)

    def undo_last_append(self) -> None:
        return None

    def rolled_back(self) -> None:
        return None

    def drop_records_after(self, record_id: int) -> list[int]:
        return []

    def get_many(self, record_ids: Iterable[int], scope: tuple | None = None) -> dict[int, dict[str, Any]]:
        return get_many(self, record_ids)


class _NoHooks(StoreHooks):
    """The defaults, for a plugged-in store that declares none of the hooks."""

    def __init__(self, store: VectorStore) -> None:
        self._store = store

    @property
    def lexical(self) -> Any:
        return self._store  # the plugged-in store searches by its own words

    def get_many(self, record_ids: Iterable[int], scope: tuple | None = None) -> dict[int, dict[str, Any]]:
        return get_many(self._store, record_ids)


def hooks_of(store: Any) -> StoreHooks:
    """The store's transaction hooks: the store itself when it declares them, else the defaults."""
    return store if isinstance(store, StoreHooks) else _NoHooks(store)


def get_many(store: Any, record_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Records by id through ``get``, one at a time (what a store without a bulk read does)."""
    return {rid: record for rid in record_ids if (record := store.get(rid)) is not None}


def new_record(user_id: str, role: str, content: str, tenant_id: str | None, index_text: str | None,
               metadata: dict[str, Any]) -> dict[str, Any]:
    """A checked record without its id, as every store builds it (so every backend refuses the
    same bad input the same way, before anything changes).

    ``index_text`` is extra text the record is found by; a blank string is the same as none.
    """
    require_scope(user_id, tenant_id)
    require_text("role", role)
    require_text("content", content)
    if index_text is not None and not isinstance(index_text, str):
        raise TypeError(f"index_text must be a str or None, got {type(index_text).__name__}")
    if index_text is not None and index_text.strip():
        require_text("index_text", index_text)  # valid Unicode
    else:
        index_text = None
    clash = RESERVED_FIELDS.intersection(metadata)
    if clash:
        raise ValueError(f"metadata may not set reserved fields: {sorted(clash)}")
    record: dict[str, Any] = {"user_id": user_id, "role": role, "content": content}
    if tenant_id is not None:
        record["tenant_id"] = tenant_id
    if index_text:
        record["index_text"] = index_text
    record.update(metadata)
    return record


def check_search(query: object, user_id: object, top_k: object, threshold: object,
                 tenant_id: object) -> tuple[tuple[str | None, str], float | None]:
    """Every store's search arguments, checked the same way: the scope and the threshold."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    scope = require_scope(user_id, tenant_id)
    check_top_k(top_k)
    return scope, check_threshold(threshold)
