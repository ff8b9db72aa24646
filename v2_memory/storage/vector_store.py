"""The contract every long-term store keeps, whatever it is built on.

The manager talks to this protocol and never names a backend. A store only stores and searches;
it knows nothing of thresholds chosen by policy, windows, summaries or users' rights — except the
one boundary no store may cross: a search sees only the records of the user (and tenant) it was
asked about.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..messages import Hit
from ..validation import check_threshold, check_top_k, require_scope, require_text

__all__ = ["VectorStore", "new_record", "check_search", "RESERVED_FIELDS"]

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
