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

__all__ = ["VectorStore"]


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
