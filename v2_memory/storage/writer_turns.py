"""Writers of one SQLite file take turns in the kernel, not by polling.

SQLite refuses a second writer at once ("database is locked") and leaves the waiting to the
caller. Polling for the lock wakes every waiting process again and again, and hands the lock to
whichever wakes first, not to the one that waited longest. So a write transaction first takes
an operating-system lock on a small hidden file beside the database (``.<name>.lock``, empty,
0600, as a JSON store's writer lock)
and holds it until it commits or rolls back:

- a waiting writer sleeps until the holder lets go, and wakes at once;
- a holder killed with ``kill -9`` lets go with its process: no stale lock, nothing to clean up;
- an uncontended writer pays one system call (a lock that is free is taken at once);
- a writer that waits longer than ``BUSY_SECONDS`` gets the same error as before (``wait``).

Readers never take it (WAL: readers do not block the writer). Where ``fcntl`` is missing
(Windows), or the folder cannot hold the file, writers fall back to SQLite's own refusal and the
database's polling (``database._waiting``); so does any other program writing the same file.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> turns = WriterTurns(folder / "memory.sqlite3")
    >>> turns.take(wait=True)
    True
    >>> WriterTurns(folder / "memory.sqlite3").take(wait=False)
    False
    >>> turns.give_back()
    >>> turns.holding
    False
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import BinaryIO

from ..files import open_private_append

__all__ = ["WriterTurns", "lock_path"]

try:
    import fcntl
except ImportError:  # Windows: no flock; writers poll, as SQLite leaves them to
    fcntl = None  # type: ignore[assignment]


class WriterTurns:
    """One connection's place in the queue of writers of ``database`` (one open file handle,
    kept for the connection's life: the lock belongs to this handle, so two connections of one
    process queue like two processes)."""

    def __init__(self, database: Path) -> None:
        self.path = lock_path(database)
        self.holding = False
        self._handle: BinaryIO | None = None
        if fcntl is not None:
            try:
                self._handle = open_private_append(self.path)
            except OSError:
                self._handle = None  # a folder we may not write: SQLite's own refusal still guards writes

    def take(self, *, wait: bool, seconds: float | None = None) -> bool:
        """Take this connection's turn: at once when no one holds it; else, with ``wait``, sleep
        until the holder lets go (at most ``seconds``). False: not taken (another holds it, or the
        wait ran out). With no lock file (Windows, a read-only folder) every turn is "taken"."""
        if self._handle is None:
            return True
        if self._try():
            return True
        if not wait:
            return False
        return self._wait(seconds)

    def give_back(self) -> None:
        """End this connection's turn (after its COMMIT or ROLLBACK)."""
        if self.holding and self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self.holding = False

    def close(self) -> None:
        self.give_back()
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _try(self) -> bool:
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[union-attr]
        except BlockingIOError:
            return False
        self.holding = True
        return True

    def _wait(self, seconds: float | None) -> bool:
        """Sleep in the kernel until the lock is free. A blocking ``flock`` cannot time out, so a
        helper thread waits in it; if the wait runs out first, the helper gives the lock back
        as soon as it gets it (a late turn is never kept)."""
        if seconds is None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX)  # type: ignore[union-attr]
            self.holding = True
            return True
        got, gave_up, guard = threading.Event(), threading.Event(), threading.Lock()
        fd = self._handle.fileno()  # type: ignore[union-attr]

        def wait_in_kernel() -> None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:
                return  # the connection closed meanwhile: nothing to hold
            with guard:
                if gave_up.is_set():
                    fcntl.flock(fd, fcntl.LOCK_UN)
                else:
                    got.set()

        threading.Thread(target=wait_in_kernel, name="v2_memory-writer-turn", daemon=True).start()
        if not got.wait(seconds):
            with guard:
                if not got.is_set():
                    gave_up.set()
                    return False
        self.holding = True
        return True


def lock_path(database: Path) -> Path:
    """The lock file of ``database``'s writers: ``.memory.sqlite3.lock`` for ``memory.sqlite3``."""
    return database.with_name(f".{database.name}.lock")
