"""``MemoryManager``: the article's three tracks, per user, behind one small API.

    write:  add(message) ──► long-term store (every message)
                         └─► recent window (per user) ──overflow──► summary (per user, bounded)
    read:   build_context(query, user_id) = that user's summary + window + store hits >= threshold

Every read names a user and draws only on that user's tracks; ``erase_user`` removes the user
from all three tracks and from the store's file, and returns a receipt saying what it removed.
"""
from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from .messages import EraseReceipt, Hit, Message, as_utc
from .stores import JsonVectorStore, VectorStore
from .summarizer import Summarizer, SummaryTrack
from .validation import check_threshold, check_top_k, require_text
from .window import RecentWindow

__all__ = ["MemoryManager", "utc_now"]

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The default clock: the current time in UTC."""
    return datetime.now(timezone.utc)


class MemoryManager:
    """Recent window + summary + long-term store, isolated per user.

    ``store_path=None`` keeps the store in memory; ``store=`` plugs in any ``VectorStore``.
    ``clock`` returns the current aware datetime (inject a fake one in tests).
    """

    def __init__(
        self,
        window_size: int = 4,
        threshold: float = 0.2,
        store_path: Path | str | None = "memory_store.json",
        *,
        store: VectorStore | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock | None = None,
        fsync: bool = False,
    ) -> None:
        self.threshold = check_threshold(threshold, allow_none=False)
        self.window = RecentWindow(window_size)
        self.summaries = SummaryTrack(summarizer)
        self.store: VectorStore = store if store is not None else JsonVectorStore(store_path, fsync=fsync)
        self.clock: Clock = clock if clock is not None else utc_now
        self._lock = threading.RLock()

    @property
    def window_size(self) -> int:
        return self.window.size

    # -- write path --------------------------------------------------------------------------
    def add(self, message: Message) -> dict[str, Any]:
        """Store ``message`` in the long-term store and the user's window; return the stored record."""
        if not isinstance(message, Message):
            raise TypeError(f"add() expects a Message, got {type(message).__name__}")
        with self._lock:
            if message.timestamp is None:
                message = replace(message, timestamp=as_utc(self.clock()))
            fields: dict[str, Any] = {"created_at": message.timestamp.isoformat()}
            if message.session_id is not None:
                fields["session_id"] = message.session_id
            if message.metadata:
                fields["metadata"] = dict(message.metadata)
            record = self.store.add(message.user_id, message.role, message.content, **fields)
            # Messages pushed out of the user's window are folded into that user's summary.
            for record_id, expired in self.window.push(message.user_id, record["record_id"], message):
                self.summaries.fold(message.user_id, expired, record_id)
            return record

    # -- read path ---------------------------------------------------------------------------
    def retrieve(self, query: str, user_id: str = "default", top_k: int = 3) -> list[Hit]:
        """The user's best long-term memories whose score passes the manager's threshold."""
        return self.store.search(query, user_id=user_id, top_k=top_k, threshold=self.threshold)

    def retrieve_without_threshold(self, query: str, user_id: str = "default", top_k: int = 3) -> list[Hit]:
        """Blind top-k: always up to ``top_k`` hits, relevant or not (the article's counter-example)."""
        return self.store.search(query, user_id=user_id, top_k=top_k, threshold=None)

    def build_context(self, query: str, user_id: str = "default", top_k: int = 3) -> str:
        """The prompt context for ``user_id``: summary, recent window, then thresholded memories.

        Memories already shown in the recent window are not repeated.
        """
        require_text("user_id", user_id)
        check_top_k(top_k)
        with self._lock:
            parts = []
            summary = self.summaries.get(user_id)
            if summary.text:
                parts.append(f"summary: {summary.text}")
            entries = self.window.entries(user_id)
            parts.extend(f"recent: {message.role}: {message.content}" for _, message in entries)
            in_window = {record_id for record_id, _ in entries}
            hits = self.retrieve(query, user_id=user_id, top_k=top_k + len(in_window))
            fresh = [hit for hit in hits if hit.record["record_id"] not in in_window][:top_k]
            parts.extend(f"memory({hit.score:.3f}): {hit.record['role']}: {hit.record['content']}" for hit in fresh)
            return "\n".join(parts)

    def recent_messages(self, user_id: str = "default") -> list[Message]:
        """The user's recent window, oldest first."""
        require_text("user_id", user_id)
        return self.window.messages(user_id)

    def summary(self, user_id: str = "default") -> str:
        """The user's summary of messages that left the window ('' if none)."""
        require_text("user_id", user_id)
        return self.summaries.get(user_id).text

    def users(self) -> list[str]:
        """Every user with something in any track, in first-seen order."""
        seen = dict.fromkeys(self.window.users() + self.summaries.users())
        seen.update(dict.fromkeys(getattr(self.store, "users", lambda: [])()))
        return list(seen)

    # -- erasure -----------------------------------------------------------------------------
    def erase_user(self, user_id: str) -> EraseReceipt:
        """Remove the user from every track and every file the store wrote; return a receipt."""
        require_text("user_id", user_id)
        with self._lock:
            window = self.window.erase(user_id)
            summary = self.summaries.erase(user_id)
            store = self.store.erase_user(user_id)
            files = tuple(str(path) for path in self.store.files()) if store else ()
            return EraseReceipt(user_id, window=window, summary=summary, store=store, files_rewritten=files)

    def forget(self, user_id: str, record_id: int) -> bool:
        """Remove one of the user's memories from every track (the summary is rebuilt without it)."""
        require_text("user_id", user_id)
        with self._lock:
            record = self.store.get(record_id)
            if record is None or record["user_id"] != user_id:
                return False
            self.store.delete(record_id)
            self.window.remove(user_id, record_id)
            covered = self.summaries.get(user_id).covers
            if record_id in covered:
                kept = [(rid, self._as_message(self.store.get(rid))) for rid in covered if rid != record_id]
                self.summaries.rebuild(user_id, [(rid, msg) for rid, msg in kept if msg is not None])
            return True

    @staticmethod
    def _as_message(record: dict[str, Any] | None) -> Message | None:
        if record is None:
            return None
        return Message(record["role"], record["content"], record["user_id"])

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
