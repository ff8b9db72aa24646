"""The recent-message track: the last ``size`` messages of each user, verbatim.

The article keeps one list for everybody, so one chatty user pushes another's messages out of the
window (and into a summary everybody reads). Here each user has a window of their own.
"""
from __future__ import annotations

from collections import deque
from typing import Hashable

from ..messages import Message

__all__ = ["RecentWindow"]


class RecentWindow:
    """Windows of ``(record_id, message)`` per scope — a ``(tenant_id, user_id)`` pair; ``push``
    returns what fell out. ``record_id`` is None for a message kept out of the long-term store."""

    def __init__(self, size: int = 4) -> None:
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"window_size must be an int, got {type(size).__name__}")
        if size < 1:
            raise ValueError(f"window_size must be >= 1, got {size}")
        self.size = size
        self._windows: dict[Hashable, deque[tuple[int | None, Message]]] = {}  # (tenant_id, user_id) -> deque

    def push(self, user_id: Hashable, record_id: int | None, message: Message) -> list[tuple[int, Message]]:
        """Add a message to the user's window; return the entries that no longer fit, oldest first."""
        window = self._windows.setdefault(user_id, deque())
        window.append((record_id, message))
        expired = []
        while len(window) > self.size:
            expired.append(window.popleft())
        return expired

    def entries(self, user_id: Hashable) -> list[tuple[int, Message]]:
        """The user's window as ``(record_id, message)`` pairs, oldest first (record_id None: not stored)."""
        return list(self._windows.get(user_id, ()))

    def messages(self, user_id: Hashable) -> list[Message]:
        """The user's window, oldest first."""
        return [message for _, message in self._windows.get(user_id, ())]

    def remove(self, user_id: Hashable, record_id: int) -> bool:
        """Drop one entry by record id; True if it was there."""
        window = self._windows.get(user_id)
        if not window:
            return False
        kept = deque(entry for entry in window if entry[0] != record_id)
        removed = len(kept) != len(window)
        self._windows[user_id] = kept
        return removed

    def load(self, user_id: Hashable, entries: list[tuple[int | None, Message]]) -> None:
        """Replace the user's window with ``entries`` (as read back from storage)."""
        if entries:
            self._windows[user_id] = deque(entries)
        else:
            self._windows.pop(user_id, None)

    def erase(self, user_id: Hashable) -> int:
        """Drop the user's window; return how many messages it held."""
        return len(self._windows.pop(user_id, ()))

    def users(self) -> list[Hashable]:
        return list(self._windows)
